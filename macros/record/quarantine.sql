{#- Stage 8, record, with on_bad_rows='quarantine' (SPEC 6.7). In: the rows this run set aside
    (batch/bad_rows.sql). Out: those rows in <model>__cdc_quarantine, as the model query returned
    them (a snapshot's with their version), with their reason, run id and time; the warning
    that counts them and names the table, given once the writes are applied. -#}

{% macro quarantine_statements(run, batch_columns) -%}
  {#- {'statements': the writes that keep this run's bad rows, collected with the run's other
      writes (a run that fails keeps none), 'warning': none or its text}. A row the table holds
      already (every column the same: a run that read it again, without a checkpoint or at the
      checkpoint's value) is not added twice. The table follows the model query's columns as
      the target does: a new one is appended, a widened type widened; one the query no longer
      returns stays (NULL in new rows); a type it cannot take fails the run before any write.
      `batch_columns`: the batch's (snapshots') columns. -#}
  {%- set cfg = run.cfg -%}
  {%- set count = run.shape.n_quarantined -%}
  {%- set none_kept = {'statements': [], 'warning': none} -%}
  {%- if not cfg.quarantine or (count == 0 and not run.full_refresh) -%}{{ return(none_kept) }}{%- endif -%}
  {%- set table = run.quarantine -%}
  {%- set existing = auto_cdc.existing_relations([table])[0] -%}
  {%- if run.full_refresh and existing is not none -%}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": --full-refresh keeps " ~ table ~ ", the rows earlier runs set aside (drop it to empty it)", info=true) -%}
  {%- endif -%}
  {%- if count == 0 -%}{{ return(none_kept) }}{%- endif -%}
  {%- set kept = auto_cdc._quarantined_columns(cfg, batch_columns) -%}
  {%- set statements = [] -%}
  {%- set columns = kept -%}
  {%- if existing is none -%}
    {%- do statements.append(auto_cdc._create_quarantine_sql(run, table, kept)) -%}
  {%- else -%}
    {%- set followed = auto_cdc._quarantine_following(cfg, table, kept) -%}
    {%- do statements.extend(followed.statements) -%}
    {%- set columns = followed.columns -%}
  {%- endif -%}
  {%- set values = [] -%}
  {%- set same = [] -%}
  {%- for column in columns -%}
    {%- set source = [] -%}
    {%- for candidate in kept if candidate.name | lower == column.name | lower -%}{%- do source.append(candidate) -%}{%- endfor -%}
    {%- set source = source | first -%}
    {%- if source -%}
      {%- set value = 'b.' ~ auto_cdc.quote_identifier(source.read_as) -%}
      {%- do values.append(value) -%}
      {%- do same.append('not (' ~ auto_cdc.compared(cfg, source.name, 'q.' ~ auto_cdc.quote_identifier(source.name))
                         ~ ' is distinct from ' ~ auto_cdc.compared(cfg, source.name, value) ~ ')') -%}
    {%- else -%}
      {%- do values.append('cast(null as ' ~ column.data_type ~ ')') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set insert -%}
    insert into {{ table }} ({{ auto_cdc.quoted_list(columns | map(attribute='name') | list) }}, _cdc_reason, _cdc_run_id, _cdc_quarantined_at)
    select {{ values | join(', ') }}, b.__cdc_reason, {{ auto_cdc.run_id_sql(run) }}, {{ run.now }}
    from {{ run.bad }} as b
    where not exists (select 1 from {{ table }} as q where {{ same | join(' and ') }})
  {%- endset -%}
  {%- do statements.append(insert) -%}
  {{ return({'statements': statements, 'warning': auto_cdc._quarantine_warning(run, table)}) }}
{%- endmacro %}


{% macro _quarantined_columns(cfg, batch_columns) -%}
  {#- What the table keeps of a bad row: [{name, data_type, read_as: the bad rows' column}]:
      the model query's columns (a model with flows: theirs), a snapshot's version as
      `_cdc_version`, and a flow's name as `_cdc_flow`. -#}
  {%- set kept = [] -%}
  {%- for column in auto_cdc.plain_columns(batch_columns) -%}
    {%- if column.name in cfg.source_columns -%}
      {%- do kept.append({'name': column.name, 'data_type': column.data_type, 'read_as': column.name}) -%}
    {%- elif cfg.snapshot and column.name == '__cdc_version' -%}
      {%- do kept.append({'name': '_cdc_version', 'data_type': column.data_type, 'read_as': '__cdc_version'}) -%}
    {%- elif cfg.flows and column.name == '__cdc_flow' -%}
      {%- do kept.append({'name': '_cdc_flow', 'data_type': column.data_type, 'read_as': '__cdc_flow'}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(kept) }}
{%- endmacro %}


{% macro _quarantine_following(cfg, table, kept) -%}
  {#- An existing quarantine table, following the columns this run keeps (followed_columns):
      {'columns': its columns but its own three, after the statements; 'statements'}. -#}
  {%- set own = ['_cdc_reason', '_cdc_run_id', '_cdc_quarantined_at'] -%}
  {%- set stored = [] -%}
  {%- for column in auto_cdc.plain_columns(adapter.get_columns_in_relation(table)) if column.name | lower not in own -%}
    {%- do stored.append(column) -%}
  {%- endfor -%}
  {{ return(auto_cdc.followed_columns(table, stored, kept, "column '{column}' is now of type {type}, but " ~ table
      ~ " holds it as {stored}, which cannot take it; nothing was written. Cast it back in the model query, or rename or drop "
      ~ table ~ " (the rows earlier runs set aside).")) }}
{%- endmacro %}


{% macro _create_quarantine_sql(run, table, kept) -%}
  {#- The kept columns as the batch has them, then why, in which run and when. -#}
  create table {{ table }} {{ auto_cdc.table_options() }} as
  select {% for column in kept %}b.{{ auto_cdc.quote_identifier(column.read_as) }} as {{ auto_cdc.quote_identifier(column.name) }}, {% endfor %}
         b.__cdc_reason as _cdc_reason,
         cast(0 as {{ dbt.type_bigint() }}) as _cdc_run_id,
         {{ run.now }} as _cdc_quarantined_at
  from {{ run.bad }} as b
  where 1 = 0
{%- endmacro %}


{% macro _quarantine_warning(run, table) -%}
  {#- The warning's text: how many rows, per reason, and where. -#}
  {%- set query -%}
    select __cdc_reason, count(*) from {{ run.bad }} group by __cdc_reason order by __cdc_reason
  {%- endset -%}
  {%- set reasons = [] -%}
  {%- for row in run_query(query).rows -%}{%- do reasons.append(row[1] ~ ' ' ~ row[0]) -%}{%- endfor -%}
  {{ return(run.shape.n_quarantined ~ " row(s) of this run were set aside in " ~ table
      ~ " (" ~ reasons | join(', ') ~ "), and the rest applied as if they had never arrived (on_bad_rows='quarantine')."
      ~ " Fix them in the source: a fixed row delivered again is a new event.") }}
{%- endmacro %}
