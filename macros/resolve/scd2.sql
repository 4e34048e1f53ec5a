{#- Stage 6, resolve (SCD type 2). In: the history (resolve/scd2_history.sql) and the touched keys'
    target rows. Out: the rows the keys must have compared with the rows they have, with the
    action each difference needs. -#}

{% macro scd2_changes_sql(arg_dict) -%}
  {{ return(adapter.dispatch('scd2_changes_sql', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__scd2_changes_sql(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {%- set start = auto_cdc.quote_identifier('__START_AT') -%}
  {%- set end = auto_cdc.quote_identifier('__END_AT') -%}
  with
  touched as (
    select distinct {{ auto_cdc.quoted_list(keys) }} from {{ arg_dict.history }}
  ),

  desired as (
    select {{ auto_cdc.quoted_list(keys + cfg.value_columns) }},
      {{ auto_cdc.seq_value('__start', cfg) }} as {{ start }},
      {{ auto_cdc.seq_value('__next', cfg) }} as {{ end }}
    from {{ arg_dict.history }}
    where __tail
  ),

  current_rows as (
    select {{ auto_cdc.quoted_list(keys + cfg.value_columns, 't.') }}, t.{{ start }}, t.{{ end }}
    from {{ arg_dict.target }} as t
    where exists (select 1 from touched as k where {{ auto_cdc.keys_match(keys, 'k', 't') }})
  )

  select
    {%- for key in keys %}
    coalesce(d.{{ auto_cdc.quote_identifier(key) }}, c.{{ auto_cdc.quote_identifier(key) }}) as {{ auto_cdc.quote_identifier(key) }},
    {%- endfor %}
    coalesce(d.{{ start }}, c.{{ start }}) as {{ start }},
    {%- for column in cfg.value_columns %}
    d.{{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    d.{{ end }},
    case
      when d.{{ auto_cdc.quote_identifier(keys[0]) }} is null then 'delete'
      when c.{{ auto_cdc.quote_identifier(keys[0]) }} is null then 'insert'
      when d.{{ end }} is distinct from c.{{ end }}
        {%- for column in cfg.value_columns %}
        or {{ auto_cdc.comparable(cfg, column, 'd.') }} is distinct from {{ auto_cdc.comparable(cfg, column, 'c.') }}
        {%- endfor %} then 'update'
      else 'none'
    end as __cdc_action
  from desired as d
  full outer join current_rows as c
    on {{ auto_cdc.keys_match(keys, 'd', 'c') }} and d.{{ start }} = c.{{ start }}
{%- endmacro %}
