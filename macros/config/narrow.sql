{% macro narrow_to_target(cfg, ignored_columns) -%}
  {%- if not ignored_columns -%}{{ return(cfg) }}{%- endif -%}
  {%- set narrowed = {} -%}
  {%- do narrowed.update(cfg) -%}
  {%- set kept = cfg.value_columns | reject('in', ignored_columns) | list -%}
  {%- do narrowed.update({'value_columns': kept, 'written_columns': cfg.key_columns + kept,
                          'ignore_null_columns': cfg.ignore_null_columns | reject('in', ignored_columns) | list}) -%}
  {{ return(narrowed) }}
{%- endmacro %}
