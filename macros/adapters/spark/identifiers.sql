{#- Spark SQL: identifiers in backticks. -#}

{% macro spark__quote_identifier(name) -%}
  {{ return('`' ~ (name | replace('`', '``')) ~ '`') }}
{%- endmacro %}


{% macro spark__string_literal(value) -%}
  {#- Spark reads backslash escapes in literals, and 'a''b' as two literals joined ("ab"). -#}
  {{ return("'" ~ (value | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'") }}
{%- endmacro %}
