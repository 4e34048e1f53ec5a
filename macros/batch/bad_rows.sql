{#- Stage 3, batch, with on_bad_rows='quarantine' (SPEC 6.7). In: the batch as read (temps.raw).
    Out: temps.bad, the rows that would fail the run, each with its reason, and temps.batch, the
    others: the run goes on as if the bad rows had never arrived. Their quarantine write is in
    record/quarantine.sql. -#}

{% macro set_aside_statements(cfg, temps) -%}
  {#- Fills temps.bad and temps.batch from temps.raw (three working tables, not one changed in
      place: Spark's are tables without DELETE). -#}
  {{ return([auto_cdc.temp_table_sql(temps.bad, auto_cdc._set_aside_sql(cfg, temps.raw, bad=true))]
            + auto_cdc.fill_temp_table_sql(temps.batch, auto_cdc._set_aside_sql(cfg, temps.raw, bad=false), cfg.key_columns + ['__cdc_op'])) }}
{%- endmacro %}


{% macro _set_aside_sql(cfg, raw, bad) -%}
  {#- The bad rows of `raw` with their reason (`bad`), or the good ones as read. A row is bad
      for the first of validate_batch's rules it breaks: a NULL key (not a truncate), sequence,
      system sequence or checkpoint value; of the rest, every event of a key and sequence that
      has two different events (conflicting_events' rule) is. -#}
  {%- set identity = auto_cdc.event_identity(cfg) -%}
  with conflicts as (
    select {{ auto_cdc.quoted_list(identity) }}
    from ({{ auto_cdc.distinct_events_sql(cfg, raw, auto_cdc._null_reason_sql(cfg, '') ~ ' is null') }}) as events
    group by {{ auto_cdc.quoted_list(identity) }}
    having count(*) > 1
  )
  select src.*{% if bad %}, coalesce({{ auto_cdc._null_reason_sql(cfg, 'src.') }}, 'conflicting_duplicate') as __cdc_reason{% endif %}
  from {{ raw }} as src
  left join conflicts as c on src.__cdc_op <> 'truncate' and {{ auto_cdc.keys_match(identity, 'c', 'src') }}
  where {{ auto_cdc._null_reason_sql(cfg, 'src.') }} is {{ 'not ' if bad }}null
    {{ 'or' if bad else 'and' }} c.{{ auto_cdc.quote_identifier(identity[0]) }} is {{ 'not ' if bad }}null
{%- endmacro %}


{% macro _null_reason_sql(cfg, prefix) -%}
  {#- SQL: the first NULL that makes a row of the batch (columns `prefix`ed) bad, or NULL. -#}
  {%- set rules = [] -%}
  {%- set keys = [] -%}
  {%- for key in cfg.key_columns -%}{%- do keys.append(prefix ~ auto_cdc.quote_identifier(key) ~ ' is null') -%}{%- endfor -%}
  {%- do rules.append((prefix ~ "__cdc_op <> 'truncate' and (" ~ keys | join(' or ') ~ ")", 'null_key')) -%}
  {%- set seqs = [] -%}
  {%- for name in auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}{%- do seqs.append(prefix ~ name ~ ' is null') -%}{%- endfor -%}
  {%- do rules.append((seqs | join(' or '), 'null_sequence')) -%}
  {%- if cfg.system_expr -%}{%- do rules.append((prefix ~ '__cdc_sys is null', 'null_system_sequence')) -%}{%- endif -%}
  {%- if cfg.checkpoint_column -%}
    {%- do rules.append((prefix ~ auto_cdc.quote_identifier(cfg.checkpoint_column) ~ ' is null', 'null_checkpoint')) -%}
  {%- endif -%}
  case {% for condition, reason in rules %}when {{ condition }} then '{{ reason }}' {% endfor %}end
{%- endmacro %}
