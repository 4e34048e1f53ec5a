{#- Spark SQL: identifiers in backticks. -#}

{% macro spark__quote_identifier(name) -%}
  {{ return('`' ~ (name | replace('`', '``')) ~ '`') }}
{%- endmacro %}
