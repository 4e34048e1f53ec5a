{#- Identifier helpers. Every column name that reaches SQL goes through `quote_identifier`,
    every object name auto_cdc derives goes through `derived_name` (PostgreSQL cuts names at
    63 characters; a cut name would silently collide). -#}

{% macro quote_identifier(name) -%}
  {#- The adapter's own quoting (adapter.quote), with an embedded quote character doubled. Not
      dispatched: it is called for every column a statement names (~50 times a run), and a
      dispatch costs more than the quoting. -#}
  {%- set mark = adapter.quote('')[0] -%}
  {{ return(adapter.quote(name | replace(mark, mark ~ mark))) }}
{%- endmacro %}


{% macro derived_name(base, suffix) -%}
  {#- `base ~ suffix`, shortened with a hash of the full name when it would be too long. -#}
  {{ return(auto_cdc.derived_names(base, [suffix])[suffix]) }}
{%- endmacro %}


{% macro derived_names(base, suffixes) -%}
  {#- {suffix: derived_name(base, suffix)} for several suffixes, the adapter asked once (a model
      names ~13 relations a run, and each question is a dispatch). -#}
  {%- set limit = auto_cdc.capabilities().max_identifier_length -%}
  {%- set names = {} -%}
  {%- for suffix in suffixes -%}
    {%- set full = base ~ suffix -%}
    {%- do names.update({suffix: full if full | length <= limit else base[: limit - (suffix | length) - 9] ~ '_' ~ local_md5(full)[:8] ~ suffix}) -%}
  {%- endfor -%}
  {{ return(names) }}
{%- endmacro %}


{% macro aliased_relation(relation, alias) -%}
  {#- `relation as alias`, for a relation a public macro was given (a ref(), a source(), a name).
      dbt renders a ref() or source() under --empty as a subquery without rows (and a microbatch
      model's inputs as a filtered one), which PostgreSQL gives an alias of its own
      (`(select ... limit 0) _dbt_limit_subq_x`) that a second alias cannot follow: such a
      relation is read from inside a subquery of ours. -#}
  {%- set rendered = relation | string | trim -%}
  {{ return(('(select * from ' ~ rendered ~ ')' if rendered.startswith('(') else rendered) ~ ' as ' ~ alias) }}
{%- endmacro %}


{% macro unlimited_relation(relation) -%}
  {#- The relation itself, for a lookup of its columns: under --empty dbt renders a ref() as a
      subquery without rows, which Spark's `describe` cannot take. A name given as text is kept. -#}
  {%- if relation is not string and relation.limit is defined and relation.limit is not none -%}
    {{ return(relation.incorporate(limit=none)) }}
  {%- endif -%}
  {{ return(relation) }}
{%- endmacro %}


{% macro quoted_list(names, prefix='') -%}
  {#- "a", "b" (optionally each as prefix."a"). dbt's get_quoted_csv quotes with adapter.quote,
      which does not escape a quote inside a name; quote_identifier does. -#}
  {%- for name in names -%}{{ prefix }}{{ auto_cdc.quote_identifier(name) }}{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}


{% macro keys_match(keys, left, right) -%}
  {#- Join condition on the keys. Keys are never NULL (the batch is validated), so `=` is exact.
      (dbt has no public macro for this; its merge macros build the condition inline.) -#}
  {%- for key in keys -%}
    {{ left }}.{{ auto_cdc.quote_identifier(key) }} = {{ right }}.{{ auto_cdc.quote_identifier(key) }}{{ ' and ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro string_literal(value) -%}
  {{ return(adapter.dispatch('string_literal', 'auto_cdc')(value | string)) }}
{%- endmacro %}

{% macro default__string_literal(value) -%}
  {{ return("'" ~ (value | replace("'", "''")) ~ "'") }}
{%- endmacro %}


{% macro string_literals(values) -%}
  {#- 'a', 'b': a list of string literals, e.g. for `in (...)`. -#}
  {%- set literals = [] -%}
  {%- for value in values -%}{%- do literals.append(auto_cdc.string_literal(value)) -%}{%- endfor -%}
  {{ return(literals | join(', ')) }}
{%- endmacro %}


{% macro column_named(name, columns) -%}
  {#- The one rule for matching a column name: `columns`' (names') spelling of `name`, the exact
      spelling first, else the only one equal to it ignoring case (PostgreSQL folds an unquoted
      `userId` to `userid`); none if there is no such one. -#}
  {%- if name in columns -%}{{ return(name) }}{%- endif -%}
  {%- set matches = [] -%}
  {%- for column in columns -%}
    {%- if column | lower == name | lower -%}{%- do matches.append(column) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(matches[0] if matches | length == 1 else none) }}
{%- endmacro %}


{% macro column_type(relation, name) -%}
  {#- The type of `relation`'s column `name` (matched ignoring case), or none. -#}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- if column.name | lower == name | lower -%}{{ return(column.data_type) }}{%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}


{% macro and_keys_match(keys, left, right) -%}
  {#- keys_match as one more condition (` and ...`), or nothing when there are no keys. -#}
  {{- (' and ' ~ auto_cdc.keys_match(keys, left, right)) if keys else '' -}}
{%- endmacro %}
