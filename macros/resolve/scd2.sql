{#- Stage 6, resolve (SCD type 2). In: the history (resolve/scd2_history.sql) and the touched keys'
    target rows. Out: the rows the keys must have compared with the rows they have, with the
    action each difference needs. -#}

{% macro scd2_changes_sql(run) -%}
  {{ return(adapter.dispatch('scd2_changes_sql', 'auto_cdc')(run)) }}
{%- endmacro %}

{% macro default__scd2_changes_sql(run) -%}
  {%- set cfg = run.cfg -%}
  {%- if cfg.history_from_open_rows %}
  {#- The history is resolved inline: only this statement reads it. -#}
  with
  history as (
    {{ auto_cdc.scd2_open_row_history_sql(run) }}
  ),

  {{ auto_cdc.scd2_desired_ctes(cfg, 'history') }}

  {{ auto_cdc.compare_with_target_sql(cfg, run.target, open_rows_only=true) }}
  {%- else %}
  with
  {{ auto_cdc.scd2_desired_ctes(cfg, run.history) }}

  {{ auto_cdc.compare_with_target_sql(cfg, run.target) }}
  {%- endif %}
{%- endmacro %}


{% macro scd2_desired_ctes(cfg, history) -%}
  {#- CTEs `touched` and `desired` (ending in a comma): the keys `history` holds, and one row per
      stretch, in the target's layout. -#}
  {%- set keys = cfg.key_columns -%}
  touched as (
    select distinct {{ auto_cdc.quoted_list(keys) }} from {{ history }}
  ),

  desired as (
    select {{ auto_cdc.quoted_list(keys + cfg.value_columns) }},
      {{ auto_cdc.seq_value('__cdc_stretch_start', cfg) }} as {{ auto_cdc.quote_identifier('__START_AT') }},
      {{ auto_cdc.seq_value('__cdc_next_seq', cfg) }} as {{ auto_cdc.quote_identifier('__END_AT') }}
    from {{ history }}
    where __cdc_stretch_tail
  ),
{%- endmacro %}
