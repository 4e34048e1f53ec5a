-- Rows that differ between the model and the SPEC 7.2 table (the test fails on any).
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_truncated'), ref('expected_users_scd1_truncated')) }}
