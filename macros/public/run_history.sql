{#- Public: the run histories of auto_cdc models as one relation, for dashboards, freshness
    checks and tests (docs/monitoring.md, "Watching many models"). In: the models, or none for
    every auto_cdc model of the project. Out: a query with a row per applied run. -#}

{% macro run_history(models=none) -%}
  {#- A row per applied run of each model: `model_name`, then its run history's metrics
      (run_history_columns). In a model:

        select * from ({{ auto_cdc.run_history([ref('orders'), ref('customers')]) }}) as runs

      Given relations (ref()), dbt runs this model after them, and a missing run history fails
      the run. Without them, every auto_cdc model of the project (both materializations) that
      has run so far; order the reading model with `-- depends_on: {{ ref('orders') }}`
      comments, or run it after the others. A history from before a metric existed has NULL
      there until the model's next run adds its columns. -#}
  {%- set histories = [] -%}
  {%- for name, target, runs in auto_cdc._existing_run_histories(models) -%}
    {%- if runs is not none -%}
      {%- do histories.append((name, runs)) -%}
    {%- elif models is not none and not auto_cdc._only_compiling() -%}
      {%- do exceptions.raise_compiler_error("auto_cdc.run_history: " ~ target ~ " has no run history ("
          ~ auto_cdc.state_relations(target).runs.identifier ~ "): it is not an auto_cdc model, or it has not run yet. Run it first, or leave it out of `models`.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set found = auto_cdc.columns_of(histories | map(attribute=1) | list) if histories else [] -%}
  {%- set selects = [] -%}
  {%- for name, runs in histories -%}
    {%- set present = found[loop.index0] | map(attribute='name') | map('lower') | list -%}
    {%- do selects.append(auto_cdc._run_history_select(auto_cdc.string_literal(name), present, 'from ' ~ runs)) -%}
  {%- endfor -%}
  {#- Nothing has run yet (or the project is being parsed): the columns, no rows. -#}
  {{ selects | join('\nunion all\n') if selects else auto_cdc._run_history_select('null', [], 'where 1 = 0') }}
{%- endmacro %}


{% macro _run_history_select(model_name, present, rest) -%}
  {#- One model's select of run_history: `model_name` (SQL), then each column, NULL where its run
      history lacks it (`present`: the names it has), then `rest` (its FROM). -#}
  {%- set parts = ['cast(' ~ model_name ~ ' as ' ~ dbt.type_string() ~ ') as model_name'] -%}
  {%- for column in auto_cdc.run_history_columns() -%}
    {%- do parts.append(column.name if column.name in present else 'cast(null as ' ~ column.data_type ~ ') as ' ~ column.name) -%}
  {%- endfor -%}
  {{ return('select ' ~ parts | join(', ') ~ ' ' ~ rest) }}
{%- endmacro %}


{% macro run_history_columns() -%}
  {#- The run history's columns run_history reads, as {name, data_type}: what a run did, not
      what the next run reads back (checkpoint, truncate watermark, configuration). -#}
  {%- set count = dbt.type_bigint() -%}
  {%- set columns = [{'name': 'run_id', 'data_type': count}, {'name': 'invocation_id', 'data_type': dbt.type_string()},
                     {'name': 'applied_at', 'data_type': auto_cdc.type_timestamp_tz()}, {'name': 'full_refresh', 'data_type': dbt.type_boolean()},
                     {'name': 'num_events', 'data_type': count}, {'name': 'num_upserted_rows', 'data_type': count},
                     {'name': 'num_deleted_rows', 'data_type': count}] -%}
  {%- for column in auto_cdc.runs_added_columns() if column.name != 'differing_redelivery' -%}{%- do columns.append(column) -%}{%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}


{% macro _existing_run_histories(models) -%}
  {#- (name, target, run history or none when it does not exist) of each model run_history
      reads (by name for the whole project); looked up once per schema. Nothing while the project is parsed. -#}
  {%- set targets = auto_cdc._run_history_targets(models) if execute else [] -%}
  {%- set schemas = {} -%}
  {%- for name, target in targets -%}
    {%- set schema = (target.database ~ '.' ~ target.schema) | lower -%}
    {%- do schemas.update({schema: schemas.get(schema, []) + [auto_cdc.state_relations(target).runs]}) -%}
  {%- endfor -%}
  {%- set found = {} -%}
  {%- for schema, relations in schemas.items() -%}
    {%- for runs in auto_cdc.existing_relations(relations) if runs is not none -%}{%- do found.update({runs | string: runs}) -%}{%- endfor -%}
  {%- endfor -%}
  {%- set out = [] -%}
  {%- for name, target in targets -%}
    {%- do out.append((name, target, found.get(auto_cdc.state_relations(target).runs | string))) -%}
  {%- endfor -%}
  {{ return(out) }}
{%- endmacro %}


{% macro _run_history_targets(models) -%}
  {#- (name, target relation) of each model run_history reads. -#}
  {%- set targets = [] -%}
  {%- if models is not none -%}
    {%- for relation in ([models] if models is string or models.identifier is defined else models) -%}
      {%- do targets.append((relation.identifier, relation)) -%}
    {%- endfor -%}
    {{ return(targets) }}
  {%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='name') -%}
    {#- Tested in the body: dbt v2 evaluates a `for ... if` filter before the loop runs. -#}
    {%- if node.resource_type == 'model' and auto_cdc._node_config(node, 'materialized') in ['auto_cdc', 'auto_cdc_from_snapshot'] -%}
      {%- do targets.append((node.name, api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias or node.name))) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(targets) }}
{%- endmacro %}
