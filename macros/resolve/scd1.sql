{#- Stage 6, resolve (SCD type 1). In: the batch, the touched keys' state and target rows, the
    truncate watermark. Out: one row per touched key (and, when a truncate advances, per stored
    row it clears): the row the key must have, the action (`__cdc_action`: insert, update,
    delete, none) and the key's new state. Its cost follows those keys only. -#}

{% macro watermark_ctes(cfg, batch, runs) -%}
  {#- CTEs ending in `watermark`: the truncate watermark after this batch (`__t`). -#}
  {%- set n = cfg.seq_parts -%}
  stored_watermark as (
    select {{ auto_cdc.seq_select('truncate_seq', '__st', n) }}
    from {{ runs }}
    order by run_id desc
    limit 1
  ),
  batch_watermark as (
    select {{ auto_cdc.seq_select('__cdc_seq', '__bt', n) }}
    from {{ batch }}
    where __cdc_op = 'truncate'
    order by {{ auto_cdc.seq_order('__cdc_seq', n) }}
    limit 1
  ),
  watermark as (
    select {{ auto_cdc.seq_greatest('__st', '__bt', n, '__t') }}
    from (select 1 as __one) as one
    left join stored_watermark on 1 = 1
    left join batch_watermark on 1 = 1
  )
{%- endmacro %}


{% macro scd1_changes_sql(arg_dict) -%}
  {{ return(adapter.dispatch('scd1_changes_sql', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__scd1_changes_sql(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {%- set columns = cfg.value_columns -%}
  {%- set partition = 'partition by ' ~ auto_cdc.quoted_list(keys) -%}
  {%- set seq_desc = auto_cdc.seq_order('__cdc_seq', n) -%}
  {%- set expired = "s.__cdc_upsert_seq" ~ ('' if n == 1 else '_1') ~ " is null and s.__cdc_deleted_at < " ~ auto_cdc.seconds_ago(cfg.tombstone_retention) -%}
  with
  {{ auto_cdc.watermark_ctes(cfg, arg_dict.batch, arg_dict.runs) }},

  batch_keys as (
    {#- One row per key: its latest upsert, latest delete and, per column, the latest value
        written (with partial updates: the latest event that wrote that column). -#}
    select {{ auto_cdc.quoted_list(keys) }},
      {{ auto_cdc.seq_select('__cdc_seq', '__bu', n, "__cdc_op = 'upsert'", over='w_upsert') }},
      {{ auto_cdc.seq_select('__cdc_seq', '__bd', n, "__cdc_op = 'delete'", over='w_delete') }},
      {%- for column in columns %}
      {%- set window = ('w_' ~ loop.index) if cfg.partial else 'w_upsert' %}
      first_value(case when {{ auto_cdc.writes_column(cfg, column) }} then {{ auto_cdc.quote_identifier(column) }} end) over {{ window }} as __bv_{{ loop.index }},
      {%- if cfg.partial %}
      {{ auto_cdc.seq_select('__cdc_seq', '__bs_' ~ loop.index, n, auto_cdc.writes_column(cfg, column), over=window) }},
      {%- endif %}
      {%- endfor %}
      row_number() over w_upsert as __rn
    from {{ arg_dict.batch }}
    where __cdc_op <> 'truncate'
    window
      w_upsert as ({{ partition }} order by case when __cdc_op = 'upsert' then 0 else 1 end, {{ seq_desc }}),
      w_delete as ({{ partition }} order by case when __cdc_op = 'delete' then 0 else 1 end, {{ seq_desc }})
      {%- if cfg.partial %}
      {%- for column in columns %},
      w_{{ loop.index }} as ({{ partition }} order by case when {{ auto_cdc.writes_column(cfg, column) }} then 0 else 1 end, {{ seq_desc }})
      {%- endfor %}
      {%- endif %}
  ),

  affected as (
    select {{ auto_cdc.quoted_list(keys) }} from batch_keys where __rn = 1
    {%- if arg_dict.truncating %}
    {#- A truncate newer than what a stored row (or, with partial updates, one of its columns)
        holds clears it. Only when a truncate advances does this touch the whole state. #}
    union
    select {{ auto_cdc.quoted_list(keys, 's.') }}
    from {{ arg_dict.state }} as s
    cross join watermark as w
    where {{ auto_cdc.seq_older('__cdc_upsert_seq', '__t', n, 's', 'w') }}
      {%- if cfg.partial %}
      {%- for column in columns %}
      or {{ auto_cdc.seq_older(auto_cdc.column_seq_prefix(column), '__t', n, 's', 'w') }}
      {%- endfor %}
      {%- endif %}
    {%- endif %}
  ),

  joined as (
    select {{ auto_cdc.quoted_list(keys, 'a.') }},
      {{ auto_cdc.seq_select('__bu', '__bu', n, alias='b') }},
      {{ auto_cdc.seq_select('__bd', '__bd', n, alias='b') }},
      {{ auto_cdc.seq_select('__cdc_upsert_seq', '__su', n, alias='s') }},
      {#- A tombstone past its retention is forgotten: late upserts pass it again. -#}
      {{ auto_cdc.seq_select('__cdc_delete_seq', '__sd', n, 'not (' ~ expired ~ ')', alias='s') }},
      s.__cdc_deleted_at as __sdat,
      {{ auto_cdc.seq_select('__t', '__t', n, alias='w') }},
      t.{{ auto_cdc.quote_identifier(keys[0]) }} is not null as __was_present
      {%- for column in columns %},
      b.__bv_{{ loop.index }},
      t.{{ auto_cdc.quote_identifier(column) }} as __tv_{{ loop.index }}
      {%- if cfg.partial %},
      {{ auto_cdc.seq_select('__bs_' ~ loop.index, '__bs_' ~ loop.index, n, alias='b') }},
      {{ auto_cdc.seq_select(auto_cdc.column_seq_prefix(column), '__ss_' ~ loop.index, n, alias='s') }}
      {%- endif %}
      {%- endfor %}
    from affected as a
    left join batch_keys as b on {{ auto_cdc.keys_match(keys, 'a', 'b') }} and b.__rn = 1
    left join {{ arg_dict.state }} as s on {{ auto_cdc.keys_match(keys, 'a', 's') }}
    left join {{ arg_dict.target }} as t on {{ auto_cdc.keys_match(keys, 'a', 't') }}
    cross join watermark as w
  ),

  merged as (
    {#- __d: the newest delete; __u: the newest upsert (the batch wins a tie: a replay replaces). -#}
    select *,
      {{ auto_cdc.seq_greatest('__sd', '__bd', n, '__d') }},
      {{ auto_cdc.seq_greatest('__bu', '__su', n, '__u') }}
    from joined
  ),

  barred as (
    {#- __x: nothing written before it survives (the newest delete or truncate). -#}
    select *, {{ auto_cdc.seq_greatest('__d', '__t', n, '__x') }}
    from merged
  ),

  resolved as (
    select *,
      {{ auto_cdc.seq_cmp('__u', '__x', n, '>=') }} as __present,
      {{ auto_cdc.seq_cmp('__bu', '__su', n, '>=') }} as __from_batch
      {%- if cfg.partial %}
      {%- for column in columns %}
      {%- set i = loop.index %},
      ({{ auto_cdc.seq_cmp('__bs_' ~ i, '__x', n, '>=') }} and (not {{ auto_cdc.seq_cmp('__ss_' ~ i, '__x', n, '>=') }} or {{ auto_cdc.seq_cmp('__bs_' ~ i, '__ss_' ~ i, n, '>=') }})) as __bw_{{ i }},
      {{ auto_cdc.seq_cmp('__ss_' ~ i, '__x', n, '>=') }} as __sw_{{ i }}
      {%- endfor %}
      {%- endif %}
    from barred
  ),

  final as (
    select {{ auto_cdc.quoted_list(keys) }},
      __present, __was_present
      {%- for column in columns %}
      {%- set i = loop.index %},
      {%- if cfg.partial %}
      case when not __present then null when __bw_{{ i }} then __bv_{{ i }} when __sw_{{ i }} then __tv_{{ i }} end as {{ auto_cdc.quote_identifier(column) }},
      {%- for name in auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), n) %}
      {%- set p = auto_cdc.seq_names('', n)[loop.index0] %}
      case when not __present then null when __bw_{{ i }} then __bs_{{ i }}{{ p }} when __sw_{{ i }} then __ss_{{ i }}{{ p }} end as {{ name }},
      {%- endfor %}
      {%- else %}
      case when not __present then null when __from_batch then __bv_{{ i }} else __tv_{{ i }} end as {{ auto_cdc.quote_identifier(column) }},
      {%- endif %}
      __tv_{{ i }}
      {%- endfor %},
      {{ auto_cdc.seq_select('__u', '__cdc_upsert_seq', n, '__present') }},
      {%- set tombstone_live = auto_cdc.seq_cmp('__d', '__t', n, '>=') %}
      {{ auto_cdc.seq_select('__d', '__cdc_delete_seq', n, tombstone_live) }},
      case when {{ tombstone_live }} then
        case when {{ auto_cdc.seq_cmp('__bd', '__sd', n, '>') }} then {{ dbt.current_timestamp() }} else __sdat end
      end as __cdc_deleted_at
    from resolved
  )

  select final.*,
    case
      when __was_present and not __present then 'delete'
      when __present and not __was_present then 'insert'
      {%- if columns %}
      when __present and ({% for column in columns %}{{ auto_cdc.comparable(cfg, column) }} is distinct from {{ auto_cdc.compared(cfg, column, '__tv_' ~ loop.index) }}{{ ' or ' if not loop.last }}{% endfor %}) then 'update'
      {%- endif %}
      else 'none'
    end as __cdc_action
  from final
{%- endmacro %}
