{#- The batch: this run's events, read once from the model query into a temp table with the
    event kind, the sequence parts and (for partial updates) the list of written columns. -#}

{% macro batch_sql(cfg, sql, checkpoint_filter=none) -%}
  {{ return(adapter.dispatch('batch_sql', 'auto_cdc')(cfg, sql, checkpoint_filter)) }}
{%- endmacro %}

{% macro default__batch_sql(cfg, sql, checkpoint_filter) -%}
  {%- set kinds = [] -%}
  {%- if cfg.deletes_expr -%}{%- do kinds.append("when (" ~ cfg.deletes_expr ~ ") then 'delete'") -%}{%- endif -%}
  {%- if cfg.truncates_expr -%}{%- do kinds.append("when (" ~ cfg.truncates_expr ~ ") then 'truncate'") -%}{%- endif -%}
  {%- set seq_names = auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  select
    src.*,
    {% if kinds -%} case {{ kinds | join(' ') }} else 'upsert' end {%- else -%} 'upsert' {%- endif %} as __cdc_op,
    {%- for expr in cfg.sequence_exprs %}
    {{ expr }} as {{ seq_names[loop.index0] }}{{ ',' if not loop.last or cfg.columns_to_update or cfg.system_expr }}
    {%- endfor %}
    {%- if cfg.system_expr %}
    {{ cfg.system_expr }} as __cdc_sys{{ ',' if cfg.columns_to_update }}
    {%- endif %}
    {%- if cfg.columns_to_update %}
    {{ auto_cdc.columns_to_update_list('src.' ~ auto_cdc.quote_identifier(cfg.columns_to_update)) }} as __cdc_ctu
    {%- endif %}
  from (
    {{ sql }}
  ) as src
  {%- if checkpoint_filter %}
  where {{ checkpoint_filter }}
  {%- endif %}
{%- endmacro %}


{% macro columns_to_update_list(expr) -%}
  {{ return(adapter.dispatch('columns_to_update_list', 'auto_cdc')(expr)) }}
{%- endmacro %}

{% macro default__columns_to_update_list(expr) -%}
  {#- A native array (rendered as {a,b} or [a, b]) or a comma-separated string, normalised to
      ',a,b,' in lower case, so membership is a plain substring test. NULL stays NULL
      (the event writes every column). -#}
  ',' || lower(regexp_replace(trim(translate(cast({{ expr }} as {{ dbt.type_string() }}), '[]{}"''', '')), '\s*,\s*', ',', 'g')) || ','
{%- endmacro %}


{% macro column_is_listed(ctu_expr, column) -%}
  {#- True when the normalised columns_to_update value names `column` (NULL: every column). -#}
  ({{ ctu_expr }} is null or position({{ auto_cdc.string_literal(',' ~ (column | lower) ~ ',') }} in {{ ctu_expr }}) > 0)
{%- endmacro %}


{% macro writes_column(cfg, column) -%}
  {#- SQL condition: does a batch event write `column`? Partial updates decide per column. -#}
  {%- if cfg.columns_to_update -%}
    {{ return("__cdc_op = 'upsert' and " ~ auto_cdc.column_is_listed('__cdc_ctu', column)) }}
  {%- elif column in cfg.ignore_null_columns -%}
    {{ return("__cdc_op = 'upsert' and " ~ auto_cdc.quote_identifier(column) ~ " is not null") }}
  {%- else -%}
    {{ return("__cdc_op = 'upsert'") }}
  {%- endif -%}
{%- endmacro %}


{% macro validate_batch(cfg, batch_relation) -%}
  {#- Bad data fails the run before anything is written. Returns the batch's shape. -#}
  {%- set keys = cfg.key_columns -%}
  {%- set seq_names = auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}
  {%- set checks -%}
    select
      count(*) as n_events,
      coalesce(sum(case when __cdc_op = 'truncate' then 1 else 0 end), 0) as n_truncates
      {%- for key in keys %},
      coalesce(sum(case when __cdc_op <> 'truncate' and {{ auto_cdc.quote_identifier(key) }} is null then 1 else 0 end), 0) as null_key_{{ loop.index }}
      {%- endfor %}
      {%- for name in seq_names %},
      coalesce(sum(case when {{ name }} is null then 1 else 0 end), 0) as null_seq_{{ loop.index }}
      {%- endfor %}
      {%- if cfg.system_expr %},
      coalesce(sum(case when __cdc_sys is null then 1 else 0 end), 0) as null_sys
      {%- endif %}
    from {{ batch_relation }}
  {%- endset -%}
  {%- set row = run_query(checks).rows[0] -%}
  {%- set errors = [] -%}
  {%- for key in keys -%}
    {%- if row['null_key_' ~ loop.index] > 0 -%}
      {%- do errors.append(row['null_key_' ~ loop.index] ~ " event(s) have a NULL in key column '" ~ key ~ "' (upserts and deletes need a key): filter them out or fix them in the model query.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for expr in cfg.sequence_exprs -%}
    {%- if row['null_seq_' ~ loop.index] > 0 -%}
      {%- do errors.append(row['null_seq_' ~ loop.index] ~ " event(s) have a NULL sequence: `sequence_by` " ~ expr ~ " is NULL; every event needs a sequence.") -%}
    {%- endif -%}
  {%- endfor -%}

  {%- if cfg.system_expr and row['null_sys'] > 0 -%}
    {%- do errors.append(row['null_sys'] ~ " event(s) have a NULL system sequence: `system_sequence_by` " ~ cfg.system_expr ~ " is NULL; every event needs one.") -%}
  {%- endif -%}

  {%- if not errors -%}
    {#- Two events for one key and sequence (bitemporal: and system sequence) must be identical;
        identical ones collapse. -#}
    {%- if cfg.system_expr -%}{%- set seq_names = seq_names + ['__cdc_sys'] -%}{%- endif -%}
    {%- set conflicts -%}
      select {{ auto_cdc.quoted_list(keys) }}, {{ seq_names | join(', ') }}
      from (
        select distinct {{ auto_cdc.quoted_list(keys) }}, {{ seq_names | join(', ') }}, __cdc_op
          {%- for column in cfg.value_columns %},
          case when __cdc_op = 'upsert' then {{ auto_cdc.quote_identifier(column) }} end as __cdc_v{{ loop.index }}
          {%- endfor %}
          {%- if cfg.columns_to_update %}, case when __cdc_op = 'upsert' then __cdc_ctu end as __cdc_ctu{% endif %}
        from {{ batch_relation }}
        where __cdc_op <> 'truncate'
      ) as distinct_events
      group by {{ auto_cdc.quoted_list(keys) }}, {{ seq_names | join(', ') }}
      having count(*) > 1
      limit 1
    {%- endset -%}
    {%- set conflict_rows = run_query(conflicts).rows -%}
    {%- if conflict_rows | length > 0 -%}
      {%- set example = [] -%}
      {%- for value in conflict_rows[0] -%}
        {%- set label = (keys + cfg.sequence_exprs + [cfg.system_expr])[loop.index0] -%}
        {%- do example.append(label ~ '=' ~ value) -%}
      {%- endfor -%}
      {%- do errors.append("two or more different events have the same key and sequence (for example " ~ (example | join(', '))
          ~ "), so their order is undefined. Add a tie-breaking column to `sequence_by`, e.g. sequence_by=['"
          ~ ((cfg.sequence_columns or ['<sequence>'])[0]) ~ "', '<tie breaker>'], or remove the duplicates in the model query.") -%}
    {%- endif -%}
  {%- endif -%}

  {%- if errors -%}
    {%- do exceptions.raise_compiler_error(
          "auto_cdc: model '" ~ cfg.model_name ~ "' received bad data; nothing was written.\n  - " ~ (errors | join('\n  - '))) -%}
  {%- endif -%}
  {{ return({'n_events': row['n_events'], 'n_truncates': row['n_truncates']}) }}
{%- endmacro %}
