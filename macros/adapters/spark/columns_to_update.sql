{% macro spark__columns_to_update_list(expr) -%}
  {#- As default__columns_to_update_list; Spark's regexp_replace replaces every match. -#}
  ',' || lower(regexp_replace(trim(translate(cast({{ expr }} as string), '[]{}"''', '')), '\\s*,\\s*', ',')) || ','
{%- endmacro %}
