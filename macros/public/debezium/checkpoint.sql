{#- Debezium, what a run reads of the landed table. In: the spec, the model's checkpoint_column
    and its run history. Out: a bound on the landed rows ({condition, truncates, marker}), or
    none to read them all. A run applies the rows at or above its checkpoint, but a moved row's
    lookup and a truncate's deletes need older events, and the materialization's filter cannot
    reach the landed table through them. So when `checkpoint_column` is one of `extra_columns`,
    debezium() asks the new rows first (one query, bounded by the checkpoint) whether they hold a
    create with a placeholder, a truncate or a row without a checkpoint; only then does it read
    every row. Otherwise it reads the new rows alone, up to the highest checkpoint that query saw
    (a row landing after it is the next run's), and for truncates='as_deletes' the older
    truncates, which a late event before them must still follow (found first by their op and
    checkpoint alone, then read by their checkpoint values). The SQL carries a marker with
    the checkpoint it read from; the materialization checks it against its own (read_batch.sql),
    so a bound that no longer holds fails the run instead of skipping events. -#}

{% macro _debezium_bound(spec) -%}
  {#- The bound of this run's read (the file's comment says when there is one), or none. -#}
  {%- set checkpoint = auto_cdc._debezium_checkpoint(spec) -%}
  {%- if checkpoint is none -%}{{ return(none) }}{%- endif -%}
  {%- set column = 'landed.' ~ auto_cdc.quote_identifier(checkpoint.column) -%}
  {%- set low = 'cast(' ~ auto_cdc.string_literal(checkpoint.value) ~ ' as ' ~ checkpoint.data_type ~ ')' -%}
  {%- set new_rows = auto_cdc._debezium_new_rows(spec, checkpoint.column, column ~ ' >= ' ~ low ~ ' or ' ~ column ~ ' is null') -%}
  {%- if new_rows.needs_older -%}
    {%- do log("auto_cdc.debezium(" ~ spec.relation ~ "): reads the whole landed table: the rows from checkpoint "
               ~ checkpoint.value ~ " hold " ~ new_rows.needs_older, info=false) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set high = low if new_rows.highest is none
                 else 'cast(' ~ auto_cdc.string_literal(new_rows.highest) ~ ' as ' ~ checkpoint.data_type ~ ')' -%}
  {{ return({
      'condition': column ~ ' >= ' ~ low ~ ' and ' ~ column ~ ' <= ' ~ high,
      'truncates': auto_cdc._debezium_earlier_truncates(spec, checkpoint, column, column ~ ' < ' ~ low)
                   if spec.truncates == 'as_deletes' else none,
      'marker': auto_cdc.debezium_bound_marker(checkpoint.column, checkpoint.value),
  }) }}
{%- endmacro %}


{% macro _debezium_earlier_truncates(spec, checkpoint, column, older) -%}
  {#- The landed rows of the truncates below the checkpoint (`older`), as a condition: their
      checkpoint values, which lets the read skip every other file or page; or `older` itself
      past 100 of them; or none when there are none. Only the op and checkpoint are read here. -#}
  {%- set query -%}
    select distinct cast({{ auto_cdc.quote_identifier(checkpoint.column) }} as {{ dbt.type_string() }})
    from ({{ auto_cdc._debezium_landed_sql(spec, {'condition': older}) }}) as landed
    where dbz_op = 't'
    limit 101
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if not rows -%}{{ return(none) }}{%- endif -%}
  {%- if rows | length > 100 -%}{{ return(older) }}{%- endif -%}
  {%- set literals = [] -%}
  {%- for row in rows -%}
    {%- do literals.append('cast(' ~ auto_cdc.string_literal(row[0]) ~ ' as ' ~ checkpoint.data_type ~ ')') -%}
  {%- endfor -%}
  {{ return(column ~ ' in (' ~ literals | join(', ') ~ ')') }}
{%- endmacro %}


{% macro _debezium_checkpoint(spec) -%}
  {#- {column, data_type, value}: the checkpoint this run of the model applies from, when it
      applies from one and the landed table carries it; else none (parsing, a full refresh, the
      first run, a model with flows or of snapshots). -#}
  {%- set name = auto_cdc._config_value('checkpoint_column') -%}
  {%- set matching = [] -%}
  {%- for extra in spec.extra_columns if name is string and extra | lower == name | lower -%}{%- do matching.append(extra) -%}{%- endfor -%}
  {%- if not execute or not matching or config.get('materialized') != 'auto_cdc'
        or 'auto_cdc.flow' in (model.raw_code or '') or should_full_refresh() -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set runs = auto_cdc.existing_relations([auto_cdc.state_relations(this).runs])[0] -%}
  {%- set last_run = auto_cdc.read_last_run(runs) if runs is not none else none -%}
  {#- The materialization applies from the recorded checkpoint only for the same column, spelled the same. -#}
  {%- if last_run is none or last_run.checkpoint_value is none or last_run.checkpoint_column != matching[0] -%}
    {{ return(none) }}
  {%- endif -%}
  {#- Its type, from a probe of the landed column (no rows are read), as the model query's is. -#}
  {%- set probed = auto_cdc.query_columns('select ' ~ auto_cdc.quote_identifier(matching[0]) ~ ' from '
                                          ~ auto_cdc.aliased_relation(spec.relation, 'landed'), auto_cdc.temp_relations(this).probe) -%}
  {{ return({'column': probed.columns[0].name, 'data_type': probed.columns[0].data_type, 'value': last_run.checkpoint_value}) }}
{%- endmacro %}


{% macro _debezium_new_rows(spec, checkpoint_column, condition) -%}
  {#- What the landed rows under `condition` hold that a bounded read cannot apply
      (`needs_older`: text naming it, or none), and their highest checkpoint (text). -#}
  {%- set values = spec.columns | rejectattr('is_key') | list if spec.unavailable_values else [] -%}
  {%- set query -%}
    with dbz_landed as (
      {{ auto_cdc._debezium_landed_sql(spec, {'condition': condition}) }}
    )
    select
      {%- if values %}
      sum(case when dbz_op = 'c' and {{ auto_cdc._debezium_written_sql(spec) }} is not null then 1 else 0 end),
      {%- else %}
      0,
      {%- endif %}
      sum(case when dbz_op = 't' then 1 else 0 end),
      sum(case when {{ auto_cdc.quote_identifier(checkpoint_column) }} is null then 1 else 0 end),
      cast(max({{ auto_cdc.quote_identifier(checkpoint_column) }}) as {{ dbt.type_string() }})
    from dbz_landed
  {%- endset -%}
  {%- set row = run_query(query).rows[0] -%}
  {%- set held = [] -%}
  {%- if row[0] -%}{%- do held.append('a primary-key change with a placeholder') -%}{%- endif -%}
  {%- if row[1] and spec.truncates == 'as_deletes' -%}{%- do held.append('a truncate') -%}{%- endif -%}
  {%- if row[2] -%}{%- do held.append('rows without a checkpoint') -%}{%- endif -%}
  {{ return({'needs_older': held | join(', ') or none, 'highest': row[3]}) }}
{%- endmacro %}


{% macro debezium_bound_marker(column=none, value=none) -%}
  {#- The comment a bounded debezium() query carries: the checkpoint it read the landed table
      from (without arguments, how every such comment starts). -#}
  {%- set prefix = '/* auto_cdc.debezium read from checkpoint: ' -%}
  {{ return(prefix if column is none else prefix ~ tojson([column | lower, value]) ~ ' */') }}
{%- endmacro %}


{% macro check_debezium_bounds(model_name, sql, checkpoint) -%}
  {#- Fails the run when a debezium() in the model query read the landed table from another
      checkpoint than the run applies from (`checkpoint`: [column, value], or none when it reads
      the whole query): the run history changed between compiling the model and running it. -#}
  {%- set found = (sql.split(auto_cdc.debezium_bound_marker()) | length) - 1 -%}
  {%- set expected = (sql.split(auto_cdc.debezium_bound_marker(checkpoint[0], checkpoint[1])) | length) - 1 if checkpoint else 0 -%}
  {%- if found and found != expected -%}
    {%- do auto_cdc.model_error(model_name, "auto_cdc.debezium() read the landed table from a checkpoint this run does not apply from ("
        ~ (('it applies from ' ~ checkpoint[0] ~ ' = ' ~ checkpoint[1]) if checkpoint else 'it reads the whole model query') ~ ")"
        ~ ": the model's run history changed between compiling the model and running it (another run of it, or a full refresh). Nothing was written; run it again.") -%}
  {%- endif -%}
{%- endmacro %}
