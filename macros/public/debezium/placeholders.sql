{#- Debezium, TOAST placeholders and moved rows. In: the decoded events (`dbz_decoded`), whose
    values may be the placeholder Debezium sends for an unchanged TOASTed column
    (`unavailable_values`). Out: `_dbz_columns`, every column but those (so the target keeps
    their values), and `dbz_events`, where a row moved to a new primary key takes each such
    value from the old key's latest event that wrote it. A value the landed table cannot give
    fails the query (debezium_error_sql, dispatched: the default is PostgreSQL's, DuckDB's is in
    adapters/duckdb.sql). -#}

{% macro _debezium_unavailable_sql(spec, index) -%}
  {#- Is column `index` of an upsert the placeholder Debezium sends for an unchanged TOASTed value? -#}
  {{ return('cast(dbz_after_' ~ index ~ ' as ' ~ dbt.type_string() ~ ') in (' ~ auto_cdc.string_literals(spec.unavailable_values) ~ ')') }}
{%- endmacro %}


{% macro _debezium_written_sql(spec) -%}
  {#- `_dbz_columns`: NULL (every column) unless an upsert has a placeholder; then every
      column but those, as a comma-separated list (what columns_to_update reads). -#}
  {%- set tests = [] -%}
  {%- set names = [] -%}
  {%- for column in spec.columns -%}
    {%- if column.is_key or not spec.unavailable_values -%}
      {%- do names.append(auto_cdc.string_literal(column.name)) -%}
    {%- else -%}
      {%- set test = auto_cdc._debezium_unavailable_sql(spec, loop.index) -%}
      {%- do tests.append(test) -%}
      {%- do names.append('case when ' ~ test ~ ' then null else ' ~ auto_cdc.string_literal(column.name) ~ ' end') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not tests -%}
    {{ return('cast(null as ' ~ dbt.type_string() ~ ')') }}
  {%- endif -%}
  {%- for name in ['_dbz_committed_at'] + spec.extra_columns -%}{%- do names.append(auto_cdc.string_literal(name)) -%}{%- endfor -%}
  {{ return("case when dbz_op in ('c', 'u', 'r') and (" ~ tests | join(' or ') ~ ") then concat_ws(',', " ~ names | join(', ') ~ ') end') }}
{%- endmacro %}


{% macro _debezium_moved_rows_sql(spec) -%}
  {#- CTEs ending in `dbz_events`. A primary-key change is a delete of the old key and a create of
      the new one at one LSN; under REPLICA IDENTITY DEFAULT the create carries the placeholder
      for every unchanged TOASTed column, whose value Debezium never read. It is the old key's:
      its latest event before the change that wrote the column, in the landed table. Until the
      delete and that event have landed (a sink may land another key's partition later), and
      when the landed table holds none, the run fails: NULL would lose the value silently, and
      the next run, reading from the same checkpoint, finds it once it has landed. -#}
  {%- set values = spec.columns | rejectattr('is_key') | list if spec.unavailable_values else [] -%}
  {%- set q = auto_cdc.quote_identifier -%}
  {%- if not values %}
  dbz_events as (select * from dbz_decoded)
  {%- else %}
  dbz_moved as (
    select
      {%- for column in spec.key_columns %}
      old.{{ q(column.name) }},
      {%- endfor %}
      moved._dbz_sequence
    from dbz_decoded as moved
    left join dbz_decoded as old on old._dbz_sequence = moved._dbz_sequence and old._dbz_op = 'd'
    where moved._dbz_op = 'c' and moved._dbz_columns is not null
    group by {% for column in spec.key_columns %}old.{{ q(column.name) }}, {% endfor %}moved._dbz_sequence
  ),
  dbz_moved_values as (
    select
      {%- for column in values %}
      {%- set writes = 'earlier._dbz_sequence is not null and ' ~ auto_cdc.column_is_listed("',' || lower(earlier._dbz_columns) || ','", column.name) %}
      {{ auto_cdc.debezium_latest_sql('earlier.' ~ q(column.name), 'earlier._dbz_sequence', writes) }} as dbz_value_{{ loop.index }},
      count(*) filter (where {{ writes }}) > 0 as dbz_found_{{ loop.index }},
      {%- endfor %}
      moved._dbz_sequence
    from dbz_moved as moved
    left join dbz_decoded as earlier
      on {% for column in spec.key_columns %}earlier.{{ q(column.name) }} = moved.{{ q(column.name) }} and {% endfor -%}
         earlier._dbz_sequence < moved._dbz_sequence and earlier._dbz_op in ('c', 'u', 'r')
    group by moved._dbz_sequence
  ),
  dbz_events as (
    select
      {%- for column in spec.columns %}
      {%- if column.is_key or column not in values %}
      e.{{ q(column.name) }},
      {%- else %}
      {%- set index = values.index(column) + 1 %}
      case when moved._dbz_sequence is null or {{ auto_cdc.column_is_listed("',' || lower(e._dbz_columns) || ','", column.name) }} then e.{{ q(column.name) }}
           else moved.dbz_value_{{ index }} end as {{ q(column.name) }},
      {%- endif %}
      {%- endfor %}
      e._dbz_op,
      e._dbz_sequence,
      case when moved._dbz_sequence is null then e._dbz_columns
      {%- for column in values %}
           when not moved.dbz_found_{{ loop.index }} and not {{ auto_cdc.column_is_listed("',' || lower(e._dbz_columns) || ','", column.name) }} then {{ auto_cdc.debezium_error_sql(
               auto_cdc.string_literal("auto_cdc.debezium(" ~ spec.relation ~ "): a primary-key change (a delete and a create at _dbz_sequence ")
               ~ " || cast(e._dbz_sequence as " ~ dbt.type_string() ~ ") || "
               ~ auto_cdc.string_literal(") moved a row whose TOASTed column " ~ column.name ~ " Debezium did not send (REPLICA IDENTITY DEFAULT), and the landed table holds no earlier value of it under the old key: the old key's events have not landed yet (run again once they have) or are gone. ALTER TABLE ... REPLICA IDENTITY FULL on the source table makes Debezium send every value.")) }}
      {%- endfor %}
      end as _dbz_columns,
      e._dbz_committed_at
      {%- for name in spec.extra_columns %},
      e.{{ q(name) }}
      {%- endfor %}
    from dbz_decoded as e
    left join dbz_moved_values as moved on moved._dbz_sequence = e._dbz_sequence and e._dbz_op = 'c'
  )
  {%- endif %}
{%- endmacro %}


{% macro debezium_latest_sql(value, order, condition) -%}
  {#- An aggregate: `value` of the row with the greatest `order` among those where `condition`
      holds (NULL when none does). -#}
  {{ return(adapter.dispatch('debezium_latest_sql', 'auto_cdc')(value, order, condition)) }}
{%- endmacro %}

{% macro default__debezium_latest_sql(value, order, condition) -%}
  {{ return('(array_agg(' ~ value ~ ' order by ' ~ order ~ ' desc) filter (where ' ~ condition ~ '))[1]') }}
{%- endmacro %}


{% macro debezium_error_sql(message) -%}
  {{ return(adapter.dispatch('debezium_error_sql', 'auto_cdc')(message)) }}
{%- endmacro %}

{% macro default__debezium_error_sql(message) -%}
  {#- Text that fails the query when evaluated, with `message` (SQL) in the error: PostgreSQL's
      SQL has no raise; a failed cast quotes its input. -#}
  {{ return('cast(cast(' ~ message ~ ' as integer) as ' ~ dbt.type_string() ~ ')') }}
{%- endmacro %}
