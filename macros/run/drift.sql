{#- Stage 2, run mode: the configuration against the last run's. In: the configuration now
    (`cfg.state_config`) and the one the last run recorded. Out: an error for a change the stored
    state cannot follow, a warning for one it can; what each change does is the field table's
    (config/fields.sql). -#}

{% macro check_config_drift(now, last_run) -%}
  {#- The stored state was built under the configuration the last run recorded. A change the
      state cannot follow fails before anything is written; a change that only shapes future
      events is applied and named in a warning (docs/configuration.md, "Configuration changes between runs").
      `now`: the state_config of read_cdc_config(), or a part of it known earlier. A run whose
      configuration did not change compiles only this check (the first compile of a macro is
      most of a process's fixed cost). A key the last run did not record was not set then: the
      configs added since 0.1.0 (`replace_using`) default to not set. -#}
  {%- set before = none if last_run is none else last_run.config -%}
  {%- set changed = [] -%}
  {%- for name, value in now.items() if before is not none and before.get(name) != value -%}{%- do changed.append(name) -%}{%- endfor -%}
  {%- if changed -%}{%- do auto_cdc._report_config_drift(now, before) -%}{%- endif -%}
{%- endmacro %}


{% macro _report_config_drift(now, before) -%}
  {#- check_config_drift, for a configuration that changed: fails, or warns, naming each change. -#}
  {%- set snapshot = now.materialized == 'auto_cdc_from_snapshot' -%}
  {%- set changes = {} -%}
  {%- for name, field in auto_cdc.run_records().items() | list + auto_cdc.config_fields().items() | list if field.change -%}
    {%- do changes.update({name: field.change}) -%}
  {%- endfor -%}
  {%- set errors = [] -%}
  {%- set warnings = [] -%}
  {%- for name, value in now.items() if before.get(name) != value -%}
    {%- set change = "`" ~ name ~ "` changed from " ~ auto_cdc.config_repr(before.get(name)) ~ " to " ~ auto_cdc.config_repr(value) -%}
    {%- if name == 'snapshot_versions' -%}
      {%- set change = "snapshot versions are named by " ~ auto_cdc.version_way_name(before[name]) ~ " in the stored history, now by "
                       ~ auto_cdc.version_way_name(value) -%}
    {%- endif -%}
    {%- set what = changes.get(name, {}) -%}
    {%- if what.blocks -%}
      {%- do errors.append(change ~ ": " ~ what.blocks ~ ".") -%}
    {%- else -%}
      {%- set effect = what.snapshot_effect if snapshot and what.snapshot_effect else what.effect -%}
      {%- do warnings.append(change ~ " since the last run; " ~ (effect or 'it applies from this run on') ~ ".") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if errors -%}
    {%- do auto_cdc.model_error(model.name,
          "the configuration changed in a way its stored state cannot follow; nothing was written.\n  - "
          ~ (errors | join('\n  - ')) ~ "\nSet it back, or rebuild with `dbt run --full-refresh -s " ~ model.name ~ "` "
          ~ ("(it starts again from the current snapshot: earlier snapshot versions cannot be rebuilt)." if snapshot
             else "(events the model query no longer returns are lost).")) -%}
  {%- endif -%}
  {%- for warning in warnings -%}
    {%- do auto_cdc.model_warning(model.name, warning) -%}
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
