{#- Stage 1, configuration: the change feed of the target. In: the config values, the SCD type,
    the sequence and the written columns. Out: {'enabled', 'retention'} for `cfg`; errors for a
    value of the wrong type, a written column the change feed needs for itself, and a shape the
    change feed cannot keep safely. -#}

{% macro _read_change_feed(fields, values, scd_type, sequence, written_columns, errors) -%}
  {%- do auto_cdc._check_field(fields.change_feed, values.change_feed, errors) -%}
  {%- set retention = values.change_feed_retention -%}
  {%- if retention is not none -%}
    {%- do auto_cdc._check_field(fields.change_feed_retention, retention, errors) -%}
  {%- endif -%}
  {%- set enabled = values.change_feed is sameas true -%}
  {%- if enabled -%}
    {#- The change feed adds these columns to the target's: a written column of the same name would collide. -#}
    {%- for column in written_columns if column | lower in ['_change_type', '_run_id', '_committed_at'] -%}
      {%- do errors.append("the target writes a column named '" ~ column ~ "', which `change_feed` adds to each change: rename it in the model query, or leave it out (`except_column_list`).") -%}
    {%- endfor -%}
    {%- if scd_type != '1' and sequence.exprs | length > 1 and auto_cdc.capabilities().rebuild_drops_sequence_type -%}
      {%- do errors.append("`change_feed` with a `sequence_by` list on an SCD2 target is not supported on " ~ adapter.type() ~ " yet (a full refresh would drop the change feed's __START_AT/__END_AT): use one sequence expression, or turn `change_feed` off.") -%}
    {%- endif -%}
  {%- endif -%}
  {{ return({'enabled': enabled, 'retention': retention if retention is number else none}) }}
{%- endmacro %}



