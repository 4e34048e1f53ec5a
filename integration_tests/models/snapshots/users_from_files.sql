-- SPEC 7.5 with dated files (DuckDB reads them): the version comes from the file name.
{{ config(
    materialized='auto_cdc_from_snapshot',
    enabled=(target.type == 'duckdb'),
    meta={
        'stored_as_scd_type': 2,
        'keys': ['userId'],
        'snapshot_version_column': 'version',
    },
) }}

select
  "userId",
  city,
  cast(regexp_extract(filename, 'snapshot_([0-9]+)[.]csv$', 1) as bigint) as version
from read_csv('data/user_snapshots/snapshot_*.csv', filename = true)
