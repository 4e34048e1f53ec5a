{#- Stage 4, validation of a batch read from flows. In: `cfg` (its flows), the batch and what
    the last run recorded of each flow. Out: what this run records of each flow, or a Database
    Error naming the flow whose rows have no checkpoint or no version, or whose last version
    read has changed since, before anything is written. -#}


{% macro flow_records(cfg, batch, last_run, bad=none) -%}
  {#- {flow name in lower case: {kind, once, reading, checkpoint_value, read, version_rows}}:
      the highest checkpoint value (a snapshot flow: version) read, else the one recorded
      before; `read`: the flow has delivered rows (a `once` flow is then not read again until a
      full refresh; one that was empty is read again); `version_rows`: a snapshot flow's rows at
      that version. Flows removed from the model keep their record (what they wrote stays, and
      a `once` flow added back is not read again). With on_bad_rows='quarantine' (`bad`: the
      rows set aside; `batch`: every row read) the rows set aside count as read (they are kept),
      but a change feed's checkpoint stops at the lowest of its conflicting groups, as a model
      query's does (record_run_sql). A snapshot flow's row with a NULL key or in a conflicting
      group fails the run (set aside, its snapshot would lack the key and delete it), and so
      does a once flow's row in a conflicting group (the flow is not read again, so the group
      could not be read again whole). -#}
  {%- set recorded = last_run.flows if last_run else {} -%}
  {%- set seq = auto_cdc.seq_names('__cdc_seq', 1)[0] -%}
  {%- set query -%}
    select 0 as __cdc_none
    {%- for flow in cfg.flows %}
    {%- set this_flow = "__cdc_flow = " ~ auto_cdc.string_literal(flow.name) %}
    {%- set value = seq if flow.kind == 'snapshot' else auto_cdc.quote_identifier(auto_cdc.flow_column(cfg.source_columns, flow.checkpoint_column)) if flow.checkpoint_column else 'null' %},
    coalesce(sum(case when {{ this_flow }} and __cdc_op <> 'truncate' then 1 else 0 end), 0) as rows_{{ loop.index }},
    {%- if bad is not none and flow.kind == 'cdc' %}
    (select cast(case when c.low < r.high then c.low else r.high end as {{ dbt.type_string() }})
     from (select max({{ value }}) as high from {{ batch }} where {{ this_flow }}) as r
     cross join (select min({{ value }}) as low from {{ bad }} where {{ this_flow }} and __cdc_reason = 'conflicting_duplicate') as c) as checkpoint_{{ loop.index }},
    {%- else %}
    cast(max(case when {{ this_flow }} then {{ value }} end) as {{ dbt.type_string() }}) as checkpoint_{{ loop.index }},
    {%- endif %}
    {%- if bad is none %}
    coalesce(sum(case when {{ this_flow }} and {{ value }} is null
                      {%- if flow.kind == 'snapshot' %} and __cdc_op <> 'truncate'{% endif %} then 1 else 0 end), 0) as missing_{{ loop.index }},
    {%- elif flow.kind == 'snapshot' or flow.once %}
    (select count(*) from {{ bad }} where {{ this_flow }}
       and __cdc_reason in ('conflicting_duplicate'{{ ", 'null_key'" if flow.kind == 'snapshot' }})) as unsettable_{{ loop.index }},
    {%- endif %}
    {%- if flow.kind == 'snapshot' %}
    coalesce(sum(case when {{ this_flow }} and __cdc_op = 'upsert' and {{ value }} = (select max({{ value }}) from {{ batch }} where {{ this_flow }})
                 then 1 else 0 end), 0) as version_rows_{{ loop.index }}
    {%- else %}
    0 as version_rows_{{ loop.index }}
    {%- endif %}
    {%- endfor %}
    from {{ batch }}
  {%- endset -%}
  {%- set row = run_query(query).rows[0] -%}
  {%- set errors = [] -%}
  {%- set records = {} -%}
  {%- do records.update(recorded) -%}
  {%- for flow in cfg.flows -%}
    {%- set i = loop.index -%}
    {%- set before = recorded.get(flow.name | lower) or {} -%}
    {%- if bad is none and (flow.checkpoint_column or flow.kind == 'snapshot') and row['missing_' ~ i] > 0 -%}
      {%- do errors.append("flow '" ~ flow.name ~ "': " ~ row['missing_' ~ i] ~ (
          " row(s) have a NULL version (" ~ flow.version ~ "): every snapshot row needs the version it belongs to." if flow.kind == 'snapshot' else
          " event(s) have a NULL checkpoint column '" ~ flow.checkpoint_column ~ "': each run reads only rows at or above the last checkpoint, so such rows would never be read again. Give every row a value in the flow's query, or filter these out.")) -%}
    {%- endif -%}
    {%- if bad is not none and flow.kind == 'snapshot' and row['unsettable_' ~ i] > 0 -%}
      {%- do errors.append("flow '" ~ flow.name ~ "': " ~ row['unsettable_' ~ i] ~ " row(s) have a NULL key or share a key and version with a different row"
          ~ " (a key its snapshot holds twice, or a change event at the version): on_bad_rows='quarantine' cannot set them aside, since the"
          ~ " snapshot would then lack their key and delete it. Fix them in the source and run again.") -%}
    {%- elif bad is not none and flow.once and row['unsettable_' ~ i] > 0 -%}
      {%- do errors.append("flow '" ~ flow.name ~ "' is a once flow, and " ~ row['unsettable_' ~ i] ~ " of its event(s) are in a group of"
          ~ " different events at one key and sequence: on_bad_rows='quarantine' cannot set them aside, since a once flow is not read again"
          ~ " and a later run would apply the group's other events alone. Fix them in the source and run again.") -%}
    {%- endif -%}
    {%- set same_reading = before.get('kind') == flow.kind and before.get('reading') == auto_cdc.flow_reading(flow) -%}
    {%- set new_value = row['checkpoint_' ~ i] if flow.checkpoint_column or flow.kind == 'snapshot' else none -%}
    {%- do records.update({flow.name | lower: {
        'kind': flow.kind, 'once': flow.once, 'reading': auto_cdc.flow_reading(flow),
        'checkpoint_value': new_value or (before.get('checkpoint_value') if same_reading else none),
        'read': row['rows_' ~ i] > 0 or (before.get('read') is sameas true),
        'version_rows': row['version_rows_' ~ i] if new_value else (before.get('version_rows') if same_reading else none),
    }}) -%}
  {%- endfor -%}
  {%- do auto_cdc.raise_bad_data(cfg.model_name, errors) -%}
  {{ return(records) }}
{%- endmacro %}


{% macro check_read_versions(cfg, last_run) -%}
  {#- A snapshot flow's versions are sequences in the stored state, and each is read once,
      complete. Fails (before anything is written) when its version expression changed (the
      stored sequences are in the old one's terms), or when the last version it read no longer
      has the rows it had then (rows added later would never be read, and its truncate already
      deleted their keys). -#}
  {%- set recorded = last_run.flows if last_run and not auto_cdc.is_empty_run() else {} -%}
  {%- for flow in cfg.flows if flow.kind == 'snapshot' and not flow.once -%}
    {%- set before = recorded.get(flow.name | lower) or {} -%}
    {%- if before.get('kind') == 'snapshot' and before.get('reading') != auto_cdc.flow_reading(flow) -%}
      {%- do auto_cdc.model_error(cfg.model_name, "flow '" ~ flow.name ~ "' was read by "
          ~ before.reading ~ " and is now read by " ~ auto_cdc.flow_reading(flow) ~ "; nothing was written. Its versions are sequences in"
          ~ " the stored state, in the old expression's terms: rebuild with `dbt run --full-refresh -s " ~ cfg.model_name
          ~ "`, or restore the old expression.") -%}
    {%- elif before.get('version_rows') is not none -%}
      {%- set query -%}
        select count(*) from ({{ flow.sql }}) as src
        where cast(({{ flow.version }}) as {{ dbt.type_string() }}) = {{ auto_cdc.string_literal(before.checkpoint_value) }}
      {%- endset -%}
      {%- set now = run_query(query).rows[0][0] | int -%}
      {%- if now != before.version_rows | int -%}
        {%- do auto_cdc.raise_bad_data(cfg.model_name, ["flow '" ~ flow.name ~ "': version " ~ before.checkpoint_value ~ " had "
            ~ before.version_rows ~ " row(s) when it was read and has " ~ now ~ " now. A snapshot version is read once and must be"
            ~ " complete by then (its keys missing then were deleted): load each version whole, and rebuild with `dbt run --full-refresh -s "
            ~ cfg.model_name ~ "` to read it again."]) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}
