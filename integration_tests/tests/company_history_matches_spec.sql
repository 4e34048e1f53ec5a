-- Rows that differ between the model and the SPEC 7.6 table (the test fails on any).
{{ auto_cdc_integration_tests.symmetric_difference(ref('company_history'), ref('expected_company_history')) }}
