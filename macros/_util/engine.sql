{#- Which dbt runs the package: dbt-core 1.x (Python) or dbt v2 (the Rust engine, dbt-core 2.x).
    Where v2 differs, the macro that works around it says so in one line. -#}

{% macro dbt_v2() -%}
  {{ return(dbt_version.startswith('2.')) }}
{%- endmacro %}
