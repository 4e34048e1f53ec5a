{#- State beside the target: one row per key that has a visible row or a live tombstone
    (`<target>__cdc_state`), and one row per run (`<target>__cdc_runs`), which also carries the
    table-wide facts: the truncate watermark and the checkpoint. -#}

{% macro column_seq_prefix(column) -%}
  {#- Partial updates: the state column (prefix) holding the sequence that last wrote `column`.
      Always a plain lower-case identifier, so it needs no quoting. -#}
  {%- set safe = modules.re.sub('[^a-z0-9_]', '_', column | lower) -%}
  {%- set name = '__cdc_seq__' ~ safe -%}
  {%- if safe != column | lower or name | length > 56 -%}
    {%- set name = name[:44] ~ '_' ~ local_md5(column)[:10] -%}
  {%- endif -%}
  {{ return(name) }}
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


{% macro create_state_tables(cfg, batch, target, state) -%}
  {#- Empty target (see create_target_sql), state and run history, typed after the batch. -#}
  {%- set n = cfg.seq_parts -%}
  {%- set runs_columns -%}
      cast(0 as {{ dbt.type_bigint() }}) as run_id,
      cast(null as {{ dbt.type_string() }}) as invocation_id,
      {{ dbt.current_timestamp() }} as applied_at,
      cast(false as {{ dbt.type_boolean() }}) as full_refresh,
      cast(0 as {{ dbt.type_bigint() }}) as num_events,
      cast(0 as {{ dbt.type_bigint() }}) as num_upserted_rows,
      cast(0 as {{ dbt.type_bigint() }}) as num_deleted_rows,
      cast(null as {{ dbt.type_string() }}) as checkpoint_column,
      cast(null as {{ dbt.type_string() }}) as checkpoint_value,
      {{ auto_cdc.seq_select('__cdc_seq', 'truncate_seq', n) }},
      cast(null as {{ dbt.type_string() }}) as config
  {%- endset -%}
  {%- if cfg.scd_type == '1' -%}
    {%- do auto_cdc.run_statements([
        auto_cdc.create_target_sql(cfg, batch, target),
        'create table ' ~ state.state ~ ' as select ' ~ auto_cdc.state_columns_sql(cfg, 'b') ~ ' from ' ~ batch ~ ' as b where 1 = 0',
        auto_cdc.create_key_index(target, cfg.key_columns),
        auto_cdc.create_key_index(state.state, cfg.key_columns),
        auto_cdc.create_tombstone_index(state.state, auto_cdc.seq_first('__cdc_upsert_seq', n)),
    ]) -%}
  {%- else -%}
    {#- SCD2: the target gains __START_AT/__END_AT typed like the sequence (bitemporal also
        __SYSTEM_START_AT/__SYSTEM_END_AT typed like the system sequence); the state keeps events. -#}
    {%- set identity = cfg.key_columns + ['__START_AT'] -%}
    {%- set event_identity = cfg.key_columns + auto_cdc.seq_names('__cdc_seq', n) -%}
    {%- if cfg.system_expr -%}
      {%- set identity = identity + ['__SYSTEM_START_AT'] -%}
      {%- set event_identity = event_identity + ['__cdc_sys'] -%}
    {%- endif -%}
    {%- do auto_cdc.run_statements([auto_cdc.create_sequence_type(cfg, batch)]) -%}
    {%- do auto_cdc.run_statements([
        auto_cdc.create_target_sql(cfg, batch, target),
        'create table ' ~ state.state ~ ' as select ' ~ auto_cdc.scd2_event_columns_sql(cfg) ~ ' from ' ~ batch ~ ' where 1 = 0',
        auto_cdc.create_key_index(target, identity),
        auto_cdc.create_key_index(state.state, event_identity),
    ]) -%}
  {%- endif -%}
  {%- do auto_cdc.run_statements([
      'create table ' ~ state.runs ~ ' as select ' ~ runs_columns ~ ' from ' ~ batch ~ ' where 1 = 0',
      auto_cdc.create_key_index(state.runs, ['run_id']),
  ]) -%}
{%- endmacro %}


{% macro run_statements(statements) -%}
  {#- One statement per call: not every driver accepts several in one execute. -#}
  {%- for sql in statements -%}
    {%- if sql | trim -%}
      {% call statement('auto_cdc_step') %}{{ sql }}{% endcall %}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}


{% macro last_run(runs_relation) -%}
  {#- The latest run's row as a dict (its checkpoint and the configuration it ran with), or none
      before the first run. Run histories from before the `config` column have none. -#}
  {%- set table = run_query('select * from ' ~ runs_relation ~ ' order by run_id desc limit 1') -%}
  {%- if table.rows | length == 0 -%}{{ return(none) }}{%- endif -%}
  {%- set row = table.rows[0] -%}
  {%- set recorded = 'config' in table.column_names -%}
  {{ return({'checkpoint_column': row['checkpoint_column'], 'checkpoint_value': row['checkpoint_value'],
             'has_config_column': recorded, 'config': fromjson(row['config']) if recorded and row['config'] else none}) }}
{%- endmacro %}


{% macro evolve_run_history(runs_relation, previous) -%}
  {#- A run history written before runs recorded their configuration gains the column. -#}
  {%- if previous is not none and not previous.has_config_column -%}
    {%- do auto_cdc.run_statements(['alter table ' ~ runs_relation ~ ' add column config ' ~ dbt.type_string()]) -%}
  {%- endif -%}
{%- endmacro %}


{% macro evolve_state(cfg, state, batch) -%}
  {#- Keep the state's per-column sequences in step with the partial-update configuration.
      Turning partial updates on: every column was last written by the row's last upsert.
      A column added later has never been written. Turning them off drops the columns, so a
      later switch back cannot read stale sequences. -#}
  {%- set n = cfg.seq_parts -%}
  {%- set existing = [] -%}
  {%- for column in adapter.get_columns_in_relation(state) -%}{%- do existing.append(column.name | lower) -%}{%- endfor -%}
  {%- set required = auto_cdc.seq_names('__cdc_upsert_seq', n) + auto_cdc.seq_names('__cdc_delete_seq', n) if cfg.scd_type == '1'
                      else auto_cdc.seq_names('__cdc_seq', n) -%}
  {%- for name in required -%}
    {%- if name not in existing -%}
      {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': `sequence_by` now has " ~ n
          ~ " part(s), which does not match the stored state; nothing was written. Rebuild with `dbt run --full-refresh -s "
          ~ cfg.model_name ~ "`.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if cfg.scd_type != '1' -%}
    {%- do auto_cdc.run_statements(auto_cdc.evolve_event_flags(cfg, state, existing)) -%}
    {%- set known = [] -%}
    {%- for column in cfg.value_columns -%}
      {%- if auto_cdc.event_known(column) in existing -%}{%- do known.append(column) -%}{%- endif -%}
    {%- endfor -%}
    {%- do cfg.update({'known_columns': known}) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set stored_colseq = [] -%}
  {%- for name in existing -%}{%- if name.startswith('__cdc_seq__') -%}{%- do stored_colseq.append(name) -%}{%- endif -%}{%- endfor -%}
  {%- set statements = [] -%}
  {%- if cfg.partial -%}
    {%- for column in cfg.value_columns -%}
      {%- set names = auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), n) -%}
      {%- if names[0] not in existing -%}
        {%- set fill = stored_colseq | length == 0 -%}
        {%- for name in names -%}
          {%- set upsert_name = auto_cdc.seq_names('__cdc_upsert_seq', n)[loop.index0] -%}
          {%- do statements.append('alter table ' ~ state ~ ' add column ' ~ name ~ ' ' ~ auto_cdc.column_type(state, upsert_name)) -%}
          {%- if fill -%}{%- do statements.append('update ' ~ state ~ ' set ' ~ name ~ ' = ' ~ upsert_name) -%}{%- endif -%}
        {%- endfor -%}
      {%- endif -%}
    {%- endfor -%}
  {%- else -%}
    {%- for name in stored_colseq -%}
      {%- do statements.append('alter table ' ~ state ~ ' drop column ' ~ name) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do auto_cdc.run_statements(statements) -%}
{%- endmacro %}


{% macro column_type(relation, name) -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- if column.name | lower == name | lower -%}{{ return(column.data_type) }}{%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}


{% macro evolve_event_flags(cfg, state, existing) -%}
  {#- SCD2 partial updates: stored events without a flag wrote every column they carry. -#}
  {%- set statements = [] -%}
  {%- set wanted = [] -%}
  {%- if cfg.partial -%}
    {%- for column in cfg.value_columns -%}
      {%- set flag = auto_cdc.event_flag(column) -%}
      {%- do wanted.append(flag) -%}
      {%- if flag not in existing -%}
        {%- do statements.append('alter table ' ~ state ~ ' add column ' ~ flag ~ ' ' ~ dbt.type_boolean()) -%}
        {%- do statements.append('update ' ~ state ~ ' set ' ~ flag ~ ' = true') -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {%- for name in existing -%}
    {%- if name.startswith('__cdc_w__') and name not in wanted -%}
      {%- do statements.append('alter table ' ~ state ~ ' drop column ' ~ name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}

