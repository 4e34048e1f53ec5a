{#- PostgreSQL: every `postgres__` variant of the package's dispatched macros, in one place,
    each under the file of the macro that dispatches it (where its default is, and what it does). -#}


{#- _util/sequence.sql -#}
{% macro postgres__seq_value(parts, cfg) -%}
  {#- A composite type made for this model: PostgreSQL orders composites field by field. -#}
  case when {{ parts[0] }} is not null then row({{ parts | join(', ') }})::{{ auto_cdc._postgres_sequence_type() }} end
{%- endmacro %}

{% macro _postgres_sequence_type() -%}
  {#- The model's composite sequence type, named after its target like its other tables. -#}
  {{ return(auto_cdc.state_relations(this).seq_type) }}
{%- endmacro %}

{% macro postgres__sequence_type_sql(cfg, batch) -%}
  {%- if cfg.seq_parts == 1 -%}{{ return('') }}{%- endif -%}
  {%- set types = {} -%}
  {%- for column in adapter.get_columns_in_relation(batch) -%}{%- do types.update({column.name: column.data_type}) -%}{%- endfor -%}
  {%- set fields = [] -%}
  {%- for part in auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
    {%- do fields.append(auto_cdc.quote_identifier(cfg.sequence_fields[loop.index0]) ~ ' ' ~ types[part]) -%}
  {%- endfor -%}
  create type {{ auto_cdc._postgres_sequence_type() }} as ({{ fields | join(', ') }})
{%- endmacro %}

{% macro postgres__drop_sequence_type_sql(cfg) -%}
  drop type if exists {{ auto_cdc._postgres_sequence_type() }} cascade
{%- endmacro %}


{#- _util/sql.sql -#}
{% macro postgres__wall_clock() -%}
  {#- current_timestamp is the transaction's start, and a run is one transaction. -#}
  {{ return('clock_timestamp()') }}
{%- endmacro %}

{% macro postgres__utc_instant_sql(expr) -%}
  {{ return("(cast(" ~ expr ~ " as timestamp) at time zone 'UTC')") }}
{%- endmacro %}

{% macro postgres__seconds_between(start, end) -%}
  {{ return('extract(epoch from (cast(' ~ end ~ ' as timestamp with time zone) - cast(' ~ start ~ ' as timestamp with time zone)))') }}
{%- endmacro %}

{% macro postgres__run_script(statements, result_sql) -%}
  {#- psycopg2 sends a script of statements as one query; in dbt's transaction, the first that
      fails undoes them all. -#}
  {{ return(auto_cdc.script_in_one_call(statements, result_sql)) }}
{%- endmacro %}

{% macro postgres__analyze_sql(relation, columns) -%}
  {#- Temp tables get no statistics by themselves; without them the planner guesses the batch
      size and may scan the whole target instead of using the key index. Only the columns the
      next statements join or filter on (`columns`): statistics on every column cost 2-3x more. -#}
  analyze {{ relation }} ({{ auto_cdc.quoted_list(columns) }})
{%- endmacro %}

{% macro postgres__subquery_fence() -%}
  {#- `offset 0`: PostgreSQL does not pull a subquery with an OFFSET up into its parent. -#}
  offset 0
{%- endmacro %}

{% macro postgres__materialized_cte() -%}
  {#- PostgreSQL inlines a CTE read once; under a join with only an inequality it then scans
      the CTE's source again for each row of the other side (a 200,000-event feed: hours). -#}
  materialized
{%- endmacro %}

{% macro postgres__prepare_session() -%}
  {#- For this transaction only. With the default random_page_cost (4, tuned for spinning
      disks) PostgreSQL prefers a full scan of a large target over a few thousand key lookups,
      making the run's cost follow the table instead of the batch: lower it to 1.1 (a common SSD
      setting), never raising a lower value the user chose. JIT compilation, which the planner
      starts for any statement it estimates as large, costs more than it saves on statements
      that each run for well under a second (measured: 20-100 ms per snapshot comparison).
      And the run's clock, read after lock_target (postgres__run_clock). -#}
  select set_config('random_page_cost', least(current_setting('random_page_cost')::float8, 1.1)::text, true),
         set_config('jit', 'off', true),
         set_config('auto_cdc.run_clock', cast(clock_timestamp() as text), true)
{%- endmacro %}

{% macro postgres__lock_target(relation) -%}
  {#- Serialise runs of the same model: a second run waits here until the first commits, then
      reads the state the first one left. The lock ends with the transaction. -#}
  select pg_advisory_xact_lock(hashtext({{ auto_cdc.string_literal(relation | string) }}))
{%- endmacro %}


{#- _util/column_types.sql -#}
{% macro postgres__columns_of(relations) -%}
  {#- dbt-postgres's lookup, for all the relations in one statement (a temp relation has no
      schema: matched by name, as dbt-postgres does). -#}
  {%- if relations | length < 2 -%}{{ return(auto_cdc.default__columns_of(relations)) }}{%- endif -%}
  {%- set query -%}
    select r.i, c.column_name, c.data_type, c.character_maximum_length, c.numeric_precision, c.numeric_scale
    from information_schema.columns as c
    join (values
      {%- for relation in relations %}
      ({{ loop.index0 }}, {{ auto_cdc.string_literal(relation.identifier) }}, {{ auto_cdc.string_literal(relation.schema) if relation.schema else 'null' }}){{ ',' if not loop.last }}
      {%- endfor %}
    ) as r(i, name, schema_name) on c.table_name = r.name and (r.schema_name is null or c.table_schema = r.schema_name)
    order by r.i, c.ordinal_position
  {%- endset -%}
  {{ return(auto_cdc.columns_from_rows(run_query(query).rows, relations | length)) }}
{%- endmacro %}


{#- run/run_mode.sql -#}
{% macro postgres__relation_types(schema_relation, names) -%}
  {#- dbt-postgres's listing (pg_tables, pg_views and pg_matviews: relkinds r, p, v and m; the
      schema matched with ilike, as it does), for `names` only. -#}
  {%- set query -%}
    select c.relname, case c.relkind when 'v' then 'view' when 'm' then 'materialized_view' else 'table' end
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname ilike {{ auto_cdc.string_literal(schema_relation.schema) }}
      and c.relkind in ('r', 'p', 'v', 'm')
      and c.relname in ({{ auto_cdc.string_literals(names) }})
  {%- endset -%}
  {{ return(auto_cdc.relation_types_found(query)) }}
{%- endmacro %}


{#- batch/query_columns.sql -#}
{% macro postgres__columns_compared_as_text(relation) -%}
  {%- set types = {} -%}
  {%- for row in run_query(auto_cdc.postgres__compared_as_text_sql(relation)).rows -%}{%- do types.update({row[0]: row[1]}) -%}{%- endfor -%}
  {{ return(types) }}
{%- endmacro %}

{% macro postgres__compared_as_text_sql(relation) -%}
  {#- Types without an equality operator (json, xml, point, ...), the geometric types whose `=`
      compares areas or lengths (box, lseg), composite and extension types (whose `=` may be
      missing or loose), and arrays and domains of them: compared through their text form,
      which is exact for all of them. Rows: (column, its type). -#}
  select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute as a
  join pg_type as t on t.oid = a.atttypid
  join pg_type as b on b.oid = case when t.typcategory = 'A' then t.typelem
                                    when t.typtype = 'd' then t.typbasetype else t.oid end
  where a.attrelid = {{ auto_cdc.string_literal(relation | string) }}::regclass and a.attnum > 0 and not a.attisdropped
    and (b.typname in ('json', 'xml', 'point', 'line', 'lseg', 'box', 'path', 'polygon', 'circle')
         or b.typtype = 'c' or (b.typtype = 'b' and b.oid >= 16384))
{%- endmacro %}

{% macro postgres__probe_query(sql, probe) -%}
  {#- The default's empty temp table, its columns (as dbt-postgres looks them up) and those
      compared as text, in one script. The table stays until the next probe replaces it or
      apply_writes drops it with the run's other temp relations. -#}
  {%- set query -%}
    select c.column_name, c.data_type, c.character_maximum_length, c.numeric_precision, c.numeric_scale, t.format_type
    from information_schema.columns as c
    left join ({{ auto_cdc.postgres__compared_as_text_sql(probe) }}) as t on t.attname = c.column_name
    where c.table_name = {{ auto_cdc.string_literal(probe.identifier) }} and c.table_schema = pg_my_temp_schema()::regnamespace::text
    order by c.ordinal_position
  {%- endset -%}
  {%- set rows = auto_cdc.run_script([auto_cdc.drop_relation_sql(probe), auto_cdc.temp_table_sql(probe, auto_cdc.no_rows_sql(sql))], query) -%}
  {%- set columns = [] -%}
  {%- set compared_as_text = {} -%}
  {%- for row in rows -%}
    {%- do columns.append(api.Column(row[0], row[1], row[2], row[3], row[4])) -%}
    {%- if row[5] is not none -%}{%- do compared_as_text.update({row[0]: row[5]}) -%}{%- endif -%}
  {%- endfor -%}
  {{ return({'columns': columns, 'compared_as_text': compared_as_text}) }}
{%- endmacro %}


{#- config/read_config.sql -#}
{% macro postgres__run_clock() -%}
  {#- Read once, after lock_target (begin_run: prepare_session keeps it for the transaction): a
      run that waited for the lock started its transaction before the run it waited for
      committed, so current_timestamp (the transaction's start) would stamp it earlier than
      that commit. The clock read after the lock is later than every commit before this
      run's, so stamps follow commit order. A scalar subquery, so a statement reads and parses
      it once, not once per row (measured: 50 ms of a 10,000-key SCD1 resolve's 140 ms). -#}
  {{ return("(select cast(current_setting('auto_cdc.run_clock') as timestamp with time zone))") }}
{%- endmacro %}


{#- public/as_of.sql -#}
{% macro postgres__first_sequence_field(relation, data_type) -%}
  {#- The model's composite sequence type (state_relations().seq_type): its first attribute. -#}
  {%- set seq_type = auto_cdc.state_relations(relation).seq_type -%}
  {%- set query -%}
    select attname from pg_attribute
    where attrelid = (select typrelid from pg_type where oid = to_regtype({{ auto_cdc.string_literal(seq_type) }})) and attnum = 1
  {%- endset -%}
  {{ return(run_query(query).rows[0][0]) }}
{%- endmacro %}


{#- adapters/capabilities.sql -#}
{% macro postgres__capabilities() -%}
  {#- Runs of one model take an advisory lock (lock_target), and the clock is read after it
      (run_clock). `=` is missing or loose on some types (columns_compared_as_text). A
      rebuild drops the sequence's composite type with CASCADE and creates it again. -#}
  {{ return({
      'adapter': 'postgres',
      'transactions': true, 'concurrency': 'lock', 'run_clock': 'after_lock',
      'compares_every_type': false, 'type_of': 'pg_typeof({})::text', 'indexes': true,
      'max_identifier_length': 63, 'max_decimal_precision': 1000,
      'snapshot_functions': false, 'rebuild_drops_sequence_type': true,
      'untested_features': [],
  }) }}
{%- endmacro %}
