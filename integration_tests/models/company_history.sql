-- SPEC 7.6: a company's datapoints with business time (bt) and system time (st).
{{ config(
    materialized='auto_cdc',
    meta={
        'stored_as_scd_type': 'bitemporal',
        'keys': ['CompanyId'],
        'sequence_by': 'bt',
        'system_sequence_by': 'st',
        'apply_as_deletes': "op = 'DELETE'",
        'except_column_list': ['bt', 'st', 'op'],
    },
) }}

select * from {{ ref('company_events') }}
