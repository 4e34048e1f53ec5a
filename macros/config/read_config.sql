{#- Stage 1, configuration. In: the model's config (config(), YAML, dbt_project.yml, `meta`) and
    the model query's columns. Out: `cfg`, the validated, resolved settings every later stage
    reads and none changes. Every problem is collected and raised once, before anything is written. -#}

{% macro read_cdc_config(source, seq_type, versions=none) -%}
  {#- Returns the validated settings of an `auto_cdc` model as a dict (see README, "Configuration").
      `source`: the model query's columns, from query_columns(). `versions`: for
      auto_cdc_from_snapshot, its snapshot_version_source(); the snapshot version is then the
      sequence, and the configs that shape events are not allowed. -#}
  {%- set errors = [] -%}
  {%- set snapshot = versions is not none -%}
  {%- set source_columns = source.names -%}
  {%- do auto_cdc._check_config_keys(snapshot, errors) -%}
  {%- set _RESERVED_COLUMNS = ['__start_at', '__end_at', '__system_start_at', '__system_end_at'] -%}
  {%- set _INTERNAL_PREFIX = '__cdc_' -%}

  {#- Source columns that would collide with what auto_cdc writes or uses internally. -#}
  {%- for column in source_columns -%}
    {%- if column | lower in _RESERVED_COLUMNS -%}
      {%- do errors.append("the model query returns a column named '" ~ column ~ "', a name auto_cdc reserves for its history columns: rename it in the model query.") -%}
    {%- elif (column | lower).startswith(_INTERNAL_PREFIX) -%}
      {%- do errors.append("the model query returns a column named '" ~ column ~ "'; names starting with '" ~ _INTERNAL_PREFIX ~ "' are reserved for auto_cdc: rename it.") -%}
    {%- endif -%}
  {%- endfor -%}

  {#- stored_as_scd_type -#}
  {%- set scd_type = auto_cdc._config_value('stored_as_scd_type', 1) | string | lower -%}
  {%- if scd_type not in ['1', '2', 'bitemporal'] -%}
    {%- do errors.append("`stored_as_scd_type` is '" ~ scd_type ~ "'; use 1, 2 or 'bitemporal'.") -%}
  {%- elif scd_type == 'bitemporal' and snapshot -%}
    {%- do errors.append("auto_cdc_from_snapshot stores snapshots as `stored_as_scd_type` 1 or 2, not 'bitemporal'.") -%}
  {%- endif -%}
  {%- if snapshot -%}
    {%- for name in ['sequence_by', 'apply_as_deletes', 'apply_as_truncates', 'ignore_null_updates', 'ignore_null_updates_column_list',
                     'ignore_null_updates_except_column_list', 'columns_to_update', 'checkpoint_column', 'system_sequence_by'] -%}
      {%- if auto_cdc._config_value(name) not in [none, false] -%}
        {%- do errors.append("`" ~ name ~ "` does not apply to auto_cdc_from_snapshot, which derives events by comparing snapshots: remove it.") -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}

  {#- keys -#}
  {%- set key_names = auto_cdc._as_list(auto_cdc._config_value('keys')) -%}
  {%- if key_names | length == 0 -%}
    {%- do errors.append("`keys` is required: the list of columns that identify a row, e.g. keys=['id']." ~ auto_cdc._near_miss_hint('keys')) -%}
  {%- endif -%}
  {%- set keys = auto_cdc._resolve_columns('keys', key_names, source_columns, errors) -%}

  {#- sequence_by: a column (quoted with its real spelling) or a SQL expression, or a list of them. -#}
  {%- set sequence_exprs = [] -%}
  {%- set sequence_by = [] if snapshot else auto_cdc._as_list(auto_cdc._config_value('sequence_by')) -%}
  {%- if sequence_by | length == 0 and not snapshot -%}
    {%- do errors.append("`sequence_by` is required: the column (or expression, or list of them) that orders the events, e.g. sequence_by='updated_at'."
                         ~ auto_cdc._near_miss_hint('sequence_by')) -%}
  {%- endif -%}
  {%- set sequence_columns = [] -%}
  {%- set sequence_fields = [] -%}
  {%- set sequence_config = [] -%}
  {%- set sequence_labels = [] -%}
  {%- set expressions = [] -%}
  {%- for item in sequence_by -%}
    {%- set column = auto_cdc._resolve_column(item | string, source_columns) -%}
    {%- if column is not none -%}
      {%- do sequence_exprs.append('src.' ~ auto_cdc.quote_identifier(column)) -%}
      {%- do sequence_columns.append(column) -%}
      {%- do sequence_fields.append(column) -%}
    {%- elif modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', item | string) -%}
      {#- A bare name that is no column is a typo, not an expression. -#}
      {%- do errors.append("`sequence_by` names column '" ~ item ~ "', which the model query does not return (it returns: "
                           ~ (source_columns | join(', ')) ~ ").") -%}
    {%- else -%}
      {%- do sequence_exprs.append('(' ~ item ~ ')') -%}
      {%- do sequence_fields.append('part_' ~ loop.index) -%}
      {%- do expressions.append(('sequence_by', item)) -%}
    {%- endif -%}
    {%- do sequence_config.append(column | lower if column is not none else auto_cdc._normalized_sql(item)) -%}
    {%- do sequence_labels.append(column if column is not none else item | string) -%}
  {%- endfor -%}

  {%- set version_column = none -%}
  {%- if snapshot -%}
    {#- The snapshot version is the one sequence; its column (if any) is control data. -#}
    {%- do sequence_exprs.append('the snapshot version') -%}
    {%- do sequence_labels.append('version') -%}
    {%- do sequence_fields.append('version') -%}
    {%- if versions.way == 'column' -%}
      {%- set version_column = (auto_cdc._resolve_columns('snapshot_version_column', [versions.value], source_columns, errors) or [none])[0] -%}
      {%- if version_column is not none and version_column in keys -%}
        {%- do errors.append("`snapshot_version_column` '" ~ version_column ~ "' is also a key; the version cannot identify a row.") -%}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}

  {#- Event kinds -#}
  {%- set deletes_expr = none if snapshot else auto_cdc._config_value('apply_as_deletes') -%}
  {%- set truncates_expr = none if snapshot else auto_cdc._config_value('apply_as_truncates') -%}
  {%- for name, expr in [('apply_as_deletes', deletes_expr), ('apply_as_truncates', truncates_expr)] if expr is not none -%}
    {%- do expressions.append((name, expr)) -%}
  {%- endfor -%}
  {%- if truncates_expr is not none and scd_type != '1' -%}
    {%- do errors.append("`apply_as_truncates` is only supported with stored_as_scd_type=1: remove it, or filter truncate events out of the model query.") -%}
  {%- endif -%}

  {#- Which columns reach the target -#}
  {%- do auto_cdc._exclusive('column_list', 'except_column_list', errors) -%}
  {%- do auto_cdc._exclusive('track_history_column_list', 'track_history_except_column_list', errors) -%}
  {%- for name in ['track_history_column_list', 'track_history_except_column_list'] -%}
    {%- if auto_cdc._config_value(name) is not none and scd_type == '1' -%}
      {%- do errors.append("`" ~ name ~ "` only applies to stored_as_scd_type=2 or 'bitemporal': remove it, or set stored_as_scd_type.") -%}
    {%- endif -%}
  {%- endfor -%}
  {#- Bitemporal: system time, a column or an expression like sequence_by (one, not a list). -#}
  {%- set system_by = auto_cdc._config_value('system_sequence_by') -%}
  {%- set system_expr = none -%}
  {%- set system_column = none -%}
  {%- if system_by is not none and scd_type != 'bitemporal' -%}
    {%- if not snapshot -%}{%- do errors.append("`system_sequence_by` only applies to stored_as_scd_type='bitemporal'.") -%}{%- endif -%}
  {%- elif scd_type == 'bitemporal' and (system_by is none or system_by is not string) -%}
    {%- do errors.append("stored_as_scd_type='bitemporal' needs `system_sequence_by`: the column (or expression) telling when the system learned of each event, e.g. system_sequence_by='ingested_at'.") -%}
  {%- elif scd_type == 'bitemporal' -%}
    {%- set system_column = auto_cdc._resolve_column(system_by, source_columns) -%}
    {%- if system_column is not none -%}
      {%- set system_expr = 'src.' ~ auto_cdc.quote_identifier(system_column) -%}
    {%- elif modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', system_by) -%}
      {%- do errors.append("`system_sequence_by` names column '" ~ system_by ~ "', which the model query does not return (it returns: "
                           ~ (source_columns | join(', ')) ~ ").") -%}
    {%- else -%}
      {%- set system_expr = '(' ~ system_by ~ ')' -%}
      {%- do expressions.append(('system_sequence_by', system_by)) -%}
    {%- endif -%}
  {%- endif -%}

  {%- set ctu_name = none if snapshot else auto_cdc._config_value('columns_to_update') -%}
  {%- set ctu_column = none -%}
  {%- if ctu_name is not none -%}
    {%- set ctu_column = (auto_cdc._resolve_columns('columns_to_update', [ctu_name], source_columns, errors) or [none])[0] -%}
    {%- for name in ['ignore_null_updates', 'ignore_null_updates_column_list', 'ignore_null_updates_except_column_list'] -%}
      {%- if auto_cdc._config_value(name) not in [none, false] -%}
        {%- do errors.append("`columns_to_update` and `" ~ name ~ "` cannot be combined: an event either lists the columns it writes or skips NULLs, not both.") -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if scd_type == 'bitemporal' -%}
      {%- do errors.append("`columns_to_update` is not supported with stored_as_scd_type='bitemporal'.") -%}
    {%- endif -%}
  {%- endif -%}

  {%- set candidates = [] -%}
  {%- for column in source_columns -%}
    {%- if column != ctu_column and column != version_column -%}{%- do candidates.append(column) -%}{%- endif -%}
  {%- endfor -%}
  {%- set column_list = auto_cdc._config_value('column_list') -%}
  {%- set except_column_list = auto_cdc._config_value('except_column_list') -%}
  {%- set chosen = candidates -%}
  {%- if column_list is not none -%}
    {%- set listed = auto_cdc._resolve_columns('column_list', auto_cdc._as_list(column_list), source_columns, errors) -%}
    {%- if ctu_column is not none and ctu_column in listed -%}
      {%- do errors.append("`column_list` names '" ~ ctu_column ~ "', the `columns_to_update` column; it is control data and is never written: remove it from the list.") -%}
    {%- endif -%}
    {%- set chosen = [] -%}
    {%- for column in candidates -%}
      {%- if column in listed or column in keys -%}{%- do chosen.append(column) -%}{%- endif -%}
    {%- endfor -%}
  {%- elif except_column_list is not none -%}
    {%- set excluded = auto_cdc._resolve_columns('except_column_list', auto_cdc._as_list(except_column_list), source_columns, errors) -%}
    {%- set chosen = [] -%}
    {%- for column in candidates -%}
      {%- if column not in excluded or column in keys -%}{%- do chosen.append(column) -%}{%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set value_columns = [] -%}
  {%- for column in chosen -%}
    {%- if column not in keys -%}{%- do value_columns.append(column) -%}{%- endif -%}
  {%- endfor -%}

  {#- Partial updates: which value columns keep their stored value when an event carries NULL. -#}
  {%- set ignore_null_columns = [] -%}
  {%- set ignore_all = false if snapshot else auto_cdc._config_value('ignore_null_updates', false) -%}
  {%- if ignore_all not in [true, false] -%}
    {%- do errors.append("`ignore_null_updates` must be true or false, not '" ~ ignore_all ~ "'.") -%}
  {%- endif -%}
  {%- set inu_list = none if snapshot else auto_cdc._config_value('ignore_null_updates_column_list') -%}
  {%- set inu_except = none if snapshot else auto_cdc._config_value('ignore_null_updates_except_column_list') -%}
  {%- set given = (1 if ignore_all is sameas true else 0) + (0 if inu_list is none else 1) + (0 if inu_except is none else 1) -%}
  {%- if given > 1 -%}
    {%- do errors.append("set only one of `ignore_null_updates`, `ignore_null_updates_column_list` and `ignore_null_updates_except_column_list`.") -%}
  {%- endif -%}
  {%- if ignore_all is sameas true -%}
    {%- set ignore_null_columns = value_columns -%}
  {%- elif not snapshot -%}
    {%- set ignore_null_columns = auto_cdc._column_subset('ignore_null_updates_column_list', value_columns, value_columns, source_columns, errors) or [] -%}
  {%- endif -%}

  {#- SCD2 history: which columns open a new version. By default every written non-key column
      except those `sequence_by` names. -#}
  {%- set default_tracked = value_columns | reject('in', sequence_columns + [system_column]) | list -%}
  {%- set tracked_columns = auto_cdc._column_subset('track_history_column_list', default_tracked, value_columns, source_columns, errors) -%}
  {%- if tracked_columns is none -%}{%- set tracked_columns = default_tracked -%}{%- endif -%}

  {#- Incremental reading, tombstones, schema changes -#}
  {%- set checkpoint_name = none if snapshot else auto_cdc._config_value('checkpoint_column') -%}
  {%- set checkpoint_column = none -%}
  {%- if checkpoint_name is not none -%}
    {%- set checkpoint_column = (auto_cdc._resolve_columns('checkpoint_column', [checkpoint_name], source_columns, errors) or [none])[0] -%}
  {%- endif -%}
  {%- set retention = auto_cdc._config_value('tombstone_retention', 172800) -%}
  {%- if retention is not number or retention is sameas true or retention is sameas false or retention < 0 -%}
    {%- do errors.append("`tombstone_retention` must be a whole number of seconds >= 0, not '" ~ retention ~ "'.") -%}
  {%- endif -%}
  {%- set max_delete_fraction = auto_cdc._config_value('max_delete_fraction', 0.5) -%}
  {%- if max_delete_fraction is not number or max_delete_fraction is sameas true or max_delete_fraction is sameas false
        or max_delete_fraction < 0 or max_delete_fraction > 1 -%}
    {%- do errors.append("`max_delete_fraction` must be a number from 0 to 1 (1 turns the guard off), not '" ~ max_delete_fraction ~ "'.") -%}
  {%- endif -%}
  {#- dbt gives every model on_schema_change='ignore' by default; auto_cdc's default is
      'append_new_columns', so only a value the user actually set counts. -#}
  {%- set on_schema_change = 'append_new_columns' -%}
  {%- if 'on_schema_change' in (model.unrendered_config or {}) or (config.get('meta') or {}).get('on_schema_change') is not none -%}
    {%- set on_schema_change = auto_cdc._config_value('on_schema_change') -%}
  {%- endif -%}
  {%- if on_schema_change not in ['append_new_columns', 'fail', 'ignore'] -%}
    {%- do errors.append("`on_schema_change` is '" ~ on_schema_change ~ "'; auto_cdc supports 'append_new_columns' (default), 'fail' and 'ignore'.") -%}
  {%- endif -%}

  {%- if errors -%}
    {%- do exceptions.raise_compiler_error(
          "auto_cdc: model '" ~ model.name ~ "' is not configured correctly; nothing was written.\n  - "
          ~ (errors | join('\n  - '))) -%}
  {%- endif -%}

  {#- What the stored state depends on, recorded with every run to catch changes between runs. -#}
  {%- set state_config = {
      'materialized': model.config.materialized,
      'keys': keys | map('lower') | sort | list,
      'stored_as_scd_type': scd_type,
      'sequence_by': none if snapshot else sequence_config,
      'system_sequence_by': system_column | lower if system_column else (auto_cdc._normalized_sql(system_by) if system_expr else none),
      'snapshot_versions': versions.way if snapshot else none,
      'snapshot_version_column': (version_column | lower) if version_column else none,
      'snapshot_version_query': auto_cdc._normalized_sql(versions.value) if snapshot and versions.way == 'query' else none,
      'snapshot_version_function': versions.value if snapshot and versions.way == 'function' else none,
      'apply_as_deletes': auto_cdc._normalized_sql(deletes_expr),
      'apply_as_truncates': auto_cdc._normalized_sql(truncates_expr),
      'ignore_null_updates': ignore_all is sameas true,
      'ignore_null_updates_column_list': auto_cdc._config_columns('ignore_null_updates_column_list', source_columns),
      'ignore_null_updates_except_column_list': auto_cdc._config_columns('ignore_null_updates_except_column_list', source_columns),
      'columns_to_update': ctu_column | lower if ctu_column else none,
      'track_history_column_list': auto_cdc._config_columns('track_history_column_list', source_columns),
      'track_history_except_column_list': auto_cdc._config_columns('track_history_except_column_list', source_columns),
      'checkpoint_column': checkpoint_column | lower if checkpoint_column else none,
      'tombstone_retention': retention,
  } -%}

  {{ return({
      'model_name': model.name,
      'seq_type': seq_type,
      'scd_type': scd_type,
      'key_columns': keys,
      'sequence_exprs': sequence_exprs,
      'sequence_columns': sequence_columns,
      'sequence_fields': sequence_fields,
      'sequence_labels': sequence_labels,
      'seq_parts': sequence_exprs | length,
      'deletes_expr': deletes_expr,
      'truncates_expr': truncates_expr,
      'written_columns': chosen,
      'value_columns': value_columns,
      'ignore_null_columns': ignore_null_columns,
      'tracked_columns': tracked_columns,
      'columns_to_update': ctu_column,
      'partial': (ignore_null_columns | length > 0) or ctu_column is not none,
      'checkpoint_column': checkpoint_column,
      'tombstone_retention': retention,
      'on_schema_change': on_schema_change,
      'snapshot': snapshot,
      'version_column': version_column,
      'system_expr': system_expr,
      'system_column': system_column,
      'expressions': expressions,
      'max_delete_fraction': max_delete_fraction,
      'compared_as_text': source.compared_as_text,
      'source_columns': source_columns,
      'state_config': state_config,
  }) }}
{%- endmacro %}
{% macro _config_value(name, default=none) -%}
  {#- Top-level config first, then the same key under `meta`. -#}
  {%- set value = config.get(name) -%}
  {%- if value is none -%}
    {%- set value = (config.get('meta') or {}).get(name) -%}
  {%- endif -%}
  {{ return(default if value is none else value) }}
{%- endmacro %}


{% macro _as_list(value) -%}
  {%- if value is none -%}{{ return([]) }}
  {%- elif value is string -%}{{ return([value]) }}
  {%- else -%}{{ return(value | list) }}
  {%- endif -%}
{%- endmacro %}


{% macro _resolve_column(name, source_columns) -%}
  {#- The model query's spelling of `name`: exact match first, then case-insensitive. -#}
  {%- if name in source_columns -%}{{ return(name) }}{%- endif -%}
  {%- set matches = [] -%}
  {%- for column in source_columns -%}
    {%- if column | lower == name | lower -%}{%- do matches.append(column) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(matches[0] if matches | length == 1 else none) }}
{%- endmacro %}


{% macro _resolve_columns(config_name, names, source_columns, errors) -%}
  {%- set resolved = [] -%}
  {%- for name in names -%}
    {%- set column = auto_cdc._resolve_column(name, source_columns) -%}
    {%- if column is none -%}
      {%- do errors.append("`" ~ config_name ~ "` names column '" ~ name ~ "', which the model query does not return (it returns: "
                           ~ (source_columns | join(', ')) ~ ").") -%}
    {%- else -%}
      {%- do resolved.append(column) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(resolved) }}
{%- endmacro %}


{% macro _column_subset(list_name, default_columns, value_columns, source_columns, errors) -%}
  {#- For a pair `<x>_column_list` / `<x>_except_column_list` of non-key written columns: the
      listed columns, or `default_columns` without the excepted ones; none when neither is set. -#}
  {%- set except_name = list_name | replace('_column_list', '_except_column_list') -%}
  {%- set listed = auto_cdc._config_value(list_name) -%}
  {%- set excepted = auto_cdc._config_value(except_name) -%}
  {%- if listed is none and excepted is none -%}{{ return(none) }}{%- endif -%}
  {%- set config_name = list_name if listed is not none else except_name -%}
  {%- set named = auto_cdc._resolve_columns(config_name, auto_cdc._as_list(listed if listed is not none else excepted), source_columns, errors) -%}
  {%- for column in named if column not in value_columns -%}
    {%- do errors.append("`" ~ config_name ~ "` names '" ~ column ~ "', which is not a non-key column written to the target.") -%}
  {%- endfor -%}
  {%- if listed is not none -%}
    {{ return(value_columns | select('in', named) | list) }}
  {%- endif -%}
  {{ return(default_columns | reject('in', named) | list) }}
{%- endmacro %}


{% macro _exclusive(a, b, errors) -%}
  {%- if auto_cdc._config_value(a) is not none and auto_cdc._config_value(b) is not none -%}
    {%- do errors.append("`" ~ a ~ "` and `" ~ b ~ "` are mutually exclusive: set only one of them.") -%}
  {%- endif -%}
{%- endmacro %}


{% macro _normalized_sql(expr) -%}
  {#- An expression as recorded for change detection: whitespace runs are one space. -#}
  {{ return(none if expr is none else modules.re.sub('\\s+', ' ', expr | string) | trim) }}
{%- endmacro %}


{% macro _config_columns(name, source_columns) -%}
  {#- A column-list config as recorded for change detection: the columns it names, in lower case, sorted. -#}
  {%- set value = auto_cdc._config_value(name) -%}
  {%- if value is none -%}{{ return(none) }}{%- endif -%}
  {%- set columns = [] -%}
  {%- for item in auto_cdc._as_list(value) -%}
    {%- do columns.append((auto_cdc._resolve_column(item | string, source_columns) or item) | lower) -%}
  {%- endfor -%}
  {{ return(columns | sort | list) }}
{%- endmacro %}
