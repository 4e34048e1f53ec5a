{#- Stage 3, batch (auto_cdc_from_snapshot): which snapshot versions this run reads, and their
    rows. In: the version source, the processed versions, the model query. Out: the temp tables
    `snapshots` (rows tagged with `__cdc_version`) and `read_versions`. -#}

{% macro snapshot_temps(relation) -%}
  {#- Session-local relations with names derived from the model, so the model query and the
      version query can name them before the materialization fills them. -#}
  {%- set base = relation.identifier -%}
  {{ return({
      'last_version': api.Relation.create(identifier=auto_cdc.derived_name(base, '__cdc_last_version'), type='table'),
      'current_version': api.Relation.create(identifier=auto_cdc.derived_name(base, '__cdc_current_version'), type='table'),
      'current_snapshot': api.Relation.create(identifier=auto_cdc.derived_name(base, '__cdc_current_snapshot'), type='view'),
  }) }}
{%- endmacro %}


{% macro replace_temp_table(relation, sql) -%}
  {%- do adapter.drop_relation(relation) -%}
  {%- call statement('auto_cdc_snapshot_temp') -%}
    {{ auto_cdc.create_temp_table(relation, sql) }}
  {%- endcall -%}
{%- endmacro %}


{% macro write_last_version(temps, versions_relation, data_type=none) -%}
  {#- `versions_relation`: the table of processed versions, or none (first run, full refresh):
      then no row, of `data_type` when the version type is known already, else a bigint. -#}
  {%- if versions_relation is none -%}
    {%- do auto_cdc.replace_temp_table(temps.last_version, 'select cast(null as ' ~ (data_type or dbt.type_bigint()) ~ ') as version where 1 = 0') -%}
  {%- else -%}
    {%- do auto_cdc.replace_temp_table(temps.last_version,
        'select max(version) as version from ' ~ versions_relation ~ ' where applied having count(*) > 0') -%}
  {%- endif -%}
{%- endmacro %}


{% macro advance_last_version(temps) -%}
  {#- The version just read becomes the last one, for the next version query or function call. -#}
  {%- do auto_cdc.replace_temp_table(temps.last_version, 'select version from ' ~ temps.current_version) -%}
{%- endmacro %}


{% macro version_error(model_name, message) -%}
  {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ model_name ~ "': " ~ message ~ "; nothing was written.") -%}
{%- endmacro %}


{% macro check_version_type(model_name, data_type, temps) -%}
  {#- Versions must keep their type: a text version cannot be ordered against stored integers. -#}
  {%- set was = auto_cdc.column_type(temps.last_version, 'version') -%}
  {%- if run_query('select count(*) from ' ~ temps.last_version).rows[0][0] > 0 and auto_cdc.type_change(was, data_type) == 'incompatible' -%}
    {%- do auto_cdc.version_error(model_name, "snapshot versions are now of type " ~ data_type ~ ", but the processed versions are "
        ~ was ~ ". Cast the version back to " ~ was ~ ", or rebuild with `dbt run --full-refresh -s " ~ model_name ~ "`") -%}
  {%- endif -%}
{%- endmacro %}


{% macro choose_next_version(versions, temps) -%}
  {#- Per-run, query and function ways: fill `current_version` (and for a function
      `current_snapshot`) with the next snapshot. Returns false when there is none. -#}
  {%- if versions.way == 'run' -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version,
        'select cast(coalesce((select max(version) from ' ~ temps.last_version ~ ') + 1, 0) as ' ~ dbt.type_bigint() ~ ') as version') -%}
    {{ return(true) }}
  {%- elif versions.way == 'query' -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, 'select * from (' ~ render(versions.value) ~ ') as version_query') -%}
    {%- set columns = adapter.get_columns_in_relation(temps.current_version) -%}
    {%- if columns | length != 1 -%}
      {%- do auto_cdc.version_error(model.name, "`snapshot_version_query` must return one column (the version), not " ~ columns | length) -%}
    {%- endif -%}
    {%- if columns[0].name != 'version' -%}
      {%- do auto_cdc.replace_temp_table(temps.current_version, 'select ' ~ auto_cdc.quote_identifier(columns[0].name) ~ ' as version from ('
          ~ render(versions.value) ~ ') as version_query') -%}
    {%- endif -%}
  {%- else -%}
    {%- set chosen = auto_cdc.call_snapshot_function(versions.value, temps) -%}
    {%- if chosen is none -%}{{ return(false) }}{%- endif -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, 'select ' ~ chosen.version_sql ~ ' as version') -%}
    {%- do adapter.drop_relation(temps.current_snapshot) -%}
    {%- call statement('auto_cdc_current_snapshot') -%}
      create temporary view {{ temps.current_snapshot }} as {{ chosen.snapshot_sql }}
    {%- endcall -%}
  {%- endif -%}

  {%- set counts = run_query('select count(*), count(version) from ' ~ temps.current_version).rows[0] -%}
  {%- if counts[0] == 0 -%}{{ return(false) }}{%- endif -%}
  {%- if counts[0] > 1 -%}
    {%- do auto_cdc.version_error(model.name, "`snapshot_version_query` returned " ~ counts[0] ~ " rows; it must return zero rows (no new snapshot) or one (the next version)") -%}
  {%- endif -%}
  {%- if counts[1] == 0 -%}
    {%- do auto_cdc.version_error(model.name, "the next snapshot version is NULL; every snapshot needs a version") -%}
  {%- endif -%}
  {%- do auto_cdc.check_version_type(model.name, auto_cdc.column_type(temps.current_version, 'version'), temps) -%}
  {%- set stale = run_query('select c.version from ' ~ temps.current_version ~ ' as c, ' ~ temps.last_version ~ ' as l where c.version <= l.version').rows -%}
  {%- if stale | length > 0 -%}
    {%- do exceptions.warn("auto_cdc: model '" ~ model.name ~ "': snapshot version " ~ stale[0][0]
        ~ " is not above the last processed version; skipped. Versions are applied in ascending order.") -%}
    {{ return(false) }}
  {%- endif -%}
  {{ return(true) }}
{%- endmacro %}


{% macro call_snapshot_function(function, temps) -%}
  {{ return(adapter.dispatch('call_snapshot_function', 'auto_cdc')(function, temps)) }}
{%- endmacro %}

{% macro default__call_snapshot_function(function, temps) -%}
  {%- do auto_cdc.version_error(model.name, "`snapshot_version_function` is not available on " ~ adapter.type()) -%}
{%- endmacro %}

{% macro duckdb__call_snapshot_function(function, temps) -%}
  {#- The auto_cdc plugin registers `auto_cdc_next_snapshot(function, last version as text, its
      type)`; it returns NULL when the function has no further snapshot, else JSON with the
      version as a SQL literal and a query that reads the snapshot. -#}
  {%- set registered = run_query("select count(*) from duckdb_functions() where function_name = 'auto_cdc_next_snapshot'").rows[0][0] -%}
  {%- if registered == 0 -%}
    {%- do auto_cdc.version_error(model.name, "`snapshot_version_function` needs the auto_cdc plugin: add `plugins: [{module: auto_cdc.plugin}]` "
        ~ "to this target in profiles.yml (and `pip install dbt-auto-cdc`)") -%}
  {%- endif -%}
  {%- set result = run_query("select auto_cdc_next_snapshot(" ~ auto_cdc.string_literal(function)
      ~ ", (select cast(version as varchar) from " ~ temps.last_version ~ "), (select typeof(version) from " ~ temps.last_version ~ "))").rows[0][0] -%}
  {{ return(none if result is none else fromjson(result)) }}
{%- endmacro %}


{% macro read_snapshots(cfg, versions, temps, sql, processed, catch_up=true) -%}
  {#- Reads every snapshot this run applies into `temps.snapshots`, and their versions into
      `temps.read_versions` (a snapshot with no rows still has a version: it deletes every key).
      Version column: one read, skipping versions already processed. Per-run: the one snapshot
      chosen. Query and function: the chosen one, then (`catch_up`) the next, until there is none. -#}
  {%- if versions.way == 'column' -%}
    {%- set version = 'src.' ~ auto_cdc.quote_identifier(cfg.version_column) -%}
    {%- set filter = none if processed is none else
          'not exists (select 1 from ' ~ processed ~ ' as p where p.version = ' ~ version ~ ')' -%}
    {%- call statement('auto_cdc_snapshots') -%}
      {{ auto_cdc.create_temp_table(temps.snapshots, auto_cdc.snapshot_rows_sql(sql, version, filter)) }}
    {%- endcall -%}
    {{ return(none) }}
  {%- endif -%}

  {%- set current = '(select version from ' ~ temps.current_version ~ ')' -%}
  {%- call statement('auto_cdc_snapshots') -%}
    {{ auto_cdc.create_temp_table(temps.snapshots, auto_cdc.snapshot_rows_sql(sql, current)) }}
  {%- endcall -%}
  {%- do auto_cdc.replace_temp_table(temps.read_versions, 'select version as __cdc_version, true as __cdc_applied from ' ~ temps.current_version) -%}
  {%- set state = {'more': catch_up and versions.way != 'run'} -%}
  {%- for _ in range(10000) if state.more -%}
    {%- do auto_cdc.advance_last_version(temps) -%}
    {%- if auto_cdc.choose_next_version(versions, temps) -%}
      {%- set columns = auto_cdc.quoted_list(adapter.get_columns_in_relation(temps.snapshots) | map(attribute='name') | list) -%}
      {%- do auto_cdc.run_statements([
          'insert into ' ~ temps.snapshots ~ ' (' ~ columns ~ ') select ' ~ columns ~ ' from (' ~ auto_cdc.snapshot_rows_sql(sql, current) ~ ') as snapshot_rows',
          'insert into ' ~ temps.read_versions ~ ' select version, true from ' ~ temps.current_version,
      ]) -%}
    {%- else -%}
      {%- do state.update({'more': false}) -%}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}


{% macro applied_version_count(temps) -%}
  {#- How many of the versions read this run are applied (late ones are not). -#}
  {{ return(run_query('select count(*) from ' ~ temps.read_versions ~ ' where __cdc_applied').rows[0][0]) }}
{%- endmacro %}


{% macro snapshot_rows_sql(sql, version_expr, filter=none) -%}
  select src.*, {{ version_expr }} as __cdc_version
  from (
    {{ sql }}
  ) as src
  {%- if filter %}
  where {{ filter }}
  {%- endif %}
{%- endmacro %}
