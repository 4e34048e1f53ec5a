{#- Spark: the model's tables are Iceberg tables (`file_format` iceberg, the default), and
    a run's working tables are real tables, not temporary views. A temporary view is re-evaluated
    at each use and a cached one is recomputed after any write to a table it reads, so a view of
    the changes would change once the target is written. Their names carry the invocation, so
    concurrent runs of one model never share one. -#}

{% macro spark__table_options() -%}
  {#- Iceberg only: other formats fail when the configuration is read (spark__capabilities). -#}
  {%- set properties = {'format-version': '2', 'write.merge.mode': 'merge-on-read',
                        'write.update.mode': 'merge-on-read', 'write.delete.mode': 'merge-on-read'} -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  using iceberg
  {%- if properties %}
  tblproperties ({% for name, value in properties.items() %}{{ auto_cdc.string_literal(name) }} = {{ auto_cdc.string_literal(value) }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endif %}
{%- endmacro %}


{% macro spark__table_configs() -%}
  {{ return(['file_format', 'tblproperties']) }}
{%- endmacro %}


{% macro spark__temp_relations(target_relation) -%}
  {%- set run_tag = invocation_id | replace('-', '') -%}
  {%- set tables = ['batch', 'raw', 'bad', 'history', 'changes', 'snapshots', 'read_versions', 'last_version', 'current_version', 'fence'] -%}
  {#- Views without rows or over the source only: temporary views. -#}
  {%- set views = ['probe', 'current_snapshot'] -%}
  {%- set suffix = {} -%}
  {%- for name in tables + views -%}{%- do suffix.update({name: '__cdc_tmp_' ~ name ~ '_' ~ run_tag[:12]}) -%}{%- endfor -%}
  {%- set names = auto_cdc.derived_names(target_relation.identifier, suffix.values() | list) -%}
  {%- set temps = {} -%}
  {%- for name in tables -%}
    {%- do temps.update({name: api.Relation.create(schema=target_relation.schema, identifier=names[suffix[name]], type='table')}) -%}
  {%- endfor -%}
  {%- for name in views -%}
    {%- do temps.update({name: api.Relation.create(identifier=names[suffix[name]], type='view')}) -%}
  {%- endfor -%}
  {{ return(temps) }}
{%- endmacro %}


{% macro spark__leftover_working_tables(target_relation, temps) -%}
  {#- Working tables are named per invocation, so no later run replaces a failed run's. Those of
      this model's other runs that exist as this run starts are dropped once it has recorded its
      run. A run that started before it and is still going then has lost the race (this run
      wrote the model's tables after that run read them: its read fence fails it at its first
      write), or, if it noted the tables only after this run's writes, fails reading its dropped
      working tables; like any failed run on Spark, the next run applies its events. -#}
  {%- set own = temps.values() | map(attribute='identifier') | map('lower') | list -%}
  {%- set listed = run_query('show tables in ' ~ auto_cdc.quote_identifier(target_relation.schema) ~ " like '*__cdc_tmp_*'") -%}
  {%- set leftovers = [] -%}
  {%- for row in listed.rows if not row['isTemporary'] -%}
    {%- set named = modules.re.search('__cdc_tmp_[a-z_]+_[0-9a-f]{12}$', row['tableName']) -%}
    {#- This model's (its derived name, which a long model name shortens with a hash), not this run's. -#}
    {%- if named and row['tableName'] not in own
          and auto_cdc.derived_name(target_relation.identifier, named.group(0)) | lower == row['tableName'] -%}
      {%- do leftovers.append(api.Relation.create(schema=target_relation.schema, identifier=row['tableName'], type='table')) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(leftovers) }}
{%- endmacro %}


{% macro spark__temp_table_sql(relation, sql) -%}
  {%- if relation.type == 'view' -%}
  create or replace temporary view {{ relation }} as
  {{ sql }}
  {%- else -%}
  create table {{ relation }} using parquet as
  {{ sql }}
  {%- endif -%}
{%- endmacro %}


{% macro spark__drop_relation_sql(relation) -%}
  {#- purge: dropped through Iceberg's session catalog, a table's files may stay behind, and the
      next table of that name would find its location taken. -#}
  drop {{ relation.type }} if exists {{ relation }}{{ ' purge' if relation.type == 'table' }}
{%- endmacro %}


{% macro spark__relation_types(schema_relation, names) -%}
  {#- Not dbt-spark's `show table extended`, which cannot describe Iceberg tables in the session
      catalog: two metastore listings (names are lower case in the metastore). -#}
  {%- set schema = auto_cdc.quote_identifier(schema_relation.schema) -%}
  {%- set views = run_query('show views in ' ~ schema).columns['viewName'].values() | list -%}
  {%- set found = {} -%}
  {%- for row in run_query('show tables in ' ~ schema).rows if not row['isTemporary'] and row['tableName'] in names -%}
    {%- do found.update({row['tableName']: 'view' if row['tableName'] in views else 'table'}) -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}


{% macro spark__capabilities() -%}
  {#- No transactions: the run history row, written last, is each run's commit point (the
      change feed's rows, written first, count from it: spark__change_feed_statements), and
      read_fence detects a concurrent run. Iceberg has no indexes (a MERGE prunes files only by
      partition: each scans its table). Refused before anything is written (docs/spark.md):
      a file_format other than iceberg (the concurrency check and the tombstone scan read
      Iceberg's metadata tables). -#}
  {{ return({
      'adapter': 'spark',
      'transactions': false, 'concurrency': 'fence', 'run_clock': 'run_start',
      'compares_every_type': true, 'type_of': 'typeof({})', 'indexes': false,
      'max_identifier_length': 63, 'max_decimal_precision': 38,
      'snapshot_functions': false, 'rebuild_drops_sequence_type': false,
      'untested_features': ['file_format'],
  }) }}
{%- endmacro %}


{% macro spark__run_clock() -%}
  {#- Each Spark statement has its own current_timestamp, and a run is many statements seconds
      apart: the run's time is read once, here, as a literal (the dbt process's clock). -#}
  {%- set now = modules.datetime.datetime.now(modules.pytz.utc) -%}
  {{ return('timestamp_micros(' ~ ((now.timestamp() * 1000000) | round | int) ~ ')') }}
{%- endmacro %}


{% macro spark__seconds_between(start, end) -%}
  {{ return('((unix_micros(cast(' ~ end ~ ' as timestamp)) - unix_micros(cast(' ~ start ~ ' as timestamp))) / 1000000.0)') }}
{%- endmacro %}

{% macro spark__has_time_zone(data_type) -%}
  {#- Spark's `timestamp` is a point in time; `timestamp_ntz` is not. -#}
  {{ return(data_type.startswith('timestamp') and 'ntz' not in data_type) }}
{%- endmacro %}

{% macro spark__utc_instant_sql(expr) -%}
  {#- A `timestamp_ntz` or a date: its wall-clock time in UTC, as a point in time. -#}
  {{ return("cast(convert_timezone('UTC', current_timezone(), cast(" ~ expr ~ " as timestamp_ntz)) as timestamp)") }}
{%- endmacro %}

{% macro spark__type_timestamp_tz() -%}
  {#- Spark's timestamp is a point in time (shown in the session's time zone). -#}
  {{ return('timestamp') }}
{%- endmacro %}


{% macro spark__type_change(stored, incoming) -%}
  {#- Iceberg widens fewer types than DuckDB and PostgreSQL: int to bigint, float to double, and
      a decimal's precision at the same scale. Any other widening would fail in its ALTER TABLE,
      after the first tables had been altered: it fails here, before anything is written. -#}
  {%- set verdict = auto_cdc.default__type_change(stored, incoming) -%}
  {%- if verdict is not mapping -%}{{ return(verdict) }}{%- endif -%}
  {%- set s = auto_cdc._parse_type(stored) -%}
  {%- set w = auto_cdc._parse_type(verdict.widen) -%}
  {%- set promotions = [('int', 'bigint'), ('integer', 'bigint'), ('float', 'double'), ('real', 'double')] -%}
  {%- if (s.name, w.name) in promotions
        or (s.name == w.name == 'decimal' and s.size is not none and w.size is not none and w.scale == s.scale) -%}
    {{ return(verdict) }}
  {%- endif -%}
  {{ return('incompatible') }}
{%- endmacro %}


{% macro spark__persist_target_docs(target) -%}
  {#- dbt-spark writes a table's comment only in its own CREATE TABLE, and column comments only
      when the model sets `file_format` (ours defaults to iceberg): both, here, as statements. -#}
  {%- set statements = [] -%}
  {%- if config.persist_relation_docs() and model.description -%}
    {%- do statements.append('comment on table ' ~ target ~ ' is ' ~ auto_cdc.string_literal(model.description)) -%}
  {%- endif -%}
  {%- if config.persist_column_docs() and model.columns -%}
    {%- set stored = adapter.get_columns_in_relation(target) | map(attribute='name') | map('lower') | list -%}
    {%- for name, column in model.columns.items() if name | lower in stored and column.description -%}
      {%- do statements.append('alter table ' ~ target ~ ' alter column ' ~ auto_cdc.quote_identifier(name)
          ~ ' comment ' ~ auto_cdc.string_literal(column.description)) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do auto_cdc.run_statements(statements) -%}
{%- endmacro %}


{% macro spark__contract_definitions() -%}
  {#- Spark's CREATE TABLE takes no constraint but NOT NULL, which Iceberg enforces (a required
      field: a write of a NULL fails). dbt-spark renders every constraint as DDL Spark rejects
      and calls not_null unenforced; here not_null is a column's NOT NULL, and the others are
      declared only: a warning names each, as dbt-spark's does. -#}
  {%- set columns = [] -%}
  {%- set unenforced = [] -%}
  {%- for column in model['columns'].values() -%}
    {%- set name = auto_cdc.quote_identifier(column.name) if column.get('quote') else column.name -%}
    {%- set constraints = column.get('constraints') or [] -%}
    {%- set not_null = constraints | selectattr('type', 'equalto', 'not_null') | list -%}
    {%- do columns.append(name ~ ' ' ~ column.data_type ~ (' not null' if not_null else '')) -%}
    {%- for constraint in constraints if constraint.type != 'not_null' -%}
      {%- do unenforced.append(constraint.type ~ ' on ' ~ column.name) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for constraint in model['constraints'] or [] -%}
    {%- do unenforced.append(constraint.type ~ (' on ' ~ constraint.columns | join(', ') if constraint.get('columns') else '')) -%}
  {%- endfor -%}
  {%- if unenforced -%}
    {%- do auto_cdc.model_warning(model.name, "the contract's " ~ unenforced | join('; ') ~ " constraint(s) are declared, not enforced:"
        ~ " on Spark with Iceberg tables only not_null is (the target's columns are created NOT NULL).") -%}
  {%- endif -%}
  {{ return({'columns': columns, 'constraints': []}) }}
{%- endmacro %}
