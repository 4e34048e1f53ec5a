{#- Stage 4, validation of a batch read from flows. In: `cfg` (its flows), the batch and what
    the last run recorded of each flow. Out: what this run records of each flow, or a Database
    Error naming the flow whose rows have no checkpoint or no version, before anything is
    written. -#}

{% macro flow_records(cfg, batch, previous) -%}
  {#- {flow: {kind, once, checkpoint_column, checkpoint_value}}: the highest checkpoint value
      (a snapshot flow: version) read, else the one recorded before. A flow present here has
      been read: a `once` flow is not read again until a full refresh. Flows removed from the
      model are no longer recorded (what they wrote stays). -#}
  {%- set recorded = previous.flows if previous else {} -%}
  {%- set seq = auto_cdc.seq_names('__cdc_seq', 1)[0] -%}
  {%- set query -%}
    select 0 as __cdc_none
    {%- for flow in cfg.flows %}
    {%- set value = auto_cdc.quote_identifier(flow.checkpoint_column) if flow.kind == 'cdc' and flow.checkpoint_column else (seq if flow.kind == 'snapshot' else none) %}
    {%- if value %},
    cast(max(case when __cdc_flow = {{ auto_cdc.string_literal(flow.name) }} then {{ value }} end) as {{ dbt.type_string() }}) as checkpoint_{{ loop.index }},
    coalesce(sum(case when __cdc_flow = {{ auto_cdc.string_literal(flow.name) }} and __cdc_op <> 'truncate' and {{ value }} is null then 1 else 0 end), 0) as missing_{{ loop.index }}
    {%- endif %}
    {%- endfor %}
    from {{ batch }}
  {%- endset -%}
  {%- set result = run_query(query) -%}
  {%- set row = result.rows[0] -%}
  {%- set errors = [] -%}
  {%- set records = {} -%}
  {%- for flow in cfg.flows -%}
    {%- set before = recorded.get(flow.name) or {} -%}
    {%- set column = flow.checkpoint_column | lower if flow.checkpoint_column else none -%}
    {%- set value = none -%}
    {%- if ('checkpoint_' ~ loop.index) in result.column_names -%}
      {%- if row['missing_' ~ loop.index] > 0 -%}
        {%- do errors.append("flow '" ~ flow.name ~ "': " ~ row['missing_' ~ loop.index] ~ (
            " row(s) have a NULL version (" ~ flow.version ~ "): every snapshot row needs the version it belongs to." if flow.kind == 'snapshot' else
            " event(s) have a NULL checkpoint column '" ~ flow.checkpoint_column ~ "': each run reads only rows above the last checkpoint, so such rows would never be read again. Give every row a value in the flow's query, or filter these out.")) -%}
      {%- endif -%}
      {%- set same_reading = before.get('kind') == flow.kind and before.get('checkpoint_column') == column -%}
      {%- set value = row['checkpoint_' ~ loop.index] or (before.get('checkpoint_value') if same_reading else none) -%}
    {%- endif -%}
    {%- do records.update({flow.name: {'kind': flow.kind, 'once': flow.once, 'checkpoint_column': column, 'checkpoint_value': value}}) -%}
  {%- endfor -%}
  {%- do auto_cdc.raise_bad_data(cfg.model_name, errors) -%}
  {{ return(records) }}
{%- endmacro %}
