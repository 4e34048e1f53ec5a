{#- Stage 7, apply (SCD type 2). In: the resolved changes and the history. Out: the target written,
    the batch's events stored, old events compacted. -#}

{% macro scd2_apply_statements(arg_dict) -%}
  {{ return(adapter.dispatch('scd2_apply_statements', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__scd2_apply_statements(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {%- set changes = arg_dict.changes -%}
  {%- set target = arg_dict.target -%}
  {%- set start = auto_cdc.quote_identifier('__START_AT') -%}
  {%- set end = auto_cdc.quote_identifier('__END_AT') -%}
  {%- set identity = auto_cdc.keys_match(keys, 't', 'c') ~ ' and t.' ~ start ~ ' = c.' ~ start -%}
  {%- set row_columns = auto_cdc.quoted_list(keys) ~ ', ' ~ start ~ (', ' ~ auto_cdc.quoted_list(cfg.value_columns) if cfg.value_columns else '') ~ ', ' ~ end -%}
  {%- set assignments = [end ~ ' = c.' ~ end] -%}
  {%- for column in cfg.value_columns -%}
    {%- do assignments.append(auto_cdc.quote_identifier(column) ~ ' = c.' ~ auto_cdc.quote_identifier(column)) -%}
  {%- endfor -%}

  {#- Events: the batch's events are added (a redelivered one replaces its stored copy).
      Events that arrived longer than tombstone_retention ago are compacted: only those that
      still shape a row stay (a run's first and last event, a delete that closes a run), with
      their values fixed (partial updates). Stored events that stay as they are are not
      rewritten, so an in-order batch writes only its own events. -#}
  {%- set horizon = auto_cdc.seconds_ago(cfg.tombstone_retention) -%}
  {%- set kept = '(h.__cdc_arrived_at >= ' ~ horizon ~ ' or h.__head = 1 or h.__tail or h.__closing)' -%}
  {%- set refixed = '(h.__cdc_arrived_at < ' ~ horizon ~ ')' if cfg.partial else 'false' -%}
  {%- set event_columns = auto_cdc.quoted_list(keys) ~ ', ' ~ (auto_cdc.seq_names('__cdc_seq', n) | join(', ')) ~ ', __cdc_op'
        ~ (', ' ~ auto_cdc.quoted_list(cfg.value_columns) if cfg.value_columns else '') -%}
  {%- set flag_columns = [] -%}
  {%- set flag_values = [] -%}
  {%- if cfg.partial -%}
    {%- for column in cfg.value_columns -%}
      {%- set flag = auto_cdc.event_flag(column) -%}
      {%- do flag_columns.append(flag) -%}
      {%- do flag_values.append('(' ~ flag ~ ' or __cdc_arrived_at < ' ~ horizon ~ ')') -%}
    {%- endfor -%}
  {%- endif -%}
  {%- for column in cfg.get('known_columns', []) -%}
    {%- do flag_columns.append(auto_cdc.event_known(column)) -%}
    {%- do flag_values.append(auto_cdc.event_known(column)) -%}
  {%- endfor -%}
  {%- set flags_sql = (', ' ~ (flag_columns | join(', '))) if flag_columns else '' -%}
  {%- set flag_values_sql = (', ' ~ (flag_values | join(', '))) if flag_values else '' -%}

  {{ return([
    'delete from ' ~ target ~ ' as t using ' ~ changes ~ ' as c where ' ~ identity ~ " and c.__cdc_action = 'delete'",
    'update ' ~ target ~ ' as t set ' ~ (assignments | join(', ')) ~ ' from ' ~ changes ~ ' as c where ' ~ identity ~ " and c.__cdc_action = 'update'",
    'insert into ' ~ target ~ ' (' ~ row_columns ~ ') select ' ~ row_columns ~ ' from ' ~ changes ~ " where __cdc_action = 'insert'",
    'delete from ' ~ arg_dict.events ~ ' as e using ' ~ arg_dict.history ~ ' as h where ' ~ auto_cdc.keys_match(keys, 'e', 'h')
      ~ ' and ' ~ auto_cdc.seq_row('__cdc_seq', n, 'e') ~ ' = ' ~ auto_cdc.seq_row('__cdc_seq', n, 'h')
      ~ ' and (h.__cdc_new or not ' ~ kept ~ ' or ' ~ refixed ~ ')',
    'insert into ' ~ arg_dict.events ~ ' (' ~ event_columns ~ flags_sql ~ ', __cdc_arrived_at) select ' ~ event_columns ~ flag_values_sql
      ~ ', __cdc_arrived_at from ' ~ arg_dict.history ~ ' as h where ' ~ kept ~ ' and (h.__cdc_new or ' ~ refixed ~ ')',
  ]) }}
{%- endmacro %}
