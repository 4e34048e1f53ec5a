{#- The steps both materializations share around their apply: creating the tables on a first
    run or a full refresh, and dbt's usual finish. -#}

{% macro rebuild_tables(cfg, batch, target, state, existing) -%}
  {#- First run or full refresh: drop whatever of the model's tables exists (`existing`, none
      for the missing ones), then create them empty, typed after the batch. Runs inside the
      model's transaction, so a failure later in the run keeps the old tables. -#}
  {%- for relation in existing if relation is not none -%}
    {%- do adapter.drop_relation(relation) -%}
  {%- endfor -%}
  {%- do auto_cdc.run_statements([auto_cdc.drop_sequence_type(cfg)]) -%}
  {%- do auto_cdc.create_state_tables(cfg, batch, target, state) -%}
{%- endmacro %}


{% macro finish_run(target, existing_relation, rebuild, temps, post_hooks) -%}
  {#- Grants, docs and the post-hooks inside the transaction, the temp relations dropped, one
      commit, then the post-hooks that run outside it. -#}
  {%- set revoke = should_revoke(existing_relation, full_refresh_mode=rebuild) -%}
  {%- do apply_grants(target, config.get('grants'), should_revoke=revoke) -%}
  {%- do persist_docs(target, model) -%}
  {%- do auto_cdc.end_transaction(temps, post_hooks) -%}
{%- endmacro %}


{% macro end_transaction(temps, post_hooks) -%}
  {%- do run_hooks(post_hooks, inside_transaction=True) -%}
  {%- for relation in temps -%}
    {%- do adapter.drop_relation(relation) -%}
  {%- endfor -%}
  {%- do adapter.commit() -%}
  {%- do run_hooks(post_hooks, inside_transaction=False) -%}
{%- endmacro %}
