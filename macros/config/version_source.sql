{#- Stage 1, configuration (auto_cdc_from_snapshot): how snapshot versions are named. In: the
    model's config. Out: {'way', 'value', 'config'}, read before the model query can run. -#}

{% macro snapshot_version_source() -%}
  {#- auto_cdc_from_snapshot: how versions are named (docs/snapshots.md, "Version selection"), as
      {'way': 'run' | 'column' | 'query' | 'function', 'value': the config's value}. Read before
      the model query can run, because the query may read the version chosen. -#}
  {%- set given = [] -%}
  {%- for way, name in [('column', 'snapshot_version_column'), ('query', 'snapshot_version_query'), ('function', 'snapshot_version_function')] -%}
    {%- if auto_cdc._config_value(name) is not none -%}{%- do given.append((way, name)) -%}{%- endif -%}
  {%- endfor -%}
  {%- if given | length > 1 -%}
    {%- do auto_cdc.configuration_errors(model.name, ["set at most one of " ~ (given | map(attribute=1) | join(', '))
        ~ ": each is a different way of naming snapshot versions."]) -%}
  {%- endif -%}
  {%- if not given -%}{{ return({'way': 'run', 'value': none, 'config': none}) }}{%- endif -%}
  {%- set way, name = given[0] -%}
  {%- set value = auto_cdc._config_value(name) -%}
  {%- set problem = none -%}
  {%- if way == 'function' and not auto_cdc.capabilities().snapshot_functions -%}
    {%- set problem = "`snapshot_version_function` needs the auto_cdc.plugin of dbt-duckdb and is not available on "
        ~ ("dbt v2, which runs no dbt-duckdb plugins" if auto_cdc.dbt_v2() else adapter.type())
        ~ ". Use `snapshot_version_column` (the model query returns every snapshot with its version) or `snapshot_version_query`"
        ~ " (a SQL query that picks the next version) instead." -%}
  {%- elif way == 'function' and not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*', value | string) -%}
    {%- set problem = "`snapshot_version_function` is '" ~ value ~ "'; write it as 'package.module:function'." -%}
  {%- elif way in ['query', 'column'] and (value is not string or not value | trim) -%}
    {%- set problem = "`" ~ name ~ "` must be a non-empty string." -%}
  {%- endif -%}
  {%- if problem -%}
    {%- do auto_cdc.configuration_errors(model.name, [problem]) -%}
  {%- endif -%}
  {{ return({'way': way, 'value': value, 'config': name}) }}
{%- endmacro %}



