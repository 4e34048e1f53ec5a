{#- Stage 7, apply: the state. In: the resolved changes (SCD1) or the history and the batch
    (SCD2, bitemporal). Out: the touched keys' state rewritten, inside the model's transaction:
    SCD1 keeps one row per key with a visible row or a live tombstone; SCD2 and bitemporal keep
    the events (SCD2 from snapshots keeps none: cfg.history_from_open_rows). -#}

{% macro write_state_statements(run) -%}
  {#- Dispatched, so an adapter with a better write (e.g. one MERGE) can replace them. -#}
  {{ return(adapter.dispatch('write_state_statements', 'auto_cdc')(run)) }}
{%- endmacro %}

{% macro default__write_state_statements(run) -%}
  {#- A delete then an insert per table: atomic only inside a transaction. -#}
  {%- if not auto_cdc.capabilities().transactions -%}
    {%- do auto_cdc.missing_hook('write_state_statements', 'transactions false') -%}
  {%- endif -%}
  {%- if run.cfg.scd_type == '1' -%}
    {{ return([auto_cdc.scd1_forget_touched_sql(run), auto_cdc.scd1_store_touched_sql(run),
               auto_cdc.scd1_forget_expired_sql(run)]) }}
  {%- elif run.cfg.history_from_open_rows -%}
    {{ return([]) }}
  {%- elif run.cfg.scd_type == '2' -%}
    {{ return([auto_cdc.scd2_forget_events_sql(run), auto_cdc.scd2_store_events_sql(run)]) }}
  {%- endif -%}
  {{ return([auto_cdc.bitemporal_forget_events_sql(run), auto_cdc.bitemporal_store_events_sql(run)]) }}
{%- endmacro %}


{% macro scd1_forget_touched_sql(run) -%}
  delete from {{ run.state }} as s
  using {{ run.changes }} as c
  where {{ auto_cdc.keys_match(run.cfg.key_columns, 's', 'c') }}
{%- endmacro %}


{% macro scd1_store_touched_sql(run) -%}
  {%- set cfg = run.cfg -%}
  {%- set columns = auto_cdc.quoted_list(cfg.key_columns + auto_cdc.scd1_state_columns(cfg)) -%}
  insert into {{ run.state }} ({{ columns }})
  select {{ columns }}
  from {{ run.changes }}
  where {{ auto_cdc.scd1_state_kept(run, none) }}
{%- endmacro %}


{% macro scd1_state_kept(run, alias) -%}
  {#- SQL condition on a resolved key (`alias`: its relation's alias, or none): does the state keep
      a row for it? Layout 'keys': while it has a row or a live tombstone; 'tombstones': while it
      has a live tombstone, with a row again or not. The row's sequence is in the target, but
      a move to 'keys' with partial updates needs the delete's: only it stops an event older
      than the delete from writing a column appended later (no sequence of its own yet). -#}
  {%- set n = run.cfg.seq_parts -%}
  {%- set upsert = auto_cdc.seq_first('__cdc_upsert_seq', n, alias) -%}
  {%- set delete = auto_cdc.seq_first('__cdc_delete_seq', n, alias) -%}
  {%- if run.state_layout == 'tombstones' -%}
    {{ return('(' ~ delete ~ ' is not null)') }}
  {%- endif -%}
  {{ return('(' ~ upsert ~ ' is not null or ' ~ delete ~ ' is not null)') }}
{%- endmacro %}


{% macro scd1_forget_expired_sql(run) -%}
  {#- Tombstones past their retention are forgotten: late upserts pass them again. -#}
  delete from {{ run.state }} as s
  where {{ auto_cdc.tombstone_expired(run, 's') }}
{%- endmacro %}


{% macro scd1_forget_dominated_sql(run) -%}
  {#- After a truncate (run once the run is recorded), tombstones older than the watermark are
      redundant: it blocks those late upserts on its own. -#}
  {%- set n = run.cfg.seq_parts -%}
  {%- set watermark -%}(select {{ auto_cdc.seq_names('truncate_seq', n) | join(', ') }} from {{ run.runs }} order by run_id desc limit 1){%- endset -%}
  {%- set dominated -%}
    s.{{ auto_cdc.seq_first('__cdc_upsert_seq', n) }} is null and {{ auto_cdc.seq_older('__cdc_delete_seq', 'truncate_seq', n, 's', 'w') }}
  {%- endset -%}
  {{ return(auto_cdc.delete_joined_sql(run.state, watermark, dominated)) }}
{%- endmacro %}


{% macro delete_joined_sql(relation, other, condition) -%}
  {#- Deletes the rows of `relation` (alias s) that match a row of `other` (alias w) on `condition`. -#}
  {{ return(adapter.dispatch('delete_joined_sql', 'auto_cdc')(relation, other, condition)) }}
{%- endmacro %}

{% macro default__delete_joined_sql(relation, other, condition) -%}
  delete from {{ relation }} as s using {{ other }} as w where {{ condition }}
{%- endmacro %}


{#- SCD2: the batch's events are added (a redelivered one that differs replaces its stored copy).
    Events that arrived longer than tombstone_retention ago are compacted: only those that still
    shape a row stay (a stretch's first and last event, a delete that closes a stretch; with
    partial updates also the event a more recent one takes its unwritten values from), with their
    values fixed (partial updates). Stored events that stay as they are are not rewritten, so an
    in-order batch writes only its own events. -#}

{% macro scd2_event_kept(run) -%}
  {#- Over the history `h`: is the event kept, and is a kept stored event rewritten (fixed)? -#}
  {%- set horizon = auto_cdc.seconds_ago(run.cfg.tombstone_retention, run.now) -%}
  {%- set kept -%}(h.__cdc_arrived_at >= {{ horizon }} or h.__cdc_stretch_head = 1 or h.__cdc_stretch_tail or h.__cdc_closes_stretch
    {%- if run.cfg.partial %} or h.__cdc_feeds_recent{% endif %}){%- endset -%}
  {%- set refixed -%}{% if run.cfg.partial %}(h.__cdc_arrived_at < {{ horizon }}){% else %}false{% endif %}{%- endset -%}
  {{ return({'kept': kept, 'refixed': refixed, 'horizon': horizon}) }}
{%- endmacro %}


{% macro scd2_forget_events_sql(run) -%}
  {#- The stored copies new events replace, and stored events no longer kept (compacted away)
      or refixed: the other new events have no stored copy, so the state is not probed for them. -#}
  {%- set rule = auto_cdc.scd2_event_kept(run) -%}
  delete from {{ run.state }} as e
  using {{ run.history }} as h
  where {{ auto_cdc.keys_match(run.cfg.key_columns, 'e', 'h') }}
    and {{ auto_cdc.seq_row('__cdc_seq', run.cfg.seq_parts, 'e') }} = {{ auto_cdc.seq_row('__cdc_seq', run.cfg.seq_parts, 'h') }}
    and (h.__cdc_replaces_stored or (not h.__cdc_new and (not {{ rule.kept }} or {{ rule.refixed }})))
{%- endmacro %}


{% macro scd2_store_events_sql(run) -%}
  {#- A compacted event's partial-update flags become true: its values were filled in. -#}
  {%- set cfg = run.cfg -%}
  {%- set rule = auto_cdc.scd2_event_kept(run) -%}
  {%- set columns = auto_cdc.event_columns(cfg, run.known_columns) -%}
  insert into {{ run.state }} ({{ auto_cdc.quoted_list(columns) }})
  select
    {{ auto_cdc.compacted_event_columns(cfg, columns, rule.horizon) }}
  from {{ run.history }} as h
  where {{ rule.kept }} and (h.__cdc_new or {{ rule.refixed }})
{%- endmacro %}


{#- Bitemporal: every event stays, since any later system time may need the whole history again. -#}

{% macro bitemporal_forget_events_sql(run) -%}
  {%- set cfg = run.cfg -%}
  delete from {{ run.state }} as e
  using ({{ auto_cdc.scd2_new_events_sql(run) }}) as n
  where {{ auto_cdc.keys_match(cfg.key_columns, 'e', 'n') }}
    and {{ auto_cdc.seq_row('__cdc_seq', cfg.seq_parts, 'e') }} = {{ auto_cdc.seq_row('__cdc_seq', cfg.seq_parts, 'n') }}
    and e.__cdc_sys = n.__cdc_sys
{%- endmacro %}


{% macro bitemporal_store_events_sql(run) -%}
  {%- set columns = auto_cdc.quoted_list(auto_cdc.event_columns(run.cfg, run.known_columns)) -%}
  insert into {{ run.state }} ({{ columns }})
  select {{ columns }}
  from ({{ auto_cdc.scd2_new_events_sql(run) }}) as n
{%- endmacro %}
