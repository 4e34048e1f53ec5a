{#- Stage 4, validation of snapshots. In: `cfg`, the snapshots read, their events. Out: an error
    for NULL versions or keys, duplicate keys, or a snapshot that would delete more than
    `max_delete_fraction` of the keys; late versions marked as not applied, with a warning. -#}

{% macro validate_snapshots(cfg, temps) -%}
  {#- Bad snapshots fail the run before anything is written; with a version column, versions
      that arrive after a later one was applied are dropped with a warning. -#}
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
    {%- do auto_cdc.skip_late_versions(cfg, temps) -%}
  {%- endif -%}
{%- endmacro %}


{% macro duplicate_snapshot_key_sql(keys, snapshots) -%}
  select {{ auto_cdc.quoted_list(keys) }}, __cdc_version, count(*)
  from {{ snapshots }}
  group by {{ auto_cdc.quoted_list(keys) }}, __cdc_version
  having count(*) > 1
  limit 1
{%- endmacro %}


{% macro skip_late_versions(cfg, temps) -%}
  {#- Versions at or below the last processed one arrived too late: recorded as not applied (so
      later runs neither apply nor report them), with a warning. Their rows stay in the working
      table (Spark's cannot delete): every reader of it takes the applied versions only. -#}
  {%- set read_versions -%}
    select distinct s.__cdc_version,
      not exists (select 1 from {{ temps.last_version }} as l where s.__cdc_version <= l.version) as __cdc_applied
    from {{ temps.snapshots }} as s
  {%- endset -%}
  {%- do auto_cdc.replace_temp_table(temps.read_versions, read_versions) -%}
  {%- set late_query -%}select __cdc_version from {{ temps.read_versions }} where not __cdc_applied order by 1{%- endset -%}
  {%- set late = run_query(late_query).rows -%}
  {%- if late | length > 0 -%}
    {%- do auto_cdc.model_warning(cfg.model_name, "snapshot version(s) " ~ (late | map(attribute=0) | join(', '))
        ~ " arrived after a later version was applied; skipped. Versions are applied in ascending order.") -%}
  {%- endif -%}
{%- endmacro %}


{% macro check_mass_delete(cfg, batch, snapshots, read_versions, applied) -%}
  {#- A snapshot that would delete more than `max_delete_fraction` of the keys present before it
      is far more often an empty or truncated extract than real deletes: fail before writing.
      Keys present before a version: the target's current rows for the first version applied,
      else the previous snapshot's rows. Tables with fewer than 10 such keys are left alone,
      except from an empty snapshot (check_empty_snapshots). An empty version allowed by
      `allow_empty_snapshots` is allowed whatever `max_delete_fraction` says. -#}
  {%- set fraction = cfg.max_delete_fraction -%}
  {%- if not cfg.allow_empty_snapshots -%}
    {%- do auto_cdc.check_empty_snapshots(cfg, batch, snapshots) -%}
  {%- endif -%}
  {%- if fraction >= 1 -%}{{ return(none) }}{%- endif -%}
  {#- Only a version deleting more than fraction * 10 keys can trip the guard: count first. -#}
  {%- set most_query -%}
    select coalesce(max(n), 0) from ({{ auto_cdc.deletes_per_version_sql(batch) }}) as per_version
  {%- endset -%}
  {%- set most = run_query(most_query).rows[0][0] -%}
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
      {{ auto_cdc.deletes_per_version_sql(batch) }}
    ),
    checked as (
      select v.__cdc_rank, v.__cdc_version, d.n as deleted,
        case when v.__cdc_rank = 1
          then {% if applied is none %}0{% else %}(select count(*) from ({{ auto_cdc.applied_rows_sql(cfg, applied) }}) as current_rows){% endif %}
          else coalesce(p.n, 0) end as present
      from versions as v
      join deleted as d on d.__cdc_seq = v.__cdc_version
      left join sizes as p on p.__cdc_rank = v.__cdc_rank - 1
    )
    select __cdc_version, deleted, present from checked
    where present >= 10 and deleted > {{ fraction }} * present
      {%- if cfg.allow_empty_snapshots %}
      and exists (select 1 from {{ snapshots }} as s where s.__cdc_version = checked.__cdc_version)
      {%- endif %}
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


{% macro deletes_per_version_sql(batch) -%}
  select __cdc_seq, count(*) as n from {{ batch }} where __cdc_op = 'delete' group by __cdc_seq
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
