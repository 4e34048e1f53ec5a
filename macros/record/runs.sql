{#- Stage 8, record. In: the run's metrics, checkpoint and truncate watermark. Out: a row in the
    run history (and the versions read, for snapshots); the metrics in the log line and in
    run_results.json. -#}

{% macro change_counts_sql(run) -%}
  {#- One row: the run's net effect on the target, rows new or changed and rows gone; when the
      live tombstones are carried (carried_tombstones), also how many more the changed keys
      have than before, each counted as live_tombstones_sql counts it: not older than the
      truncate watermark (a key with a row again keeps an older tombstone in the state). Over
      the CTE `watermark` (watermark_ctes). -#}
  {%- set n = run.cfg.seq_parts -%}
  {%- set carried = run.carried_tombstones is not none -%}
  select coalesce(sum(case when __cdc_action in ('insert', 'update') then 1 else 0 end), 0) as num_upserted_rows,
         coalesce(sum(case when __cdc_action = 'delete' then 1 else 0 end), 0) as num_deleted_rows
         {%- if carried %},
         coalesce(sum(case when __cdc_deleted_at is not null then 1 else 0 end)
                  - sum(case when c.{{ auto_cdc.seq_first('__cdc_stored_delete_seq', n) }} is not null
                  {%- if run.truncated_before %} and not {{ auto_cdc.seq_older('__cdc_stored_delete_seq', '__cdc_watermark', n, 'c', 'w') }}{% endif %}
                    then 1 else 0 end), 0) as num_new_tombstones
         {%- endif %}
  from {{ run.changes }} as c
  {%- if carried and run.truncated_before %}
  cross join watermark as w
  {%- endif %}
{%- endmacro %}


{% macro recorded_metrics_columns() -%}
  {{ return(['num_upserted_rows', 'num_deleted_rows', 'num_differing_redeliveries', 'differing_redelivery'] + auto_cdc.reported_metrics()) }}
{%- endmacro %}

{% macro reported_metrics() -%}
  {#- The run history's metrics that the log line and run_results.json report after the row
      counts, in this order (docs/monitoring.md, "What each run reports"). -#}
  {{ return(['num_events', 'num_applied_events', 'num_ignored_events', 'num_collapsed_duplicates', 'num_quarantined_rows',
             'num_live_tombstones', 'duration_s', 'max_commit_time', 'lag_s']) }}
{%- endmacro %}

{% macro recorded_metrics_sql(run) -%}
  {#- The metrics this run recorded in its row of the run history (record_run_sql), read back
      after its writes (apply_writes' result_sql). -#}
  select {{ auto_cdc.recorded_metrics_columns() | join(', ') }} from {{ run.runs }}
  where invocation_id = {{ auto_cdc.string_literal(invocation_id) }} order by run_id desc limit 1
{%- endmacro %}

{% macro change_metrics(run, recorded) -%}
  {#- The metrics from the rows of recorded_metrics_sql. They count the changes the run applied;
      a full refresh replaces every row of the old target, so those count as deleted (with or
      without a change feed, which records them as deletes): metrics and change feed always
      agree. -#}
  {%- set metrics = auto_cdc.named_row(auto_cdc.recorded_metrics_columns(), recorded[0]) -%}
  {%- if metrics.num_differing_redeliveries | int > 0 -%}
    {%- do auto_cdc.warn_differing_redeliveries(run.cfg, metrics.num_differing_redeliveries | int, metrics.differing_redelivery) -%}
  {%- endif -%}
  {%- set reported = {'num_upserted_rows': metrics.num_upserted_rows | int, 'num_deleted_rows': metrics.num_deleted_rows | int} -%}
  {%- for name in auto_cdc.reported_metrics() if metrics[name] is not none -%}
    {%- set value = metrics[name] -%}
    {%- if name == 'max_commit_time' -%}{%- set value = (value | string).replace(' ', 'T') -%}{#- one word, ISO 8601 -#}
    {%- elif name.endswith('_s') -%}{%- set value = value | string -%}{#- decimal(18, 3) -#}
    {%- else -%}{%- set value = value | int -%}
    {%- endif -%}
    {%- do reported.update({name: value}) -%}
  {%- endfor -%}
  {{ return(reported) }}
{%- endmacro %}


{% macro warn_differing_redeliveries(cfg, count, example) -%}
  {#- A redelivery replaces the event stored at its key and sequence (replays are harmless);
      one with other contents is a second event at one sequence, which one run over both (a
      full refresh) refuses as a conflicting duplicate. -#}
  {%- if count > 0 -%}
    {%- set tie_breaker = cfg.checkpoint_column or '<load time or log offset>' -%}
    {%- do auto_cdc.model_warning(cfg.model_name, count ~ " event(s) of this run were delivered before with other contents at the same key and"
        ~ " sequence (e.g. " ~ example ~ "): each replaced the one stored, as a redelivery does. One run over both deliveries"
        ~ " (`dbt run --full-refresh`) fails on them as conflicting duplicates. If both are real changes, break the tie in `sequence_by`"
        ~ " (e.g. sequence_by=['" ~ (cfg.sequence_labels + [tie_breaker]) | join("', '") ~ "']); if the newer corrects the older, remove the older from the source.") -%}
  {%- endif -%}
{%- endmacro %}


{% macro record_run_sql(run) -%}
  {#- Appends this run's row to the run history: metrics (from the changes; change_metrics
      reports them), checkpoint and truncate watermark. -#}
  {%- set cfg = run.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set runs = run.runs -%}
  {%- set checkpoint = cfg.checkpoint_column -%}
  {%- set collapsed = run.shape.n_events - run.shape.n_truncates - run.shape.n_identities -%}
  insert into {{ runs }} ({{ auto_cdc.runs_column_names(cfg) | join(', ') }})
  with {{ auto_cdc.watermark_ctes(cfg, run.batch, runs) }}
  select
    {{ auto_cdc.run_id_sql(run) }},
    {{ auto_cdc.string_literal(invocation_id) }},
    {{ run.now }},
    {{ 'true' if run.full_refresh else 'false' }},
    {#- Rows read; a snapshot model's are the changes its snapshots amount to, not rows. #}
    {{ run.shape.n_events + (0 if cfg.snapshot else run.shape.n_quarantined) }},
    counts.num_upserted_rows,
    counts.num_deleted_rows + {{ run.replaced_rows }},
    {%- if checkpoint %}
    {{ auto_cdc.string_literal(checkpoint) }},
    coalesce(
      {%- if cfg.quarantine %}
      {#- The highest value read, set-aside rows included (they are kept), but not above a
          conflicting group's lowest: the next run reads the whole group again, so none of its
          events is applied alone (a run that read only the later one would apply it). #}
      (select cast(case when c.low < r.high then c.low else r.high end as {{ dbt.type_string() }})
       from (select max({{ auto_cdc.quote_identifier(checkpoint) }}) as high from {{ run.raw }}) as r
       cross join (select min({{ auto_cdc.quote_identifier(checkpoint) }}) as low from {{ run.bad }}
                   where __cdc_reason = 'conflicting_duplicate') as c),
      {%- else %}
      (select cast(max({{ auto_cdc.quote_identifier(checkpoint) }}) as {{ dbt.type_string() }}) from {{ run.batch }}),
      {%- endif %}
      {{ 'null' if run.previous_checkpoint is none else auto_cdc.string_literal(run.previous_checkpoint) }}
    ),
    {%- else %}
    null, null,
    {%- endif %}
    {{ auto_cdc.seq_names('__cdc_watermark', n) | join(', ') }},
    {{ auto_cdc.string_literal(tojson(auto_cdc.recorded_state_config(run))) }},
    {{ auto_cdc.string_literal(tojson(run.flows)) if run.flows else 'null' }},
    redelivered.num_differing_redeliveries,
    redelivered.differing_redelivery,
    {{ run.shape.n_events - collapsed }} - ignored.num_ignored_events,
    ignored.num_ignored_events,
    {{ collapsed }},
    {{ (run.carried_tombstones ~ ' + counts.num_new_tombstones') if run.carried_tombstones is not none else 'tombstones.num_live_tombstones' }},
    cast({{ auto_cdc.seconds_between(run.now, auto_cdc.wall_clock()) }} as decimal(18, 3)),
    source_commit.max_commit_time,
    cast({{ auto_cdc.seconds_between('source_commit.max_commit_time', auto_cdc.wall_clock()) }} as decimal(18, 3)),
    {{ run.shape.n_quarantined if cfg.quarantine else 'null' }}
  from watermark
  cross join ({{ auto_cdc.change_counts_sql(run) }}) as counts
  cross join ({{ auto_cdc.differing_redeliveries_sql(run) }}) as redelivered
  cross join ({{ auto_cdc.ignored_events_sql(run) }}) as ignored
  {%- if run.carried_tombstones is none %}
  cross join ({{ auto_cdc.live_tombstones_sql(run) }}) as tombstones
  {%- endif %}
  cross join ({{ auto_cdc.newest_commit_sql(run) }}) as source_commit
{%- endmacro %}


{% macro ignored_events_sql(run) -%}
  {#- One row: how many of the batch's events (copies of one counted once) changed nothing
      because what the state held was as new or newer: late, older than a stored delete or
      truncate, or a replay of a stored event. A redelivery that differs from the stored event
      replaces it, and counts as applied. Snapshots yield only changes: none. -#}
  {%- if run.cfg.snapshot -%}
    select cast(0 as {{ dbt.type_bigint() }}) as num_ignored_events
  {%- elif run.cfg.scd_type == '1' -%}
    {{ auto_cdc._scd1_ignored_events_sql(run) }}
  {%- else -%}
    {#- A replay of a stored event is the one new event the history leaves out (scd2_history_sql). #}
    select {{ run.shape.n_identities }} - count(*) as num_ignored_events
    from (select distinct {{ auto_cdc.quoted_list(auto_cdc.event_identity(run.cfg)) }} from {{ run.history }} where __cdc_new) as kept
  {%- endif -%}
{%- endmacro %}


{% macro _scd1_ignored_events_sql(run) -%}
  {#- ignored_events_sql for SCD1, from what the resolve kept of the state before the run
      (scd1_final_sql): an event is ignored at or below the key's live tombstone or the stored
      truncate watermark, or when the key's last upsert and every column it writes (a delete:
      every column it would clear) are as new. Over the CTE `stored_watermark` (watermark_ctes),
      read only when the last run recorded a truncate watermark (on Spark, a scan of the run
      history that a model which never reads a truncate need not pay). -#}
  {%- set cfg = run.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set columns_hold = [] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}
    {%- set stored = auto_cdc.scd1_column_names(cfg, loop.index).stored_seq -%}
    {%- set newer = auto_cdc.seq_cmp(stored, '__cdc_seq', n, '>=', 'c', 'e') -%}
    {%- do columns_hold.append('case when e.__cdc_writes_' ~ loop.index ~ ' then ' ~ newer ~ " when e.__cdc_op = 'delete' then (c."
                               ~ auto_cdc.seq_first(stored, n) ~ ' is null or ' ~ newer ~ ') else true end') -%}
  {%- endfor -%}
  {#- Copies of one event are counted once; a batch without any (most) needs no distinct,
      which on Spark is a shuffle more. #}
  {%- set copies = run.shape.n_events - run.shape.n_truncates - run.shape.n_identities -%}
  select count(*) as num_ignored_events
  from (
    select {{ 'distinct ' if copies > 0 }}{{ auto_cdc.quoted_list(auto_cdc.event_identity(cfg), 'e.') }}
    from (
      select {{ auto_cdc.quoted_list(auto_cdc.event_identity(cfg)) }}, __cdc_op
        {%- for column in cfg.value_columns if cfg.partial %}, ({{ auto_cdc.writes_column(cfg, column) }}) as __cdc_writes_{{ loop.index }}{% endfor %}
      from {{ run.batch }}
      where __cdc_op <> 'truncate'
    ) as e
    join {{ run.changes }} as c on {{ auto_cdc.keys_match(cfg.key_columns, 'e', 'c') }}
    {%- if run.truncated_before %}
    left join stored_watermark as sw on 1 = 1
    {%- endif %}
    where ({{ auto_cdc.seq_cmp('__cdc_stored_delete_seq', '__cdc_seq', n, '>=', 'c', 'e') }}
        {%- if run.truncated_before %}
        or {{ auto_cdc.seq_cmp('__cdc_stored_truncate_seq', '__cdc_seq', n, '>=', 'sw', 'e') }}
        {%- endif %}
        or ({{ ([auto_cdc.seq_cmp('__cdc_stored_upsert_seq', '__cdc_seq', n, '>=', 'c', 'e')] + columns_hold) | join('\n          and ') }}))
      and not (c.{{ auto_cdc.seq_first('__cdc_replaced_seq', n) }} is not null and {{ auto_cdc.seq_cmp('__cdc_replaced_seq', '__cdc_seq', n, '=', 'c', 'e') }})
  ) as ignored
{%- endmacro %}


{% macro live_tombstones_sql(run) -%}
  {#- One row: the SCD1 state's live tombstones after the run's writes (expired ones are gone:
      write_state_statements), less those older than the truncate watermark, which a run
      forgets after it is recorded (scd1_forget_dominated_sql). Without a watermark (no run
      has read a truncate) every tombstone counts: tombstones_count_sql. SCD2 keeps deletes as
      history: NULL. Over the CTE `watermark` (watermark_ctes). -#}
  {%- set n = run.cfg.seq_parts -%}
  {%- if run.cfg.scd_type != '1' -%}
    select cast(null as {{ dbt.type_bigint() }}) as num_live_tombstones
  {%- elif not run.truncating and not run.truncated_before -%}
    {{ auto_cdc.tombstones_count_sql(run.state) }}
  {%- else -%}
    select count(*) as num_live_tombstones
    from {{ run.state }} as s
    cross join watermark as w
    where s.__cdc_deleted_at is not null
      and not {{ auto_cdc.seq_older('__cdc_delete_seq', '__cdc_watermark', n, 's', 'w') }}
  {%- endif -%}
{%- endmacro %}

{% macro carried_tombstones(cfg, last_run, state_files, statements, shape) -%}
  {#- The live tombstones the last run counted, when this run's count may start from them and
      add the changed keys' difference (change_counts_sql), instead of counting the state: an
      SCD1 run with no truncate and no writes before the resolve (`statements`: a state layout
      move, new columns), where the state's metadata (read_state_files) shows it as that run
      left it, that run still the newest, and no tombstone expiring now (no statement of this
      run forgets a tombstone that no change names). Else none. -#}
  {%- if cfg.scd_type != '1' or last_run is none or last_run.num_live_tombstones is none or state_files is none
         or not state_files.in_step or state_files.last_run_id != last_run.run_id
         or state_files.may_hold_expired > 0 or shape.n_truncates > 0
         or statements | select | map('trim') | select | list -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return(last_run.num_live_tombstones | int) }}
{%- endmacro %}

{% macro tombstones_count_sql(state) -%}
  {#- One row: the SCD1 state's rows with a delete time. On PostgreSQL its cost follows the
      tombstones, not the state (the state's partial index, tombstone_index_sql); DuckDB reads
      the one column. -#}
  {{ return(adapter.dispatch('tombstones_count_sql', 'auto_cdc')(state)) }}
{%- endmacro %}

{% macro default__tombstones_count_sql(state) -%}
  select count(*) as num_live_tombstones from {{ state }} where __cdc_deleted_at is not null
{%- endmacro %}


{% macro newest_commit_sql(run) -%}
  {#- One row: the newest source commit time applied so far (commit_time_column): this batch's
      or an earlier run's, so a run with no events keeps the model's time and its lag grows. A
      time without a zone (or a date) is read as UTC, whatever the session's time zone. -#}
  {%- set column = run.cfg.commit_time_column -%}
  {%- set type = auto_cdc.type_timestamp_tz() -%}
  {%- if not column -%}
    select cast(null as {{ type }}) as max_commit_time
  {%- else -%}
    select max(__cdc_commit_time) as max_commit_time
    from (
      {%- set value = auto_cdc.quote_identifier(column) %}
      select {{ 'cast(max(' ~ value ~ ') as ' ~ type ~ ')' if run.cfg.commit_time_zoned else 'max(' ~ auto_cdc.utc_instant_sql(value) ~ ')' }} as __cdc_commit_time
      from {{ run.batch }}
      union all
      select max_commit_time from {{ run.runs }} where run_id = (select max(run_id) from {{ run.runs }})
    ) as commit_times
  {%- endif -%}
{%- endmacro %}


{% macro recorded_state_config(run) -%}
  {#- What the run history's `config` holds: the configuration the state depends on and, for
      SCD1, the state's layout (state_layout), which the next run keeps. -#}
  {%- set recorded = {} -%}
  {%- do recorded.update(run.cfg.state_config) -%}
  {%- if run.state_layout -%}{%- do recorded.update({'state_layout': run.state_layout}) -%}{%- endif -%}
  {{ return(recorded) }}
{%- endmacro %}


{% macro differing_redeliveries_sql(run) -%}
  {#- One row: at how many keys and sequences the run's events replaced a different event
      stored there (resolve: SCD1 `__cdc_replaced_seq`, SCD2 and bitemporal `__cdc_replaced`),
      and one of them as text ("id=3 at seq=7"). Snapshot versions are never redelivered. -#}
  {%- if run.cfg.snapshot -%}
    select cast(0 as {{ dbt.type_bigint() }}) as num_differing_redeliveries, cast(null as {{ dbt.type_string() }}) as differing_redelivery
  {%- else -%}
    {{ auto_cdc._event_redeliveries_sql(run) }}
  {%- endif -%}
{%- endmacro %}


{% macro _event_redeliveries_sql(run) -%}
  {#- differing_redeliveries_sql, for events. -#}
  {%- set cfg = run.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set seq = '__cdc_replaced_seq' if cfg.scd_type == '1' else '__cdc_seq' -%}
  {%- set parts = [] -%}
  {%- for key in cfg.key_columns -%}
    {%- do parts.append(auto_cdc.string_literal(key ~ '=') ~ ' || cast(' ~ auto_cdc.quote_identifier(key) ~ ' as ' ~ dbt.type_string() ~ ')') -%}
  {%- endfor -%}
  {%- for name in auto_cdc.seq_names(seq, n) -%}
    {%- do parts.append(auto_cdc.string_literal(('' if loop.first else ', ') ~ cfg.sequence_labels[loop.index0] ~ '=')
                        ~ ' || cast(' ~ name ~ ' as ' ~ dbt.type_string() ~ ')') -%}
  {%- endfor -%}
  select count(*) as num_differing_redeliveries, min(__cdc_example) as differing_redelivery
  from (
    {#- Bitemporal: the history holds each event once per system time it is seen at. SCD1's
        changes hold one row per key. #}
    select {{ 'distinct ' if cfg.scd_type != '1' }}{{ auto_cdc.quoted_list(cfg.key_columns) }}, {{ auto_cdc.seq_names(seq, n) | join(', ') }},
      {{ parts[:cfg.key_columns | length] | join(" || ', ' || ") }} || ' at ' || {{ parts[cfg.key_columns | length:] | join(' || ') }} as __cdc_example
    from {{ run.changes if cfg.scd_type == '1' else run.history }}
    where {{ auto_cdc.seq_first('__cdc_replaced_seq', n) ~ ' is not null' if cfg.scd_type == '1' else '__cdc_replaced' }}
  ) as replaced
{%- endmacro %}


{% macro record_versions_sql(versions, read_versions, runs, groups=[]) -%}
  {%- set group_list = auto_cdc.quoted_list(groups) ~ ', ' if groups else '' -%}
  insert into {{ versions }} ({{ group_list }}version, run_id, applied)
  select {{ group_list }}__cdc_version, (select max(run_id) from {{ runs }}), __cdc_applied from {{ read_versions }}
{%- endmacro %}


{% macro report(metrics) -%}
  {#- `name=value` pairs, the row counts first (dbt's rows_affected is their sum); a metric
      the run has no value for (lag without commit_time_column) is left out. -#}
  {%- set pairs = [] -%}
  {%- for name, value in metrics.items() -%}{%- do pairs.append(name ~ '=' ~ value) -%}{%- endfor -%}
  {%- do auto_cdc.report_result(pairs | join(' '), metrics.num_upserted_rows + metrics.num_deleted_rows) -%}
{%- endmacro %}


{% macro report_result(message, rows_affected) -%}
  {#- Shown in the log line and in run_results.json (message, rows_affected). dbt v2
      (2.0.0-alpha.4) reports neither from store_raw_result: there the message is a log line. -#}
  {%- if auto_cdc.dbt_v2() -%}{%- do log("auto_cdc: " ~ model.name ~ ": " ~ message, info=true) -%}{%- endif -%}
  {%- do store_raw_result(name='main', message=message, code='AUTO_CDC', rows_affected=rows_affected) -%}
{%- endmacro %}
