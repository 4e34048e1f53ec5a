-- One row per run of each of these auto_cdc models (docs/monitoring.md): what a dashboard reads.
{{ config(materialized='view') }}

select * from ({{ auto_cdc.run_history([ref('users'), ref('users_history'), ref('company_history'), ref('users_by_version_query')]) }}) as runs
