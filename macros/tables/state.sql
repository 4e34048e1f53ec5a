{#- Stage 5, tables (existing state follows the configuration). In: `cfg`, the stored state's
    columns. Out: per-column sequences or event flags added or dropped as partial updates are
    turned on or off; the run history gains the `config` column; returns the appended columns
    the stored SCD2 events know of; an SCD2 snapshot model's events from an earlier version
    replaced by its key-columns-only state. -#}

{% macro evolve_run_history(runs_relation, previous) -%}
  {#- A run history written before runs recorded their configuration (or flows) gains the column. -#}
  {%- set missing = [] -%}
  {%- for name in ['config', 'flows'] if previous is not none and not previous['has_' ~ name ~ '_column'] -%}
    {%- do missing.append({'name': name, 'data_type': dbt.type_string()}) -%}
  {%- endfor -%}
  {%- if missing -%}
    {%- do auto_cdc.run_statements(auto_cdc.add_columns(runs_relation, missing)) -%}
  {%- endif -%}
{%- endmacro %}


{% macro evolve_state(cfg, state, batch) -%}
  {#- Keep the state in step with the configuration; returns the value columns the stored SCD2
      events know of (an appended column is unknown to the events stored before it). -#}
  {%- set existing = adapter.get_columns_in_relation(state) | map(attribute='name') | map('lower') | list -%}
  {%- set required = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) + auto_cdc.seq_names('__cdc_delete_seq', cfg.seq_parts)
                     if cfg.scd_type == '1' else auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {%- if required | reject('in', existing) | list -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': `sequence_by` now has " ~ cfg.seq_parts
        ~ " part(s), which does not match the stored state; nothing was written. Rebuild with `dbt run --full-refresh -s "
        ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- if cfg.scd_type == '1' -%}
    {%- do auto_cdc.run_statements(auto_cdc.evolve_column_sequences(cfg, state, existing)) -%}
    {{ return([]) }}
  {%- endif -%}
  {%- do auto_cdc.run_statements(auto_cdc.evolve_event_flags(cfg, state, existing)) -%}
  {{ return(auto_cdc._known_columns(cfg, existing)) }}
{%- endmacro %}


{% macro retire_event_state(cfg, state_relation, batch) -%}
  {#- SCD2 from snapshots: a state that still holds events (written by an earlier version of this
      package) is replaced by the key-columns-only one. Its events stopped being kept up to date
      when this version took over, and a rollback to the earlier version would rebuild history
      from them and delete the rows written since; without them it fails instead. -#}
  {%- set names = adapter.get_columns_in_relation(state_relation) | map(attribute='name') | map('lower') | list -%}
  {%- if '__cdc_seq' in names -%}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": SCD2 from snapshots keeps no events; replacing the events in " ~ state_relation
               ~ " (written by an earlier version of auto_cdc, no longer read) with an empty table", info=true) -%}
    {%- do auto_cdc.run_statements(['drop table ' ~ state_relation, auto_cdc.create_state_sql(cfg, state_relation, batch)]) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _known_columns(cfg, existing) -%}
  {%- set known = [] -%}
  {%- for column in cfg.value_columns if auto_cdc.event_known(column) in existing -%}{%- do known.append(column) -%}{%- endfor -%}
  {{ return(known) }}
{%- endmacro %}


{% macro evolve_column_sequences(cfg, state, existing) -%}
  {#- SCD1 partial updates keep, per column, the sequence that last wrote it. Turning partial
      updates on: every column was last written by the row's last upsert. A column added later
      has never been written. Turning them off drops the columns, so a later switch back cannot
      read stale sequences. -#}
  {%- set stored = [] -%}
  {%- for name in existing if name.startswith('__cdc_seq__') -%}{%- do stored.append(name) -%}{%- endfor -%}
  {%- set upsert_names = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) -%}
  {%- set statements = [] -%}
  {%- if not cfg.partial -%}
    {%- for name in stored -%}{%- do statements.append(auto_cdc.drop_column_sql(state, name)) -%}{%- endfor -%}
    {{ return(statements) }}
  {%- endif -%}
  {%- for column in cfg.value_columns -%}
    {%- set names = auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), cfg.seq_parts) -%}
    {%- for name in names if names[0] not in existing -%}
      {%- do statements.extend(auto_cdc.add_columns(state, [{'name': name, 'data_type': auto_cdc.column_type(state, upsert_names[loop.index0])}])) -%}
      {%- if not stored -%}{%- do statements.append(auto_cdc.set_column_sql(state, name, upsert_names[loop.index0])) -%}{%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro column_type(relation, name) -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- if column.name | lower == name | lower -%}{{ return(column.data_type) }}{%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}


{% macro evolve_event_flags(cfg, state, existing) -%}
  {#- SCD2 partial updates: stored events without a flag wrote every column they carry. -#}
  {%- set statements = [] -%}
  {%- set wanted = [] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}
    {%- set flag = auto_cdc.event_flag(column) -%}
    {%- do wanted.append(flag) -%}
    {%- if flag not in existing -%}
      {%- do statements.extend(auto_cdc.add_columns(state, [{'name': flag, 'data_type': dbt.type_boolean()}])) -%}
      {%- do statements.append(auto_cdc.set_column_sql(state, flag, 'true')) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name in existing if name.startswith('__cdc_w__') and name not in wanted -%}
    {%- do statements.append(auto_cdc.drop_column_sql(state, name)) -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro drop_column_sql(relation, name) -%}
  alter table {{ relation }} drop column {{ auto_cdc.quote_identifier(name) }}
{%- endmacro %}


{% macro set_column_sql(relation, name, value_sql) -%}
  update {{ relation }} set {{ auto_cdc.quote_identifier(name) }} = {{ value_sql }}
{%- endmacro %}
