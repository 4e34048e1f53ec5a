{#- Spark, stage 8 (record). -#}

{% macro spark__tombstones_count_sql(state) -%}
  {#- Without a filter, Iceberg can answer a count of a column's values from its data files'
      statistics (aggregate push-down) instead of reading them. It does so only while no data
      file of the state has row-level deletes (the state is merge-on-read: a MERGE that
      updates or removes a tombstone writes delete files) and every file has statistics;
      otherwise it reads the column from every file, as the filtered count would. -#}
  select count(__cdc_deleted_at) as num_live_tombstones from {{ state }}
{%- endmacro %}
