{#- Stage 7, apply (bitemporal). In: the resolved changes and the batch. Out: the target written
    by row identity, the batch's events stored (every event stays). -#}

{% macro bitemporal_apply_statements(arg_dict) -%}
  {{ return(adapter.dispatch('bitemporal_apply_statements', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__bitemporal_apply_statements(arg_dict) -%}
  {#- Target rows by identity (keys, __START_AT, __SYSTEM_START_AT); then the new events join
      the stored ones (a redelivered key, sequence and system sequence replaces its copy).
      Every event stays: any later system time may need the whole history again. -#}
  {%- set cfg = arg_dict.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {%- set changes = arg_dict.changes -%}
  {%- set target = arg_dict.target -%}
  {%- set identity_columns = ['__START_AT', '__SYSTEM_START_AT'] -%}
  {%- set identity = auto_cdc.keys_match(keys + identity_columns, 't', 'c') -%}
  {%- set changed_columns = cfg.value_columns + ['__END_AT', '__SYSTEM_END_AT'] -%}
  {%- set row_columns = auto_cdc.quoted_list(keys + identity_columns + changed_columns) -%}
  {%- set assignments = [] -%}
  {%- for column in changed_columns -%}
    {%- do assignments.append(auto_cdc.quote_identifier(column) ~ ' = c.' ~ auto_cdc.quote_identifier(column)) -%}
  {%- endfor -%}
  {%- set flags = [] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}{%- do flags.append(auto_cdc.event_flag(column)) -%}{%- endfor -%}
  {%- for column in cfg.get('known_columns', []) -%}{%- do flags.append(auto_cdc.event_known(column)) -%}{%- endfor -%}
  {%- set event_columns = auto_cdc.quoted_list(keys) ~ ', ' ~ (auto_cdc.seq_names('__cdc_seq', n) | join(', ')) ~ ', __cdc_op, __cdc_sys'
        ~ (', ' ~ auto_cdc.quoted_list(cfg.value_columns) if cfg.value_columns else '')
        ~ (', ' ~ (flags | join(', ')) if flags else '') ~ ', __cdc_arrived_at' -%}
  {{ return([
    'delete from ' ~ target ~ ' as t using ' ~ changes ~ ' as c where ' ~ identity ~ " and c.__cdc_action = 'delete'",
    'update ' ~ target ~ ' as t set ' ~ (assignments | join(', ')) ~ ' from ' ~ changes ~ ' as c where ' ~ identity ~ " and c.__cdc_action = 'update'",
    'insert into ' ~ target ~ ' (' ~ row_columns ~ ') select ' ~ row_columns ~ ' from ' ~ changes ~ " where __cdc_action = 'insert'",
    'delete from ' ~ arg_dict.events ~ ' as e using (' ~ auto_cdc.scd2_new_events_sql(cfg, arg_dict.batch) ~ ') as n where '
      ~ auto_cdc.keys_match(keys, 'e', 'n') ~ ' and ' ~ auto_cdc.seq_row('__cdc_seq', n, 'e') ~ ' = ' ~ auto_cdc.seq_row('__cdc_seq', n, 'n')
      ~ ' and e.__cdc_sys = n.__cdc_sys',
    'insert into ' ~ arg_dict.events ~ ' (' ~ event_columns ~ ') select ' ~ event_columns ~ ' from (' ~ auto_cdc.scd2_new_events_sql(cfg, arg_dict.batch) ~ ') as n',
  ]) }}
{%- endmacro %}
