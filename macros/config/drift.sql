{#- Stage 1, configuration against the last run. In: the configuration now (`cfg.state_config`)
    and the one the last run recorded. Out: an error for a change the stored state cannot follow,
    a warning for one it can. -#}

{% macro check_config_drift(now, previous) -%}
  {#- The stored state was built under the configuration the last run recorded. A change the
      state cannot follow fails before anything is written; a change that only shapes future
      events is applied and named in a warning (README, "Configuration changes between runs").
      `now`: the state_config of read_cdc_config(), or a part of it known earlier. -#}
  {%- if previous is none or previous.config is none -%}{{ return(none) }}{%- endif -%}
  {%- set before = previous.config -%}
  {%- set snapshot = now.materialized == 'auto_cdc_from_snapshot' -%}
  {%- set blocking = {
      'materialized': 'the stored state belongs to the other materialization',
      'keys': 'the state holds one entry per key, and what was stored under the old keys cannot be matched to the new ones',
      'stored_as_scd_type': 'the target and its state have another shape',
      'sequence_by': 'the stored sequences were computed the old way and cannot be compared with new ones',
      'system_sequence_by': 'the stored system times were computed the old way and cannot be compared with new ones',
      'snapshot_versions': 'the processed versions were named the old way and cannot be compared with new ones',
  } -%}
  {%- set effects = {
      'apply_as_deletes': 'events of this run on are classified the new way; what earlier runs applied stays',
      'apply_as_truncates': 'events of this run on are classified the new way; what earlier runs applied stays',
      'checkpoint_column': 'this run reads the whole model query once, then only rows above the new checkpoint',
      'tombstone_retention': 'tombstones and compacted events are kept for the new period from now on',
      'change_feed': 'turned on, the changes of the target are recorded in its __cdc_changes table from this run on; turned off, that table is kept and no longer written',
      'track_history_column_list': 'the history of every key that new events touch is recomputed under the new list; other keys keep theirs until then (`--full-refresh` recomputes every key)',
      'track_history_except_column_list': 'the history of every key that new events touch is recomputed under the new list; other keys keep theirs until then (`--full-refresh` recomputes every key)',
      'ignore_null_updates': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'ignore_null_updates_column_list': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'ignore_null_updates_except_column_list': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'columns_to_update': 'partial updates follow the new setting from this run on; the per-column state is added or dropped to match',
      'snapshot_version_column': 'versions are read from the new column, compared with the processed ones',
      'snapshot_version_query': 'the next versions come from the new query, compared with the processed ones',
      'snapshot_version_function': 'the next versions come from the new function, compared with the processed ones',
  } -%}
  {%- if snapshot -%}
    {#- SCD2 from snapshots stores no events: what a key's closed rows say is final. -#}
    {%- set tracked_effect = "each key's closed rows stay as they are; its open row and the next versions follow the new list (`--full-refresh` starts again from the current snapshot)" -%}
    {%- do effects.update({'track_history_column_list': tracked_effect, 'track_history_except_column_list': tracked_effect}) -%}
  {%- endif -%}
  {%- set errors = [] -%}
  {%- set warnings = [] -%}
  {%- for name, value in now.items() if name in before and before[name] != value -%}
    {%- set change = "`" ~ name ~ "` changed from " ~ auto_cdc.config_repr(before[name]) ~ " to " ~ auto_cdc.config_repr(value) -%}
    {%- if name == 'snapshot_versions' -%}
      {%- set change = "snapshot versions are named by " ~ auto_cdc.version_way_name(before[name]) ~ " in the stored history, now by "
                       ~ auto_cdc.version_way_name(value) -%}
    {%- endif -%}
    {%- if name in blocking -%}
      {%- do errors.append(change ~ ": " ~ blocking[name] ~ ".") -%}
    {%- else -%}
      {%- do warnings.append(change ~ " since the last run; " ~ effects.get(name, 'it applies from this run on') ~ ".") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if errors -%}
    {%- do exceptions.raise_compiler_error(
          "auto_cdc: model '" ~ model.name ~ "': the configuration changed in a way its stored state cannot follow; nothing was written.\n  - "
          ~ (errors | join('\n  - ')) ~ "\nSet it back, or rebuild with `dbt run --full-refresh -s " ~ model.name ~ "` "
          ~ ("(it starts again from the current snapshot: earlier snapshot versions cannot be rebuilt)." if snapshot
             else "(events the model query no longer returns are lost).")) -%}
  {%- endif -%}
  {%- for warning in warnings -%}
    {%- do exceptions.warn("auto_cdc: model '" ~ model.name ~ "': " ~ warning) -%}
  {%- endfor -%}
{%- endmacro %}


{% macro config_repr(value) -%}
  {#- Text in quotes: double ones around SQL that has single quotes in it (op = 'D'). -#}
  {%- set quote = '"' if value is string and "'" in value else "'" -%}
  {{ return('not set' if value is none else ((quote ~ value ~ quote) if value is string else value | string)) }}
{%- endmacro %}


{% macro version_way_name(way) -%}
  {{ return({'run': 'run (one version per dbt run)', 'column': '`snapshot_version_column`', 'query': '`snapshot_version_query`',
             'function': '`snapshot_version_function`'}.get(way, way)) }}
{%- endmacro %}
