{#- The state's columns by name. Per-column bookkeeping columns are always plain lower-case
    identifiers (hashed when a column name would not be), so they need no quoting. -#}

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


{% macro scd1_state_columns(cfg) -%}
  {#- SCD1 state, besides the keys: the key's last upsert and delete, when it was deleted, and
      with partial updates the sequence that last wrote each column. -#}
  {%- set columns = auto_cdc.seq_names('__cdc_upsert_seq', cfg.seq_parts) + auto_cdc.seq_names('__cdc_delete_seq', cfg.seq_parts)
                    + ['__cdc_deleted_at'] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}
    {%- do columns.extend(auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), cfg.seq_parts)) -%}
  {%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}


{% macro event_flags(cfg, known_columns) -%}
  {#- SCD2 / bitemporal events: per column, whether the event wrote it (partial updates) and
      whether it carried it at all (columns appended since events were stored). -#}
  {%- set flags = [] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}{%- do flags.append(auto_cdc.event_flag(column)) -%}{%- endfor -%}
  {%- for column in known_columns -%}{%- do flags.append(auto_cdc.event_known(column)) -%}{%- endfor -%}
  {{ return(flags) }}
{%- endmacro %}


{% macro event_identity(cfg) -%}
  {#- What identifies a stored event (column names): key, sequence and (bitemporal) system
      sequence; a redelivered event replaces its stored copy. -#}
  {{ return(cfg.key_columns + auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) + (['__cdc_sys'] if cfg.system_expr else [])) }}
{%- endmacro %}


{% macro event_columns(cfg, known_columns) -%}
  {#- Every column of the stored SCD2 / bitemporal events (names), in table order. -#}
  {{ return(auto_cdc.event_identity(cfg) + ['__cdc_op'] + cfg.value_columns + auto_cdc.event_flags(cfg, known_columns) + ['__cdc_arrived_at']) }}
{%- endmacro %}
