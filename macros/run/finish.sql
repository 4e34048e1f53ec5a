{#- Last stage: dbt's usual finish. In: the target, whether it was rebuilt, the temp relations.
    Out: grants, docs, post-hooks, temp relations dropped, one commit. -#}

{% macro report_empty_run(existed) -%}
  {#- `--empty`: nothing is applied, and the log line says so. -#}
  {%- do log("auto_cdc: " ~ model.name ~ ": --empty: " ~ ("nothing applied; the existing tables are unchanged" if existed
             else "created the tables empty; no run or version is recorded"), info=true) -%}
  {%- do store_raw_result(name='main', message='num_upserted_rows=0 num_deleted_rows=0 (--empty: nothing applied)',
                          code='AUTO_CDC', rows_affected=0) -%}
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
