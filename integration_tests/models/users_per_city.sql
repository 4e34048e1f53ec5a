-- Users per city, kept exact without rescanning users_tracked: each run adds the changes it
-- has not consumed yet (an insert or postimage counts +1, a delete or preimage -1) to the
-- counts it has. `_run_id` is how auto_cdc.changes() knows where this model stopped.
-- `merge` updates a city's row in place on every adapter (dbt-spark's default strategy, append,
-- ignores unique_key and would add a second row); Spark's merge needs an Iceberg table.
{{ config(materialized='incremental', unique_key='city', incremental_strategy='merge', file_format='iceberg') }}

with changes as (
    {{ auto_cdc.changes(ref('users_tracked')) }}
),

deltas as (
    select
        city,
        sum(case when _change_type in ('insert', 'update_postimage') then 1 else -1 end) as delta,
        max(_run_id) as _run_id
    from changes
    group by city
)

select
    d.city,
    {% if is_incremental() %}coalesce(t.users, 0) + {% endif %}d.delta as users,
    d._run_id
from deltas as d
{% if is_incremental() %}
left join {{ this }} as t on t.city = d.city
{% endif %}
