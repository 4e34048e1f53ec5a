{#- Stage 1, configuration: the field table. In: the model's config (config(), YAML,
    dbt_project.yml, `meta`). Out: the configs each materialization reads, their values as set or
    defaulted, the checks a value's type alone decides, and the rejection of the configs that
    shape events on snapshot models. -#}

{% macro config_fields() -%}
  {#- Every config the two materializations read, written once (docs/configuration.md,
      "Configuration reference"): {name: {'type', 'default', 'for': 'both' | 'auto_cdc' | 'snapshot', ...}}.
      'auto_cdc': only auto_cdc reads it (it shapes events, which snapshot comparison derives).
      The order is kept: typo hints try names in it, and snapshot models reject the auto_cdc-only
      configs in it. `message` is the error of a value the type rejects ('{value}': the value);
      `checked_on_both` is read and checked on the materialization that rejects it too, so a
      misplaced config still gets its own message; `only_if_set`: dbt gives every model a value,
      only one the user set counts; `as_text`: 1 and '1' are the same. Use field['for']: `for` is
      a Jinja keyword.
      Between runs (`recorded`, required): how the run history records the value, so the next
      run can tell it changed (state_config): 'value' as read, 'flag' true or false, 'sql'
      with whitespace runs as one space, 'columns' the columns named, lower case and sorted,
      'resolved' as the configuration's resolution gives it; none: not recorded (a change
      shapes only what runs do from now on, or is reconciled with the tables: column lists).
      What a change does (`change`): 'blocks' the run, or has the 'effect' its warning names
      (`snapshot_effect` on auto_cdc_from_snapshot). -#}
  {%- set partial_updates = {'effect': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match'} -%}
  {%- set tracked = {'effect': "the history of every key that new events touch is recomputed under the new list; other keys keep theirs until then (`--full-refresh` recomputes every key)",
                     'snapshot_effect': "each key's closed rows stay as they are; its open row and the next versions follow the new list (`--full-refresh` starts again from the current snapshot)"} -%}
  {%- set classified = {'effect': 'events of this run on are classified the new way; what earlier runs applied stays'} -%}
  {{ return({
      'keys': {'type': 'columns', 'default': none, 'for': 'both', 'recorded': 'resolved',
               'change': {'blocks': 'the state holds one entry per key, and what was stored under the old keys cannot be matched to the new ones'}},
      'stored_as_scd_type': {'type': 'choice', 'default': 1, 'for': 'both', 'as_text': true, 'choices': ['1', '2', 'bitemporal'],
                             'message': "`stored_as_scd_type` is '{value}'; use 1, 2 or 'bitemporal'.",
                             'recorded': 'value', 'change': {'blocks': 'the target and its state have another shape'}},
      'column_list': {'type': 'columns', 'default': none, 'for': 'both', 'recorded': none},
      'except_column_list': {'type': 'columns', 'default': none, 'for': 'both', 'recorded': none},
      'track_history_column_list': {'type': 'columns', 'default': none, 'for': 'both', 'recorded': 'columns', 'change': tracked},
      'track_history_except_column_list': {'type': 'columns', 'default': none, 'for': 'both', 'recorded': 'columns', 'change': tracked},
      'tombstone_retention': {'type': 'number', 'default': 172800, 'for': 'both', 'min': 0,
                              'message': "`tombstone_retention` must be a whole number of seconds >= 0, not '{value}'.",
                              'recorded': 'value', 'change': {'effect': 'tombstones and compacted events are kept for the new period from now on',
                                                               'snapshot_effect': 'tombstones are kept for the new period from now on'}},
      'on_schema_change': {'type': 'choice', 'default': 'append_new_columns', 'for': 'both', 'only_if_set': true,
                           'choices': ['append_new_columns', 'fail', 'ignore'],
                           'message': "`on_schema_change` is '{value}'; auto_cdc supports 'append_new_columns' (default), 'fail' and 'ignore'.",
                           'recorded': none},
      'on_bad_rows': {'type': 'choice', 'default': 'fail', 'for': 'both', 'choices': ['fail', 'quarantine'],
                      'message': "`on_bad_rows` is '{value}'; use 'fail' (the default: bad rows fail the run) or 'quarantine' (they are set aside in <model>__cdc_quarantine).",
                      'recorded': none},
      'change_feed': {'type': 'boolean', 'default': false, 'for': 'both',
                      'message': "`change_feed` must be true or false, not '{value}'.",
                      'recorded': 'flag', 'change': {'effect': 'turned on, the changes of the target are recorded in its __cdc_changes table from this run on; turned off, that table is kept and no longer written'}},
      'change_feed_retention': {'type': 'number', 'default': none, 'for': 'both', 'min': 1,
                                'message': "`change_feed_retention` must be a whole number of seconds >= 1 (or not set: keep every change), not '{value}'.",
                                'recorded': none},
      'sequence_by': {'type': 'columns_or_sql', 'default': none, 'for': 'auto_cdc', 'recorded': 'resolved',
                      'change': {'blocks': 'the stored sequences were computed the old way and cannot be compared with new ones'}},
      'apply_as_deletes': {'type': 'sql', 'default': none, 'for': 'auto_cdc', 'recorded': 'sql', 'change': classified},
      'apply_as_truncates': {'type': 'sql', 'default': none, 'for': 'auto_cdc', 'recorded': 'sql', 'change': classified},
      'ignore_null_updates': {'type': 'boolean', 'default': false, 'for': 'auto_cdc',
                              'message': "`ignore_null_updates` must be true or false, not '{value}'.",
                              'recorded': 'flag', 'change': partial_updates},
      'ignore_null_updates_column_list': {'type': 'columns', 'default': none, 'for': 'auto_cdc', 'recorded': 'columns', 'change': partial_updates},
      'ignore_null_updates_except_column_list': {'type': 'columns', 'default': none, 'for': 'auto_cdc', 'recorded': 'columns', 'change': partial_updates},
      'columns_to_update': {'type': 'column', 'default': none, 'for': 'auto_cdc', 'recorded': 'resolved', 'change': partial_updates},
      'checkpoint_column': {'type': 'column', 'default': none, 'for': 'auto_cdc', 'recorded': 'resolved',
                            'change': {'effect': 'this run reads the whole model query once, then only rows at or above the new checkpoint'}},
      'commit_time_column': {'type': 'column', 'default': none, 'for': 'auto_cdc', 'recorded': none},
      'system_sequence_by': {'type': 'column_or_sql', 'default': none, 'for': 'auto_cdc', 'checked_on_both': true, 'recorded': 'resolved',
                             'change': {'blocks': 'the stored system times were computed the old way and cannot be compared with new ones'}},
      'snapshot_version_column': {'type': 'column', 'default': none, 'for': 'snapshot', 'recorded': 'resolved',
                                  'change': {'effect': 'versions are read from the new column, compared with the processed ones'}},
      'snapshot_version_query': {'type': 'sql', 'default': none, 'for': 'snapshot', 'recorded': 'resolved',
                                 'change': {'effect': 'the next versions come from the new query, compared with the processed ones'}},
      'snapshot_version_function': {'type': 'function', 'default': none, 'for': 'snapshot', 'recorded': 'resolved',
                                    'change': {'effect': 'the next versions come from the new function, compared with the processed ones'}},
      'replace_using': {'type': 'columns', 'default': none, 'for': 'snapshot', 'recorded': 'resolved',
                        'change': {'blocks': 'the processed versions are kept per group of the old columns and cannot be matched to the new groups'}},
      'max_delete_fraction': {'type': 'number', 'default': 0.5, 'for': 'snapshot', 'min': 0, 'max': 1, 'checked_on_both': true,
                              'message': "`max_delete_fraction` must be a number from 0 to 1 (1 turns the guard off), not '{value}'.",
                              'recorded': none},
      'allow_empty_snapshots': {'type': 'boolean', 'default': false, 'for': 'snapshot', 'checked_on_both': true,
                                'message': "`allow_empty_snapshots` must be true or false, not '{value}'.",
                                'recorded': none},
  }) }}
{%- endmacro %}


{% macro run_records() -%}
  {#- What the run history records beside the configs (state_config), and what a change does. -#}
  {{ return({
      'materialized': {'change': {'blocks': 'the stored state belongs to the other materialization'}},
      'snapshot_versions': {'change': {'blocks': 'the processed versions were named the old way and cannot be compared with new ones'}},
  }) }}
{%- endmacro %}


{% macro recorded_config(values, resolved, source_columns) -%}
  {#- The state_config: what the stored state depends on, recorded with every run to catch
      changes between runs (check_config_drift), by each field's `recorded`. `resolved`: the
      values of the 'resolved' fields and of run_records(). Stored in run histories: its keys
      and values must not change. -#}
  {%- set recorded = {} -%}
  {%- for name in auto_cdc.run_records() -%}{%- do recorded.update({name: resolved[name]}) -%}{%- endfor -%}
  {%- for name, field in auto_cdc.config_fields().items() if field.recorded -%}
    {%- set value = values[name] -%}
    {%- if field.recorded == 'resolved' -%}{%- set value = resolved[name] -%}
    {%- elif field.recorded == 'flag' -%}{%- set value = value is sameas true -%}
    {%- elif field.recorded == 'sql' -%}{%- set value = auto_cdc.normalized_sql(value) -%}
    {%- elif field.recorded == 'columns' -%}{%- set value = auto_cdc._config_columns(value, source_columns) -%}
    {%- endif -%}
    {%- do recorded.update({name: value}) -%}
  {%- endfor -%}
  {{ return(recorded) }}
{%- endmacro %}


{% macro config_names(snapshot) -%}
  {#- The configs a materialization reads (`own`) and those only the other one reads (`other`). -#}
  {%- set kind = 'snapshot' if snapshot else 'auto_cdc' -%}
  {%- set names = {'own': [], 'other': []} -%}
  {%- for name, field in auto_cdc.config_fields().items() -%}
    {%- do names['own' if field['for'] in ['both', kind] else 'other'].append(name) -%}
  {%- endfor -%}
  {{ return(names) }}
{%- endmacro %}


{% macro _read_values(fields, snapshot) -%}
  {#- {name: value} for every field, as set or defaulted. A config of the other materialization
      reads as its default, so it shapes nothing here (it is rejected with its own message). -#}
  {%- set kind = 'snapshot' if snapshot else 'auto_cdc' -%}
  {%- set meta = config.get('meta') or {} -%}
  {%- set read = [] -%}
  {%- for name, field in fields.items() -%}
    {%- if field.only_if_set -%}
      {%- if name in (model.unrendered_config or {}) or meta.get(name) is not none -%}{%- do read.append(name) -%}{%- endif -%}
    {%- elif field['for'] in ['both', kind] or field.checked_on_both -%}
      {%- do read.append(name) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set found = auto_cdc._config_values(read) -%}
  {%- set values = {} -%}
  {%- for name, field in fields.items() -%}
    {%- set value = found.get(name) -%}
    {#- An only_if_set field that is read keeps what it holds (none included); the others fall back to their default. -#}
    {%- if name not in read or (value is none and not field.only_if_set) -%}{%- set value = field.default -%}{%- endif -%}
    {%- do values.update({name: value | string | lower if field.as_text else value}) -%}
  {%- endfor -%}
  {{ return(values) }}
{%- endmacro %}


{% macro _check_field(field, value, errors) -%}
  {#- The check a value's type alone decides (boolean, choice, number in a range), with the
      field's message. Other types are checked where they are resolved against the query. -#}
  {%- set bad = false -%}
  {%- if field.type == 'boolean' -%}
    {%- set bad = value not in [true, false] -%}
  {%- elif field.type == 'choice' -%}
    {%- set bad = value not in field.choices -%}
  {%- elif field.type == 'number' -%}
    {#- true and false are numbers to Jinja; they are no number of seconds nor a fraction. -#}
    {%- set bad = value is not number or value is sameas true or value is sameas false or value < field.min
                  or (field.max is defined and value > field.max) -%}
  {%- endif -%}
  {%- if bad -%}
    {%- do errors.append(field.message | replace('{value}', value | string)) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _reject_auto_cdc_configs(fields, snapshot, errors) -%}
  {#- auto_cdc_from_snapshot derives its events by comparing snapshots, so a config that shapes
      events has nothing to act on. (A snapshot config on auto_cdc: `_check_config_keys`.) -#}
  {%- for name, field in fields.items() if snapshot and field['for'] == 'auto_cdc' -%}
    {%- if auto_cdc._config_value(name) not in [none, false] -%}
      {%- do errors.append("`" ~ name ~ "` does not apply to auto_cdc_from_snapshot, which derives events by comparing snapshots: remove it.") -%}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _config_value(name, default=none) -%}
  {%- set value = auto_cdc._config_values([name])[name] -%}
  {{ return(default if value is none else value) }}
{%- endmacro %}


{% macro _config_values(names) -%}
  {#- {name: value or none} for each of `names` (one call for all a run reads). Top-level config
      first, then the same key under `meta`. dbt v2 takes a package's configs
      only under `meta` (a top-level one is an error there) and warns unless config.meta_get
      reads them (dbt-core has it only since a 1.10 patch release); dbt's own (on_schema_change)
      stay at the top level, where config.get finds them without a warning. dbt-core (with
      dbt-common 1.39) warns too when config.get asks for a key that is only under `meta`: a
      key found there is looked up at the top level on the node's config, which does not warn. -#}
  {%- set v2 = auto_cdc.dbt_v2() -%}
  {%- set meta = {} if v2 else config.get('meta') or {} -%}
  {%- set values = {} -%}
  {%- for name in names -%}
    {%- if v2 -%}
      {%- set value = config.meta_get(name) -%}
      {%- if value is none -%}
        {%- set value = config.get(name) -%}
      {%- endif -%}
    {%- else -%}
      {%- set in_meta = meta.get(name) -%}
      {%- set value = config.get(name) if in_meta is none else model.config.get(name) -%}
      {%- if value is none -%}{%- set value = in_meta -%}{%- endif -%}
    {%- endif -%}
    {%- do values.update({name: value}) -%}
  {%- endfor -%}
  {{ return(values) }}
{%- endmacro %}


{% macro _as_list(value) -%}
  {%- if value is none -%}{{ return([]) }}
  {%- elif value is string -%}{{ return([value]) }}
  {%- else -%}{{ return(value | list) }}
  {%- endif -%}
{%- endmacro %}
