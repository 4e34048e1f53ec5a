{#- Public: the rows of an SCD2 or bitemporal target as of a point in time. -#}

{% macro as_of(relation, business_time=none, system_time=none) -%}
  {#- `select` of the rows of `relation` valid at `business_time` (a SQL expression compared
      with __START_AT/__END_AT) and, for bitemporal targets, believed at `system_time` (compared
      with __SYSTEM_START_AT/__SYSTEM_END_AT). Either left out means "now": the open rows. -#}
  {{ return(adapter.dispatch('as_of', 'auto_cdc')(relation, business_time, system_time)) }}
{%- endmacro %}

{% macro default__as_of(relation, business_time, system_time) -%}
  {%- set bitemporal = system_time is not none -%}
  {%- set first_part = none -%}
  {%- if execute -%}
    {%- set found = adapter.get_columns_in_relation(auto_cdc.unlimited_relation(relation)) -%}
    {%- set columns = found | map(attribute='name') | map('lower') | list -%}
    {#- No columns: the relation does not exist yet (a compile on a fresh database). -#}
    {%- if columns and '__start_at' not in columns -%}
      {%- do exceptions.raise_compiler_error("auto_cdc.as_of: " ~ relation ~ " has no __START_AT/__END_AT history: it is not an SCD2 or"
          ~ " bitemporal target (an SCD1 target holds only the current rows: select from it directly).") -%}
    {%- endif -%}
    {%- set bitemporal = bitemporal or '__system_start_at' in columns -%}
    {#- A `sequence_by` list: __START_AT holds all its parts; `business_time` is a value of the
        first, the others open-ended (the rows valid once every event up to it applied). -#}
    {%- set start = found | selectattr('name', 'in', ['__START_AT', '__start_at']) | first -%}
    {%- if start is defined and start is not none and auto_cdc.is_sequence_list_type(start.data_type) -%}
      {%- set first_part = auto_cdc.first_sequence_field(relation, start.data_type) -%}
    {%- endif -%}
  {%- endif %}
  select * from {{ relation }}
  where {{ auto_cdc.valid_at('__START_AT', '__END_AT', business_time, first_part) }}
  {%- if bitemporal %}
    and {{ auto_cdc.valid_at('__SYSTEM_START_AT', '__SYSTEM_END_AT', system_time) }}
  {%- endif %}
{%- endmacro %}


{% macro valid_at(start_column, end_column, point, field=none) -%}
  {#- Half-open interval [start, end): valid at `point`, or open when `point` is none. `field`:
      the part of a composite start and end that `point` is a value of. -#}
  {%- set start = auto_cdc.quote_identifier(start_column) -%}
  {%- set end = auto_cdc.quote_identifier(end_column) -%}
  {%- if field is not none -%}
    {%- set start = '(' ~ start ~ ').' ~ auto_cdc.quote_identifier(field) -%}
    {%- set end = '(' ~ end ~ ').' ~ auto_cdc.quote_identifier(field) -%}
  {%- endif -%}
  {%- if point is none -%}
    {{ end }} is null
  {%- else -%}
    ({{ start }} <= ({{ point }}) and ({{ end }} is null or {{ end }} > ({{ point }})))
  {%- endif -%}
{%- endmacro %}


{% macro is_sequence_list_type(data_type) -%}
  {#- __START_AT of a `sequence_by` list: a STRUCT (DuckDB, Spark) or a composite type (PostgreSQL). -#}
  {{ return((data_type | lower).startswith('struct') or data_type | lower == 'user-defined') }}
{%- endmacro %}


{% macro first_sequence_field(relation, data_type) -%}
  {{ return(adapter.dispatch('first_sequence_field', 'auto_cdc')(relation, data_type)) }}
{%- endmacro %}

{% macro default__first_sequence_field(relation, data_type) -%}
  {#- STRUCT(epoch INTEGER, ...) (DuckDB) or struct<epoch:int,...> (Spark): the first field's name. -#}
  {%- set fields = data_type[7:] -%}
  {%- set name = (fields.split(':')[0] if data_type | lower == data_type else fields.split(' ')[0]) | trim -%}
  {{ return(name.strip('"`')) }}
{%- endmacro %}

