{#- Stage 7, apply: the target. In: the resolved changes (one row per target row that must
    change, with `__cdc_action`). Out: the target written, deletes, updates and inserts each in
    one statement, inside the model's single transaction. The same writer serves every SCD type;
    only the target's row layout differs. -#}


{% macro write_target_statements(cfg, changes, target, fence=none) -%}
  {#- Dispatched, so an adapter with a better write (e.g. one MERGE) can replace all three.
      `fence`: see read_fence (none here: the transaction is the fence). -#}
  {{ return(adapter.dispatch('write_target_statements', 'auto_cdc')(cfg, changes, target, fence)) }}
{%- endmacro %}

{% macro default__write_target_statements(cfg, changes, target, fence) -%}
  {#- These writes are atomic only inside a transaction, and check no fence. -#}
  {%- if fence is not none or not auto_cdc.capabilities().transactions -%}
    {%- do auto_cdc.missing_hook('write_target_statements', "transactions false or concurrency 'fence'") -%}
  {%- endif -%}
  {%- set layout = auto_cdc.target_layout(cfg) -%}
  {{ return([
      auto_cdc.delete_rows_sql(target, changes, layout.identity),
      auto_cdc.update_rows_sql(target, changes, layout.identity, layout.updated),
      auto_cdc.insert_rows_sql(target, changes, layout.identity + layout.updated),
  ]) }}
{%- endmacro %}


{% macro delete_rows_sql(target, changes, identity) -%}
  delete from {{ target }} as t
  using {{ changes }} as c
  where {{ auto_cdc.keys_match(identity, 't', 'c') }} and c.__cdc_action = 'delete'
{%- endmacro %}


{% macro update_rows_sql(target, changes, identity, updated) -%}
  {%- if updated %}
  update {{ target }} as t
  set {% for column in updated %}{{ auto_cdc.quote_identifier(column) }} = c.{{ auto_cdc.quote_identifier(column) }}{{ ', ' if not loop.last }}{% endfor %}
  from {{ changes }} as c
  where {{ auto_cdc.keys_match(identity, 't', 'c') }} and c.__cdc_action = 'update'
  {%- endif %}
{%- endmacro %}


{% macro insert_rows_sql(target, changes, columns) -%}
  insert into {{ target }} ({{ auto_cdc.quoted_list(columns) }})
  select {{ auto_cdc.quoted_list(columns) }}
  from {{ changes }}
  where __cdc_action = 'insert'
{%- endmacro %}
