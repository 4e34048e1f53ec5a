{#- Stage 6, resolve (SCD type 1). In: the batch, the touched keys' state and target rows, the
    truncate watermark. Out: one row per touched key (and, when a truncate advances, per stored
    row it clears): the row the key must have, the action (`__cdc_action`: insert, update,
    delete, none) and the key's new state. Its cost follows those keys only.

    The rule, per key: a value survives when it was written at or after the barrier (the newest
    delete or truncate); of two writes the later wins, the batch's on a tie (a replay replaces).
    With partial updates the same rule holds per column. -#}


{% macro scd1_column_names(cfg, i) -%}
  {#- The working columns of value column number `i`. Without partial updates every column is
      written by the key's newest upsert, so its sequences are the upsert's. -#}
  {{ return({
      'batch_value': '__cdc_batch_value_' ~ i,
      'current_value': '__cdc_current_value_' ~ i,
      'batch_seq': ('__cdc_batch_written_seq_' ~ i) if cfg.partial else '__cdc_batch_upsert_seq',
      'stored_seq': ('__cdc_stored_written_seq_' ~ i) if cfg.partial else '__cdc_stored_upsert_seq',
      'window': ('w_' ~ i) if cfg.partial else 'w_upsert',
      'batch_wins': '__cdc_batch_wins_' ~ i,
      'stored_holds': '__cdc_stored_holds_' ~ i,
  }) }}
{%- endmacro %}


{% macro scd1_changes_sql(run) -%}
  {{ return(adapter.dispatch('scd1_changes_sql', 'auto_cdc')(run)) }}
{%- endmacro %}

{% macro default__scd1_changes_sql(run) -%}
  {%- set fence = auto_cdc.subquery_fence() %}
  with
  {{ auto_cdc.watermark_ctes(run.cfg, run.batch, run.runs) }},
  batch_keys as (
    {{ auto_cdc.scd1_batch_keys_sql(run.cfg, run.batch) }}
  ),
  touched as (
    {{ auto_cdc.scd1_touched_keys_sql(run) }}
  ),
  joined as (
    {{ auto_cdc.scd1_joined_sql(run) }}
    {{ fence }}
  ),
  barred as (
    {#- The newest upsert and delete; the barrier: nothing written before it survives. #}
    {%- set n = run.cfg.seq_parts %}
    select *, {{ auto_cdc.seq_greatest('__cdc_last_delete_seq', '__cdc_watermark', n, '__cdc_barrier_seq') }}
    from (
      select *,
        {{ auto_cdc.seq_greatest('__cdc_stored_delete_seq', '__cdc_batch_delete_seq', n, '__cdc_last_delete_seq') }},
        {{ auto_cdc.seq_greatest('__cdc_batch_upsert_seq', '__cdc_stored_upsert_seq', n, '__cdc_last_upsert_seq') }}
      from joined
      {{ fence }}
    ) as merged
  ),
  resolved as (
    {{ auto_cdc.scd1_resolved_sql(run.cfg) }}
    {{ fence }}
  ),
  final as (
    {{ auto_cdc.scd1_final_sql(run.cfg, run.now) }}
    {{ fence }}
  )
  select final.*,
    case
      when __cdc_was_present and not __cdc_present then 'delete'
      when __cdc_present and not __cdc_was_present then 'insert'
      {%- if run.cfg.value_columns %}
      when __cdc_present and (
        {%- for column in run.cfg.value_columns %}
        {{ 'or ' if not loop.first }}{{ auto_cdc.comparable(run.cfg, column) }} is distinct from {{ auto_cdc.compared(run.cfg, column, '__cdc_current_value_' ~ loop.index) }}
        {%- endfor %}
      ) then 'update'
      {%- endif %}
      else 'none'
    end as __cdc_action
  from final
{%- endmacro %}


{% macro scd1_batch_keys_sql(cfg, batch) -%}
  {#- One row per key: its newest upsert and delete and, per column, the newest value written
      (with partial updates: by the newest event that wrote that column). -#}
  {%- set n = cfg.seq_parts -%}
  {%- set partition -%}partition by {{ auto_cdc.quoted_list(cfg.key_columns) }}{%- endset -%}
  {%- set newest = auto_cdc.seq_order('__cdc_seq', n) -%}
  select {{ auto_cdc.quoted_list(cfg.key_columns) }},
    {{ auto_cdc.seq_select('__cdc_seq', '__cdc_batch_upsert_seq', n, "__cdc_op = 'upsert'", over='w_upsert') }},
    {{ auto_cdc.seq_select('__cdc_seq', '__cdc_batch_delete_seq', n, "__cdc_op = 'delete'", over='w_delete') }},
    {%- for column in cfg.value_columns %}
    {%- set names = auto_cdc.scd1_column_names(cfg, loop.index) %}
    {%- set writes = auto_cdc.writes_column(cfg, column) %}
    first_value(case when {{ writes }} then {{ auto_cdc.quote_identifier(column) }} end) over {{ names.window }} as {{ names.batch_value }},
    {%- if cfg.partial %}
    {{ auto_cdc.seq_select('__cdc_seq', names.batch_seq, n, writes, over=names.window) }},
    {%- endif %}
    {%- endfor %}
    row_number() over w_upsert as __cdc_key_row
  from {{ batch }}
  where __cdc_op <> 'truncate'
  window
    w_upsert as ({{ partition }} order by case when __cdc_op = 'upsert' then 0 else 1 end, {{ newest }}),
    w_delete as ({{ partition }} order by case when __cdc_op = 'delete' then 0 else 1 end, {{ newest }})
    {%- for column in cfg.value_columns if cfg.partial %},
    w_{{ loop.index }} as ({{ partition }} order by case when {{ auto_cdc.writes_column(cfg, column) }} then 0 else 1 end, {{ newest }})
    {%- endfor %}
{%- endmacro %}


{% macro scd1_touched_keys_sql(run) -%}
  {#- The batch's keys; when a truncate advances, also every stored row (or, with partial
      updates, column) older than it: only then does a run touch the whole state. -#}
  {%- set cfg = run.cfg -%}
  {#- Not batch_keys' first rows: a CTE read several times is computed each time on Spark, and
      this one needs no window. -#}
  select distinct {{ auto_cdc.quoted_list(cfg.key_columns) }} from {{ run.batch }} where __cdc_op <> 'truncate'
  {%- if run.truncating %}
  union
  select {{ auto_cdc.quoted_list(cfg.key_columns, 's.') }}
  from {{ auto_cdc.scd1_upserts_relation(run) }} as s
  cross join watermark as w
  where {{ auto_cdc.seq_older('__cdc_upsert_seq', '__cdc_watermark', cfg.seq_parts, 's', 'w') }}
    {%- for column in cfg.value_columns if cfg.partial %}
    or {{ auto_cdc.seq_older(auto_cdc.column_seq_prefix(column), '__cdc_watermark', cfg.seq_parts, 's', 'w') }}
    {%- endfor %}
  {%- endif %}
{%- endmacro %}


{% macro scd1_joined_sql(run) -%}
  {#- Each touched key with what the batch, the state and the target hold for it. -#}
  {%- set cfg = run.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {#- A tombstone past its retention is forgotten: late upserts pass it again. -#}
  {%- set live_tombstone = 'not (' ~ auto_cdc.tombstone_expired(run, 's') ~ ')' -%}
  select {{ auto_cdc.quoted_list(keys, 'k.') }},
    {{ auto_cdc.seq_select('__cdc_batch_upsert_seq', '__cdc_batch_upsert_seq', n, alias='b') }},
    {{ auto_cdc.seq_select('__cdc_batch_delete_seq', '__cdc_batch_delete_seq', n, alias='b') }},
    {{ auto_cdc.scd1_stored_upserts(run, 's', 't') }},
    {{ auto_cdc.seq_select('__cdc_delete_seq', '__cdc_stored_delete_seq', n, live_tombstone, alias='s') }},
    s.__cdc_deleted_at as __cdc_stored_deleted_at,
    {{ auto_cdc.seq_select('__cdc_watermark', '__cdc_watermark', n, alias='w') }},
    t.{{ auto_cdc.quote_identifier(keys[0]) }} is not null as __cdc_was_present
    {%- for column in cfg.value_columns %}
    {%- set names = auto_cdc.scd1_column_names(cfg, loop.index) %},
    b.{{ names.batch_value }},
    t.{{ auto_cdc.quote_identifier(column) }} as {{ names.current_value }}
    {%- if cfg.partial %},
    {{ auto_cdc.seq_select(names.batch_seq, names.batch_seq, n, alias='b') }},
    {{ auto_cdc.seq_select(auto_cdc.column_seq_prefix(column), names.stored_seq, n, alias='s') }}
    {%- endif %}
    {%- endfor %}
  from touched as k
  left join batch_keys as b on {{ auto_cdc.keys_match(keys, 'k', 'b') }} and b.__cdc_key_row = 1
  left join {{ auto_cdc.touched_rows(run.state, keys) }} as s on {{ auto_cdc.keys_match(keys, 'k', 's') }}
  left join {{ auto_cdc.touched_rows(run.target, keys) }} as t on {{ auto_cdc.keys_match(keys, 'k', 't') }}
  cross join watermark as w
{%- endmacro %}


{% macro scd1_stored_upserts(run, state_alias, target_alias) -%}
  {#- Select list `__cdc_stored_upsert_seq`: the key's last upsert, where the state layout keeps
      it (state_layout): in the target's `sequence_by` columns, or in the state. -#}
  {%- set n = run.cfg.seq_parts -%}
  {%- if run.state_layout != 'tombstones' -%}
    {{ return(auto_cdc.seq_select('__cdc_upsert_seq', '__cdc_stored_upsert_seq', n, alias=state_alias)) }}
  {%- endif -%}
  {%- set parts = [] -%}
  {%- for name in auto_cdc.seq_names('__cdc_stored_upsert_seq', n) -%}
    {%- do parts.append(target_alias ~ '.' ~ auto_cdc.quote_identifier(run.cfg.sequence_columns[loop.index0]) ~ ' as ' ~ name) -%}
  {%- endfor -%}
  {{ return(parts | join(',\n    ')) }}
{%- endmacro %}


{% macro scd1_upserts_relation(run) -%}
  {#- The stored rows' keys and last upserts (`__cdc_upsert_seq`), where the layout keeps them. -#}
  {%- if run.state_layout != 'tombstones' -%}{{ return(run.state) }}{%- endif -%}
  {%- set cfg = run.cfg -%}
  {%- set parts = [] -%}
  {%- for name in auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) -%}
    {%- do parts.append(auto_cdc.quote_identifier(cfg.sequence_columns[loop.index0]) ~ ' as ' ~ name) -%}
  {%- endfor -%}
  {{ return('(select ' ~ auto_cdc.quoted_list(cfg.key_columns) ~ ', ' ~ parts | join(', ') ~ ' from ' ~ run.target ~ ')') }}
{%- endmacro %}


{% macro touched_rows(relation, keys) -%}
  {#- `relation`, to be joined with the CTE `touched`: its rows of the touched keys. -#}
  {{ return(adapter.dispatch('touched_rows', 'auto_cdc')(relation, keys)) }}
{%- endmacro %}

{% macro default__touched_rows(relation, keys) -%}
  {#- The join itself finds them (through the key index on PostgreSQL). -#}
  {{ return(relation) }}
{%- endmacro %}


{% macro scd1_resolved_sql(cfg) -%}
  {#- Is the key present, and per column: does the batch's write win, or does the stored one hold? -#}
  {%- set n = cfg.seq_parts -%}
  select *,
    {{ auto_cdc.seq_cmp('__cdc_last_upsert_seq', '__cdc_barrier_seq', n, '>=') }} as __cdc_present
    {%- for column in cfg.value_columns %}
    {%- set c = auto_cdc.scd1_column_names(cfg, loop.index) %},
    ({{ auto_cdc.seq_cmp(c.batch_seq, '__cdc_barrier_seq', n, '>=') }}
      and (not {{ auto_cdc.seq_cmp(c.stored_seq, '__cdc_barrier_seq', n, '>=') }} or {{ auto_cdc.seq_cmp(c.batch_seq, c.stored_seq, n, '>=') }})) as {{ c.batch_wins }},
    {{ auto_cdc.seq_cmp(c.stored_seq, '__cdc_barrier_seq', n, '>=') }} as {{ c.stored_holds }}
    {%- endfor %}
  from barred
{%- endmacro %}


{% macro scd1_final_sql(cfg, now) -%}
  {#- The row the key must have, and its new state (a tombstone lives while no truncate is newer;
      one this run writes is dated `now`, the run's clock). -#}
  {%- set n = cfg.seq_parts -%}
  {%- set tombstone_live = auto_cdc.seq_cmp('__cdc_last_delete_seq', '__cdc_watermark', n, '>=') -%}
  select {{ auto_cdc.quoted_list(cfg.key_columns) }}, __cdc_present, __cdc_was_present
    {%- for column in cfg.value_columns %}
    {%- set c = auto_cdc.scd1_column_names(cfg, loop.index) %},
    case when not __cdc_present then null when {{ c.batch_wins }} then {{ c.batch_value }} when {{ c.stored_holds }} then {{ c.current_value }} end
      as {{ auto_cdc.quote_identifier(column) }},
    {%- for part in auto_cdc.seq_names('', n) if cfg.partial %}
    case when not __cdc_present then null when {{ c.batch_wins }} then {{ c.batch_seq }}{{ part }} when {{ c.stored_holds }} then {{ c.stored_seq }}{{ part }} end
      as {{ auto_cdc.column_seq_prefix(column) }}{{ part }},
    {%- endfor %}
    {{ c.current_value }}
    {%- endfor %},
    {{ auto_cdc.seq_select('__cdc_last_upsert_seq', '__cdc_upsert_seq', n, '__cdc_present') }},
    {{ auto_cdc.seq_select('__cdc_last_delete_seq', '__cdc_delete_seq', n, tombstone_live) }},
    case when {{ tombstone_live }} then
      case when {{ auto_cdc.seq_cmp('__cdc_batch_delete_seq', '__cdc_stored_delete_seq', n, '>') }} then {{ now }}
      else __cdc_stored_deleted_at end
    end as __cdc_deleted_at,
    {{ auto_cdc.scd1_replaced_seq_sql(cfg) }},
    {#- What the state held before the run, for the events it ignores (ignored_events_sql). #}
    {{ auto_cdc.seq_names('__cdc_stored_upsert_seq', n) | join(', ') }},
    {{ auto_cdc.seq_names('__cdc_stored_delete_seq', n) | join(', ') }}
    {%- for column in cfg.value_columns if cfg.partial %},
    {{ auto_cdc.seq_names(auto_cdc.scd1_column_names(cfg, loop.index).stored_seq, n) | join(', ') }}
    {%- endfor %}
  from resolved
{%- endmacro %}


{% macro scd1_replaced_seq_sql(cfg) -%}
  {#- Select list `__cdc_replaced_seq`: the sequence of a redelivered event that replaced a
      different one the state holds at that sequence (the run warns: record_run_sql), else NULL.
      Compared with what the state keeps: the row's last upsert (with partial updates, each
      column's last write) and a live tombstone. -#}
  {%- set n = cfg.seq_parts -%}
  {%- set cases = [] -%}
  {%- for column in cfg.value_columns -%}
    {%- set c = auto_cdc.scd1_column_names(cfg, loop.index) -%}
    {%- do cases.append((auto_cdc.seq_tie(c.batch_seq, c.stored_seq, n) ~ ' and __cdc_was_present and '
                         ~ auto_cdc.compared(cfg, column, c.batch_value) ~ ' is distinct from ' ~ auto_cdc.compared(cfg, column, c.current_value),
                         auto_cdc.seq_names(c.batch_seq, n))) -%}
  {%- endfor -%}
  {%- do cases.append((auto_cdc.seq_tie('__cdc_batch_delete_seq', '__cdc_stored_upsert_seq', n), auto_cdc.seq_names('__cdc_batch_delete_seq', n))) -%}
  {%- do cases.append((auto_cdc.seq_tie('__cdc_batch_upsert_seq', '__cdc_stored_delete_seq', n), auto_cdc.seq_names('__cdc_batch_upsert_seq', n))) -%}
  {%- for part in auto_cdc.seq_names('__cdc_replaced_seq', n) -%}
    {%- set i = loop.index0 -%}
    case{% for condition, seq in cases %} when {{ condition }} then {{ seq[i] }}{% endfor %} end as {{ part }}{{ ',\n    ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}
