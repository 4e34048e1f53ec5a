-- Rows that differ between the model and the SPEC 7.5 SCD2 table (the test fails on any).
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_from_snapshots'), ref('expected_user_snapshots_history')) }}
