{#- Column types between runs: a source column whose type widens widens the tables that hold
    its values (never rounding or truncating); any other type change fails before writing. -#}

{% macro type_change(stored, incoming) -%}
  {#- How a column stored as type `stored` takes values of type `incoming` (data type strings): 'fits'
      (nothing to do), {'widen': <type>} (alter the stored column to <type>), or 'incompatible'.
      Widening: integers to larger integers, decimals to more digits on either side of the
      point, integers into decimals, floats to doubles, strings to longer or unbounded ones. -#}
  {{ return(adapter.dispatch('type_change', 'auto_cdc')(stored, incoming)) }}
{%- endmacro %}

{% macro default__type_change(stored, incoming) -%}
  {%- set s = auto_cdc._parse_type(stored) -%}
  {%- set i = auto_cdc._parse_type(incoming) -%}
  {%- if s.text == i.text -%}{{ return('fits') }}{%- endif -%}
  {%- set integers = {'tinyint': 1, 'int1': 1, 'smallint': 2, 'int2': 2, 'integer': 3, 'int': 3, 'int4': 3,
                      'bigint': 4, 'int8': 4, 'hugeint': 5, 'int128': 5} -%}
  {%- set integer_digits = {1: 3, 2: 5, 3: 10, 4: 19, 5: 39} -%}
  {%- set floats = {'real': 1, 'float4': 1, 'float': 1, 'double': 2, 'float8': 2, 'double precision': 2} -%}
  {%- set decimals = ['numeric', 'decimal'] -%}
  {%- set strings = ['character varying', 'varchar', 'text', 'string'] -%}

  {%- if s.name in integers and i.name in integers -%}
    {{ return('fits' if integers[i.name] <= integers[s.name] else {'widen': incoming}) }}
  {%- elif s.name in floats and i.name in floats -%}
    {{ return('fits' if floats[i.name] <= floats[s.name] else {'widen': incoming}) }}
  {%- elif s.name in strings and i.name in strings -%}
    {%- if s.size is none or (i.size is not none and i.size <= s.size) -%}{{ return('fits') }}{%- endif -%}
    {{ return({'widen': incoming}) }}
  {%- elif s.name in decimals and (i.name in decimals or i.name in integers) -%}
    {%- if s.size is none -%}{{ return('fits') }}{%- endif -%}  {#- PostgreSQL's unbounded numeric -#}
    {%- if i.name in decimals and i.size is none -%}{{ return({'widen': i.name}) }}{%- endif -%}
    {%- set i_scale = 0 if i.name in integers else i.scale -%}
    {%- set i_whole = integer_digits[integers[i.name]] if i.name in integers else i.size - i.scale -%}
    {%- set whole = [s.size - s.scale, i_whole] | max -%}
    {%- set scale = [s.scale, i_scale] | max -%}
    {%- if whole == s.size - s.scale and scale == s.scale -%}{{ return('fits') }}{%- endif -%}
    {%- if whole + scale > auto_cdc.max_decimal_precision() -%}{{ return('incompatible') }}{%- endif -%}
    {{ return({'widen': s.name ~ '(' ~ (whole + scale) ~ ',' ~ scale ~ ')'}) }}
  {%- endif -%}
  {{ return('incompatible') }}
{%- endmacro %}


{% macro _parse_type(data_type) -%}
  {#- 'numeric(12,4)' -> name 'numeric', size 12, scale 4; 'character varying(20)' -> size 20. -#}
  {%- set text = data_type | lower | trim -%}
  {%- set match = modules.re.fullmatch('([a-z][a-z0-9_ ]*?)\\s*(?:\\(\\s*(\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\))?', text) -%}
  {%- if match is none -%}{{ return({'text': text, 'name': text, 'size': none, 'scale': 0}) }}{%- endif -%}
  {{ return({'text': text, 'name': match.group(1), 'size': none if match.group(2) is none else match.group(2) | int,
             'scale': (match.group(3) or 0) | int}) }}
{%- endmacro %}


{% macro max_decimal_precision() -%}
  {{ return(adapter.dispatch('max_decimal_precision', 'auto_cdc')()) }}
{%- endmacro %}

{% macro default__max_decimal_precision() -%}{{ return(38) }}{%- endmacro %}

{% macro postgres__max_decimal_precision() -%}{{ return(1000) }}{%- endmacro %}


{% macro alter_column_type(relation, column, data_type) -%}
  {{ return(adapter.dispatch('alter_column_type', 'auto_cdc')(relation, column, data_type)) }}
{%- endmacro %}

{% macro default__alter_column_type(relation, column, data_type) -%}
  alter table {{ relation }} alter column {{ auto_cdc.quote_identifier(column) }} type {{ data_type }}
{%- endmacro %}


{% macro reconcile_column_types(cfg, relations, source_columns) -%}
  {#- `relations`: a list of (relation, its columns, {its column (lower case): the source column
      whose values it holds}). `source_columns`: the batch's (or snapshots') columns. Widens what
      must widen; fails, naming the column and both types, when a type cannot take the new one. -#}
  {%- set incoming = {} -%}
  {%- for column in source_columns -%}{%- do incoming.update({column.name | lower: column}) -%}{%- endfor -%}
  {%- set statements = [] -%}
  {%- set errors = [] -%}
  {%- set sequence_widened = [] -%}
  {%- for relation, columns, holds in relations -%}
    {%- for column in columns if column.name | lower in holds -%}
      {%- set source_name = holds[column.name | lower] -%}
      {%- set new = incoming.get(source_name | lower) -%}
      {%- set verdict = 'fits' if new is none else auto_cdc.type_change(column.data_type, new.data_type) -%}
      {%- set label = auto_cdc._source_label(cfg, source_name) -%}
      {%- if verdict == 'incompatible' -%}
        {%- set message = label ~ " is now of type " ~ new.data_type ~ ", but " ~ relation ~ " holds " ~ column.data_type
            ~ ", which cannot take it without converting or losing values. Cast it back in the model query (`cast(... as "
            ~ column.data_type ~ ")`), or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`." -%}
        {%- if message not in errors -%}{%- do errors.append(message) -%}{%- endif -%}
      {%- elif verdict != 'fits' -%}
        {%- do statements.append(auto_cdc.alter_column_type(relation, column.name, verdict.widen)) -%}
        {%- do log("auto_cdc: " ~ cfg.model_name ~ ": widening " ~ relation ~ "." ~ column.name ~ " from " ~ column.data_type
                   ~ " to " ~ verdict.widen ~ " (" ~ label ~ " widened)", info=true) -%}
        {%- if source_name.startswith('__cdc_') -%}{%- do sequence_widened.append(label) -%}{%- endif -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if sequence_widened and cfg.scd_type != '1' and cfg.seq_parts > 1 -%}
    {%- do errors.append(sequence_widened[0] ~ " widened; with a `sequence_by` list, __START_AT and __END_AT hold the whole sequence in one value"
        ~ " that cannot be widened in place. Cast it back in the model query, or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- if errors -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': a column's type changed in a way the stored tables cannot follow;"
        ~ " nothing was written.\n  - " ~ (errors | join('\n  - '))) -%}
  {%- endif -%}
  {%- do auto_cdc.run_statements(statements) -%}
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
  {%- endif -%}
  {%- for prefix in sequence_prefixes -%}
    {%- for name in auto_cdc.seq_names(prefix, n) -%}{%- do holds.update({name: sequence[loop.index0]}) -%}{%- endfor -%}
  {%- endfor -%}
  {{ return(holds) }}
{%- endmacro %}


{% macro warn_text_sequence(cfg, source_columns) -%}
  {#- Text orders character by character: '150' before '50', '9' after '10'. Said on every run,
      since a sequence of numbers or timestamps kept as text is a silent wrong order. -#}
  {%- set names = ['__cdc_version'] if cfg.snapshot else auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {%- for column in source_columns if column.name in names and column.is_string() -%}
    {%- do exceptions.warn("auto_cdc: model '" ~ cfg.model_name ~ "': " ~ auto_cdc._source_label(cfg, column.name) ~ " is of type "
        ~ column.data_type ~ " and orders as text: '150' before '50', '9' after '10'. If it holds numbers or timestamps, cast it ("
        ~ ("e.g. sequence_by='cast(... as bigint)'" if not cfg.snapshot else "e.g. cast(version as bigint)")
        ~ "); text of one fixed width (ISO-8601 timestamps, zero-padded numbers) orders correctly.") -%}
  {%- endfor -%}
{%- endmacro %}
