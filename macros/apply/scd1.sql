{#- Stage 7, apply (SCD type 1). In: the resolved changes. Out: the target written, the touched
    keys' state replaced, expired tombstones forgotten. -#}

{% macro scd1_apply_statements(arg_dict) -%}
  {{ return(adapter.dispatch('scd1_apply_statements', 'auto_cdc')(arg_dict)) }}
{%- endmacro %}

{% macro default__scd1_apply_statements(arg_dict) -%}
  {%- set cfg = arg_dict.cfg -%}
  {%- set n = cfg.seq_parts -%}
  {%- set keys = cfg.key_columns -%}
  {%- set changes = arg_dict.changes -%}
  {%- set target = arg_dict.target -%}
  {%- set state = arg_dict.state -%}
  {%- set written = keys + cfg.value_columns -%}
  {%- set state_columns = auto_cdc.seq_names('__cdc_upsert_seq', n) + auto_cdc.seq_names('__cdc_delete_seq', n) + ['__cdc_deleted_at'] -%}
  {%- if cfg.partial -%}
    {%- for column in cfg.value_columns -%}
      {%- do state_columns.extend(auto_cdc.seq_names(auto_cdc.column_seq_prefix(column), n)) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set statements = [] -%}

  {%- do statements.append(
    'delete from ' ~ target ~ ' as t using ' ~ changes ~ ' as c where ' ~ auto_cdc.keys_match(keys, 't', 'c')
    ~ " and c.__cdc_action = 'delete'") -%}

  {%- if cfg.value_columns -%}
    {%- set assignments = [] -%}
    {%- for column in cfg.value_columns -%}
      {%- do assignments.append(auto_cdc.quote_identifier(column) ~ ' = c.' ~ auto_cdc.quote_identifier(column)) -%}
    {%- endfor -%}
    {%- do statements.append(
      'update ' ~ target ~ ' as t set ' ~ (assignments | join(', ')) ~ ' from ' ~ changes ~ ' as c where '
      ~ auto_cdc.keys_match(keys, 't', 'c') ~ " and c.__cdc_action = 'update'") -%}
  {%- endif -%}

  {%- do statements.append(
    'insert into ' ~ target ~ ' (' ~ auto_cdc.quoted_list(written) ~ ') select ' ~ auto_cdc.quoted_list(written)
    ~ ' from ' ~ changes ~ " where __cdc_action = 'insert'") -%}

  {#- State: every touched key's row is replaced; keys with neither a row nor a live tombstone
      drop out. -#}
  {%- do statements.append(
    'delete from ' ~ state ~ ' as s using ' ~ changes ~ ' as c where ' ~ auto_cdc.keys_match(keys, 's', 'c')) -%}
  {%- do statements.append(
    'insert into ' ~ state ~ ' (' ~ auto_cdc.quoted_list(keys) ~ ', ' ~ (state_columns | join(', ')) ~ ') select '
    ~ auto_cdc.quoted_list(keys) ~ ', ' ~ (state_columns | join(', ')) ~ ' from ' ~ changes
    ~ ' where ' ~ auto_cdc.seq_first('__cdc_upsert_seq', n) ~ ' is not null or ' ~ auto_cdc.seq_first('__cdc_delete_seq', n) ~ ' is not null') -%}

  {#- Forget tombstones past their retention. -#}
  {%- do statements.append(
    'delete from ' ~ state ~ ' where ' ~ auto_cdc.seq_first('__cdc_upsert_seq', n) ~ ' is null and __cdc_deleted_at < '
    ~ auto_cdc.seconds_ago(cfg.tombstone_retention)) -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro drop_dominated_tombstones_sql(arg_dict) -%}
  {#- After a truncate, tombstones older than the watermark are redundant: it blocks those
      late upserts on its own. -#}
  {%- set n = arg_dict.cfg.seq_parts -%}
  delete from {{ arg_dict.state }} as s
  using (select {{ auto_cdc.seq_names('truncate_seq', n) | join(', ') }} from {{ arg_dict.runs }} order by run_id desc limit 1) as w
  where s.{{ auto_cdc.seq_first('__cdc_upsert_seq', n) }} is null
    and {{ auto_cdc.seq_older('__cdc_delete_seq', 'truncate_seq', n, 's', 'w') }}
{%- endmacro %}
