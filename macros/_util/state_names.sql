{#- Names of the state's per-column bookkeeping columns: always plain lower-case identifiers
    (hashed when a column name would not be), so they need no quoting. -#}

{% macro column_seq_prefix(column) -%}
  {#- Partial updates: the state column (prefix) holding the sequence that last wrote `column`.
      Always a plain lower-case identifier, so it needs no quoting. -#}
  {%- set safe = modules.re.sub('[^a-z0-9_]', '_', column | lower) -%}
  {%- set name = '__cdc_seq__' ~ safe -%}
  {%- if safe != column | lower or name | length > 56 -%}
    {%- set name = name[:44] ~ '_' ~ local_md5(column)[:10] -%}
  {%- endif -%}
  {{ return(name) }}
{%- endmacro %}
{% macro event_flag(column) -%}
  {#- Partial updates: the events-table column telling whether an event wrote `column`. -#}
  {{ return(auto_cdc.column_seq_prefix(column) | replace('__cdc_seq__', '__cdc_w__')) }}
{%- endmacro %}


{% macro event_known(column) -%}
  {#- A column appended by on_schema_change: the events-table column telling whether an event
      carried it (NULL for events stored before it existed). -#}
  {{ return(auto_cdc.column_seq_prefix(column) | replace('__cdc_seq__', '__cdc_k__')) }}
{%- endmacro %}
