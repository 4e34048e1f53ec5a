{#- Stages 6 to 8 for every SCD type. In: the run context (`run`: run/context.sql). Out: the
    run's writes that resolve the changes into a working table, write them to the target and the
    state, and record the run, in order (apply_writes applies them after the tables stage's). -#}

{% macro change_statements(run) -%}
  {%- set cfg = run.cfg -%}
  {%- set statements = [auto_cdc.note_fence_sql(run.fence)] -%}
  {#- Resolve: the rows the touched keys must have, and the action each needs. -#}
  {%- if cfg.scd_type != '1' and not cfg.history_from_open_rows -%}
    {%- do statements.extend(auto_cdc.fill_temp_table_sql(run.history, auto_cdc.scd2_history_sql(run), cfg.key_columns + ['__cdc_stretch_tail'])) -%}
  {%- endif -%}
  {%- do statements.extend(auto_cdc.fill_temp_table_sql(run.changes, auto_cdc.changes_sql(run), cfg.key_columns + ['__cdc_action'])) -%}

  {#- Apply, then record. The change feed (if on) reads the rows the changes touch before and
      after the write. -#}
  {%- set feed = run.change_feed -%}
  {%- do statements.extend(auto_cdc.change_feed_statements(run, 'before_write') if feed else []) -%}
  {%- do statements.extend(auto_cdc.write_target_statements(cfg, run.changes, run.target, run.fence)) -%}
  {%- do statements.extend(auto_cdc.change_feed_statements(run, 'after_write') if feed else []) -%}
  {%- do statements.extend(auto_cdc.write_state_statements(run)) -%}
  {%- do statements.append(auto_cdc.record_run_sql(run)) -%}
  {%- if run.truncating -%}
    {%- do statements.append(auto_cdc.scd1_forget_dominated_sql(run)) -%}
  {%- endif -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro changes_sql(run) -%}
  {%- if run.cfg.scd_type == '1' -%}
    {{ return(auto_cdc.scd1_changes_sql(run)) }}
  {%- elif run.cfg.scd_type == '2' -%}
    {{ return(auto_cdc.scd2_changes_sql(run)) }}
  {%- endif -%}
  {{ return(auto_cdc.bitemporal_changes_sql(run)) }}
{%- endmacro %}
