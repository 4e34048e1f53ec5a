-- SPEC 7.5, dated files through the Python version function: the same table as from the file names.
{{ config(enabled=(target.type == 'duckdb' and not dbt_version.startswith('2.'))) }}
{{ auto_cdc_integration_tests.symmetric_difference(ref('users_from_snapshot_function'), ref('expected_user_snapshot_files_history')) }}
