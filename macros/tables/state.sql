{#- Stage 5, tables (existing state follows the configuration). In: `cfg`, the stored state's
    columns as the run's earlier writes leave them. Out, as the run's writes: per-column
    sequences or event flags added or dropped as partial updates are turned on or off. Returns
    the appended columns the stored SCD2 events know of. -#}

{% macro evolve_state(cfg, state, state_columns, writes) -%}
  {#- Keep the state in step with the configuration; returns the value columns the stored SCD2
      events know of (an appended column is unknown to the events stored before it).
      `state_columns`: the state's columns as the run's writes before these leave them
      (reconcile_schema's `tables.state`). -#}
  {%- set existing = state_columns | map(attribute='name') | map('lower') | list -%}
  {%- set required = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) + auto_cdc.seq_names('__cdc_delete_seq', cfg.seq_parts)
                     if cfg.scd_type == '1' else auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {%- if required | reject('in', existing) | list -%}
    {%- do auto_cdc.model_error(cfg.model_name, "`sequence_by` now has " ~ cfg.seq_parts
        ~ " part(s), which does not match the stored state; nothing was written. Rebuild with `dbt run --full-refresh -s "
        ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- if cfg.scd_type == '1' -%}
    {%- do writes.extend(auto_cdc.evolve_column_sequences(cfg, state, state_columns)) -%}
    {{ return([]) }}
  {%- endif -%}
  {%- do writes.extend(auto_cdc.evolve_event_flags(cfg, state, existing)) -%}
  {{ return(auto_cdc._known_columns(cfg, existing)) }}
{%- endmacro %}


{% macro _known_columns(cfg, existing) -%}
  {%- set known = [] -%}
  {%- for column in cfg.value_columns if auto_cdc.event_known(column) in existing -%}{%- do known.append(column) -%}{%- endfor -%}
  {{ return(known) }}
{%- endmacro %}


{% macro evolve_column_sequences(cfg, state, state_columns) -%}
  {#- SCD1 partial updates keep, per column, the sequence that last wrote it. Turning partial
      updates on: every column was last written by the row's last upsert. A column added later
      has never been written. Turning them off drops the columns, so a later switch back cannot
      read stale sequences. -#}
  {%- set types = {} -%}
  {%- for column in state_columns -%}{%- do types.update({column.name | lower: column.data_type}) -%}{%- endfor -%}
  {%- set existing = types.keys() | list -%}
  {%- set stored = [] -%}
  {%- for name in existing if name.startswith('__cdc_seq__') -%}{%- do stored.append(name) -%}{%- endfor -%}
  {%- set upsert_names = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) -%}
  {%- set statements = [] -%}
  {%- if not cfg.partial -%}
    {%- for name in stored -%}{%- do statements.append(auto_cdc.drop_column_sql(state, name)) -%}{%- endfor -%}
    {{ return(statements) }}
  {%- endif -%}
  {%- set added = {} -%}
  {%- for column in cfg.value_columns -%}
    {%- set names = auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), cfg.seq_parts) -%}
    {%- for name in names if names[0] not in existing -%}
      {%- do statements.extend(auto_cdc.add_columns_sql(state, [{'name': name, 'data_type': types[upsert_names[loop.index0]]}])) -%}
      {%- do added.update({name: upsert_names[loop.index0]}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(statements + ([auto_cdc.set_columns_sql(state, added)] if added and not stored else [])) }}
{%- endmacro %}


{% macro evolve_event_flags(cfg, state, existing) -%}
  {#- SCD2 partial updates: stored events without a flag wrote every column they carry. -#}
  {%- set statements = [] -%}
  {%- set wanted = [] -%}
  {%- set added = {} -%}
  {%- for column in cfg.value_columns if cfg.partial -%}
    {%- set flag = auto_cdc.event_flag(column) -%}
    {%- do wanted.append(flag) -%}
    {%- if flag not in existing -%}
      {%- do statements.extend(auto_cdc.add_columns_sql(state, [{'name': flag, 'data_type': dbt.type_boolean()}])) -%}
      {%- do added.update({flag: 'true'}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name in existing if name.startswith('__cdc_w__') and name not in wanted -%}
    {%- do statements.append(auto_cdc.drop_column_sql(state, name)) -%}
  {%- endfor -%}
  {{ return(statements + ([auto_cdc.set_columns_sql(state, added)] if added else [])) }}
{%- endmacro %}


{% macro drop_column_sql(relation, name) -%}
  alter table {{ relation }} drop column {{ auto_cdc.quote_identifier(name) }}
{%- endmacro %}


{% macro set_columns_sql(relation, values) -%}
  {#- One update of every row: `values` is {column: SQL value}. It comes after the table's
      ALTERs: DuckDB 1.5 (dbt v2's) cannot commit an ALTER that follows an UPDATE of the same
      table in one transaction. -#}
  update {{ relation }} set {% for name, value_sql in values.items() %}{{ auto_cdc.quote_identifier(name) }} = {{ value_sql }}{{ ', ' if not loop.last }}{% endfor %}
{%- endmacro %}
