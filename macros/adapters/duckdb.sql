{#- DuckDB: every `duckdb__` variant of the package's dispatched macros, in one place, each
    under the file of the macro that dispatches it (where its default is, and what it does). -#}


{#- _util/sequence.sql -#}
{% macro duckdb__seq_value(parts, cfg) -%}
  {#- A STRUCT: DuckDB orders structs field by field. -#}
  {#- No sequence (an open __END_AT) must be NULL, not a struct of NULLs. -#}
  case when {{ parts[0] }} is not null then struct_pack(
    {%- for part in parts %}{{ auto_cdc.quote_identifier(cfg.sequence_fields[loop.index0]) }} := {{ part }}{{ ', ' if not loop.last }}{% endfor -%}
  ) end
{%- endmacro %}



{#- apply/apply_writes.sql -#}
{% macro duckdb__apply_writes(statements, drops, result_sql) -%}
  {#- One script (run_script). Under dbt v2 each statement call takes a connection of its own
      (no session, no transaction across calls): the script opens and commits its own
      transaction, which DuckDB runs on one connection, so the writes are applied together or
      not at all there too. -#}
  {%- if not auto_cdc.dbt_v2() -%}{{ return(auto_cdc.run_script(statements + drops, result_sql)) }}{%- endif -%}
  {{ return(auto_cdc.run_script(['begin transaction'] + statements + drops + ['commit'], result_sql)) }}
{%- endmacro %}


{#- _util/sql.sql -#}
{% macro duckdb__wall_clock() -%}
  {#- DuckDB's clock functions (current_timestamp, now(), get_current_timestamp()) all read the
      transaction's start, and a run is one transaction; a version 7 UUID carries the time it
      is made (to the millisecond). -#}
  {{ return('uuid_extract_timestamp(uuidv7())') }}
{%- endmacro %}

{% macro duckdb__run_script(statements, result_sql) -%}
  {#- DuckDB runs a script of statements in one execute, under dbt v2 too. -#}
  {{ return(auto_cdc.script_in_one_call(statements, result_sql)) }}
{%- endmacro %}


{#- batch/snapshot_versions.sql -#}
{% macro duckdb__call_snapshot_function(function, temps) -%}
  {#- The auto_cdc plugin registers `auto_cdc_next_snapshot(function, last version as text, its
      type)`; it returns NULL when the function has no further snapshot, else JSON with the
      version as a SQL literal and a query that reads the snapshot. -#}
  {%- set registered = run_query("select count(*) from duckdb_functions() where function_name = 'auto_cdc_next_snapshot'").rows[0][0] -%}
  {%- if registered == 0 -%}
    {%- do auto_cdc.version_error(model.name, "`snapshot_version_function` needs the auto_cdc plugin: add `plugins: [{module: auto_cdc.plugin}]` "
        ~ "to this target in profiles.yml (and install the dbt-auto-cdc Python package: README, 'Use it in your project')") -%}
  {%- endif -%}
  {%- set query -%}
    select auto_cdc_next_snapshot({{ auto_cdc.string_literal(function) }},
      (select cast(version as varchar) from {{ temps.last_version }}), (select typeof(version) from {{ temps.last_version }}))
  {%- endset -%}
  {%- set result = run_query(query).rows[0][0] -%}
  {{ return(none if result is none else fromjson(result)) }}
{%- endmacro %}



{#- run/run_mode.sql -#}
{% macro duckdb__relation_types(schema_relation, names) -%}
  {#- dbt-duckdb's listing (its types, its case-insensitive schema and database), for `names`
      only. dbt v2 lists relations itself. -#}
  {%- if auto_cdc.dbt_v2() -%}{{ return(auto_cdc.default__relation_types(schema_relation, names)) }}{%- endif -%}
  {%- set query -%}
    select table_name, case table_type when 'BASE TABLE' then 'table' when 'VIEW' then 'view' when 'LOCAL TEMPORARY' then 'table' end
    from system.information_schema.tables
    where lower(table_schema) = {{ auto_cdc.string_literal(schema_relation.schema | lower) }}
      and lower(table_catalog) = {{ auto_cdc.string_literal(schema_relation.database | lower) }}
      and table_name in ({{ auto_cdc.string_literals(names) }})
  {%- endset -%}
  {{ return(auto_cdc.relation_types_found(query)) }}
{%- endmacro %}


{#- batch/query_columns.sql -#}
{% macro duckdb__probe_query(sql, probe) -%}
  {#- DESCRIBE of the query: the types its empty temp table would get, in one statement (dbt v2
      looks columns up itself, from a table). Every DuckDB type compares with `=`
      (compares_every_type; where that answer is changed, the default asks which do not). -#}
  {%- if auto_cdc.dbt_v2() or not auto_cdc.capabilities().compares_every_type -%}{{ return(auto_cdc.default__probe_query(sql, probe)) }}{%- endif -%}
  {%- set query -%}
    select column_name, column_type, cast(null as bigint), cast(null as bigint), cast(null as bigint)
    from (describe {{ auto_cdc.no_rows_sql(sql) }})
  {%- endset -%}
  {%- set columns = [] -%}
  {%- for row in run_query(query).rows -%}{%- do columns.append(api.Column(row[0], row[1], row[2], row[3], row[4])) -%}{%- endfor -%}
  {{ return({'columns': columns, 'compared_as_text': {}}) }}
{%- endmacro %}


{#- _util/column_types.sql -#}
{% macro duckdb__columns_of(relations) -%}
  {#- One DESCRIBE per relation (dbt-duckdb's own lookup), all in one statement. dbt v2 looks
      columns up itself. -#}
  {%- if auto_cdc.dbt_v2() or relations | length < 2 -%}{{ return(auto_cdc.default__columns_of(relations)) }}{%- endif -%}
  {%- set query -%}
    select i, column_name, column_type, cast(null as bigint), cast(null as bigint), cast(null as bigint) from (
    {%- for relation in relations %}
      select {{ loop.index0 }} as i, row_number() over () as n, column_name, column_type from (describe {{ relation.render() }})
      {{- ' union all' if not loop.last }}
    {%- endfor %}
    ) as described order by i, n
  {%- endset -%}
  {{ return(auto_cdc.columns_from_rows(run_query(query).rows, relations | length)) }}
{%- endmacro %}

{% macro duckdb__type_label(column) -%}
  {#- dbt-duckdb (and dbt v2) report VARCHAR as `character varying(256)`, a type DuckDB never had. -#}
  {{ return(column.dtype if column.is_string() else column.data_type) }}
{%- endmacro %}


{#- validate/batch.sql -#}
{% macro duckdb__failing_query_sql(message) -%}
  select error({{ auto_cdc.string_literal(message) }})
{%- endmacro %}


{#- public/debezium/ (json.sql, ordering.sql, placeholders.sql, types.sql) -#}
{% macro duckdb__debezium_json_sql(expr) -%}
  {{ return('cast(' ~ expr ~ ' as json)') }}
{%- endmacro %}

{% macro duckdb__debezium_member_sql(doc, key) -%}
  {#- A JSONPath with the key quoted: `->` reads a key starting with `$` or `/` as a path. -#}
  {{ return('json_extract(' ~ doc ~ ', ' ~ auto_cdc._duckdb_json_path(key) ~ ')') }}
{%- endmacro %}

{% macro duckdb__debezium_field_sql(doc, key) -%}
  {{ return('json_extract_string(' ~ doc ~ ', ' ~ auto_cdc._duckdb_json_path(key) ~ ')') }}
{%- endmacro %}

{% macro _duckdb_json_path(key) -%}
  {{ return(auto_cdc.string_literal('$."' ~ (key | replace('\\', '\\\\') | replace('"', '\\"')) ~ '"')) }}
{%- endmacro %}

{% macro duckdb__debezium_element_sql(doc, index) -%}
  {{ return('json_extract_string(' ~ doc ~ ", '$[" ~ index ~ "]')") }}
{%- endmacro %}

{% macro duckdb__debezium_trailing_number_sql(text) -%}
  {{ return("regexp_extract(" ~ text ~ ", '([0-9]+)$', 1)") }}
{%- endmacro %}

{% macro duckdb__debezium_error_sql(message) -%}
  {{ return('error(' ~ message ~ ')') }}
{%- endmacro %}

{% macro duckdb__debezium_epoch_sql(raw, unit) -%}
  {{ return('make_timestamp(cast(' ~ raw ~ ' as bigint)' ~ (' * 1000' if unit == 'epoch_millis' else '') ~ ')') }}
{%- endmacro %}


{#- adapters/capabilities.sql -#}
{% macro duckdb__capabilities() -%}
  {#- One process writes a database file at a time, and a run is one transaction, whose
      current_timestamp is its start. No indexes: DuckDB joins by hashing and prunes with zone
      maps; an ART index would only slow every update and adds no speed to set-based joins.
      Snapshot functions are Python callables registered by dbt-duckdb's plugin: dbt v2 has
      neither. -#}
  {{ return({
      'adapter': 'duckdb',
      'transactions': true, 'concurrency': 'single_writer', 'run_clock': 'transaction_start',
      'compares_every_type': true, 'type_of': 'typeof({})', 'indexes': false,
      'max_identifier_length': 63, 'max_decimal_precision': 38,
      'snapshot_functions': not auto_cdc.dbt_v2(), 'rebuild_drops_sequence_type': false,
      'untested_features': [],
  }) }}
{%- endmacro %}
