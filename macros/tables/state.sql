{#- Stage 5, tables (existing state follows the configuration). In: `cfg`, the stored state's
    columns as the run's earlier writes leave them, the last run's record. Out: the statements
    that add or drop per-column sequences or event flags as partial updates are turned on or
    off, and that move SCD1's state between its layouts; the appended columns the stored SCD2
    events know of, and SCD1's layout. -#}

{% macro evolved_state(cfg, state, state_columns) -%}
  {#- The state in step with the configuration. Returns {'known_columns', 'statements'}: the
      value columns the stored SCD2 events know of (an appended column is unknown to the events
      stored before it), and the statements. `state_columns`: the state's columns as the run's
      writes before these leave them (reconciled_schema's `tables.state`). -#}
  {%- set existing = state_columns | map(attribute='name') | map('lower') | list -%}
  {%- set required = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) + auto_cdc.seq_names('__cdc_delete_seq', cfg.seq_parts)
                     if cfg.scd_type == '1' else auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {%- if required | reject('in', existing) | list -%}
    {%- do auto_cdc.model_error(cfg.model_name, "`sequence_by` now has " ~ cfg.seq_parts
        ~ " part(s), which does not match the stored state; nothing was written. Rebuild with `dbt run --full-refresh -s "
        ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- if cfg.scd_type == '1' -%}
    {%- set stored = [] -%}
    {%- for name in existing if name.startswith('__cdc_seq__') -%}{%- do stored.append(name) -%}{%- endfor -%}
    {{ return({'known_columns': [], 'statements': auto_cdc.evolve_column_sequences(cfg, state, state_columns, stored) if cfg.partial or stored else []}) }}
  {%- endif -%}
  {{ return({'known_columns': auto_cdc._known_columns(cfg, existing), 'statements': auto_cdc.evolve_event_flags(cfg, state, existing)}) }}
{%- endmacro %}


{% macro _known_columns(cfg, existing) -%}
  {%- set known = [] -%}
  {%- for column in cfg.value_columns if auto_cdc.event_known(column) in existing -%}{%- do known.append(column) -%}{%- endfor -%}
  {{ return(known) }}
{%- endmacro %}


{% macro evolve_column_sequences(cfg, state, state_columns, stored) -%}
  {#- SCD1 partial updates keep, per column, the sequence that last wrote it. Turning partial
      updates on: every column was last written by the row's last upsert. A column added later
      has never been written. Turning them off drops the columns, so a later switch back cannot
      read stale sequences. `stored`: the state's per-column sequence columns. -#}
  {%- set types = {} -%}
  {%- for column in state_columns -%}{%- do types.update({column.name | lower: column.data_type}) -%}{%- endfor -%}
  {%- set existing = types.keys() | list -%}
  {%- set upsert_names = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) -%}
  {%- set statements = [] -%}
  {%- if not cfg.partial -%}
    {%- for name in stored -%}{%- do statements.append(auto_cdc.drop_column_sql(state, name)) -%}{%- endfor -%}
    {{ return(statements) }}
  {%- endif -%}
  {%- set added = {} -%}
  {%- for column in cfg.value_columns -%}
    {%- set names = auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), cfg.seq_parts) -%}
    {%- for name in names if names[0] not in existing -%}
      {%- do statements.extend(auto_cdc.add_columns_sql(state, [{'name': name, 'data_type': types[upsert_names[loop.index0]]}])) -%}
      {%- do added.update({name: upsert_names[loop.index0]}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(statements + ([auto_cdc.set_columns_sql(state, added)] if added and not stored else [])) }}
{%- endmacro %}


{% macro evolve_event_flags(cfg, state, existing) -%}
  {#- SCD2 partial updates: stored events without a flag wrote every column they carry. -#}
  {%- set statements = [] -%}
  {%- set wanted = [] -%}
  {%- set added = {} -%}
  {%- for column in cfg.value_columns if cfg.partial -%}
    {%- set flag = auto_cdc.event_flag(column) -%}
    {%- do wanted.append(flag) -%}
    {%- if flag not in existing -%}
      {%- do statements.extend(auto_cdc.add_columns_sql(state, [{'name': flag, 'data_type': dbt.type_boolean()}])) -%}
      {%- do added.update({flag: 'true'}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for name in existing if name.startswith('__cdc_w__') and name not in wanted -%}
    {%- do statements.append(auto_cdc.drop_column_sql(state, name)) -%}
  {%- endfor -%}
  {{ return(statements + ([auto_cdc.set_columns_sql(state, added)] if added else [])) }}
{%- endmacro %}


{% macro drop_column_sql(relation, name) -%}
  alter table {{ relation }} drop column {{ auto_cdc.quote_identifier(name) }}
{%- endmacro %}


{% macro set_columns_sql(relation, values) -%}
  {#- One update of every row: `values` is {column: SQL value}. It comes after the table's
      ALTERs: DuckDB 1.5 (dbt v2's) cannot commit an ALTER that follows an UPDATE of the same
      table in one transaction. -#}
  update {{ relation }} set {% for name, value_sql in values.items() %}{{ auto_cdc.quote_identifier(name) }} = {{ value_sql }}{{ ', ' if not loop.last }}{% endfor %}
{%- endmacro %}


{% macro chosen_state_layout(cfg, last_run, tables, cdc_tables, target) -%}
  {#- SCD1: where each row's last upsert sequence is kept. 'tombstones': in the target, which
      holds the `sequence_by` columns (sequence_in_target), so the state keeps only the live
      tombstones (scd1_state_kept): small, and a run that adds or clears none changes no state. 'keys': in the state, one row per key with a row or a live tombstone (partial
      updates, which keep a sequence per column; flows; a sequence that is an expression or
      that the target leaves out; snapshots). none for SCD2 and bitemporal.
      Chosen when the state is built (`tables` none: a rebuild); an applying run keeps the
      layout its state has (recorded_state_layout), moving it to 'keys' when the configuration
      no longer allows 'tombstones', and once to 'tombstones' a state from before the choice
      whose target holds every row's sequence. A state with 'keys' stays so until a full
      refresh. Returns {'layout', 'statements'}: the layout, and the statements that move the
      state to it, which run before anything else reads or writes the state. -#}
  {%- if cfg.scd_type != '1' -%}{{ return({'layout': none, 'statements': []}) }}{%- endif -%}
  {%- set wanted = 'tombstones' if auto_cdc.sequence_in_target(cfg) else 'keys' -%}
  {%- if tables is none -%}{{ return({'layout': wanted, 'statements': []}) }}{%- endif -%}
  {%- set recorded = auto_cdc.recorded_state_layout(last_run) -%}
  {%- set target_names = [] -%}
  {%- for kind, relation, columns in tables if kind == 'target' -%}
    {%- do target_names.extend(columns | map(attribute='name') | map('lower') | list) -%}
  {%- endfor -%}
  {%- set held = [] -%}
  {%- for column in cfg.sequence_columns if column | lower in target_names -%}{%- do held.append(column) -%}{%- endfor -%}
  {%- if recorded == 'tombstones' and held | length < cfg.seq_parts -%}
    {#- Whatever is wanted: a sequence column dropped from the target (and appended again, NULL,
        by this run's schema change) would leave every row without its sequence. -#}
    {%- do auto_cdc.model_error(cfg.model_name, "its state keeps each row's sequence in " ~ target ~ "'s `sequence_by` column(s) "
        ~ (cfg.sequence_columns | join(', ')) ~ ", which it no longer has; nothing was written. Rebuild with `dbt run --full-refresh -s "
        ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- if recorded == 'tombstones' and wanted == 'keys' -%}
    {{ return({'layout': 'keys', 'statements': [auto_cdc.sequences_into_state_sql(cfg, target, cdc_tables.state)]}) }}
  {%- elif recorded is none and wanted == 'tombstones' -%}
    {#- A state from before the choice: every row's sequence is in it. The target holds the same
        unless the sequence columns were appended after rows were written (NULL there). -#}
    {%- if held | length == cfg.seq_parts and run_query(auto_cdc.sequences_differ_sql(cfg, target, cdc_tables.state)).rows[0][0] == 0 -%}
      {{ return({'layout': 'tombstones',
                 'statements': [auto_cdc.forget_stored_upserts_sql(cfg, cdc_tables.state)] + auto_cdc.tombstone_index_sql(cdc_tables.state, replace=true)}) }}
    {%- endif -%}
  {%- endif -%}
  {%- if wanted == 'tombstones' and recorded != 'tombstones' -%}
    {#- A state from before the choice whose target lacks some rows' sequence, or one built or
        moved while the target did not hold it: say how to reach the faster layout. -#}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": keeps each row's sequence in its state (built while " ~ target
               ~ " did not hold it for every row); `dbt run --full-refresh -s " ~ cfg.model_name
               ~ "` moves it to a state of tombstones only, the faster layout", info=true) -%}
  {%- endif -%}
  {{ return({'layout': recorded or 'keys', 'statements': []}) }}
{%- endmacro %}


{% macro sequence_in_target(cfg) -%}
  {#- Does the target hold each row's last upsert sequence? SCD1 without partial updates (whose
      sequences are per column) or flows (a snapshot flow's rows carry a version, not the
      column), every `sequence_by` part a column the model writes. -#}
  {%- set written = cfg.written_columns | map('lower') | list -%}
  {{ return(cfg.scd_type == '1' and not cfg.partial and not cfg.flows and not cfg.snapshot
            and cfg.sequence_columns | length == cfg.seq_parts
            and cfg.sequence_columns | map('lower') | reject('in', written) | list | length == 0) }}
{%- endmacro %}


{% macro recorded_state_layout(last_run) -%}
  {#- The SCD1 layout the last run recorded (its config's `state_layout`), or none: no run yet,
      or a state from before the choice (every row's sequence in it). -#}
  {{ return(((last_run or {}).get('config') or {}).get('state_layout')) }}
{%- endmacro %}


{% macro sequences_into_state_sql(cfg, target, state) -%}
  {#- 'tombstones' to 'keys': each row's sequence from the target, for the keys the state has no
      row of (a key with a row again keeps its tombstone and sequence there: scd1_state_kept;
      a Spark run that stopped before recording itself moved the others already: the move is
      replayed). Every column named (Spark's INSERT fills in none), before partial updates add
      theirs (evolved_state). -#}
  {%- set n = cfg.seq_parts -%}
  {%- set deletes = auto_cdc.seq_names('__cdc_delete_seq', n) -%}
  insert into {{ state }} ({{ auto_cdc.quoted_list(cfg.key_columns) }}, {{ auto_cdc.seq_names('__cdc_upsert_seq', n) | join(', ') }}, {{ deletes | join(', ') }}, __cdc_deleted_at)
  select {{ auto_cdc.quoted_list(cfg.key_columns, 't.') }}, {{ auto_cdc.quoted_list(cfg.sequence_columns, 't.') }}{% for name in deletes %}, null{% endfor %}, null
  from {{ target }} as t
  where not exists (select 1 from {{ state }} as s where {{ auto_cdc.keys_match(cfg.key_columns, 's', 't') }})
{%- endmacro %}


{% macro sequences_differ_sql(cfg, target, state) -%}
  {#- How many keys' stored sequence the target does not hold. -#}
  {%- set upserts = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) -%}
  select count(*)
  from {{ state }} as s
  left join {{ target }} as t on {{ auto_cdc.keys_match(cfg.key_columns, 's', 't') }}
  where s.{{ upserts[0] }} is not null and (false
    {%- for column in cfg.sequence_columns %} or t.{{ auto_cdc.quote_identifier(column) }} is distinct from s.{{ upserts[loop.index0] }}{% endfor %})
{%- endmacro %}


{% macro forget_stored_upserts_sql(cfg, state) -%}
  {#- 'keys' to 'tombstones': the target holds the rows' sequences. A key with a row again keeps
      its tombstone (scd1_state_kept) until it expires. -#}
  delete from {{ state }}
  where {{ auto_cdc.seq_first('__cdc_upsert_seq', cfg.seq_parts) }} is not null and {{ auto_cdc.seq_first('__cdc_delete_seq', cfg.seq_parts) }} is null
{%- endmacro %}
