-- Backfill plus live feed (docs/flows.md): a dump at version 4 loaded once, then the SPEC 7.1
-- change feed. Events older than the dump lose to it (126 Lily, absent from the dump, is
-- deleted at 4); newer ones win (123's update and delete, 125 restored as Guadalajara).
{{ config(
    materialized='auto_cdc',
    meta={
        'keys': ['userId'],
        'sequence_by': 'sequenceNum',
        'apply_as_deletes': "operation = 'DELETE'",
        'except_column_list': ['operation', 'sequenceNum', 'dump_version'],
    },
) }}

{{ auto_cdc.flow('dump', ref('users_dump'), kind='snapshot', version='dump_version', once=true) }}
{{ auto_cdc.flow('cdc', ref('users_cdf')) }}
