{#- auto_cdc_from_snapshot: snapshots in, change events out. Every snapshot is compared with the
    one before it: for the first new version, the target's current rows (what the last applied
    snapshot left); for the next ones, the previous new version. One statement either way: a
    single new snapshot (every run of the per-run way) is joined with the current rows; several
    are ranked by version and compared per key with window functions. -#}

{% macro snapshot_events_sql(cfg, snapshots, read_versions, previous, n_versions) -%}
  {#- `read_versions`: every version read (a snapshot may have no rows); `n_versions` of them are
      applied. `previous`: the target, or none when nothing was applied yet. The result has the
      shape of an auto_cdc batch: keys, written columns, __cdc_op, __cdc_seq (the version). -#}
  {%- if n_versions == 1 -%}
    {{ return(adapter.dispatch('snapshot_diff_sql', 'auto_cdc')(cfg, snapshots, read_versions, previous)) }}
  {%- endif -%}
  {{ return(adapter.dispatch('snapshot_series_sql', 'auto_cdc')(cfg, snapshots, read_versions, previous)) }}
{%- endmacro %}


{% macro previous_rows_sql(cfg, previous) -%}
  {#- What the last applied snapshot left: the target's current rows. -#}
  select {{ auto_cdc.quoted_list(cfg.key_columns + cfg.value_columns) }}
  from {{ previous }}
  {%- if cfg.scd_type == '2' %}
  where {{ auto_cdc.quote_identifier('__END_AT') }} is null
  {%- endif %}
{%- endmacro %}


{% macro default__snapshot_diff_sql(cfg, snapshots, read_versions, previous) -%}
  {#- One new snapshot: a full join with the current rows by key finds the new, changed and
      vanished keys in one hash join (5x faster than ranking on PostgreSQL, measured). -#}
  {%- set columns = cfg.key_columns + cfg.value_columns -%}
  {%- set first_key = auto_cdc.quote_identifier(cfg.key_columns[0]) -%}
  with version as (
    select __cdc_version from {{ read_versions }} where __cdc_applied
  ),
  snapshot as (
    select {{ auto_cdc.quoted_list(columns, 's.') }}
    from {{ snapshots }} as s
    join version as v on s.__cdc_version = v.__cdc_version
  )
  {%- if previous is none %}
  select snapshot.*, 'upsert' as __cdc_op, v.__cdc_version as __cdc_seq
  from snapshot
  cross join version as v
  {%- else %},
  previous_rows as (
    {{ auto_cdc.previous_rows_sql(cfg, previous) }}
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


{% macro default__snapshot_series_sql(cfg, snapshots, read_versions, previous) -%}
  {%- set keys = auto_cdc.quoted_list(cfg.key_columns) -%}
  {%- set columns = cfg.key_columns + cfg.value_columns -%}
  with versions as (
    select __cdc_version, row_number() over (order by __cdc_version) as __cdc_rank
    from {{ read_versions }} as v
    where __cdc_applied
  ),
  snapshot_rows as (
    {%- if previous is not none %}
    select previous_rows.*, 0 as __cdc_rank
    from ({{ auto_cdc.previous_rows_sql(cfg, previous) }}) as previous_rows
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
     or {{ auto_cdc.comparable(cfg, column, 'c.') }} is distinct from {{ auto_cdc.compared(cfg, column, 'c.__cdc_prev_' ~ loop.index) }}
     {%- endfor %}
  union all
  {# A key is deleted at the first version that lacks it. #}
  select {{ auto_cdc.quoted_list(cfg.key_columns, 'c.') }}
    {%- for column in cfg.value_columns %}, null{% endfor %}, 'delete', v.__cdc_version
  from compared as c
  join versions as v on v.__cdc_rank = c.__cdc_rank + 1
  where c.__cdc_next_rank is null or c.__cdc_next_rank > c.__cdc_rank + 1
{%- endmacro %}


{% macro check_mass_delete(cfg, batch, snapshots, read_versions, previous) -%}
  {#- A snapshot that would delete more than `max_delete_fraction` of the keys present before it
      is far more often an empty or truncated extract than real deletes: fail before writing.
      Keys present before a version: the target's current rows for the first version applied,
      else the previous snapshot's rows. Tables with fewer than 10 such keys are left alone. -#}
  {%- set fraction = cfg.max_delete_fraction -%}
  {%- if fraction >= 1 -%}{{ return(none) }}{%- endif -%}
  {#- Only a version deleting more than fraction * 10 keys can trip the guard: count first. -#}
  {%- set most = run_query("select coalesce(max(n), 0) from (select count(*) as n from " ~ batch
                            ~ " where __cdc_op = 'delete' group by __cdc_seq) as per_version").rows[0][0] -%}
  {%- if most <= fraction * 10 -%}{{ return(none) }}{%- endif -%}
  {%- set query -%}
    with versions as (
      select __cdc_version, row_number() over (order by __cdc_version) as __cdc_rank
      from {{ read_versions }} where __cdc_applied
    ),
    sizes as (
      select v.__cdc_rank, count(*) as n
      from {{ snapshots }} as s join versions as v on s.__cdc_version = v.__cdc_version
      group by v.__cdc_rank
    ),
    deleted as (
      select __cdc_seq, count(*) as n from {{ batch }} where __cdc_op = 'delete' group by __cdc_seq
    ),
    checked as (
      select v.__cdc_rank, v.__cdc_version, d.n as deleted,
        case when v.__cdc_rank = 1
          then {% if previous is none %}0{% else %}(select count(*) from ({{ auto_cdc.previous_rows_sql(cfg, previous) }}) as current_rows){% endif %}
          else coalesce(p.n, 0) end as present
      from versions as v
      join deleted as d on d.__cdc_seq = v.__cdc_version
      left join sizes as p on p.__cdc_rank = v.__cdc_rank - 1
    )
    select __cdc_version, deleted, present from checked
    where present >= 10 and deleted > {{ fraction }} * present
    order by __cdc_rank
    limit 1
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if rows | length > 0 -%}
    {%- set version, deleted, present = rows[0] -%}
    {%- do auto_cdc.raise_bad_data(cfg.model_name, [
        "the snapshot at version " ~ version ~ " would delete " ~ deleted ~ " of the " ~ present ~ " keys present before it ("
        ~ (100 * deleted / present) | round | int ~ "%), more than `max_delete_fraction` (" ~ fraction ~ ") allows. An empty or truncated"
        ~ " extract looks like this: fix the source. If the deletes are real, raise `max_delete_fraction` on the model for this run"
        ~ " (1 turns the guard off)."], 'a snapshot that looks truncated') -%}
  {%- endif -%}
{%- endmacro %}
