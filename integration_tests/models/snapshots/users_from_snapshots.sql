-- SPEC 7.5: snapshots A (version 0) and B (version 1) as SCD type 2 history. Both snapshots are
-- in the seed, tagged by `version`; one run applies them in order, as two runs would.
{{ config(
    materialized='auto_cdc_from_snapshot',
    meta={
        'stored_as_scd_type': 2,
        'keys': ['userId'],
        'snapshot_version_column': 'version',
    },
) }}

select * from {{ ref('user_snapshots') }}
