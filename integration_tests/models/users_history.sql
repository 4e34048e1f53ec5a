-- SPEC 7.3: the users change feed as SCD type 2 history.
{{ config(
    materialized='auto_cdc',
    meta={
        'stored_as_scd_type': 2,
        'keys': ['userId'],
        'sequence_by': 'sequenceNum',
        'apply_as_deletes': "operation = 'DELETE'",
        'except_column_list': ['operation', 'sequenceNum'],
    },
) }}

select * from {{ ref('users_cdf') }}
