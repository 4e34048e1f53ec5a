{#- Stage 7, apply: the run's writes, at one point. In: every statement that writes the model's
    tables (created, rebuilt, altered, resolved from, written, recorded), built in order from
    what the run read, before any of them runs: none of them is read back before all have run.
    Out: all of them applied together. -#}

{% macro apply_writes(statements, post_hooks, batch_sql=none, temps=[], result_sql=none) -%}
  {#- Inside dbt's transaction for the model on DuckDB and PostgreSQL (finish_run commits it);
      on Spark one by one, each a replayable write, the run recorded last. Under dbt v2, whose
      statements share no transaction, the post-hooks dbt-core runs inside the model's
      transaction end the writes, so that one that fails undoes the run there too. Like dbt's
      `main` statement, target/run/<model>.sql gets them first, with the statements that read
      the batch (`batch_sql`), so a failed run leaves what it tried there (not from `dbt
      run-operation`, which has no model to write it for: `batch_sql` none). Then the run's
      working relations (`temps`) are dropped and `result_sql` (a query over the model's own
      tables, not those) is run: its rows are returned (none without it). On DuckDB and
      PostgreSQL all of it is one script: one round trip. -#}
  {%- set kept = [] -%}
  {%- for statement in statements + auto_cdc.transaction_hooks_sql(post_hooks) if statement and statement | trim -%}
    {%- do kept.append(statement | trim) -%}
  {%- endfor -%}
  {%- if batch_sql is not none -%}{%- do write(auto_cdc.run_artifact(batch_sql, kept)) -%}{%- endif -%}
  {%- set drops = [] -%}
  {%- for relation in temps -%}{%- do drops.append(auto_cdc.drop_relation_sql(relation)) -%}{%- endfor -%}
  {{ return(adapter.dispatch('apply_writes', 'auto_cdc')(kept, drops, result_sql)) }}
{%- endmacro %}


{% macro run_artifact(batch_sql, writes) -%}
  {#- The text of target/run/<model>.sql: the statements that read this run's batch, then its
      writes, in the order they run. The metadata lookups and checks between them are in dbt's
      debug log (logs/dbt.log). -#}
  {%- set read = [] -%}
  {%- for statement in batch_sql if statement and statement | trim -%}{%- do read.append(statement | trim) -%}{%- endfor -%}
  {%- set parts = ["-- auto_cdc: model '" ~ model.name ~ "', the statements of this run (metadata lookups and checks: logs/dbt.log)"] -%}
  {%- do parts.append("\n-- The batch: the events this run read\n" ~ ((read | join(';\n\n') ~ ';') if read else '-- (none)')) -%}
  {%- do parts.append("\n-- The writes, applied together" ~ (" in one transaction" if auto_cdc.capabilities().transactions else ", one by one, the run recorded last")
                      ~ "\n" ~ ((writes | join(';\n\n') ~ ';') if writes else '-- (none: nothing to apply)')) -%}
  {{ return(parts | join('\n') ~ '\n') }}
{%- endmacro %}


{% macro transaction_hooks_sql(hooks) -%}
  {#- Under dbt v2: the SQL of the hooks that run inside the model's transaction (run_hooks'
      rule), rendered as run_hooks renders them. None under dbt-core, which runs them itself. -#}
  {%- set statements = [] -%}
  {%- if auto_cdc.dbt_v2() -%}
    {%- for hook in hooks | selectattr('transaction', 'equalto', true) -%}
      {%- do statements.append(render(hook.get('sql'))) -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return(statements) }}
{%- endmacro %}

{% macro default__apply_writes(statements, drops, result_sql) -%}
  {{ return(auto_cdc.run_script(statements + drops, result_sql)) }}
{%- endmacro %}


{% macro note_fence_sql(fence) -%}
  {#- The first of a run's writes when it has a fence (read_fence): what its tables are before it
      resolves its changes from them. Nothing where a transaction and lock_target serialise runs. -#}
  {{ return(adapter.dispatch('note_fence_sql', 'auto_cdc')(fence)) }}
{%- endmacro %}

{% macro default__note_fence_sql(fence) -%}
  {%- if fence is not none -%}{%- do auto_cdc.missing_hook('note_fence_sql', "concurrency 'fence'") -%}{%- endif -%}
{%- endmacro %}
