{#- Stage 4, validation of the batch. In: `cfg` and the batch. Out: the batch's shape, or a
    Database Error naming the bad rows (NULL keys, sequences or checkpoints, conflicting
    duplicates) before anything is written; a warning for a sequence that orders as text. -#}

{% macro batch_checks_sql(cfg, batch_relation, bad=none) -%}
  {#- One row: the batch's size and, per rule validate_batch enforces, how many events break it
      (and how many rows were set aside in `bad`, on_bad_rows='quarantine'). -#}
  {%- set keys = cfg.key_columns -%}
  {%- set seq_names = auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  select
    count(*) as n_events,
    coalesce(sum(case when __cdc_op = 'truncate' then 1 else 0 end), 0) as n_truncates,
    coalesce(sum(case when __cdc_op = 'delete' then 1 else 0 end), 0) as n_deletes
    {%- for key in keys %},
    coalesce(sum(case when __cdc_op <> 'truncate' and {{ auto_cdc.quote_identifier(key) }} is null then 1 else 0 end), 0) as null_key_{{ loop.index }}
    {%- endfor %},
    {#- No key and no value: what a truncate event looks like (Debezium's op 't'). #}
    coalesce(sum(case when __cdc_op <> 'truncate'
      {%- for column in cfg.written_columns %} and {{ auto_cdc.quote_identifier(column) }} is null{% endfor %} then 1 else 0 end), 0) as blank_events
    {%- for name in seq_names %},
    coalesce(sum(case when {{ name }} is null then 1 else 0 end), 0) as null_seq_{{ loop.index }}
    {%- endfor %}
    {%- if cfg.system_expr %},
    coalesce(sum(case when __cdc_sys is null then 1 else 0 end), 0) as null_sys
    {%- endif %}
    {%- if cfg.checkpoint_column %},
    coalesce(sum(case when {{ auto_cdc.quote_identifier(cfg.checkpoint_column) }} is null then 1 else 0 end), 0) as null_checkpoint
    {%- endif %},
    {#- Events that share a key and sequence: only then can two of them conflict. #}
    (select count(*) from (
      select distinct {{ auto_cdc.quoted_list(auto_cdc.event_identity(cfg)) }} from {{ batch_relation }} where __cdc_op <> 'truncate'
    ) as identities) as n_identities
    {%- if bad is not none %},
    (select count(*) from {{ bad }}) as n_quarantined
    {%- endif %}
  from {{ batch_relation }}
{%- endmacro %}


{% macro validate_batch(cfg, batch_relation, last_run=none, checks=none, set_aside=none) -%}
  {#- Bad data fails the run before anything is written. `checks`: the row of batch_checks_sql
      if read_batch read it with the batch (else read here). `set_aside`: with
      on_bad_rows='quarantine', the working tables of the rows read (`raw`) and set aside
      (`bad`). Returns the batch's shape (and, for a model with flows, what the run records of
      each). -#}
  {%- if cfg.flows -%}{%- do auto_cdc.check_read_versions(cfg, last_run) -%}{%- endif -%}
  {%- set flows = {} if not cfg.flows else auto_cdc.flow_records(cfg, batch_relation, last_run) if set_aside is none
                  else auto_cdc.flow_records(cfg, set_aside.raw, last_run, set_aside.bad) -%}
  {%- set keys = cfg.key_columns -%}
  {%- set row = checks if checks is not none else run_query(auto_cdc.batch_checks_sql(cfg, batch_relation)).rows[0] -%}
  {%- set errors = [] -%}
  {%- for key in keys -%}
    {%- if row['null_key_' ~ loop.index] > 0 -%}
      {%- do errors.append(row['null_key_' ~ loop.index] ~ " event(s) have a NULL in key column '" ~ key ~ "' (upserts and deletes need a key): filter them out or fix them in the model query."
          ~ (auto_cdc._truncate_hint(cfg, row['blank_events']) if loop.first else '')) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for label in cfg.sequence_labels -%}
    {%- if row['null_seq_' ~ loop.index] > 0 -%}
      {%- do errors.append(row['null_seq_' ~ loop.index] ~ " event(s) have a NULL sequence: `sequence_by` " ~ label ~ " is NULL; every event needs a sequence.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if cfg.system_expr and row['null_sys'] > 0 -%}
    {%- do errors.append(row['null_sys'] ~ " event(s) have a NULL system sequence: `system_sequence_by` " ~ cfg.system_expr ~ " is NULL; every event needs one.") -%}
  {%- endif -%}
  {%- if cfg.checkpoint_column and row['null_checkpoint'] > 0 -%}
    {%- do errors.append(row['null_checkpoint'] ~ " event(s) have a NULL `checkpoint_column` '" ~ cfg.checkpoint_column
        ~ "': each run reads only rows at or above the last checkpoint, so such rows would never be read again. Give every row a value in the model query, or filter these out.") -%}
  {%- endif -%}
  {%- if not errors and row['n_identities'] < row['n_events'] - row['n_truncates'] -%}
    {%- do errors.extend(auto_cdc.conflicting_events(cfg, batch_relation)) -%}
  {%- endif -%}
  {%- do auto_cdc.raise_bad_data(cfg.model_name, errors) -%}
  {{ return({'n_events': row['n_events'], 'n_truncates': row['n_truncates'], 'n_deletes': row['n_deletes'], 'n_identities': row['n_identities'],
             'n_quarantined': row['n_quarantined'] if cfg.quarantine else 0, 'flows': flows}) }}
{%- endmacro %}


{% macro raise_bad_data(model_name, errors, what='bad data') -%}
  {#- Bad data is the database's content, not the project's code: a Database Error, not a
      Compilation Error. -#}
  {%- if errors -%}
    {%- set message = "auto_cdc: model '" ~ model_name ~ "' received " ~ what ~ "; nothing was written.\n  - " ~ (errors | join('\n  - ')) -%}
    {%- do auto_cdc.raise_database_error(message) -%}
  {%- endif -%}
{%- endmacro %}


{% macro raise_database_error(message) -%}
  {#- dbt v2 (2.0.0-alpha.4) has no exceptions.raise_database_error: the database raises it. -#}
  {%- if auto_cdc.dbt_v2() -%}
    {%- do run_query(adapter.dispatch('failing_query_sql', 'auto_cdc')(message)) -%}
  {%- endif -%}
  {%- do exceptions.raise_database_error(message) -%}
{%- endmacro %}

{% macro default__failing_query_sql(message) -%}
  {%- do exceptions.raise_compiler_error(message) -%}
{%- endmacro %}


{% macro conflicting_events(cfg, batch_relation) -%}
  {#- Two events for one key and sequence (bitemporal: and system sequence) are one event when
      they agree on what the target and the state keep of them: their kind and, per written
      column, whether they write it and the value they write. Anything else (an ingestion
      time, a column left out of the target) may differ. A real conflict is named with how many
      keys and sequences have one, and the events of the first: what they hold where they differ. -#}
  {%- set identity = auto_cdc.quoted_list(auto_cdc.event_identity(cfg)) -%}
  {%- set query -%}
    with events as (
      {{ auto_cdc.distinct_events_sql(cfg, batch_relation) }}
    ),
    conflicts as (
      select {{ identity }} from events group by {{ identity }} having count(*) > 1
    ),
    first_conflict as (
      select * from conflicts order by {{ identity }} limit 1
    )
    select (select count(*) from conflicts) as __cdc_conflicts, e.*
    from first_conflict as c
    join events as e on {{ auto_cdc.keys_match(auto_cdc.event_identity(cfg), 'c', 'e') }}
    order by e.__cdc_op {%- for column in cfg.value_columns %}, e.__cdc_v{{ loop.index }} nulls first{% endfor %}
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if rows | length == 0 -%}{{ return([]) }}{%- endif -%}
  {%- set labels = cfg.key_columns + cfg.sequence_labels + (['system_sequence_by'] if cfg.system_expr else []) -%}
  {%- set example = [] -%}
  {%- for label in labels -%}{%- do example.append(label ~ '=' ~ rows[0][loop.index]) -%}{%- endfor -%}
  {#- Where the events differ: the kind, and per column its value or whether it is written. -#}
  {%- set differing = [] -%}
  {%- set shown = [] -%}
  {%- set ops = [] -%}
  {%- for row in rows if row['__cdc_op'] != rows[0]['__cdc_op'] -%}{%- do ops.append(row['__cdc_op']) -%}{%- endfor -%}
  {%- if ops -%}{%- do differing.append('the kind of event (upsert or delete)') -%}{%- endif -%}
  {%- for column in cfg.value_columns -%}
    {%- set i = loop.index -%}
    {%- set values = [] -%}
    {%- for row in rows -%}{%- do values.append((row['__cdc_v' ~ i] | string) ~ '|' ~ (row['__cdc_w' ~ i] if cfg.columns_to_update else '')) -%}{%- endfor -%}
    {%- if values | reject('equalto', values[0]) | list -%}{%- do differing.append(column) -%}{%- do shown.append((column, i)) -%}{%- endif -%}
  {%- endfor -%}
  {%- set events = [] -%}
  {%- for row in rows -%}
    {%- set parts = [] -%}
    {%- for column, i in shown if row['__cdc_op'] == 'upsert' -%}
      {%- set value = row['__cdc_v' ~ i] -%}
      {%- do parts.append(column ~ (' not written' if cfg.columns_to_update and row['__cdc_w' ~ i] == 0
                                    else '=' ~ ('NULL' if value is none else "'" ~ value ~ "'"))) -%}
    {%- endfor -%}
    {%- do events.append(row['__cdc_op'] ~ ((' ' ~ parts | join(', ')) if parts else '')) -%}
  {%- endfor -%}
  {%- set tie_breaker = cfg.checkpoint_column or '<load time or log offset>' -%}
  {{ return([rows[0]['__cdc_conflicts'] ~ " key(s) have two or more different events at the same sequence, so their order is undefined;"
      ~ " for example " ~ (example | join(', ')) ~ ": they differ in: " ~ (differing | join(', ')) ~ " (" ~ (events | join('; ')) ~ ")."
      ~ " Runs that read such events one at a time applied the later one (a redelivery replaces the event stored at its key and"
      ~ " sequence, with a warning); one run over both, as a full refresh is, cannot order them. If they are separate changes, add a"
      ~ " column that orders them to `sequence_by` (e.g. sequence_by=['" ~ (cfg.sequence_labels + [tie_breaker]) | join("', '")
      ~ "']); if one is a stale copy, filter it out in the model query. (Events that agree on everything the target keeps are one"
      ~ " event, whatever else differs.)"]) }}
{%- endmacro %}


{% macro distinct_events_sql(cfg, batch_relation, condition=none) -%}
  {#- The batch's events (but truncates) as what the target and the state keep of them:
      identity, kind and per value column what it writes, once each (`condition`: of the rows
      where it holds). Two rows of one identity here are a conflict. -#}
  select distinct {{ auto_cdc.quoted_list(auto_cdc.event_identity(cfg)) }}, __cdc_op
    {%- for column in cfg.value_columns %}
    {%- set writes = auto_cdc.writes_column(cfg, column) %},
    case when {{ writes }} then {{ auto_cdc.comparable(cfg, column) }} end as __cdc_v{{ loop.index }}
    {%- if cfg.columns_to_update %}, case when {{ writes }} then 1 else 0 end as __cdc_w{{ loop.index }}{% endif %}
    {%- endfor %}
  from {{ batch_relation }}
  where __cdc_op <> 'truncate'{% if condition %} and {{ condition }}{% endif %}
{%- endmacro %}


{% macro warn_text_sequence(cfg, batch_columns, batch, stored) -%}
  {#- Text orders character by character: '150' before '50', '9' after '10'. Text of one width
      (ISO-8601 timestamps, zero-padded numbers, SQL Server LSNs) orders correctly, so a run
      warns unless every value of its batch has one width, the width a stored sequence has.
      Checked so from the first run on, that stored width is every stored sequence's.
      `batch`: the batch (snapshots); `stored`: where a stored sequence is (stored_sequences), or none. -#}
  {%- set names = ['__cdc_version'] if cfg.snapshot else auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {#- dbt's is_string() misses Spark's `string`. -#}
  {%- for column in batch_columns if column.name in names and (column.is_string() or column.dtype | lower == 'string') -%}
    {%- do auto_cdc._warn_text_widths(cfg, column, names.index(column.name), batch, stored) -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _warn_text_widths(cfg, column, part, batch, stored) -%}
  {#- warn_text_sequence, for a sequence column of text (part number `part`). -#}
  {%- set widths = run_query(auto_cdc.text_widths_sql(cfg, column.name, part, batch, stored)).rows[0] -%}
  {%- set shortest, longest, stored_width = widths[0], widths[1], widths[2] -%}
  {%- if shortest is not none and (shortest != longest or (stored_width is not none and stored_width != shortest)) -%}
    {%- set seen = ("values of widths " ~ shortest ~ " to " ~ longest) if shortest != longest
                   else ("values of width " ~ shortest ~ ", the stored ones of width " ~ stored_width) -%}
    {%- do auto_cdc.model_warning(cfg.model_name, auto_cdc._source_label(cfg, column.name) ~ " is of type "
        ~ auto_cdc.type_label(column) ~ " and orders as text ('150' before '50', '9' after '10'), and this run has " ~ seen
        ~ ". If it holds numbers or timestamps, cast it ("
        ~ ("e.g. sequence_by='cast(... as bigint)'" if not cfg.snapshot else "e.g. cast(version as bigint)")
        ~ "); text of one fixed width (ISO-8601 timestamps, zero-padded numbers) orders correctly and is not warned about.") -%}
  {%- endif -%}
{%- endmacro %}


{% macro stored_sequences(cfg, last_run, cdc_tables, target) -%}
  {#- Where a stored sequence is, to compare its width with the batch's: {'relation', 'parts':
      SQL of each part}. The processed versions; an SCD1 state's last upsert or delete, or the
      target's `sequence_by` columns where they are kept there (state_layout); SCD2's events. -#}
  {%- set n = cfg.seq_parts -%}
  {%- if cfg.snapshot -%}
    {{ return({'relation': cdc_tables.versions, 'parts': ['version']}) }}
  {%- elif cfg.scd_type == '1' and auto_cdc.recorded_state_layout(last_run) == 'tombstones' -%}
    {%- set parts = [] -%}
    {%- for column in cfg.sequence_columns -%}{%- do parts.append(auto_cdc.quote_identifier(column)) -%}{%- endfor -%}
    {{ return({'relation': target, 'parts': parts}) }}
  {%- elif cfg.scd_type == '1' -%}
    {%- set parts = [] -%}
    {%- for upsert in auto_cdc.seq_names('__cdc_upsert_seq', n) -%}
      {%- do parts.append('coalesce(' ~ upsert ~ ', ' ~ auto_cdc.seq_names('__cdc_delete_seq', n)[loop.index0] ~ ')') -%}
    {%- endfor -%}
    {{ return({'relation': cdc_tables.state, 'parts': parts}) }}
  {%- endif -%}
  {{ return({'relation': cdc_tables.state, 'parts': auto_cdc.seq_names('__cdc_seq', n)}) }}
{%- endmacro %}


{% macro text_widths_sql(cfg, name, part, batch, stored) -%}
  {#- The shortest and longest value of a batch column, and the width of one stored sequence
      (`stored`: stored_sequences, or none). -#}
  {%- set stored_value = stored.parts[part] if stored is not none else none -%}
  select
    (select min(length({{ name }})) from {{ batch }}),
    (select max(length({{ name }})) from {{ batch }}),
    {%- if stored is none %}
    cast(null as integer)
    {%- else %}
    {#- Cast: a sequence that was not text before (a type change, failed later) has no length. #}
    (select length(cast({{ stored_value }} as {{ dbt.type_string() }})) from {{ stored.relation }} where {{ stored_value }} is not null limit 1)
    {%- endif %}
{%- endmacro %}


{% macro _source_label(cfg, source_name) -%}
  {#- How an error names a batch column: the model's column, or the config it comes from. -#}
  {%- set parts = auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {%- if source_name in parts -%}
    {{ return("`sequence_by` " ~ cfg.sequence_labels[parts.index(source_name)]) }}
  {%- elif source_name == '__cdc_version' -%}
    {{ return("the snapshot version") }}
  {%- elif source_name == '__cdc_sys' -%}
    {{ return("`system_sequence_by` " ~ cfg.system_expr) }}
  {%- endif -%}
  {{ return("column '" ~ source_name ~ "'") }}
{%- endmacro %}


{% macro _truncate_hint(cfg, blank_events) -%}
  {%- if blank_events == 0 -%}{{ return('') }}{%- endif -%}
  {%- set hint = " " ~ blank_events ~ " of them have no key and no value, as a truncate event has (Debezium's op 't'): " -%}
  {%- if cfg.scd_type == '1' -%}
    {{ return(hint ~ "if they are truncates, say so with `apply_as_truncates` (e.g. apply_as_truncates=\"op = 't'\").") }}
  {%- endif -%}
  {{ return(hint ~ ("SCD2" if cfg.scd_type == '2' else "bitemporal") ~ " cannot apply a truncate (it would close every key's history at"
            ~ " once): filter them out of the model query (e.g. `where op <> 't'`).") }}
{%- endmacro %}
