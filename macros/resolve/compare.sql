{#- Stage 6, resolve (SCD type 2 and bitemporal): desired against current. In: CTEs `touched`
    (the keys the batch touches) and `desired` (the rows they must have, in the target's
    layout). Out: the final select of the changes: per row identity, the desired row and the
    action (`__cdc_action`) that gets the target there; only differences are written. -#}

{% macro compare_with_target_sql(cfg, target, open_rows_only=false) -%}
  {#- `open_rows_only`: `desired` covers only each key's open row and what follows it (SCD2 from
      snapshots), so the closed rows are left out rather than read as rows to delete. -#}
  {%- set layout = auto_cdc.target_layout(cfg) -%}
  {%- set first_key = auto_cdc.quote_identifier(cfg.key_columns[0]) -%}
  current_rows as (
    select {{ auto_cdc.quoted_list(layout.identity + layout.updated, 't.') }}
    from {{ target }} as t
    where exists (select 1 from touched as k where {{ auto_cdc.keys_match(cfg.key_columns, 'k', 't') }})
    {%- if open_rows_only %}
      and t.{{ auto_cdc.quote_identifier('__END_AT') }} is null
    {%- endif %}
  )

  select
    {%- for column in layout.identity %}
    coalesce(d.{{ auto_cdc.quote_identifier(column) }}, c.{{ auto_cdc.quote_identifier(column) }}) as {{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    {%- for column in layout.updated %}
    d.{{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    case
      {#- Keys are never NULL (validated), so a NULL key marks the side that lacks the row. #}
      when d.{{ first_key }} is null then 'delete'
      when c.{{ first_key }} is null then 'insert'
      when false
        {%- for column in layout.updated %}
        or {{ auto_cdc.comparable(cfg, column, 'd.') }} is distinct from {{ auto_cdc.comparable(cfg, column, 'c.') }}
        {%- endfor %} then 'update'
      else 'none'
    end as __cdc_action
  from desired as d
  full outer join current_rows as c on {{ auto_cdc.keys_match(layout.identity, 'd', 'c') }}
{%- endmacro %}
