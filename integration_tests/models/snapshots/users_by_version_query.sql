-- SPEC 7.5 with Databricks' WITH VERSION: the version query picks the next version above the last
-- one processed; the model query reads that snapshot. Repeated until no version is left. The
-- query string is rendered when the model runs.
{{ config(
    materialized='auto_cdc_from_snapshot',
    meta={
        'stored_as_scd_type': 2,
        'keys': ['userId'],
        'snapshot_version_query': "
          select distinct version from {{ ref('user_snapshots') }}
          where not exists (select 1 from {{ auto_cdc.last_snapshot_version() }})
             or version > (select version from {{ auto_cdc.last_snapshot_version() }})
          order by version
          limit 1",
    },
) }}

select "userId", city
from {{ ref('user_snapshots') }}
where version = (select version from {{ auto_cdc.current_snapshot_version() }})
