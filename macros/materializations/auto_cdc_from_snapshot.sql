{#- materialized='auto_cdc_from_snapshot': turns a series of full snapshots into an SCD type 1 or 2
    table (see README). Snapshots are compared into change events at sequence = version, which
    the same apply as auto_cdc writes. This file only orchestrates. -#}

{% materialization auto_cdc_from_snapshot, default %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set state = auto_cdc.state_relations(target_relation) -%}
  {%- set temps = auto_cdc.snapshot_temps(target_relation) -%}
  {%- do temps.update({
      'probe': make_temp_relation(target_relation, '__cdc_probe'),
      'snapshots': make_temp_relation(target_relation, '__cdc_snapshots'),
      'read_versions': make_temp_relation(target_relation, '__cdc_read_versions'),
      'batch': make_temp_relation(target_relation, '__cdc_batch'),
      'history': make_temp_relation(target_relation, '__cdc_history'),
      'changes': make_temp_relation(target_relation, '__cdc_changes'),
  }) -%}
  {%- set versions = auto_cdc.snapshot_version_source() -%}
  {%- set empty_run = auto_cdc.is_empty_run() -%}
  {%- set session_temps = [temps.last_version, temps.current_version, temps.current_snapshot] -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {%- do auto_cdc.lock_target(target_relation) -%}
  {%- do auto_cdc.prepare_session() -%}

  {#- 1. Create, rebuild or continue after the last processed version? The model's tables exist
         together or not at all. -#}
  {%- set model_tables = [target_relation, state.state, state.runs, state.versions] -%}
  {%- set existing = auto_cdc.existing_relations(model_tables) -%}
  {%- set existing_relation = existing[0] -%}
  {%- set mode = auto_cdc.run_mode(model_tables, existing) -%}
  {%- set rebuild = mode != 'apply' -%}
  {%- set previous = none if rebuild else auto_cdc.last_run(state.runs) -%}
  {#- The way versions are named is known before any snapshot is read: check it first. -#}
  {%- do auto_cdc.check_config_drift({'materialized': model.config.materialized, 'snapshot_versions': versions.way}, previous) -%}

  {#- `--empty` reads no snapshot and changes nothing that exists. On a first run it creates the
      tables, empty, from the model query's columns and records no version. -#}
  {%- if empty_run and mode != 'create' -%}
    {%- do auto_cdc.report_empty_run(true) -%}
    {%- do auto_cdc.end_transaction([], post_hooks) -%}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}
  {%- do auto_cdc.write_last_version(temps, none if rebuild else state.versions) -%}

  {#- 2. Is there a snapshot to read? The model query may read the version chosen, so it runs
         only once one is. Under --empty the version query is not run: the model query sees no
         current version. (A Python function is called once: only it knows the columns.) -#}
  {%- if empty_run and versions.way == 'query' -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, 'select version from ' ~ temps.last_version) -%}
    {%- set found = true -%}
  {%- else -%}
    {%- set found = versions.way == 'column' or auto_cdc.choose_next_version(versions, temps) -%}
  {%- endif -%}
  {%- if not found -%}
    {%- do log("auto_cdc: " ~ model.name ~ ": no new snapshot; nothing to apply.", info=true) -%}
    {%- if existing_relation is none -%}
      {%- do exceptions.warn("auto_cdc: model '" ~ model.name ~ "': no snapshot is available yet, so " ~ target_relation
          ~ " is not created; it will be with the first snapshot.") -%}
    {%- endif -%}
    {%- do auto_cdc.report(none, {'num_upserted_rows': 0, 'num_deleted_rows': 0}) -%}
    {%- do auto_cdc.end_transaction(session_temps, post_hooks) -%}
    {{ return({'relations': [] if existing_relation is none else [target_relation]}) }}
  {%- endif -%}

  {#- 3. Read and validate the configuration against the model query's columns, and against the
         configuration the stored state was built with. -#}
  {%- set source = auto_cdc.query_columns(sql, temps.probe) -%}
  {%- set cfg = auto_cdc.read_cdc_config(source, state.seq_type, versions) -%}
  {%- do auto_cdc.check_config_drift(cfg.state_config, previous) -%}
  {%- if cfg.version_column -%}
    {%- set version_type = (source.columns | selectattr('name', 'equalto', cfg.version_column) | first).data_type -%}
    {%- if rebuild -%}{%- do auto_cdc.write_last_version(temps, none, version_type) -%}{%- endif -%}
    {%- do auto_cdc.check_version_type(cfg.model_name, version_type, temps) -%}
  {%- endif -%}

  {#- 4. Read the snapshots, reject bad ones, and compare them into one batch of events. -#}
  {%- set snapshot_sql = ('select * from (' ~ sql ~ ') as snapshot where false') if empty_run else sql -%}
  {%- do auto_cdc.read_snapshots(cfg, versions, temps, snapshot_sql, none if rebuild else state.versions, catch_up=not empty_run) -%}
  {%- do auto_cdc.validate_snapshots(cfg, temps) -%}
  {%- set snapshot_columns = adapter.get_columns_in_relation(temps.snapshots) -%}
  {%- do auto_cdc.warn_text_sequence(cfg, snapshot_columns) -%}
  {%- do auto_cdc.enforce_contract(cfg, '(select s.*, s.__cdc_version as __cdc_seq from ' ~ temps.snapshots ~ ' as s) as snapshot_rows') -%}
  {%- if not rebuild -%}
    {%- set cfg = auto_cdc.reconcile_schema(cfg, target_relation, snapshot_columns, state) -%}
  {%- endif -%}
  {%- set n_versions = auto_cdc.applied_version_count(temps) -%}
  {%- call statement('auto_cdc_batch') -%}
    {{ auto_cdc.create_temp_table(temps.batch, auto_cdc.snapshot_events_sql(cfg, temps.snapshots, temps.read_versions,
                                                                          none if rebuild else target_relation, n_versions)) }}
  {%- endcall -%}
  {%- do auto_cdc.analyze(temps.batch, cfg.key_columns + ['__cdc_op']) -%}
  {%- set shape = {'n_events': run_query('select count(*) from ' ~ temps.batch).rows[0][0], 'n_truncates': 0} -%}
  {%- do auto_cdc.check_mass_delete(cfg, temps.batch, temps.snapshots, temps.read_versions, none if rebuild else target_relation) -%}

  {#- 5. Write: fresh tables when rebuilding, then the apply auto_cdc uses, then the versions. -#}
  {%- if rebuild -%}
    {%- do auto_cdc.rebuild_tables(cfg, temps.batch, target_relation, state, existing) -%}
    {%- do auto_cdc.run_statements([auto_cdc.create_versions_table_sql(state.versions, temps.read_versions)]) -%}
  {%- else -%}
    {%- do auto_cdc.evolve_state(cfg, state.state, temps.batch) -%}
    {%- do auto_cdc.evolve_run_history(state.runs, previous) -%}
  {%- endif -%}
  {%- set all_temps = [temps.snapshots, temps.read_versions, temps.batch, temps.history, temps.changes] + session_temps -%}
  {%- if empty_run -%}
    {%- do auto_cdc.report_empty_run(false) -%}
    {%- do auto_cdc.finish_run(target_relation, existing_relation, rebuild, all_temps, post_hooks) -%}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {%- set arg_dict = {
      'cfg': cfg, 'batch': temps.batch, 'history': temps.history, 'changes': temps.changes,
      'target': target_relation, 'state': state.state, 'events': state.state, 'runs': state.runs,
      'full_refresh': rebuild, 'truncating': false, 'shape': shape, 'previous_checkpoint': none,
  } -%}
  {%- set metrics = auto_cdc.apply_changes(arg_dict) -%}
  {%- do auto_cdc.run_statements([auto_cdc.record_versions_sql(state.versions, temps.read_versions, state.runs)]) -%}
  {%- do auto_cdc.report(cfg, metrics) -%}

  {#- 6. The usual dbt finish: grants, docs, hooks, one commit. -#}
  {%- do auto_cdc.finish_run(target_relation, existing_relation, rebuild, all_temps, post_hooks) -%}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
