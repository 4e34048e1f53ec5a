{#- materialized='auto_cdc': applies a change feed to a target table (see README).
    This file only orchestrates, stage by stage; the SQL comes from the macros it calls. -#}

{% materialization auto_cdc, default %}
  {%- do auto_cdc.check_adapter() -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set state = auto_cdc.state_relations(target_relation) -%}
  {%- set temps = auto_cdc.temp_relations(target_relation) -%}
  {%- set empty_run = auto_cdc.is_empty_run() -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {%- do auto_cdc.lock_target(target_relation) -%}
  {%- do auto_cdc.prepare_session() -%}

  {#- 1. Configuration, read against the model query's columns (a model with flows: theirs). -#}
  {%- set flows = auto_cdc.model_flows(sql) -%}
  {%- set source = auto_cdc.flows_source(flows, temps.probe) if flows else auto_cdc.query_columns(sql, temps.probe) -%}
  {%- set cfg = auto_cdc.read_cdc_config(source, state.seq_type, flows=flows) -%}
  {%- do auto_cdc.check_expressions(cfg, sql) -%}

  {#- 2. Create, rebuild or apply? The model's tables exist together or not at all (looked up
         after taking the lock); an applied run must match the configuration its state was built with. -#}
  {%- set model_tables = [target_relation, state.state, state.runs] -%}
  {%- set existing = auto_cdc.existing_relations(model_tables) -%}
  {%- set mode = auto_cdc.run_mode(model_tables, existing) -%}
  {%- set rebuild = mode != 'apply' -%}
  {%- set previous = none if rebuild else auto_cdc.last_run(state.runs) -%}
  {%- do auto_cdc.check_config_drift(cfg.state_config, previous) -%}

  {#- 3. Batch: this run's events, read once. 4. Validation: bad data fails before any write. -#}
  {%- set batch_sql = auto_cdc.read_batch(cfg, sql, temps, previous, source, empty_run) -%}
  {%- set shape = auto_cdc.validate_batch(cfg, temps.batch, previous) -%}
  {%- set batch_columns = adapter.get_columns_in_relation(temps.batch) -%}
  {%- do auto_cdc.warn_text_sequence(cfg, batch_columns, temps.batch, none if rebuild else state.state) -%}
  {%- do auto_cdc.enforce_contract(cfg, temps.batch) -%}

  {#- 5. Tables: created when rebuilding; otherwise they follow the source's columns and types
         and the configuration. `--empty` changes nothing that exists (a first run creates the
         tables, empty). From here on the run collects its writes, built from what it has read,
         and applies them together (7. apply_writes): one transaction on DuckDB and PostgreSQL. -#}
  {%- set writes = [] -%}
  {%- set feed = auto_cdc.open_change_feed(cfg, target_relation, existing, mode, previous, writes) -%}
  {%- set known_columns = [] -%}
  {%- set target_columns = [] -%}
  {%- if rebuild and (not empty_run or mode == 'create') -%}
    {%- do auto_cdc.rebuild_tables(cfg, temps.batch, target_relation, state, existing, writes, feed) -%}
    {%- set target_columns = auto_cdc.new_target_columns(cfg, temps.batch, temps.probe) if feed else [] -%}
  {%- elif not rebuild and not empty_run -%}
    {%- set schema = auto_cdc.reconcile_schema(cfg, target_relation, batch_columns, state, writes) -%}
    {%- set cfg = auto_cdc.narrow_to_target(cfg, schema.ignored) -%}
    {%- set known_columns = auto_cdc.evolve_state(cfg, state.state, schema.tables.state, writes) -%}
    {%- set target_columns = schema.tables.target -%}
  {%- endif -%}
  {%- set feed = auto_cdc.prepare_change_feed(feed, target_relation, target_columns, writes) -%}

  {#- 6-8. Resolve, apply, record; then the metrics, read back from what was applied. -#}
  {%- set fence = none if rebuild else auto_cdc.read_fence(existing, temps) -%}
  {%- set arg_dict = {
      'cfg': cfg, 'batch': temps.batch, 'history': temps.history, 'changes': temps.changes,
      'target': target_relation, 'state': state.state, 'runs': state.runs, 'known_columns': known_columns,
      'fence': fence, 'full_refresh': rebuild, 'replaced_rows': auto_cdc.replaced_rows(existing, mode), 'truncating': shape.n_truncates > 0, 'shape': shape, 'flows': shape.flows, 'change_feed': feed,
      'previous_checkpoint': previous.checkpoint_value if previous and previous.checkpoint_column == cfg.checkpoint_column else none,
  } -%}
  {%- if not empty_run -%}{%- do writes.extend(auto_cdc.apply_changes(arg_dict)) -%}{%- endif -%}
  {%- do auto_cdc.apply_writes(writes, post_hooks, batch_sql) -%}
  {%- if empty_run -%}
    {%- do auto_cdc.report_empty_run(mode != 'create') -%}
  {%- else -%}
    {%- do auto_cdc.report(auto_cdc.change_metrics(arg_dict)) -%}
  {%- endif -%}

  {#- The usual dbt finish: grants, docs, hooks, one commit. -#}
  {%- do auto_cdc.finish_run(target_relation, existing[0], rebuild, [temps.batch, temps.history, temps.changes] + ([fence.noted] if fence else []), post_hooks) -%}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
