{#- Spark SQL: string literals (identifiers: adapter.quote, backticks). -#}

{% macro spark__string_literal(value) -%}
  {#- Spark reads backslash escapes in literals, and 'a''b' as two literals joined ("ab"). -#}
  {{ return("'" ~ (value | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'") }}
{%- endmacro %}
