{#- Small statements and expressions every stage uses, dispatched where databases differ. -#}

{% macro run_statements(statements) -%}
  {#- One statement per call: not every driver accepts several in one execute. -#}
  {%- for sql in statements -%}
    {%- if sql | trim -%}
      {% call statement('auto_cdc_step') %}{{ sql }}{% endcall %}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}


{% macro run_script(statements, result_sql=none) -%}
  {#- `statements` in order, then the query `result_sql` (if given), whose rows are returned:
      in one call where the driver takes several statements in one execute (one round trip,
      one query of dbt's to log), else one by one (run_statements). -#}
  {%- set kept = [] -%}
  {%- for sql in statements if sql | trim -%}{%- do kept.append(sql | trim) -%}{%- endfor -%}
  {%- if not kept and not result_sql -%}{{ return(none) }}{%- endif -%}
  {{ return(adapter.dispatch('run_script', 'auto_cdc')(kept, result_sql)) }}
{%- endmacro %}

{% macro default__run_script(statements, result_sql) -%}
  {%- do auto_cdc.run_statements(statements) -%}
  {{ return(run_query(result_sql).rows if result_sql else none) }}
{%- endmacro %}

{% macro script_in_one_call(statements, result_sql) -%}
  {#- run_script for a driver that runs a script in one execute and returns its last
      statement's rows (duckdb, psycopg2). -#}
  {%- set script = statements + ([result_sql] if result_sql else []) -%}
  {%- call statement('auto_cdc_script', fetch_result=result_sql is not none) -%}{{ script | join('\n;\n') }}{%- endcall -%}
  {{ return(load_result('auto_cdc_script').table.rows if result_sql else none) }}
{%- endmacro %}


{% macro temp_table_sql(relation, sql) -%}
  {{ return(adapter.dispatch('temp_table_sql', 'auto_cdc')(relation, sql)) }}
{%- endmacro %}

{% macro default__temp_table_sql(relation, sql) -%}
  {#- Not dbt's create_table_as: under an enforced contract it gives any table it creates the
      model's contract, which describes the target, not the run's working tables. Under dbt v2 a
      real table (temp_relations), replacing one an interrupted run left. -#}
  create {{ 'or replace table' if auto_cdc.dbt_v2() else 'temporary table' }} {{ relation }} as
  {{ sql }}
{%- endmacro %}


{% macro drop_temp_relations(relations) -%}
  {#- The run's session-local relations, dropped by plain statements: adapter.drop_relation
      builds a whole macro context per call (~5 ms each, up to nine per run), and temp
      relations are not in dbt's relation cache it keeps up to date. -#}
  {%- set statements = [] -%}
  {%- for relation in relations -%}
    {%- do statements.append(auto_cdc.drop_relation_sql(relation)) -%}
  {%- endfor -%}
  {%- do auto_cdc.run_script(statements) -%}
{%- endmacro %}

{% macro drop_relation_sql(relation) -%}
  {#- A statement that drops `relation` (a table or a view) if it exists: the run's working
      relations, and the model's own tables on a rebuild (among the run's writes, not through
      adapter.drop_relation, which would drop them before the run writes anything else). -#}
  {{ return(adapter.dispatch('drop_relation_sql', 'auto_cdc')(relation)) }}
{%- endmacro %}

{% macro default__drop_relation_sql(relation) -%}
  drop {{ relation.type }} if exists {{ relation }} cascade
{%- endmacro %}


{% macro subquery_fence() -%}
  {#- What ends a subquery so that the planner computes its columns once, rather than copying
      their expressions into every reference above it (PostgreSQL pulls subqueries up: the SCD1
      resolve's derived columns, each read many times, became ~120 copies and 15 ms of
      planning a run). -#}
  {{ return(adapter.dispatch('subquery_fence', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__subquery_fence() -%}
{%- endmacro %}


{% macro materialized_cte() -%}
  {#- What makes a CTE computed once, before the query that reads it (`name as <this> (...)`):
      a few rows (a feed's truncates) that a join compares with every other row must not be
      found again, by a scan of a large CTE or table, for each of those rows. -#}
  {{ return(adapter.dispatch('materialized_cte', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__materialized_cte() -%}
{%- endmacro %}


{% macro table_configs() -%}
  {#- Which of dbt's table configs `file_format` and `tblproperties` the adapter's tables take
      (table_options); set on another adapter, they are named in a warning (_check_dbt_config). -#}
  {{ return(adapter.dispatch('table_configs', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__table_configs() -%}
  {{ return([]) }}
{%- endmacro %}


{% macro table_options() -%}
  {#- What a `create table` of the model's tables needs after its columns, before `as` (Spark:
      the table format and properties). -#}
  {{ return(adapter.dispatch('table_options', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__table_options() -%}
{%- endmacro %}


{% macro fill_temp_table(relation, sql, analyzed_columns) -%}
  {#- A temp table from `sql`, with statistics on the columns the next statements join on.
      Returns the statements it ran. -#}
  {%- set statements = auto_cdc.fill_temp_table_sql(relation, sql, analyzed_columns) -%}
  {%- do auto_cdc.run_script(statements) -%}
  {{ return(statements) }}
{%- endmacro %}

{% macro fill_temp_table_sql(relation, sql, analyzed_columns) -%}
  {#- The statements of fill_temp_table, for a run's writes (the resolve reads the model's
      tables as the writes before it leave them). -#}
  {{ return([auto_cdc.temp_table_sql(relation, sql), auto_cdc.analyze_sql(relation, analyzed_columns) if analyzed_columns else '']) }}
{%- endmacro %}


{% macro named_row(names, row) -%}
  {#- A result row as {name: value}, `names` in the order of the query's select list, so a
      reader names what it reads instead of counting positions. -#}
  {%- set named = {} -%}
  {%- for name in names -%}{%- do named.update({name: row[loop.index0]}) -%}{%- endfor -%}
  {{ return(named) }}
{%- endmacro %}


{% macro row_count(relation) -%}
  {%- set query -%}select count(*) from {{ relation }}{%- endset -%}
  {{ return(run_query(query).rows[0][0]) }}
{%- endmacro %}


{% macro key_index_sql(relation, columns, unique=true) -%}
  {{ return(adapter.dispatch('key_index_sql', 'auto_cdc')(relation, columns, unique)) }}
{%- endmacro %}

{% macro default__key_index_sql(relation, columns, unique) -%}
  {#- An index on the keys keeps every apply proportional to the batch, not the table. -#}
  {%- if not auto_cdc.capabilities().indexes -%}{{ return('') }}{%- endif -%}
  {%- set name = auto_cdc.derived_name(relation.identifier, '__cdc_key') -%}
  create {{ 'unique' if unique }} index {{ auto_cdc.quote_identifier(name) }}
    on {{ relation }} ({{ auto_cdc.quoted_list(columns) }})
{%- endmacro %}


{% macro tombstone_index_sql(state_relation, replace=false) -%}
  {{ return(adapter.dispatch('tombstone_index_sql', 'auto_cdc')(state_relation, replace)) }}
{%- endmacro %}

{% macro default__tombstone_index_sql(state_relation, replace) -%}
  {#- Lets each run find expired tombstones without scanning the whole state: rows with a delete
      time, which every layout's expiry (tombstone_expired) implies. A list of statements;
      `replace`: first drop the index of a state built before this form, which held only rows
      without an upsert sequence (a state of 'tombstones' keeps some with one). -#}
  {%- if not auto_cdc.capabilities().indexes -%}{{ return([]) }}{%- endif -%}
  {%- set name = auto_cdc.quote_identifier(auto_cdc.derived_name(state_relation.identifier, '__cdc_tomb')) -%}
  {%- set schema = auto_cdc.quote_identifier(state_relation.schema) ~ '.' if state_relation.schema else '' -%}
  {{ return((['drop index if exists ' ~ schema ~ name] if replace else [])
            + ['create index ' ~ name ~ ' on ' ~ state_relation ~ ' (__cdc_deleted_at) where __cdc_deleted_at is not null']) }}
{%- endmacro %}


{% macro analyze_sql(relation, columns) -%}
  {{ return(adapter.dispatch('analyze_sql', 'auto_cdc')(relation, columns)) }}
{%- endmacro %}

{% macro default__analyze_sql(relation, columns) -%}
{%- endmacro %}


{% macro begin_run(target) -%}
  {#- Before anything is read: the run's lock on `target` (lock_target), then its session
      settings (prepare_session) and dbt's `sql_header` config (the SQL a model's query needs
      first: session settings, temporary functions; dbt puts it before the statement that runs
      the query, and every statement of a run runs in this session), in one call. -#}
  {%- set header = (config.get('sql_header') or '') | trim | trim(';') -%}
  {%- if header and auto_cdc.dbt_v2() -%}
    {%- do auto_cdc.model_error(model.name, "`sql_header` cannot apply under dbt v2: each of its statements runs in a session of its own, so what"
          ~ " the header sets up is gone when the model query runs (dbt v2's own table models fail with one too); nothing was written."
          ~ " Put it in the model query, or run the model with dbt-core.") -%}
  {%- endif -%}
  {%- do auto_cdc.run_script([auto_cdc.lock_target(target), auto_cdc.prepare_session(), header]) -%}
{%- endmacro %}

{% macro prepare_session() -%}
  {#- The SQL that sets the run's session, or nothing. -#}
  {{ return(adapter.dispatch('prepare_session', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__prepare_session() -%}
{%- endmacro %}


{% macro lock_target(relation) -%}
  {#- The SQL that takes the run's lock on `relation`, or nothing. -#}
  {{ return(adapter.dispatch('lock_target', 'auto_cdc')(relation)) }}
{%- endmacro %}

{% macro default__lock_target(relation) -%}
  {#- Nothing to take where the engine lets one writer in at a time, or where read_fence
      detects a concurrent run instead. -#}
  {%- if auto_cdc.capabilities().concurrency not in ['single_writer', 'fence'] -%}
    {%- do auto_cdc.missing_hook('lock_target', "concurrency '" ~ auto_cdc.capabilities().concurrency ~ "'") -%}
  {%- endif -%}
{%- endmacro %}


{% macro add_columns_sql(relation, columns) -%}
  {#- The ALTER statements adding `columns` (dicts with 'name' and 'data_type'). -#}
  {{ return(adapter.dispatch('add_columns_sql', 'auto_cdc')(relation, columns)) }}
{%- endmacro %}

{% macro default__add_columns_sql(relation, columns) -%}
  {%- set statements = [] -%}
  {%- for column in columns -%}
    {%- set statement -%}alter table {{ relation }} add column {{ auto_cdc.quote_identifier(column.name) }} {{ column.data_type }}{%- endset -%}
    {%- do statements.append(statement) -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro seconds_ago(seconds, now) -%}
  {#- `now`: SQL for the time to count back from (run.now for a run: its clock). -#}
  {{ return(dbt.dateadd('second', -1 * seconds, now)) }}
{%- endmacro %}


{% macro comparable(cfg, column, prefix='') -%}
  {#- `prefix` + the quoted column, as compared for equality (null-safe comparisons, DISTINCT,
      GROUP BY, PARTITION BY): its text form when its type has no usable equality. -#}
  {{ return(auto_cdc.compared(cfg, column, prefix ~ auto_cdc.quote_identifier(column))) }}
{%- endmacro %}


{% macro compared(cfg, column, expr) -%}
  {#- `expr`, a value of `column`, as compared for equality (see comparable). -#}
  {{ return(('cast(' ~ expr ~ ' as ' ~ dbt.type_string() ~ ')') if column in cfg.compared_as_text else expr) }}
{%- endmacro %}


{% macro wall_clock() -%}
  {#- SQL for the time a statement runs at, for a run's duration and lag (record_run_sql). Not
      run_clock: that is the run's one time, read at its start. -#}
  {{ return(adapter.dispatch('wall_clock', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__wall_clock() -%}
  {#- Spark reads current_timestamp() once per statement. -#}
  {{ return(dbt.current_timestamp()) }}
{%- endmacro %}


{% macro seconds_between(start, end) -%}
  {#- SQL: the seconds from timestamp `start` to `end`, with their fraction. -#}
  {{ return(adapter.dispatch('seconds_between', 'auto_cdc')(start, end)) }}
{%- endmacro %}

{% macro default__seconds_between(start, end) -%}
  {{ return('(epoch(cast(' ~ end ~ ' as timestamp with time zone)) - epoch(cast(' ~ start ~ ' as timestamp with time zone)))') }}
{%- endmacro %}


{% macro type_timestamp_tz() -%}
  {#- A point in time, as the run history keeps its times (applied_at: the run's clock). -#}
  {{ return(adapter.dispatch('type_timestamp_tz', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__type_timestamp_tz() -%}
  {{ return('timestamp with time zone') }}
{%- endmacro %}


{% macro utc_instant_sql(expr) -%}
  {#- SQL: the point in time of `expr`, a timestamp without a time zone or a date, read as UTC. -#}
  {{ return(adapter.dispatch('utc_instant_sql', 'auto_cdc')(expr)) }}
{%- endmacro %}

{% macro default__utc_instant_sql(expr) -%}
  {{ return("timezone('UTC', cast(" ~ expr ~ " as timestamp))") }}
{%- endmacro %}
