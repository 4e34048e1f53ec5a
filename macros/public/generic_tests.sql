{#- Generic tests for SCD type 2 targets, and for any auto_cdc model's runs, for users' properties YAML:

      models:
        - name: users_history
          data_tests:
            - auto_cdc.scd2_no_overlapping_intervals: {arguments: {keys: [userId]}}
            - auto_cdc.scd2_one_current_row: {arguments: {keys: [userId]}}
            - auto_cdc.lag_under: {arguments: {seconds: 3600}}
            - auto_cdc.ignored_fraction_under: {arguments: {fraction: 0.05}}

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


{% test lag_under(model, seconds) %}
  {#- The model's latest run applied the source's changes within `seconds` of their commit
      (its run history's lag_s: commit_time_column). Returns that run when its lag is larger,
      or when it has none to check (no commit_time_column): a lag that cannot be measured
      does not pass. -#}
  select run_id, applied_at, max_commit_time, lag_s
  from ({{ auto_cdc._latest_runs_sql(model, 1) }}) as latest
  where lag_s is null or lag_s > {{ seconds }}
{% endtest %}


{% test ignored_fraction_under(model, fraction, last_runs=1) %}
  {#- None of the model's `last_runs` latest runs ignored more than `fraction` of the events it
      read (num_ignored_events: late, or older than what the state held). Returns those that did. -#}
  select run_id, applied_at, num_events, num_ignored_events
  from ({{ auto_cdc._latest_runs_sql(model, last_runs) }}) as latest
  where num_ignored_events > {{ fraction }} * num_events
{% endtest %}


{% macro _latest_runs_sql(model, count) -%}
  {#- The model's `count` latest runs, from its run history. -#}
  select * from {{ auto_cdc.state_relations(model).runs }} order by run_id desc limit {{ count | int }}
{%- endmacro %}
