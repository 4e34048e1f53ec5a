{#- Stage 8, record, with on_bad_rows='quarantine' (SPEC 6.7). In: the rows this run set aside
    (batch/bad_rows.sql). Out: those rows in <model>__cdc_quarantine, as the model query returned
    them, with their reason, run id and time; a warning that counts them and names the table. -#}

{% macro quarantine_statements(run, batch_columns) -%}
  {#- The writes that keep this run's bad rows, collected with the run's other writes (a run
      that fails keeps none). A row the table holds already (every column the same: a run that
      read it again, without a checkpoint or at the checkpoint's value) is not added twice.
      `batch_columns`: the batch's columns, whose source columns the table keeps. -#}
  {%- set cfg = run.cfg -%}
  {%- set count = run.shape.n_quarantined -%}
  {%- if not cfg.quarantine or (count == 0 and not run.full_refresh) -%}{{ return([]) }}{%- endif -%}
  {%- set table = run.quarantine -%}
  {%- set existing = adapter.get_relation(database=table.database, schema=table.schema, identifier=table.identifier) -%}
  {%- if run.full_refresh and existing is not none -%}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": --full-refresh keeps " ~ table ~ ", the rows earlier runs set aside (drop it to empty it)", info=true) -%}
  {%- endif -%}
  {%- if count == 0 -%}{{ return([]) }}{%- endif -%}
  {%- set source = [] -%}
  {%- for column in auto_cdc.plain_columns(batch_columns) if column.name in cfg.source_columns -%}{%- do source.append(column) -%}{%- endfor -%}
  {%- set statements = [] -%}
  {%- if existing is none -%}
    {%- do statements.append(auto_cdc._create_quarantine_sql(run, table)) -%}
  {%- else -%}
    {#- A column the model query returns now and the table lacks is appended (NULL in older rows). -#}
    {%- set have = adapter.get_columns_in_relation(table) | map(attribute='name') | map('lower') | list -%}
    {%- set added = [] -%}
    {%- for column in source if column.name | lower not in have -%}{%- do added.append(column) -%}{%- endfor -%}
    {%- do statements.extend(auto_cdc.add_columns_sql(table, added)) -%}
  {%- endif -%}
  {%- set names = source | map(attribute='name') | list -%}
  {%- set insert -%}
    insert into {{ table }} ({{ auto_cdc.quoted_list(names) }}, _cdc_reason, _cdc_run_id, _cdc_quarantined_at)
    select {{ auto_cdc.quoted_list(names, 'b.') }}, b.__cdc_reason, {{ auto_cdc.run_id_sql(run) }}, {{ run.now }}
    from {{ run.bad }} as b
    where not exists (
      select 1 from {{ table }} as q
      where {% for name in names %}not ({{ auto_cdc.comparable(cfg, name, 'q.') }} is distinct from {{ auto_cdc.comparable(cfg, name, 'b.') }}){{ ' and ' if not loop.last }}{% endfor %}
    )
  {%- endset -%}
  {%- do statements.append(insert) -%}
  {%- do auto_cdc._warn_quarantined(run, table) -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro _create_quarantine_sql(run, table) -%}
  {#- The model query's columns as the batch has them, then why, in which run and when. -#}
  create table {{ table }} {{ auto_cdc.table_options() }} as
  select {{ auto_cdc.quoted_list(run.cfg.source_columns, 'b.') }},
         b.__cdc_reason as _cdc_reason,
         cast(0 as {{ dbt.type_bigint() }}) as _cdc_run_id,
         {{ run.now }} as _cdc_quarantined_at
  from {{ run.bad }} as b
  where 1 = 0
{%- endmacro %}


{% macro _warn_quarantined(run, table) -%}
  {%- set query -%}
    select __cdc_reason, count(*) from {{ run.bad }} group by __cdc_reason order by __cdc_reason
  {%- endset -%}
  {%- set reasons = [] -%}
  {%- for row in run_query(query).rows -%}{%- do reasons.append(row[1] ~ ' ' ~ row[0]) -%}{%- endfor -%}
  {%- do auto_cdc.model_warning(run.cfg.model_name, run.shape.n_quarantined ~ " row(s) of this run were set aside in " ~ table
      ~ " (" ~ reasons | join(', ') ~ "), and the rest applied as if they had never arrived (on_bad_rows='quarantine')."
      ~ " Fix them in the source: a fixed row delivered again is a new event.") -%}
{%- endmacro %}
