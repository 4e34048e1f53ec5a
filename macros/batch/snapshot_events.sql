{#- Stage 3, batch (auto_cdc_from_snapshot): snapshots in, change events out. In: the snapshots
    read and the target's current rows. Out: the SQL of a batch shaped like auto_cdc's (keys,
    written columns, `__cdc_op`, `__cdc_seq` = the version). Every snapshot is compared with the
    one before it: for the first new version, the target's current rows; for the next ones, the
    previous new version. A single new snapshot is joined with the current rows; several are
    ranked by version and compared per key with window functions. -#}

{% macro snapshot_events_sql(cfg, snapshots, read_versions, applied, n_versions) -%}
  {#- `read_versions`: every version read (a snapshot may have no rows); `n_versions` of them are
      applied. `applied`: the rows applied so far (the target), or none when nothing was applied yet. The result has the
      shape of an auto_cdc batch: keys, written columns, __cdc_op, __cdc_seq (the version). -#}
  {%- if n_versions == 1 -%}
    {{ return(adapter.dispatch('snapshot_diff_sql', 'auto_cdc')(cfg, snapshots, read_versions, applied)) }}
  {%- endif -%}
  {{ return(adapter.dispatch('snapshot_series_sql', 'auto_cdc')(cfg, snapshots, read_versions, applied)) }}
{%- endmacro %}


{% macro applied_rows_sql(cfg, applied, groups_relation=none) -%}
  {#- What the last applied snapshot left: the target's current rows; with `groups_relation`
      (replace_using), only those of the groups it lists. `applied` is a relation, or a subquery
      with its alias (target_as_written). -#}
  {%- set current = auto_cdc.quote_identifier('__END_AT') ~ ' is null' if cfg.scd_type == '2' else none -%}
  {%- if groups_relation is none %}
  select {{ auto_cdc.quoted_list(cfg.key_columns + cfg.value_columns) }}
  from {{ applied }}
  {%- if current %}
  where {{ current }}
  {%- endif %}
  {%- else %}
  select {{ auto_cdc.quoted_list(cfg.key_columns + cfg.value_columns, 't.') }}
  from (select * from {{ applied }}) as t
  join {{ groups_relation }} as g on {{ auto_cdc.keys_match(cfg.replace_using, 'g', 't') }}
  {%- if current %}
  where t.{{ current }}
  {%- endif %}
  {%- endif %}
{%- endmacro %}


{% macro target_as_written(target, appended, source_columns) -%}
  {#- The target as this run's writes leave it, before they run: the columns the run appends
      (`appended`, typed as in `source_columns`) are NULL in every row. -#}
  {%- if not appended -%}{{ return(target) }}{%- endif -%}
  {%- set nulls = [] -%}
  {%- for column in source_columns if column.name in appended -%}
    {%- do nulls.append('cast(null as ' ~ column.data_type ~ ') as ' ~ auto_cdc.quote_identifier(column.name)) -%}
  {%- endfor -%}
  {{ return('(select t.*, ' ~ (nulls | join(', ')) ~ ' from ' ~ target ~ ' as t) as ' ~ auto_cdc.quote_identifier('__cdc_target')) }}
{%- endmacro %}


{% macro default__snapshot_diff_sql(cfg, snapshots, read_versions, applied) -%}
  {#- One new snapshot: a full join with the current rows by key finds the new, changed and
      vanished keys in one hash join (5x faster than ranking on PostgreSQL, measured). With
      `replace_using`, only the groups it holds (and applies) are compared. -#}
  {%- set columns = cfg.key_columns + cfg.value_columns -%}
  {%- set groups = cfg.replace_using -%}
  {%- set first_key = auto_cdc.quote_identifier(cfg.key_columns[0]) -%}
  with version as (
    select distinct __cdc_version from {{ read_versions }} where __cdc_applied
  ),
  {%- if groups %}
  snapshot_groups as (
    {{ auto_cdc.applied_groups_sql(groups, read_versions) }}
  ),
  {%- endif %}
  snapshot as (
    select {{ auto_cdc.quoted_list(columns, 's.') }}
    from {{ snapshots }} as s
    join version as v on s.__cdc_version = v.__cdc_version
    {%- if groups %}
    join snapshot_groups as g on {{ auto_cdc.keys_match(groups, 'g', 's') }}
    {%- endif %}
  )
  {%- if applied is none %}
  select snapshot.*, 'upsert' as __cdc_op, v.__cdc_version as __cdc_seq
  from snapshot
  cross join version as v
  {%- else %},
  previous_rows as (
    {{ auto_cdc.applied_rows_sql(cfg, applied, 'snapshot_groups' if groups else none) }}
  )
  select
    {%- for key in cfg.key_columns %}
    coalesce(s.{{ auto_cdc.quote_identifier(key) }}, p.{{ auto_cdc.quote_identifier(key) }}) as {{ auto_cdc.quote_identifier(key) }},
    {%- endfor %}
    {%- for column in cfg.value_columns %}
    s.{{ auto_cdc.quote_identifier(column) }},
    {%- endfor %}
    case when s.{{ first_key }} is null then 'delete' else 'upsert' end as __cdc_op,
    v.__cdc_version as __cdc_seq
  from snapshot as s
  full join previous_rows as p on {{ auto_cdc.keys_match(cfg.key_columns, 's', 'p') }}
  cross join version as v
  {#- Keys are never NULL (validated), so a NULL key marks the side that lacks the row. #}
  where s.{{ first_key }} is null
     or p.{{ first_key }} is null
     {%- for column in cfg.value_columns %}
     or {{ auto_cdc.comparable(cfg, column, 's.') }} is distinct from {{ auto_cdc.comparable(cfg, column, 'p.') }}
     {%- endfor %}
  {%- endif %}
{%- endmacro %}


{% macro applied_groups_sql(groups, read_versions) -%}
  {#- The groups (replace_using) that this run's applied versions hold, once each. A version that
      holds no group is read with NULL groups: not a group. -#}
  select distinct {{ auto_cdc.quoted_list(groups) }} from {{ read_versions }}
  where __cdc_applied and {{ auto_cdc.quote_identifier(groups[0]) }} is not null
{%- endmacro %}


{% macro default__snapshot_series_sql(cfg, snapshots, read_versions, applied) -%}
  {#- Several new snapshots: ranked by version (with `replace_using`, per group, over the versions
      that hold the group), each key compared with its row in the snapshot ranked before. -#}
  {%- set keys = auto_cdc.quoted_list(cfg.key_columns) -%}
  {%- set columns = cfg.key_columns + cfg.value_columns -%}
  {%- set groups = cfg.replace_using -%}
  with versions as (
    select {{ auto_cdc.quoted_list(groups) ~ ', ' if groups }}__cdc_version,
      row_number() over ({% if groups %}partition by {{ auto_cdc.quoted_list(groups) }} {% endif %}order by __cdc_version) as __cdc_rank
    from {{ read_versions }} as v
    where __cdc_applied
    {%- if groups %} and {{ auto_cdc.quote_identifier(groups[0]) }} is not null{% endif %}
  ),
  {%- if groups %}
  snapshot_groups as (
    {{ auto_cdc.applied_groups_sql(groups, read_versions) }}
  ),
  {%- endif %}
  snapshot_rows as (
    {%- if applied is not none %}
    select previous_rows.*, 0 as __cdc_rank
    from ({{ auto_cdc.applied_rows_sql(cfg, applied, 'snapshot_groups' if groups else none) }}) as previous_rows
    union all
    {%- endif %}
    select {{ auto_cdc.quoted_list(columns, 's.') }}, v.__cdc_rank
    from {{ snapshots }} as s
    join versions as v on s.__cdc_version = v.__cdc_version{{ auto_cdc.and_keys_match(groups, 'v', 's') }}
  ),
  compared as (
    select
      snapshot_rows.*,
      lag(__cdc_rank) over per_key as __cdc_prev_rank,
      lead(__cdc_rank) over per_key as __cdc_next_rank
      {%- for column in cfg.value_columns %},
      lag({{ auto_cdc.quote_identifier(column) }}) over per_key as __cdc_prev_{{ loop.index }}
      {%- endfor %}
    from snapshot_rows
    window per_key as (partition by {{ keys }} order by __cdc_rank)
  )
  {# A row is an upsert when its key was absent from the previous snapshot or a value changed. #}
  select {{ auto_cdc.quoted_list(columns, 'c.') }}, 'upsert' as __cdc_op, v.__cdc_version as __cdc_seq
  from compared as c
  join versions as v on v.__cdc_rank = c.__cdc_rank{{ auto_cdc.and_keys_match(groups, 'v', 'c') }}
  where c.__cdc_prev_rank is null
     or c.__cdc_prev_rank < c.__cdc_rank - 1
     {%- for column in cfg.value_columns %}
     or {{ auto_cdc.comparable(cfg, column, 'c.') }} is distinct from {{ auto_cdc.compared(cfg, column, 'c.__cdc_prev_' ~ loop.index) }}
     {%- endfor %}
  union all
  {# A key is deleted at the first version (of its group) that lacks it. #}
  select {{ auto_cdc.quoted_list(cfg.key_columns, 'c.') }}
    {%- for column in cfg.value_columns %}, null{% endfor %}, 'delete', v.__cdc_version
  from compared as c
  join versions as v on v.__cdc_rank = c.__cdc_rank + 1{{ auto_cdc.and_keys_match(groups, 'v', 'c') }}
  where c.__cdc_next_rank is null or c.__cdc_next_rank > c.__cdc_rank + 1
{%- endmacro %}
