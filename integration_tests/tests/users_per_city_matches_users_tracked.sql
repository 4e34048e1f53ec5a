-- The incrementally maintained counts equal the same aggregate over the whole table (cities
-- whose users all left keep a row with 0).
with expected as (
    select city, count(*) as users from {{ ref('users_tracked') }} group by city
),

actual as (
    select city, users from {{ ref('users_per_city') }} where users <> 0
)

{{ auto_cdc_integration_tests.symmetric_difference('actual', 'expected') }}
