{#- dbt model contracts: the contract describes the target table, not the model query (the
    query is a change feed; the target holds the written columns and, for SCD2, the validity
    columns). Checked before anything is written; constraints are created with the table. -#}

{% macro contract_enforced() -%}
  {%- set contract = config.get('contract') -%}
  {{ return(contract is not none and contract.enforced is sameas true) }}
{%- endmacro %}


{% macro period_columns(cfg) -%}
  {#- The validity columns an SCD2 / bitemporal target adds to the written columns, as
      (name, its value over the batch, the batch column its type follows). -#}
  {%- if cfg.scd_type == '1' -%}{{ return([]) }}{%- endif -%}
  {%- set sequence = auto_cdc.seq_value('__cdc_seq', cfg) -%}
  {%- set columns = [('__START_AT', sequence), ('__END_AT', sequence)] -%}
  {%- if cfg.system_expr -%}
    {%- do columns.extend([('__SYSTEM_START_AT', '__cdc_sys'), ('__SYSTEM_END_AT', '__cdc_sys')]) -%}
  {%- endif -%}
  {{ return(columns) }}
{%- endmacro %}


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


{% macro create_target_sql(cfg, batch, target) -%}
  {#- The empty target. Under a contract: the contract's column definitions and constraints
      (the types were checked to match), plus the validity columns it does not declare. -#}
  {%- if not auto_cdc.contract_enforced() -%}
    create table {{ target }} as
    select {{ auto_cdc.quoted_list(cfg.written_columns) }}
    {%- for name, value in auto_cdc.period_columns(cfg) %}, {{ value }} as {{ auto_cdc.quote_identifier(name) }}{% endfor %}
    from {{ batch }} where 1 = 0
  {%- else -%}
    {%- set declared = model.columns.values() | map(attribute='name') | map('lower') | list -%}
    {%- set definitions = adapter.render_raw_columns_constraints(raw_columns=model['columns']) -%}
    {%- for name, value in auto_cdc.period_columns(cfg) if name | lower not in declared -%}
      {%- do definitions.append(auto_cdc.quote_identifier(name) ~ ' ' ~ auto_cdc.column_type_of(batch, value)) -%}
    {%- endfor -%}
    create table {{ target }} (
      {{ (definitions + adapter.render_raw_model_constraints(raw_constraints=model['constraints'])) | join(',\n      ') }}
    )
  {%- endif -%}
{%- endmacro %}


{% macro column_type_of(relation, expr) -%}
  {#- The exact SQL type of `expr` over `relation`, for a column definition. -#}
  {{ return(adapter.dispatch('column_type_of', 'auto_cdc')(relation, expr)) }}
{%- endmacro %}

{% macro default__column_type_of(relation, expr) -%}
  {{ return(run_query('select typeof(' ~ expr ~ ') from (select 1 as __cdc_one) as one left join (select * from ' ~ relation
                      ~ ' limit 0) as r on true').rows[0][0]) }}
{%- endmacro %}

{% macro postgres__column_type_of(relation, expr) -%}
  {{ return(run_query('select pg_typeof(' ~ expr ~ ')::text from (select 1 as __cdc_one) as one left join (select * from ' ~ relation
                      ~ ' limit 0) as r on true').rows[0][0]) }}
{%- endmacro %}
