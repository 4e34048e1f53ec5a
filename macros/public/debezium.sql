{#- Public: a landed Debezium feed as the event rows auto_cdc expects (README, "From Debezium").
    In: the landed table (JSON envelopes, or Debezium's flattened ExtractNewRecordState form),
    the connector, the columns to take and their types. Out: a subquery, one row per change
    event: the columns, then `_dbz_op` (c, u, d, r, t), `_dbz_sequence` (the connector's order
    of events), `_dbz_columns` (the columns the event writes: NULL for every column, set when
    some arrived as the unavailable-value placeholder of an unchanged TOASTed column) and
    `_dbz_committed_at` (the source's commit time), then `extra_columns` as landed. Kafka
    tombstones (no value) carry nothing the delete before them did not and are left out. -#}

{% macro debezium(relation, columns=none, keys=none, connector='postgresql', form='envelope', envelope_column=none,
                  extra_columns=[], truncates=none, unavailable_values=none) -%}
  {%- set spec = auto_cdc._debezium_spec(relation, columns, keys, connector, form, envelope_column, extra_columns,
                                         truncates, unavailable_values) -%}
  {%- set landed = auto_cdc._debezium_landed_sql(spec) -%}
(
  with dbz_landed as (
    {{ landed }}
  ),
  dbz_decoded as (
    select
      {%- for column in spec.columns %}
      {{ auto_cdc._debezium_value_sql(spec, column, loop.index) }} as {{ auto_cdc.quote_identifier(column.name) }},
      {%- endfor %}
      dbz_op as _dbz_op,
      {{ auto_cdc._debezium_sequence_sql(spec) }} as _dbz_sequence,
      {{ auto_cdc._debezium_written_sql(spec) }} as _dbz_columns,
      {{ auto_cdc.debezium_epoch_sql('dbz_ts_ms', 'epoch_millis') }} as _dbz_committed_at
      {%- for name in spec.extra_columns %},
      {{ auto_cdc.quote_identifier(name) }}
      {%- endfor %}
    from dbz_landed
    where dbz_op is not null
  ),
  {{ auto_cdc._debezium_moved_rows_sql(spec) }}
  {%- if spec.truncates == 'apply' %}
  select * from dbz_events
  {%- else %}
  {{ auto_cdc._debezium_truncates_as_deletes_sql(spec) }}
  {%- endif %}
) as debezium_events
{%- endmacro %}


{% macro _debezium_connectors() -%}
  {#- The source fields that order each connector's events, in order (README, "From Debezium"). -#}
  {{ return({
      'postgresql': ['sequence', 'lsn'],
      'mysql': ['file', 'pos', 'row'],
      'sqlserver': ['commit_lsn', 'change_lsn', 'event_serial_no'],
  }) }}
{%- endmacro %}


{% macro _debezium_spec(relation, columns, keys, connector, form, envelope_column, extra_columns, truncates,
                        unavailable_values) -%}
  {#- The arguments, checked and resolved: every problem at once, before any SQL is built. -#}
  {%- set problems = [] -%}
  {%- if 'debezium' in auto_cdc.capabilities().untested_features -%}
    {%- do problems.append("is not supported on " ~ adapter.type() ~ " yet (it is not tested there)") -%}
  {%- endif -%}
  {%- set keys = keys if keys is not none else auto_cdc._config_value('keys') -%}
  {%- set keys = [keys] if keys is string else (keys or []) -%}
  {%- if not keys -%}
    {%- do problems.append("needs the key columns: set the model's `keys` config or pass keys=[...]") -%}
  {%- endif -%}
  {%- if connector not in auto_cdc._debezium_connectors() -%}
    {%- do problems.append("has connector='" ~ connector ~ "'; use one of " ~ auto_cdc._debezium_connectors().keys() | list | join(', ')) -%}
  {%- endif -%}
  {%- if form not in ['envelope', 'flattened'] -%}
    {%- do problems.append("has form='" ~ form ~ "'; use 'envelope' (before/after/source/op as JSON) or 'flattened' (ExtractNewRecordState)") -%}
  {%- endif -%}
  {%- if form == 'flattened' and envelope_column -%}
    {%- do problems.append("has envelope_column with form='flattened': a flattened row has no envelope") -%}
  {%- endif -%}
  {%- set scd_type = auto_cdc._config_value('stored_as_scd_type', 1) | string | lower -%}
  {%- set truncates = truncates or ('apply' if scd_type == '1' else 'as_deletes') -%}
  {%- if truncates not in ['apply', 'as_deletes'] -%}
    {%- do problems.append("has truncates='" ~ truncates ~ "'; use 'apply' (rows for apply_as_truncates, SCD1) or 'as_deletes' (a delete of every key seen before the truncate)") -%}
  {%- endif -%}
  {%- set extra_columns = [extra_columns] if extra_columns is string else extra_columns -%}
  {%- set resolved = auto_cdc._debezium_columns(relation, columns, form, connector, keys, extra_columns, problems) -%}
  {%- for key in keys if key | lower not in resolved | map(attribute='name') | map('lower') | list -%}
    {%- do problems.append("has key '" ~ key ~ "' but no column of that name in columns=") -%}
  {%- endfor -%}
  {%- if problems and execute -%}
    {#- Parsing renders the model before its config is known: only a run checks. -#}
    {%- do auto_cdc.model_error(model.name, "auto_cdc.debezium(" ~ relation ~ ") " ~ problems | join('; ')
        ~ ". Example: auto_cdc.debezium(source('kafka', 'customers'), columns={'id': 'integer', 'name': 'text', 'updated_at': 'timestamp'})") -%}
  {%- endif -%}
  {%- set key_names = keys | map('lower') | list -%}
  {%- for column in resolved -%}
    {%- do column.update({'is_key': column.name | lower in key_names}) -%}
  {%- endfor -%}
  {{ return({
      'relation': relation,
      'connector': connector,
      'form': form,
      'envelope_column': envelope_column,
      'columns': resolved,
      'key_columns': resolved | selectattr('is_key') | list,
      'extra_columns': extra_columns,
      'truncates': truncates,
      'unavailable_values': unavailable_values if unavailable_values is not none
                            else ['__debezium_unavailable_value', 'X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=='],
  }) }}
{%- endmacro %}


{% macro _debezium_columns(relation, columns, form, connector, keys, extra_columns, problems) -%}
  {#- [{name, type, encoding}]: the columns to take and how their values are encoded. A flattened
      table without `columns` gives its own columns as they are (encoding none), but Debezium's
      `__` fields and the extra columns. -#}
  {%- set resolved = [] -%}
  {%- set landed_names = [] -%}
  {%- if form == 'flattened' and execute -%}
    {#- The landed table's column names (a relation or the name of a CTE): no rows are read. -#}
    {%- set landed_names = run_query('select * from ' ~ auto_cdc.aliased_relation(relation, 'landed') ~ ' limit 0').column_names | list -%}
    {%- set fields = auto_cdc._debezium_connectors().get(connector, []) -%}
    {%- set missing = [] -%}
    {%- for field in ['op'] + fields + ['source_ts_ms'] if '__' ~ field not in landed_names | map('lower') | list -%}
      {%- do missing.append('__' ~ field) -%}
    {%- endfor -%}
    {%- if missing -%}
      {%- do problems.append("reads a flattened table without " ~ missing | join(', ') ~ ": configure ExtractNewRecordState with add.fields="
          ~ (['op'] + fields + ['source.ts_ms']) | join(',') ~ " and delete.tombstone.handling.mode=rewrite") -%}
    {%- endif -%}
  {%- endif -%}
  {%- if columns is none and form == 'flattened' -%}
    {%- if execute -%}
      {%- for name in landed_names
            if not name.startswith('__') and name | lower not in extra_columns | map('lower') | list -%}
        {%- do resolved.append({'name': name, 'type': none, 'encoding': none}) -%}
      {%- endfor -%}
    {%- else -%}
      {%- for key in keys -%}{%- do resolved.append({'name': key, 'type': none, 'encoding': none}) -%}{%- endfor -%}
    {%- endif -%}
  {%- elif columns is mapping -%}
    {%- for name, given in columns.items() -%}
      {%- set type = given.type if given is mapping else given -%}
      {%- set encoding = given.encoding if given is mapping and given.encoding else auto_cdc._debezium_default_encoding(type | string) -%}
      {%- if encoding not in ['text', 'epoch_days', 'epoch_millis', 'epoch_micros'] -%}
        {%- do problems.append("gives column '" ~ name ~ "' encoding '" ~ encoding ~ "'; use 'text', 'epoch_days', 'epoch_millis' or 'epoch_micros'") -%}
      {%- endif -%}
      {%- do resolved.append({'name': name, 'type': type, 'encoding': encoding}) -%}
    {%- endfor -%}
  {%- else -%}
    {%- do problems.append("needs columns={name: type, ...}: the envelope's JSON has no types (a flattened table may leave it out)") -%}
  {%- endif -%}
  {{ return(resolved) }}
{%- endmacro %}


{% macro _debezium_default_encoding(type) -%}
  {#- How Debezium encodes a value of this SQL type by default (time.precision.mode=adaptive):
      a date as days since 1970-01-01, a timestamp without time zone as microseconds since
      1970-01-01 (PostgreSQL timestamp(4-6), MySQL datetime(4-6)); everything else as text
      (timestamptz as an ISO-8601 string, decimals with decimal.handling.mode=string). -#}
  {%- set type = type | lower | trim -%}
  {%- if type == 'date' -%}
    {{ return('epoch_days') }}
  {%- elif (type.startswith('timestamp') or type.startswith('datetime')) and 'with time zone' not in type
           and not type.startswith('timestamptz') -%}
    {{ return('epoch_micros') }}
  {%- endif -%}
  {{ return('text') }}
{%- endmacro %}


{% macro _debezium_landed_sql(spec) -%}
  {#- The landed rows, each value picked out once: the op, the source fields that order and
      time the event (`dbz_<field>`, text), each column's value in the `after` image
      (`dbz_after_<n>`, text; a flattened row's own column as it is) and, for keys, in the
      `before` image (`dbz_before_<n>`), then the extra columns. -#}
  {%- set fields = auto_cdc._debezium_connectors().get(spec.connector, []) + ['ts_ms'] -%}
  {%- if spec.form == 'flattened' -%}
  select
    cast(landed.__op as {{ dbt.type_string() }}) as dbz_op,
    {%- for field in fields %}
    cast(landed.{{ auto_cdc.quote_identifier('__source_ts_ms' if field == 'ts_ms' else '__' ~ field) }} as {{ dbt.type_string() }}) as dbz_{{ field }},
    {%- endfor %}
    {%- for column in spec.columns %}
    landed.{{ auto_cdc.quote_identifier(column.name) }} as dbz_after_{{ loop.index }}{{ ',' if not loop.last or spec.extra_columns }}
    {%- endfor %}
  {%- else -%}
    {%- if spec.envelope_column -%}
      {%- set value = auto_cdc.debezium_json_sql('landed.' ~ auto_cdc.quote_identifier(spec.envelope_column)) -%}
      {%- set payload = 'coalesce(' ~ auto_cdc.debezium_member_sql(value, 'payload') ~ ', ' ~ value ~ ')' -%}
      {%- set op = auto_cdc.debezium_field_sql(payload, 'op') -%}
      {%- set images = {'before': auto_cdc.debezium_member_sql(payload, 'before'),
                        'after': auto_cdc.debezium_member_sql(payload, 'after'),
                        'source': auto_cdc.debezium_member_sql(payload, 'source')} -%}
    {%- else -%}
      {%- set op = 'cast(landed.op as ' ~ dbt.type_string() ~ ')' -%}
      {%- set images = {'before': auto_cdc.debezium_json_sql('landed.before'), 'after': auto_cdc.debezium_json_sql('landed.after'),
                        'source': auto_cdc.debezium_json_sql('landed.source')} -%}
    {%- endif %}
  select
    {{ op }} as dbz_op,
    {%- for field in fields %}
    {{ auto_cdc.debezium_field_sql(images.source, field) }} as dbz_{{ field }},
    {%- endfor %}
    {%- for column in spec.columns %}
    {%- if column.is_key %}
    {{ auto_cdc.debezium_field_sql(images.before, column.name) }} as dbz_before_{{ loop.index }},
    {%- endif %}
    {{ auto_cdc.debezium_field_sql(images.after, column.name) }} as dbz_after_{{ loop.index }}{{ ',' if not loop.last or spec.extra_columns }}
    {%- endfor %}
  {%- endif %}
    {%- for name in spec.extra_columns %}
    landed.{{ auto_cdc.quote_identifier(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
  from {{ auto_cdc.aliased_relation(spec.relation, 'landed') }}
{%- endmacro %}


{% macro _debezium_unavailable_sql(spec, index) -%}
  {#- Is column `index` of an upsert the placeholder Debezium sends for an unchanged TOASTed value? -#}
  {{ return('cast(dbz_after_' ~ index ~ ' as ' ~ dbt.type_string() ~ ') in (' ~ auto_cdc.string_literals(spec.unavailable_values) ~ ')') }}
{%- endmacro %}


{% macro _debezium_value_sql(spec, column, index) -%}
  {#- A column of the event: keys from `before` in a delete (its `after` is empty), values from
      `after` in an upsert, none in a delete or truncate; the placeholder reads as NULL (and the
      column is left out of `_dbz_columns`). A flattened delete is its `before` image already. -#}
  {%- set after = 'dbz_after_' ~ index -%}
  {%- if column.is_key and spec.form == 'envelope' -%}
    {%- set raw = "case when dbz_op = 'd' then dbz_before_" ~ index ~ ' else ' ~ after ~ ' end' -%}
  {%- elif column.is_key -%}
    {%- set raw = after -%}
  {%- else -%}
    {%- set placeholder = ' and not ' ~ auto_cdc._debezium_unavailable_sql(spec, index) if spec.unavailable_values else '' -%}
    {%- set raw = "case when dbz_op in ('c', 'u', 'r')" ~ placeholder ~ ' then ' ~ after ~ ' end' -%}
  {%- endif -%}
  {{ return(auto_cdc.debezium_decode_sql(raw, column.type, column.encoding)) }}
{%- endmacro %}


{% macro _debezium_written_sql(spec) -%}
  {#- `_dbz_columns`: NULL (every column) unless an upsert has a placeholder; then every
      column but those, as a comma-separated list (what columns_to_update reads). -#}
  {%- set tests = [] -%}
  {%- set names = [] -%}
  {%- for column in spec.columns -%}
    {%- if column.is_key or not spec.unavailable_values -%}
      {%- do names.append(auto_cdc.string_literal(column.name)) -%}
    {%- else -%}
      {%- set test = auto_cdc._debezium_unavailable_sql(spec, loop.index) -%}
      {%- do tests.append(test) -%}
      {%- do names.append('case when ' ~ test ~ ' then null else ' ~ auto_cdc.string_literal(column.name) ~ ' end') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not tests -%}
    {{ return('cast(null as ' ~ dbt.type_string() ~ ')') }}
  {%- endif -%}
  {%- for name in ['_dbz_committed_at'] + spec.extra_columns -%}{%- do names.append(auto_cdc.string_literal(name)) -%}{%- endfor -%}
  {{ return("case when dbz_op in ('c', 'u', 'r') and (" ~ tests | join(' or ') ~ ") then concat_ws(',', " ~ names | join(', ') ~ ') end') }}
{%- endmacro %}


{% macro _debezium_moved_rows_sql(spec) -%}
  {#- CTEs ending in `dbz_events`. A primary-key change is a delete of the old key and a create of
      the new one at one LSN; under REPLICA IDENTITY DEFAULT the create carries the placeholder
      for every unchanged TOASTed column, whose value Debezium never read. It is the old key's:
      its latest event before the change that wrote the column, in the landed table. Until the
      delete and that event have landed (a sink may land another key's partition later), and
      when the landed table holds none, the run fails: NULL would lose the value silently, and
      the next run, reading from the same checkpoint, finds it once it has landed. -#}
  {%- set values = spec.columns | rejectattr('is_key') | list if spec.unavailable_values else [] -%}
  {%- set q = auto_cdc.quote_identifier -%}
  {%- if not values %}
  dbz_events as (select * from dbz_decoded)
  {%- else %}
  dbz_moved as (
    select
      {%- for column in spec.key_columns %}
      old.{{ q(column.name) }},
      {%- endfor %}
      moved._dbz_sequence
    from dbz_decoded as moved
    left join dbz_decoded as old on old._dbz_sequence = moved._dbz_sequence and old._dbz_op = 'd'
    where moved._dbz_op = 'c' and moved._dbz_columns is not null
    group by {% for column in spec.key_columns %}old.{{ q(column.name) }}, {% endfor %}moved._dbz_sequence
  ),
  dbz_moved_values as (
    select
      {%- for column in values %}
      {%- set writes = 'earlier._dbz_sequence is not null and ' ~ auto_cdc.column_is_listed("',' || lower(earlier._dbz_columns) || ','", column.name) %}
      (array_agg(earlier.{{ q(column.name) }} order by earlier._dbz_sequence desc) filter (where {{ writes }}))[1] as dbz_value_{{ loop.index }},
      count(*) filter (where {{ writes }}) > 0 as dbz_found_{{ loop.index }},
      {%- endfor %}
      moved._dbz_sequence
    from dbz_moved as moved
    left join dbz_decoded as earlier
      on {% for column in spec.key_columns %}earlier.{{ q(column.name) }} = moved.{{ q(column.name) }} and {% endfor -%}
         earlier._dbz_sequence < moved._dbz_sequence and earlier._dbz_op in ('c', 'u', 'r')
    group by moved._dbz_sequence
  ),
  dbz_events as (
    select
      {%- for column in spec.columns %}
      {%- if column.is_key or column not in values %}
      e.{{ q(column.name) }},
      {%- else %}
      {%- set index = values.index(column) + 1 %}
      case when moved._dbz_sequence is null or {{ auto_cdc.column_is_listed("',' || lower(e._dbz_columns) || ','", column.name) }} then e.{{ q(column.name) }}
           else moved.dbz_value_{{ index }} end as {{ q(column.name) }},
      {%- endif %}
      {%- endfor %}
      e._dbz_op,
      e._dbz_sequence,
      case when moved._dbz_sequence is null then e._dbz_columns
      {%- for column in values %}
           when not moved.dbz_found_{{ loop.index }} and not {{ auto_cdc.column_is_listed("',' || lower(e._dbz_columns) || ','", column.name) }} then {{ auto_cdc.debezium_error_sql(
               auto_cdc.string_literal("auto_cdc.debezium(" ~ spec.relation ~ "): a primary-key change (a delete and a create at _dbz_sequence ")
               ~ " || cast(e._dbz_sequence as " ~ dbt.type_string() ~ ") || "
               ~ auto_cdc.string_literal(") moved a row whose TOASTed column " ~ column.name ~ " Debezium did not send (REPLICA IDENTITY DEFAULT), and the landed table holds no earlier value of it under the old key: the old key's events have not landed yet (run again once they have) or are gone. ALTER TABLE ... REPLICA IDENTITY FULL on the source table makes Debezium send every value.")) }}
      {%- endfor %}
      end as _dbz_columns,
      e._dbz_committed_at
      {%- for name in spec.extra_columns %},
      e.{{ q(name) }}
      {%- endfor %}
    from dbz_decoded as e
    left join dbz_moved_values as moved on moved._dbz_sequence = e._dbz_sequence and e._dbz_op = 'c'
  )
  {%- endif %}
{%- endmacro %}


{% macro _debezium_sequence_sql(spec) -%}
  {#- One value that orders the connector's events (README, "From Debezium", which says why):
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


{% macro _debezium_truncates_as_deletes_sql(spec) -%}
  {#- SCD2 and bitemporal targets cannot apply a truncate: it becomes a delete, at its sequence,
      of every key with an event before it in the landed table (a key only seen after it is
      untouched). Each such delete carries the truncate's extra columns or, when later, the
      earliest of the key's events before it: with a checkpoint column it is read in the run that
      first knows both. -#}
  {%- set keys = [] -%}
  {%- for column in spec.key_columns -%}{%- do keys.append(auto_cdc.quote_identifier(column.name)) -%}{%- endfor -%}
  , dbz_truncates as (
    select * from dbz_events where _dbz_op = 't'
  ),
  dbz_truncated_keys as (
    select
      {%- for key in keys %}
      e.{{ key }},
      {%- endfor %}
      t._dbz_sequence,
      t._dbz_committed_at
      {%- for name in spec.extra_columns -%}
      {%- set quoted = auto_cdc.quote_identifier(name) %},
      greatest(t.{{ quoted }}, min(e.{{ quoted }})) as {{ quoted }}
      {%- endfor %}
    from dbz_events as e
    inner join dbz_truncates as t on e._dbz_sequence < t._dbz_sequence
    where e._dbz_op <> 't'
    group by {% for key in keys %}e.{{ key }}, {% endfor %}t._dbz_sequence, t._dbz_committed_at
      {%- for name in spec.extra_columns %}, t.{{ auto_cdc.quote_identifier(name) }}{% endfor %}
  )
  select * from dbz_events where _dbz_op <> 't'
  union all
  select
    {%- for column in spec.columns %}
    {{ 'k.' ~ auto_cdc.quote_identifier(column.name) if column.is_key else 'null' }},
    {%- endfor %}
    'd',
    k._dbz_sequence,
    null,
    k._dbz_committed_at
    {%- for name in spec.extra_columns %},
    k.{{ auto_cdc.quote_identifier(name) }}
    {%- endfor %}
  from dbz_truncated_keys as k
{%- endmacro %}


{#- The dialect: JSON access, epoch decoding. The default is PostgreSQL's (jsonb); DuckDB's
    variants are in adapters/duckdb.sql. -#}

{% macro debezium_json_sql(expr) -%}
  {{ return(adapter.dispatch('debezium_json_sql', 'auto_cdc')(expr)) }}
{%- endmacro %}

{% macro default__debezium_json_sql(expr) -%}
  {#- A json, jsonb or text column as jsonb (a no-op for jsonb). -#}
  {{ return('cast(' ~ expr ~ ' as jsonb)') }}
{%- endmacro %}


{% macro debezium_member_sql(doc, key) -%}
  {{ return(adapter.dispatch('debezium_member_sql', 'auto_cdc')(doc, key)) }}
{%- endmacro %}

{% macro default__debezium_member_sql(doc, key) -%}
  {#- A member of a JSON object, as JSON; NULL when absent. -#}
  {{ return(doc ~ ' -> ' ~ auto_cdc.string_literal(key)) }}
{%- endmacro %}


{% macro debezium_field_sql(doc, key) -%}
  {{ return(adapter.dispatch('debezium_field_sql', 'auto_cdc')(doc, key)) }}
{%- endmacro %}

{% macro default__debezium_field_sql(doc, key) -%}
  {#- A member of a JSON object, as text (a string unquoted); NULL when absent or JSON null. -#}
  {{ return('(' ~ doc ~ ' ->> ' ~ auto_cdc.string_literal(key) ~ ')') }}
{%- endmacro %}


{% macro debezium_element_sql(doc, index) -%}
  {{ return(adapter.dispatch('debezium_element_sql', 'auto_cdc')(doc, index)) }}
{%- endmacro %}

{% macro default__debezium_element_sql(doc, index) -%}
  {{ return('(' ~ doc ~ ' ->> ' ~ index ~ ')') }}
{%- endmacro %}


{% macro debezium_trailing_number_sql(text) -%}
  {{ return(adapter.dispatch('debezium_trailing_number_sql', 'auto_cdc')(text)) }}
{%- endmacro %}

{% macro default__debezium_trailing_number_sql(text) -%}
  {#- The number a text ends in (MySQL's binlog file mysql-bin.000003: 3). -#}
  {{ return("substring(" ~ text ~ " from '([0-9]+)$')") }}
{%- endmacro %}


{% macro debezium_decode_sql(raw, type, encoding) -%}
  {#- A value as Debezium encodes it (text) decoded to `type`. -#}
  {%- if encoding == 'epoch_days' -%}
    {%- set value = "(date '1970-01-01' + cast(" ~ raw ~ " as integer))" -%}
  {%- elif encoding in ['epoch_millis', 'epoch_micros'] -%}
    {%- set value = auto_cdc.debezium_epoch_sql(raw, encoding) -%}
  {%- else -%}
    {%- set value = raw -%}
  {%- endif -%}
  {{ return('cast(' ~ value ~ ' as ' ~ type ~ ')' if type else value) }}
{%- endmacro %}


{% macro debezium_error_sql(message) -%}
  {{ return(adapter.dispatch('debezium_error_sql', 'auto_cdc')(message)) }}
{%- endmacro %}

{% macro default__debezium_error_sql(message) -%}
  {#- Text that fails the query when evaluated, with `message` (SQL) in the error: PostgreSQL's
      SQL has no raise; a failed cast quotes its input. -#}
  {{ return('cast(cast(' ~ message ~ ' as integer) as ' ~ dbt.type_string() ~ ')') }}
{%- endmacro %}


{% macro debezium_epoch_sql(raw, unit) -%}
  {{ return(adapter.dispatch('debezium_epoch_sql', 'auto_cdc')(raw, unit)) }}
{%- endmacro %}

{% macro default__debezium_epoch_sql(raw, unit) -%}
  {#- Milli- or microseconds since 1970-01-01 as a timestamp, exactly (integer arithmetic). -#}
  {{ return("(timestamp '1970-01-01 00:00:00' + cast(" ~ raw ~ " as bigint) * interval '"
            ~ ('1 millisecond' if unit == 'epoch_millis' else '1 microsecond') ~ "')") }}
{%- endmacro %}
