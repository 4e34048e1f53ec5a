{#- auto_cdc_from_snapshot: snapshots in, change events out. Every snapshot is compared with the
    one before it: for the first new version, the target's current rows (what the last applied
    snapshot left); for the next ones, the previous new version. All versions at once, in one
    statement: the rows of all of them ranked by version, compared per key with window functions. -#}

{% macro snapshot_events_sql(cfg, snapshots, read_versions, previous) -%}
  {{ return(adapter.dispatch('snapshot_events_sql', 'auto_cdc')(cfg, snapshots, read_versions, previous)) }}
{%- endmacro %}

{% macro default__snapshot_events_sql(cfg, snapshots, read_versions, previous) -%}
  {#- `read_versions`: every version read (a snapshot may have no rows). `previous`: the target,
      or none when nothing was applied yet. The result has the shape of an auto_cdc batch:
      keys, written columns, __cdc_op, __cdc_seq (the version). -#}
  {%- set keys = auto_cdc.quoted_list(cfg.key_columns) -%}
  {%- set columns = cfg.key_columns + cfg.value_columns -%}
  with versions as (
    select __cdc_version, row_number() over (order by __cdc_version) as __cdc_rank
    from {{ read_versions }} as v
    where __cdc_applied
  ),
  snapshot_rows as (
    {%- if previous is not none %}
    select {{ auto_cdc.quoted_list(columns) }}, 0 as __cdc_rank
    from {{ previous }}
    {%- if cfg.scd_type == '2' %}
    where {{ auto_cdc.quote_identifier('__END_AT') }} is null
    {%- endif %}
    union all
    {%- endif %}
    select {{ auto_cdc.quoted_list(columns, 's.') }}, v.__cdc_rank
    from {{ snapshots }} as s
    join versions as v on s.__cdc_version = v.__cdc_version
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
  join versions as v on v.__cdc_rank = c.__cdc_rank
  where c.__cdc_prev_rank is null
     or c.__cdc_prev_rank < c.__cdc_rank - 1
     {%- for column in cfg.value_columns %}
     or c.{{ auto_cdc.quote_identifier(column) }} is distinct from c.__cdc_prev_{{ loop.index }}
     {%- endfor %}
  union all
  {# A key is deleted at the first version that lacks it. #}
  select {{ auto_cdc.quoted_list(cfg.key_columns, 'c.') }}
    {%- for column in cfg.value_columns %}, null{% endfor %}, 'delete', v.__cdc_version
  from compared as c
  join versions as v on v.__cdc_rank = c.__cdc_rank + 1
  where c.__cdc_next_rank is null or c.__cdc_next_rank > c.__cdc_rank + 1
{%- endmacro %}
