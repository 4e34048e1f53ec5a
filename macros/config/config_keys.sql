{#- Stage 1, configuration: the keys set on a model. In: every key of the model's config and
    `meta`. Out: errors for a key that is probably a typo of an auto_cdc config, or belongs to the
    other materialization. -#}

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
      own configs and other packages' keys are never close to ours, so they pass. -#}
  {%- set names = auto_cdc.config_names(snapshot) -%}
  {#- `materialized` is on every model and dbt's own: not compared with every name (~4 ms). -#}
  {%- for key in auto_cdc._user_config_keys() if key not in names.own and key != 'materialized' -%}
    {%- if key in names.other -%}
      {#- auto_cdc_from_snapshot names the auto_cdc-only configs it rejects in _reject_auto_cdc_configs. -#}
      {%- if not snapshot and auto_cdc._config_value(key) is not none -%}
        {%- do errors.append("`" ~ key ~ "` only applies to auto_cdc_from_snapshot: remove it, or set materialized='auto_cdc_from_snapshot'.") -%}
      {%- endif -%}
    {%- else -%}
      {%- set meant = auto_cdc._near_miss(key, names.own + names.other) -%}
      {%- if meant is not none -%}
        {%- do errors.append("`" ~ key ~ "` is not an auto_cdc config; did you mean `" ~ meant ~ "`?") -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
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


{% macro _near_miss(key, names) -%}
  {#- The name in `names` that `key` was probably meant as, or none: equal ignoring case, `_`,
      `-` and a plural `s`, or one edit away (two for long names; swapping neighbours is one). -#}
  {%- set a = modules.re.sub('[_\\- ]', '', key | lower) -%}
  {%- for name in names -%}
    {%- set b = modules.re.sub('[_\\- ]', '', name | lower) -%}
    {%- set shortest = [a | length, b | length] | min -%}
    {%- set limit = 2 if shortest >= 10 else (1 if shortest >= 5 else 0) -%}
    {%- if a.rstrip('s') == b.rstrip('s')
          or ((a | length - b | length) | abs <= limit and auto_cdc._edit_distance(a, b) <= limit) -%}
      {{ return(name) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
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
