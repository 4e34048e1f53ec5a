-- SPEC 7.1: the users change feed applied as SCD type 1.
{{ config(
    materialized='auto_cdc',
    meta={
        'keys': ['userId'],
        'sequence_by': 'sequenceNum',
        'apply_as_deletes': "operation = 'DELETE'",
        'apply_as_truncates': "operation = 'TRUNCATE'",
        'except_column_list': ['operation', 'sequenceNum'],
    },
) }}

select * from {{ ref('users_cdf') }}
