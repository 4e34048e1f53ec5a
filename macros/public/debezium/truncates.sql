{#- Debezium, truncates for SCD2 and bitemporal targets. In: `dbz_events` (placeholders.sql).
    Out: the final select of debezium()'s query, each truncate (`t`) replaced by deletes. With
    truncates='apply' (SCD1's default) debezium.sql keeps the truncates as events for
    apply_as_truncates, and this file is not used. -#}

{% macro _debezium_truncates_as_deletes_sql(spec, earlier_truncates=none) -%}
  {#- SCD2 and bitemporal targets cannot apply a truncate: it becomes a delete, at its sequence,
      of every key with an event before it in the landed table (a key only seen after it is
      untouched). Each such delete carries the truncate's extra columns or, when later, the
      earliest of the key's events before it: with a checkpoint column it is read in the run that
      first knows both. A run that reads only the new rows (checkpoint.sql) has no truncate among
      them; the truncates before them (`earlier_truncates`, when there are any) then close the
      keys of late events. -#}
  {%- set keys = [] -%}
  {%- for column in spec.key_columns -%}{%- do keys.append(auto_cdc.quote_identifier(column.name)) -%}{%- endfor -%}
  , dbz_truncates as {{ auto_cdc.materialized_cte() }} (
    select * from {{ earlier_truncates or 'dbz_events' }} where _dbz_op = 't'
  ),
  dbz_truncated_keys as (
    select
      {%- for key in keys %}
      e.{{ key }},
      {%- endfor %}
      t._dbz_sequence,
      t._dbz_committed_at
      {%- for name in spec.extra_columns -%}
      {%- set quoted = auto_cdc.quote_identifier(name) %},
      greatest(t.{{ quoted }}, min(e.{{ quoted }})) as {{ quoted }}
      {%- endfor %}
    from dbz_events as e
    inner join dbz_truncates as t on e._dbz_sequence < t._dbz_sequence
    where e._dbz_op <> 't'
    group by {% for key in keys %}e.{{ key }}, {% endfor %}t._dbz_sequence, t._dbz_committed_at
      {%- for name in spec.extra_columns %}, t.{{ auto_cdc.quote_identifier(name) }}{% endfor %}
  )
  select * from dbz_events where _dbz_op <> 't'
  union all
  select
    {%- for column in spec.columns %}
    {{ 'k.' ~ auto_cdc.quote_identifier(column.name) if column.is_key else 'null' }},
    {%- endfor %}
    'd',
    k._dbz_sequence,
    null,
    k._dbz_committed_at
    {%- for name in spec.extra_columns %},
    k.{{ auto_cdc.quote_identifier(name) }}
    {%- endfor %}
  from dbz_truncated_keys as k
{%- endmacro %}
