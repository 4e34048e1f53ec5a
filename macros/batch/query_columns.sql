{#- Stage 3, batch: the model query's shape (or each flow's). In: the model query. Out: its columns and types, and
    which of them compare as text (types without a usable `=`); no rows are read. -#}

{% macro query_columns(sql, probe) -%}
  {#- (Not dbt's get_column_schema_from_query: it takes types from the driver's cursor
      description, which drops lengths and precision, and the catalog lookup below needs a
      relation.)
      The model query's columns, from an empty temp table (no rows are read): `columns` (names
      and types), `names`, and `compared_as_text`: the columns whose type has no usable
      equality operator, so comparisons go through their text form. -#}
  {%- set probed = adapter.dispatch('probe_query', 'auto_cdc')(sql, probe) -%}
  {{ return({'columns': probed.columns, 'names': probed.columns | map(attribute='name') | list, 'compared_as_text': probed.compared_as_text}) }}
{%- endmacro %}

{% macro default__probe_query(sql, probe) -%}
  {%- call statement('auto_cdc_probe') -%}
    {{ auto_cdc.temp_table_sql(probe, auto_cdc.no_rows_sql(sql)) }}
  {%- endcall -%}
  {%- set columns = adapter.get_columns_in_relation(probe) -%}
  {%- set compared_as_text = auto_cdc.columns_compared_as_text(probe) -%}
  {%- do auto_cdc.drop_temp_relations([probe]) -%}
  {{ return({'columns': columns, 'compared_as_text': compared_as_text}) }}
{%- endmacro %}


{% macro columns_compared_as_text(relation) -%}
  {{ return(adapter.dispatch('columns_compared_as_text', 'auto_cdc')(relation)) }}
{%- endmacro %}

{% macro default__columns_compared_as_text(relation) -%}
  {#- None where `=` is exact on every type (DuckDB's JSON, for one, is text). -#}
  {%- if not auto_cdc.capabilities().compares_every_type -%}
    {%- do auto_cdc.missing_hook('columns_compared_as_text', 'compares_every_type false') -%}
  {%- endif -%}
  {{ return({}) }}
{%- endmacro %}


{% macro no_rows_sql(sql) -%}
  select * from (
    {{ sql }}
  ) as src
  limit 0
{%- endmacro %}


{% macro flows_source(flows, probe) -%}
  {#- Each flow's columns (query_columns; no rows are read), and the columns of them all as
      query_columns gives them for one query: each named as the first flow that has it names it. -#}
  {%- set union = {'columns': [], 'names': [], 'compared_as_text': {}} -%}
  {%- set seen = [] -%}
  {%- for flow in flows -%}
    {%- set source = auto_cdc.query_columns(flow.sql, probe) -%}
    {%- do flow.update({'source': source}) -%}
    {%- for column in source.columns -%}
      {#- Tested in the body: dbt v2 evaluates a `for ... if` filter before the loop runs. -#}
      {%- if column.name | lower not in seen -%}
        {%- do seen.append(column.name | lower) -%}
        {%- do union.columns.append(column) -%}
        {%- do union.names.append(column.name) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do union.compared_as_text.update(source.compared_as_text) -%}
  {%- endfor -%}
  {{ return(union) }}
{%- endmacro %}
