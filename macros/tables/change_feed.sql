{#- Stage 5, tables: the change feed `<model>__cdc_changes` of a target (change_feed=true). In:
    `cfg`, the target, the model's tables as found, the run mode and the last run. Out: the
    change feed's frame for this run (none when off): its relation, this run's id; and the
    statements that record the rows of an old target as deletes before a full refresh drops
    it, then create the change feed or make it follow the target's columns and types. Its rows
    are written in stage 7 (record/change_feed.sql). -#}

{% macro change_feed_relation(target) -%}
  {#- Next to the target, named after it like its state and run history. -#}
  {{ return(target.incorporate(path={'identifier': auto_cdc.derived_name(target.identifier, '__cdc_changes')}, type='table')) }}
{%- endmacro %}


{% macro opened_change_feed(cfg, target, existing, mode, last_run, now) -%}
  {#- Before the tables stage, which drops the old target on a full refresh: its rows are
      recorded as deletes first (at `now`, the run's clock), so consumers of the change feed see
      the rebuild as a delete of every old row and an insert of every new one. `existing`:
      existing_relations() of the model's tables. Returns {'feed', 'statements'}: the frame
      {relation, existed, run_id, columns, ...} (none when off; `columns`: the change feed's
      columns as the statements leave it) and those statements. -#}
  {%- set statements = [] -%}
  {%- if not cfg.change_feed -%}{{ return({'feed': none, 'statements': statements}) }}{%- endif -%}
  {%- set relation = auto_cdc.change_feed_relation(target) -%}
  {%- set found = auto_cdc.existing_relations([relation])[0] -%}
  {%- if found is not none and (mode == 'create' or existing.target is none or not existing.target.is_table) -%}
    {%- do auto_cdc._fail_orphaned_change_feed(relation, target) -%}
  {%- endif -%}
  {%- if auto_cdc.is_empty_run() -%}
    {%- if found is none and mode != 'create' -%}{%- do auto_cdc._warn_change_feed_starts(relation, target) -%}{%- endif -%}
    {{ return({'feed': {'relation': relation, 'existed': found is not none, 'run_id': none, 'columns': []}, 'statements': statements}) }}
  {%- endif -%}

  {#- A change feed that missed changes (dropped, or off in the last run) skips one run id: a
      consumer that read it before then sees a run it cannot account for and fails (changes()). -#}
  {%- set was_off = last_run is not none and last_run.config is not none and last_run.config.get('change_feed') is sameas false -%}
  {%- set missed = (found is none and mode != 'create' and existing.target is not none) or (found is not none and was_off) -%}
  {%- if missed and found is none -%}
    {%- do auto_cdc._warn_change_feed_starts(relation, target) -%}
  {%- elif missed -%}
    {%- do auto_cdc.model_warning(model.name, "`change_feed` was off in the last run, so " ~ relation
        ~ " lacks the changes made since it was turned off; it records again from this run on."
        ~ " Consumers that read it before fail until rebuilt with `--full-refresh`.") -%}
  {%- endif -%}
  {%- set recorded = auto_cdc.named_row(['run_id', 'unrecorded_rows'], run_query(auto_cdc.last_recorded_run_sql(existing.runs, found)).rows[0]) -%}
  {%- set run_id = recorded.run_id | int + 1 + (1 if missed else 0) -%}
  {#- Rows of a run that was not recorded: only where there are no transactions, after a run
      stopped between its change feed write and its run history row (spark__change_feed_statements). -#}
  {%- set unrecorded = recorded.unrecorded_rows | int > 0 -%}

  {%- set columns = [] if found is none else auto_cdc.plain_columns(adapter.get_columns_in_relation(found)) -%}
  {%- if mode == 'rebuild' and found is not none -%}
    {%- if unrecorded -%}
      {%- do statements.append('delete from ' ~ relation ~ ' where _run_id > ' ~ recorded.run_id) -%}
      {%- set unrecorded = false -%}
    {%- endif -%}
    {%- set old_target = auto_cdc.plain_columns(adapter.get_columns_in_relation(existing.target)) -%}
    {%- set followed = auto_cdc.change_feed_following(relation, columns, existing.target, old_target) -%}
    {%- set columns = followed.columns -%}
    {%- set old_names = old_target | map(attribute='name') | list -%}
    {%- do statements.extend(followed.statements) -%}
    {%- do statements.append(auto_cdc.record_replaced_rows_sql(relation, existing.target, old_names, auto_cdc.columns_rows_lack(columns, old_names), run_id, now)) -%}
  {%- endif -%}
  {{ return({'feed': {'relation': relation, 'existed': found is not none, 'run_id': run_id, 'columns': columns,
                      'recorded_run_id': recorded.run_id | int, 'unrecorded': unrecorded},
             'statements': statements}) }}
{%- endmacro %}


{% macro existing_change_feed(feed) -%}
  {#- [the change feed's relation] when it existed before the run (the fence notes it), else []. -#}
  {{ return([feed.relation] if feed is not none and feed.existed else []) }}
{%- endmacro %}


{% macro last_recorded_run_sql(runs, feed) -%}
  {#- The last run id recorded, and how many change feed rows carry a later one. Run ids never
      go backwards: a full refresh rebuilds the run history, whose ids would start again at 1,
      while the change feed keeps the ids consumers have read. A change is recorded once its
      run is in the run history (recorded_changes_sql). `runs`, `feed`: the relations, or none
      where missing. -#}
  with recorded as (
    select coalesce(max(run_id), 0) as run_id
    from (
      {%- if runs is not none %}
      select max(run_id) as run_id from {{ runs }}
      {%- endif %}
      {%- if runs is not none and feed is not none %}
      union all
      {%- endif %}
      {%- if feed is not none %}
      select max(_run_id) as run_id from {{ auto_cdc.recorded_changes_sql(feed, runs) }} as changes
      {%- endif %}
      {%- if runs is none and feed is none %}
      select cast(null as {{ dbt.type_bigint() }}) as run_id
      {%- endif %}
    ) as ids
  )
  select r.run_id,
         {%- if feed is not none %}
         (select count(*) from {{ feed }} where _run_id > r.run_id) as unrecorded_rows
         {%- else %}
         0 as unrecorded_rows
         {%- endif %}
  from recorded as r
{%- endmacro %}


{% macro prepared_change_feed(feed, target, target_columns) -%}
  {#- After the tables stage: the change feed created (typed after the target), or, when it
      exists, given the target's new columns and widened types (not on `--empty`, which changes
      nothing that exists). `target_columns`: the target's columns as the run's writes leave
      them. Returns {'feed', 'statements'}: the frame with the target's column names, which
      every change row carries, and as `absent` the change feed's other columns
      (columns_rows_lack: NULL in its rows); and the statements that create or alter it. -#}
  {%- set names = target_columns | map(attribute='name') | list -%}
  {%- set absent = [] -%}
  {%- set statements = [] -%}
  {%- if not feed.existed -%}
    {%- do statements.extend([
        auto_cdc.create_change_feed_sql(feed.relation, target),
        auto_cdc.key_index_sql(feed.relation, ['_run_id'], unique=false),
    ]) -%}
  {%- elif not auto_cdc.is_empty_run() -%}
    {%- set followed = auto_cdc.change_feed_following(feed.relation, feed.columns, target, target_columns) -%}
    {%- do statements.extend(followed.statements) -%}
    {%- set absent = auto_cdc.columns_rows_lack(followed.columns, names) -%}
  {%- else -%}
    {%- set names = [] -%}
  {%- endif -%}
  {%- set prepared = {'columns': names, 'absent': absent} -%}
  {%- for name, value in feed.items() if name not in prepared -%}{%- do prepared.update({name: value}) -%}{%- endfor -%}
  {{ return({'feed': prepared, 'statements': statements}) }}
{%- endmacro %}


{% macro columns_rows_lack(feed_columns, names) -%}
  {#- The change feed's columns (`feed_columns`, {name, data_type}) that rows of a table with the
      columns `names` lack: those of earlier targets (a column dropped, or renamed by a rebuild).
      A change row has NULL there, named in its INSERT: Spark's takes no column list that leaves
      a column of an Iceberg table out. Returns them as {name, data_type}. -#}
  {%- set have = names | map('lower') | list + ['_change_type', '_run_id', '_committed_at'] -%}
  {%- set lacking = [] -%}
  {%- for column in feed_columns if column.name | lower not in have -%}{%- do lacking.append(column) -%}{%- endfor -%}
  {{ return(lacking) }}
{%- endmacro %}


{% macro create_change_feed_sql(feed, target) -%}
  {#- The target's columns, then what each change adds. No constraints: a delete's row is the
      row as it was. -#}
  create table {{ feed }} {{ auto_cdc.table_options() }} as
  select t.*,
         cast(null as {{ dbt.type_string() }}) as _change_type,
         cast(0 as {{ dbt.type_bigint() }}) as _run_id,
         {{ dbt.current_timestamp() }} as _committed_at
  from {{ target }} as t
  where 1 = 0
{%- endmacro %}


{% macro change_feed_following(feed, feed_columns, table, columns) -%}
  {#- The change feed keeps every column `table` (the target) has (`columns`, {name, data_type},
      as the run's writes leave it), as followed_columns says. `feed_columns`: the change feed's
      columns before. Returns {'columns', 'statements'}: the change feed's columns after, and
      the statements that make them so. -#}
  {{ return(auto_cdc.followed_columns(feed, feed_columns, columns,
      table ~ ".{column} is now of type {type}, but its change feed " ~ feed ~ " holds {stored}, which cannot take it; nothing was written."
      ~ " Cast it back in the model query, or rename or drop " ~ feed ~ " (its consumers then need `--full-refresh`).")) }}
{%- endmacro %}


{% macro followed_columns(relation, stored_columns, columns, incompatible) -%}
  {#- A table that keeps every column of `columns` ({name, data_type}) as they come, as the
      target does: a new one is appended (NULL in older rows), a widened type is widened; a
      column `columns` no longer has stays (NULL in new rows). `stored_columns`: its columns
      before; `incompatible`: the error for a type it cannot take ('{column}', '{type}' and
      '{stored}' filled in), raised before anything is written. Returns {'columns': its columns
      after, 'statements': those that make them so}. -#}
  {%- set kept = {} -%}
  {%- for column in stored_columns -%}{%- do kept.update({column.name | lower: column}) -%}{%- endfor -%}
  {%- set after = auto_cdc.plain_columns(stored_columns) -%}
  {%- set additions = [] -%}
  {%- set statements = [] -%}
  {%- for column in columns -%}
    {%- set stored = kept.get(column.name | lower) -%}
    {%- if stored is none -%}
      {%- do additions.append({'name': column.name, 'data_type': column.data_type}) -%}
    {%- else -%}
      {%- set verdict = auto_cdc.type_change(stored.data_type, column.data_type) -%}
      {%- if verdict == 'incompatible' -%}
        {%- do auto_cdc.model_error(model.name, incompatible | replace('{column}', column.name) | replace('{type}', column.data_type)
                                                | replace('{stored}', stored.data_type)) -%}
      {%- elif verdict != 'fits' -%}
        {%- do statements.append(auto_cdc.alter_column_type_sql(relation, stored.name, verdict.widen)) -%}
        {%- for kept_column in after if kept_column.name == stored.name -%}{%- do kept_column.update({'data_type': verdict.widen}) -%}{%- endfor -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if additions -%}
    {%- do log("auto_cdc: " ~ model.name ~ ": adding column(s) " ~ (additions | map(attribute='name') | join(', ')) ~ " to " ~ relation, info=true) -%}
  {%- endif -%}
  {{ return({'columns': after + additions, 'statements': auto_cdc.add_columns_sql(relation, additions) + statements}) }}
{%- endmacro %}


{% macro _warn_change_feed_starts(feed, target) -%}
  {#- The target is intact, so the run goes on: the change feed starts now. -#}
  {%- do auto_cdc.model_warning(model.name, "`change_feed` is on and " ~ target ~ " exists, but " ~ feed
      ~ " does not: creating it; it records the changes of this run on (earlier changes are not in it)."
      ~ " Consumers that read an earlier change feed of this model fail until rebuilt with `--full-refresh`.") -%}
{%- endmacro %}


{% macro _fail_orphaned_change_feed(feed, target) -%}
  {#- The target is gone but its change feed is not: consumers hold changes of rows no one will
      ever delete, and a new target would be recorded as inserts on top of them. -#}
  {%- do auto_cdc.model_error(model.name, "its change feed " ~ feed ~ " exists, but " ~ target
      ~ " and its state do not; nothing was written. Consumers of the change feed hold rows of the old target, which a new one would"
      ~ " silently add to. Restore the model's tables, or drop " ~ feed ~ " and rebuild its consumers with `--full-refresh`.") -%}
{%- endmacro %}
