{#- Stages 6 to 8 for every SCD type. In: `arg_dict` (cfg, the batch, the model's relations and
    the facts of this run). Out: the changes resolved into a temp table, counted, written to the
    target and the state, and the run recorded; returns the metrics. -#}

{% macro apply_changes(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {#- Resolve: the rows the touched keys must have, and the action each needs. -#}
  {%- if cfg.scd_type != '1' and not cfg.history_from_open_rows -%}
    {%- do auto_cdc.fill_temp_table(arg_dict.history, auto_cdc.scd2_history_sql(arg_dict), cfg.key_columns + ['__cdc_run_tail']) -%}
  {%- endif -%}
  {%- do auto_cdc.fill_temp_table(arg_dict.changes, auto_cdc.changes_sql(arg_dict), cfg.key_columns + ['__cdc_action']) -%}
  {%- set metrics = auto_cdc.with_replaced_rows(auto_cdc.change_metrics(arg_dict.changes, arg_dict.shape), arg_dict.get('change_feed')) -%}

  {#- Apply, then record. The change feed (if on) reads the rows the changes touch before and
      after the write. The state's statements are built before the first write: building them
      may read the state (Spark's tombstone check), and a failure there writes nothing. -#}
  {%- set state_statements = auto_cdc.write_state_statements(arg_dict) -%}
  {%- do auto_cdc.run_statements(auto_cdc.change_feed_statements(arg_dict, 'before_write')) -%}
  {%- do auto_cdc.run_statements(auto_cdc.write_target_statements(cfg, arg_dict.changes, arg_dict.target, arg_dict.get('fence'))) -%}
  {%- do auto_cdc.run_statements(auto_cdc.change_feed_statements(arg_dict, 'after_write')) -%}
  {%- do auto_cdc.run_statements(state_statements) -%}
  {%- do auto_cdc.run_statements([auto_cdc.record_run_sql(arg_dict, metrics)]) -%}
  {%- if arg_dict.truncating -%}
    {%- do auto_cdc.run_statements([auto_cdc.scd1_forget_dominated_sql(arg_dict)]) -%}
  {%- endif -%}
  {{ return(metrics) }}
{%- endmacro %}


{% macro changes_sql(arg_dict) -%}
  {%- if arg_dict.cfg.scd_type == '1' -%}
    {{ return(auto_cdc.scd1_changes_sql(arg_dict)) }}
  {%- elif arg_dict.cfg.scd_type == '2' -%}
    {{ return(auto_cdc.scd2_changes_sql(arg_dict)) }}
  {%- endif -%}
  {{ return(auto_cdc.bitemporal_changes_sql(arg_dict)) }}
{%- endmacro %}
