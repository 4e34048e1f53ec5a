{#- Stage 2, the run's frame. In: the target relation and what exists in its schema. Out: the
    model's relations, which of them exist, and whether this run creates, rebuilds or applies
    (an `--empty` run applies nothing); the last run's record. -#}

{% macro is_empty_run() -%}
  {#- `dbt run --empty` / `dbt build --empty`: a schema-only dry run. It must never change an
      existing target, its state, run history, checkpoint or snapshot versions. -#}
  {{ return(flags.EMPTY is sameas true) }}
{%- endmacro %}
{% macro state_relations(target_relation) -%}
  {#- Per-key state and run history (for snapshots the processed versions; with
      on_bad_rows='quarantine' the rows set aside) live next to the target, named after it. -#}
  {%- set names = auto_cdc.derived_names(target_relation.identifier, ['__cdc_state', '__cdc_runs', '__cdc_versions', '__cdc_quarantine', '__cdc_seq']) -%}
  {{ return({
      'state': target_relation.incorporate(path={'identifier': names['__cdc_state']}, type='table'),
      'runs': target_relation.incorporate(path={'identifier': names['__cdc_runs']}, type='table'),
      'versions': target_relation.incorporate(path={'identifier': names['__cdc_versions']}, type='table'),
      'quarantine': target_relation.incorporate(path={'identifier': names['__cdc_quarantine']}, type='table'),
      'seq_type': auto_cdc.quote_identifier(target_relation.schema) ~ '.' ~ auto_cdc.quote_identifier(names['__cdc_seq']),
  }) }}
{%- endmacro %}


{% macro temp_relations(target_relation) -%}
  {{ return(adapter.dispatch('temp_relations', 'auto_cdc')(target_relation)) }}
{%- endmacro %}

{% macro default__temp_relations(target_relation) -%}
  {#- The run's session-local relations. Names derive from the model alone (not dbt's
      make_temp_relation, which adds a timestamp): a model query and a version query name
      `last_version` and `current_version` before the materialization fills them. Under dbt v2,
      whose statements share no session (a temporary table is gone by the next statement), they
      are tables next to the target, replaced by each run and dropped at its end. -#}
  {%- set v2 = auto_cdc.dbt_v2() -%}
  {%- set kinds = [('probe', '__cdc_tmp_probe', 'table'), ('batch', '__cdc_tmp_batch', 'table'),
                   ('raw', '__cdc_tmp_raw', 'table'), ('bad', '__cdc_tmp_bad', 'table'),
                   ('history', '__cdc_tmp_history', 'table'), ('changes', '__cdc_tmp_changes', 'table'),
                   ('snapshots', '__cdc_tmp_snapshots', 'table'), ('read_versions', '__cdc_tmp_read_versions', 'table'),
                   ('last_version', '__cdc_last_version', 'table'), ('current_version', '__cdc_current_version', 'table'),
                   ('current_snapshot', '__cdc_current_snapshot', 'view')] -%}
  {%- set suffixes = [] -%}
  {%- for name, suffix, kind in kinds -%}{%- do suffixes.append(suffix) -%}{%- endfor -%}
  {%- set names = auto_cdc.derived_names(target_relation.identifier, suffixes) -%}
  {%- set temps = {} -%}
  {%- for name, suffix, kind in kinds -%}
    {%- do temps.update({name: api.Relation.create(database=target_relation.database if v2 else none, schema=target_relation.schema if v2 else none,
                                                   identifier=names[suffix], type=kind)}) -%}
  {%- endfor -%}
  {{ return(temps) }}
{%- endmacro %}


{% macro leftover_working_tables(target_relation, temps) -%}
  {#- The working tables other runs of the model left behind (a run that failed or was killed
      keeps its own), as this run starts: it drops them once it has recorded its run
      (apply_writes), so that no one needs to know their names. -#}
  {{ return(adapter.dispatch('leftover_working_tables', 'auto_cdc')(target_relation, temps)) }}
{%- endmacro %}

{% macro default__leftover_working_tables(target_relation, temps) -%}
  {#- None to look for: temporary tables go with the failed run's transaction and session, and
      under dbt v2 every run replaces and drops the working tables of its kind, whose names are
      the model's alone (temp_relations). -#}
  {{ return([]) }}
{%- endmacro %}


{% macro existing_relations(relations) -%}
  {#- Which of `relations` (all in one schema) exist, each with its type, or none. Asks the
      database, not dbt's relation cache: the cache was filled when the invocation started, and
      a concurrent run of the same model may have created the tables since. -#}
  {%- set names = [] -%}
  {%- for relation in relations -%}{%- do names.append(relation.identifier) -%}{%- endfor -%}
  {%- set found = auto_cdc.relation_types(relations[0].without_identifier(), names) -%}
  {%- set out = [] -%}
  {%- for relation in relations -%}
    {%- do out.append(relation.incorporate(type=found[relation.identifier]) if relation.identifier in found else none) -%}
  {%- endfor -%}
  {{ return(out) }}
{%- endmacro %}


{% macro read_fence(existing, temps, writes) -%}
  {#- For an adapter without transactions: the model's existing tables (`existing`, none for
      missing ones), whose state the run's writes note after its own schema changes and before
      it resolves its changes from them (note_fence_sql), so that its first data write can check
      that no other run has written them since (apply/write_target.sql). `temps`: the run's
      working relations, one of which can hold what is noted; `writes`: the run's writes so far
      (its schema changes; with none, nothing of this run moves the tables before it resolves,
      so their state can be read now). None where a transaction and lock_target serialise runs. -#}
  {{ return(adapter.dispatch('read_fence', 'auto_cdc')(existing | reject('none') | list, temps, writes)) }}
{%- endmacro %}

{% macro default__read_fence(relations, temps, writes) -%}
  {%- if auto_cdc.capabilities().concurrency == 'fence' -%}
    {%- do auto_cdc.missing_hook('read_fence', "concurrency 'fence'") -%}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}


{% macro read_state_files(cfg, cdc_tables, now) -%}
  {#- What the table format's metadata tells cheaply of an SCD1 state, or none (the default):
      {total: its data files, may_hold_expired: may one hold a tombstone past its retention at
      `now`, in_step: is the state as the last recorded run left it, last_run_id: the newest
      run recorded}. Read once per applied run, before the resolve (state_files in the run
      context). -#}
  {{ return(adapter.dispatch('read_state_files', 'auto_cdc')(cfg, cdc_tables, now)) }}
{%- endmacro %}

{% macro default__read_state_files(cfg, cdc_tables, now) -%}
  {{ return(none) }}
{%- endmacro %}


{% macro existing_tables(tables) -%}
  {#- existing_relations() of the model's tables, by name: `tables` {'target': ..., 'state': ...,
      ...} gives the same names, each the relation found (with its type) or none. -#}
  {%- set found = auto_cdc.existing_relations(tables.values() | list) -%}
  {%- set out = {} -%}
  {%- for name in tables -%}{%- do out.update({name: found[loop.index0]}) -%}{%- endfor -%}
  {{ return(out) }}
{%- endmacro %}


{% macro relation_types(schema_relation, names) -%}
  {#- {name: 'table' or 'view'} of those of `names` that are relations of the schema. Only
      these names: a schema holding many models' tables would otherwise send all of them to
      every model's run, a cost growing with the schema rather than the model. -#}
  {{ return(adapter.dispatch('relation_types', 'auto_cdc')(schema_relation, names)) }}
{%- endmacro %}

{% macro relation_types_found(query) -%}
  {#- An adapter's own relation_types: its `query` lists (name, type) rows. A `statement`, as
      dbt's listing is, so it opens the run's transaction where nothing did before (DuckDB). -#}
  {%- call statement('auto_cdc_relation_types', fetch_result=True) -%}{{ query }}{%- endcall -%}
  {%- set found = {} -%}
  {%- for row in load_result('auto_cdc_relation_types').table.rows -%}{%- do found.update({row[0]: row[1]}) -%}{%- endfor -%}
  {{ return(found) }}
{%- endmacro %}

{% macro default__relation_types(schema_relation, names) -%}
  {%- set found = {} -%}
  {%- for row in list_relations_without_caching(schema_relation) if row['name'] in names -%}
    {%- do found.update({row['name']: row['type']}) -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}


{% macro run_mode(tables, existing) -%}
  {#- 'create' (none of the model's tables exists yet), 'rebuild' (an explicit full refresh) or
      'apply'. `tables`: the model's tables by name, the target and its helper tables (state, run
      history, and for snapshots the versions); `existing`: what existing_tables() found. The
      tables only make sense together: a partial set fails instead of being rebuilt from the
      model query, which would silently lose history the query no longer returns. -#}
  {%- set target = existing.target -%}
  {%- set missing = [] -%}
  {%- set helpers_found = [] -%}
  {%- for name, relation in tables.items() if name != 'target' -%}
    {%- do (missing if existing[name] is none else helpers_found).append(relation) -%}
  {%- endfor -%}
  {%- if should_full_refresh() -%}
    {%- if target is not none or helpers_found -%}
      {%- do log("auto_cdc: " ~ model.name ~ ": full refresh: " ~ auto_cdc.full_refresh_effect(tables.target), info=true) -%}
      {{ return('rebuild') }}
    {%- endif -%}
    {{ return('create') }}
  {%- endif -%}
  {#- A view in the target's place holds no rows: it is replaced, as dbt's table materialization does. -#}
  {%- if not helpers_found and (target is none or not target.is_table) -%}{{ return('create') }}{%- endif -%}
  {%- if target is not none and target.is_table and not missing -%}{{ return('apply') }}{%- endif -%}
  {%- do auto_cdc._fail_partial_tables(tables, existing, missing, helpers_found) -%}
{%- endmacro %}


{% macro _fail_partial_tables(tables, existing, missing, helpers_found) -%}
  {#- run_mode, for a partial set of the model's tables: what is missing and what to do. -#}
  {%- set target = existing.target -%}
  {%- set absent = missing if target is not none and target.is_table else [tables.target] + missing -%}
  {%- set present = [] -%}
  {%- for relation in tables.values() if relation not in absent -%}{%- do present.append(relation | string) -%}{%- endfor -%}
  {%- set snapshot = model.config.materialized == 'auto_cdc_from_snapshot' -%}
  {%- set message -%}
    auto_cdc: model '{{ model.name }}': {{ absent | join(' and ') }} {{ 'is' if absent | length == 1 else 'are' }} missing
    {%- if target is not none and not target.is_table %} (a {{ target.type }} stands in the target's place){% endif %}, while {{ present | join(' and ') }} {{ 'exists' if present | length == 1 else 'exist' }}; nothing was written.
    A model's target and its helper tables belong together, and auto_cdc never rebuilds them on its own: what the state held (tombstones, event history, checkpoint, processed versions) cannot be recovered from the target.
    {%- if not helpers_found %} If {{ tables.target }} was not built by auto_cdc, it is not replaced without being asked.{% endif %}
    Restore the missing table if you can; otherwise `dbt run --full-refresh -s {{ model.name }}` rebuilds all of them from the whole model query
    {%- if snapshot %}, starting again from the current snapshot: earlier snapshot versions cannot be rebuilt that way.
    {%- else %}: events the model query no longer returns are lost.{% endif %}
    {%- if config.get('full_refresh') is sameas false %} This model sets `full_refresh: false`, which makes `--full-refresh` skip it: remove that setting for the rebuild.{% endif %}
  {%- endset -%}
  {%- do exceptions.raise_compiler_error(message | trim) -%}
{%- endmacro %}


{% macro replaced_rows(existing, mode) -%}
  {#- How many rows the old target had that a full refresh replaces (read before any write):
      a full refresh's metrics count them as deleted, its change feed records them so. -#}
  {{ return(auto_cdc.row_count(existing.target) | int if mode == 'rebuild' and existing.target is not none else 0) }}
{%- endmacro %}


{% macro full_refresh_effect(target) -%}
  {#- What a rebuild keeps and what it loses, said before it starts: a full refresh can change
      history, not only rebuild it. -#}
  {%- if model.config.materialized != 'auto_cdc_from_snapshot' -%}
    {{ return("rebuilding " ~ target ~ " and its state from every event the model query returns now: events it no longer returns are"
              ~ " lost, and the table is what the events it returns give") }}
  {%- endif -%}
  {%- set way = auto_cdc.snapshot_version_source().way -%}
  {%- if way == 'run' -%}
    {{ return("rebuilding " ~ target ~ " from the current snapshot only, as version 0: the history of every earlier version is discarded") }}
  {%- elif way == 'column' -%}
    {{ return("rebuilding " ~ target ~ " from every snapshot version the model query returns now, in order: versions it no longer"
              ~ " returns are lost, and versions skipped before as late are applied where they fall, so the history can differ from the one replaced") }}
  {%- endif -%}
  {{ return("rebuilding " ~ target ~ " from the versions `" ~ ('snapshot_version_query' if way == 'query' else 'snapshot_version_function')
            ~ "` returns from the start (no last version): the history of versions it no longer returns is discarded") }}
{%- endmacro %}


{% macro read_last_run(runs_relation) -%}
  {#- The latest run's row as a dict (its checkpoint, the configuration it ran with, its
      flows' checkpoints, whether a truncate watermark is recorded, and the live tombstones it
      counted), or none before the first run. -#}
  {%- set query -%}select * from {{ runs_relation }} order by run_id desc limit 1{%- endset -%}
  {%- set table = run_query(query) -%}
  {%- if table.rows | length == 0 -%}{{ return(none) }}{%- endif -%}
  {%- set row = table.rows[0] -%}
  {{ return({'checkpoint_column': row['checkpoint_column'], 'checkpoint_value': row['checkpoint_value'],
             'config': fromjson(row['config']) if row['config'] else none,
             'flows': fromjson(row['flows']) if row['flows'] else {},
             'truncated': row['truncate_seq' if 'truncate_seq' in table.column_names | list else 'truncate_seq_1'] is not none,
             'num_live_tombstones': row['num_live_tombstones'] if 'num_live_tombstones' in table.column_names | list else none,
             'run_id': row['run_id']}) }}
{%- endmacro %}
