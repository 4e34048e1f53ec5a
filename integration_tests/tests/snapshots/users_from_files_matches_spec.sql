-- SPEC 7.5, dated files: the SCD2 table with versions 1 and 2 and without key 6.
{{ config(enabled=(target.type == 'duckdb')) }}
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_from_files'), ref('expected_user_snapshot_files_history')) }}
