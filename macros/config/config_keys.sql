{#- Stage 1, configuration: the keys set on a model. In: every key of the model's config and
    `meta`. Out: errors for a key that is probably a typo of an auto_cdc config, or belongs to the
    other materialization; for dbt's own configs, a warning naming those that do not apply. -#}

{% macro _user_config_keys() -%}
  {#- Every key set on the model (config(), properties YAML, dbt_project.yml) and under its `meta`:
      `unrendered_config` holds only what the user set, so dbt's ~30 defaulted configs are not
      compared with every auto_cdc name on every run (that cost ~20 ms per model). -#}
  {%- set keys = [] -%}
  {%- set set_by_user = model.unrendered_config or model.config or {} -%}
  {%- for name in set_by_user.keys() | list + (config.get('meta') or {}).keys() | list -%}
    {%- if name not in keys -%}{%- do keys.append(name) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(keys) }}
{%- endmacro %}


{% macro _check_config_keys(snapshot, errors) -%}
  {#- A key close to an auto_cdc config is a typo that would otherwise be ignored silently (and
      build the wrong table); a config of the other materialization does nothing here. dbt's
      own configs are checked for whether they apply (_check_dbt_config); other packages' keys
      are not close to ours (_near_miss), so they pass. -#}
  {%- set names = auto_cdc.config_names(snapshot) -%}
  {%- set not_applied = [] -%}
  {%- for key in auto_cdc._user_config_keys() if key not in names.own -%}
    {%- if key in auto_cdc.dbt_config_names() -%}
      {#- dbt reads its own configs at the top level only: under `meta` one is the user's metadata. -#}
      {%- if key in (model.unrendered_config or {}) -%}{%- do auto_cdc._check_dbt_config(key, not_applied, errors) -%}{%- endif -%}
    {%- elif key in names.other -%}
      {#- auto_cdc_from_snapshot names the auto_cdc-only configs it rejects in _reject_auto_cdc_configs. -#}
      {%- if not snapshot and auto_cdc._config_value(key) is not none -%}
        {%- do errors.append("`" ~ key ~ "` only applies to auto_cdc_from_snapshot: remove it, or set materialized='auto_cdc_from_snapshot'.") -%}
      {%- endif -%}
    {%- else -%}
      {%- set meant = none if key in auto_cdc.dbt_config_names() else auto_cdc._near_miss(key, names.own + names.other) -%}
      {%- if meant is not none -%}
        {%- do errors.append("`" ~ key ~ "` is not an auto_cdc config; did you mean `" ~ meant ~ "`?") -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not_applied -%}
    {%- do auto_cdc.model_warning(model.name, "dbt's " ~ not_applied | join('; ') ~ '. docs/configuration.md, "dbt\'s own configs", lists which apply.') -%}
  {%- endif -%}
{%- endmacro %}


{% macro _check_dbt_config(key, not_applied, errors) -%}
  {#- One of dbt's own configs set on the model (docs/configuration.md, "dbt's own configs"): those an auto_cdc
      model cannot apply are named in one warning (`not_applied`), never ignored silently; one
      that would lose rows fails (`errors`). The rest apply as dbt applies them. -#}
  {%- set value = config.get(key) -%}
  {%- if value is none or value is sameas false or value == [] or value == {} -%}{{ return(none) }}{%- endif -%}
  {%- if key == 'unlogged' -%}
    {%- do errors.append("`unlogged`: auto_cdc does not build unlogged tables. PostgreSQL empties an unlogged table after a crash, while the"
        ~ " model's state and run history, which are logged, keep what they recorded: later runs would build on a target that lost its rows. Remove it.") -%}
  {%- elif key == 'indexes' and not auto_cdc.capabilities().indexes -%}
    {%- do not_applied.append("`indexes` do nothing on " ~ adapter.type() ~ ", which gets no indexes (dbt's own materializations ignore them there too)") -%}
  {%- elif key in ['file_format', 'tblproperties'] and key not in auto_cdc.table_configs() -%}
    {%- do not_applied.append("`" ~ key ~ "` does nothing on " ~ adapter.type() ~ " (Spark's tables take it)") -%}
  {%- elif key in auto_cdc._dbt_configs_not_applied() -%}
    {%- do not_applied.append("`" ~ key ~ "` " ~ auto_cdc._dbt_configs_not_applied()[key]) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _dbt_configs_not_applied() -%}
  {#- dbt's configs of other materializations and of Spark's table layout, and why an auto_cdc
      model does not apply them. -#}
  {%- set incremental = "is an incremental model's: auto_cdc applies the changes itself" -%}
  {%- set microbatch = "is a microbatch model's: an auto_cdc run reads its batch by `checkpoint_column`" -%}
  {%- set spark_layout = "is not applied: auto_cdc lays out its own tables, unpartitioned, where the schema keeps its tables (on Spark, Iceberg tables; `tblproperties` apply)" -%}
  {{ return({
      'unique_key': "is an incremental model's: auto_cdc's key is `keys`",
      'incremental_strategy': incremental, 'incremental_predicates': incremental,
      'merge_update_columns': "is an incremental model's: auto_cdc writes the columns of `column_list` / `except_column_list`",
      'merge_exclude_columns': "is an incremental model's: auto_cdc writes the columns of `column_list` / `except_column_list`",
      'on_configuration_change': "is a materialized view's",
      'column_types': "is a seed's",
      'batch_size': microbatch, 'begin': microbatch, 'lookback': microbatch, 'concurrent_batches': microbatch,
      'partition_by': spark_layout, 'clustered_by': spark_layout, 'buckets': spark_layout, 'location_root': spark_layout, 'options': spark_layout,
  }) }}
{%- endmacro %}


{% macro _near_miss_hint(name) -%}
  {#- For a missing required config: a key present that was probably meant as `name`, or dbt's
      own name for the same idea (incremental models' `unique_key`, snapshots' `updated_at`). -#}
  {%- set dbt_names = {'keys': 'unique_key', 'sequence_by': 'updated_at'} -%}
  {%- for key in auto_cdc._user_config_keys() if key != name -%}
    {%- if auto_cdc._near_miss(key, [name]) is not none or (key == dbt_names.get(name) and auto_cdc._config_value(key) is not none) -%}
      {{ return(" A key `" ~ key ~ "` is set: did you mean `" ~ name ~ "`?") }}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{%- endmacro %}


{% macro dbt_config_names() -%}
  {#- dbt's own model configs (dbt-core 1.10-1.12 and the adapters auto_cdc runs on): never a
      typo of an auto_cdc config, whatever their words (`on_configuration_change`). -#}
  {{ return(['access', 'alias', 'batch_size', 'begin', 'column_types', 'concurrent_batches', 'contract', 'database',
             'docs', 'enabled', 'event_time', 'freshness', 'full_refresh', 'grants', 'group', 'incremental_strategy',
             'latest_version_pointer', 'lookback', 'materialized', 'meta', 'on_configuration_change', 'on_error',
             'on_schema_change', 'packages', 'persist_docs', 'post_hook', 'post-hook', 'pre_hook', 'pre-hook', 'quoting', 'schema',
             'static_analysis', 'tags', 'unique_key', 'sql_header', 'incremental_predicates', 'merge_update_columns',
             'merge_exclude_columns', 'indexes', 'unlogged', 'buckets', 'clustered_by', 'file_format', 'location_root',
             'options', 'partition_by', 'tblproperties']) }}
{%- endmacro %}


{% macro _near_miss(key, names) -%}
  {#- The name in `names` that `key` was probably meant as, or none (docs/configuration.md,
      "Configuration reference": what counts as a typo). First by letters: equal ignoring case, `_`, `-` and a
      plural `s`, or one edit away (two for long names; swapping neighbours is one). Then by
      words (_near_miss_by_words). dbt's own configs are never a typo of ours. -#}
  {%- if key in auto_cdc.dbt_config_names() -%}{{ return(none) }}{%- endif -%}
  {%- set a = auto_cdc._config_words(key) | join('') -%}
  {%- for name in names -%}
    {%- set b = auto_cdc._config_words(name) | join('') -%}
    {%- set shortest = [a | length, b | length] | min -%}
    {%- set limit = 2 if shortest >= 10 else (1 if shortest >= 5 else 0) -%}
    {%- if a.rstrip('s') == b.rstrip('s')
          or ((a | length - b | length) | abs <= limit and auto_cdc._edit_distance(a, b) <= limit) -%}
      {{ return(name) }}
    {%- endif -%}
  {%- endfor -%}
  {%- for name in names if auto_cdc._near_miss_by_words(auto_cdc._config_words(key), auto_cdc._config_words(name)) -%}
    {{ return(name) }}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}


{% macro _near_miss_by_words(k, c) -%}
  {#- Is a key of words `k` a config of words `c` with a word dropped, added or changed, or cut
      short? Words match ignoring a plural `s`, and one word may be cut short (`col`, `seq`).
      Not a near miss: sharing a single word (`keys_owner`, `sequence_owner`), or a word put
      before a config's name or in place of its first word (`pii_column_list`): that is how
      other packages name their keys. -#}
  {%- set k_letters = k | join('') | length -%}
  {%- set c_letters = c | join('') | length -%}
  {#- Cut short: the key is the config's first words, and at least half of it (`checkpoint_col`, `sequence`). -#}
  {%- if k | length <= c | length and 2 * k_letters >= c_letters and auto_cdc._words_within(k, c[:k | length]) -%}
    {{ return(true) }}
  {%- endif -%}
  {#- Words dropped, at least two and half of them kept (`track_history_list`, `scd_type`). -#}
  {%- if 2 <= k | length < c | length and 2 * (k | length) >= c | length and auto_cdc._words_within(k, c) -%}
    {{ return(true) }}
  {%- endif -%}
  {#- A word added after the first (`sequence_by_column`, `change_feed_enabled`). -#}
  {%- if k | length == c | length + 1 and c | length >= 2 -%}
    {%- for i in range(1, k | length) if auto_cdc._words_within(k[:i] + k[i + 1:], c) -%}
      {{ return(true) }}
    {%- endfor -%}
  {%- endif -%}
  {#- A word changed, two kept; the first only for one that starts alike (`exclude_column_list`). -#}
  {%- if k | length == c | length and c | length >= 3 -%}
    {%- set changed = [] -%}
    {%- for i in range(k | length) if auto_cdc._word_match(k[i], c[i]) is none -%}{%- do changed.append(i) -%}{%- endfor -%}
    {%- if changed | length == 1 -%}
      {%- set i = changed[0] -%}
      {{ return((i > 0 or k[0][:3] == c[0][:3]) and auto_cdc._words_within(k[:i] + k[i + 1:], c[:i] + c[i + 1:])) }}
    {%- endif -%}
  {%- endif -%}
  {{ return(false) }}
{%- endmacro %}


{% macro _config_words(name) -%}
  {#- A config name's words, lower case: split at `_`, `-`, spaces and camelCase humps. -#}
  {%- set spaced = modules.re.sub('([a-z0-9])([A-Z])', '\\1_\\2', name | string) | lower -%}
  {{ return(modules.re.split('[_\\- ]+', spaced) | reject('equalto', '') | list) }}
{%- endmacro %}


{% macro _words_within(k, c) -%}
  {#- Are the words `k`, in order, among the words `c`, with at most one cut short? -#}
  {%- set cuts = [] -%}
  {%- set position = [0] -%}
  {%- for word in k -%}
    {%- set found = [] -%}
    {%- for j in range(position[-1], c | length) if not found -%}
      {%- set match = auto_cdc._word_match(word, c[j]) -%}
      {%- if match is not none -%}{%- do found.append(j) -%}{%- if match -%}{%- do cuts.append(j) -%}{%- endif -%}{%- endif -%}
    {%- endfor -%}
    {%- if not found -%}{{ return(false) }}{%- endif -%}
    {%- do position.append(found[0] + 1) -%}
  {%- endfor -%}
  {{ return(cuts | length <= 1) }}
{%- endmacro %}


{% macro _word_match(a, b) -%}
  {#- 0: the same word (ignoring a plural `s`); 1: one cut short of the other (`col`, `column`;
      three letters at least); none: different words. -#}
  {%- set a = a.rstrip('s') -%}
  {%- set b = b.rstrip('s') -%}
  {%- if a == b -%}{{ return(0) }}{%- endif -%}
  {%- set short, long = (a, b) if a | length < b | length else (b, a) -%}
  {{ return(1 if short | length >= 3 and long.startswith(short) else none) }}
{%- endmacro %}


{% macro _edit_distance(a, b) -%}
  {#- Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. -#}
  {%- set rows = [range(b | length + 1) | list] -%}
  {%- for i in range(1, a | length + 1) -%}
    {%- set row = [i] -%}
    {%- for j in range(1, b | length + 1) -%}
      {%- set above = rows[i - 1] -%}
      {%- set cost = 0 if a[i - 1] == b[j - 1] else 1 -%}
      {%- set best = [above[j] + 1, row[j - 1] + 1, above[j - 1] + cost] | min -%}
      {%- if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1] -%}
        {%- set best = [best, rows[i - 2][j - 2] + 1] | min -%}
      {%- endif -%}
      {%- do row.append(best) -%}
    {%- endfor -%}
    {%- do rows.append(row) -%}
  {%- endfor -%}
  {{ return(rows[-1][-1]) }}
{%- endmacro %}
