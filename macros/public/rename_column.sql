{#- Public operation: rename a column of an auto_cdc or auto_cdc_from_snapshot model in every
    table of the model that holds it, so that the model can return it under the new name
    without splitting it in two (docs/configuration.md, "Renaming a column"). -#}

{% macro rename_column(model, old, new) -%}
  {#- `dbt run-operation auto_cdc.rename_column --args '{model: users, old: full_name, new: name}'`:
      renames `old` to `new` in the target, the state (the stored events' values and per-column
      sequences) and the change feed, in one transaction where the adapter has them. Run it,
      then run the model with the query that returns `new`. Every table is checked before the
      first rename: where one cannot take it, nothing is renamed, and the error names the
      columns in the way and the step that works from there. Keys cannot be renamed this way
      (the state is keyed by them: `--full-refresh`). -#}
  {%- do auto_cdc.check_adapter() -%}
  {%- set node = auto_cdc._model_node(model) -%}
  {%- set target = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias or node.name, type='table') -%}
  {%- set where = "auto_cdc.rename_column: model '" ~ model ~ "': " -%}
  {%- set rebuild = "`dbt run --full-refresh -s " ~ model ~ "` with the model query returning '" ~ new ~ "' ("
      ~ ("it starts again from the current snapshot" if node.config.materialized == 'auto_cdc_from_snapshot'
         else "from the whole model query: events it no longer returns are lost") ~ "), after which nothing is left to rename" -%}
  {#- The change feed and the state before the target: where renames are not one transaction
      (Spark), one stopped halfway leaves the target's old name, so running it again finishes it
      (a column already renamed is skipped). -#}
  {%- set change_feed = auto_cdc.change_feed_relation(target) -%}
  {%- set relations = [change_feed, auto_cdc.state_relations(target).state, target] -%}
  {%- set found = auto_cdc.existing_relations(relations) -%}
  {%- if found[2] is none -%}
    {%- do exceptions.raise_compiler_error(where ~ target ~ " does not exist; nothing was renamed. Rename the column in the model query only.") -%}
  {%- endif -%}
  {%- set keys = auto_cdc._node_config(node, 'keys') -%}
  {%- if (old | lower) in ([keys] if keys is string else (keys or [])) | map('lower') | list -%}
    {%- do exceptions.raise_compiler_error(where ~ "'" ~ old ~ "' is a key column; the state is keyed by it, so it cannot be renamed"
        ~ " in place; nothing was renamed. Rebuild with `dbt run --full-refresh -s " ~ model ~ "` after renaming it in the model query.") -%}
  {%- endif -%}
  {%- if old | lower == new | lower -%}
    {%- do exceptions.raise_compiler_error(where ~ "'" ~ new ~ "' differs from '" ~ old ~ "' only in case, which auto_cdc's configs"
        ~ " do not tell apart; nothing was renamed.") -%}
  {%- endif -%}
  {%- set existing = [] -%}
  {%- for relation in found if relation is not none -%}{%- do existing.append(relation) -%}{%- endfor -%}
  {%- set names = {} -%}
  {%- for columns in auto_cdc.columns_of(existing) -%}
    {%- do names.update({existing[loop.index0].identifier: columns | map(attribute='name') | list}) -%}
  {%- endfor -%}

  {%- set target_names = names[target.identifier] -%}
  {%- set has_new = auto_cdc._column_taken(new, target_names) -%}
  {%- if auto_cdc.column_named(old, target_names) is none -%}
    {%- if not has_new -%}
      {%- do exceptions.raise_compiler_error(where ~ target ~ " has no column '" ~ old ~ "'; nothing was renamed.") -%}
    {%- endif -%}
    {#- A rebuild from a query returning `new` (or an earlier rename) already made the tables one. -#}
    {%- set kept = found[0] is not none and auto_cdc.column_named(old, names[change_feed.identifier]) is not none -%}
    {%- do exceptions.raise_compiler_error(where ~ target ~ " has no column '" ~ old ~ "' but has '" ~ new ~ "': nothing to rename (renamed"
        ~ " already, rebuilt with `--full-refresh` from a query returning '" ~ new ~ "', or '" ~ old ~ "' dropped); nothing was renamed."
        ~ (" Its change feed " ~ change_feed ~ " keeps its column '" ~ old ~ "' with the changes recorded under that name, as it keeps"
           ~ " every column the target no longer has." if kept else "")
        ~ " Run the model with the query that returns '" ~ new ~ "'.") -%}
  {%- endif -%}
  {%- if has_new -%}
    {%- do exceptions.raise_compiler_error(where ~ target ~ " already has a column '" ~ new ~ "' next to '" ~ old ~ "': a run with the"
        ~ " new name appended it, so the column is split (values written since are in '" ~ new ~ "', older ones in '" ~ old ~ "') and a"
        ~ " rename cannot join the two; nothing was renamed. Join them with " ~ rebuild ~ ".") -%}
  {%- endif -%}

  {#- Every table is checked before anything is written: a new name one of them already holds
      (the change feed keeps the columns of earlier targets) blocks the whole rename. -#}
  {%- set parts = auto_cdc._sequence_parts(names.get(relations[1].identifier, [])) -%}
  {%- set statements = [] -%}
  {%- set blocked = [] -%}
  {%- for relation in existing -%}
    {%- for spelled, renamed in auto_cdc._renamed_columns(old, new, names[relation.identifier], parts) -%}
      {%- if auto_cdc._column_taken(renamed, names[relation.identifier]) -%}
        {%- do blocked.append({'relation': relation, 'column': auto_cdc.column_named(renamed, names[relation.identifier]) or renamed}) -%}
      {%- else -%}
        {%- do statements.append(auto_cdc.rename_column_sql(relation, spelled, renamed)) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if blocked -%}
    {%- do auto_cdc._fail_blocked_rename(where, old, new, blocked, change_feed, rebuild) -%}
  {%- endif -%}
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


{% macro _renamed_columns(old, new, columns, parts) -%}
  {#- The columns of a table (`columns`: its column names) that hold `old`, each with its new name:
      the column itself, its per-column sequences (SCD1 partial updates; `parts`: the number of
      sequence parts, as the state stores them), and SCD2's "event wrote it" (partial updates)
      and "event carried it" (columns appended by a run) flags. Named exactly, so that another
      column's (`old_1`'s sequence, say) is never taken for one of them. -#}
  {%- set pairs = [(old, new), (auto_cdc.event_known(old), auto_cdc.event_known(new)), (auto_cdc.event_flag(old), auto_cdc.event_flag(new))] -%}
  {%- set new_sequences = auto_cdc.seq_names(auto_cdc.column_seq_prefix(new), parts) -%}
  {%- for sequence in auto_cdc.seq_names(auto_cdc.column_seq_prefix(old), parts) -%}
    {%- do pairs.append((sequence, new_sequences[loop.index0])) -%}
  {%- endfor -%}
  {%- set renamed = [] -%}
  {%- for before, after in pairs if auto_cdc.column_named(before, columns) is not none -%}
    {%- do renamed.append((auto_cdc.column_named(before, columns), after)) -%}
  {%- endfor -%}
  {{ return(renamed) }}
{%- endmacro %}


{% macro _sequence_parts(state_columns) -%}
  {#- How many parts the stored sequences have: `__cdc_upsert_seq` (SCD1) or `__cdc_seq` (SCD2)
      alone, or as `_1`, `_2`, ... (a `sequence_by` list). -#}
  {%- set parts = [] -%}
  {%- for name in state_columns if modules.re.match('^__cdc_(upsert_)?seq(_[0-9]+)?$', name | lower) -%}
    {%- do parts.append(name) -%}
  {%- endfor -%}
  {{ return([parts | length, 1] | max) }}
{%- endmacro %}


{% macro _column_taken(name, columns) -%}
  {#- Any column of that name in any case, since configs match names ignoring case. -#}
  {{ return(name | lower in columns | map('lower') | list) }}
{%- endmacro %}


{% macro _fail_blocked_rename(where, old, new, blocked, change_feed, rebuild) -%}
  {#- Some table already has a column a rename would create. Where only the change feed does, its
      column can be moved out of the way (the change feed keeps columns of earlier targets, and
      a run ignores one the target lacks); anywhere else only a rebuild joins them. -#}
  {%- set named = [] -%}
  {%- set moves = [] -%}
  {%- for item in blocked -%}
    {%- do named.append(item.relation ~ " already has a column '" ~ item.column ~ "'") -%}
    {%- if item.relation.identifier == change_feed.identifier -%}
      {%- do moves.append(auto_cdc.rename_column_sql(change_feed, item.column, item.column ~ "__before_rename") | trim) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set message = where ~ "cannot rename '" ~ old ~ "' to '" ~ new ~ "': " ~ (named | join(', and ')) ~ "; nothing was renamed." -%}
  {%- if moves | length == blocked | length -%}
    {%- set message = message ~ " The change feed's '" ~ new ~ "' holds the changes of runs whose target had a column '" ~ new
        ~ "' (runs with the new name before a `--full-refresh`?). To keep them, move it out of the way first: "
        ~ (moves | join('; ')) ~ "; then run this again. Or rebuild with " ~ rebuild ~ " (the change feed records the rebuild)." -%}
  {%- else -%}
    {%- set message = message ~ " Rebuild with " ~ rebuild ~ "." -%}
  {%- endif -%}
  {%- do exceptions.raise_compiler_error(message) -%}
{%- endmacro %}
