{#- Debezium, the three landed forms. In: the spec. Out: the landed rows with each value picked
    out once (`dbz_op`, `dbz_<source field>`, `dbz_after_<n>`, and `dbz_before_<n>` for keys),
    whichever form the sink landed: the envelope's before, after, source and op in columns of
    their own (JSON text, or structs where the sink wrote them typed); one value column holding
    the whole record (`envelope_column`), with or without the JsonConverter's schema wrapper
    (`{"schema": ..., "payload": ...}`); or
    ExtractNewRecordState's flattened rows (the columns as they are, `__op` and `__<field>`).
    Then each column of an event, from the image that holds it (debezium.sql's `dbz_decoded`).
    The JSON access is json.sql's, the decoding types.sql's, the placeholder test
    placeholders.sql's. -#}

{% macro _debezium_landed_sql(spec, bound=none) -%}
  {#- The landed rows, each value picked out once: the op, the source fields that order and
      time the event (`dbz_<field>`, text), each column's value in the `after` image
      (`dbz_after_<n>`, text; a flattened row's own column as it is) and, for keys, in the
      `before` image (`dbz_before_<n>`), then the extra columns. Only those under
      `bound.condition` when given (checkpoint.sql). -#}
  {%- set fields = auto_cdc._debezium_connectors().get(spec.connector, []) + ['ts_ms'] -%}
  {%- if spec.form == 'flattened' -%}
  select
    cast(landed.__op as {{ dbt.type_string() }}) as dbz_op,
    {%- for field in fields %}
    cast(landed.{{ auto_cdc.quote_identifier('__source_ts_ms' if field == 'ts_ms' else '__' ~ field) }} as {{ dbt.type_string() }}) as dbz_{{ field }},
    {%- endfor %}
    {%- for column in spec.columns %}
    landed.{{ auto_cdc.quote_identifier(column.name) }} as dbz_after_{{ loop.index }}{{ ',' if not loop.last or spec.extra_columns }}
    {%- endfor %}
  {%- else -%}
    {%- if spec.envelope_column -%}
      {%- set value = auto_cdc.debezium_json_sql('landed.' ~ auto_cdc.quote_identifier(spec.envelope_column)) -%}
      {%- set payload = 'coalesce(' ~ auto_cdc.debezium_member_sql(value, 'payload') ~ ', ' ~ value ~ ')' -%}
      {%- set op = auto_cdc.debezium_field_sql(payload, 'op') -%}
      {%- set images = {'before': auto_cdc.debezium_member_sql(payload, 'before'),
                        'after': auto_cdc.debezium_member_sql(payload, 'after'),
                        'source': auto_cdc.debezium_member_sql(payload, 'source')} -%}
    {%- else -%}
      {%- set op = 'cast(landed.op as ' ~ dbt.type_string() ~ ')' -%}
      {%- set images = {'before': auto_cdc.debezium_json_sql('landed.before'), 'after': auto_cdc.debezium_json_sql('landed.after'),
                        'source': auto_cdc.debezium_json_sql('landed.source')} -%}
    {%- endif %}
  select
    {{ op }} as dbz_op,
    {%- for field in fields %}
    {{ auto_cdc._debezium_field_of(spec, images, 'source', field) }} as dbz_{{ field }},
    {%- endfor %}
    {%- for column in spec.columns %}
    {%- if column.is_key %}
    {{ auto_cdc._debezium_field_of(spec, images, 'before', column.name) }} as dbz_before_{{ loop.index }},
    {%- endif %}
    {{ auto_cdc._debezium_field_of(spec, images, 'after', column.name) }} as dbz_after_{{ loop.index }}{{ ',' if not loop.last or spec.extra_columns }}
    {%- endfor %}
  {%- endif %}
    {%- for name in spec.extra_columns %}
    landed.{{ auto_cdc.quote_identifier(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
  from {{ auto_cdc.aliased_relation(spec.relation, 'landed') }}
  {%- if bound %}
  where ({{ bound.condition }})
  {%- endif %}
{%- endmacro %}


{% macro _debezium_field_of(spec, images, image, key) -%}
  {#- Field `key` of the envelope's `image` (before, after, source), as text: read from its JSON,
      or, where the sink landed the image as a struct (spec.struct_columns), the struct's field
      as text (debezium_struct_field_sql). That is exact: a decimal keeps its digits, which
      Spark's JSON functions would read as a double, and a timestamp its offset. -#}
  {%- if image in spec.struct_columns and not spec.envelope_column -%}
    {{ return(auto_cdc.debezium_struct_field_sql('landed.' ~ auto_cdc.quote_identifier(image) ~ '.' ~ auto_cdc.quote_identifier(key),
                                                 spec.struct_columns[image].get(key | lower, ''))) }}
  {%- endif -%}
  {{ return(auto_cdc.debezium_field_sql(images[image], key)) }}
{%- endmacro %}


{% macro _debezium_value_sql(spec, column, index) -%}
  {#- A column of the event: keys from `before` in a delete (its `after` is empty), values from
      `after` in an upsert, none in a delete or truncate; the placeholder reads as NULL (and the
      column is left out of `_dbz_columns`). A flattened delete is its `before` image already. -#}
  {%- set after = 'dbz_after_' ~ index -%}
  {%- if column.is_key and spec.form == 'envelope' -%}
    {%- set raw = "case when dbz_op = 'd' then dbz_before_" ~ index ~ ' else ' ~ after ~ ' end' -%}
  {%- elif column.is_key -%}
    {%- set raw = after -%}
  {%- else -%}
    {%- set placeholder = ' and not ' ~ auto_cdc._debezium_unavailable_sql(spec, index) if spec.unavailable_values else '' -%}
    {%- set raw = "case when dbz_op in ('c', 'u', 'r')" ~ placeholder ~ ' then ' ~ after ~ ' end' -%}
  {%- endif -%}
  {{ return(auto_cdc.debezium_decode_sql(raw, column.type, column.encoding, column.name)) }}
{%- endmacro %}
