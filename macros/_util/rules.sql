{#- Rules more than one stage applies, each written once: what the target's rows are and its
    validity columns, which events write a column, the truncate watermark, when a tombstone
    has expired, how a compacted event is fixed, which rows a checkpoint lets through, what a
    flow's checkpoint measures. -#}

{% macro target_layout(cfg) -%}
  {#- The target's row identity (what the changes join on) and the columns an update rewrites:
      SCD1 a row per key; SCD2 a row per key and __START_AT; bitemporal per key, __START_AT and
      __SYSTEM_START_AT. -#}
  {%- if cfg.scd_type == '1' -%}
    {{ return({'identity': cfg.key_columns, 'updated': cfg.value_columns}) }}
  {%- elif cfg.scd_type == '2' -%}
    {{ return({'identity': cfg.key_columns + ['__START_AT'], 'updated': cfg.value_columns + ['__END_AT']}) }}
  {%- endif -%}
  {{ return({'identity': cfg.key_columns + ['__START_AT', '__SYSTEM_START_AT'],
             'updated': cfg.value_columns + ['__END_AT', '__SYSTEM_END_AT']}) }}
{%- endmacro %}


{% macro period_columns(cfg) -%}
  {#- The validity columns an SCD2 / bitemporal target adds to the written columns, as
      (name, its value over the batch, the batch column its type follows). -#}
  {%- if cfg.scd_type == '1' -%}{{ return([]) }}{%- endif -%}
  {%- set sequence = auto_cdc.seq_value('__cdc_seq', cfg) -%}
  {%- set columns = [('__START_AT', sequence), ('__END_AT', sequence)] -%}
  {%- if cfg.system_expr -%}
    {%- do columns.extend([('__SYSTEM_START_AT', '__cdc_sys'), ('__SYSTEM_END_AT', '__cdc_sys')]) -%}
  {%- endif -%}
  {{ return(columns) }}
{%- endmacro %}


{% macro writes_column(cfg, column) -%}
  {#- SQL condition: does a batch event write `column`? Partial updates decide per column. -#}
  {%- if cfg.columns_to_update -%}
    {{ return("__cdc_op = 'upsert' and " ~ auto_cdc.column_is_listed('__cdc_ctu', column)) }}
  {%- elif column in cfg.ignore_null_columns -%}
    {{ return("__cdc_op = 'upsert' and " ~ auto_cdc.quote_identifier(column) ~ " is not null") }}
  {%- else -%}
    {{ return("__cdc_op = 'upsert'") }}
  {%- endif -%}
{%- endmacro %}


{% macro watermark_ctes(cfg, batch, runs) -%}
  {#- CTEs ending in `watermark`: the truncate watermark after this batch (`__cdc_watermark`). -#}
  {%- set n = cfg.seq_parts -%}
  stored_watermark as (
    select {{ auto_cdc.seq_select('truncate_seq', '__cdc_stored_truncate_seq', n) }}
    from {{ runs }}
    order by run_id desc
    limit 1
  ),
  batch_watermark as (
    select {{ auto_cdc.seq_select('__cdc_seq', '__cdc_batch_truncate_seq', n) }}
    from {{ batch }}
    where __cdc_op = 'truncate'
    order by {{ auto_cdc.seq_order('__cdc_seq', n) }}
    limit 1
  ),
  watermark as (
    select {{ auto_cdc.seq_greatest('__cdc_stored_truncate_seq', '__cdc_batch_truncate_seq', n, '__cdc_watermark') }}
    from (select 1 as __cdc_one) as one
    left join stored_watermark on 1 = 1
    left join batch_watermark on 1 = 1
  )
{%- endmacro %}


{% macro tombstone_expired(run, alias) -%}
  {#- SQL condition on an SCD1 state row (`alias`): a tombstone past its retention at the run's
      clock, which is forgotten, so late upserts pass it again. Every row of a state of
      'tombstones' (run.state_layout) is one (a key with a row again keeps it beside its
      sequence: scd1_state_kept); in 'keys', a row with an upsert sequence keeps its delete's too. -#}
  {%- set expired = alias ~ '.__cdc_deleted_at < ' ~ auto_cdc.seconds_ago(run.cfg.tombstone_retention, run.now) -%}
  {%- if run.state_layout == 'tombstones' -%}{{ return(expired) }}{%- endif -%}
  {{ return(alias ~ '.' ~ auto_cdc.seq_first('__cdc_upsert_seq', run.cfg.seq_parts) ~ ' is null and ' ~ expired) }}
{%- endmacro %}


{% macro compacted_event_columns(cfg, columns, horizon) -%}
  {#- The select list of stored SCD2 events `columns`, a compacted event's partial-update flags
      true: an event older than `horizon` has had its values filled in. -#}
  {%- set flags = [] -%}
  {%- for column in cfg.value_columns if cfg.partial -%}{%- do flags.append(auto_cdc.event_flag(column)) -%}{%- endfor -%}
  {%- set selected = [] -%}
  {%- for column in columns -%}
    {%- do selected.append('(' ~ column ~ ' or __cdc_arrived_at < ' ~ horizon ~ ') as ' ~ column if column in flags
                           else auto_cdc.quote_identifier(column)) -%}
  {%- endfor -%}
  {{ return(selected | join(',\n    ')) }}
{%- endmacro %}


{% macro after_checkpoint(expr, data_type, value, inclusive) -%}
  {#- SQL condition: `expr` at or above a checkpoint recorded as text (`inclusive`: a change
      feed's, whose rows at the last value are read again, so one that lands later with that
      value is not lost; an identical event read again changes nothing) or strictly above it (a
      snapshot version, read once and complete), compared in its own type; or NULL: a row
      without a checkpoint value is read, so validation reports it instead of skipping it for ever. -#}
  {{ return('(' ~ expr ~ (' >= ' if inclusive else ' > ') ~ 'cast(' ~ auto_cdc.string_literal(value) ~ ' as ' ~ data_type ~ ') or ' ~ expr ~ ' is null)') }}
{%- endmacro %}


{% macro flow_reading(flow) -%}
  {#- What a flow's checkpoint measures: a change of it (another checkpoint column, another
      version expression) makes the recorded checkpoint meaningless, so the flow is read whole. -#}
  {%- if flow.kind == 'snapshot' -%}
    {{ return('version: ' ~ auto_cdc.normalized_sql(flow.version)) }}
  {%- endif -%}
  {{ return('column: ' ~ (flow.checkpoint_column | lower) if flow.checkpoint_column else none) }}
{%- endmacro %}
