-- Rows that differ between the model and the SPEC 7.4 table (the test fails on any).
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_history_names'), ref('expected_users_history_names')) }}
