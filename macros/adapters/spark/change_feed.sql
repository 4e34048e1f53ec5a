{#- Spark, stage 7-8, the change feed without transactions. A run's rows are written in one
    statement before the target, computed from the target as it is and the changes: preimages
    and deletes are the rows the changes touch, postimages and inserts the rows the target's
    MERGE will leave (the written columns from the changes, the others as they were). So the
    change feed holds, before the target is touched, every change the run makes to it.

    A run stopped before its run history row (its commit point) leaves rows with a run id past
    the last recorded one: consumers do not see them (recorded_changes_sql), and the next run,
    which takes that run id again, replaces them in the same statement. The rows they name are
    touched by that run too (the stopped run may have written them, leaving this one nothing to
    change there), and their preimages come from them, not from the target, which may hold the
    stopped run's writes: they give each row as the last recorded run left it (a preimage or a
    delete), or say it did not exist (an insert). Every run's preimages are thus the recorded
    target's rows, however many runs stopped before it (test_spark.py, the killed-run tests). -#}

{% macro spark__change_feed_statements(run, step) -%}
  {%- set feed = run.change_feed -%}
  {%- if feed is none -%}{{ return([]) }}{%- endif -%}
  {%- set cfg = run.cfg -%}
  {%- if step == 'after_write' -%}
    {{ return([auto_cdc.trim_change_feed_sql(feed.relation, cfg.change_feed_retention, run.now) if cfg.change_feed_retention else '']) }}
  {%- endif -%}
  {%- set layout = auto_cdc.target_layout(cfg) -%}
  {%- set names = feed.columns + ['_change_type'] + feed.absent | map(attribute='name') | list + ['_run_id', '_committed_at'] -%}
  {%- set columns = auto_cdc.quoted_list(names) -%}
  {%- set check = auto_cdc.fence_check_sql(run.fence) if run.fence else 'true' -%}
  {%- set rows -%}
    select r.*,{% for column in feed.absent %} cast(null as {{ column.data_type }}) as {{ auto_cdc.quote_identifier(column.name) }},{% endfor %} {{ feed.run_id }} as _run_id, {{ run.now }} as _committed_at
    from ({{ auto_cdc.spark_change_rows_sql(feed, run.target, run.changes, layout) }}) as r
    where {{ check }}
  {%- endset -%}
  {%- if not feed.unrecorded -%}
    {{ return(['insert into ' ~ feed.relation ~ ' (' ~ columns ~ ')\n' ~ rows]) }}
  {%- endif -%}
  {#- The unrecorded run's rows go in the same commit as this run's: one source row, the
      marker, matches them all. -#}
  {%- set merge -%}
  merge into {{ feed.relation }} as f
  using (
    select *, false as __cdc_unrecorded from ({{ rows }}) as r
    union all
    select {% for column in names %}null, {% endfor %}true from (select 1) as one where {{ check }}
  ) as s
  on s.__cdc_unrecorded and f._run_id > {{ feed.recorded_run_id }}
  when matched then delete
  when not matched and not s.__cdc_unrecorded then insert ({{ columns }})
    values ({{ auto_cdc.quoted_list(names, 's.') }})
  {%- endset -%}
  {{ return([merge]) }}
{%- endmacro %}


{% macro spark_change_rows_sql(feed, target, changes, layout) -%}
  {#- This run's change rows (the target's columns, then _change_type), before the target is
      written: each row the run touches, as the last recorded run left it (`recorded`), and as
      the target's MERGE leaves it (`written`). With an unrecorded run's rows, the rows they
      name are touched too: that run may have written them already, so this run may find
      nothing left to change there (the changes leave out what the target already holds), yet
      they changed since the last recorded run. -#}
  {%- set identity = layout.identity -%}
  {%- set written_columns = (layout.identity + layout.updated) | map('lower') | list -%}
  {%- set cols = feed.columns -%}
  with touched as (
    select * from {{ changes }} as c where c.__cdc_action in ('insert', 'update', 'delete')
  ),
  {%- if feed.unrecorded %}
  unrecorded as (
    select * from {{ feed.relation }} where _run_id > {{ feed.recorded_run_id }}
  ),
  {%- endif %}
  keys as (
    select {{ auto_cdc.quoted_list(identity) }} from touched
    {%- if feed.unrecorded %}
    union
    select {{ auto_cdc.quoted_list(identity) }} from unrecorded
    {%- endif %}
  ),
  current_rows as (
    select {{ auto_cdc.quoted_list(cols, 't.') }} from {{ target }} as t
    where exists (select 1 from keys as k where {{ auto_cdc.keys_match(identity, 'k', 't') }})
  ),
  recorded as (
    select {{ auto_cdc.quoted_list(cols, 't.') }}, true as __cdc_found from current_rows as t
    {%- if feed.unrecorded %}
    where not exists (select 1 from unrecorded as u where {{ auto_cdc.keys_match(identity, 'u', 't') }})
    union all
    select {{ auto_cdc.quoted_list(cols, 'u.') }}, true as __cdc_found from unrecorded as u
    where u._change_type in ('update_preimage', 'delete')
    {%- endif %}
  ),
  written as (
    select
      {%- for column in cols %}
      {{ 'c.' if column | lower in written_columns else 't.' }}{{ auto_cdc.quote_identifier(column) }},
      {%- endfor %}
      true as __cdc_found
    from touched as c
    left join current_rows as t on {{ auto_cdc.keys_match(identity, 'c', 't') }}
    where c.__cdc_action in ('insert', 'update')
    {%- if feed.unrecorded %}
    union all
    select {{ auto_cdc.quoted_list(cols, 't.') }}, true as __cdc_found from current_rows as t
    where not exists (select 1 from touched as c where {{ auto_cdc.keys_match(identity, 'c', 't') }})
    {%- endif %}
  )
  select {{ auto_cdc.quoted_list(cols, 'b.') }},
         case when w.__cdc_found then 'update_preimage' else 'delete' end as _change_type
  from recorded as b
  left join written as w on {{ auto_cdc.keys_match(identity, 'w', 'b') }}
  union all
  select {{ auto_cdc.quoted_list(cols, 'w.') }},
         case when b.__cdc_found then 'update_postimage' else 'insert' end as _change_type
  from written as w
  left join recorded as b on {{ auto_cdc.keys_match(identity, 'w', 'b') }}
{%- endmacro %}
