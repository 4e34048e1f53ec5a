{#- materialized='auto_cdc': applies a change feed to a target table (see README).
    This file only orchestrates; the SQL comes from the dispatched macros it calls. -#}

{% materialization auto_cdc, default %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set state = auto_cdc.state_relations(target_relation) -%}
  {%- set temps = {
      'probe': make_temp_relation(target_relation, '__cdc_probe'),
      'batch': make_temp_relation(target_relation, '__cdc_batch'),
      'history': make_temp_relation(target_relation, '__cdc_history'),
      'changes': make_temp_relation(target_relation, '__cdc_changes'),
  } -%}
  {%- set empty_run = auto_cdc.is_empty_run() -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {%- do auto_cdc.lock_target(target_relation) -%}
  {%- do auto_cdc.prepare_session() -%}

  {#- 1. Read and validate the configuration against the model query's columns. -#}
  {%- set source = auto_cdc.query_columns(sql, temps.probe) -%}
  {%- set cfg = auto_cdc.read_cdc_config(source, state.seq_type) -%}
  {%- do auto_cdc.check_expressions(cfg, sql) -%}

  {#- 2. Create, rebuild or apply? The model's tables exist together or not at all (looked up
         after taking the lock); an applied run must match the configuration its state was built with. -#}
  {%- set model_tables = [target_relation, state.state, state.runs] -%}
  {%- set existing = auto_cdc.existing_relations(model_tables) -%}
  {%- set existing_relation = existing[0] -%}
  {%- set mode = auto_cdc.run_mode(model_tables, existing) -%}
  {%- set rebuild = mode != 'apply' -%}
  {%- set previous = none if rebuild else auto_cdc.last_run(state.runs) -%}
  {%- do auto_cdc.check_config_drift(cfg.state_config, previous) -%}

  {#- 3. Read this run's events once, then reject bad data before writing anything. -#}
  {%- set checkpoint_filter = 'false' if empty_run else auto_cdc.checkpoint_filter(cfg, previous, source.columns) -%}
  {%- call statement('auto_cdc_batch') -%}
    {{ auto_cdc.create_temp_table(temps.batch, auto_cdc.batch_sql(cfg, sql, checkpoint_filter)) }}
  {%- endcall -%}
  {%- do auto_cdc.analyze(temps.batch, cfg.key_columns + ['__cdc_op']) -%}
  {%- set shape = auto_cdc.validate_batch(cfg, temps.batch) -%}
  {%- set batch_columns = adapter.get_columns_in_relation(temps.batch) -%}
  {%- do auto_cdc.warn_text_sequence(cfg, batch_columns) -%}
  {%- do auto_cdc.enforce_contract(cfg, temps.batch) -%}

  {#- `--empty` changes nothing that exists; on a first run it creates the tables, empty. -#}
  {%- if empty_run -%}
    {%- if mode == 'create' -%}
      {%- do auto_cdc.rebuild_tables(cfg, temps.batch, target_relation, state, existing) -%}
    {%- endif -%}
    {%- do auto_cdc.report_empty_run(mode != 'create') -%}
    {%- do auto_cdc.finish_run(target_relation, existing_relation, rebuild, [temps.batch], post_hooks) -%}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}
  {%- if not rebuild -%}
    {%- set cfg = auto_cdc.reconcile_schema(cfg, target_relation, batch_columns, state) -%}
  {%- endif -%}

  {#- 4. Write: fresh tables when rebuilding, then one set-based apply. -#}
  {%- if rebuild -%}
    {%- do auto_cdc.rebuild_tables(cfg, temps.batch, target_relation, state, existing) -%}
  {%- else -%}
    {%- do auto_cdc.evolve_state(cfg, state.state, temps.batch) -%}
    {%- do auto_cdc.evolve_run_history(state.runs, previous) -%}
  {%- endif -%}

  {%- set arg_dict = {
      'cfg': cfg, 'batch': temps.batch, 'history': temps.history, 'changes': temps.changes,
      'target': target_relation, 'state': state.state, 'events': state.state, 'runs': state.runs,
      'full_refresh': rebuild, 'truncating': shape.n_truncates > 0, 'shape': shape,
      'previous_checkpoint': previous.checkpoint_value if previous and previous.checkpoint_column == cfg.checkpoint_column else none,
  } -%}
  {%- set metrics = auto_cdc.apply_changes(arg_dict) -%}
  {%- do auto_cdc.report(cfg, metrics) -%}

  {#- 5. The usual dbt finish: grants, docs, hooks, one commit. -#}
  {%- do auto_cdc.finish_run(target_relation, existing_relation, rebuild, [temps.batch, temps.history, temps.changes], post_hooks) -%}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
