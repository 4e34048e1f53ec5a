{#- Stage 1, configuration: which columns are written, tracked and partially updated. In: the
    config values (`_read_values`), the keys and the model query's columns. Out: lists of the
    query's columns, spelled as the query spells them, and an error for each name it lacks. -#}

{% macro _check_column_lists(values, scd_type, errors) -%}
  {#- A list and its `except` form contradict each other; SCD1 keeps no history to track. -#}
  {%- for pair in [('column_list', 'except_column_list'), ('track_history_column_list', 'track_history_except_column_list')] -%}
    {%- if values[pair[0]] is not none and values[pair[1]] is not none -%}
      {%- do errors.append("`" ~ pair[0] ~ "` and `" ~ pair[1] ~ "` are mutually exclusive: set only one of them.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name in ['track_history_column_list', 'track_history_except_column_list'] if values[name] is not none and scd_type == '1' -%}
    {%- do errors.append("`" ~ name ~ "` only applies to stored_as_scd_type=2 or 'bitemporal': remove it, or set stored_as_scd_type.") -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _read_columns_to_update(values, scd_type, source_columns, errors) -%}
  {#- The column listing, per event, the columns it writes; none when not set. -#}
  {%- set name = values.columns_to_update -%}
  {%- set column = auto_cdc._resolve_one('columns_to_update', name, source_columns, errors) -%}
  {%- if name is not none -%}
    {%- for other in ['ignore_null_updates', 'ignore_null_updates_column_list', 'ignore_null_updates_except_column_list'] if values[other] not in [none, false] -%}
      {%- do errors.append("`columns_to_update` and `" ~ other ~ "` cannot be combined: an event either lists the columns it writes or skips NULLs, not both.") -%}
    {%- endfor -%}
    {%- if scd_type == 'bitemporal' -%}
      {%- do errors.append("`columns_to_update` is not supported with stored_as_scd_type='bitemporal'.") -%}
    {%- endif -%}
  {%- endif -%}
  {{ return(column) }}
{%- endmacro %}


{% macro _read_columns(values, keys, ctu_column, version_column, source_columns, errors) -%}
  {#- Which columns reach the target: the keys always; of the others those `column_list` names or
      `except_column_list` does not. The `columns_to_update` and snapshot version columns are
      control data, never written. Out: {written_columns (query order), value_columns (non-key)}. -#}
  {%- set candidates = source_columns | reject('in', [ctu_column, version_column]) | list -%}
  {%- set others = candidates | reject('in', keys) | list -%}
  {#- The lists may name any column of the query: a key or the version column is simply not written twice. -#}
  {%- set subset = auto_cdc._column_subset(values, 'column_list', others, others, source_columns, errors, allowed=source_columns) -%}
  {%- if subset and subset.config_name == 'column_list' and ctu_column is not none and ctu_column in subset.named -%}
    {%- do errors.append("`column_list` names '" ~ ctu_column ~ "', the `columns_to_update` column; it is control data and is never written: remove it from the list.") -%}
  {%- endif -%}
  {%- set value_columns = subset.columns if subset else others -%}
  {{ return({'written_columns': candidates | select('in', keys + value_columns) | list, 'value_columns': value_columns}) }}
{%- endmacro %}


{% macro _read_partial(fields, values, value_columns, ctu_column, source_columns, errors) -%}
  {#- Partial updates: which value columns keep their stored value when an event carries NULL.
      Out: {ignore_null_columns, partial: whether events may leave columns unwritten}. -#}
  {%- set ignore_all = values.ignore_null_updates -%}
  {%- do auto_cdc._check_field(fields.ignore_null_updates, ignore_all, errors) -%}
  {%- set given = (1 if ignore_all is sameas true else 0) + (0 if values.ignore_null_updates_column_list is none else 1)
                  + (0 if values.ignore_null_updates_except_column_list is none else 1) -%}
  {%- if given > 1 -%}
    {%- do errors.append("set only one of `ignore_null_updates`, `ignore_null_updates_column_list` and `ignore_null_updates_except_column_list`.") -%}
  {%- endif -%}
  {%- set columns = value_columns -%}
  {%- if ignore_all is not sameas true -%}
    {%- set subset = auto_cdc._column_subset(values, 'ignore_null_updates_column_list', value_columns, value_columns, source_columns, errors) -%}
    {%- set columns = subset.columns if subset else [] -%}
  {%- endif -%}
  {{ return({'ignore_null_columns': columns, 'partial': (columns | length > 0) or ctu_column is not none}) }}
{%- endmacro %}


{% macro _read_tracked(values, value_columns, untracked, source_columns, errors) -%}
  {#- SCD2 history: which columns open a new version. By default every written non-key column
      except `untracked` (those the sequences name). -#}
  {%- set default_tracked = value_columns | reject('in', untracked) | list -%}
  {%- set subset = auto_cdc._column_subset(values, 'track_history_column_list', default_tracked, value_columns, source_columns, errors) -%}
  {{ return(subset.columns if subset else default_tracked) }}
{%- endmacro %}


{% macro _column_subset(values, list_name, default_columns, value_columns, source_columns, errors, allowed=none) -%}
  {#- For a pair `<x>column_list` / `<x>except_column_list`: none when neither is set, else
      {columns: the listed ones among `value_columns`, or `default_columns` without the excepted
      ones; named: the columns the list names; config_name: the list read}. The lists may name
      only `allowed` columns (default: `value_columns`). -#}
  {%- set except_name = list_name | replace('column_list', 'except_column_list') -%}
  {%- set listed = values[list_name] -%}
  {%- if listed is none and values[except_name] is none -%}{{ return(none) }}{%- endif -%}
  {%- set config_name = list_name if listed is not none else except_name -%}
  {%- set named = auto_cdc._resolve_columns(config_name, auto_cdc._as_list(values[config_name]), source_columns, errors) -%}
  {%- for column in named if column not in (value_columns if allowed is none else allowed) -%}
    {%- do errors.append("`" ~ config_name ~ "` names '" ~ column ~ "', which is not a non-key column written to the target.") -%}
  {%- endfor -%}
  {%- set columns = value_columns | select('in', named) | list if listed is not none else default_columns | reject('in', named) | list -%}
  {{ return({'columns': columns, 'named': named, 'config_name': config_name}) }}
{%- endmacro %}


{% macro _resolve_columns(config_name, names, source_columns, errors) -%}
  {%- set resolved = [] -%}
  {%- for name in names -%}
    {%- set column = auto_cdc.column_named(name, source_columns) -%}
    {%- if column is none -%}
      {%- do errors.append("`" ~ config_name ~ "` names column '" ~ name ~ "', which the model query does not return (it returns: "
                           ~ (source_columns | join(', ')) ~ ").") -%}
    {%- else -%}
      {%- do resolved.append(column) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(resolved) }}
{%- endmacro %}


{% macro _resolve_one(config_name, name, source_columns, errors) -%}
  {#- A config naming one column: its spelling in the query, or none (unset, or not found: an error). -#}
  {%- if name is none -%}{{ return(none) }}{%- endif -%}
  {{ return((auto_cdc._resolve_columns(config_name, [name], source_columns, errors) or [none])[0]) }}
{%- endmacro %}
