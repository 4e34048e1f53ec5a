{#- Generic tests for SCD type 2 targets, for users' properties YAML:

      models:
        - name: users_history
          data_tests:
            - auto_cdc.scd2_no_overlapping_intervals: {arguments: {keys: [userId]}}
            - auto_cdc.scd2_one_current_row: {arguments: {keys: [userId]}}

    Each returns the offending rows; no rows means the test passes. -#}

{% test scd2_no_overlapping_intervals(model, keys) %}
  {#- Per key, every interval is non-empty and ends at or before the next one starts; only the
      last one may be open. -#}
  {%- set keys = [keys] if keys is string else keys -%}
  {%- set start = auto_cdc.quote_identifier('__START_AT') -%}
  {%- set end = auto_cdc.quote_identifier('__END_AT') -%}
  select *
  from (
    select {{ auto_cdc.quoted_list(keys) }}, {{ start }}, {{ end }},
      lead({{ start }}) over (partition by {{ auto_cdc.quoted_list(keys) }} order by {{ start }}) as next_start_at
    from {{ model }}
  ) as intervals
  where ({{ end }} is not null and {{ end }} <= {{ start }})
     or (next_start_at is not null and ({{ end }} is null or {{ end }} > next_start_at))
{% endtest %}


{% test scd2_one_current_row(model, keys) %}
  {#- At most one row per key with __END_AT IS NULL. -#}
  {%- set keys = [keys] if keys is string else keys -%}
  select {{ auto_cdc.quoted_list(keys) }}, count(*) as current_rows
  from {{ model }}
  where {{ auto_cdc.quote_identifier('__END_AT') }} is null
  group by {{ auto_cdc.quoted_list(keys) }}
  having count(*) > 1
{% endtest %}
