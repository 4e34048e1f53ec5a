{#- Debezium, the order of events, per connector. In: the connector and its landed source
    fields. Out: which source fields order its events (read by spec.sql and forms.sql), and
    `_dbz_sequence`, one value that orders them: PostgreSQL's source.sequence (the last commit)
    and LSN, MySQL's binlog file, position and row, SQL Server's commit LSN, change LSN and
    event serial number (docs/debezium.md says why). Its text functions are dispatched: the
    default is PostgreSQL's, DuckDB's is in adapters/duckdb.sql. -#}

{% macro _debezium_connectors() -%}
  {#- The source fields that order each connector's events, in order (docs/debezium.md). -#}
  {{ return({
      'postgresql': ['sequence', 'lsn'],
      'mysql': ['file', 'pos', 'row'],
      'sqlserver': ['commit_lsn', 'change_lsn', 'event_serial_no'],
  }) }}
{%- endmacro %}


{% macro _debezium_sequence_sql(spec) -%}
  {#- One value that orders the connector's events (docs/debezium.md, which says why):
      PostgreSQL: where the commit before the event's transaction ends, then the event's LSN
      (Debezium's `source.sequence`), as one decimal(38,0): an LSN is below 10^19.
      MySQL: the binlog file's number, the position, the row in the event, as one decimal(38,0).
      SQL Server: commit LSN, change LSN, event serial number, as fixed-width text. -#}
  {%- if spec.connector == 'postgresql' -%}
    {#- The first element is NULL in snapshot rows and in the first transaction streamed after
        the snapshot: the event's own LSN stands in (a snapshot row sits at its consistent point). -#}
    {%- set last_commit = auto_cdc.debezium_element_sql(auto_cdc.debezium_json_sql('dbz_sequence'), 0) -%}
    {{ return('cast(cast(coalesce(' ~ last_commit ~ ', dbz_lsn) as decimal(38,0)) * 10000000000000000000'
              ~ ' + cast(dbz_lsn as decimal(38,0)) as decimal(38,0))') }}
  {%- elif spec.connector == 'mysql' -%}
    {{ return('cast(cast(' ~ auto_cdc.debezium_trailing_number_sql('dbz_file') ~ ' as decimal(38,0)) * 1000000000000000000000000'
              ~ ' + cast(dbz_pos as decimal(38,0)) * 1000000 + coalesce(cast(dbz_row as decimal(38,0)), 0) as decimal(38,0))') }}
  {%- else -%}
    {{ return("lower(replace(coalesce(dbz_commit_lsn, '00000000:00000000:0000'), ':', ''))"
              ~ " || lower(replace(coalesce(dbz_change_lsn, '00000000:00000000:0000'), ':', ''))"
              ~ " || lpad(coalesce(dbz_event_serial_no, '0'), 10, '0')") }}
  {%- endif -%}
{%- endmacro %}


{% macro debezium_trailing_number_sql(text) -%}
  {{ return(adapter.dispatch('debezium_trailing_number_sql', 'auto_cdc')(text)) }}
{%- endmacro %}

{% macro default__debezium_trailing_number_sql(text) -%}
  {#- The number a text ends in (MySQL's binlog file mysql-bin.000003: 3). -#}
  {{ return("substring(" ~ text ~ " from '([0-9]+)$')") }}
{%- endmacro %}
