{#- public/debezium/ on Spark (json.sql, ordering.sql, placeholders.sql, types.sql): a landed
    value as JSON text, read with get_json_object, which returns a string member unquoted, any
    other value as its JSON text and a JSON null as NULL, as PostgreSQL's ->> does. -#}

{% macro spark__debezium_struct_columns(relation) -%}
  {#- From the landed query's schema (no rows read): each struct column's fields and their types. -#}
  {%- set landed = auto_cdc.aliased_relation(relation, 'landed') -%}
  {%- set found = {} -%}
  {%- for row in run_query('describe query select * from ' ~ landed).rows if ((row[1] or '') | lower).startswith('struct<') -%}
    {%- set fields = {} -%}
    {%- for field in run_query('describe query select landed.' ~ adapter.quote(row[0]) ~ '.* from ' ~ landed).rows -%}
      {%- do fields.update({field[0] | lower: field[1] | lower}) -%}
    {%- endfor -%}
    {%- do found.update({row[0] | lower: fields}) -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}

{% macro spark__debezium_struct_field_sql(field, data_type) -%}
  {#- A timestamp keeps its offset (cast to text would write the session's local time without
      it), a timestamp_ntz its wall time, to the microsecond; any other value its own text. -#}
  {%- if data_type == 'timestamp' -%}
    {{ return('date_format(' ~ field ~ ", 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX')") }}
  {%- elif data_type == 'timestamp_ntz' -%}
    {{ return('date_format(' ~ field ~ ", 'yyyy-MM-dd HH:mm:ss.SSSSSS')") }}
  {%- endif -%}
  {{ return('cast(' ~ field ~ ' as string)') }}
{%- endmacro %}

{% macro spark__debezium_json_sql(expr) -%}
  {{ return('cast(' ~ expr ~ ' as string)') }}
{%- endmacro %}

{% macro spark__debezium_member_sql(doc, key) -%}
  {{ return('get_json_object(' ~ doc ~ ', ' ~ auto_cdc._spark_json_path(key) ~ ')') }}
{%- endmacro %}

{% macro spark__debezium_field_sql(doc, key) -%}
  {{ return('get_json_object(' ~ doc ~ ', ' ~ auto_cdc._spark_json_path(key) ~ ')') }}
{%- endmacro %}

{% macro _spark_json_path(key) -%}
  {#- `$.name` for a plain name, `$['name']` otherwise. Spark's JSONPath has no escapes and reads
      `['...']` only without a quote or a question mark inside: such a name (or one with a
      bracket) cannot be read, and fails here, naming it, instead of reading as NULL. -#}
  {%- if modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', key) -%}
    {{ return(auto_cdc.string_literal('$.' ~ key)) }}
  {%- endif -%}
  {%- if "'" in key or '?' in key or '[' in key or ']' in key -%}
    {%- do exceptions.raise_compiler_error("auto_cdc.debezium(): Spark's get_json_object cannot read a JSON member named " ~ tojson(key)
        ~ " (a quote, a question mark or a bracket in a name has no escape there). Land the feed flattened (form='flattened'), or rename the column at the source.") -%}
  {%- endif -%}
  {{ return(auto_cdc.string_literal("$['" ~ key ~ "']")) }}
{%- endmacro %}

{% macro spark__debezium_element_sql(doc, index) -%}
  {#- get_json_object gives an array's JSON null as the text 'null': from_json gives NULL. -#}
  {{ return('from_json(' ~ doc ~ ", 'array<string>')[" ~ index ~ ']') }}
{%- endmacro %}

{% macro spark__debezium_trailing_number_sql(text) -%}
  {{ return("nullif(regexp_extract(" ~ text ~ ", '([0-9]+)$', 1), '')") }}
{%- endmacro %}

{% macro spark__debezium_error_sql(message) -%}
  {{ return('cast(raise_error(' ~ message ~ ') as string)') }}
{%- endmacro %}

{% macro spark__debezium_epoch_sql(raw, unit) -%}
  {#- A wall time, as the other adapters' timestamp without time zone: built as timestamp_ntz,
      so the cast to the column's type reads it in the session's time zone whatever it is. Days
      and seconds apart: timestampadd takes an int amount, which microseconds overflow. A day
      count beyond an int gives NULL (try_cast), which debezium_checked_sql fails. -#}
  {%- set per_day = '86400000' if unit == 'epoch_millis' else '86400000000' -%}
  {%- set per_second = '1000' if unit == 'epoch_millis' else '1000000' -%}
  {%- set n = 'try_cast(' ~ raw ~ ' as bigint)' -%}
  {{ return("(timestamp_ntz '1970-01-01 00:00:00' + make_dt_interval(try_cast(" ~ n ~ ' div ' ~ per_day ~ ' as int), 0, 0, cast(cast('
            ~ n ~ ' % ' ~ per_day ~ ' as decimal(20,0)) / ' ~ per_second ~ ' as decimal(18,6))))') }}
{%- endmacro %}

{% macro spark__debezium_cast_sql(value, type) -%}
  {#- ANSI mode is off in dbt-spark's sessions, where cast('1.9' as int) is 1: try_cast follows
      ANSI's rules and gives NULL for what it cannot read exactly, which the check then fails. -#}
  {{ return('try_cast(' ~ value ~ ' as ' ~ type ~ ')') }}
{%- endmacro %}

{% macro spark__debezium_checked_sql(raw, decoded, integral, message) -%}
  {#- Spark's casts give NULL (or, without ANSI, a truncated number) for what they cannot read: a
      NULL where a value arrived would lose it silently, so the query fails, showing the value. -#}
  {%- set unread = '(' ~ decoded ~ ') is null' ~ (" or not (cast(" ~ raw ~ " as string) rlike '^-?[0-9]+$')" if integral else '') -%}
  {{ return('case when (' ~ raw ~ ') is not null and (' ~ unread ~ ') then raise_error(concat('
            ~ auto_cdc.string_literal(message) ~ ', cast(' ~ raw ~ ' as string))) else ' ~ decoded ~ ' end') }}
{%- endmacro %}

{% macro spark__debezium_latest_sql(value, order, condition) -%}
  {{ return('max_by(' ~ value ~ ', case when ' ~ condition ~ ' then ' ~ order ~ ' end)') }}
{%- endmacro %}
