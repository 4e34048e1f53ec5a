-- SPEC 7.1 again, with a change feed: each run also appends its net changes to
-- users_tracked__cdc_changes, which users_per_city consumes. `users_up_to_sequence` lets the
-- example apply the feed in two runs (tests/test_example_project.py).
{{ config(
    materialized='auto_cdc',
    meta={
        'keys': ['userId'],
        'sequence_by': 'sequenceNum',
        'apply_as_deletes': "operation = 'DELETE'",
        'except_column_list': ['operation', 'sequenceNum'],
        'change_feed': true,
    },
) }}

select * from {{ ref('users_cdf') }}
where "sequenceNum" <= {{ var('users_up_to_sequence', 999999) }}
