-- The latest run of each model, and its events read and ignored over the last day (docs/monitoring.md).
{{ config(materialized='view') }}

with runs as (
    select * from {{ ref('cdc_runs') }}
),

latest as (
    select *, row_number() over (partition by model_name order by run_id desc) as recency
    from runs
),

last_day as (
    select model_name, sum(num_events) as events_read, sum(num_ignored_events) as events_ignored
    from runs
    where applied_at >= {{ dbt.dateadd('day', -1, dbt.current_timestamp()) }}
    group by model_name
)

select
    latest.model_name,
    latest.applied_at as last_run_at,
    latest.lag_s,
    latest.duration_s,
    latest.num_live_tombstones,
    coalesce(last_day.events_read, 0) as events_read,
    coalesce(last_day.events_ignored, 0) as events_ignored
from latest
left join last_day on last_day.model_name = latest.model_name
where latest.recency = 1
