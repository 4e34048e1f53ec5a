{#- Debezium, the dialect of JSON access: a landed value as JSON, an object's member as JSON or
    as text, an array's element as text. In: SQL expressions. Out: SQL expressions, for
    forms.sql (the envelope) and ordering.sql (PostgreSQL's source.sequence). Dispatched: the
    default is PostgreSQL's (jsonb); DuckDB's variants are in adapters/duckdb.sql, Spark's in
    adapters/spark/debezium.sql. -#}

{% macro debezium_struct_columns(relation) -%}
  {#- The landed table's columns that are structs, each with its fields' types ({column: {field:
      type}}, lower case): a sink that writes the envelope typed lands before, after and source
      so on Spark. Elsewhere sinks land JSON: none. -#}
  {{ return(adapter.dispatch('debezium_struct_columns', 'auto_cdc')(relation)) }}
{%- endmacro %}

{% macro default__debezium_struct_columns(relation) -%}
  {{ return({}) }}
{%- endmacro %}


{% macro debezium_struct_field_sql(field, data_type) -%}
  {#- A struct's field (of `data_type`) as text that a cast to the column's type reads back. -#}
  {{ return(adapter.dispatch('debezium_struct_field_sql', 'auto_cdc')(field, data_type)) }}
{%- endmacro %}

{% macro default__debezium_struct_field_sql(field, data_type) -%}
  {{ return('cast(' ~ field ~ ' as ' ~ dbt.type_string() ~ ')') }}
{%- endmacro %}


{% macro debezium_json_sql(expr) -%}
  {{ return(adapter.dispatch('debezium_json_sql', 'auto_cdc')(expr)) }}
{%- endmacro %}

{% macro default__debezium_json_sql(expr) -%}
  {#- A json, jsonb or text column as jsonb (a no-op for jsonb). -#}
  {{ return('cast(' ~ expr ~ ' as jsonb)') }}
{%- endmacro %}


{% macro debezium_member_sql(doc, key) -%}
  {{ return(adapter.dispatch('debezium_member_sql', 'auto_cdc')(doc, key)) }}
{%- endmacro %}

{% macro default__debezium_member_sql(doc, key) -%}
  {#- A member of a JSON object, as JSON; NULL when absent. -#}
  {{ return(doc ~ ' -> ' ~ auto_cdc.string_literal(key)) }}
{%- endmacro %}


{% macro debezium_field_sql(doc, key) -%}
  {{ return(adapter.dispatch('debezium_field_sql', 'auto_cdc')(doc, key)) }}
{%- endmacro %}

{% macro default__debezium_field_sql(doc, key) -%}
  {#- A member of a JSON object, as text (a string unquoted); NULL when absent or JSON null. -#}
  {{ return('(' ~ doc ~ ' ->> ' ~ auto_cdc.string_literal(key) ~ ')') }}
{%- endmacro %}


{% macro debezium_element_sql(doc, index) -%}
  {{ return(adapter.dispatch('debezium_element_sql', 'auto_cdc')(doc, index)) }}
{%- endmacro %}

{% macro default__debezium_element_sql(doc, index) -%}
  {{ return('(' ~ doc ~ ' ->> ' ~ index ~ ')') }}
{%- endmacro %}
