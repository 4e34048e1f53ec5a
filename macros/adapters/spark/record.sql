{#- Spark, stage 8 (record). -#}

{% macro spark__tombstones_count_sql(state) -%}
  {#- Iceberg answers a count of a column's values from its data files' statistics (aggregate
      push-down), without reading them; it reads the rows only where those cannot say (delete
      files, or a file without statistics). A filter would stop the push-down. -#}
  select count(__cdc_deleted_at) as num_live_tombstones from {{ state }}
{%- endmacro %}
