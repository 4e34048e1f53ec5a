{#- Stages 6 to 8 for every SCD type. In: `arg_dict` (cfg, the batch, the model's relations and
    the facts of this run). Out: the run's writes that resolve the changes into a working table,
    write them to the target and the state, and record the run, in order (apply_writes applies
    them after the tables stage's). -#}

{% macro apply_changes(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set statements = [auto_cdc.note_fence_sql(arg_dict.get('fence'))] -%}
  {#- Resolve: the rows the touched keys must have, and the action each needs. -#}
  {%- if cfg.scd_type != '1' and not cfg.history_from_open_rows -%}
    {%- do statements.extend(auto_cdc.fill_temp_table_sql(arg_dict.history, auto_cdc.scd2_history_sql(arg_dict), cfg.key_columns + ['__cdc_stretch_tail'])) -%}
  {%- endif -%}
  {%- do statements.extend(auto_cdc.fill_temp_table_sql(arg_dict.changes, auto_cdc.changes_sql(arg_dict), cfg.key_columns + ['__cdc_action'])) -%}

  {#- Apply, then record. The change feed (if on) reads the rows the changes touch before and
      after the write. -#}
  {%- set feed = arg_dict.get('change_feed') -%}
  {%- do statements.extend(auto_cdc.change_feed_statements(arg_dict, 'before_write') if feed else []) -%}
  {%- do statements.extend(auto_cdc.write_target_statements(cfg, arg_dict.changes, arg_dict.target, arg_dict.get('fence'))) -%}
  {%- do statements.extend(auto_cdc.change_feed_statements(arg_dict, 'after_write') if feed else []) -%}
  {%- do statements.extend(auto_cdc.write_state_statements(arg_dict)) -%}
  {%- do statements.append(auto_cdc.record_run_sql(arg_dict)) -%}
  {%- if arg_dict.truncating -%}
    {%- do statements.append(auto_cdc.scd1_forget_dominated_sql(arg_dict)) -%}
  {%- endif -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro changes_sql(arg_dict) -%}
  {%- if arg_dict.cfg.scd_type == '1' -%}
    {{ return(auto_cdc.scd1_changes_sql(arg_dict)) }}
  {%- elif arg_dict.cfg.scd_type == '2' -%}
    {{ return(auto_cdc.scd2_changes_sql(arg_dict)) }}
  {%- endif -%}
  {{ return(auto_cdc.bitemporal_changes_sql(arg_dict)) }}
{%- endmacro %}
