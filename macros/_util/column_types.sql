{#- Column types, for the batch, validation and tables stages: how a stored type takes a new one. In: two data type strings. Out: 'fits',
    {'widen': type} or 'incompatible'; never a change that rounds or truncates. -#}

{% macro type_change(stored, incoming) -%}
  {#- How a column stored as type `stored` takes values of type `incoming` (data type strings): 'fits'
      (nothing to do), {'widen': <type>} (alter the stored column to <type>), or 'incompatible'.
      Widening: integers to larger integers, decimals to more digits on either side of the
      point, integers into decimals, floats to doubles, strings to longer or unbounded ones.
      The same type fits on every adapter: asked for every column of every run, it is answered
      without a dispatch. -#}
  {%- if stored == incoming -%}{{ return('fits') }}{%- endif -%}
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
    {%- if whole + scale > auto_cdc.capabilities().max_decimal_precision -%}{{ return('incompatible') }}{%- endif -%}
    {{ return({'widen': s.name ~ '(' ~ (whole + scale) ~ ',' ~ scale ~ ')'}) }}
  {%- endif -%}
  {{ return('incompatible') }}
{%- endmacro %}


{% macro _parse_type(data_type) -%}
  {#- 'numeric(12,4)' -> name 'numeric', size 12, scale 4; 'character varying(20)' -> size 20;
      anything else ('struct(a integer)', 'integer[]') is its own name. Read with string
      methods: dbt v2's modules.re returns no match objects (no .group()). -#}
  {%- set text = data_type | lower | trim -%}
  {%- set parsed = {'text': text, 'name': text, 'size': none, 'scale': 0} -%}
  {%- if text.endswith(')') and '(' in text -%}
    {%- set head, arguments = text[:-1].split('(', 1) -%}
    {%- set numbers = arguments.replace(' ', '').split(',') -%}
    {%- set digits = [] -%}
    {%- for number in numbers if number.isdigit() -%}{%- do digits.append(number | int) -%}{%- endfor -%}
    {%- if head | trim and digits | length == numbers | length and digits | length <= 2 -%}
      {%- do parsed.update({'name': head | trim, 'size': digits[0], 'scale': digits[1] if digits | length == 2 else 0}) -%}
    {%- endif -%}
  {%- endif -%}
  {{ return(parsed) }}
{%- endmacro %}


{% macro alter_column_type_sql(relation, column, data_type) -%}
  {{ return(adapter.dispatch('alter_column_type_sql', 'auto_cdc')(relation, column, data_type)) }}
{%- endmacro %}

{% macro default__alter_column_type_sql(relation, column, data_type) -%}
  alter table {{ relation }} alter column {{ auto_cdc.quote_identifier(column) }} type {{ data_type }}
{%- endmacro %}


{% macro type_label(column) -%}
  {#- A column's type as its database names it, for messages. -#}
  {{ return(adapter.dispatch('type_label', 'auto_cdc')(column)) }}
{%- endmacro %}

{% macro default__type_label(column) -%}{{ return(column.data_type) }}{%- endmacro %}



{% macro columns_of(relations) -%}
  {#- Each relation's columns, as adapter.get_columns_in_relation gives them (a list per relation,
      in order); an adapter can answer in one lookup instead of one per relation. -#}
  {{ return(adapter.dispatch('columns_of', 'auto_cdc')(relations)) }}
{%- endmacro %}

{% macro default__columns_of(relations) -%}
  {%- set found = [] -%}
  {%- for relation in relations -%}{%- do found.append(adapter.get_columns_in_relation(relation)) -%}{%- endfor -%}
  {{ return(found) }}
{%- endmacro %}

{% macro columns_from_rows(rows, count) -%}
  {#- columns_of's answer from one lookup's rows (relation index, then get_columns_in_relation's
      row: name, type, length, precision, scale), built as dbt builds them. -#}
  {%- set found = [] -%}
  {%- for i in range(count) -%}{%- do found.append([]) -%}{%- endfor -%}
  {%- for row in rows -%}
    {%- do found[row[0] | int].append(api.Column(row[1], row[2], row[3], row[4], row[5])) -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}
