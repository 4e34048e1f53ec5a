{#- Stage 1, configuration. In: the model's config (config(), YAML, dbt_project.yml, `meta`) and
    the model query's columns. Out: `cfg`, the validated, resolved settings every later stage
    reads and none changes. Every problem is collected and raised once, before anything is written. -#}

{% macro read_cdc_config(source, versions=none, flows=[]) -%}
  {#- Returns the validated settings of an `auto_cdc` model as a dict (see docs/configuration.md).
      `source`: the model query's columns, from query_columns(): what the configuration is
      resolved against, so cfg keeps their names (`source_columns`) and those compared as text
      (`compared_as_text`), as it keeps each flow's columns. The run's own facts (its clock, its
      relations, what it found) are not configuration: run_context holds them. `versions`: for
      auto_cdc_from_snapshot, its snapshot_version_source(); the snapshot version is then the
      sequence, and the configs that shape events are not allowed. `flows`: an auto_cdc model's
      flows (model_flows, with their columns from flows_source; `source` is then theirs
      together). The helpers run in this order so errors are listed in it. -#}
  {%- set errors = [] -%}
  {%- set snapshot = versions is not none -%}
  {%- set source_columns = source.names -%}
  {%- set fields = auto_cdc.config_fields() -%}
  {%- do auto_cdc._check_config_keys(snapshot, errors) -%}
  {%- do auto_cdc._check_source_columns(source_columns, errors) -%}
  {%- set values = auto_cdc._read_values(fields, snapshot) -%}
  {%- set scd_type = auto_cdc._read_scd_type(fields, values, snapshot, errors) -%}
  {%- do auto_cdc._reject_auto_cdc_configs(fields, snapshot, errors) -%}
  {%- set keys = auto_cdc._read_keys(values, source_columns, errors) -%}
  {%- set replace_using = auto_cdc._read_replace_using(values, keys, source_columns, errors) if values.replace_using is not none else [] -%}
  {%- set sequence = auto_cdc._read_sequence(values, versions, keys, source_columns, errors) -%}
  {%- set events = auto_cdc._read_event_kinds(values, scd_type, errors) -%}
  {%- do auto_cdc._check_column_lists(values, scd_type, errors) -%}
  {#- A reader of configs left unset is not called: it would find nothing to check, and the
      first compile of a macro is most of a process's fixed cost. -#}
  {%- set system = auto_cdc._read_system_sequence(values, scd_type, snapshot, source_columns, errors)
                   if scd_type == 'bitemporal' or values.system_sequence_by is not none
                   else {'expr': none, 'column': none, 'expressions': [], 'recorded': none} -%}
  {%- set ctu_column = none if values.columns_to_update is none else auto_cdc._read_columns_to_update(values, scd_type, source_columns, errors) -%}
  {%- set columns = auto_cdc._read_columns(values, keys, ctu_column, sequence.version_column, source_columns, errors) -%}
  {%- set partial = auto_cdc._read_partial(fields, values, columns.value_columns, ctu_column, source_columns, errors)
                    if values.ignore_null_updates is not sameas false or values.ignore_null_updates_column_list is not none
                       or values.ignore_null_updates_except_column_list is not none
                    else {'ignore_null_columns': [], 'partial': ctu_column is not none} -%}
  {%- set tracked = auto_cdc._read_tracked(values, columns.value_columns, sequence.columns + [system.column], source_columns, errors) -%}
  {%- set checkpoint_column = auto_cdc._resolve_one('checkpoint_column', values.checkpoint_column, source_columns, errors) -%}
  {%- set flows = auto_cdc._read_flows(flows, values, scd_type, sequence, columns, ctu_column, checkpoint_column, errors) if flows else [] -%}
  {%- set commit_time = {'column': none, 'zoned': false} if snapshot else auto_cdc._read_commit_time_column(values, source, errors) -%}
  {%- set change_feed = auto_cdc._read_change_feed(fields, values, scd_type, sequence, columns.written_columns, errors)
                        if values.change_feed is not sameas false or values.change_feed_retention is not none
                        else {'enabled': false, 'retention': none} -%}
  {%- for name in ['tombstone_retention', 'max_delete_fraction', 'allow_empty_snapshots', 'on_schema_change', 'on_bad_rows'] -%}
    {%- do auto_cdc._check_field(fields[name], values[name], errors) -%}
  {%- endfor -%}
  {%- do auto_cdc._check_adapter_support({'change_feed': change_feed.enabled, 'flows': flows | length > 0,
                                          'contract': auto_cdc.contract_enforced(),
                                          'file_format': (config.get('file_format') or 'iceberg') != 'iceberg'}, errors) -%}

  {%- if errors -%}
    {%- do auto_cdc.configuration_errors(model.name, errors) -%}
  {%- endif -%}

  {#- history_from_open_rows: SCD2 from snapshots stores no events. Versions only grow, so a key's
      rows before its open one are final, and the open row stands for the events that made it. -#}
  {{ return({
      'model_name': model.name,
      'scd_type': scd_type,
      'key_columns': keys,
      'replace_using': replace_using,
      'sequence_exprs': sequence.exprs,
      'sequence_columns': sequence.columns,
      'sequence_fields': sequence.fields,
      'sequence_labels': sequence.labels,
      'seq_parts': sequence.exprs | length,
      'deletes_expr': events.deletes_expr,
      'truncates_expr': events.truncates_expr,
      'written_columns': columns.written_columns,
      'value_columns': columns.value_columns,
      'ignore_null_columns': partial.ignore_null_columns,
      'tracked_columns': tracked,
      'columns_to_update': ctu_column,
      'partial': partial.partial,
      'checkpoint_column': none if flows else checkpoint_column,
      'commit_time_column': commit_time.column,
      'commit_time_zoned': commit_time.zoned,
      'flows': flows,
      'tombstone_retention': values.tombstone_retention,
      'on_schema_change': values.on_schema_change,
      'quarantine': values.on_bad_rows == 'quarantine',
      'snapshot': snapshot,
      'history_from_open_rows': snapshot and scd_type == '2',
      'version_column': sequence.version_column,
      'system_expr': system.expr,
      'expressions': sequence.expressions + events.expressions + system.expressions,
      'max_delete_fraction': values.max_delete_fraction,
      'allow_empty_snapshots': values.allow_empty_snapshots,
      'change_feed': change_feed.enabled,
      'change_feed_retention': change_feed.retention,
      'compared_as_text': source.compared_as_text,
      'source_columns': source_columns,
      'state_config': auto_cdc.recorded_config(values, auto_cdc._resolved_records(keys, replace_using, sequence.state, system.recorded, ctu_column, checkpoint_column), source_columns),
  }) }}
{%- endmacro %}


{% macro _read_commit_time_column(values, source, errors) -%}
  {#- The column holding each event's source commit time, for the run's lag (record_run_sql):
      as set, or the Debezium macro's `_dbz_committed_at` when the query has it. A date or a
      timestamp: the lag counts seconds from it. Returns {'column', 'zoned'}: `zoned` when its
      values are points in time; the others are read as UTC (newest_commit_sql). -#}
  {%- set name = values.commit_time_column -%}
  {%- if name is none and '_dbz_committed_at' in source.names -%}{%- set name = '_dbz_committed_at' -%}{%- endif -%}
  {%- set resolved = auto_cdc._resolve_one('commit_time_column', name, source.names, errors) -%}
  {%- set column = source.columns | selectattr('name', 'equalto', resolved) | first if resolved else none -%}
  {%- if column and not auto_cdc.is_time_type(column.data_type) -%}
    {%- do errors.append("`commit_time_column` '" ~ resolved ~ "' is " ~ column.data_type
        ~ ", not a date or timestamp: cast it in the model query (e.g. to_timestamp(ts_ms / 1000.0)).") -%}
  {%- endif -%}
  {{ return({'column': resolved, 'zoned': column is not none and auto_cdc.has_time_zone(column.data_type)}) }}
{%- endmacro %}


{% macro is_time_type(data_type) -%}
  {%- set type = data_type | lower -%}
  {{ return(type.startswith('timestamp') or type.startswith('date') or type.startswith('datetime')) }}
{%- endmacro %}


{% macro has_time_zone(data_type) -%}
  {#- Does a column of this type hold points in time (not a wall-clock time without a zone)? -#}
  {{ return(adapter.dispatch('has_time_zone', 'auto_cdc')(data_type | lower)) }}
{%- endmacro %}

{% macro default__has_time_zone(data_type) -%}
  {{ return('with time zone' in data_type or data_type.startswith('timestamptz')) }}
{%- endmacro %}


{% macro _check_source_columns(source_columns, errors) -%}
  {#- Source columns that would collide with what auto_cdc writes or uses internally. -#}
  {%- set reserved = ['__start_at', '__end_at', '__system_start_at', '__system_end_at'] -%}
  {%- set internal_prefix = '__cdc_' -%}
  {%- for column in source_columns -%}
    {%- if column | lower in reserved -%}
      {%- do errors.append("the model query returns a column named '" ~ column ~ "', a name auto_cdc reserves for its history columns: rename it in the model query.") -%}
    {%- elif (column | lower).startswith(internal_prefix) -%}
      {%- do errors.append("the model query returns a column named '" ~ column ~ "'; names starting with '" ~ internal_prefix ~ "' are reserved for auto_cdc: rename it.") -%}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _read_scd_type(fields, values, snapshot, errors) -%}
  {#- '1', '2' or 'bitemporal'; snapshots carry no system time, so not bitemporal. -#}
  {%- set scd_type = values.stored_as_scd_type -%}
  {%- do auto_cdc._check_field(fields.stored_as_scd_type, scd_type, errors) -%}
  {%- if scd_type == 'bitemporal' and snapshot -%}
    {%- do errors.append("auto_cdc_from_snapshot stores snapshots as `stored_as_scd_type` 1 or 2, not 'bitemporal'.") -%}
  {%- endif -%}
  {{ return(scd_type) }}
{%- endmacro %}


{% macro _read_keys(values, source_columns, errors) -%}
  {#- The columns that identify a row, spelled as the query spells them. (values['keys']:
      values.keys would be the dict's method.) -#}
  {%- set names = auto_cdc._as_list(values['keys']) -%}
  {%- if names | length == 0 -%}
    {%- do errors.append("`keys` is required: the list of columns that identify a row, e.g. keys=['id']." ~ auto_cdc._near_miss_hint('keys')) -%}
  {%- endif -%}
  {{ return(auto_cdc._resolve_columns('keys', names, source_columns, errors)) }}
{%- endmacro %}


{% macro _read_replace_using(values, keys, source_columns, errors) -%}
  {#- auto_cdc_from_snapshot's groups (SPEC 6.6): some of the keys, spelled as the query spells
      them. A group is the rows that share their values; a snapshot is complete for the groups it
      holds. -#}
  {%- set named = auto_cdc._resolve_columns('replace_using', auto_cdc._as_list(values.replace_using), source_columns, errors) -%}
  {%- if not named -%}
    {%- do errors.append("`replace_using` names no column: list the key columns that name a group (e.g. replace_using=['store_id']), or remove it.") -%}
  {%- endif -%}
  {%- for column in named if column not in keys -%}
    {%- do errors.append("`replace_using` names '" ~ column ~ "', which is not one of `keys` (" ~ keys | join(', ')
                         ~ "): a group is named by some of the key columns, so that each key belongs to one group.") -%}
  {%- endfor -%}
  {{ return(named) }}
{%- endmacro %}


{% macro _resolved_records(keys, replace_using, sequence_state, system_recorded, ctu_column, checkpoint_column) -%}
  {#- The recorded values (recorded_config) that come from resolving the configuration. -#}
  {%- set resolved = {
      'materialized': model.config.materialized,
      'keys': keys | map('lower') | sort | list,
      'replace_using': replace_using | map('lower') | sort | list if replace_using else none,
      'system_sequence_by': system_recorded,
      'columns_to_update': ctu_column | lower if ctu_column else none,
      'checkpoint_column': checkpoint_column | lower if checkpoint_column else none,
  } -%}
  {%- do resolved.update(sequence_state) -%}
  {{ return(resolved) }}
{%- endmacro %}


{% macro normalized_sql(expr) -%}
  {#- An expression as recorded for change detection: whitespace runs are one space. -#}
  {{ return(none if expr is none else modules.re.sub('\\s+', ' ', expr | string) | trim) }}
{%- endmacro %}


{% macro _config_columns(value, source_columns) -%}
  {#- A column-list config as recorded for change detection: the columns it names, in lower case, sorted. -#}
  {%- if value is none -%}{{ return(none) }}{%- endif -%}
  {%- set columns = [] -%}
  {%- for item in auto_cdc._as_list(value) -%}
    {%- do columns.append((auto_cdc.column_named(item | string, source_columns) or item) | lower) -%}
  {%- endfor -%}
  {{ return(columns | sort | list) }}
{%- endmacro %}


{% macro _check_adapter_support(used, errors) -%}
  {#- `used`: {feature: whether the model uses it (file_format: a format other than iceberg)}. A
      feature not tested on this adapter fails here, before anything is written, instead of
      running untested. -#}
  {%- for feature in auto_cdc.capabilities().untested_features if used.get(feature) -%}
    {%- set value = " '" ~ config.get('file_format') ~ "'" if feature == 'file_format' else '' -%}
    {%- do errors.append("`" ~ feature ~ "`" ~ value ~ " is not supported on " ~ adapter.type() ~ " yet (it is not tested there; docs/spark.md): leave it out of this model's config.") -%}
  {%- endfor -%}
{%- endmacro %}


{% macro run_clock() -%}
  {#- SQL for the run's time: when its events arrived, its tombstones were written and its run
      was applied, and what retention counts back from. One value for the whole run, so a run
      never finds its own rows already expired. -#}
  {{ return(adapter.dispatch('run_clock', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__run_clock() -%}
  {#- 'transaction_start': the run is one transaction, and no run starts before another
      commits (one writer at a time), so the transaction's start orders runs. -#}
  {%- if auto_cdc.capabilities().run_clock != 'transaction_start' -%}
    {%- do auto_cdc.missing_hook('run_clock', "run_clock '" ~ auto_cdc.capabilities().run_clock ~ "'") -%}
  {%- endif -%}
  {{ return(dbt.current_timestamp()) }}
{%- endmacro %}


{% macro contract_enforced() -%}
  {#- dbt's own config: `contract: {enforced: true}`. -#}
  {%- set contract = config.get('contract') -%}
  {{ return(contract is not none and contract.enforced is sameas true) }}
{%- endmacro %}
