{#- Stage 1, configuration: the flows of a model that reads several sources (docs/flows.md).
    In: the compiled model (its auto_cdc.flow() calls), each flow's columns and the resolved
    configuration. Out: the flows, with the columns they share, checked against every rule of a
    combined target before anything is read; or [] for a model with one query. -#}

{% macro model_flows(sql) -%}
  {#- The flows in the compiled model, in order: {name, kind, once, checkpoint_column, version,
      sql}. A model with flows is its flows and nothing else (comments aside). -#}
  {%- set parts = modules.re.split('/[*] auto_cdc[.]flow ([{].*?[}]) [*]/', sql) -%}
  {%- if parts | length == 1 -%}{{ return([]) }}{%- endif -%}
  {%- set before = modules.re.sub('--.*', '', modules.re.sub('/[*].*?[*]/', '', parts[0], flags=modules.re.S)) -%}
  {%- if before | trim -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ model.name ~ "' has SQL before its first auto_cdc.flow(): a model with flows"
        ~ " is its flows and nothing else (put joins or filters inside a flow, in a call block).") -%}
  {%- endif -%}
  {%- set flows = [] -%}
  {%- for i in range(1, parts | length, 2) -%}
    {%- set flow = fromjson(parts[i]) -%}
    {#- A line break after the query: it may end in a -- comment. -#}
    {%- do flow.update({'sql': parts[i + 1] ~ '\n'}) -%}
    {%- do flows.append(flow) -%}
  {%- endfor -%}
  {{ return(flows) }}
{%- endmacro %}


{% macro _read_flows(flows, values, scd_type, sequence, columns, ctu_column, checkpoint_column, errors) -%}
  {#- The rules of several flows into one target, each error naming the flow. Out: the flows,
      each with its `columns` (as it spells them) and its checkpoint column (its own, else the
      model's `checkpoint_column`) resolved, with its type. -#}
  {%- set names = flows | map(attribute='name') | map('lower') | list -%}
  {%- for name in names | unique if names | select('equalto', name) | list | length > 1 -%}
    {%- do errors.append("two flows are named '" ~ name ~ "' (names are matched case-insensitively): give each flow its own name.") -%}
  {%- endfor -%}
  {%- do auto_cdc._check_snapshot_flow(flows, values, scd_type, sequence, errors) -%}
  {%- set types = {} -%}
  {%- set resolved = [] -%}
  {%- for flow in flows -%}
    {%- set needed = columns.written_columns + ((sequence.columns + ([ctu_column] if ctu_column else [])) if flow.kind == 'cdc' else []) -%}
    {%- do resolved.append(auto_cdc._resolve_flow(flow, needed, none if flow.kind == 'snapshot' else flow.checkpoint_column or checkpoint_column, errors)) -%}
    {%- for column in flow.source.columns -%}
      {%- set name = column.name | lower -%}
      {%- if name not in types -%}
        {%- do types.update({name: {'data_type': column.data_type, 'flow': flow.name}}) -%}
      {%- elif types[name].data_type | lower != column.data_type | lower -%}
        {%- do errors.append("column '" ~ column.name ~ "' is " ~ types[name].data_type ~ " in flow '" ~ types[name].flow ~ "' but " ~ column.data_type
            ~ " in flow '" ~ flow.name ~ "': flows into one target must agree on each column's type; cast it in one of them.") -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(resolved) }}
{%- endmacro %}


{% macro _check_snapshot_flow(flows, values, scd_type, sequence, errors) -%}
  {#- The Databricks rules for a snapshot flow beside change feeds: one of it, SCD type 1, no
      NULL-skipping updates, a sequence its version can stand in for. -#}
  {%- set snapshots = flows | selectattr('kind', 'equalto', 'snapshot') | map(attribute='name') | list -%}
  {%- if not snapshots -%}{{ return(none) }}{%- endif -%}
  {%- set where = "snapshot flow '" ~ snapshots[0] ~ "'" -%}
  {%- if snapshots | length > 1 -%}
    {%- do errors.append("flows " ~ snapshots | join(', ') ~ " are all snapshot flows; a target takes one snapshot flow (plus change feeds).") -%}
  {%- endif -%}
  {%- if snapshots | length == flows | length -%}
    {%- do errors.append(where ~ " has no change feed beside it: a model of snapshots alone is materialized='auto_cdc_from_snapshot'.") -%}
  {%- endif -%}
  {%- if scd_type in ['2', 'bitemporal'] -%}
    {%- do errors.append(where ~ ": a snapshot flow combines with change feeds only in stored_as_scd_type=1, not '" ~ scd_type ~ "'.") -%}
  {%- endif -%}
  {%- for other in ['ignore_null_updates', 'ignore_null_updates_column_list', 'ignore_null_updates_except_column_list'] if values[other] not in [none, false] -%}
    {%- do errors.append(where ~ ": `" ~ other ~ "` cannot be used with a snapshot flow (a snapshot row states every column, NULLs included).") -%}
  {%- endfor -%}
  {%- if sequence.exprs | length != 1 -%}
    {%- do errors.append(where ~ ": its version orders it among the change events, so `sequence_by` must be one column or expression, not " ~ sequence.exprs | length ~ ".") -%}
  {%- endif -%}
{%- endmacro %}


{% macro _resolve_flow(flow, needed, checkpoint, errors) -%}
  {#- One flow: does it return the columns it `needed`s and its checkpoint column? Out: the
      flow as later stages read it. -#}
  {%- set missing = [] -%}
  {%- for column in needed if auto_cdc.column_named(column, flow.source.names) is none -%}{%- do missing.append(column) -%}{%- endfor -%}
  {%- if missing -%}
    {%- do errors.append("flow '" ~ flow.name ~ "' does not return " ~ missing | join(', ') ~ ", which "
        ~ ("the target keeps" if flow.kind == 'snapshot' else "the target keeps or a change event needs")
        ~ ": add it to the flow's query, or (for a column the target should not keep) name it in except_column_list.") -%}
  {%- endif -%}
  {%- set checkpoint_name = auto_cdc.column_named(checkpoint, flow.source.names) if checkpoint else none -%}
  {%- set checkpoint_column = flow.source.columns | selectattr('name', 'equalto', checkpoint_name) | first if checkpoint_name else none -%}
  {%- if checkpoint and checkpoint_column is none -%}
    {%- do errors.append("flow '" ~ flow.name ~ "' has no column '" ~ checkpoint ~ "' to read incrementally by (its checkpoint_column"
        ~ (" or the model's" if not flow.checkpoint_column else "") ~ "): its columns are " ~ flow.source.names | join(', ') ~ ".") -%}
  {%- endif -%}
  {{ return({
      'name': flow.name, 'kind': flow.kind, 'once': flow.once, 'version': flow.version, 'sql': flow.sql,
      'columns': flow.source.names,
      'checkpoint_column': checkpoint_column.name if checkpoint_column else none,
      'checkpoint_type': checkpoint_column.data_type if checkpoint_column else none,
  }) }}
{%- endmacro %}
