{#- Public: the rows of an SCD2 or bitemporal target as of a point in time. -#}

{% macro as_of(relation, business_time=none, system_time=none) -%}
  {#- `select` of the rows of `relation` valid at `business_time` (a SQL expression compared
      with __START_AT/__END_AT) and, for bitemporal targets, believed at `system_time` (compared
      with __SYSTEM_START_AT/__SYSTEM_END_AT). Either left out means "now": the open rows. -#}
  {{ return(adapter.dispatch('as_of', 'auto_cdc')(relation, business_time, system_time)) }}
{%- endmacro %}

{% macro default__as_of(relation, business_time, system_time) -%}
  {%- set bitemporal = system_time is not none -%}
  {%- if execute -%}
    {%- set columns = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
    {#- No columns: the relation does not exist yet (a compile on a fresh database). -#}
    {%- if columns and '__start_at' not in columns -%}
      {%- do exceptions.raise_compiler_error("auto_cdc.as_of: " ~ relation ~ " has no __START_AT/__END_AT history: it is not an SCD2 or"
          ~ " bitemporal target (an SCD1 target holds only the current rows: select from it directly).") -%}
    {%- endif -%}
    {%- set bitemporal = bitemporal or '__system_start_at' in columns -%}
  {%- endif %}
  select * from {{ relation }}
  where {{ auto_cdc.valid_at('__START_AT', '__END_AT', business_time) }}
  {%- if bitemporal %}
    and {{ auto_cdc.valid_at('__SYSTEM_START_AT', '__SYSTEM_END_AT', system_time) }}
  {%- endif %}
{%- endmacro %}


{% macro valid_at(start_column, end_column, point) -%}
  {#- Half-open interval [start, end): valid at `point`, or open when `point` is none. -#}
  {%- set start = auto_cdc.quote_identifier(start_column) -%}
  {%- set end = auto_cdc.quote_identifier(end_column) -%}
  {%- if point is none -%}
    {{ end }} is null
  {%- else -%}
    ({{ start }} <= ({{ point }}) and ({{ end }} is null or {{ end }} > ({{ point }})))
  {%- endif -%}
{%- endmacro %}
