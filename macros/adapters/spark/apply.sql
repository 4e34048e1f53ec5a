{#- Spark, stage 7 (apply): no transactions, so each table is written by one MERGE (one atomic
    Iceberg commit), and every write can be replayed. A run that stops between two statements
    has recorded no run: the next run reads the same events again (its checkpoint has not moved)
    and the MERGEs, keyed on each table's row identity, bring every table to what one
    uninterrupted run gives. The target is written first, then the state, then the run history. -#}

{% macro spark__write_target_statements(cfg, changes, target, fence) -%}
  {#- A replay may find a row already inserted, or an updated row missing (its key deleted and
      the delete replayed): an insert or update of a row is an upsert here. With a fence (see
      below), the changes pass through its check. -#}
  {%- set layout = auto_cdc.target_layout(cfg) -%}
  {%- set columns = layout.identity + layout.updated -%}
  {%- set source -%}
    {%- if fence -%}(select * from {{ changes }} where {{ auto_cdc.fence_check_sql(fence, written=[auto_cdc.change_feed_relation(target)]) }}){%- else -%}{{ changes }}{%- endif -%}
  {%- endset -%}
  {{ return([auto_cdc.merge_rows_sql(target, source, layout.identity, layout.updated, columns)]) }}
{%- endmacro %}


{% macro merge_rows_sql(target, changes, identity, updated, columns, upsert="c.__cdc_action in ('insert', 'update')", delete="c.__cdc_action = 'delete'") -%}
  merge into {{ target }} as t
  using (select * from {{ changes }} as c where {{ upsert }} or {{ delete }}) as c
  on {{ auto_cdc.keys_match(identity, 't', 'c') }}
  when matched and {{ delete }} then delete
  {%- if updated %}
  when matched then update set
    {%- for column in updated %} {{ auto_cdc.quote_identifier(column) }} = c.{{ auto_cdc.quote_identifier(column) }}{{ ',' if not loop.last }}{% endfor %}
  {%- endif %}
  when not matched and {{ upsert }} then insert ({{ auto_cdc.quoted_list(columns) }})
    values ({{ auto_cdc.quoted_list(columns, 'c.') }})
{%- endmacro %}


{% macro spark__write_state_statements(run) -%}
  {%- set cfg = run.cfg -%}
  {%- if cfg.scd_type == '1' -%}
    {#- A key keeps a state row as the layout says (scd1_state_kept). Tombstones past
        their retention (and not changed by this run) join the changes as keys with no state,
        so the same MERGE forgets them: one write, not two. (A state this run creates holds none.)
        A state of tombstones without a data file, and a batch without a delete: no key keeps a
        row, and there is none to forget, so there is no MERGE (an Iceberg commit) at all. -#}
    {%- set files = run.state_files -%}
    {%- if files is not none and files.total == 0 and run.state_layout == 'tombstones' and run.shape.n_deletes == 0 -%}
      {{ return([]) }}
    {%- endif -%}
    {%- set kept = auto_cdc.scd1_state_kept(run, 'c') -%}
    {%- set stored = auto_cdc.scd1_state_columns(cfg) -%}
    {%- set keys = cfg.key_columns -%}
    {%- set source -%}
    (select {{ auto_cdc.quoted_list(keys + stored) }} from {{ run.changes }}
     {%- if files is not none and files.may_hold_expired > 0 %}
     union all
     select {{ auto_cdc.quoted_list(keys, 's.') }}{% for column in stored %}, null{% endfor %}
     from {{ run.state }} as s
     where {{ auto_cdc.tombstone_expired(run, 's') }}
       and not exists (select 1 from {{ run.changes }} as t where {{ auto_cdc.keys_match(keys, 't', 's') }})
     {%- endif %})
    {%- endset -%}
    {{ return([auto_cdc.merge_rows_sql(run.state, source, keys, stored, keys + stored, upsert=kept, delete='not ' ~ kept)]) }}
  {%- elif cfg.history_from_open_rows -%}
    {{ return([]) }}
  {%- elif cfg.scd_type == '2' -%}
    {{ return([auto_cdc.spark_scd2_merge_events_sql(run)]) }}
  {%- endif -%}
  {#- Bitemporal: the batch's events are added (a redelivered one replaces its stored copy). -#}
  {%- set identity = auto_cdc.event_identity(cfg) -%}
  {%- set columns = auto_cdc.event_columns(cfg, run.known_columns) -%}
  {%- set new_events -%}({{ auto_cdc.scd2_new_events_sql(run) }}){%- endset -%}
  {{ return([auto_cdc.merge_rows_sql(run.state, new_events, identity, columns | reject('in', identity) | list, columns,
                                     upsert='true', delete='false')]) }}
{%- endmacro %}


{% macro spark__read_state_files(cfg, cdc_tables, now) -%}
  {#- From Iceberg's metadata, in one query: the state's data files {total, may_hold_expired},
      and `in_step`. Finding expired tombstones scans the whole state; the file statistics say
      first whether any data file can hold one (a __cdc_deleted_at before the horizon). A file
      without statistics counts, and so do rows its delete files removed: never a wrong no.
      Without transactions a run stopped between its state write and its run history row
      leaves the state ahead: in step only while the state's current snapshot is not newer
      than the run history's and that one is a run's row (an append, not a rewrite of the
      table's files). Iceberg dates a commit by the writing driver's clock: this assumes a
      model's runs keep one clock, within the time between two runs. `last_run_id`: the run
      history's newest run now (another run may have been recorded since this one read it). -#}
  {%- if cfg.scd_type != '1' -%}{{ return(none) }}{%- endif -%}
  {%- set horizon = auto_cdc.seconds_ago(cfg.tombstone_retention, now) -%}
  {%- set metrics = 'readable_metrics.__cdc_deleted_at' -%}
  {%- set found -%}
    select f.total, f.may_hold_expired,
      coalesce(st.committed_ms, -1) <= coalesce(rn.committed_ms, -1) and coalesce(rn.operation, '') = 'append',
      (select max(run_id) from {{ cdc_tables.runs }})
    from (select count(*) as total,
            coalesce(sum(case when not coalesce({{ metrics }}.null_value_count = {{ metrics }}.value_count, false)
              and not coalesce({{ metrics }}.lower_bound >= {{ horizon }}, false) then 1 else 0 end), 0) as may_hold_expired
          from {{ cdc_tables.state }}.data_files) as f
    left join {{ auto_cdc.current_snapshot_row_sql(cdc_tables.state) }} as st on true
    left join {{ auto_cdc.current_snapshot_row_sql(cdc_tables.runs) }} as rn on true
  {%- endset -%}
  {%- set row = run_query(found).rows[0] -%}
  {{ return({'total': row[0] | int, 'may_hold_expired': row[1] | int, 'in_step': row[2], 'last_run_id': row[3]}) }}
{%- endmacro %}


{% macro spark_scd2_merge_events_sql(run) -%}
  {#- As scd2_forget_events_sql and scd2_store_events_sql, in one MERGE on the event identity:
      the history's new events, and the stored ones compacted away or fixed. -#}
  {%- set cfg = run.cfg -%}
  {%- set rule = auto_cdc.scd2_event_kept(run) -%}
  {%- set identity = auto_cdc.event_identity(cfg) -%}
  {%- set columns = auto_cdc.event_columns(cfg, run.known_columns) -%}
  {%- set events -%}
  (select
    {{ auto_cdc.compacted_event_columns(cfg, columns, rule.horizon) }},
    {{ rule.kept }} as __cdc_kept
  from {{ run.history }} as h
  where h.__cdc_new or not {{ rule.kept }} or {{ rule.refixed }})
  {%- endset -%}
  {{ return(auto_cdc.merge_rows_sql(run.state, events, identity, columns | reject('in', identity) | list, columns,
                                    upsert='c.__cdc_kept', delete='not c.__cdc_kept')) }}
{%- endmacro %}


{% macro spark__touched_rows(relation, keys) -%}
  {#- Spark cannot build a hash table from the inner side of `touched left join <big table>`,
      so it would sort and shuffle the whole table; a semi-join with the (small, broadcast)
      touched keys first leaves only their rows to join. -#}
  (select * from {{ relation }} as r where exists (select 1 from touched as k where {{ auto_cdc.keys_match(keys, 'k', 'r') }}))
{%- endmacro %}


{% macro spark__delete_joined_sql(relation, other, condition) -%}
  {#- Spark's DELETE takes no USING: a MERGE that only deletes. -#}
  merge into {{ relation }} as s using {{ other }} as w on {{ condition }} when matched then delete
{%- endmacro %}


{% macro spark__seq_tuple(parts) -%}
  {#- Spark orders structs field by field, but compares two only when their field names match. -#}
  named_struct({% for part in parts %}'p{{ loop.index }}', {{ part }}{{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}


{% macro spark__seq_value(parts, cfg) -%}
  {#- A struct named after the sequence columns: Spark orders structs field by field. No
      sequence (an open __END_AT) is NULL, not a struct of NULLs. -#}
  case when {{ parts[0] }} is not null then named_struct(
    {%- for part in parts %}{{ auto_cdc.string_literal(cfg.sequence_fields[loop.index0]) }}, {{ part }}{{ ', ' if not loop.last }}{% endfor -%}
  ) end
{%- endmacro %}


{#- Concurrent runs. Without a lock, two runs of one model could each resolve against the tables
    as they were, and the later write would bring back what the earlier replaced. So a run notes
    the current snapshot of each of its tables before it resolves its changes, and the MERGE into
    the target, its first data write, fails (raise_error) if any of them has moved on: the run
    writes nothing more and says to run it again. The check is part of the MERGE, so Iceberg's
    own validation covers the rest: a run that commits to the target while this MERGE runs makes
    this commit fail on the rows both changed. Once a run's target MERGE has committed, every
    other run of the model fails at its own. -#}

{% macro spark__read_fence(relations, temps, writes) -%}
  {#- Without schema changes before it (most runs), the snapshots are read now, into the SQL as
      literals (one query). A schema change can commit a snapshot of its own (filling a new
      state column), so after one they are noted among the writes, in a working table (`noted`). -#}
  {%- if not relations -%}{{ return(none) }}{%- endif -%}
  {%- if writes | select | map('trim') | select | list -%}
    {{ return({'relations': relations, 'noted': temps.fence, 'snapshots': none}) }}
  {%- endif -%}
  {%- set row = run_query(auto_cdc.current_snapshots_sql(relations)).rows[0] -%}
  {{ return({'relations': relations, 'noted': none, 'snapshots': row | map('int') | list}) }}
{%- endmacro %}


{% macro spark__note_fence_sql(fence) -%}
  {%- if fence is none or fence.noted is none -%}{{ return('') }}{%- endif -%}
  create table {{ fence.noted }} using parquet as
  {{ auto_cdc.current_snapshots_sql(fence.relations) }}
{%- endmacro %}


{% macro current_snapshots_sql(relations) -%}
  {#- One row: each relation's current snapshot, as snapshot_1, snapshot_2, ... -#}
  select
  {%- for relation in relations %}
    {{ auto_cdc.current_snapshot_sql(relation) }} as snapshot_{{ loop.index }}{{ ',' if not loop.last }}
  {%- endfor %}
{%- endmacro %}


{% macro current_snapshot_row_sql(relation) -%}
  {#- The relation's current snapshot as one row (none before its first write): when it was
      committed (`committed_ms`) and its `operation`. -#}
  (select unix_millis(s.committed_at) as committed_ms, s.operation from {{ relation }}.snapshots as s
   join {{ relation }}.refs as r on r.snapshot_id = s.snapshot_id where r.name = 'main')
{%- endmacro %}


{% macro current_snapshot_sql(relation) -%}
  {#- A relation's current Iceberg snapshot (-1 before its first write). -#}
  coalesce((select snapshot_id from {{ relation }}.refs where name = 'main'), -1)
{%- endmacro %}


{% macro fence_check_sql(fence, written=[]) -%}
  {#- A boolean expression that is true while every table is at the snapshot noted, and fails
      the statement otherwise. `written`: tables this run may have written once already (the
      change feed, before the target): at the snapshot noted or at one whose parent it is. -#}
  {%- set message = auto_cdc.about_model(model.name) ~ "another run wrote "
      ~ (fence.relations | join(', ')) ~ " while this run was reading them; nothing was written. Run the model again"
      ~ " (and schedule one run of a model at a time)." -%}
  {%- set written_names = written | map(attribute='identifier') | map('lower') | list -%}
  case when
  {%- for relation in fence.relations %}
    {%- set noted = fence.snapshots[loop.index0] if fence.snapshots is not none else '(select snapshot_' ~ loop.index ~ ' from ' ~ fence.noted ~ ')' %}
    {%- if relation.identifier | lower in written_names %}
    ({{ auto_cdc.current_snapshot_sql(relation) }} = {{ noted }} or {{ auto_cdc.current_parent_snapshot_sql(relation) }} = {{ noted }}){{ ' and' if not loop.last }}
    {%- else %}
    {{ auto_cdc.current_snapshot_sql(relation) }} = {{ noted }}{{ ' and' if not loop.last }}
    {%- endif %}
  {%- endfor %}
  then true else raise_error({{ auto_cdc.string_literal(message) }}) end
{%- endmacro %}


{% macro current_parent_snapshot_sql(relation) -%}
  {#- The snapshot the current one was committed on (-1 for the first). -#}
  coalesce((select s.parent_id from {{ relation }}.snapshots as s join {{ relation }}.refs as r on r.snapshot_id = s.snapshot_id
            where r.name = 'main'), -1)
{%- endmacro %}
