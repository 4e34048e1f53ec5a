{#- Public: reading a model's change feed downstream. In: the model (`ref('users')`, built with
    change_feed=true) and, in an incremental model, the last change it consumed. Out: a query
    over `<model>__cdc_changes` returning the changes not consumed yet; an error when some of
    them are gone (trimmed by retention, or never recorded), instead of reading on without them. -#}

{% macro changes(model_relation, run_id_column='_run_id', since_run_id=none) -%}
  {#- In an incremental model (`is_incremental()`), the changes with `_run_id` above the
      largest `run_id_column` in {{ this }} (0 when it is empty); with `since_run_id`, the
      changes above it; otherwise all of them:

        select * from ({{ auto_cdc.changes(ref('users')) }}) as c

      Columns: the target's, then `_change_type` (insert, update_preimage, update_postimage,
      delete), `_run_id`, `_committed_at`. -#}
  {%- set feed = auto_cdc.change_feed_relation(model_relation) -%}
  {%- set checked = execute -%}
  {%- if execute and auto_cdc.existing_relations([feed])[0] is none -%}
    {#- `dbt compile` and `dbt docs generate` on a fresh database render the query unchecked:
        the upstream model has not run yet. A run or a build fails instead of reading nothing. -#}
    {%- set checked = false -%}
    {%- if not auto_cdc._only_compiling() -%}
      {%- do auto_cdc._missing_change_feed_error(model_relation, feed) -%}
    {%- endif -%}
  {%- endif -%}
  {#- `--empty` reads no change, as every ref() reads no row (dbt v2 renders {{ this }} without
      rows too, so what was consumed cannot be read). -#}
  {%- set empty_run = auto_cdc.is_empty_run() -%}
  {%- set since = since_run_id -%}
  {%- if since is none and checked and is_incremental() and not empty_run -%}
    {%- set since = run_query(auto_cdc.consumed_run_id_sql(this, run_id_column)).rows[0][0] | int -%}
  {%- endif -%}
  {%- if checked and not empty_run -%}
    {%- do auto_cdc._check_nothing_unseen_is_gone(model_relation, feed, since) -%}
  {%- endif -%}
  select *
  from {{ auto_cdc.recorded_changes_sql(feed, auto_cdc.state_relations(model_relation).runs) }} as changes
  {%- if empty_run %}
  where false
  {%- elif since is not none %}
  where _run_id > {{ since }}
  {%- endif %}
{%- endmacro %}


{% macro recorded_changes_sql(feed, runs) -%}
  {#- The change feed's rows of the runs in the run history. Without transactions a run writes
      its changes before its run history row, its commit point: a consumer reading between the
      two must not see them (the next run replaces them). `runs` none: every row. -#}
  {%- if runs is none -%}{{ return(feed) }}{%- endif -%}
  (select * from {{ feed }} where _run_id <= (select coalesce(max(run_id), 0) from {{ runs }}))
{%- endmacro %}


{% macro _only_compiling() -%}
  {#- dbt compile, dbt docs generate, dbt parse, dbt ls: the model is rendered, not run. -#}
  {%- set which = flags.WHICH if flags is not none and flags.WHICH is not none else none -%}
  {{ return(which in ['compile', 'generate', 'parse', 'list', 'ls']) }}
{%- endmacro %}


{% macro _missing_change_feed_error(model_relation, feed) -%}
  {%- set upstream = model_relation.identifier -%}
  {%- set configured = [] -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' and (node.alias or node.name) | lower == upstream | lower -%}
    {%- if auto_cdc._node_config(node, 'change_feed') in [true, 'true'] -%}{%- do configured.append(node.name) -%}{%- endif -%}
  {%- endfor -%}
  {%- set advice = ("'" ~ upstream ~ "' has change_feed=true but has not run yet (or its change feed was dropped): run it first (`dbt run -s " ~ configured[0]
                    ~ "`, or `dbt build -s +" ~ model.name ~ "`).") if configured
                   else ("configure '" ~ upstream ~ "' with change_feed=true and run it first.") -%}
  {%- do exceptions.raise_compiler_error("auto_cdc.changes: model '" ~ model.name ~ "' reads the change feed of '" ~ upstream
      ~ "', but " ~ feed ~ " does not exist: " ~ advice) -%}
{%- endmacro %}


{% macro consumed_run_id_sql(consumer, run_id_column) -%}
  select coalesce(max({{ auto_cdc.quote_identifier(run_id_column) }}), 0) from {{ consumer }}
{%- endmacro %}


{% macro unseen_gap_sql(feed, runs, since) -%}
  {#- The first change the consumer has not seen (or, when there is none, the run after the
      last), and how many runs between hold no change at all: every other run id in between
      had changes that are not in the change feed any more (or never were). -#}
  with next_change as (
    select coalesce(
      (select min(_run_id) from {{ auto_cdc.recorded_changes_sql(feed, runs) }} as changes where _run_id > {{ since }}),
      (select coalesce(max(run_id), 0) + 1 from {{ runs }})
    ) as run_id
  )
  select n.run_id as next_run_id,
         (select count(*) from {{ runs }} as r
          where r.run_id > {{ since }} and r.run_id < n.run_id
            and r.num_upserted_rows + r.num_deleted_rows = 0) as quiet_runs,
         (select coalesce(max(run_id), 0) from (
            select max(run_id) as run_id from {{ runs }}
            union all
            select max(_run_id) from {{ auto_cdc.recorded_changes_sql(feed, runs) }} as changes
          ) as ids) as last_run_id
  from next_change as n
{%- endmacro %}


{% macro _check_nothing_unseen_is_gone(model_relation, feed, since) -%}
  {#- Fails an incremental consumer (warns a full read) whose next changes are not all there:
      reading on would silently leave them out. -#}
  {%- set runs = auto_cdc.state_relations(model_relation).runs -%}
  {%- set gap = auto_cdc.named_row(['next_run_id', 'quiet_runs', 'last_run_id'], run_query(auto_cdc.unseen_gap_sql(feed, runs, since or 0)).rows[0]) -%}
  {%- if since is not none and since > gap.last_run_id | int -%}
    {#- The consumer has read further than the model has run: the model's tables were made anew
        (dropped, not rebuilt with --full-refresh), and its run ids started again. -#}
    {%- do exceptions.raise_compiler_error("auto_cdc.changes: model '" ~ model.name ~ "' last consumed run " ~ since ~ " of the change feed of '"
        ~ model_relation.identifier ~ "', whose last run is " ~ (gap.last_run_id | int) ~ ": its tables were created anew, so run ids started again"
        ~ " and reading on would silently miss their changes. Rebuild it: `dbt run --full-refresh -s " ~ model.name ~ "`.") -%}
  {%- endif -%}
  {%- set missing = (gap.next_run_id | int) - (since or 0) - 1 - (gap.quiet_runs | int) -%}
  {%- if missing <= 0 -%}{{ return(none) }}{%- endif -%}
  {%- set gone = "changes of run(s) " ~ ((since or 0) + 1) ~ " to " ~ (gap.next_run_id | int - 1) ~ " of '" ~ model_relation.identifier
      ~ "' are not in " ~ feed ~ " (trimmed by `change_feed_retention`, or not recorded while `change_feed` was off or the change feed was recreated)" -%}
  {%- if since is not none -%}
    {%- do exceptions.raise_compiler_error("auto_cdc.changes: model '" ~ model.name ~ "' last consumed run " ~ since ~ " of the change feed of '"
        ~ model_relation.identifier ~ "', but " ~ gone ~ "; reading on would silently miss them. Rebuild it: `dbt run --full-refresh -s "
        ~ model.name ~ "` (with a full read that starts from the change feed's first change, or from '" ~ model_relation.identifier ~ "' itself).") -%}
  {%- endif -%}
  {%- do exceptions.warn("auto_cdc.changes: model '" ~ model.name ~ "' reads the whole change feed of '" ~ model_relation.identifier
      ~ "', but " ~ gone ~ ": replaying it does not give the table.") -%}
{%- endmacro %}
