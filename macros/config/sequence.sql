{#- Stage 1, configuration: what orders and classifies the events. In: the config values
    (`_read_values`), the snapshot version source and the model query's columns. Out: dicts of
    SQL expressions, column names and the expression configs `check_expressions` compiles. -#}

{% macro _read_sequence(values, versions, keys, source_columns, errors) -%}
  {#- `sequence_by`: a column (quoted with its real spelling) or a SQL expression, or a list of
      them; for auto_cdc_from_snapshot (`versions` given) the snapshot version. Out: {exprs,
      columns, fields, labels, expressions, version_column, state: its part of state_config}. -#}
  {%- if versions is not none -%}{{ return(auto_cdc._snapshot_sequence(versions, keys, source_columns, errors)) }}{%- endif -%}
  {%- set items = auto_cdc._as_list(values.sequence_by) -%}
  {%- if items | length == 0 -%}
    {%- do errors.append("`sequence_by` is required: the column (or expression, or list of them) that orders the events, e.g. sequence_by='updated_at'."
                         ~ auto_cdc._near_miss_hint('sequence_by')) -%}
  {%- endif -%}
  {%- set sequence = {'exprs': [], 'columns': [], 'fields': [], 'labels': [], 'expressions': [], 'version_column': none} -%}
  {%- set recorded = [] -%}
  {%- for item in items -%}
    {%- set part = auto_cdc._column_or_expression('sequence_by', item, source_columns, errors) -%}
    {%- if part.column is not none -%}
      {%- do sequence.columns.append(part.column) -%}
      {%- do sequence.fields.append(part.column) -%}
    {%- elif part.expr is not none -%}
      {%- do sequence.fields.append('part_' ~ loop.index) -%}
      {%- do sequence.expressions.append(('sequence_by', item)) -%}
    {%- endif -%}
    {%- if part.expr is not none -%}{%- do sequence.exprs.append(part.expr) -%}{%- endif -%}
    {%- do recorded.append(part.recorded) -%}
    {%- do sequence.labels.append(part.label) -%}
  {%- endfor -%}
  {%- do sequence.update({'state': {'sequence_by': recorded, 'snapshot_versions': none, 'snapshot_version_column': none,
                                    'snapshot_version_query': none, 'snapshot_version_function': none}}) -%}
  {{ return(sequence) }}
{%- endmacro %}


{% macro _snapshot_sequence(versions, keys, source_columns, errors) -%}
  {#- The snapshot version is the one sequence; its column (if any) is control data, never a key. -#}
  {%- set version_column = none -%}
  {%- if versions.way == 'column' -%}
    {%- set version_column = auto_cdc._resolve_one('snapshot_version_column', versions.value, source_columns, errors) -%}
    {%- if version_column is not none and version_column in keys -%}
      {%- do errors.append("`snapshot_version_column` '" ~ version_column ~ "' is also a key; the version cannot identify a row.") -%}
    {%- endif -%}
  {%- endif -%}
  {{ return({
      'exprs': ['the snapshot version'], 'columns': [], 'fields': ['version'], 'labels': ['version'], 'expressions': [],
      'version_column': version_column,
      'state': {
          'sequence_by': none,
          'snapshot_versions': versions.way,
          'snapshot_version_column': (version_column | lower) if version_column else none,
          'snapshot_version_query': auto_cdc.normalized_sql(versions.value) if versions.way == 'query' else none,
          'snapshot_version_function': versions.value if versions.way == 'function' else none,
      },
  }) }}
{%- endmacro %}


{% macro _column_or_expression(config_name, value, source_columns, errors) -%}
  {#- One item of `sequence_by`, or `system_sequence_by`: a column of the model query, else SQL.
      Out: {column, expr (none after an error), sql (the value, if SQL), recorded (for
      state_config), label}. -#}
  {%- set column = auto_cdc.column_named(value | string, source_columns) -%}
  {%- if column is not none -%}
    {{ return({'column': column, 'expr': 'src.%s' | format(auto_cdc.quote_identifier(column)), 'sql': none,
               'recorded': column | lower, 'label': column}) }}
  {%- endif -%}
  {%- set part = {'column': none, 'expr': '(%s)' | format(value), 'sql': value, 'recorded': auto_cdc.normalized_sql(value), 'label': value | string} -%}
  {%- if modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', value | string) -%}
    {#- A bare name that is no column is a typo, not an expression. -#}
    {%- do errors.append("`" ~ config_name ~ "` names column '" ~ value ~ "', which the model query does not return (it returns: "
                         ~ (source_columns | join(', ')) ~ ").") -%}
    {%- do part.update({'expr': none, 'sql': none}) -%}
  {%- endif -%}
  {{ return(part) }}
{%- endmacro %}


{% macro _read_system_sequence(values, scd_type, snapshot, source_columns, errors) -%}
  {#- Bitemporal system time: a column or an expression like sequence_by (one, not a list).
      Out: {expr, column, expressions, recorded}. -#}
  {%- set system_by = values.system_sequence_by -%}
  {%- set unused = {'expr': none, 'column': none, 'expressions': [], 'recorded': none} -%}
  {%- if scd_type != 'bitemporal' -%}
    {#- On a snapshot model `_reject_auto_cdc_configs` has said it. -#}
    {%- if system_by is not none and not snapshot -%}
      {%- do errors.append("`system_sequence_by` only applies to stored_as_scd_type='bitemporal'.") -%}
    {%- endif -%}
    {{ return(unused) }}
  {%- elif system_by is none or system_by is not string -%}
    {%- do errors.append("stored_as_scd_type='bitemporal' needs `system_sequence_by`: the column (or expression) telling when the system learned of each event, e.g. system_sequence_by='ingested_at'.") -%}
    {{ return(unused) }}
  {%- endif -%}
  {%- set part = auto_cdc._column_or_expression('system_sequence_by', system_by, source_columns, errors) -%}
  {{ return({'expr': part.expr, 'column': part.column, 'expressions': [] if part.sql is none else [('system_sequence_by', system_by)],
             'recorded': part.recorded if part.expr is not none else none}) }}
{%- endmacro %}


{% macro _read_event_kinds(values, scd_type, errors) -%}
  {#- `apply_as_deletes` / `apply_as_truncates`: SQL conditions that classify an event. Out:
      {deletes_expr, truncates_expr, expressions}. -#}
  {%- set kinds = {'deletes_expr': values.apply_as_deletes, 'truncates_expr': values.apply_as_truncates, 'expressions': []} -%}
  {%- for name in ['apply_as_deletes', 'apply_as_truncates'] if values[name] is not none -%}
    {%- do kinds.expressions.append((name, values[name])) -%}
  {%- endfor -%}
  {%- if kinds.truncates_expr is not none and scd_type in ['2', 'bitemporal'] -%}
    {%- do errors.append("`apply_as_truncates` is only supported with stored_as_scd_type=1: remove it, or filter truncate events out of the model query.") -%}
  {%- endif -%}
  {{ return(kinds) }}
{%- endmacro %}
