{#- Public: a landed Debezium feed as the event rows auto_cdc expects (docs/debezium.md).
    In: the landed table (JSON envelopes, or Debezium's flattened ExtractNewRecordState form),
    the connector, the columns to take and their types. Out: a subquery, one row per change
    event: the columns, then `_dbz_op` (c, u, d, r, t), `_dbz_sequence` (the connector's order
    of events), `_dbz_columns` (the columns the event writes: NULL for every column, set when
    some arrived as the unavailable-value placeholder of an unchanged TOASTed column) and
    `_dbz_committed_at` (the source's commit time), then `extra_columns` as landed. Kafka
    tombstones (no value) carry nothing the delete before them did not and are left out.

    This file assembles the query; the files beside it hold its parts, one concern each:
    spec.sql, the arguments checked and resolved; forms.sql, the landed forms read into one row
    per event; types.sql, the values decoded to their types; ordering.sql, each connector's
    order of events; placeholders.sql, TOAST placeholders and moved rows; truncates.sql,
    truncates as deletes; checkpoint.sql, what a run reads of the landed table; json.sql, the
    JSON access each adapter answers. -#}

{% macro debezium(relation, columns=none, keys=none, connector='postgresql', form='envelope', envelope_column=none,
                  extra_columns=[], truncates=none, unavailable_values=none) -%}
  {%- set spec = auto_cdc._debezium_spec(relation, columns, keys, connector, form, envelope_column, extra_columns,
                                         truncates, unavailable_values) -%}
  {%- set bound = auto_cdc._debezium_bound(spec) -%}
(
  {{ bound.marker if bound }}
  with dbz_landed as (
    {{ auto_cdc._debezium_landed_sql(spec, bound) }}
  ),
  dbz_decoded as (
    {{ auto_cdc._debezium_decoded_sql(spec, 'dbz_landed') }}
  ),
  {%- if bound and bound.truncates %}
  dbz_earlier_truncates as (
    {{ auto_cdc._debezium_decoded_sql(spec, '(' ~ auto_cdc._debezium_landed_sql(spec, {'condition': bound.truncates}) ~ ') as landed', "dbz_op = 't'") }}
  ),
  {%- endif %}
  {{ auto_cdc._debezium_moved_rows_sql(spec) }}
  {%- if spec.truncates == 'apply' %}
  select * from dbz_events
  {%- else %}
  {{ auto_cdc._debezium_truncates_as_deletes_sql(spec, 'dbz_earlier_truncates' if bound and bound.truncates else none) }}
  {%- endif %}
) as debezium_events
{%- endmacro %}


{% macro _debezium_decoded_sql(spec, landed, condition='dbz_op is not null') -%}
  {#- The events of the landed rows `landed` (forms.sql's columns) where `condition` holds: the
      columns decoded, then `_dbz_op`, `_dbz_sequence`, `_dbz_columns`, `_dbz_committed_at` and
      the extra columns. -#}
    select
      {%- for column in spec.columns %}
      {{ auto_cdc._debezium_value_sql(spec, column, loop.index) }} as {{ auto_cdc.quote_identifier(column.name) }},
      {%- endfor %}
      dbz_op as _dbz_op,
      {{ auto_cdc._debezium_sequence_sql(spec) }} as _dbz_sequence,
      {{ auto_cdc._debezium_written_sql(spec) }} as _dbz_columns,
      {{ auto_cdc.debezium_decode_sql('dbz_ts_ms', none, 'epoch_millis', '_dbz_committed_at') }} as _dbz_committed_at
      {%- for name in spec.extra_columns %},
      {{ auto_cdc.quote_identifier(name) }}
      {%- endfor %}
    from {{ landed }}
    where {{ condition }}
{%- endmacro %}
