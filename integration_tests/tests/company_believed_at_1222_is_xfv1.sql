-- The point-in-time helper answers "what did we believe at 12:22 about 12:10": XFv1 only.
select * from {{ ref('company_believed_at_1222') }} where datapoints <> 'XFv1'
union all
select * from {{ ref('company_believed_at_1222') }} where (select count(*) from {{ ref('company_believed_at_1222') }}) <> 1
