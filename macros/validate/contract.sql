{#- Stage 4, validation against a dbt model contract. In: `cfg` and the batch. Out: dbt's own
    column check of the target's shape (the contract describes the target, not the change
    feed: the written columns and, for SCD2, the validity columns it declares). -#}


{% macro enforce_contract(cfg, batch) -%}
  {#- With `contract: {enforced: true}` the target's columns and types must match the contract:
      the keys and written columns always, the validity columns when the contract declares
      them (auto_cdc adds them either way). dbt's own check, so the error reads as dbt's. -#}
  {%- if not auto_cdc.contract_enforced() -%}{{ return(none) }}{%- endif -%}
  {%- set declared = model.columns.values() | map(attribute='name') | map('lower') | list -%}
  {%- set shape -%}
    select {{ auto_cdc.quoted_list(cfg.written_columns) }}
    {%- for name, value in auto_cdc.period_columns(cfg) if name | lower in declared %}, {{ value }} as {{ auto_cdc.quote_identifier(name) }}{% endfor %}
    from {{ batch }}
  {%- endset -%}
  {%- do get_assert_columns_equivalent(shape) -%}
{%- endmacro %}
