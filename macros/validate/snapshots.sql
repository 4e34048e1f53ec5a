{#- Stage 4, validation of snapshots. In: `cfg`, the snapshots read, their events. Out: an error
    for NULL versions or keys, duplicate keys, or a snapshot that would delete more than
    `max_delete_fraction` of the keys; late versions marked as not applied, with a warning. -#}

{% macro validate_snapshots(cfg, temps, processed) -%}
  {#- Bad snapshots fail the run before anything is written; with a version column, versions
      that arrive after a later one was applied are dropped with a warning (with `replace_using`,
      per group). `processed`: the processed versions, none on a first run or a rebuild. -#}
  {%- set snapshots = temps.snapshots -%}
  {%- set keys = cfg.key_columns -%}
  {%- set checks -%}
    select
      coalesce(sum(case when __cdc_version is null then 1 else 0 end), 0) as null_versions
      {%- for key in keys %},
      coalesce(sum(case when {{ auto_cdc.quote_identifier(key) }} is null then 1 else 0 end), 0) as null_key_{{ loop.index }}
      {%- endfor %}
    from {{ snapshots }}
  {%- endset -%}
  {%- set row = run_query(checks).rows[0] -%}
  {%- set errors = [] -%}
  {%- if row['null_versions'] > 0 -%}
    {%- do errors.append(row['null_versions'] ~ " snapshot row(s) have a NULL version in `snapshot_version_column` '" ~ cfg.version_column
        ~ "': every row needs the version of its snapshot.") -%}
  {%- endif -%}
  {%- for key in keys -%}
    {%- if row['null_key_' ~ loop.index] > 0 -%}
      {%- do errors.append(row['null_key_' ~ loop.index] ~ " snapshot row(s) have a NULL in key column '" ~ key ~ "': filter them out or fix them in the model query.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not errors -%}
    {%- set duplicates = run_query(auto_cdc.duplicate_snapshot_key_sql(keys, snapshots)).rows -%}
    {%- if duplicates | length > 0 -%}
      {%- set example = [] -%}
      {%- for key in keys -%}{%- do example.append(key ~ '=' ~ duplicates[0][loop.index0]) -%}{%- endfor -%}
      {%- do errors.append("the snapshot at version " ~ duplicates[0][keys | length] ~ " has " ~ duplicates[0][keys | length + 1]
          ~ " rows for key " ~ (example | join(', ')) ~ "; a snapshot holds one row per key: deduplicate it in the model query.") -%}
    {%- endif -%}
  {%- endif -%}
  {%- if errors -%}
    {%- do auto_cdc.raise_bad_data(cfg.model_name, errors, 'a bad snapshot') -%}
  {%- endif -%}

  {%- if cfg.version_column -%}
    {%- do auto_cdc.skip_late_versions(cfg, temps, processed) -%}
  {%- endif -%}
  {%- if cfg.replace_using -%}
    {#- The groups read, with statistics (PostgreSQL): the planner then finds their current rows
        by the key index (groups first) instead of scanning the target (110 ms against 2 ms for
        one store of a 1,000,000-row target). -#}
    {%- do auto_cdc.run_statements([auto_cdc.analyze_sql(temps.read_versions, cfg.replace_using)]) -%}
  {%- endif -%}
{%- endmacro %}


{% macro duplicate_snapshot_key_sql(keys, snapshots) -%}
  select {{ auto_cdc.quoted_list(keys) }}, __cdc_version, count(*)
  from {{ snapshots }}
  group by {{ auto_cdc.quoted_list(keys) }}, __cdc_version
  having count(*) > 1
  limit 1
{%- endmacro %}


{% macro skip_late_versions(cfg, temps, processed) -%}
  {#- Versions at or below the last applied one arrived too late (with `replace_using`: the last
      applied one of their group, each group a series of its own): recorded as not applied (so
      later runs neither apply nor report them), with a warning. Their rows stay in the working
      table (Spark's cannot delete): every reader of it takes the applied versions only. -#}
  {%- set groups = cfg.replace_using -%}
  {%- set read_versions -%}
    select distinct {{ auto_cdc.quoted_list(groups, 's.') ~ ', ' if groups }}s.__cdc_version,
      {%- if processed is none %} true
      {%- else %} (l.version is null or s.__cdc_version > l.version)
      {%- endif %} as __cdc_applied
    from {{ temps.snapshots }} as s
    {%- if processed is not none %}
    left join (
      select {{ auto_cdc.quoted_list(groups) ~ ', ' if groups }}max(version) as version
      from {{ processed }} where applied
      {%- if groups %} group by {{ auto_cdc.quoted_list(groups) }}{% endif %}
    ) as l on {{ auto_cdc.keys_match(groups, 'l', 's') if groups else '1 = 1' }}
    {%- endif %}
  {%- endset -%}
  {%- do auto_cdc.replace_temp_table(temps.read_versions, read_versions) -%}
  {%- set late_query -%}
    select __cdc_version{{ ', ' ~ auto_cdc.quoted_list(groups) if groups }} from {{ temps.read_versions }} where not __cdc_applied order by 1
  {%- endset -%}
  {%- set late = run_query(late_query).rows -%}
  {%- if late | length > 0 and not groups -%}
    {%- do auto_cdc.model_warning(cfg.model_name, "snapshot version(s) " ~ (late | map(attribute=0) | join(', '))
        ~ " arrived after a later version was applied; skipped. Versions are applied in ascending order.") -%}
  {%- elif late | length > 0 -%}
    {%- set named = [] -%}
    {%- for row in late[:5] -%}{%- do named.append(row[0] ~ " of " ~ auto_cdc.group_text(groups, row, 1)) -%}{%- endfor -%}
    {%- do auto_cdc.model_warning(cfg.model_name, late | length ~ " group snapshot(s) arrived after a later version of their group was applied; skipped: version "
        ~ (named | join(', ')) ~ (", ..." if late | length > 5 else "") ~ ". Each group's versions are applied in ascending order; its other groups applied.") -%}
  {%- endif -%}
{%- endmacro %}


{% macro group_text(groups, row, first) -%}
  {#- A group as the user names it (store_id=12, region=eu), from a query row whose columns from
      `first` on are the group's values. -#}
  {%- set parts = [] -%}
  {%- for column in groups -%}{%- do parts.append(column ~ "=" ~ row[first + loop.index0]) -%}{%- endfor -%}
  {{ return(parts | join(', ')) }}
{%- endmacro %}


{% macro check_mass_delete(cfg, batch, snapshots, read_versions, applied) -%}
  {#- A snapshot that would delete more than `max_delete_fraction` of the keys present before it
      is far more often an empty or truncated extract than real deletes: fail before writing.
      Keys present before a version: the target's current rows for the first version applied,
      else the previous snapshot's rows. With `replace_using`, per group: a group's keys before
      its snapshot (SPEC 6.6). Tables (groups) with fewer than 10 such keys are left alone,
      except from an empty snapshot (check_empty_snapshots). An empty version allowed by
      `allow_empty_snapshots` is allowed whatever `max_delete_fraction` says. -#}
  {%- set fraction = cfg.max_delete_fraction -%}
  {%- set groups = cfg.replace_using -%}
  {%- set group_list = auto_cdc.quoted_list(groups) ~ ', ' if groups else '' -%}
  {%- if not cfg.allow_empty_snapshots -%}
    {%- do auto_cdc.check_empty_snapshots(cfg, batch, snapshots) -%}
  {%- endif -%}
  {%- if fraction >= 1 -%}{{ return(none) }}{%- endif -%}
  {#- Only a version deleting more than fraction * 10 keys can trip the guard: count first. -#}
  {%- set most_query -%}
    select coalesce(max(n), 0) from ({{ auto_cdc.deletes_per_version_sql(batch, groups) }}) as per_version
  {%- endset -%}
  {%- set most = run_query(most_query).rows[0][0] -%}
  {%- if most <= fraction * 10 -%}{{ return(none) }}{%- endif -%}
  {%- set query -%}
    with versions as (
      select {{ group_list }}__cdc_version, row_number() over ({% if groups %}partition by {{ auto_cdc.quoted_list(groups) }} {% endif %}order by __cdc_version) as __cdc_rank
      from {{ read_versions }} where __cdc_applied
      {%- if groups %} and {{ auto_cdc.quote_identifier(groups[0]) }} is not null{% endif %}
    ),
    sizes as (
      select {{ auto_cdc.quoted_list(groups, 'v.') ~ ', ' if groups }}v.__cdc_rank, count(*) as n
      from {{ snapshots }} as s join versions as v on s.__cdc_version = v.__cdc_version{{ auto_cdc.and_keys_match(groups, 's', 'v') }}
      group by {{ auto_cdc.quoted_list(groups, 'v.') ~ ', ' if groups }}v.__cdc_rank
    ),
    deleted as (
      {{ auto_cdc.deletes_per_version_sql(batch, groups) }}
    ),
    {%- if applied is not none and groups %}
    snapshot_groups as (
      {{ auto_cdc.applied_groups_sql(groups, read_versions) }}
    ),
    {%- endif %}
    {%- if applied is not none %}
    current_sizes as (
      {#- With groups: only the current rows of the groups present, found as the batch finds them. #}
      select {{ auto_cdc.quoted_list(groups, 'r.') ~ ', ' if groups }}count(*) as n
      from ({{ auto_cdc.applied_rows_sql(cfg, applied, 'snapshot_groups' if groups else none) }}) as r
      {%- if groups %}
      group by {{ auto_cdc.quoted_list(groups, 'r.') }}
      {%- endif %}
    ),
    {%- endif %}
    checked as (
      select {{ auto_cdc.quoted_list(groups, 'v.') ~ ', ' if groups }}v.__cdc_rank, v.__cdc_version, d.n as deleted,
        case when v.__cdc_rank = 1
          then {% if applied is none %}0{% else %}coalesce(c.n, 0){% endif %}
          else coalesce(p.n, 0) end as present
      from versions as v
      join deleted as d on d.__cdc_seq = v.__cdc_version{{ auto_cdc.and_keys_match(groups, 'd', 'v') }}
      left join sizes as p on p.__cdc_rank = v.__cdc_rank - 1{{ auto_cdc.and_keys_match(groups, 'p', 'v') }}
      {%- if applied is not none %}
      left join current_sizes as c on {{ auto_cdc.keys_match(groups, 'c', 'v') if groups else '1 = 1' }}
      {%- endif %}
    )
    select __cdc_version, deleted, present{{ ', ' ~ auto_cdc.quoted_list(groups) if groups }} from checked
    where present >= 10 and deleted > {{ fraction }} * present
      {%- if cfg.allow_empty_snapshots %}
      and exists (select 1 from {{ snapshots }} as s where s.__cdc_version = checked.__cdc_version)
      {%- endif %}
    order by __cdc_version
    limit 1
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if rows | length > 0 -%}
    {%- set version, deleted, present = rows[0][0], rows[0][1], rows[0][2] -%}
    {%- set where = (" of " ~ auto_cdc.group_text(groups, rows[0], 3)) if groups else "" -%}
    {%- do auto_cdc.raise_bad_data(cfg.model_name, [
        "the snapshot" ~ where ~ " at version " ~ version ~ " would delete " ~ deleted ~ " of the " ~ present ~ " keys"
        ~ (" of that group" if groups else "") ~ " present before it ("
        ~ (100 * deleted / present) | round | int ~ "%), more than `max_delete_fraction` (" ~ fraction ~ ") allows. An empty or truncated"
        ~ " extract looks like this: fix the source. If the deletes are real, raise `max_delete_fraction` on the model for this run"
        ~ " (1 turns the guard off)."], 'a snapshot that looks truncated') -%}
  {%- endif -%}
{%- endmacro %}


{% macro deletes_per_version_sql(batch, groups=[]) -%}
  {%- set group_list = auto_cdc.quoted_list(groups) ~ ', ' if groups else '' -%}
  select {{ group_list }}__cdc_seq, count(*) as n from {{ batch }} where __cdc_op = 'delete' group by {{ group_list }}__cdc_seq
{%- endmacro %}


{% macro check_empty_snapshots(cfg, batch, snapshots) -%}
  {#- A snapshot with no rows that would delete current rows is an extract that failed, or a
      staging view built with `--empty` (limit 0), far more often than a source that emptied:
      it fails before writing whatever the table's size, unless `allow_empty_snapshots`. An
      empty version deletes every key present before it, so its deletes count those keys. -#}
  {%- set query -%}
    select d.__cdc_seq, d.n from ({{ auto_cdc.deletes_per_version_sql(batch) }}) as d
    where not exists (select 1 from {{ snapshots }} as s where s.__cdc_version = d.__cdc_seq)
    order by d.__cdc_seq
    limit 1
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- if rows | length > 0 -%}
    {%- do auto_cdc.raise_bad_data(cfg.model_name, [
        "the snapshot at version " ~ rows[0][0] ~ " has no rows and would delete all " ~ rows[0][1] ~ " keys present before it."
        ~ " A failed or empty extract looks like this, and so does an upstream view built with `dbt run --empty` (it selects"
        ~ " `limit 0` until it is built again): rebuild it (`dbt run -s +" ~ cfg.model_name ~ "`) or fix the source. If the source"
        ~ " really is empty now, set `allow_empty_snapshots: true` on the model (under `meta`, or as a config) for this run."], 'an empty snapshot') -%}
  {%- endif -%}
{%- endmacro %}
