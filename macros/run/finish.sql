{#- Last stage: dbt's usual finish. In: the target, whether it was rebuilt. Out: grants, docs,
    post-hooks, one commit (apply_writes dropped the temp relations). -#}

{% macro report_empty_run(existed) -%}
  {#- `--empty`: nothing is applied, and the log line says so. -#}
  {%- do log("auto_cdc: " ~ model.name ~ ": --empty: " ~ ("nothing applied; the existing tables are unchanged" if existed
             else "created the tables empty; no run or version is recorded"), info=true) -%}
  {%- do auto_cdc.report_result('num_upserted_rows=0 num_deleted_rows=0 (--empty: nothing applied)', 0) -%}
{%- endmacro %}


{% macro report_no_snapshot(target, existing_relation) -%}
  {#- auto_cdc_from_snapshot with no new snapshot: nothing to apply. -#}
  {%- do log("auto_cdc: " ~ model.name ~ ": no new snapshot; nothing to apply.", info=true) -%}
  {%- if existing_relation is none -%}
    {%- do auto_cdc.model_warning(model.name, "no snapshot is available yet, so " ~ target
        ~ " is not created; it will be with the first snapshot.") -%}
  {%- endif -%}
  {%- do auto_cdc.report({'num_upserted_rows': 0, 'num_deleted_rows': 0}) -%}
{%- endmacro %}


{% macro finish_run(target, existing_relation, rebuild, post_hooks, target_exists=true) -%}
  {#- Grants and docs on the target (when there is one: a snapshot model waiting for its first
      snapshot has none yet), the post-hooks inside the transaction, one commit, then the
      post-hooks that run outside it. -#}
  {%- if target_exists -%}
    {%- set revoke = should_revoke(existing_relation, full_refresh_mode=rebuild) -%}
    {%- do apply_grants(target, config.get('grants'), should_revoke=revoke) -%}
    {%- do auto_cdc.persist_target_docs(target) -%}
  {%- endif -%}
  {#- Under dbt v2 these hooks ended the run's writes (apply_writes). -#}
  {%- if not auto_cdc.dbt_v2() -%}{%- do run_hooks(post_hooks, inside_transaction=True) -%}{%- endif -%}
  {%- do adapter.commit() -%}
  {%- do run_hooks(post_hooks, inside_transaction=False) -%}
{%- endmacro %}


{% macro persist_target_docs(target) -%}
  {{ return(adapter.dispatch('persist_target_docs', 'auto_cdc')(target)) }}
{%- endmacro %}

{% macro default__persist_target_docs(target) -%}
  {%- do persist_docs(target, model) -%}
{%- endmacro %}
