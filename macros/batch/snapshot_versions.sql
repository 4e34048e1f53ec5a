{#- Stage 3, batch (auto_cdc_from_snapshot): which snapshot versions this run reads, and their
    rows. In: the version source, the processed versions, the model query. Out: the temp tables
    `snapshots` (rows tagged with `__cdc_version`) and `read_versions`. -#}

{% macro choose_first_version(versions, temps, processed, empty_run) -%}
  {#- `last_version` from the processed versions (none on a first run or a full refresh), then
      the first version to read: true when there is one. A version column has its versions in
      the model query. Under --empty the version query is not run: the model query sees no
      current version. (A Python function is called: only it knows the columns.) -#}
  {%- do auto_cdc.write_last_version(temps, processed) -%}
  {%- if empty_run and versions.way == 'query' -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, auto_cdc.select_versions_sql(temps.last_version)) -%}
    {{ return(true) }}
  {%- endif -%}
  {{ return(versions.way == 'column' or auto_cdc.choose_next_version(versions, temps)) }}
{%- endmacro %}


{% macro select_versions_sql(relation) -%}
  select version from {{ relation }}
{%- endmacro %}


{% macro check_version_column_type(cfg, source, temps, rebuild) -%}
  {#- Versions from a column must keep their type: a text version cannot be ordered against
      stored integers. On a rebuild the last version takes the column's type. -#}
  {%- if cfg.version_column -%}
    {%- set version_type = (source.columns | selectattr('name', 'equalto', cfg.version_column) | first).data_type -%}
    {%- if rebuild -%}{%- do auto_cdc.write_last_version(temps, none, version_type) -%}{%- endif -%}
    {%- do auto_cdc.check_version_type(cfg.model_name, version_type, temps) -%}
  {%- endif -%}
{%- endmacro %}


{% macro snapshot_rows_as_batch(snapshots) -%}
  {#- The snapshot rows in the shape the contract check reads (the version is the sequence). -#}
  (select s.*, s.__cdc_version as __cdc_seq from {{ snapshots }} as s) as snapshot_rows
{%- endmacro %}


{% macro replace_temp_table(relation, sql) -%}
  {%- do auto_cdc.drop_temp_relations([relation]) -%}
  {%- call statement('auto_cdc_snapshot_temp') -%}
    {{ auto_cdc.temp_table_sql(relation, sql) }}
  {%- endcall -%}
{%- endmacro %}


{% macro write_last_version(temps, versions_relation, data_type=none) -%}
  {#- `versions_relation`: the table of processed versions, or none (first run, full refresh):
      then no row, of `data_type` when the version type is known already, else a bigint. -#}
  {%- set query -%}
    {%- if versions_relation is none -%}
      select cast(null as {{ data_type or dbt.type_bigint() }}) as version where 1 = 0
    {%- else -%}
      select max(version) as version from {{ versions_relation }} where applied having count(*) > 0
    {%- endif -%}
  {%- endset -%}
  {%- do auto_cdc.replace_temp_table(temps.last_version, query) -%}
{%- endmacro %}


{% macro advance_last_version(temps) -%}
  {#- The version just read becomes the last one, for the next version query or function call. -#}
  {%- do auto_cdc.replace_temp_table(temps.last_version, auto_cdc.select_versions_sql(temps.current_version)) -%}
{%- endmacro %}


{% macro version_error(model_name, message) -%}
  {%- do auto_cdc.model_error(model_name, message ~ "; nothing was written.") -%}
{%- endmacro %}


{% macro check_version_type(model_name, data_type, temps) -%}
  {#- Versions must keep their type: a text version cannot be ordered against stored integers. -#}
  {%- set was = auto_cdc.column_type(temps.last_version, 'version') -%}
  {%- if auto_cdc.row_count(temps.last_version) > 0 and auto_cdc.type_change(was, data_type) == 'incompatible' -%}
    {%- do auto_cdc.version_error(model_name, "snapshot versions are now of type " ~ data_type ~ ", but the processed versions are "
        ~ was ~ ". Cast the version back to " ~ was ~ ", or rebuild with `dbt run --full-refresh -s " ~ model_name ~ "`") -%}
  {%- endif -%}
{%- endmacro %}


{% macro choose_next_version(versions, temps) -%}
  {#- Per-run, query and function ways: fill `current_version` (and for a function
      `current_snapshot`) with the next snapshot. Returns false when there is none. -#}
  {%- if versions.way == 'run' -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, auto_cdc.next_run_version_sql(temps.last_version)) -%}
    {{ return(true) }}
  {%- elif versions.way == 'query' -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, auto_cdc.version_query_sql(render(versions.value))) -%}
    {%- set columns = adapter.get_columns_in_relation(temps.current_version) -%}
    {%- if columns | length != 1 -%}
      {%- do auto_cdc.version_error(model.name, "`snapshot_version_query` must return one column (the version), not " ~ columns | length) -%}
    {%- endif -%}
    {%- if columns[0].name != 'version' -%}
      {%- do auto_cdc.replace_temp_table(temps.current_version, auto_cdc.version_query_sql(render(versions.value), columns[0].name)) -%}
    {%- endif -%}
  {%- else -%}
    {%- set chosen = auto_cdc.call_snapshot_function(versions.value, temps) -%}
    {%- if chosen is none -%}{{ return(false) }}{%- endif -%}
    {%- do auto_cdc.replace_temp_table(temps.current_version, auto_cdc.version_literal_sql(chosen.version_sql)) -%}
    {%- do auto_cdc.drop_temp_relations([temps.current_snapshot]) -%}
    {%- call statement('auto_cdc_current_snapshot') -%}
      create temporary view {{ temps.current_snapshot }} as {{ chosen.snapshot_sql }}
    {%- endcall -%}
  {%- endif -%}
  {{ return(auto_cdc.check_next_version(temps)) }}
{%- endmacro %}


{% macro next_run_version_sql(last_version) -%}
  select cast(coalesce((select max(version) from {{ last_version }}) + 1, 0) as {{ dbt.type_bigint() }}) as version
{%- endmacro %}


{% macro version_literal_sql(version_sql) -%}
  select {{ version_sql }} as version
{%- endmacro %}


{% macro version_query_sql(query, column=none) -%}
  select {% if column is none %}*{% else %}{{ auto_cdc.quote_identifier(column) }} as version{% endif %} from (
    {{ query }}
  ) as version_query
{%- endmacro %}


{% macro check_next_version(temps) -%}
  {#- `current_version` holds no row (no new snapshot: false), or one non-NULL version of the
      processed versions' type; one not above the last processed version is skipped (false).
      The type is checked before versions are compared: text and integers do not compare. -#}
  {%- set counts = run_query(auto_cdc.count_versions_sql(temps.current_version)).rows[0] -%}
  {%- if counts[0] == 0 -%}{{ return(false) }}{%- endif -%}
  {%- if counts[0] > 1 -%}
    {%- do auto_cdc.version_error(model.name, "`snapshot_version_query` returned " ~ counts[0] ~ " rows; it must return zero rows (no new snapshot) or one (the next version)") -%}
  {%- endif -%}
  {%- if counts[1] == 0 -%}
    {%- do auto_cdc.version_error(model.name, "the next snapshot version is NULL; every snapshot needs a version") -%}
  {%- endif -%}
  {%- do auto_cdc.check_version_type(model.name, auto_cdc.column_type(temps.current_version, 'version'), temps) -%}
  {%- set stale = run_query(auto_cdc.stale_versions_sql(temps)).rows -%}
  {%- if stale | length > 0 -%}
    {%- do auto_cdc.model_warning(model.name, "snapshot version " ~ stale[0][0]
        ~ " is not above the last processed version; skipped. Versions are applied in ascending order.") -%}
    {{ return(false) }}
  {%- endif -%}
  {{ return(true) }}
{%- endmacro %}


{% macro count_versions_sql(relation) -%}
  select count(*), count(version) from {{ relation }}
{%- endmacro %}


{% macro stale_versions_sql(temps) -%}
  select c.version
  from {{ temps.current_version }} as c, {{ temps.last_version }} as l
  where c.version <= l.version
{%- endmacro %}


{% macro call_snapshot_function(function, temps) -%}
  {{ return(adapter.dispatch('call_snapshot_function', 'auto_cdc')(function, temps)) }}
{%- endmacro %}

{% macro default__call_snapshot_function(function, temps) -%}
  {%- if auto_cdc.capabilities().snapshot_functions -%}
    {%- do auto_cdc.missing_hook('call_snapshot_function', 'snapshot_functions true') -%}
  {%- endif -%}
  {%- do auto_cdc.version_error(model.name, "`snapshot_version_function` is not available on " ~ adapter.type()) -%}
{%- endmacro %}


{% macro read_snapshots(cfg, versions, temps, sql, processed, catch_up=true) -%}
  {#- Reads every snapshot this run applies into `temps.snapshots`, and their versions into
      `temps.read_versions` (a snapshot with no rows still has a version: it deletes every key).
      Version column: one read, skipping versions already processed. Per-run: the one snapshot
      chosen. Query and function: the chosen one, then (`catch_up`) the next, until there is none.
      Returns the statements that read snapshots (for target/run). -#}
  {%- if versions.way == 'column' -%}
    {{ return(auto_cdc.fill_temp_table(temps.snapshots, auto_cdc.snapshot_rows_sql(sql, cfg.version_column, processed, groups=cfg.replace_using), [])) }}
  {%- endif -%}
  {%- set statements = auto_cdc.fill_temp_table(temps.snapshots, auto_cdc.snapshot_rows_sql(sql, none, none, temps.current_version), []) -%}
  {%- do auto_cdc.replace_temp_table(temps.read_versions, auto_cdc.read_version_sql(cfg, temps)) -%}
  {%- if not catch_up or versions.way == 'run' -%}{{ return(statements) }}{%- endif -%}
  {#- Jinja has no while loop: a bounded for loop that fails loudly at its bound. (The stop is
      tested in the loop's body: dbt v2 evaluates a `for ... if` filter once, before the loop.) -#}
  {%- set limit = 10000 -%}
  {%- set reading = {'more': true} -%}
  {%- for _ in range(limit) -%}
    {%- if reading.more -%}
      {%- do auto_cdc.advance_last_version(temps) -%}
      {%- if auto_cdc.choose_next_version(versions, temps) -%}
        {%- set columns = adapter.get_columns_in_relation(temps.snapshots) | map(attribute='name') | list -%}
        {%- set appended = auto_cdc.append_rows_sql(temps.snapshots, columns, auto_cdc.snapshot_rows_sql(sql, none, none, temps.current_version)) -%}
        {%- do auto_cdc.run_statements([appended,
            auto_cdc.append_rows_sql(temps.read_versions, cfg.replace_using + ['__cdc_version', '__cdc_applied'], auto_cdc.read_version_sql(cfg, temps)),
        ]) -%}
        {%- do statements.append(appended) -%}
      {%- else -%}
        {%- do reading.update({'more': false}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if reading.more -%}
    {%- do auto_cdc.version_error(cfg.model_name, "read " ~ limit ~ " snapshot versions in one run and `" ~ versions.config
        ~ "` still returns a newer one. It must return a version above last_snapshot_version(), and none once there is no newer snapshot") -%}
  {%- endif -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro read_version_sql(cfg, temps) -%}
  {#- The version just read, applied. With `replace_using`: one row per group it holds, or one
      row with NULL groups when it holds none (the version was read; no group changes). -#}
  {%- if not cfg.replace_using -%}
  select version as __cdc_version, true as __cdc_applied from {{ temps.current_version }}
  {%- else -%}
  select {{ auto_cdc.quoted_list(cfg.replace_using, 'g.') }}, c.version as __cdc_version, true as __cdc_applied
  from {{ temps.current_version }} as c
  left join (
    select distinct {{ auto_cdc.quoted_list(cfg.replace_using) }}, __cdc_version from {{ temps.snapshots }}
  ) as g on g.__cdc_version = c.version
  {%- endif -%}
{%- endmacro %}


{% macro append_rows_sql(relation, columns, sql) -%}
  insert into {{ relation }} ({{ auto_cdc.quoted_list(columns) }})
  select {{ auto_cdc.quoted_list(columns) }} from (
    {{ sql }}
  ) as appended
{%- endmacro %}


{% macro applied_version_count(temps) -%}
  {#- How many of the versions read this run are applied (late ones are not). -#}
  {%- set query -%}select count(distinct __cdc_version) from {{ temps.read_versions }} where __cdc_applied{%- endset -%}
  {{ return(run_query(query).rows[0][0]) }}
{%- endmacro %}


{% macro snapshot_rows_sql(sql, version_column=none, processed=none, current_version=none, groups=[]) -%}
  {#- The model query's rows tagged with their version: from the version column (skipping the
      `processed` versions, or with `groups` (replace_using) the processed versions of the row's
      group), or the one version in `current_version`. -#}
  {%- set version -%}
    {%- if version_column -%}src.{{ auto_cdc.quote_identifier(version_column) }}{%- else -%}(select version from {{ current_version }}){%- endif -%}
  {%- endset -%}
  select src.*, {{ version }} as __cdc_version
  from (
    {{ sql }}
  ) as src
  {%- if processed is not none %}
  where not exists (select 1 from {{ processed }} as p where p.version = {{ version }}{% if groups %} and {{ auto_cdc.keys_match(groups, 'p', 'src') }}{% endif %})
  {%- endif %}
{%- endmacro %}
