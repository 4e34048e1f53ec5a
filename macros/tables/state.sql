{#- Stage 5, tables (existing state follows the configuration). In: `cfg`, the stored state's
    columns. Out: per-column sequences or event flags added or dropped as partial updates are
    turned on or off; the run history gains the `config` column; returns the appended columns
    the stored SCD2 events know of. -#}

{% macro evolve_state(cfg, state, batch) -%}
  {#- Keep the state's per-column sequences in step with the partial-update configuration.
      Turning partial updates on: every column was last written by the row's last upsert.
      A column added later has never been written. Turning them off drops the columns, so a
      later switch back cannot read stale sequences. -#}
  {%- set n = cfg.seq_parts -%}
  {%- set existing = [] -%}
  {%- for column in adapter.get_columns_in_relation(state) -%}{%- do existing.append(column.name | lower) -%}{%- endfor -%}
  {%- set required = auto_cdc.seq_names('__cdc_upsert_seq', n) + auto_cdc.seq_names('__cdc_delete_seq', n) if cfg.scd_type == '1'
                      else auto_cdc.seq_names('__cdc_seq', n) -%}
  {%- for name in required -%}
    {%- if name not in existing -%}
      {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': `sequence_by` now has " ~ n
          ~ " part(s), which does not match the stored state; nothing was written. Rebuild with `dbt run --full-refresh -s "
          ~ cfg.model_name ~ "`.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if cfg.scd_type != '1' -%}
    {%- do auto_cdc.run_statements(auto_cdc.evolve_event_flags(cfg, state, existing)) -%}
    {%- set known = [] -%}
    {%- for column in cfg.value_columns -%}
      {%- if auto_cdc.event_known(column) in existing -%}{%- do known.append(column) -%}{%- endif -%}
    {%- endfor -%}
    {%- do cfg.update({'known_columns': known}) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set stored_colseq = [] -%}
  {%- for name in existing -%}{%- if name.startswith('__cdc_seq__') -%}{%- do stored_colseq.append(name) -%}{%- endif -%}{%- endfor -%}
  {%- set statements = [] -%}
  {%- if cfg.partial -%}
    {%- for column in cfg.value_columns -%}
      {%- set names = auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), n) -%}
      {%- if names[0] not in existing -%}
        {%- set fill = stored_colseq | length == 0 -%}
        {%- for name in names -%}
          {%- set upsert_name = auto_cdc.seq_names('__cdc_upsert_seq', n)[loop.index0] -%}
          {%- do statements.append('alter table ' ~ state ~ ' add column ' ~ name ~ ' ' ~ auto_cdc.column_type(state, upsert_name)) -%}
          {%- if fill -%}{%- do statements.append('update ' ~ state ~ ' set ' ~ name ~ ' = ' ~ upsert_name) -%}{%- endif -%}
        {%- endfor -%}
      {%- endif -%}
    {%- endfor -%}
  {%- else -%}
    {%- for name in stored_colseq -%}
      {%- do statements.append('alter table ' ~ state ~ ' drop column ' ~ name) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do auto_cdc.run_statements(statements) -%}
{%- endmacro %}


{% macro evolve_event_flags(cfg, state, existing) -%}
  {#- SCD2 partial updates: stored events without a flag wrote every column they carry. -#}
  {%- set statements = [] -%}
  {%- set wanted = [] -%}
  {%- if cfg.partial -%}
    {%- for column in cfg.value_columns -%}
      {%- set flag = auto_cdc.event_flag(column) -%}
      {%- do wanted.append(flag) -%}
      {%- if flag not in existing -%}
        {%- do statements.append('alter table ' ~ state ~ ' add column ' ~ flag ~ ' ' ~ dbt.type_boolean()) -%}
        {%- do statements.append('update ' ~ state ~ ' set ' ~ flag ~ ' = true') -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {%- for name in existing -%}
    {%- if name.startswith('__cdc_w__') and name not in wanted -%}
      {%- do statements.append('alter table ' ~ state ~ ' drop column ' ~ name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro evolve_run_history(runs_relation, previous) -%}
  {#- A run history written before runs recorded their configuration gains the column. -#}
  {%- if previous is not none and not previous.has_config_column -%}
    {%- do auto_cdc.run_statements(['alter table ' ~ runs_relation ~ ' add column config ' ~ dbt.type_string()]) -%}
  {%- endif -%}
{%- endmacro %}


{% macro column_type(relation, name) -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- if column.name | lower == name | lower -%}{{ return(column.data_type) }}{%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}
