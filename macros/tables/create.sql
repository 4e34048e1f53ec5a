{#- Stage 5, tables (create or rebuild). In: `cfg`, the batch (for the column types), the model's
    relations. Out, the statements that create the target, its state and run history (and for
    snapshots the processed versions), empty; under a contract the target has the contract's
    DDL and constraints. -#}

{% macro rebuild_statements(cfg, batch, target, cdc_tables, existing, feed=none) -%}
  {#- First run or full refresh: drop whatever of the model's tables exists (`existing`, none
      for the missing ones), then create them empty, typed after the batch. Among the run's
      writes, so a failure later in the run keeps the old tables. With a change feed the run
      history's rows are kept (their ids, times and counts): a consumer checks that every run
      since it last read either is in the change feed or changed nothing (changes()). -#}
  {%- set statements = [] -%}
  {%- set old_runs = existing.runs if feed is not none and feed.existed else none -%}
  {%- set kept = cdc_tables.runs.incorporate(path={'identifier': auto_cdc.derived_name(target.identifier, '__cdc_runs_kept')}) -%}
  {%- set columns = ['run_id', 'invocation_id', 'applied_at', 'full_refresh', 'num_events', 'num_upserted_rows', 'num_deleted_rows'] -%}
  {%- if old_runs is not none -%}
    {%- do statements.extend([auto_cdc.drop_relation_sql(kept),
                          'create table ' ~ kept ~ ' ' ~ auto_cdc.table_options() ~ ' as select ' ~ (columns | join(', ')) ~ ' from ' ~ old_runs]) -%}
  {%- endif -%}
  {%- for relation in existing.values() if relation is not none -%}
    {%- do statements.append(auto_cdc.drop_relation_sql(relation)) -%}
  {%- endfor -%}
  {%- do statements.append(auto_cdc.drop_sequence_type_sql(cfg)) -%}
  {%- do statements.extend(auto_cdc.create_state_tables_sql(cfg, batch, target, cdc_tables)) -%}
  {%- if old_runs is not none -%}
    {#- Every column named, the kept rows' others NULL of their types (from an empty join of
        the new table): Spark's INSERT fills in none. -#}
    {%- set names = auto_cdc.runs_column_names(cfg) -%}
    {%- set kept_rows -%}
      select {% for name in names %}{{ 'k.' if name in columns else 'r.' }}{{ name }}{{ ', ' if not loop.last }}{% endfor %}
      from {{ kept }} as k left join (select * from {{ cdc_tables.runs }} where 1 = 0) as r on 1 = 0
    {%- endset -%}
    {%- do statements.extend([auto_cdc.append_rows_sql(cdc_tables.runs, names, kept_rows), auto_cdc.drop_relation_sql(kept)]) -%}
  {%- endif -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro create_state_tables_sql(cfg, batch, target, cdc_tables) -%}
  {#- Empty target (see create_target_sql), state and run history, typed after the batch.
      SCD2: the target gains __START_AT/__END_AT typed like the sequence (bitemporal also
      __SYSTEM_START_AT/__SYSTEM_END_AT typed like the system sequence); the state keeps events. -#}
  {%- set scd1 = cfg.scd_type == '1' -%}
  {{ return([
      auto_cdc.sequence_type_sql(cfg, batch) if not scd1 else '',
      auto_cdc.create_target_sql(cfg, batch, target),
      auto_cdc.create_state_sql(cfg, cdc_tables.state, batch),
      auto_cdc.key_index_sql(target, auto_cdc.groups_first(cfg.replace_using, auto_cdc.target_layout(cfg).identity)),
  ] + auto_cdc.configured_indexes_sql(target) + [
      '' if cfg.history_from_open_rows else auto_cdc.key_index_sql(cdc_tables.state, cfg.key_columns if scd1 else auto_cdc.event_identity(cfg)),
  ] + (auto_cdc.tombstone_index_sql(cdc_tables.state) if scd1 else []) + [
      auto_cdc.create_empty_table_sql(cdc_tables.runs, auto_cdc.runs_columns_sql(cfg), batch),
      auto_cdc.key_index_sql(cdc_tables.runs, ['run_id']),
  ]) }}
{%- endmacro %}


{% macro configured_indexes_sql(target) -%}
  {#- dbt's `indexes` config, on the target, where the adapter has indexes (PostgreSQL): created
      with it, as dbt's table and incremental materializations do, so a change to them applies
      at the next `--full-refresh`. Beside the package's own unique index on the key. -#}
  {%- set statements = [] -%}
  {%- for index in (config.get('indexes') or []) if auto_cdc.capabilities().indexes -%}
    {%- do statements.append(get_create_index_sql(target, index) | trim | trim(';')) -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro create_state_sql(cfg, state_relation, batch) -%}
  {#- SCD1: a row per key; SCD2 and bitemporal: events. SCD2 from snapshots keeps no events: its
      state has the key columns only. -#}
  {%- if cfg.history_from_open_rows -%}
    {{ return(auto_cdc.create_empty_table_sql(state_relation, auto_cdc.quoted_list(cfg.key_columns, 'b.'), batch)) }}
  {%- endif -%}
  {{ return(auto_cdc.create_empty_table_sql(state_relation, auto_cdc.state_columns_sql(cfg, 'b') if cfg.scd_type == '1' else auto_cdc.scd2_event_columns_sql(cfg), batch)) }}
{%- endmacro %}


{% macro create_empty_table_sql(relation, columns_sql, batch) -%}
  create table {{ relation }} {{ auto_cdc.table_options() }} as
  select {{ columns_sql }}
  from {{ batch }} as b
  where 1 = 0
{%- endmacro %}


{% macro runs_column_names(cfg) -%}
  {#- The run history's columns, in order (runs_columns_sql gives their types). -#}
  {{ return(['run_id', 'invocation_id', 'applied_at', 'full_refresh', 'num_events', 'num_upserted_rows', 'num_deleted_rows',
             'checkpoint_column', 'checkpoint_value'] + auto_cdc.seq_names('truncate_seq', cfg.seq_parts)
            + ['config', 'flows'] + auto_cdc.runs_added_columns() | map(attribute='name') | list) }}
{%- endmacro %}


{% macro runs_columns_sql(cfg) -%}
  {#- The run history: one row per applied run, with the table-wide facts (checkpoint, truncate
      watermark), the configuration it ran with, for a model with flows each flow's own
      checkpoint (JSON), and the events it read that replaced a different stored event at their
      key and sequence (how many, and one of them). Columns added later are last: an older
      run history gains them in place (runs_table_upgrade). -#}
  cast(0 as {{ dbt.type_bigint() }}) as run_id,
  cast(null as {{ dbt.type_string() }}) as invocation_id,
  {{ dbt.current_timestamp() }} as applied_at,
  cast(false as {{ dbt.type_boolean() }}) as full_refresh,
  cast(0 as {{ dbt.type_bigint() }}) as num_events,
  cast(0 as {{ dbt.type_bigint() }}) as num_upserted_rows,
  cast(0 as {{ dbt.type_bigint() }}) as num_deleted_rows,
  cast(null as {{ dbt.type_string() }}) as checkpoint_column,
  cast(null as {{ dbt.type_string() }}) as checkpoint_value,
  {{ auto_cdc.seq_select('__cdc_seq', 'truncate_seq', cfg.seq_parts) }},
  cast(null as {{ dbt.type_string() }}) as config,
  cast(null as {{ dbt.type_string() }}) as flows
  {%- for column in auto_cdc.runs_added_columns() %},
  cast(null as {{ column.data_type }}) as {{ column.name }}
  {%- endfor %}
{%- endmacro %}


{% macro runs_added_columns() -%}
  {#- The run history's columns added since its first layout, as {name, data_type}: an older
      run history gains them, NULL in its earlier rows (runs_table_upgrade). -#}
  {%- set seconds = 'decimal(18, 3)' -%}
  {{ return([{'name': 'num_differing_redeliveries', 'data_type': dbt.type_bigint()},
             {'name': 'differing_redelivery', 'data_type': dbt.type_string()},
             {'name': 'num_applied_events', 'data_type': dbt.type_bigint()},
             {'name': 'num_ignored_events', 'data_type': dbt.type_bigint()},
             {'name': 'num_collapsed_duplicates', 'data_type': dbt.type_bigint()},
             {'name': 'num_live_tombstones', 'data_type': dbt.type_bigint()},
             {'name': 'duration_s', 'data_type': seconds},
             {'name': 'max_commit_time', 'data_type': auto_cdc.type_timestamp_tz()},
             {'name': 'lag_s', 'data_type': seconds},
             {'name': 'num_quarantined_rows', 'data_type': dbt.type_bigint()}]) }}
{%- endmacro %}


{% macro state_columns_sql(cfg, source_alias) -%}
  {#- Select list that gives the state table its columns and types, from the batch. -#}
  {%- set n = cfg.seq_parts -%}
  {{ auto_cdc.quoted_list(cfg.key_columns, source_alias ~ '.') }},
  {{ auto_cdc.seq_select('__cdc_seq', '__cdc_upsert_seq', n, alias=source_alias) }},
  {{ auto_cdc.seq_select('__cdc_seq', '__cdc_delete_seq', n, alias=source_alias) }},
  {{ dbt.current_timestamp() }} as __cdc_deleted_at
  {%- if cfg.partial %}
  {%- for column in cfg.value_columns %},
  {{ auto_cdc.seq_select('__cdc_seq', auto_cdc.column_seq_prefix(column), n, alias=source_alias) }}
  {%- endfor %}
  {%- endif %}
{%- endmacro %}


{% macro scd2_event_columns_sql(cfg) -%}
  {#- Select list (over the batch) that gives the SCD2 / bitemporal events table its columns and types. -#}
  {{ auto_cdc.quoted_list(cfg.key_columns) }}, {{ auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) | join(', ') }}, __cdc_op
  {%- if cfg.system_expr %}, __cdc_sys{% endif %}
  {%- if cfg.value_columns %}, {{ auto_cdc.quoted_list(cfg.value_columns) }}{% endif %}
  {%- for column in cfg.value_columns if cfg.partial %}, cast(true as {{ dbt.type_boolean() }}) as {{ auto_cdc.event_flag(column) }}{% endfor %},
  {{ dbt.current_timestamp() }} as __cdc_arrived_at
{%- endmacro %}


{% macro create_target_sql(cfg, batch, target) -%}
  {#- The empty target. Under a contract: the contract's column definitions and constraints
      (the types were checked to match), plus the validity columns it does not declare. -#}
  {%- if not auto_cdc.contract_enforced() -%}
    create table {{ target }} {{ auto_cdc.table_options() }} as
    {{ auto_cdc.target_shape_sql(cfg, batch) }}
  {%- else -%}
    {%- set declared = model.columns.values() | map(attribute='name') | map('lower') | list -%}
    {%- set contract = auto_cdc.contract_definitions() -%}
    {%- set definitions = contract.columns -%}
    {%- for name, value in auto_cdc.period_columns(cfg) if name | lower not in declared -%}
      {%- do definitions.append(auto_cdc.quote_identifier(name) ~ ' ' ~ auto_cdc.column_type_of(batch, value)) -%}
    {%- endfor -%}
    create table {{ target }} (
      {{ (definitions + contract.constraints) | join(',\n      ') }}
    ) {{ auto_cdc.table_options() }}
  {%- endif -%}
{%- endmacro %}


{% macro contract_definitions() -%}
  {#- The contract's column definitions and table constraints, as the adapter renders them
      ({columns, constraints}: lists of DDL). dbt's own rendering, which warns of the
      constraints the adapter does not enforce. -#}
  {{ return(adapter.dispatch('contract_definitions', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__contract_definitions() -%}
  {#- Lists of our own: dbt v2 returns sequences that take no append. -#}
  {{ return({'columns': adapter.render_raw_columns_constraints(raw_columns=model['columns']) | list,
             'constraints': adapter.render_raw_model_constraints(raw_constraints=model['constraints']) | list}) }}
{%- endmacro %}


{% macro target_shape_sql(cfg, batch) -%}
  {#- No rows: the target's columns, typed after the batch. -#}
  select {{ auto_cdc.quoted_list(cfg.written_columns) }}
  {%- for name, value in auto_cdc.period_columns(cfg) %}, {{ value }} as {{ auto_cdc.quote_identifier(name) }}{% endfor %}
  from {{ batch }} where 1 = 0
{%- endmacro %}


{% macro new_target_columns(cfg, batch, probe) -%}
  {#- The columns ({name, data_type}) of the target create_target_sql makes, known before it is
      made (the change feed follows them): those of its shape over the batch, probed (a
      contract's types match the batch's: enforce_contract checked them). -#}
  {{ return(auto_cdc.plain_columns(auto_cdc.query_columns(auto_cdc.target_shape_sql(cfg, batch), probe).columns)) }}
{%- endmacro %}


{% macro column_type_of(relation, expr) -%}
  {#- The exact SQL type of `expr` over `relation`, for a column definition. -#}
  {{ return(adapter.dispatch('column_type_of', 'auto_cdc')(relation, expr)) }}
{%- endmacro %}

{% macro default__column_type_of(relation, expr) -%}
  {{ return(run_query(auto_cdc.type_probe_sql(relation, auto_cdc.capabilities().type_of | replace('{}', expr))).rows[0][0]) }}
{%- endmacro %}


{% macro type_probe_sql(relation, type_expr) -%}
  {#- One row, even from an empty relation: the type of an expression over its columns. -#}
  select {{ type_expr }}
  from (select 1 as __cdc_one) as one
  left join (select * from {{ relation }} limit 0) as r on true
{%- endmacro %}


{% macro groups_first(groups, columns) -%}
  {#- `columns` with the `replace_using` groups first: an index in this order finds a group's
      rows, which a scoped snapshot reads (the other columns keep their order). -#}
  {%- set ordered = groups | list -%}
  {%- for column in columns if column not in groups -%}{%- do ordered.append(column) -%}{%- endfor -%}
  {{ return(ordered) }}
{%- endmacro %}


{% macro create_versions_table_sql(versions, read_versions, groups=[]) -%}
  {#- One row per snapshot version read: applied, or skipped because it came too late. With
      `groups` (replace_using), one row per group a version holds (NULL groups: it held none). -#}
  create table {{ versions }} {{ auto_cdc.table_options() }} as
  select {{ auto_cdc.quoted_list(groups) ~ ', ' if groups }}__cdc_version as version, cast(0 as {{ dbt.type_bigint() }}) as run_id, __cdc_applied as applied
  from {{ read_versions }} where 1 = 0
{%- endmacro %}
