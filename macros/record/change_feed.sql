{#- Stage 7-8, the change feed's rows. In: the run context (`run`) with `change_feed` (the frame from
    opened_change_feed / prepared_change_feed: relation, run_id, the target's columns, the rows a
    full refresh replaced) and the resolved changes (`__cdc_action`). Out: this run's changes
    appended to `<model>__cdc_changes` in the run's transaction (preimages and deletes read from
    the target before it is written, inserts and postimages after), changes older than
    `change_feed_retention` trimmed, and the run id and metrics that agree with them. -#}

{% macro change_feed_statements(run, step) -%}
  {#- `step`: 'before_write' (the target rows the changes touch, as they are) or 'after_write'
      (the rows as written, then retention). Nothing when change_feed is off. Without
      transactions (Spark) all of a run's rows are written before the target: see
      spark__change_feed_statements. -#}
  {{ return(adapter.dispatch('change_feed_statements', 'auto_cdc')(run, step)) }}
{%- endmacro %}

{% macro default__change_feed_statements(run, step) -%}
  {%- set feed = run.change_feed -%}
  {%- if feed is none -%}{{ return([]) }}{%- endif -%}
  {%- set identity = auto_cdc.target_layout(run.cfg).identity -%}
  {%- if step == 'before_write' -%}
    {{ return([auto_cdc.record_images_sql(feed, run.target, run.changes, identity, {'update': 'update_preimage', 'delete': 'delete'}, run.now)]) }}
  {%- endif -%}
  {{ return([
      auto_cdc.record_images_sql(feed, run.target, run.changes, identity, {'insert': 'insert', 'update': 'update_postimage'}, run.now),
      auto_cdc.trim_change_feed_sql(feed.relation, run.cfg.change_feed_retention, run.now) if run.cfg.change_feed_retention else '',
  ]) }}
{%- endmacro %}


{% macro record_images_sql(feed, target, changes, identity, change_types, now) -%}
  {#- The target rows the changes touch, as the change feed's rows: `change_types` maps the
      change's action to the row's _change_type. Before the write: an updated row as it was
      (update_preimage), a deleted row with its last values (delete). After it, read back from
      the target: a new row (insert) or an updated row as it now is (update_postimage),
      including columns the run does not write. -#}
  insert into {{ feed.relation }} ({{ auto_cdc.quoted_list(feed.columns + feed.absent | map(attribute='name') | list) }}, _change_type, _run_id, _committed_at)
  select {{ auto_cdc.quoted_list(feed.columns, 't.') }},{% for column in feed.absent %} null,{% endfor %}
         case c.__cdc_action{% for action, change_type in change_types.items() %} when {{ auto_cdc.string_literal(action) }} then {{ auto_cdc.string_literal(change_type) }}{% endfor %} end,
         {{ feed.run_id }},
         {{ now }}
  from {{ target }} as t
  join {{ changes }} as c on {{ auto_cdc.keys_match(identity, 't', 'c') }}
  where c.__cdc_action in ({{ auto_cdc.string_literals(change_types) }})
{%- endmacro %}


{% macro record_replaced_rows_sql(feed, old_target, columns, absent, run_id, now) -%}
  {#- A full refresh, before the old target is dropped: each of its rows is deleted. `columns`:
      the old target's; `absent`: the change feed's others (columns_rows_lack). -#}
  insert into {{ feed }} ({{ auto_cdc.quoted_list(columns + absent | map(attribute='name') | list) }}, _change_type, _run_id, _committed_at)
  select {{ auto_cdc.quoted_list(columns) }},{% for column in absent %} null,{% endfor %} 'delete', {{ run_id }}, {{ now }}
  from {{ old_target }}
{%- endmacro %}


{% macro trim_change_feed_sql(feed, retention, now) -%}
  {#- Whole runs, oldest first (up to the newest run committed before the horizon): what is left
      is every change from some run on, which is what changes() checks consumers against. -#}
  delete from {{ feed }}
  where _run_id <= (select max(_run_id) from {{ feed }} where _committed_at < {{ auto_cdc.seconds_ago(retention, now) }})
{%- endmacro %}


{% macro run_id_sql(run) -%}
  {#- This run's id in the run history: the change feed's when there is one (it continues past
      a full refresh), else the next after the history's last. -#}
  {%- set feed = run.change_feed -%}
  {%- if feed is not none -%}
    {{ feed.run_id }}
  {%- else -%}
    (select coalesce(max(run_id), 0) + 1 from {{ run.runs }})
  {%- endif -%}
{%- endmacro %}
