{#- Stage 6, resolve (SCD type 2). In: the history (resolve/scd2_history.sql) and the touched keys'
    target rows. Out: the rows the keys must have compared with the rows they have, with the
    action each difference needs. -#}

{% macro scd2_changes_sql(arg_dict) -%}
  {{ return(adapter.dispatch('scd2_changes_sql', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__scd2_changes_sql(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set keys = cfg.key_columns -%}
  {%- set start = auto_cdc.quote_identifier('__START_AT') -%}
  {%- set end = auto_cdc.quote_identifier('__END_AT') -%}
  with
  touched as (
    select distinct {{ auto_cdc.quoted_list(keys) }} from {{ arg_dict.history }}
  ),

  desired as (
    select {{ auto_cdc.quoted_list(keys + cfg.value_columns) }},
      {{ auto_cdc.seq_value('__cdc_run_start', cfg) }} as {{ start }},
      {{ auto_cdc.seq_value('__cdc_next_seq', cfg) }} as {{ end }}
    from {{ arg_dict.history }}
    where __cdc_run_tail
  ),

  {{ auto_cdc.compare_with_target_sql(cfg, arg_dict.target) }}
{%- endmacro %}
