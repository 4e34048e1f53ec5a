-- SPEC 7.4: SCD type 2 that keeps history for name changes only (city updates in place).
{{ config(
    materialized='auto_cdc',
    meta={
        'stored_as_scd_type': 2,
        'keys': ['userId'],
        'sequence_by': 'sequenceNum',
        'apply_as_deletes': "operation = 'DELETE'",
        'except_column_list': ['operation', 'sequenceNum'],
        'track_history_except_column_list': ['city'],
    },
) }}

select * from {{ ref('users_cdf') }}
