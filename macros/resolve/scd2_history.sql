{#- Stage 6, resolve (SCD type 2 and bitemporal): the history. In: the batch and the stored
    events of the keys it touches. Out: every event of those keys, partial values filled in,
    placed in its stretch (a maximal sequence of upserts with equal tracked columns: one target
    row; "run" means a dbt run).
    Bitemporal: the same once per system time of the key, over the events known then. -#}

{% macro scd2_history_sql(run) -%}
  {{ return(adapter.dispatch('scd2_history_sql', 'auto_cdc')(run)) }}
{%- endmacro %}

{% macro default__scd2_history_sql(run) -%}
  {%- set cfg = run.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = auto_cdc.quoted_list(cfg.key_columns) -%}
  {%- set seqs = auto_cdc.seq_names('__cdc_seq', n) -%}
  {%- set seq_list = seqs | join(', ') -%}
  {%- set columns = cfg.value_columns -%}
  {%- set flags = auto_cdc.event_flags(cfg, run.known_columns) -%}
  with
  {{ auto_cdc.scd2_batch_ctes(cfg, run) }}

  all_events as (
    {#- The batch's events and the touched keys' stored ones. __cdc_new tells them apart, so only
        what changed is written back. A redelivered event (its key and sequence stored already)
        that writes nothing the stored copy lacks (a checkpoint read again, a replay) leaves the
        stored copy, which compaction may have filled in; one that differs replaces it
        (`__cdc_replaced`: the run warns, record_run_sql). -#}
    {%- set identity = auto_cdc.quoted_list(auto_cdc.event_identity(cfg)) %}
    {%- set copies = 'over (partition by ' ~ identity ~ ' order by __cdc_new rows between unbounded preceding and unbounded following)' %}
    {%- set compared = auto_cdc.compared_with_stored_sql(cfg, run.known_columns, copies,
                                                         none if cfg.system_expr else auto_cdc.scd2_event_kept(run).horizon) %}
    select {{ auto_cdc.quoted_list(auto_cdc.event_columns(cfg, run.known_columns)) }}, __cdc_new,
      __cdc_new and __cdc_copies > 1 as __cdc_replaces_stored,
      __cdc_new and __cdc_copies > 1 and not __cdc_same as __cdc_replaced
    from (
      select c.*, count(*) {{ copies }} as __cdc_copies,
        {{ compared.same }} as __cdc_same,
        {{ compared.adds }} as __cdc_adds
      from (
        select new_events.*, true as __cdc_new from new_events
        union all
        select {{ auto_cdc.quoted_list(auto_cdc.event_columns(cfg, run.known_columns), 'e.') }}, false as __cdc_new
        from {{ run.state }} as e
        where exists (select 1 from touched as t where {{ auto_cdc.keys_match(cfg.key_columns, 't', 'e') }})
      ) as c
    ) as judged
    where __cdc_copies = 1 or __cdc_new <> (__cdc_same and not __cdc_adds)
  ),

  {%- if cfg.system_expr %}
  system_times as (
    select distinct {{ keys }}, __cdc_sys as __cdc_asof from all_events
  ),

  as_known as (
    {#- Bitemporal: the events known at each system time t of the key (system time <= t); of
        one business sequence seen at several system times, the latest counts (a correction). #}
    select {{ keys }}, __cdc_asof, {{ seq_list }}, __cdc_sys, __cdc_op
      {%- for column in columns %}, {{ auto_cdc.quote_identifier(column) }}{% endfor %}
      {%- for flag in flags %}, {{ flag }}{% endfor %}, __cdc_arrived_at, __cdc_new, __cdc_replaces_stored, __cdc_replaced
    from (
      select t.__cdc_asof, e.*,
        row_number() over (partition by {{ auto_cdc.quoted_list(cfg.key_columns, 'e.') }}, t.__cdc_asof, {{ auto_cdc.seq_names('e.__cdc_seq', n) | join(', ') }}
                           order by e.__cdc_sys desc) as __cdc_latest
      from system_times as t
      join all_events as e on {{ auto_cdc.keys_match(cfg.key_columns, 't', 'e') }} and e.__cdc_sys <= t.__cdc_asof
    ) as seen
    where __cdc_latest = 1
  ),

  {%- set seen_at -%}{{ keys }}, __cdc_asof{%- endset %}
  {{ auto_cdc.scd2_runs_sql(cfg, 'as_known', seen_at, run.known_columns) }}
  {%- else %}
  {{ auto_cdc.scd2_runs_sql(cfg, 'all_events', keys, run.known_columns, auto_cdc.scd2_event_kept(run).horizon) }}
  {%- endif %}
{%- endmacro %}


{% macro scd2_open_row_history_sql(run) -%}
  {#- SCD2 from snapshots (cfg.history_from_open_rows): the same history without stored events.
      Versions only grow (a late snapshot is skipped), so every row of a key before its open row
      is final; the open row stands for the events of its stretch, as one upsert at its __START_AT
      with its values. `known_columns` here are the columns appended by this run, which the open
      rows never carried: they are not compared with the batch, so appending one opens no version.
      A version at or before a key's last boundary in the target is already in it: that happens
      only when a run re-reads versions an interrupted run applied (on Spark, stopped between
      its target write and its versions record), and those events are left out. -#}
  {%- set cfg = run.cfg -%}
  {%- set keys = auto_cdc.quoted_list(cfg.key_columns) -%}
  {%- set start_at, end_at = auto_cdc.quote_identifier('__START_AT'), auto_cdc.quote_identifier('__END_AT') -%}
  with
  {{ auto_cdc.scd2_batch_ctes(cfg, run) }}

  applied as (
    select {{ auto_cdc.quoted_list(cfg.key_columns, 't.') }}, max(coalesce(t.{{ end_at }}, t.{{ start_at }})) as __cdc_applied_seq
    from {{ run.target }} as t
    where exists (select 1 from touched as k where {{ auto_cdc.keys_match(cfg.key_columns, 'k', 't') }})
    group by {{ auto_cdc.quoted_list(cfg.key_columns, 't.') }}
  ),

  all_events as (
    select n.*, true as __cdc_new from new_events as n
    where not exists (select 1 from applied as a where {{ auto_cdc.keys_match(cfg.key_columns, 'a', 'n') }} and n.__cdc_seq <= a.__cdc_applied_seq)
    union all
    select {{ auto_cdc.quoted_list(cfg.key_columns, 't.') }}, t.{{ auto_cdc.quote_identifier('__START_AT') }}, 'upsert'
      {%- for column in cfg.value_columns %}, t.{{ auto_cdc.quote_identifier(column) }}{% endfor %}
      {%- for column in run.known_columns %}, false{% endfor %},
      {{ run.now }}, false
    from {{ run.target }} as t
    where t.{{ auto_cdc.quote_identifier('__END_AT') }} is null
      and exists (select 1 from touched as k where {{ auto_cdc.keys_match(cfg.key_columns, 'k', 't') }})
  ),

  {{ auto_cdc.scd2_runs_sql(cfg, 'all_events', keys, run.known_columns) }}
{%- endmacro %}


{% macro compared_with_stored_sql(cfg, known_columns, copies, horizon) -%}
  {#- SQL conditions on the copies of one event (a key and sequence): `copies` is a window over
      them, the stored copy first and the new one last, framed whole, so both copies get the same
      answer (one window, no second pass). `same`: the new copy writes nothing different from
      the stored one: the same kind and, per column it writes, the stored copy wrote the same
      value; a column it does not write, the stored copy did not write either, unless it arrived
      before `horizon` (compaction fills a kept event's values in; none: never). `adds`: the new
      copy carries a column appended since the stored one was stored (its value is new, not
      different). A single copy compares with itself. -#}
  {%- set stored -%}first_value(__EXPR__) {{ copies }}{%- endset -%}
  {%- set new -%}last_value(__EXPR__) {{ copies }}{%- endset -%}
  {%- set new_op = new | replace('__EXPR__', '__cdc_op') -%}
  {%- set same = [new_op ~ " = " ~ stored | replace('__EXPR__', '__cdc_op')] -%}
  {%- set adds = ['false'] -%}
  {%- for column in cfg.value_columns -%}
    {%- set value = auto_cdc.comparable(cfg, column) -%}
    {%- set equal = 'not (' ~ new | replace('__EXPR__', value) ~ ' is distinct from ' ~ stored | replace('__EXPR__', value) ~ ')' -%}
    {%- if cfg.partial -%}
      {%- set flag = auto_cdc.event_flag(column) -%}
      {%- set stored_wrote = 'coalesce(' ~ stored | replace('__EXPR__', flag) ~ ', false)' -%}
      {%- set equal = 'case when ' ~ new | replace('__EXPR__', flag) ~ ' then ' ~ stored_wrote ~ ' and ' ~ equal ~ ' else not ' ~ stored_wrote
                      ~ ((' or ' ~ stored | replace('__EXPR__', '__cdc_arrived_at') ~ ' < ' ~ horizon) if horizon else '') ~ ' end' -%}
    {%- endif -%}
    {%- if column in known_columns -%}
      {%- set stored_knew = 'coalesce(' ~ stored | replace('__EXPR__', auto_cdc.event_known(column)) ~ ', false)' -%}
      {%- set equal = 'not ' ~ stored_knew ~ ' or ' ~ equal -%}
      {%- do adds.append('not ' ~ stored_knew) -%}
    {%- endif -%}
    {%- do same.append("(" ~ new_op ~ " = 'delete' or " ~ equal ~ ")") -%}
  {%- endfor -%}
  {{ return({'same': '(' ~ (same | join('\n            and ')) ~ ')', 'adds': '(' ~ (adds | join(' or ')) ~ ')'}) }}
{%- endmacro %}


{% macro scd2_batch_ctes(cfg, run) -%}
  {#- CTEs `new_events` (the batch's events, as stored) and `touched` (their keys), each with its comma. -#}
  new_events as (
    {{ auto_cdc.scd2_new_events_sql(run) }}
  ),

  touched as (
    select distinct {{ auto_cdc.quoted_list(cfg.key_columns) }} from new_events
  ),
{%- endmacro %}


{% macro scd2_new_events_sql(run) -%}
  {#- The batch's events as the SCD2 (and bitemporal) histories store them, arrived at the run's
      clock. Deletes carry no values. Copies of one event (they agree on everything kept:
      validate_batch) collapse. -#}
  {%- set cfg = run.cfg -%}
  {%- set identity = auto_cdc.quoted_list(auto_cdc.event_identity(cfg)) -%}
  select {{ identity }}, __cdc_op
    {%- for column in cfg.value_columns %},
    case when __cdc_op = 'upsert' then {{ auto_cdc.quote_identifier(column) }} end as {{ auto_cdc.quote_identifier(column) }}
    {%- endfor %}
    {%- for column in cfg.value_columns if cfg.partial %},
    ({{ auto_cdc.writes_column(cfg, column) }}) as {{ auto_cdc.event_flag(column) }}
    {%- endfor %}
    {%- for column in run.known_columns %}, true as {{ auto_cdc.event_known(column) }}{% endfor %},
    {{ run.now }} as __cdc_arrived_at
  from (
    select *, row_number() over (partition by {{ identity }} order by __cdc_op) as __cdc_copy
    from {{ run.batch }}
    where __cdc_op <> 'truncate'
  ) as events
  where __cdc_copy = 1
{%- endmacro %}


{% macro scd2_runs_sql(cfg, source, partition, known_columns, horizon=none) -%}
  {#- The CTEs (after a WITH that defines `source`) and the final select that place each event of
      `source` in its stretch. `partition`: the quoted columns one history belongs to (the keys; for
      bitemporal also the system time it is seen at). `source` has those columns, the sequence
      parts, __cdc_op, the written columns, the partial-update flags, __cdc_arrived_at,
      __cdc_new, __cdc_replaces_stored and __cdc_replaced. `horizon`: where SCD2 compacts events (scd2_filled_ctes). -#}
  {%- set n = cfg.seq_parts -%}
  {%- set seqs = auto_cdc.seq_names('__cdc_seq', n) -%}
  {%- set seq_list = seqs | join(', ') -%}
  {%- set columns = cfg.value_columns -%}
  {%- set flags = auto_cdc.event_flags(cfg, known_columns) -%}
  {%- set known = known_columns -%}
  {%- set per_key -%}partition by {{ partition }} order by {{ seq_list }}{%- endset -%}
  {%- set stretch_window -%}(partition by {{ partition }}, __cdc_stretch order by {{ seq_list }}){%- endset -%}
  {%- set running -%}{{ per_key }} rows between unbounded preceding and current row{%- endset -%}
  {{ auto_cdc.scd2_filled_ctes(cfg, source, partition, flags, horizon) }}

  marked as (
    select *,
      lag(__cdc_op) over w as __cdc_prev_op,
      lead(__cdc_op) over w as __cdc_next_op
      {%- for column in cfg.tracked_columns %}
      {%- set i = loop.index %}
      {%- for side, fn in [('prev', 'lag'), ('next', 'lead')] %},
      {{ fn }}({{ auto_cdc.quote_identifier(column) }}) over w as __cdc_{{ side }}_tracked_{{ i }}
      {%- if column in known %},
      {{ fn }}(coalesce({{ auto_cdc.event_known(column) }}, false)) over w as __cdc_{{ side }}_known_{{ i }}
      {%- endif %}
      {%- endfor %}
      {%- endfor %}
      {%- for name in seqs %},
      lead({{ name }}) over w as {{ auto_cdc.seq_names('__cdc_next_seq', n)[loop.index0] }}
      {%- endfor %}
    from filled
    window w as ({{ per_key }})
  ),

  headed as (
    {#- A stretch starts at an upsert after nothing, after a delete, or after a tracked change;
        it ends (its tail: the upsert whose values its target row shows) before nothing, a
        delete or a tracked change. A column appended later is only compared between events
        that both carried it, so appending it never opens versions by itself. -#}
    select *,
      case when __cdc_op = 'upsert' and (__cdc_prev_op is null or __cdc_prev_op = 'delete'
        or {{ auto_cdc.scd2_tracked_change(cfg, known, 'prev') }}) then 1 else 0 end as __cdc_stretch_head,
      (__cdc_op = 'upsert' and (__cdc_next_op is null or __cdc_next_op = 'delete'
        or ({{ auto_cdc.scd2_tracked_change(cfg, known, 'next') }}))) as __cdc_stretch_tail,
      (__cdc_op = 'delete' and __cdc_prev_op = 'upsert') as __cdc_closes_stretch
    from marked
  ),

  numbered as (
    select *,
      sum(case when __cdc_op = 'delete' or __cdc_stretch_head = 1 then 1 else 0 end) over ({{ running }}) as __cdc_stretch
    from headed
  )

  {#- The stretch's start: its first event's sequence (not max() of the boundaries so far, one
      pass fewer: PostgreSQL has no max() for some orderable types, uuid among them). #}
  select *,
    {{ auto_cdc.seq_select('__cdc_seq', '__cdc_stretch_start', n, over=stretch_window) }}
  from numbered
{%- endmacro %}


{% macro scd2_tracked_change(cfg, known, side) -%}
  {#- SQL condition: does the event's tracked value differ from the `side` ('prev' or 'next')
      event's (the __cdc_<side>_tracked_<i> columns of scd2_runs_sql)? A column appended later
      counts only where both events carried it. -#}
  {%- set changes = ['false'] -%}
  {%- for column in cfg.tracked_columns -%}
    {%- set change -%}
      ({{ auto_cdc.comparable(cfg, column) }} is distinct from {{ auto_cdc.compared(cfg, column, '__cdc_' ~ side ~ '_tracked_' ~ loop.index) }}
      {%- if column in known %} and coalesce({{ auto_cdc.event_known(column) }}, false) and __cdc_{{ side }}_known_{{ loop.index }}{% endif %})
    {%- endset -%}
    {%- do changes.append(change) -%}
  {%- endfor -%}
  {{ return(changes | join('\n        or ')) }}
{%- endmacro %}


{% macro scd2_filled_ctes(cfg, source, partition, flags, horizon=none) -%}
  {#- CTEs ending in `filled`: the events of `source` with partial values filled in. Per column,
      a group starts at each event that writes it (or at a delete, which resets it to NULL);
      the rest of the group takes that value: the chronologically preceding one. With a
      compaction `horizon`, `__cdc_feeds_recent`: the event starts a group holding an event that
      arrived since, which is stored with its values unfilled and is filled from it again by
      every later run, so it must stay (scd2_event_kept). -#}
  {%- set seq_list = auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) | join(', ') -%}
  {%- if not cfg.partial %}
  filled as (
    select * from {{ source }}
  ),
  {%- else %}
  grouped as (
    select *
      {%- for column in cfg.value_columns %},
      count(case when __cdc_op = 'delete' or {{ flags[loop.index0] }} then 1 end)
        over (partition by {{ partition }} order by {{ seq_list }} rows between unbounded preceding and current row) as __cdc_group_{{ loop.index }}
      {%- endfor %}
    from {{ source }}
  ),

  filled as (
    select {{ partition }}, {{ seq_list }}{% if cfg.system_expr %}, __cdc_sys{% endif %}, __cdc_op
      {%- for column in cfg.value_columns %},
      case when __cdc_op = 'upsert' then first_value(case when {{ flags[loop.index0] }} then {{ auto_cdc.quote_identifier(column) }} end)
        over (partition by {{ partition }}, __cdc_group_{{ loop.index }} order by {{ seq_list }}) end as {{ auto_cdc.quote_identifier(column) }}
      {%- endfor %}
      {%- for flag in flags %}, {{ flag }}{% endfor %}, __cdc_arrived_at, __cdc_new, __cdc_replaces_stored, __cdc_replaced
      {%- if horizon %},
      {%- for column in cfg.value_columns %}
      {{ 'or ' if not loop.first }}((__cdc_op = 'delete' or {{ flags[loop.index0] }})
        and max(case when __cdc_arrived_at >= {{ horizon }} then 1 else 0 end) over (partition by {{ partition }}, __cdc_group_{{ loop.index }}) = 1)
      {%- endfor %} as __cdc_feeds_recent
      {%- endif %}
    from grouped
  ),
  {%- endif %}
{%- endmacro %}
