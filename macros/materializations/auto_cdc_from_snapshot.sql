{#- materialized='auto_cdc_from_snapshot': turns a series of full snapshots into an SCD type 1 or 2
    table (see docs/snapshots.md). Snapshots are compared into change events at sequence = version, which
    the same apply as auto_cdc writes. This file only orchestrates, stage by stage. -#}

{% materialization auto_cdc_from_snapshot, default %}
  {%- do auto_cdc.check_adapter() -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set cdc_tables = auto_cdc.state_relations(target_relation) -%}
  {%- set temps = auto_cdc.temp_relations(target_relation) -%}
  {%- set versions = auto_cdc.snapshot_version_source() -%}
  {%- set empty_run = auto_cdc.is_empty_run() -%}
  {%- set clock = auto_cdc.stage_clock() -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {%- do auto_cdc.begin_run(target_relation) -%}

  {#- Create, rebuild or continue after the last processed version? The model's tables exist
      together or not at all. The way versions are named is known before any snapshot is read:
      checked first. -#}
  {%- set model_tables = {'target': target_relation, 'state': cdc_tables.state, 'runs': cdc_tables.runs, 'versions': cdc_tables.versions} -%}
  {%- set existing = auto_cdc.existing_tables(model_tables) -%}
  {%- set leftovers = auto_cdc.leftover_working_tables(target_relation, temps) -%}
  {%- set mode = auto_cdc.run_mode(model_tables, existing) -%}
  {%- set rebuild = mode != 'apply' -%}
  {%- set last_run = none if rebuild else auto_cdc.read_last_run(cdc_tables.runs) -%}
  {%- do auto_cdc.check_config_drift({'materialized': model.config.materialized, 'snapshot_versions': versions.way}, last_run) -%}

  {#- `--empty` reads no snapshot and changes nothing that exists. Otherwise: is there a snapshot
      to read? (The model query may read the version chosen, so it runs only once one is.) -#}
  {%- set untouched = empty_run and mode != 'create' -%}
  {%- set found = not untouched and auto_cdc.choose_first_version(versions, temps, none if rebuild else cdc_tables.versions, empty_run) -%}

  {%- set writes = [] -%}
  {%- set batch_sql = [] -%}
  {%- set quarantined = {'statements': [], 'warning': none} -%}
  {%- if found -%}
    {#- 1. Configuration, read against the model query's columns and the stored state. -#}
    {%- set source = auto_cdc.query_columns(sql, temps.probe) -%}
    {%- set cfg = auto_cdc.read_cdc_config(source, versions) -%}
    {%- set now = auto_cdc.run_clock() -%}
    {%- do auto_cdc.check_config_drift(cfg.state_config, last_run) -%}
    {%- do auto_cdc.check_version_column_type(cfg, source, temps, rebuild) -%}

    {#- 3. Batch: the snapshots, then (4. validated) compared into one batch of events. -#}
    {%- do batch_sql.extend(auto_cdc.read_snapshots(cfg, versions, temps, auto_cdc.no_rows_sql(sql) if empty_run else sql,
                                                    none if rebuild else cdc_tables.versions, catch_up=not empty_run)) -%}
    {%- set set_aside = auto_cdc.set_aside_snapshot_rows(cfg, temps) if cfg.quarantine else {'statements': [], 'count': 0} -%}
    {%- do batch_sql.extend(set_aside.statements) -%}
    {%- set clock = auto_cdc.stage_done('batch read', clock) -%}
    {%- do auto_cdc.validate_snapshots(cfg, temps, none if rebuild else cdc_tables.versions) -%}
    {%- set looked_up = auto_cdc.read_columns(cfg, temps.snapshots, none if rebuild else target_relation, cdc_tables) -%}
    {%- set snapshot_columns = looked_up.batch -%}
    {%- do auto_cdc.warn_text_sequence(cfg, snapshot_columns, temps.snapshots, none if rebuild else auto_cdc.stored_sequences(cfg, last_run, cdc_tables, target_relation)) -%}
    {%- do auto_cdc.enforce_contract(cfg, auto_cdc.snapshot_rows_as_batch(temps.snapshots)) -%}
    {%- set clock = auto_cdc.stage_done('checks', clock) -%}
    {#- 5. Tables: they follow the snapshots' columns and types. From here on the run collects its
           writes, built from what it has read, and applies them together (7. apply_writes). The
           snapshots are compared with the target as those writes leave it (appended columns NULL). -#}
    {%- set schema = {'appended': [], 'ignored': [], 'tables': {}} -%}
    {%- if not rebuild -%}
      {%- set schema = auto_cdc.reconciled_schema(cfg, looked_up.tables, snapshot_columns, cdc_tables) -%}
      {%- do writes.extend(schema.statements) -%}
      {%- set cfg = auto_cdc.narrow_to_target(cfg, schema.ignored) -%}
    {%- endif -%}
    {%- set compared_with = none if rebuild else auto_cdc.target_as_written(target_relation, schema.appended, snapshot_columns) -%}
    {%- if set_aside.count > 0 -%}
      {%- set carried = auto_cdc.append_rows_sql(temps.snapshots, cfg.key_columns + cfg.value_columns + ['__cdc_version'],
                                                 auto_cdc.carried_over_rows_sql(cfg, temps, compared_with)) -%}
      {%- do auto_cdc.run_statements([carried]) -%}
      {%- do batch_sql.append(carried) -%}
    {%- endif -%}
    {%- do batch_sql.extend(auto_cdc.fill_temp_table(temps.batch, auto_cdc.snapshot_events_sql(cfg, temps.snapshots, temps.read_versions,
        compared_with, auto_cdc.applied_version_count(temps)), cfg.key_columns + ['__cdc_op'])) -%}
    {%- do auto_cdc.check_mass_delete(cfg, temps.batch, temps.snapshots, temps.read_versions, compared_with) -%}

    {%- set opened = auto_cdc.opened_change_feed(cfg, target_relation, existing, mode, last_run, now) -%}
    {%- do writes.extend(opened.statements) -%}
    {%- set known_columns = [] -%}
    {%- if rebuild -%}
      {%- do writes.extend(auto_cdc.rebuild_statements(cfg, temps.batch, target_relation, cdc_tables, existing, opened.feed)) -%}
      {%- do writes.append(auto_cdc.create_versions_table_sql(cdc_tables.versions, temps.read_versions, cfg.replace_using)) -%}
    {%- elif cfg.history_from_open_rows -%}
      {#- SCD2 keeps no events: the open rows never carried the columns this run appends. -#}
      {%- set known_columns = schema.appended -%}
    {%- else -%}
      {%- set evolved = auto_cdc.evolved_state(cfg, cdc_tables.state, schema.tables.state) -%}
      {%- do writes.extend(evolved.statements) -%}
      {%- set known_columns = evolved.known_columns -%}
    {%- endif -%}
    {%- set target_columns = schema.tables.target if not rebuild else (auto_cdc.new_target_columns(cfg, temps.batch, temps.probe) if opened.feed else []) -%}
    {%- set prepared = auto_cdc.prepared_change_feed(opened.feed, target_relation, target_columns) if opened.feed else {'feed': none, 'statements': []} -%}
    {%- do writes.extend(prepared.statements) -%}

    {#- 6-8. Resolve, apply and record (the versions too); then the metrics, read back. A
        snapshot's events hold no truncates and no flows; its state keeps every key (SCD1). -#}
    {%- set n_changes = auto_cdc.row_count(temps.batch) -%}
    {%- set shape = {'n_events': n_changes, 'n_identities': n_changes, 'n_truncates': 0, 'n_deletes': none, 'n_quarantined': set_aside.count, 'flows': {}} -%}
    {%- set fence = none if rebuild or empty_run else auto_cdc.read_fence(existing.values() | list + auto_cdc.existing_change_feed(prepared.feed), temps, writes) -%}
    {%- set state_files = none if rebuild or empty_run else auto_cdc.read_state_files(cfg, cdc_tables, now) -%}
    {%- set run = auto_cdc.run_context(cfg, target_relation, cdc_tables, temps, {
        'now': now, 'full_refresh': rebuild, 'shape': shape,
        'known_columns': known_columns, 'state_layout': auto_cdc.chosen_state_layout(cfg, none, none, cdc_tables, target_relation).layout,
        'fence': fence, 'replaced_rows': auto_cdc.replaced_rows(existing, mode), 'change_feed': prepared.feed, 'previous_checkpoint': none,
        'truncated_before': false, 'state_files': state_files,
        'carried_tombstones': auto_cdc.carried_tombstones(cfg, last_run, state_files, writes, shape),
    }) -%}
    {%- if not empty_run -%}
      {%- set quarantined = auto_cdc.quarantine_statements(run, snapshot_columns) -%}
      {%- do writes.extend(quarantined.statements) -%}
      {%- do writes.extend(auto_cdc.change_statements(run)) -%}
      {%- do writes.append(auto_cdc.record_versions_sql(cdc_tables.versions, temps.read_versions, cdc_tables.runs, cfg.replace_using)) -%}
    {%- endif -%}
  {%- endif -%}
  {%- set clock = auto_cdc.stage_done('tables', clock) if found else clock -%}
  {%- set recorded = auto_cdc.apply_writes(writes, post_hooks, batch_sql, temps.values() | list + (leftovers if found and not empty_run else []),
                                           auto_cdc.recorded_metrics_sql(run) if found and not empty_run else none) -%}
  {%- do auto_cdc.stage_done('writes', clock) -%}
  {%- if quarantined.warning -%}{%- do auto_cdc.model_warning(cfg.model_name, quarantined.warning) -%}{%- endif -%}
  {%- if found and not empty_run -%}
    {%- do auto_cdc.report(auto_cdc.change_metrics(run, recorded)) -%}
  {%- elif found or untouched -%}
    {%- do auto_cdc.report_empty_run(untouched) -%}
  {%- else -%}
    {%- do auto_cdc.report_no_snapshot(target_relation, existing.target) -%}
  {%- endif -%}

  {#- The usual dbt finish: grants, docs, hooks, one commit. -#}
  {%- set target_exists = found or existing.target is not none -%}
  {%- do auto_cdc.finish_run(target_relation, existing.target, rebuild, post_hooks, target_exists) -%}
  {{ return({'relations': [target_relation] if target_exists else []}) }}
{% endmaterialization %}
