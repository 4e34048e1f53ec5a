{#- Stages 6-8 for every SCD type. In: `arg_dict` (cfg, the batch, the model's relations). Out:
    the changes resolved into a temp table, counted, written, and the run recorded; returns the
    metrics. -#}

{% macro apply_changes(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- if cfg.scd_type == '1' -%}
    {%- set changes_sql = auto_cdc.scd1_changes_sql(arg_dict) -%}
  {%- else -%}
    {%- call statement('auto_cdc_history') -%}
      {{ auto_cdc.create_temp_table(arg_dict.history, auto_cdc.scd2_history_sql(arg_dict)) }}
    {%- endcall -%}
    {%- do auto_cdc.analyze(arg_dict.history, cfg.key_columns + ['__tail']) -%}
    {%- set changes_sql = auto_cdc.scd2_changes_sql(arg_dict) if cfg.scd_type == '2' else auto_cdc.bitemporal_changes_sql(arg_dict) -%}
  {%- endif -%}
  {%- call statement('auto_cdc_changes') -%}
    {{ auto_cdc.create_temp_table(arg_dict.changes, changes_sql) }}
  {%- endcall -%}
  {%- do auto_cdc.analyze(arg_dict.changes, cfg.key_columns + ['__cdc_action']) -%}

  {%- set metrics = auto_cdc.change_metrics(arg_dict.changes, arg_dict.shape) -%}
  {%- do arg_dict.update({'metrics': metrics}) -%}
  {%- if cfg.scd_type == '1' -%}
    {%- do auto_cdc.run_statements(auto_cdc.scd1_apply_statements(arg_dict)) -%}
  {%- elif cfg.scd_type == '2' -%}
    {%- do auto_cdc.run_statements(auto_cdc.scd2_apply_statements(arg_dict)) -%}
  {%- else -%}
    {%- do auto_cdc.run_statements(auto_cdc.bitemporal_apply_statements(arg_dict)) -%}
  {%- endif -%}
  {%- do auto_cdc.run_statements([auto_cdc.record_run_sql(arg_dict)]) -%}
  {%- if arg_dict.truncating -%}
    {%- do auto_cdc.run_statements([auto_cdc.drop_dominated_tombstones_sql(arg_dict)]) -%}
  {%- endif -%}
  {{ return(metrics) }}
{%- endmacro %}
