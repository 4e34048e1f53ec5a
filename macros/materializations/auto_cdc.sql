{#- materialized='auto_cdc': applies a feed of change events to a target table (see docs/semantics.md).
    This file only orchestrates, stage by stage; the SQL comes from the macros it calls. -#}

{% materialization auto_cdc, default %}
  {%- do auto_cdc.check_adapter() -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set cdc_tables = auto_cdc.state_relations(target_relation) -%}
  {%- set temps = auto_cdc.temp_relations(target_relation) -%}
  {%- set empty_run = auto_cdc.is_empty_run() -%}
  {%- set clock = auto_cdc.stage_clock() -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {%- do auto_cdc.begin_run(target_relation) -%}

  {#- 1. Configuration, read against the model query's columns (a model with flows: theirs). -#}
  {%- set flows = auto_cdc.model_flows(sql) if 'auto_cdc.flow' in sql else [] -%}
  {%- set source = auto_cdc.flows_source(flows, temps.probe) if flows else auto_cdc.query_columns(sql, temps.probe) -%}
  {%- set cfg = auto_cdc.read_cdc_config(source, flows=flows) -%}
  {%- do auto_cdc.check_expressions(cfg, sql) -%}
  {%- set now = auto_cdc.run_clock() -%}

  {#- 2. Create, rebuild or apply? The model's tables exist together or not at all (looked up
         after taking the lock); an applied run must match the configuration its state was built with. -#}
  {%- set model_tables = {'target': target_relation, 'state': cdc_tables.state, 'runs': cdc_tables.runs} -%}
  {%- set existing = auto_cdc.existing_tables(model_tables) -%}
  {%- set leftovers = auto_cdc.leftover_working_tables(target_relation, temps) -%}
  {%- set mode = auto_cdc.run_mode(model_tables, existing) -%}
  {%- set rebuild = mode != 'apply' -%}
  {%- set last_run = none if rebuild else auto_cdc.read_last_run(cdc_tables.runs) -%}
  {%- do auto_cdc.check_config_drift(cfg.state_config, last_run) -%}

  {#- 3. Batch: this run's events, read once. 4. Validation: bad data fails before any write. -#}
  {%- set batch = auto_cdc.read_batch(cfg, sql, temps, last_run, source, empty_run) -%}
  {%- set batch_sql = batch.statements -%}
  {%- set clock = auto_cdc.stage_done('batch read', clock) -%}
  {%- set shape = auto_cdc.validate_batch(cfg, temps.batch, last_run, batch.checks, temps if cfg.quarantine else none) -%}
  {%- set looked_up = auto_cdc.read_columns(cfg, temps.batch, none if rebuild or empty_run else target_relation, cdc_tables) -%}
  {%- set batch_columns = looked_up.batch -%}
  {%- do auto_cdc.warn_text_sequence(cfg, batch_columns, temps.batch, none if rebuild else auto_cdc.stored_sequences(cfg, last_run, cdc_tables, target_relation)) -%}
  {%- do auto_cdc.enforce_contract(cfg, temps.batch) -%}
  {%- set clock = auto_cdc.stage_done('checks', clock) -%}

  {#- 5. Tables: created when rebuilding; otherwise they follow the source's columns and types
         and the configuration. `--empty` changes nothing that exists (a first run creates the
         tables, empty). From here on the run collects its writes, built from what it has read,
         and applies them together (7. apply_writes): one transaction on DuckDB and PostgreSQL. -#}
  {%- set writes = [] -%}
  {%- set opened = auto_cdc.opened_change_feed(cfg, target_relation, existing, mode, last_run, now) -%}
  {%- do writes.extend(opened.statements) -%}
  {%- set known_columns = [] -%}
  {%- set target_columns = [] -%}
  {%- set layout = {'layout': none, 'statements': []} -%}
  {%- if rebuild and (not empty_run or mode == 'create') -%}
    {%- do writes.extend(auto_cdc.rebuild_statements(cfg, temps.batch, target_relation, cdc_tables, existing, opened.feed)) -%}
    {%- set layout = auto_cdc.chosen_state_layout(cfg, none, none, cdc_tables, target_relation) -%}
    {%- set target_columns = auto_cdc.new_target_columns(cfg, temps.batch, temps.probe) if opened.feed else [] -%}
  {%- elif not rebuild and not empty_run -%}
    {%- set schema = auto_cdc.reconciled_schema(cfg, looked_up.tables, batch_columns, cdc_tables) -%}
    {%- do writes.extend(schema.statements) -%}
    {%- set cfg = auto_cdc.narrow_to_target(cfg, schema.ignored) -%}
    {%- set layout = auto_cdc.chosen_state_layout(cfg, last_run, looked_up.tables, cdc_tables, target_relation) -%}
    {%- do writes.extend(layout.statements) -%}
    {%- set evolved = auto_cdc.evolved_state(cfg, cdc_tables.state, schema.tables.state) -%}
    {%- do writes.extend(evolved.statements) -%}
    {%- set known_columns = evolved.known_columns -%}
    {%- set target_columns = schema.tables.target -%}
  {%- endif -%}
  {%- set prepared = auto_cdc.prepared_change_feed(opened.feed, target_relation, target_columns) if opened.feed else {'feed': none, 'statements': []} -%}
  {%- do writes.extend(prepared.statements) -%}

  {#- 6-8. Resolve, apply, record; then the metrics, read back from what was applied. -#}
  {%- set fence = none if rebuild or empty_run else auto_cdc.read_fence(existing.values() | list + auto_cdc.existing_change_feed(prepared.feed), temps, writes) -%}
  {%- set state_files = none if rebuild or empty_run else auto_cdc.read_state_files(cfg, cdc_tables, now) -%}
  {%- set run = auto_cdc.run_context(cfg, target_relation, cdc_tables, temps, {
      'now': now, 'full_refresh': rebuild, 'shape': shape, 'known_columns': known_columns, 'state_layout': layout.layout,
      'fence': fence, 'replaced_rows': auto_cdc.replaced_rows(existing, mode), 'change_feed': prepared.feed,
      'previous_checkpoint': last_run.checkpoint_value if last_run and last_run.checkpoint_column == cfg.checkpoint_column else none,
      'truncated_before': last_run.truncated if last_run else false, 'state_files': state_files,
      'carried_tombstones': auto_cdc.carried_tombstones(cfg, last_run, state_files, writes, shape),
  }) -%}
  {%- set quarantined = auto_cdc.quarantine_statements(run, batch_columns) if not empty_run else {'statements': [], 'warning': none} -%}
  {%- do writes.extend(quarantined.statements) -%}
  {%- if not empty_run -%}{%- do writes.extend(auto_cdc.change_statements(run)) -%}{%- endif -%}
  {%- set dropped = [temps.probe, temps.batch, temps.history, temps.changes] + ([temps.raw, temps.bad] if cfg.quarantine else [])
                    + ([fence.noted] if fence and fence.noted else []) + ([] if empty_run else leftovers) -%}
  {%- set clock = auto_cdc.stage_done('tables', clock) -%}
  {%- set recorded = auto_cdc.apply_writes(writes, post_hooks, batch_sql, dropped, none if empty_run else auto_cdc.recorded_metrics_sql(run)) -%}
  {%- do auto_cdc.stage_done('writes', clock) -%}
  {%- if quarantined.warning -%}{%- do auto_cdc.model_warning(cfg.model_name, quarantined.warning) -%}{%- endif -%}
  {%- if empty_run -%}
    {%- do auto_cdc.report_empty_run(mode != 'create') -%}
  {%- else -%}
    {%- do auto_cdc.report(auto_cdc.change_metrics(run, recorded)) -%}
  {%- endif -%}

  {#- The usual dbt finish: grants, docs, hooks, one commit. -#}
  {%- do auto_cdc.finish_run(target_relation, existing.target, rebuild, post_hooks) -%}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
