{#- Public: what a model query or a `snapshot_version_query` reads (auto_cdc_from_snapshot). -#}

{% macro last_snapshot_version() -%}
  {#- One column `version`: no row before the first snapshot, else the last processed version. -#}
  {{ return(auto_cdc.temp_relations(this).last_version) }}
{%- endmacro %}

{% macro current_snapshot_version() -%}
  {#- One column `version`, one row: the version being read (per-run, query and function ways). -#}
  {{ return(auto_cdc.temp_relations(this).current_version) }}
{%- endmacro %}

{% macro current_snapshot() -%}
  {#- The snapshot returned by `snapshot_version_function` (DuckDB, with the auto_cdc plugin). -#}
  {{ return(auto_cdc.temp_relations(this).current_snapshot) }}
{%- endmacro %}
