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
  {#- SQL: the first NULL that makes a row of the batch (columns `prefix`ed) bad, or NULL (with
      flows, a snapshot flow's version and a change feed flow's own checkpoint column). -#}
  {%- set rules = [] -%}
  {%- set keys = [] -%}
  {%- for key in cfg.key_columns -%}{%- do keys.append(prefix ~ auto_cdc.quote_identifier(key) ~ ' is null') -%}{%- endfor -%}
  {%- do rules.append((prefix ~ "__cdc_op <> 'truncate' and (" ~ keys | join(' or ') ~ ")", 'null_key')) -%}
  {%- for flow in cfg.flows if flow.kind == 'snapshot' -%}
    {%- do rules.append((prefix ~ "__cdc_flow = " ~ auto_cdc.string_literal(flow.name) ~ " and " ~ prefix ~ auto_cdc.seq_names('__cdc_seq', 1)[0] ~ " is null", 'null_version')) -%}
  {%- endfor -%}
  {%- set seqs = [] -%}
  {%- for name in auto_cdc.seq_names('__cdc_seq', cfg.seq_parts) -%}{%- do seqs.append(prefix ~ name ~ ' is null') -%}{%- endfor -%}
  {%- do rules.append((seqs | join(' or '), 'null_sequence')) -%}
  {%- if cfg.system_expr -%}{%- do rules.append((prefix ~ '__cdc_sys is null', 'null_system_sequence')) -%}{%- endif -%}
  {%- if cfg.checkpoint_column -%}
    {%- do rules.append((prefix ~ auto_cdc.quote_identifier(cfg.checkpoint_column) ~ ' is null', 'null_checkpoint')) -%}
  {%- endif -%}
  {%- for flow in cfg.flows if flow.checkpoint_column -%}
    {%- do rules.append((prefix ~ "__cdc_flow = " ~ auto_cdc.string_literal(flow.name) ~ " and " ~ prefix
                         ~ auto_cdc.quote_identifier(auto_cdc.flow_column(cfg.source_columns, flow.checkpoint_column)) ~ " is null", 'null_checkpoint')) -%}
  {%- endfor -%}
  case {% for condition, reason in rules %}when {{ condition }} then '{{ reason }}' {% endfor %}end
{%- endmacro %}


{% macro set_aside_snapshot_rows(cfg, temps) -%}
  {#- auto_cdc_from_snapshot: the snapshot rows read move to temps.raw; temps.bad gets those
      that would fail the run (a NULL version or key, every row of a key that a snapshot holds
      more than once) with their reason, temps.snapshots the others. Returns {'statements'
      (run here), 'count': the rows set aside}; fails when a snapshot named by a version query
      or function would be left without rows, and with `replace_using` when a key is
      duplicated (which group it belongs to is not known, so it cannot keep what it had). -#}
  {%- set statements = [auto_cdc.temp_table_sql(temps.raw, 'select * from ' ~ temps.snapshots), auto_cdc.drop_relation_sql(temps.snapshots),
                        auto_cdc.temp_table_sql(temps.bad, auto_cdc._snapshot_rows_sql(cfg, temps.raw, bad=true)),
                        auto_cdc.temp_table_sql(temps.snapshots, auto_cdc._snapshot_rows_sql(cfg, temps.raw, bad=false))] -%}
  {%- if cfg.replace_using and not cfg.version_column -%}
    {%- do statements.extend(auto_cdc._regrouped_versions_sql(cfg, temps)) -%}
  {%- endif -%}
  {%- set counted -%}
    select (select count(*) from {{ temps.bad }}),
    {%- if cfg.version_column or cfg.replace_using %}
      null,
    {%- else %}
      {#- A version query or function names its version itself: one whose rows were all set
          aside would be read as an empty snapshot, deleting every key. #}
      (select min(__cdc_version) from {{ temps.read_versions }} where __cdc_applied
        and __cdc_version in (select __cdc_version from {{ temps.raw }})
        and __cdc_version not in (select __cdc_version from {{ temps.snapshots }})),
    {%- endif %}
      (select count(*) from {{ temps.bad }} where __cdc_reason = 'duplicate_key')
  {%- endset -%}
  {%- set row = auto_cdc.run_script(statements, counted)[0] -%}
  {%- if row[1] is not none -%}
    {%- do auto_cdc.raise_bad_data(cfg.model_name, ["every row of the snapshot at version " ~ row[1] ~ " would be set aside (on_bad_rows='quarantine'),"
        ~ " which would leave an empty snapshot that deletes every key. Fix that snapshot in the source and run again."], 'a bad snapshot') -%}
  {%- endif -%}
  {%- if cfg.replace_using and row[2] > 0 -%}
    {%- do auto_cdc.raise_bad_data(cfg.model_name, [row[2] ~ " snapshot row(s) share a key with another row of their snapshot: with `replace_using`,"
        ~ " on_bad_rows='quarantine' cannot set them aside (which group the key belongs to is not known, so it could not keep what it had)."
        ~ " Deduplicate them in the model query, or fix them in the source."], 'a bad snapshot') -%}
  {%- endif -%}
  {{ return({'statements': statements, 'count': row[0] | int}) }}
{%- endmacro %}


{% macro _regrouped_versions_sql(cfg, temps) -%}
  {#- With `replace_using` and a version query or function: the groups each version read holds
      (read_versions) recounted over the rows kept. A group whose rows were all set aside is
      then not in its snapshot, so it keeps what it had; a version left with none changes no
      group. (temps.batch, filled later, holds the versions read meanwhile.) -#}
  {%- set groups = cfg.replace_using -%}
  {%- set regrouped -%}
    select {{ auto_cdc.quoted_list(groups, 'g.') }}, v.__cdc_version, v.__cdc_applied
    from {{ temps.batch }} as v
    left join (select distinct {{ auto_cdc.quoted_list(groups) }}, __cdc_version from {{ temps.snapshots }}) as g
      on g.__cdc_version = v.__cdc_version
  {%- endset -%}
  {{ return([auto_cdc.temp_table_sql(temps.batch, 'select distinct __cdc_version, __cdc_applied from ' ~ temps.read_versions),
             auto_cdc.drop_relation_sql(temps.read_versions), auto_cdc.temp_table_sql(temps.read_versions, regrouped),
             auto_cdc.drop_relation_sql(temps.batch)]) }}
{%- endmacro %}


{% macro _snapshot_rows_sql(cfg, raw, bad) -%}
  {#- The bad rows of the snapshots read (`raw`) with their reason (`bad`), or the good ones. -#}
  {%- set keys = cfg.key_columns -%}
  {%- set null_keys = [] -%}
  {%- for key in keys -%}{%- do null_keys.append('s.' ~ auto_cdc.quote_identifier(key) ~ ' is null') -%}{%- endfor -%}
  {%- set reason -%}
    case when s.__cdc_version is null then 'null_version'
         when {{ null_keys | join(' or ') }} then 'null_key'
         when d.__cdc_version is not null then 'duplicate_key' end
  {%- endset -%}
  with duplicates as (
    select {{ auto_cdc.quoted_list(keys) }}, __cdc_version
    from {{ raw }}
    group by {{ auto_cdc.quoted_list(keys) }}, __cdc_version
    having count(*) > 1
  )
  select s.*{% if bad %}, {{ reason }} as __cdc_reason{% endif %}
  from {{ raw }} as s
  left join duplicates as d on {{ auto_cdc.keys_match(keys, 'd', 's') }} and d.__cdc_version = s.__cdc_version
  where {{ reason }} is {{ 'not ' if bad }}null
{%- endmacro %}


{% macro carried_over_rows_sql(cfg, temps, applied) -%}
  {#- A key set aside as duplicated in a snapshot keeps what it had there, as if that snapshot
      had said nothing about it (not as if it lacked the key, which would delete it): what the
      latest applied snapshot before it, where the key was not duplicated too, held of it (its
      row, or nothing); with no such snapshot in the run, its current row in the target
      (`applied`, none on a rebuild). The rows to add to the snapshots: keys, written columns
      and `__cdc_version`. -#}
  {%- set keys = cfg.key_columns -%}
  {%- set columns = keys + cfg.value_columns -%}
  {%- set first_key = auto_cdc.quote_identifier(keys[0]) -%}
  with duplicated as (
    select distinct {{ auto_cdc.quoted_list(keys) }}, __cdc_version from {{ temps.bad }} where __cdc_reason = 'duplicate_key'
  ),
  applied_versions as (
    select distinct __cdc_version from {{ temps.read_versions }} where __cdc_applied
  ),
  previous as (
    select {{ auto_cdc.quoted_list(keys, 'd.') }}, d.__cdc_version as __cdc_carried_to, max(a.__cdc_version) as __cdc_from
    from duplicated as d
    join applied_versions as a on a.__cdc_version < d.__cdc_version
    left join duplicated as there on {{ auto_cdc.keys_match(keys, 'there', 'd') }} and there.__cdc_version = a.__cdc_version
    where there.{{ first_key }} is null
    group by {{ auto_cdc.quoted_list(keys, 'd.') }}, d.__cdc_version
  )
  select {{ auto_cdc.quoted_list(columns, 's.') }}, p.__cdc_carried_to as __cdc_version
  from previous as p
  join {{ temps.snapshots }} as s on {{ auto_cdc.keys_match(keys, 'p', 's') }} and s.__cdc_version = p.__cdc_from
  {%- if applied is not none %}
  union all
  select {{ auto_cdc.quoted_list(columns, 't.') }}, d.__cdc_version
  from duplicated as d
  left join previous as p on {{ auto_cdc.keys_match(keys, 'p', 'd') }} and p.__cdc_carried_to = d.__cdc_version
  join ({{ auto_cdc.applied_rows_sql(cfg, applied) }}) as t on {{ auto_cdc.keys_match(keys, 't', 'd') }}
  where p.{{ first_key }} is null
  {%- endif %}
{%- endmacro %}
