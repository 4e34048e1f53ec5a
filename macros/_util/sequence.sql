{#- A sequence is one or more parts (`sequence_by` may be a list, ordered lexicographically).
    Internally each part is its own column: `<prefix>` for one part, `<prefix>_1..n` for more.
    Comparisons use row constructors, which PostgreSQL and DuckDB both order lexicographically.
    A sequence is either wholly present or wholly absent (NULL parts are rejected up front),
    so testing the first part for NULL tells whether it is there. -#}

{% macro seq_names(prefix, n) -%}
  {%- if n == 1 -%}{{ return([prefix]) }}{%- endif -%}
  {%- set out = [] -%}
  {%- for p in range(1, n + 1) -%}{%- do out.append(prefix ~ '_' ~ p) -%}{%- endfor -%}
  {{ return(out) }}
{%- endmacro %}


{#- The expression helpers below are templates: each renders one SQL expression or select list. -#}

{% macro seq_row(prefix, n, alias=none) -%}
  {{ return(auto_cdc._seq_refs(prefix, n, alias).row) }}
{%- endmacro %}

{% macro default__seq_tuple(parts) -%}
  ({{ parts | join(', ') }})
{%- endmacro %}


{% macro seq_first(prefix, n, alias=none) -%}
  {{ return(auto_cdc._seq_refs(prefix, n, alias).first) }}
{%- endmacro %}


{% macro _seq_refs(prefix, n, alias=none) -%}
  {#- Sequence `prefix` (of `n` parts, optionally under `alias`) as its first part and as the
      whole row the comparisons use; one call for both, as the comparisons below need both. -#}
  {%- set names = [] -%}
  {%- for name in auto_cdc.seq_names(prefix, n) -%}{%- do names.append((alias ~ '.' if alias else '') ~ name) -%}{%- endfor -%}
  {{ return({'first': names[0], 'row': adapter.dispatch('seq_tuple', 'auto_cdc')(names) if n > 1 else '(' ~ names[0] ~ ')'}) }}
{%- endmacro %}


{% macro seq_cmp(a, b, n, op, alias_a=none, alias_b=none) -%}
  {#- True when `a` is present and either `b` is absent or `a <op> b`. -#}
  {%- set x = auto_cdc._seq_refs(a, n, alias_a) -%}
  {%- set y = auto_cdc._seq_refs(b, n, alias_b) -%}
  ({{ x.first }} is not null and ({{ y.first }} is null or {{ x.row }} {{ op }} {{ y.row }}))
{%- endmacro %}


{% macro seq_tie(a, b, n) -%}
  {#- True when sequences `a` and `b` are both present and equal. -#}
  ({{ auto_cdc.seq_first(b, n) }} is not null and {{ auto_cdc.seq_cmp(a, b, n, '=') }})
{%- endmacro %}


{% macro seq_greatest(a, b, n, out) -%}
  {#- Select list: the greater of sequences `a` and `b` (either may be absent) as `out`. -#}
  {%- set a_names = auto_cdc.seq_names(a, n) -%}
  {%- set b_names = auto_cdc.seq_names(b, n) -%}
  {%- for out_name in auto_cdc.seq_names(out, n) -%}
    case when {{ auto_cdc.seq_cmp(a, b, n, '>=') }} then {{ a_names[loop.index0] }} else {{ b_names[loop.index0] }} end as {{ out_name }}
    {{- ',\n    ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro seq_select(source, out, n, condition=none, alias=none, over=none) -%}
  {#- Select list: sequence `source` renamed `out`; NULL where `condition` is false;
      with `over`, the first such value in that window. -#}
  {%- set src = auto_cdc.seq_names(source, n) -%}
  {%- for out_name in auto_cdc.seq_names(out, n) -%}
    {%- set value -%}{% if alias %}{{ alias }}.{% endif %}{{ src[loop.index0] }}{%- endset -%}
    {%- if condition -%}{%- set value -%}case when {{ condition }} then {{ value }} end{%- endset -%}{%- endif -%}
    {%- if over -%}{%- set value -%}first_value({{ value }}) over {{ over }}{%- endset -%}{%- endif -%}
    {{ value }} as {{ out_name }}{{ ',\n    ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}


{% macro seq_older(a, b, n, alias_a=none, alias_b=none) -%}
  {#- True when both are present and `a < b`. -#}
  {%- set x = auto_cdc._seq_refs(a, n, alias_a) -%}
  {%- set y = auto_cdc._seq_refs(b, n, alias_b) -%}
  ({{ x.first }} is not null and {{ y.first }} is not null and {{ x.row }} < {{ y.row }})
{%- endmacro %}


{% macro seq_order(prefix, n, direction='desc') -%}
  {% for name in auto_cdc.seq_names(prefix, n) %}{{ name }} {{ direction }}{{ ', ' if not loop.last }}{% endfor %}
{%- endmacro %}


{% macro seq_value(prefix, cfg) -%}
  {#- One value for a whole sequence, for the target's __START_AT / __END_AT: the sequence
      itself, or for a `sequence_by` list a value of a type that orders like the list. -#}
  {%- if cfg.seq_parts == 1 -%}{{ return(prefix) }}{%- endif -%}
  {{ return(adapter.dispatch('seq_value', 'auto_cdc')(auto_cdc.seq_names(prefix, cfg.seq_parts), cfg)) }}
{%- endmacro %}

{% macro default__seq_value(parts, cfg) -%}
  {%- do auto_cdc.model_error(cfg.model_name, "a `sequence_by` list with stored_as_scd_type=2 is not supported on "
      ~ adapter.type() ~ " yet; combine the parts into one orderable column in the model query.") -%}
{%- endmacro %}


{% macro sequence_type_sql(cfg, batch) -%}
  {{ return(adapter.dispatch('sequence_type_sql', 'auto_cdc')(cfg, batch)) }}
{%- endmacro %}

{% macro default__sequence_type_sql(cfg, batch) -%}
{%- endmacro %}


{% macro drop_sequence_type_sql(cfg) -%}
  {{ return(adapter.dispatch('drop_sequence_type_sql', 'auto_cdc')(cfg)) }}
{%- endmacro %}

{% macro default__drop_sequence_type_sql(cfg) -%}
{%- endmacro %}

