{#- Public operation: rename a column of an auto_cdc or auto_cdc_from_snapshot model in every
    table of the model that holds it, so that the model can return it under the new name
    without splitting it in two (README, "Renaming a column"). -#}

{% macro rename_column(model, old, new) -%}
  {#- `dbt run-operation auto_cdc.rename_column --args '{model: users, old: full_name, new: name}'`:
      renames `old` to `new` in the target, the state (the stored events' values and per-column
      sequences) and the change feed, in one transaction where the adapter has them. Run it,
      then run the model with the query that returns `new`. Keys cannot be renamed this way (the
      state is keyed by them: `--full-refresh`). -#}
  {%- do auto_cdc.check_adapter() -%}
  {%- set node = auto_cdc._model_node(model) -%}
  {%- set target = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias or node.name, type='table') -%}
  {%- set where = "auto_cdc.rename_column: model '" ~ model ~ "': " -%}
  {%- if adapter.get_relation(target.database, target.schema, target.identifier) is none -%}
    {%- do exceptions.raise_compiler_error(where ~ target ~ " does not exist; nothing was renamed. Rename the column in the model query only.") -%}
  {%- endif -%}
  {%- set keys = auto_cdc._node_config(node, 'keys') -%}
  {%- if (old | lower) in ([keys] if keys is string else (keys or [])) | map('lower') | list -%}
    {%- do exceptions.raise_compiler_error(where ~ "'" ~ old ~ "' is a key column; the state is keyed by it, so it cannot be renamed"
        ~ " in place; nothing was renamed. Rebuild with `dbt run --full-refresh -s " ~ model ~ "` after renaming it in the model query.") -%}
  {%- endif -%}
  {%- set target_names = adapter.get_columns_in_relation(target) | map(attribute='name') | list -%}
  {%- if auto_cdc.column_named(old, target_names) is none -%}
    {%- do exceptions.raise_compiler_error(where ~ target ~ " has no column '" ~ old ~ "'; nothing was renamed.") -%}
  {%- endif -%}
  {#- Taken: any column of that name in any case, since configs match names ignoring case. -#}
  {%- if new | lower in target_names | map('lower') | list -%}
    {%- do exceptions.raise_compiler_error(where ~ target ~ " already has a column '" ~ new ~ "'; nothing was renamed."
        ~ " If a run already appended it, rebuild with `dbt run --full-refresh -s " ~ model ~ "`, or drop it from every table of the model first.") -%}
  {%- endif -%}

  {#- Each table's columns that hold `old`: the column itself, its per-column sequences (SCD1
      partial updates), and SCD2's "event wrote it" (partial updates) and "event carried it"
      (columns appended by a run) flags. -#}
  {%- set renames = {old | lower: new, auto_cdc.event_known(old): auto_cdc.event_known(new), auto_cdc.event_flag(old): auto_cdc.event_flag(new)} -%}
  {%- set old_prefix = auto_cdc.column_seq_prefix(old) -%}
  {%- set new_prefix = auto_cdc.column_seq_prefix(new) -%}
  {%- set cdc_tables = auto_cdc.state_relations(target) -%}
  {%- set statements = [] -%}
  {%- for relation in [target, cdc_tables.state, auto_cdc.change_feed_relation(target)] -%}
    {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is not none -%}
      {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- set name = column.name | lower -%}
        {#- A per-column sequence: the prefix, or prefix_<part> for a `sequence_by` list. -#}
        {%- set part = name[old_prefix | length:] -%}
        {%- if name in renames -%}
          {%- do statements.append(auto_cdc.rename_column_sql(relation, column.name, renames[name])) -%}
        {%- elif name.startswith(old_prefix) and (part == '' or (part.startswith('_') and part[1:].isdigit())) -%}
          {%- do statements.append(auto_cdc.rename_column_sql(relation, column.name, new_prefix ~ part)) -%}
        {%- endif -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do auto_cdc.apply_writes(statements, []) -%}
  {%- do adapter.commit() -%}
  {%- do log("auto_cdc.rename_column: model '" ~ model ~ "': renamed '" ~ old ~ "' to '" ~ new ~ "' (" ~ statements | length
             ~ " column(s) in the model's tables). Run the model with a query that returns '" ~ new ~ "' now.", info=true) -%}
{%- endmacro %}


{% macro rename_column_sql(relation, old, new) -%}
  alter table {{ relation }} rename column {{ auto_cdc.quote_identifier(old) }} to {{ auto_cdc.quote_identifier(new) }}
{%- endmacro %}


{% macro _model_node(name) -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.name == name -%}
    {%- if node.config.materialized in ['auto_cdc', 'auto_cdc_from_snapshot'] -%}{{ return(node) }}{%- endif -%}
  {%- endfor -%}
  {%- do exceptions.raise_compiler_error("auto_cdc.rename_column: no auto_cdc or auto_cdc_from_snapshot model named '" ~ name ~ "' in the project.") -%}
{%- endmacro %}


{% macro _node_config(node, name) -%}
  {#- A model's config from its node, at the top level or under `meta` (dbt v2's form). -#}
  {%- set value = node.config.get(name) -%}
  {{ return(value if value is not none else (node.config.get('meta') or {}).get(name)) }}
{%- endmacro %}
