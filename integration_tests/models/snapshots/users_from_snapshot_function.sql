-- SPEC 7.5 with a Python version function (python/user_snapshots.py), through the auto_cdc
-- plugin of dbt-duckdb (see profiles.yml).
{{ config(
    materialized='auto_cdc_from_snapshot',
    enabled=(target.type == 'duckdb' and not dbt_version.startswith('2.')),
    meta={
        'stored_as_scd_type': 2,
        'keys': ['userId'],
        'snapshot_version_function': 'user_snapshots:next_snapshot_and_version',
    },
) }}

select * from {{ auto_cdc.current_snapshot() }}
