-- Rows that differ between the backfilled model and the dump-plus-feed result (the test fails on any).
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_backfilled'), ref('expected_users_backfilled')) }}
