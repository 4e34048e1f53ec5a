{#- Metrics are the run's net effect on the target: rows new or changed, rows gone. -#}

{% macro change_metrics(changes, shape) -%}
  {%- set row = run_query(
      "select coalesce(sum(case when __cdc_action in ('insert', 'update') then 1 else 0 end), 0),"
      ~ " coalesce(sum(case when __cdc_action = 'delete' then 1 else 0 end), 0) from " ~ changes).rows[0] -%}
  {{ return({'n_events': shape.n_events, 'num_upserted_rows': row[0] | int, 'num_deleted_rows': row[1] | int}) }}
{%- endmacro %}


{% macro report(cfg, metrics) -%}
  {#- Shown in the log line and in run_results.json (message, rows_affected). -#}
  {%- set message = 'num_upserted_rows=' ~ metrics.num_upserted_rows ~ ' num_deleted_rows=' ~ metrics.num_deleted_rows -%}
  {%- do store_raw_result(name='main', message=message, code='AUTO_CDC',
                          rows_affected=metrics.num_upserted_rows + metrics.num_deleted_rows) -%}
{%- endmacro %}
