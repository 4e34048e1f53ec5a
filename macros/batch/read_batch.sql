{#- Stage 3, batch (auto_cdc). In: `cfg`, the model query, the last checkpoint. Out: the SQL of the
    run's batch: the events at or above the checkpoint with their kind (`__cdc_op`), sequence parts
    (`__cdc_seq*`), system sequence and, for partial updates, the columns they write. -#}

{% macro read_batch(cfg, sql, temps, last_run, source, empty_run) -%}
  {#- The batch temp table: the model query's events at or above the checkpoint, or (a model with
      flows) each flow's own (batch/flows.sql). `--empty` reads none. Returns {'statements':
      those it ran (for target/run), 'checks': the row of validate_batch's checks, read in the
      same call}. With on_bad_rows='quarantine' the rows read are temps.raw, and the batch
      those of them that are not set aside. -#}
  {%- set read_into = temps.raw if cfg.quarantine else temps.batch -%}
  {%- if cfg.flows -%}
    {%- if not empty_run -%}{%- do auto_cdc.check_debezium_bounds(cfg.model_name, sql, none) -%}{%- endif -%}
    {%- set statements = auto_cdc.fill_flows_batch(cfg, temps, read_into, last_run, empty_run) -%}
  {%- else -%}
    {%- set checkpoint_filter = 'false' if empty_run else auto_cdc.checkpoint_filter(cfg, last_run, source.columns) -%}
    {%- if not empty_run -%}
      {%- do auto_cdc.check_debezium_bounds(cfg.model_name, sql, [cfg.checkpoint_column, last_run.checkpoint_value] if checkpoint_filter else none) -%}
    {%- endif -%}
    {%- set read = auto_cdc.batch_sql(cfg, sql, checkpoint_filter) -%}
    {%- set statements = [auto_cdc.temp_table_sql(read_into, read)] if cfg.quarantine
                         else auto_cdc.fill_temp_table_sql(read_into, read, cfg.key_columns + ['__cdc_op']) -%}
  {%- endif -%}
  {%- if cfg.quarantine -%}
    {#- Then those set aside and the batch (batch/bad_rows.sql). -#}
    {%- set statements = statements + auto_cdc.set_aside_statements(cfg, temps) -%}
  {%- endif -%}
  {%- set checks = auto_cdc.run_script(statements, auto_cdc.batch_checks_sql(cfg, temps.batch, temps.bad if cfg.quarantine else none)) -%}
  {{ return({'statements': statements, 'checks': checks[0]}) }}
{%- endmacro %}


{% macro checkpoint_filter(cfg, last_run, model_columns) -%}
  {#- Only rows at or above the highest checkpoint value already applied (after_checkpoint).
      Without a stored value for this checkpoint column (first run, full
      refresh, column changed): read all. -#}
  {%- if not cfg.checkpoint_column or last_run is none or last_run.checkpoint_column != cfg.checkpoint_column
        or last_run.checkpoint_value is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set data_type = (model_columns | selectattr('name', 'equalto', cfg.checkpoint_column) | first).data_type -%}
  {%- set column = 'src.' ~ auto_cdc.quote_identifier(cfg.checkpoint_column) -%}
  {{ return(auto_cdc.after_checkpoint(column, data_type, last_run.checkpoint_value, inclusive=true)) }}
{%- endmacro %}


{% macro batch_sql(cfg, sql, checkpoint_filter=none) -%}
  {{ return(adapter.dispatch('batch_sql', 'auto_cdc')(cfg, sql, checkpoint_filter)) }}
{%- endmacro %}

{% macro default__batch_sql(cfg, sql, checkpoint_filter) -%}
  {%- set kinds = [] -%}
  {%- if cfg.deletes_expr -%}{%- do kinds.append("when (" ~ cfg.deletes_expr ~ ") then 'delete'") -%}{%- endif -%}
  {%- if cfg.truncates_expr -%}{%- do kinds.append("when (" ~ cfg.truncates_expr ~ ") then 'truncate'") -%}{%- endif -%}
  {%- set seq_names = auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  select
    src.*,
    {% if kinds -%} case {{ kinds | join(' ') }} else 'upsert' end {%- else -%} 'upsert' {%- endif %} as __cdc_op,
    {%- for expr in cfg.sequence_exprs %}
    {{ expr }} as {{ seq_names[loop.index0] }}{{ ',' if not loop.last or cfg.columns_to_update or cfg.system_expr }}
    {%- endfor %}
    {%- if cfg.system_expr %}
    {{ cfg.system_expr }} as __cdc_sys{{ ',' if cfg.columns_to_update }}
    {%- endif %}
    {%- if cfg.columns_to_update %}
    {{ auto_cdc.columns_to_update_list('src.' ~ auto_cdc.quote_identifier(cfg.columns_to_update)) }} as __cdc_ctu
    {%- endif %}
  from (
    {{ sql }}
  ) as src
  {%- if checkpoint_filter %}
  where {{ checkpoint_filter }}
  {%- endif %}
{%- endmacro %}


{% macro columns_to_update_list(expr) -%}
  {{ return(adapter.dispatch('columns_to_update_list', 'auto_cdc')(expr)) }}
{%- endmacro %}

{% macro default__columns_to_update_list(expr) -%}
  {#- A native array (rendered as {a,b} or [a, b]) or a comma-separated string, normalised to
      ',a,b,' in lower case, so membership is a plain substring test. NULL stays NULL
      (the event writes every column). -#}
  ',' || lower(regexp_replace(trim(translate(cast({{ expr }} as {{ dbt.type_string() }}), '[]{}"''', '')), '\s*,\s*', ',', 'g')) || ','
{%- endmacro %}


{% macro column_is_listed(ctu_expr, column) -%}
  {#- True when the normalised columns_to_update value names `column` (NULL: every column). -#}
  ({{ ctu_expr }} is null or position({{ auto_cdc.string_literal(',' ~ (column | lower) ~ ',') }} in {{ ctu_expr }}) > 0)
{%- endmacro %}


