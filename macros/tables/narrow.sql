{#- Stage 5, tables: the settings narrowed for on_schema_change='ignore'. In: `cfg` from read_cdc_config()
    and the source columns the target lacks. Out: a new cfg that writes only the target's
    columns; the one read stays as it was read. -#}

{% macro narrow_to_target(cfg, ignored_columns) -%}
  {#- cfg with `ignored_columns` left out of what is written (value_columns, written_columns),
      of the partial updates (ignore_null_columns) and of SCD2 history (tracked_columns). A
      copy: nothing changes cfg after it is read, so every stage sees the configuration the run
      started with. -#}
  {%- set narrowed = {} -%}
  {%- for name, value in cfg.items() -%}
    {%- do narrowed.update({name: value}) -%}
  {%- endfor -%}
  {%- set kept = cfg.value_columns | reject('in', ignored_columns) | list -%}
  {%- do narrowed.update({
      'value_columns': kept,
      'written_columns': cfg.key_columns + kept,
      'ignore_null_columns': cfg.ignore_null_columns | reject('in', ignored_columns) | list,
      'tracked_columns': cfg.tracked_columns | reject('in', ignored_columns) | list,
  }) -%}
  {{ return(narrowed) }}
{%- endmacro %}
