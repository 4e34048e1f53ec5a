-- The version query gives the same SPEC 7.5 SCD2 table.
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_by_version_query'), ref('expected_user_snapshots_history')) }}
