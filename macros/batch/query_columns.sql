{#- Stage 3, batch: the model query's shape. In: the model query. Out: its columns and types, and
    which of them compare as text (types without a usable `=`); no rows are read. -#}

{% macro query_columns(sql, probe) -%}
  {#- (Not dbt's get_column_schema_from_query: it takes types from the driver's cursor
      description, which drops lengths and precision, and the catalog lookup below needs a
      relation.)
      The model query's columns, from an empty temp table (no rows are read): `columns` (names
      and types), `names`, and `compared_as_text`: the columns whose type has no usable
      equality operator, so comparisons go through their text form. -#}
  {%- call statement('auto_cdc_probe') -%}
    {{ auto_cdc.create_temp_table(probe, auto_cdc.no_rows_sql(sql)) }}
  {%- endcall -%}
  {%- set columns = adapter.get_columns_in_relation(probe) -%}
  {%- set compared_as_text = auto_cdc.columns_compared_as_text(probe) -%}
  {%- do auto_cdc.drop_temp_relations([probe]) -%}
  {{ return({'columns': columns, 'names': columns | map(attribute='name') | list, 'compared_as_text': compared_as_text}) }}
{%- endmacro %}


{% macro columns_compared_as_text(relation) -%}
  {{ return(adapter.dispatch('columns_compared_as_text', 'auto_cdc')(relation)) }}
{%- endmacro %}

{% macro default__columns_compared_as_text(relation) -%}
  {#- Every DuckDB type has equality (its JSON is text). -#}
  {{ return({}) }}
{%- endmacro %}

{% macro postgres__columns_compared_as_text(relation) -%}
  {#- Types without an equality operator (json, xml, point, ...), the geometric types whose `=`
      compares areas or lengths (box, lseg), composite and extension types (whose `=` may be
      missing or loose), and arrays and domains of them: compared through their text form,
      which is exact for all of them. Returns {column: its type}. -#}
  {%- set found = run_query(
      "select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute as a
       join pg_type as t on t.oid = a.atttypid
       join pg_type as b on b.oid = case when t.typcategory = 'A' then t.typelem
                                         when t.typtype = 'd' then t.typbasetype else t.oid end
       where a.attrelid = " ~ auto_cdc.string_literal(relation | string) ~ "::regclass and a.attnum > 0 and not a.attisdropped
         and (b.typname in ('json', 'xml', 'point', 'line', 'lseg', 'box', 'path', 'polygon', 'circle')
              or b.typtype = 'c' or (b.typtype = 'b' and b.oid >= 16384))") -%}
  {%- set types = {} -%}
  {%- for row in found.rows -%}{%- do types.update({row[0]: row[1]}) -%}{%- endfor -%}
  {{ return(types) }}
{%- endmacro %}


{% macro no_rows_sql(sql) -%}
  select * from (
    {{ sql }}
  ) as src
  limit 0
{%- endmacro %}
