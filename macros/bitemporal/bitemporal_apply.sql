{#- Bitemporal: the system-versioned history of the SCD2 history. For every touched key, H(t)
    (its SCD2 rows from the events known at system time t) is computed at each of the key's
    system times (scd2_history_sql); a row of H gets one target row per unbroken stretch of
    system times it belongs to, from the first to the next system time it is missing at. Only
    differences with the target are written. -#}

{% macro bitemporal_changes_sql(arg_dict) -%}
  {{ return(adapter.dispatch('bitemporal_changes_sql', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__bitemporal_changes_sql(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set keys = cfg.key_columns -%}
  {%- set key_list = auto_cdc.quoted_list(keys) -%}
  {%- set row_identity = auto_cdc.quoted_list(keys + cfg.value_columns) ~ ', __cdc_start, __cdc_end' -%}
  {%- set start = auto_cdc.quote_identifier('__START_AT') -%}
  {%- set end = auto_cdc.quote_identifier('__END_AT') -%}
  {%- set system_start = auto_cdc.quote_identifier('__SYSTEM_START_AT') -%}
  {%- set system_end = auto_cdc.quote_identifier('__SYSTEM_END_AT') -%}
  with
  system_times as (
    {#- Every system time of a touched key, numbered in order. #}
    select distinct {{ key_list }}, __cdc_asof, dense_rank() over (partition by {{ key_list }} order by __cdc_asof) as __cdc_i
    from {{ arg_dict.history }}
  ),

  rows_seen as (
    {#- The rows of H(t) at each system time t. #}
    select {{ auto_cdc.quoted_list(keys, 'h.') }}
      {%- for column in cfg.value_columns %}, {{ auto_cdc.comparable(cfg, column, 'h.') }} as {{ auto_cdc.quote_identifier(column) }}{% endfor %},
      {{ auto_cdc.seq_value('h.__start', cfg) }} as __cdc_start,
      {{ auto_cdc.seq_value('h.__next', cfg) }} as __cdc_end,
      t.__cdc_i
    from {{ arg_dict.history }} as h
    join system_times as t on {{ auto_cdc.keys_match(keys, 't', 'h') }} and t.__cdc_asof = h.__cdc_asof
    where h.__tail
  ),

  stretches as (
    {#- Consecutive system times at which the same row is seen (gaps and islands). #}
    select {{ row_identity }}, min(__cdc_i) as __cdc_first, max(__cdc_i) as __cdc_last
    from (
      select *, __cdc_i - row_number() over (partition by {{ row_identity }} order by __cdc_i) as __cdc_island
      from rows_seen
    ) as numbered
    group by {{ row_identity }}, __cdc_island
  ),

  desired as (
    {#- Values grouped through their text form (comparable) get their type back. #}
    select {{ auto_cdc.quoted_list(keys, 's.') }}
      {%- for column in cfg.value_columns %},
      {% if column in cfg.compared_as_text %}cast(s.{{ auto_cdc.quote_identifier(column) }} as {{ cfg.compared_as_text[column] }}){% else %}s.{{ auto_cdc.quote_identifier(column) }}{% endif %} as {{ auto_cdc.quote_identifier(column) }}
      {%- endfor %},
      s.__cdc_start as {{ start }}, s.__cdc_end as {{ end }},
      f.__cdc_asof as {{ system_start }}, l.__cdc_asof as {{ system_end }}
    from stretches as s
    join system_times as f on {{ auto_cdc.keys_match(keys, 'f', 's') }} and f.__cdc_i = s.__cdc_first
    left join system_times as l on {{ auto_cdc.keys_match(keys, 'l', 's') }} and l.__cdc_i = s.__cdc_last + 1
  ),

  current_rows as (
    select t.*
    from {{ arg_dict.target }} as t
    where exists (select 1 from (select distinct {{ key_list }} from system_times) as k where {{ auto_cdc.keys_match(keys, 'k', 't') }})
  )

  select
    {%- for column in keys + ['__START_AT', '__SYSTEM_START_AT'] %}
    coalesce(d.{{ auto_cdc.quote_identifier(column) }}, c.{{ auto_cdc.quote_identifier(column) }}) as {{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    {%- for column in cfg.value_columns + ['__END_AT', '__SYSTEM_END_AT'] %}
    d.{{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    case
      when d.{{ auto_cdc.quote_identifier(keys[0]) }} is null then 'delete'
      when c.{{ auto_cdc.quote_identifier(keys[0]) }} is null then 'insert'
      when false
        {%- for column in cfg.value_columns + ['__END_AT', '__SYSTEM_END_AT'] %}
        or {{ auto_cdc.comparable(cfg, column, 'd.') if column in cfg.value_columns else 'd.' ~ auto_cdc.quote_identifier(column) }}
          is distinct from {{ auto_cdc.comparable(cfg, column, 'c.') if column in cfg.value_columns else 'c.' ~ auto_cdc.quote_identifier(column) }}
        {%- endfor %} then 'update'
      else 'none'
    end as __cdc_action
  from desired as d
  full outer join current_rows as c
    on {{ auto_cdc.keys_match(keys, 'd', 'c') }} and d.{{ start }} = c.{{ start }} and d.{{ system_start }} = c.{{ system_start }}
{%- endmacro %}


{% macro bitemporal_apply_statements(arg_dict) -%}
  {{ return(adapter.dispatch('bitemporal_apply_statements', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__bitemporal_apply_statements(arg_dict) -%}
  {#- Target rows by identity (keys, __START_AT, __SYSTEM_START_AT); then the new events join
      the stored ones (a redelivered key, sequence and system sequence replaces its copy).
      Every event stays: any later system time may need the whole history again. -#}
  {%- set cfg = arg_dict.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {%- set changes = arg_dict.changes -%}
  {%- set target = arg_dict.target -%}
  {%- set identity_columns = ['__START_AT', '__SYSTEM_START_AT'] -%}
  {%- set identity = auto_cdc.keys_match(keys + identity_columns, 't', 'c') -%}
  {%- set changed_columns = cfg.value_columns + ['__END_AT', '__SYSTEM_END_AT'] -%}
  {%- set row_columns = auto_cdc.quoted_list(keys + identity_columns + changed_columns) -%}
  {%- set assignments = [] -%}
  {%- for column in changed_columns -%}
    {%- do assignments.append(auto_cdc.quote_identifier(column) ~ ' = c.' ~ auto_cdc.quote_identifier(column)) -%}
  {%- endfor -%}
  {%- set flags = [] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}{%- do flags.append(auto_cdc.event_flag(column)) -%}{%- endfor -%}
  {%- for column in cfg.get('known_columns', []) -%}{%- do flags.append(auto_cdc.event_known(column)) -%}{%- endfor -%}
  {%- set event_columns = auto_cdc.quoted_list(keys) ~ ', ' ~ (auto_cdc.seq_names('__cdc_seq', n) | join(', ')) ~ ', __cdc_op, __cdc_sys'
        ~ (', ' ~ auto_cdc.quoted_list(cfg.value_columns) if cfg.value_columns else '')
        ~ (', ' ~ (flags | join(', ')) if flags else '') ~ ', __cdc_arrived_at' -%}
  {{ return([
    'delete from ' ~ target ~ ' as t using ' ~ changes ~ ' as c where ' ~ identity ~ " and c.__cdc_action = 'delete'",
    'update ' ~ target ~ ' as t set ' ~ (assignments | join(', ')) ~ ' from ' ~ changes ~ ' as c where ' ~ identity ~ " and c.__cdc_action = 'update'",
    'insert into ' ~ target ~ ' (' ~ row_columns ~ ') select ' ~ row_columns ~ ' from ' ~ changes ~ " where __cdc_action = 'insert'",
    'delete from ' ~ arg_dict.events ~ ' as e using (' ~ auto_cdc.scd2_new_events_sql(cfg, arg_dict.batch) ~ ') as n where '
      ~ auto_cdc.keys_match(keys, 'e', 'n') ~ ' and ' ~ auto_cdc.seq_row('__cdc_seq', n, 'e') ~ ' = ' ~ auto_cdc.seq_row('__cdc_seq', n, 'n')
      ~ ' and e.__cdc_sys = n.__cdc_sys',
    'insert into ' ~ arg_dict.events ~ ' (' ~ event_columns ~ ') select ' ~ event_columns ~ ' from (' ~ auto_cdc.scd2_new_events_sql(cfg, arg_dict.batch) ~ ') as n',
  ]) }}
{%- endmacro %}
