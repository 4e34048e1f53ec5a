{#- Public: one flow of an auto_cdc model that reads several sources (docs/flows.md). In: the
    flow's name, its relation (or, as a call block, its query) and how it is read. Out: the
    flow's query behind a one-line header that the materialization reads (config/flows.sql);
    a model with flows is its flows, one after another, and nothing else. -#}

{% macro flow(name, relation=none, kind='cdc', once=false, checkpoint_column=none, version=none) -%}
  {%- set spec = {'name': name, 'kind': kind, 'once': once, 'checkpoint_column': checkpoint_column, 'version': version} -%}
  {%- set problems = auto_cdc._flow_argument_problems(spec, relation is not none, caller is defined) -%}
  {%- if execute and model.config.materialized != 'auto_cdc' -%}
    {%- do problems.append("is in a model materialized as '" ~ model.config.materialized ~ "': flows are read by materialized='auto_cdc' only") -%}
  {%- endif -%}
  {%- if problems -%}
    {%- do auto_cdc.model_error(model.name, "flow '" ~ name ~ "' "
        ~ (problems | join('; ')) ~ ". Example: {{ auto_cdc.flow('cdc', source('crm', 'users_cdc'), checkpoint_column='_loaded_at') }}") -%}
  {%- endif %}
/* auto_cdc.flow {{ tojson(spec) }} */
{% if relation is not none -%}
select * from {{ relation }}
{%- else -%}
{{ caller() }}
{%- endif %}
{% endmacro %}


{% macro _flow_argument_problems(spec, has_relation, has_body) -%}
  {#- What is wrong with a flow's arguments alone (the rules that need the model's
      configuration are checked by read_cdc_config). -#}
  {%- set problems = [] -%}
  {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', spec.name | string) -%}
    {%- do problems.append("needs a name of letters, digits and underscores") -%}
  {%- endif -%}
  {%- if has_relation == has_body -%}
    {%- do problems.append("needs either a relation (e.g. source('crm', 'users_cdc')) or a query in a call block, not " ~ ('both' if has_body else 'neither')) -%}
  {%- endif -%}
  {%- if spec.kind not in ['cdc', 'snapshot'] -%}
    {%- do problems.append("has kind='" ~ spec.kind ~ "'; use 'cdc' (a change feed, the default) or 'snapshot' (full snapshots)") -%}
  {%- endif -%}
  {%- if spec.once is not boolean -%}
    {%- do problems.append("has once='" ~ spec.once ~ "'; use true or false") -%}
  {%- endif -%}
  {%- if spec.kind == 'snapshot' and not spec.version -%}
    {%- do problems.append("is a snapshot flow and needs version=: the SQL (usually a column) that gives each row's snapshot version, of the type of `sequence_by`") -%}
  {%- elif spec.kind == 'cdc' and spec.version -%}
    {%- do problems.append("is a change feed: version= is for snapshot flows (its events are ordered by `sequence_by`)") -%}
  {%- endif -%}
  {%- if spec.kind == 'snapshot' and spec.checkpoint_column -%}
    {%- do problems.append("is a snapshot flow: it is read from the versions above the last one read, not by checkpoint_column") -%}
  {%- endif -%}
  {%- if '*/' in tojson(spec) -%}
    {%- do problems.append("has an argument containing '*/'") -%}
  {%- endif -%}
  {{ return(problems) }}
{%- endmacro %}
