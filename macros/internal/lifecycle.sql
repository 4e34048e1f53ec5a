{#- The steps both materializations share around their apply: deciding whether a run creates,
    rebuilds or applies, creating the tables, checking the configuration against the one the
    stored state was built with, and dbt's usual finish. -#}

{% macro is_empty_run() -%}
  {#- `dbt run --empty` / `dbt build --empty`: a schema-only dry run. It must never change an
      existing target, its state, run history, checkpoint or snapshot versions. -#}
  {{ return(flags.EMPTY is sameas true) }}
{%- endmacro %}


{% macro run_mode(relations, existing) -%}
  {#- 'create' (none of the model's tables exists yet), 'rebuild' (an explicit full refresh) or
      'apply'. `relations`: the target first, then its helper tables (state, run history, and for
      snapshots the versions); `existing`: what existing_relations() found for each. The tables
      only make sense together: a partial set fails instead of being rebuilt from the model
      query, which would silently lose history the query no longer returns. -#}
  {%- set target = existing[0] -%}
  {%- set helpers = relations[1:] -%}
  {%- set missing = [] -%}
  {%- for i in range(1, relations | length) if existing[i] is none -%}{%- do missing.append(relations[i]) -%}{%- endfor -%}
  {%- set helpers_found = helpers | length - missing | length -%}
  {%- if should_full_refresh() -%}
    {%- if target is not none or helpers_found > 0 -%}
      {%- do log("auto_cdc: " ~ model.name ~ ": full refresh: rebuilding " ~ relations[0] ~ " and its state from the whole model query", info=true) -%}
      {{ return('rebuild') }}
    {%- endif -%}
    {{ return('create') }}
  {%- endif -%}
  {#- A view in the target's place holds no rows: it is replaced, as dbt's table materialization does. -#}
  {%- if helpers_found == 0 and (target is none or not target.is_table) -%}{{ return('create') }}{%- endif -%}
  {%- if target is not none and target.is_table and not missing -%}{{ return('apply') }}{%- endif -%}

  {%- set absent = missing if target is not none and target.is_table else [relations[0]] + missing -%}
  {%- set present = [] -%}
  {%- for relation in relations if relation not in absent -%}{%- do present.append(relation | string) -%}{%- endfor -%}
  {%- set snapshot = model.config.materialized == 'auto_cdc_from_snapshot' -%}
  {%- set message -%}
    auto_cdc: model '{{ model.name }}': {{ absent | join(' and ') }} {{ 'is' if absent | length == 1 else 'are' }} missing
    {%- if target is not none and not target.is_table %} (a {{ target.type }} stands in the target's place){% endif %}, while {{ present | join(' and ') }} {{ 'exists' if present | length == 1 else 'exist' }}; nothing was written.
    A model's target and its helper tables belong together, and auto_cdc never rebuilds them on its own: what the state held (tombstones, event history, checkpoint, processed versions) cannot be recovered from the target.
    {%- if existing[1:] | reject('none') | list | length == 0 %} If {{ relations[0] }} was not built by auto_cdc, it is not replaced without being asked.{% endif %}
    Restore the missing table if you can; otherwise `dbt run --full-refresh -s {{ model.name }}` rebuilds all of them from the whole model query
    {%- if snapshot %}, starting again from the current snapshot: earlier snapshot versions cannot be rebuilt that way.
    {%- else %}: events the model query no longer returns are lost.{% endif %}
    {%- if config.get('full_refresh') is sameas false %} This model sets `full_refresh: false`, which makes `--full-refresh` skip it: remove that setting for the rebuild.{% endif %}
  {%- endset -%}
  {%- do exceptions.raise_compiler_error(message | trim) -%}
{%- endmacro %}


{% macro rebuild_tables(cfg, batch, target, state, existing) -%}
  {#- First run or full refresh: drop whatever of the model's tables exists (`existing`, none
      for the missing ones), then create them empty, typed after the batch. Runs inside the
      model's transaction, so a failure later in the run keeps the old tables. -#}
  {%- for relation in existing if relation is not none -%}
    {%- do adapter.drop_relation(relation) -%}
  {%- endfor -%}
  {%- do auto_cdc.run_statements([auto_cdc.drop_sequence_type(cfg)]) -%}
  {%- do auto_cdc.create_state_tables(cfg, batch, target, state) -%}
{%- endmacro %}


{% macro check_config_drift(now, previous) -%}
  {#- The stored state was built under the configuration the last run recorded. A change the
      state cannot follow fails before anything is written; a change that only shapes future
      events is applied and named in a warning (README, "Configuration changes between runs").
      `now`: the state_config of read_cdc_config(), or a part of it known earlier. -#}
  {%- if previous is none or previous.config is none -%}{{ return(none) }}{%- endif -%}
  {%- set before = previous.config -%}
  {%- set snapshot = now.materialized == 'auto_cdc_from_snapshot' -%}
  {%- set blocking = {
      'materialized': 'the stored state belongs to the other materialization',
      'keys': 'the state holds one entry per key, and what was stored under the old keys cannot be matched to the new ones',
      'stored_as_scd_type': 'the target and its state have another shape',
      'sequence_by': 'the stored sequences were computed the old way and cannot be compared with new ones',
      'system_sequence_by': 'the stored system times were computed the old way and cannot be compared with new ones',
      'snapshot_versions': 'the processed versions were named the old way and cannot be compared with new ones',
  } -%}
  {%- set effects = {
      'apply_as_deletes': 'events of this run on are classified the new way; what earlier runs applied stays',
      'apply_as_truncates': 'events of this run on are classified the new way; what earlier runs applied stays',
      'checkpoint_column': 'this run reads the whole model query once, then only rows above the new checkpoint',
      'tombstone_retention': 'tombstones and compacted events are kept for the new period from now on',
      'track_history_column_list': 'the history of every key that new events touch is recomputed under the new list; other keys keep theirs until then (`--full-refresh` recomputes every key)',
      'track_history_except_column_list': 'the history of every key that new events touch is recomputed under the new list; other keys keep theirs until then (`--full-refresh` recomputes every key)',
      'ignore_null_updates': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'ignore_null_updates_column_list': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'ignore_null_updates_except_column_list': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'columns_to_update': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'snapshot_version_column': 'versions are read from the new column, compared with the processed ones',
      'snapshot_version_query': 'the next versions come from the new query, compared with the processed ones',
      'snapshot_version_function': 'the next versions come from the new function, compared with the processed ones',
  } -%}
  {%- set errors = [] -%}
  {%- set warnings = [] -%}
  {%- for name, value in now.items() if name in before and before[name] != value -%}
    {%- set change = "`" ~ name ~ "` changed from " ~ auto_cdc.config_repr(before[name]) ~ " to " ~ auto_cdc.config_repr(value) -%}
    {%- if name == 'snapshot_versions' -%}
      {%- set change = "snapshot versions are named by " ~ auto_cdc.version_way_name(before[name]) ~ " in the stored history, now by "
                       ~ auto_cdc.version_way_name(value) -%}
    {%- endif -%}
    {%- if name in blocking -%}
      {%- do errors.append(change ~ ": " ~ blocking[name] ~ ".") -%}
    {%- else -%}
      {%- do warnings.append(change ~ " since the last run; " ~ effects.get(name, 'it applies from this run on') ~ ".") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if errors -%}
    {%- do exceptions.raise_compiler_error(
          "auto_cdc: model '" ~ model.name ~ "': the configuration changed in a way its stored state cannot follow; nothing was written.\n  - "
          ~ (errors | join('\n  - ')) ~ "\nSet it back, or rebuild with `dbt run --full-refresh -s " ~ model.name ~ "` "
          ~ ("(it starts again from the current snapshot: earlier snapshot versions cannot be rebuilt)." if snapshot
             else "(events the model query no longer returns are lost).")) -%}
  {%- endif -%}
  {%- for warning in warnings -%}
    {%- do exceptions.warn("auto_cdc: model '" ~ model.name ~ "': " ~ warning) -%}
  {%- endfor -%}
{%- endmacro %}


{% macro config_repr(value) -%}
  {{ return('not set' if value is none else (("'" ~ value ~ "'") if value is string else value | string)) }}
{%- endmacro %}


{% macro version_way_name(way) -%}
  {{ return({'run': 'run (one version per dbt run)', 'column': '`snapshot_version_column`', 'query': '`snapshot_version_query`',
             'function': '`snapshot_version_function`'}.get(way, way)) }}
{%- endmacro %}


{% macro report_empty_run(existed) -%}
  {#- `--empty`: nothing is applied, and the log line says so. -#}
  {%- do log("auto_cdc: " ~ model.name ~ ": --empty: " ~ ("nothing applied; the existing tables are unchanged" if existed
             else "created the tables empty; no run or version is recorded"), info=true) -%}
  {%- do store_raw_result(name='main', message='num_upserted_rows=0 num_deleted_rows=0 (--empty: nothing applied)',
                          code='AUTO_CDC', rows_affected=0) -%}
{%- endmacro %}


{% macro finish_run(target, existing_relation, rebuild, temps, post_hooks) -%}
  {#- Grants, docs and the post-hooks inside the transaction, the temp relations dropped, one
      commit, then the post-hooks that run outside it. -#}
  {%- set revoke = should_revoke(existing_relation, full_refresh_mode=rebuild) -%}
  {%- do apply_grants(target, config.get('grants'), should_revoke=revoke) -%}
  {%- do persist_docs(target, model) -%}
  {%- do auto_cdc.end_transaction(temps, post_hooks) -%}
{%- endmacro %}


{% macro end_transaction(temps, post_hooks) -%}
  {%- do run_hooks(post_hooks, inside_transaction=True) -%}
  {%- for relation in temps -%}
    {%- do adapter.drop_relation(relation) -%}
  {%- endfor -%}
  {%- do adapter.commit() -%}
  {%- do run_hooks(post_hooks, inside_transaction=False) -%}
{%- endmacro %}
