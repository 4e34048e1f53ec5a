-- SPEC 7.2: the same feed with a TRUNCATE at sequence 3.
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
union all
select cast(null as integer), cast(null as varchar), cast(null as varchar), 'TRUNCATE', 3
