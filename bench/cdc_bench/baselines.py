"""The baselines auto_cdc is measured against on DuckDB and PostgreSQL: the hand-written
statements one would write for the same change (SCD1: a dedupe and one MERGE; SCD2: close the
current rows, insert the new versions), run on a copy of the target through the driver, with a
check that both left the same table; the same set-up without a baseline (`scaling`); and `dbt
snapshot` (check strategy) against auto_cdc_from_snapshot over the same series of snapshots.
"""

from __future__ import annotations

import postgres_server
from harness import CdcProject

from .measure import Comparison, Measure, dbt, timed_sql
from .workloads import Workload, load_batch, load_initial, series


def _prepared(project: CdcProject, server: postgres_server.PostgresServer | None, w: Workload, scd: int) -> None:
    load_initial(project, w)
    project.model("dim", "select * from {{ target.schema }}.events", **w.config(), stored_as_scd_type=scd)
    dbt(project, server, "run", "-s", "dim", "--full-refresh")
    if project.adapter == "postgres":
        for table in ("dim", "dim__cdc_state"):
            project.execute(f"analyze {project.relation(table)}")


def _copy_for_baseline(project: CdcProject, scd: int) -> None:
    """The baseline's target: the same rows, indexed on what its statements look up."""
    dim, base = project.relation("dim"), project.relation("base")
    project.execute(f"create table {base} as select * from {dim}")
    if project.adapter == "postgres":
        index = '(id) where "__END_AT" is null' if scd == 2 else "(id)"
        project.execute(f"create {'unique ' if scd == 1 else ''}index on {base} {index}")
        project.execute(f"analyze {base}")


def scd1_merge_sql(base: str, events: str, cols: list[str]) -> str:
    """The hand-written SCD1 change: each key's newest event, merged into the target (the
    baseline on every adapter, Spark's included)."""
    ranked = f"select *, row_number() over (partition by id order by seq desc) as rn from {events}"
    latest = f"select * from ({ranked}) as e where rn = 1"
    return (
        f"merge into {base} as t using ({latest}) as s on t.id = s.id "
        "when matched and s.op = 'D' then delete "
        f"when matched then update set {', '.join(f'{c} = s.{c}' for c in cols)} "
        f"when not matched and s.op <> 'D' then insert (id, {', '.join(cols)}) "
        f"values (s.id, {', '.join('s.' + c for c in cols)})"
    )


def scd1_against_baseline(project: CdcProject, server, w: Workload) -> Comparison:
    _prepared(project, server, w, 1)
    _copy_for_baseline(project, 1)
    load_batch(project, w)
    cols = w.written_columns()
    baseline = timed_sql(project, [scd1_merge_sql(project.relation("base"), project.relation("events"), cols)])
    ours = dbt(project, server, "run", "-s", "dim")
    return Comparison(ours, baseline, same_table(project, "base", "dim"))


def scd2_against_baseline(project: CdcProject, server, w: Workload) -> Comparison:
    _prepared(project, server, w, 2)
    _copy_for_baseline(project, 2)
    load_batch(project, w)
    cols = w.value_columns()
    events, base = project.relation("events"), project.relation("base")
    start, end = '"__START_AT"', '"__END_AT"'
    changed = " or ".join(f"t.{c} is distinct from s.{c}" for c in cols)
    baseline = timed_sql(
        project,
        [
            f"update {base} as t set {end} = s.seq from {events} as s "
            f"where t.id = s.id and t.{end} is null and (s.op = 'D' or {changed})",
            f"insert into {base} (id, {', '.join(cols)}, {start}, {end}) "
            f"select s.id, {', '.join('s.' + c for c in cols)}, s.seq, null from {events} as s "
            f"where s.op <> 'D' and not exists (select 1 from {base} as t where t.id = s.id and t.{end} is null)",
        ],
    )
    ours = dbt(project, server, "run", "-s", "dim")
    return Comparison(ours, baseline, same_table(project, "base", "dim"))


def same_table(project: CdcProject, a: str, b: str) -> bool:
    left, right = project.relation(a), project.relation(b)
    differing = project.query(
        f"select count(*) from ((select * from {left} except select * from {right})"
        f" union all (select * from {right} except select * from {left})) as d"
    )
    return differing == [(0,)]


def scaling(project: CdcProject, server, w: Workload, scd: int) -> Measure:
    _prepared(project, server, w, scd)
    load_batch(project, w)
    return dbt(project, server, "run", "-s", "dim")


def snapshots_against_dbt_snapshot(project: CdcProject, server, rows: int, versions: int) -> dict[str, object]:
    """The same series of full snapshots (5% of rows changed, 1% deleted, 1% new each time)
    through auto_cdc_from_snapshot (SCD2, per-run versions) and `dbt snapshot` (check strategy,
    all columns, hard deletes invalidated)."""
    project.create_table("source", {"id": "bigint", "c1": "varchar", "c2": "varchar"})
    source = project.relation("source")
    project.execute(f"insert into {source} select i, 'a ' || i, 'b ' || i from {series(project.adapter, rows)}")
    project.model(
        "history",
        "select * from {{ target.schema }}.source",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        stored_as_scd_type=2,
    )
    project.write(
        "snapshots/dbt_history.yml",
        "snapshots:\n  - name: dbt_history\n    relation: source('bench', 'source')\n"
        "    config: {unique_key: id, strategy: check, check_cols: all, hard_deletes: invalidate}\n",
    )
    project.write(
        "models/sources.yml",
        f"sources:\n  - name: bench\n    schema: {project.schema}\n    tables: [{{name: source}}]\n",
    )
    ours: list[Measure] = []
    theirs: list[Measure] = []
    for version in range(versions):
        if version:
            step = 20  # 5% of the keys
            project.execute(f"update {source} set c1 = 'v{version} ' || id where id % {step} = {version % step}")
            project.execute(f"delete from {source} where id % 100 = {(version + 50) % 100}")
            first_new = rows + version * rows // 100
            new_rows = series(project.adapter, rows // 100)
            project.execute(f"insert into {source} select {first_new} + i, 'new', 'new' from {new_rows}")
        ours.append(dbt(project, server, "run", "-s", "history"))
        theirs.append(dbt(project, server, "snapshot", "-s", "dbt_history"))
    return {"ours": ours, "theirs": theirs}


def scoped_snapshot_against_delete_insert(project: CdcProject, server, stores: int, per_store: int) -> Comparison:
    """One store's complete extract (`replace_using=['store_id']`, SCD1, per-run versions; 5% of
    its items changed, 1% gone, 1% new) into a target of `stores` x `per_store` rows, against
    the hand-written reload of that store: delete its rows, insert the extract (no history)."""
    project.create_table("extracts", {"store_id": "bigint", "item": "bigint", "qty": "bigint", "note": "varchar"})
    extracts = project.relation("extracts")
    rows = series(project.adapter, stores * per_store)
    item = f"cast((i - i % {stores}) / {stores} as bigint)"  # exact: the quotient is whole
    project.execute(f"insert into {extracts} select i % {stores}, {item}, i, 'n ' || i from {rows}")
    project.model(
        "stock",
        "select * from {{ target.schema }}.extracts",
        materialized="auto_cdc_from_snapshot",
        keys=["store_id", "item"],
        replace_using=["store_id"],
    )
    dbt(project, server, "run", "-s", "stock")
    stock, base = project.relation("stock"), project.relation("base")
    project.execute(f"create table {base} as select * from {stock}")
    if project.adapter == "postgres":
        project.execute(f"create index on {base} (store_id)")
        for table in (stock, base):
            project.execute(f"analyze {table}")
    store = 1
    project.execute(f"delete from {extracts} where store_id <> {store}")
    project.execute(f"update {extracts} set qty = -qty where item % 20 = 3")
    project.execute(f"delete from {extracts} where item % 100 = 50")
    new_items = series(project.adapter, per_store // 100)
    project.execute(f"insert into {extracts} select {store}, {per_store * 2} + i, i, 'new' from {new_items}")
    baseline = timed_sql(
        project, [f"delete from {base} where store_id = {store}", f"insert into {base} select * from {extracts}"]
    )
    ours = dbt(project, server, "run", "-s", "stock")
    return Comparison(ours, baseline, same_table(project, "base", "stock"))
