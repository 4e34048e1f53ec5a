-- What did we believe at 12:22 about 12:10? XFv1: the out-of-order XFv3 arrived at 12:25.
{{ config(materialized='view') }}

{{ auto_cdc.as_of(ref('company_history'),
                  business_time="cast('2025-07-18 12:10:00' as timestamp)",
                  system_time="cast('2025-07-18 12:22:00' as timestamp)") }}
