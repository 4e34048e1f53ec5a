-- SPEC 7.5: the same snapshots as SCD type 1: the latest snapshot, with deleted keys gone.
{{ config(
    materialized='auto_cdc_from_snapshot',
    meta={
        'stored_as_scd_type': 1,
        'keys': ['userId'],
        'snapshot_version_column': 'version',
    },
) }}

select * from {{ ref('user_snapshots') }}
