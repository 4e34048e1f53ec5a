{#- Debezium, the arguments (debezium.sql calls this first). In: debezium()'s arguments, the
    model's `keys` and `stored_as_scd_type` configs and, for a flattened table, the landed
    table's column names (for an envelope, on Spark, its structs' types; no rows read). Out: the spec every other file of the folder reads
    (the relation, connector, form and envelope column; the landed columns that are structs,
    with their fields' types; each column with its type, encoding and whether it is a key; the
    extra columns, the truncates mode, the placeholders), or one error
    that names every problem at once. A column's default encoding is types.sql's; the source
    fields a flattened row must carry are ordering.sql's. -#}

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
  {%- set struct_columns = auto_cdc.debezium_struct_columns(relation) if form == 'envelope' and execute else {} -%}
  {%- if envelope_column and envelope_column | lower in struct_columns -%}
    {%- do problems.append("has envelope_column='" ~ envelope_column ~ "', a struct: land the record's value as JSON text there, or its before, after, source and op as columns of their own (structs are read there)") -%}
  {%- endif -%}
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
      'struct_columns': struct_columns,
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
