{#- Stage 5, tables (existing ones follow the source). In: `cfg`, the batch's columns, the model's
    tables. Out: the statements that append new source columns (or nothing: ignored, or an
    error: on_schema_change) and widen widened types in every table that holds the column's
    values, any other type change an error; the columns appended, those the run does not
    write (on_schema_change='ignore'), and each table's columns as those statements leave them. -#}

{% macro read_columns(cfg, batch, target, cdc_tables) -%}
  {#- The batch's (snapshots') columns and, when `target` is given (a run that applies), those of
      each table reconciled_schema compares with them, in one lookup (columns_of): {'batch':
      columns, 'tables': [(kind, relation, columns)], the target first}. -#}
  {%- set tables = [] -%}
  {%- if target is not none -%}
    {%- do tables.append(('target', target)) -%}
    {#- SCD2 from snapshots stores no events: its state table holds no column values. -#}
    {%- for kind in ['state', 'runs', 'versions'] if (kind != 'versions' or cfg.snapshot) and (kind != 'state' or not cfg.history_from_open_rows) -%}
      {%- do tables.append((kind, cdc_tables[kind])) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set relations = [batch] -%}
  {%- for kind, relation in tables -%}{%- do relations.append(relation) -%}{%- endfor -%}
  {%- set found = auto_cdc.columns_of(relations) -%}
  {%- set looked_up = [] -%}
  {%- for kind, relation in tables -%}{%- do looked_up.append((kind, relation, found[loop.index])) -%}{%- endfor -%}
  {{ return({'batch': found[0], 'tables': looked_up}) }}
{%- endmacro %}


{% macro reconciled_schema(cfg, tables, batch_columns, cdc_tables) -%}
  {#- on_schema_change: a written column the target does not have yet is appended, ignored, or
      fails the run. Columns the source no longer returns stay in the target: updates keep
      their values, inserts leave them NULL. A column whose type widened is widened wherever
      its values are kept. `tables`: read_columns' tables (target first); `batch_columns`: the
      batch's (snapshots') columns; `cdc_tables`: the model's state relations (state_relations);
      Returns {'appended': [...], 'ignored': [...], 'tables': {kind: columns}, 'statements': [...]}:
      the columns this run appends, the new columns it does not write
      (on_schema_change='ignore'), the columns ({name, data_type}) of the target and the state
      tables as the statements leave them (kind: target, state, runs, versions), for the stages
      that build on them before anything is written, and the ALTER statements. -#}
  {%- set kind, target, target_columns = tables[0] -%}
  {%- set target_names = target_columns | map(attribute='name') | map('lower') | list -%}
  {%- set built_as = '1' if '__start_at' not in target_names else ('bitemporal' if '__system_start_at' in target_names else '2') -%}
  {%- if built_as != cfg.scd_type -%}
    {%- do auto_cdc.model_error(cfg.model_name, "`stored_as_scd_type` changed to " ~ cfg.scd_type
        ~ " since " ~ target ~ " was built; nothing was written. Rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- set target_spellings = target_columns | map(attribute='name') | list -%}
  {%- for key in cfg.key_columns -%}
    {%- if auto_cdc.column_named(key, target_spellings) is none -%}
      {%- do auto_cdc.model_error(cfg.model_name, "key column '" ~ key
          ~ "' is not in the existing table " ~ target ~ "; nothing was written. The keys changed: rebuild with `dbt run --full-refresh -s "
          ~ cfg.model_name ~ "`.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set new_columns = [] -%}
  {%- for column in cfg.value_columns -%}
    {%- if auto_cdc.column_named(column, target_spellings) is none -%}{%- do new_columns.append(column) -%}{%- endif -%}
  {%- endfor -%}
  {%- do auto_cdc.warn_unwritten_columns(cfg, target, target_columns, new_columns) -%}

  {#- Types first, on the columns the tables already have. -#}
  {%- set types = auto_cdc.reconciled_column_types(cfg, tables, batch_columns) -%}
  {%- set after = types.tables -%}
  {%- set change = {'appended': [], 'ignored': [], 'tables': after,
                    'statements': types.statements + auto_cdc.runs_table_upgrade(cdc_tables.runs, after.runs)} -%}
  {%- if not new_columns -%}{{ return(change) }}{%- endif -%}
  {{ return(auto_cdc._reconcile_new_columns(cfg, target, new_columns, batch_columns, cdc_tables, change)) }}
{%- endmacro %}


{% macro _reconcile_new_columns(cfg, target, new_columns, batch_columns, cdc_tables, change) -%}
  {#- reconciled_schema, for written columns the target lacks: on_schema_change says. -#}
  {%- set after = change.tables -%}
  {%- if cfg.on_schema_change == 'fail' -%}
    {%- do auto_cdc.model_error(cfg.model_name, "the model query has new column(s) "
        ~ (new_columns | join(', ')) ~ " that " ~ target ~ " lacks, and on_schema_change='fail'; nothing was written. "
        ~ "Set on_schema_change='append_new_columns' or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- elif cfg.on_schema_change == 'append_new_columns' -%}
    {%- set additions = [] -%}
    {%- for column in batch_columns -%}
      {%- if column.name in new_columns -%}{%- do additions.append({'name': column.name, 'data_type': column.data_type}) -%}{%- endif -%}
    {%- endfor -%}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": adding column(s) " ~ (new_columns | join(', ')) ~ " to " ~ target
               ~ " (NULL in the rows already there, until an event or snapshot writes them)", info=true) -%}
    {%- do change.statements.extend(auto_cdc.add_columns_sql(target, additions)) -%}
    {%- do after.target.extend(additions) -%}
    {%- if cfg.scd_type != '1' and not cfg.history_from_open_rows -%}
      {#- The stored events never carried the new column: NULL, and marked as not known. -#}
      {%- set known = [] -%}
      {%- for column in new_columns -%}
        {%- do known.append({'name': auto_cdc.event_known(column), 'data_type': dbt.type_boolean()}) -%}
      {%- endfor -%}
      {%- do change.statements.extend(auto_cdc.add_columns_sql(cdc_tables.state, additions + known)) -%}
      {%- do after.state.extend(additions + known) -%}
    {%- endif -%}
    {%- do change.update({'appended': new_columns}) -%}
  {%- else -%}
    {#- 'ignore': the run writes only the columns the target has. -#}
    {%- do change.update({'ignored': new_columns}) -%}
  {%- endif -%}
  {{ return(change) }}
{%- endmacro %}


{% macro runs_table_upgrade(runs, columns) -%}
  {#- A run history built by an earlier version of the package gains the columns added since
      (runs_added_columns), NULL in its earlier rows. `columns`: its columns, extended in place
      to what the returned statements leave. -#}
  {%- set names = columns | map(attribute='name') | map('lower') | list -%}
  {%- set missing = auto_cdc.runs_added_columns() | rejectattr('name', 'in', names) | list -%}
  {%- do columns.extend(missing) -%}
  {{ return(auto_cdc.add_columns_sql(runs, missing)) }}
{%- endmacro %}


{% macro warn_unwritten_columns(cfg, target, target_columns, new_columns) -%}
  {#- A target column the model no longer writes (the query stopped returning it, or a column list
      left it out) keeps the values last written, and rows inserted from now on have NULL in it:
      named in every run until the table is consistent again, since a renamed column looks
      just like this (the old one frozen, the new one NULL where nothing wrote it yet). -#}
  {%- set written = cfg.written_columns | map('lower') | list + ['__start_at', '__end_at', '__system_start_at', '__system_end_at'] -%}
  {%- set unwritten = [] -%}
  {%- for column in target_columns -%}
    {%- if column.name | lower not in written -%}{%- do unwritten.append(column.name) -%}{%- endif -%}
  {%- endfor -%}
  {%- if unwritten -%}{%- do auto_cdc._warn_unwritten(cfg, target, unwritten, new_columns) -%}{%- endif -%}
{%- endmacro %}


{% macro _warn_unwritten(cfg, target, unwritten, new_columns) -%}
  {%- set appended = new_columns and cfg.on_schema_change == 'append_new_columns' -%}
  {%- set rebuild = "`dbt run --full-refresh -s " ~ cfg.model_name ~ "` with the query returning the new name ("
      ~ ("it starts again from the current snapshot" if cfg.snapshot else "from the whole model query") ~ "), after which nothing is left to rename" -%}
  {%- set rename = "`dbt run-operation auto_cdc.rename_column --args '{model: " ~ cfg.model_name ~ ", old: <old name>, new: <new name>}'`" -%}
  {#- rename_column renames in place only while the target lacks the new name (docs/configuration.md, "Renaming a column"). -#}
  {%- do auto_cdc.model_warning(cfg.model_name, target ~ " has column(s) " ~ (unwritten | join(', '))
      ~ " that the model no longer writes (the query does not return them, or a column list leaves them out): they keep the"
      ~ " values last written, and rows inserted from now on (SCD2: new versions too) have NULL there."
      ~ (" The new column(s) " ~ (new_columns | join(', ')) ~ " are NULL in the rows already there that no event of this run writes." if appended else '')
      ~ " A renamed column? "
      ~ ("If its new name is among those this run appended, the two are split now (" ~ rename ~ " renames only before the new name"
         ~ " is appended): join them with " ~ rebuild ~ "." if appended
         else "While " ~ target ~ " lacks its new name, rename it in the model's tables with " ~ rename ~ ", then run the model;"
         ~ " once a run has appended the new name, join the two with " ~ rebuild ~ " instead.")
      ~ " No longer needed? Drop it from " ~ target ~ ".") -%}
{%- endmacro %}


{% macro held_columns(cfg, kind) -%}
  {#- For one of the model's tables (`kind`: target, state, runs, versions), which of its columns
      hold which source column's values: {its column (lower case): source column}. -#}
  {%- set n = cfg.seq_parts -%}
  {%- set sequence = ['__cdc_version'] if cfg.snapshot else auto_cdc.seq_names('__cdc_seq', n) -%}
  {%- set holds = {} -%}
  {%- set sequence_prefixes = [] -%}
  {%- if kind == 'target' -%}
    {%- for column in cfg.written_columns -%}{%- do holds.update({column | lower: column}) -%}{%- endfor -%}
    {%- if cfg.scd_type != '1' and n == 1 -%}
      {%- do holds.update({'__start_at': sequence[0], '__end_at': sequence[0]}) -%}
    {%- endif -%}
    {%- if cfg.system_expr -%}{%- do holds.update({'__system_start_at': '__cdc_sys', '__system_end_at': '__cdc_sys'}) -%}{%- endif -%}
  {%- elif kind == 'state' -%}
    {%- for column in cfg.key_columns + (cfg.value_columns if cfg.scd_type != '1' else []) -%}
      {%- do holds.update({column | lower: column}) -%}
    {%- endfor -%}
    {%- if cfg.scd_type == '1' -%}
      {%- set sequence_prefixes = ['__cdc_upsert_seq', '__cdc_delete_seq'] -%}
      {%- for column in cfg.value_columns -%}{%- do sequence_prefixes.append(auto_cdc.column_seq_prefix(column)) -%}{%- endfor -%}
    {%- else -%}
      {%- set sequence_prefixes = ['__cdc_seq'] -%}
      {%- if cfg.system_expr -%}{%- do holds.update({'__cdc_sys': '__cdc_sys'}) -%}{%- endif -%}
    {%- endif -%}
  {%- elif kind == 'runs' -%}
    {%- set sequence_prefixes = ['truncate_seq'] -%}
  {%- elif kind == 'versions' -%}
    {%- do holds.update({'version': '__cdc_version'}) -%}
    {%- for column in cfg.replace_using -%}{%- do holds.update({column | lower: column}) -%}{%- endfor -%}
  {%- endif -%}
  {%- for prefix in sequence_prefixes -%}
    {%- for name in auto_cdc.seq_names(prefix, n) -%}{%- do holds.update({name: sequence[loop.index0]}) -%}{%- endfor -%}
  {%- endfor -%}
  {{ return(holds) }}
{%- endmacro %}


{% macro reconciled_column_types(cfg, tables, batch_columns) -%}
  {#- `tables`: a list of (kind, relation, its columns). `batch_columns`: the batch's (or
      snapshots') columns. Widens what must widen; fails, naming the column and both types,
      when a type cannot take the new one. Returns {'tables': {kind: its columns as {name,
      data_type}, widened types in place}, 'statements': the ALTER statements}. -#}
  {%- set incoming = {} -%}
  {%- for column in batch_columns -%}{%- do incoming.update({column.name | lower: column}) -%}{%- endfor -%}
  {%- set statements = [] -%}
  {%- set sequence_widened = [] -%}
  {%- set incompatible = {} -%}
  {%- set after = {} -%}
  {%- for kind, relation, columns in tables -%}
    {%- set holds = auto_cdc.held_columns(cfg, kind) -%}
    {%- set kept = auto_cdc.plain_columns(columns) -%}
    {%- for column in columns -%}
      {%- if column.name | lower in holds -%}
        {%- set source_name = holds[column.name | lower] -%}
        {%- set new = incoming.get(source_name | lower) -%}
        {%- set verdict = 'fits' if new is none else auto_cdc.type_change(column.data_type, new.data_type) -%}
        {%- set label = auto_cdc._source_label(cfg, source_name) -%}
        {%- if verdict == 'incompatible' -%}
          {#- One error per column and type, naming every table that holds it. -#}
          {%- set found = incompatible.setdefault(label ~ '|' ~ column.data_type, {'label': label, 'new': new, 'stored': column, 'tables': []}) -%}
          {%- do found.tables.append(relation | string) -%}
        {%- elif verdict != 'fits' -%}
          {%- do statements.append(auto_cdc.alter_column_type_sql(relation, column.name, verdict.widen)) -%}
          {%- do kept[loop.index0].update({'data_type': verdict.widen}) -%}
          {%- do log("auto_cdc: " ~ cfg.model_name ~ ": widening " ~ relation ~ "." ~ column.name ~ " from " ~ column.data_type
                     ~ " to " ~ verdict.widen ~ " (" ~ label ~ " widened)", info=true) -%}
          {%- if source_name.startswith('__cdc_') -%}{%- do sequence_widened.append(label) -%}{%- endif -%}
        {%- endif -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do after.update({kind: kept}) -%}
  {%- endfor -%}
  {#- SCD2 with a `sequence_by` list holds the whole sequence in __START_AT/__END_AT. -#}
  {%- set unwidenable = sequence_widened if cfg.scd_type != '1' and cfg.seq_parts > 1 else [] -%}
  {%- if incompatible or unwidenable -%}{%- do auto_cdc._fail_type_changes(cfg, incompatible, unwidenable) -%}{%- endif -%}
  {{ return({'tables': after, 'statements': statements}) }}
{%- endmacro %}


{% macro _fail_type_changes(cfg, incompatible, unwidenable) -%}
  {#- reconciled_column_types, for types the stored tables cannot follow. -#}
  {%- set errors = [] -%}
  {%- for found in incompatible.values() -%}
    {%- set stored_type = auto_cdc.type_label(found.stored) -%}
    {%- do errors.append(found.label ~ " is now of type " ~ auto_cdc.type_label(found.new) ~ ", but " ~ (found.tables | join(' and '))
        ~ (" hold " if found.tables | length > 1 else " holds ") ~ stored_type ~ ", which cannot take it without converting or losing values."
        ~ " Cast it back in the model query (`cast(... as " ~ stored_type ~ ")`), or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- endfor -%}
  {%- if unwidenable -%}
    {%- do errors.append(unwidenable[0] ~ " widened; with a `sequence_by` list, __START_AT and __END_AT hold the whole sequence in one value"
        ~ " that cannot be widened in place. Cast it back in the model query, or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- do auto_cdc.model_error(cfg.model_name, "a column's type changed in a way the stored tables cannot follow;"
      ~ " nothing was written.\n  - " ~ (errors | join('\n  - '))) -%}
{%- endmacro %}


{% macro plain_columns(columns) -%}
  {#- dbt Column objects as {name, data_type}, the form the stages pass columns around in (and
      change, to say what the run's writes will make of them). -#}
  {%- set plain = [] -%}
  {%- for column in columns -%}{%- do plain.append({'name': column.name, 'data_type': column.data_type}) -%}{%- endfor -%}
  {{ return(plain) }}
{%- endmacro %}
