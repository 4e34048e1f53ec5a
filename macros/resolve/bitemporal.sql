{#- Stage 6, resolve (bitemporal). In: the history at every system time of the touched keys.
    Out: a row of H(t) gets one target row per unbroken stretch of system times it belongs to;
    compared with the target's rows, with the action each difference needs. -#}

{% macro bitemporal_changes_sql(run) -%}
  {{ return(adapter.dispatch('bitemporal_changes_sql', 'auto_cdc')(run)) }}
{%- endmacro %}

{% macro default__bitemporal_changes_sql(run) -%}
  {%- set cfg = run.cfg -%}
  {%- set keys = cfg.key_columns -%}
  {%- set key_list = auto_cdc.quoted_list(keys) -%}
  {%- set row_identity -%}{{ auto_cdc.quoted_list(keys + cfg.value_columns) }}, __cdc_start, __cdc_end{%- endset -%}
  {%- set start = auto_cdc.quote_identifier('__START_AT') -%}
  {%- set end = auto_cdc.quote_identifier('__END_AT') -%}
  {%- set system_start = auto_cdc.quote_identifier('__SYSTEM_START_AT') -%}
  {%- set system_end = auto_cdc.quote_identifier('__SYSTEM_END_AT') -%}
  with
  system_times as (
    {#- Every system time of a touched key, numbered in order. #}
    select distinct {{ key_list }}, __cdc_asof, dense_rank() over (partition by {{ key_list }} order by __cdc_asof) as __cdc_i
    from {{ run.history }}
  ),

  rows_seen as (
    {#- The rows of H(t) at each system time t. #}
    select {{ auto_cdc.quoted_list(keys, 'h.') }}
      {%- for column in cfg.value_columns %}, {{ auto_cdc.comparable(cfg, column, 'h.') }} as {{ auto_cdc.quote_identifier(column) }}{% endfor %},
      {{ auto_cdc.seq_value('h.__cdc_stretch_start', cfg) }} as __cdc_start,
      {{ auto_cdc.seq_value('h.__cdc_next_seq', cfg) }} as __cdc_end,
      t.__cdc_i
    from {{ run.history }} as h
    join system_times as t on {{ auto_cdc.keys_match(keys, 't', 'h') }} and t.__cdc_asof = h.__cdc_asof
    where h.__cdc_stretch_tail
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

  touched as (
    select distinct {{ key_list }} from system_times
  ),

  {{ auto_cdc.compare_with_target_sql(cfg, run.target) }}
{%- endmacro %}
