{#- The model query's columns, the checkpoint filter, and what a new source column does. -#}

{% macro query_columns(sql, probe) -%}
  {#- The model query's columns, from an empty temp table (no rows are read): `columns` (names
      and types), `names`, and `compared_as_text`: the columns whose type has no usable
      equality operator, so comparisons go through their text form. -#}
  {%- call statement('auto_cdc_probe') -%}
    {{ auto_cdc.create_temp_table(probe, 'select * from (' ~ sql ~ ') as src limit 0') }}
  {%- endcall -%}
  {%- set columns = adapter.get_columns_in_relation(probe) -%}
  {%- set compared_as_text = auto_cdc.columns_compared_as_text(probe) -%}
  {%- do adapter.drop_relation(probe) -%}
  {{ return({'columns': columns, 'names': columns | map(attribute='name') | list, 'compared_as_text': compared_as_text}) }}
{%- endmacro %}


{% macro columns_compared_as_text(relation) -%}
  {{ return(adapter.dispatch('columns_compared_as_text', 'auto_cdc')(relation)) }}
{%- endmacro %}

{% macro default__columns_compared_as_text(relation) -%}
  {#- Every DuckDB type has equality (its JSON is text). -#}
  {{ return({}) }}
{%- endmacro %}

{% macro postgres__columns_compared_as_text(relation) -%}
  {#- Types without an equality operator (json, xml, point, ...), the geometric types whose `=`
      compares areas or lengths (box, lseg), composite and extension types (whose `=` may be
      missing or loose), and arrays and domains of them: compared through their text form,
      which is exact for all of them. Returns {column: its type}. -#}
  {%- set found = run_query(
      "select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute as a
       join pg_type as t on t.oid = a.atttypid
       join pg_type as b on b.oid = case when t.typcategory = 'A' then t.typelem
                                         when t.typtype = 'd' then t.typbasetype else t.oid end
       where a.attrelid = " ~ auto_cdc.string_literal(relation | string) ~ "::regclass and a.attnum > 0 and not a.attisdropped
         and (b.typname in ('json', 'xml', 'point', 'line', 'lseg', 'box', 'path', 'polygon', 'circle')
              or b.typtype = 'c' or (b.typtype = 'b' and b.oid >= 16384))") -%}
  {%- set types = {} -%}
  {%- for row in found.rows -%}{%- do types.update({row[0]: row[1]}) -%}{%- endfor -%}
  {{ return(types) }}
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


{% macro checkpoint_filter(cfg, previous, source_columns) -%}
  {#- Only rows strictly above the highest checkpoint value already applied, and rows with no
      checkpoint value at all (a data error that validate_batch reports, instead of skipping
      them for ever). Without a stored value for this checkpoint column (first run, full
      refresh, column changed): read all. -#}
  {%- if not cfg.checkpoint_column or previous is none or previous.checkpoint_column != cfg.checkpoint_column
        or previous.checkpoint_value is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set data_type = (source_columns | selectattr('name', 'equalto', cfg.checkpoint_column) | first).data_type -%}
  {%- set column = 'src.' ~ auto_cdc.quote_identifier(cfg.checkpoint_column) -%}
  {{ return('(' ~ column ~ ' > cast(' ~ auto_cdc.string_literal(previous.checkpoint_value) ~ ' as ' ~ data_type ~ ') or '
            ~ column ~ ' is null)') }}
{%- endmacro %}


{% macro reconcile_schema(cfg, target, source_columns, state) -%}
  {#- on_schema_change: a written column the target does not have yet is appended, ignored, or
      fails the run. Columns the source no longer returns stay in the target: updates keep
      their values, inserts leave them NULL. A column whose type widened is widened wherever
      its values are kept. `source_columns`: the batch's (snapshots') columns; `state`: the
      model's state relations. Returns the configuration with the columns to write. -#}
  {%- set target_columns = adapter.get_columns_in_relation(target) -%}
  {%- set target_names = target_columns | map(attribute='name') | map('lower') | list -%}
  {%- set built_as = '1' if '__start_at' not in target_names else ('bitemporal' if '__system_start_at' in target_names else '2') -%}
  {%- if built_as != cfg.scd_type -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': `stored_as_scd_type` changed to " ~ cfg.scd_type
        ~ " since " ~ target ~ " was built; nothing was written. Rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- for key in cfg.key_columns -%}
    {%- if key | lower not in target_names -%}
      {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': key column '" ~ key
          ~ "' is not in the existing table " ~ target ~ "; nothing was written. The keys changed: rebuild with `dbt run --full-refresh -s "
          ~ cfg.model_name ~ "`.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set new_columns = [] -%}
  {%- for column in cfg.value_columns -%}
    {%- if column | lower not in target_names -%}{%- do new_columns.append(column) -%}{%- endif -%}
  {%- endfor -%}

  {#- Types first, on the columns the tables already have. -#}
  {%- set tables = [(target, target_columns, auto_cdc.held_columns(cfg, 'target'))] -%}
  {%- for kind in ['state', 'runs', 'versions'] if kind != 'versions' or cfg.snapshot -%}
    {%- set columns = adapter.get_columns_in_relation(state[kind]) -%}
    {%- do tables.append((state[kind], columns, auto_cdc.held_columns(cfg, kind))) -%}
  {%- endfor -%}
  {%- do auto_cdc.reconcile_column_types(cfg, tables, source_columns) -%}
  {%- if not new_columns -%}{{ return(cfg) }}{%- endif -%}

  {%- if cfg.on_schema_change == 'fail' -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': the model query has new column(s) "
        ~ (new_columns | join(', ')) ~ " that " ~ target ~ " lacks, and on_schema_change='fail'; nothing was written. "
        ~ "Set on_schema_change='append_new_columns' or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- elif cfg.on_schema_change == 'append_new_columns' -%}
    {%- set additions = [] -%}
    {%- for column in source_columns -%}
      {%- if column.name in new_columns -%}{%- do additions.append({'name': column.name, 'data_type': column.data_type}) -%}{%- endif -%}
    {%- endfor -%}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": adding column(s) " ~ (new_columns | join(', ')) ~ " to " ~ target, info=true) -%}
    {%- do auto_cdc.run_statements(auto_cdc.add_columns(target, additions)) -%}
    {%- if cfg.scd_type != '1' -%}
      {#- The stored events never carried the new column: NULL, and marked as not known. -#}
      {%- set known = [] -%}
      {%- for column in new_columns -%}
        {%- do known.append({'name': auto_cdc.event_known(column), 'data_type': dbt.type_boolean()}) -%}
      {%- endfor -%}
      {%- do auto_cdc.run_statements(auto_cdc.add_columns(state.state, additions + known)) -%}
    {%- endif -%}
    {{ return(cfg) }}
  {%- endif -%}

  {#- 'ignore': write only the columns the target has. -#}
  {%- set kept = [] -%}
  {%- for column in cfg.value_columns -%}{%- if column not in new_columns -%}{%- do kept.append(column) -%}{%- endif -%}{%- endfor -%}
  {%- set ignore_null_columns = cfg.ignore_null_columns | reject('in', new_columns) | list -%}
  {%- do cfg.update({'value_columns': kept, 'written_columns': cfg.key_columns + kept, 'ignore_null_columns': ignore_null_columns}) -%}
  {{ return(cfg) }}
{%- endmacro %}
