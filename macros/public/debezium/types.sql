{#- Debezium, the values' types. In: a value as Debezium sends it (text) and the column's SQL
    type and encoding. Out: the value as that type. Debezium's default encodings
    (time.precision.mode=adaptive): a date as days since 1970-01-01, a timestamp without time
    zone as microseconds since then, a timestamptz as an ISO-8601 string and a decimal as text
    (decimal.handling.mode=string), which a cast reads; the commit time (source.ts_ms) is in
    milliseconds. The epoch arithmetic is dispatched: the default is PostgreSQL's, DuckDB's is
    in adapters/duckdb.sql. -#}

{% macro _debezium_default_encoding(type) -%}
  {#- How Debezium encodes a value of this SQL type by default (time.precision.mode=adaptive):
      a date as days since 1970-01-01, a timestamp without time zone as microseconds since
      1970-01-01 (PostgreSQL timestamp(4-6), MySQL datetime(4-6)); everything else as text
      (timestamptz as an ISO-8601 string, decimals with decimal.handling.mode=string). Which
      timestamp type holds points in time is the adapter's has_time_zone: Spark's `timestamp`
      does (a timestamptz's string), its `timestamp_ntz` does not (a timestamp's microseconds). -#}
  {%- set type = type | lower | trim -%}
  {%- if type == 'date' -%}
    {{ return('epoch_days') }}
  {%- elif (type.startswith('timestamp') or type.startswith('datetime')) and not auto_cdc.has_time_zone(type) -%}
    {{ return('epoch_micros') }}
  {%- endif -%}
  {{ return('text') }}
{%- endmacro %}


{% macro debezium_decode_sql(raw, type, encoding, name) -%}
  {#- A value as Debezium encodes it (text) decoded to `type` (column `name`). -#}
  {%- if encoding == 'epoch_days' -%}
    {%- set value = "(date '1970-01-01' + cast(" ~ raw ~ " as integer))" -%}
  {%- elif encoding in ['epoch_millis', 'epoch_micros'] -%}
    {%- set value = auto_cdc.debezium_epoch_sql(raw, encoding) -%}
  {%- else -%}
    {%- set value = raw -%}
  {%- endif -%}
  {%- set decoded = auto_cdc.debezium_cast_sql(value, type) if type else value -%}
  {{ return(auto_cdc.debezium_checked_sql(raw, decoded, encoding in ['epoch_days', 'epoch_millis', 'epoch_micros'],
            auto_cdc.about_model(model.name) ~ "auto_cdc.debezium(): column " ~ name ~ "'s value cannot be read as "
            ~ (type or 'a timestamp') ~ " (encoding " ~ (encoding or 'none') ~ "): check its type and encoding in columns=. The value: ")) }}
{%- endmacro %}


{% macro debezium_cast_sql(value, type) -%}
  {{ return(adapter.dispatch('debezium_cast_sql', 'auto_cdc')(value, type)) }}
{%- endmacro %}

{% macro default__debezium_cast_sql(value, type) -%}
  {{ return('cast(' ~ value ~ ' as ' ~ type ~ ')') }}
{%- endmacro %}


{% macro debezium_checked_sql(raw, decoded, integral, message) -%}
  {#- `decoded`, failing the query with `message` and the value where a value (`raw`) decodes
      to NULL or, for an epoch encoding (`integral`), is not a whole number. PostgreSQL's and
      DuckDB's casts fail on their own: the default is `decoded`. -#}
  {{ return(adapter.dispatch('debezium_checked_sql', 'auto_cdc')(raw, decoded, integral, message)) }}
{%- endmacro %}

{% macro default__debezium_checked_sql(raw, decoded, integral, message) -%}
  {{ return(decoded) }}
{%- endmacro %}


{% macro debezium_epoch_sql(raw, unit) -%}
  {{ return(adapter.dispatch('debezium_epoch_sql', 'auto_cdc')(raw, unit)) }}
{%- endmacro %}

{% macro default__debezium_epoch_sql(raw, unit) -%}
  {#- Milli- or microseconds since 1970-01-01 as a timestamp, exactly (integer arithmetic). -#}
  {{ return("(timestamp '1970-01-01 00:00:00' + cast(" ~ raw ~ " as bigint) * interval '"
            ~ ('1 millisecond' if unit == 'epoch_millis' else '1 microsecond') ~ "')") }}
{%- endmacro %}
