{#- Stage 3, batch (auto_cdc with flows). In: `cfg` (its flows), the run's temp relations and
    what the last run recorded of each flow. Out: the run's batch in one temp table, as for a
    model with one query plus `__cdc_flow`: each change feed's events at or above its own checkpoint,
    and a snapshot flow's new versions, each as a truncate at the version (every key not in it
    is deleted then) followed by an upsert of each of its rows at the version. -#}

{% macro fill_flows_batch(cfg, temps, relation, last_run, empty_run) -%}
  {#- The statements that fill `relation` (the batch, or with on_bad_rows='quarantine' the rows
      read): its columns are those of every flow (a flow's missing ones stay NULL), typed by
      the first flow that has them; then each flow's rows are inserted by name. -#}
  {%- set sequence_types = auto_cdc.flow_sequence_types(cfg, temps.probe) -%}
  {%- set read_before = last_run.flows if last_run else {} -%}
  {%- set statements = [auto_cdc.temp_table_sql(relation, auto_cdc.flows_batch_shape_sql(cfg))] -%}
  {%- for flow in cfg.flows -%}
    {%- set recorded = read_before.get(flow.name | lower) -%}
    {%- set filter = auto_cdc.flow_filter(flow, recorded, sequence_types[flow.name][0], empty_run) -%}
    {%- if flow.once and filter is none and last_run is not none and not empty_run -%}
      {%- do auto_cdc.model_warning(cfg.model_name, "flow '" ~ flow.name ~ "' is a once flow this model has not read"
          ~ " rows from before: it is read now, in full. Its rows older than deletes whose tombstones have expired (`tombstone_retention`)"
          ~ " bring those keys back; remove the flow if it was read under another name.") -%}
    {%- endif -%}
    {%- if filter != 'false' -%}
      {%- do statements.append(auto_cdc.insert_flow_rows_sql(cfg, flow, relation, filter)) -%}
      {%- if flow.kind == 'snapshot' -%}
        {%- do statements.append(auto_cdc.insert_snapshot_truncates_sql(flow, relation, filter)) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do statements.append(auto_cdc.analyze_sql(relation, cfg.key_columns + ['__cdc_op'])) -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro flow_filter(flow, recorded, sequence_type, empty_run) -%}
  {#- Which of a flow's rows this run reads: 'false' (none: `--empty`, or a `once` flow that has
      delivered rows), none (all: first run, full refresh, a flow new to the model, a flow whose
      checkpoint column or version expression changed), or the rows at or above
      its checkpoint (a change feed), or the versions above the last one read (a snapshot
      flow: an older version is overruled by it anyway, since a snapshot deletes every key
      older than its version that it lacks). Rows with no checkpoint or version are read too,
      so validation reports them instead of skipping them for ever. -#}
  {%- if empty_run or (flow.once and recorded and recorded.read) -%}
    {{ return('false') }}
  {%- elif not recorded or recorded.checkpoint_value is none or recorded.kind != flow.kind
        or recorded.reading != auto_cdc.flow_reading(flow) -%}
    {{ return(none) }}
  {%- elif flow.kind == 'snapshot' -%}
    {%- set version = '(' ~ flow.version ~ ')' -%}
    {{ return(auto_cdc.after_checkpoint(version, sequence_type, recorded.checkpoint_value, inclusive=false)) }}
  {%- elif flow.checkpoint_column -%}
    {%- set column = 'src.' ~ auto_cdc.quote_identifier(flow.checkpoint_column) -%}
    {{ return(auto_cdc.after_checkpoint(column, flow.checkpoint_type, recorded.checkpoint_value, inclusive=true)) }}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}


{% macro flows_batch_shape_sql(cfg) -%}
  {#- No rows: each column of the flows together, typed by the first flow that has it, then the
      event columns. -#}
  {%- set owner = {} -%}
  {%- for flow in cfg.flows -%}
    {%- set flow_index = loop.index0 -%}
    {%- for column in flow.columns -%}
      {%- if column | lower not in owner -%}{%- do owner.update({column | lower: flow_index}) -%}{%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  select
    {%- for column in cfg.source_columns %}
    f{{ owner[column | lower] }}.{{ auto_cdc.quote_identifier(auto_cdc.flow_column(cfg.flows[owner[column | lower]].columns, column)) }} as {{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    {{ auto_cdc.flow_event_columns(cfg) | map('replace', '__cdc_', 'f0.__cdc_') | join(', ') }}
  from
  {%- for flow in cfg.flows %}
  {{ 'cross join' if not loop.first }} ({{ auto_cdc.flow_events_sql(cfg, flow, 'false') }}) as f{{ loop.index0 }}
  {%- endfor %}
{%- endmacro %}


{% macro flow_event_columns(cfg) -%}
  {#- What the batch adds to a flow's columns (batch_sql's columns), and the flow's name. -#}
  {{ return(['__cdc_op'] + auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) + (['__cdc_sys'] if cfg.system_expr else [])
            + (['__cdc_ctu'] if cfg.columns_to_update else []) + ['__cdc_flow']) }}
{%- endmacro %}


{% macro flow_column(names, column) -%}
  {#- `column` as `names` spell it (names match case-insensitively, like keys across flows). -#}
  {%- for name in names if name | lower == column | lower -%}{{ return(name) }}{%- endfor -%}
  {{ return(none) }}
{%- endmacro %}


{% macro flow_events_sql(cfg, flow, filter) -%}
  {#- A flow's rows as events, in the flow's own columns plus the event columns. A change feed
      is classified and ordered as a model with one query would be (batch_sql); a snapshot
      flow's rows are upserts at their version (writing every column). -#}
  {%- if flow.kind == 'cdc' -%}
    select *, {{ auto_cdc.string_literal(flow.name) }} as __cdc_flow
    from ({{ auto_cdc.batch_sql(cfg, flow.sql, filter) }}) as events
  {%- else -%}
    select src.*, 'upsert' as __cdc_op, ({{ flow.version }}) as {{ auto_cdc.seq_names('__cdc_seq', 1)[0] }},
      {%- if cfg.columns_to_update %} cast(null as {{ dbt.type_string() }}) as __cdc_ctu,{% endif %}
      {{ auto_cdc.string_literal(flow.name) }} as __cdc_flow
    from ({{ flow.sql }}) as src
    {%- if filter %}
    where {{ filter }}
    {%- endif %}
  {%- endif -%}
{%- endmacro %}


{% macro insert_flow_rows_sql(cfg, flow, batch, filter) -%}
  {#- A flow's events, by name: the columns it lacks stay NULL. -#}
  {%- set model_names = [] -%}
  {%- for column in flow.columns -%}
    {%- do model_names.append(auto_cdc.flow_column(cfg.source_columns, column)) -%}
  {%- endfor -%}
  insert into {{ batch }} ({{ auto_cdc.quoted_list(model_names + auto_cdc.flow_event_columns(cfg)) }})
  select {{ auto_cdc.quoted_list(flow.columns + auto_cdc.flow_event_columns(cfg)) }}
  from ({{ auto_cdc.flow_events_sql(cfg, flow, filter) }}) as events
{%- endmacro %}


{% macro insert_snapshot_truncates_sql(flow, batch, filter) -%}
  {#- Each version read: a truncate at it, applied before its rows (the rule of a truncate and
      an upsert at one sequence), so the keys it lacks are deleted at its version. Rows with no
      version have no truncate: validation reports them, or quarantine sets them aside. -#}
  insert into {{ batch }} (__cdc_op, {{ auto_cdc.seq_names('__cdc_seq', 1)[0] }}, __cdc_flow)
  select distinct 'truncate', ({{ flow.version }}), {{ auto_cdc.string_literal(flow.name) }}
  from ({{ flow.sql }}) as src
  where ({{ flow.version }}) is not null
  {%- if filter %}
    and {{ filter }}
  {%- endif %}
{%- endmacro %}


{% macro flow_sequence_types(cfg, probe) -%}
  {#- Snapshot versions and change-event sequences form one ordering: every flow's sequence (a
      snapshot flow's version) must have one type, part by part. Returns {flow: [type per
      part]}; no rows are read. Runs after check_expressions has compiled each expression. -#}
  {%- if not cfg.flows -%}{{ return({}) }}{%- endif -%}
  {%- set types = {} -%}
  {%- for column in auto_cdc.query_columns(auto_cdc.flow_sequences_probe_sql(cfg), probe).columns -%}
    {%- set flow = cfg.flows[column.name.split('__')[3] | int] -%}
    {%- do types.setdefault(flow.name, []).append(column.data_type) -%}
  {%- endfor -%}
  {%- set first = cfg.flows[0].name -%}
  {%- for flow in cfg.flows if types[flow.name] | map('lower') | list != types[first] | map('lower') | list -%}
    {%- set order_by = {'snapshot': 'its version', 'cdc': '`sequence_by`'} -%}
    {%- do auto_cdc.model_error(cfg.model_name, "flow '" ~ first ~ "' orders its rows by " ~ order_by[cfg.flows[0].kind]
        ~ ", of type " ~ types[first] | join(', ') ~ "; flow '" ~ flow.name ~ "' by " ~ order_by[flow.kind] ~ ", of type " ~ types[flow.name] | join(', ')
        ~ "; nothing was written. Snapshot versions and change-event sequences form one ordering, so they must have one type: cast"
        ~ " one of them (e.g. version='cast(dump_lsn as bigint)').") -%}
  {%- endfor -%}
  {{ return(types) }}
{%- endmacro %}


{% macro flow_sequences_probe_sql(cfg) -%}
  {#- One empty row set with each flow's sequence parts as columns __cdc__flow__<i>__<part>. -#}
  select * from
  {%- for flow in cfg.flows %}
  {%- set flow_index = loop.index0 %}
  {{ 'cross join' if not loop.first }} (
    select
    {%- for expr in auto_cdc.flow_sequence_exprs(cfg, flow) %}
      {{ expr }} as __cdc__flow__{{ flow_index }}__{{ loop.index }}{{ ',' if not loop.last }}
    {%- endfor %}
    from ({{ flow.sql }}) as src
    where false
  ) as flow_{{ loop.index0 }}
  {%- endfor %}
{%- endmacro %}


{% macro flow_sequence_exprs(cfg, flow) -%}
  {#- What orders a flow's rows: a snapshot flow's version, else `sequence_by`. -#}
  {{ return([flow.version] if flow.kind == 'snapshot' else cfg.sequence_exprs) }}
{%- endmacro %}
