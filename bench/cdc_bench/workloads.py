"""The workloads: a `Workload` (target size, batch, the shares of updates, deletes, late events and
new keys, the value columns, whether the target keeps the sequence), the auto_cdc config they
run under, and the feeds: a table's initial rows (every key once), one batch of change events,
and the load-numbered feed of the many-models sections (7, 8). Everything is generated in the
database with a series (`range`, `generate_series`), never sent row by row.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import CdcProject

CDC = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'D'", "except_column_list": ["op", "seq"]}
# Configs added to every model a Workload configures (run.py --quarantine), to measure their cost.
EXTRA_CONFIG: dict[str, object] = {}


@dataclass
class Workload:
    target_rows: int
    batch: int = 10_000
    update_share: float = 0.7
    delete_share: float = 0.1
    late_share: float = 0.0  # events older than the stored row of their key
    columns: int = 2  # value columns besides the key
    sequence_written: bool = False  # the target keeps `seq` (SCD1's state then holds tombstones only)

    def value_columns(self) -> list[str]:
        return [f"c{i}" for i in range(1, self.columns + 1)]

    def written_columns(self) -> list[str]:
        """The columns a MERGE writes: the value columns, and `seq` when the target keeps it."""
        return self.value_columns() + (["seq"] if self.sequence_written else [])

    def config(self) -> dict[str, object]:
        config = {**CDC, "except_column_list": ["op"]} if self.sequence_written else CDC
        return {**config, **EXTRA_CONFIG}

    @property
    def form(self) -> str:
        return "written" if self.sequence_written else "not written"


def series(adapter: str, n: int) -> str:
    if adapter == "spark":
        return f"(select id as i from range(1, {n} + 1)) as g"
    return f"generate_series(1, {n}) as g(i)" if adapter == "postgres" else f"range(1, {n} + 1) as g(i)"


def load_initial(project: CdcProject, w: Workload) -> None:
    """Every key once, at sequence 10."""
    columns = {"id": "bigint", **dict.fromkeys(w.value_columns(), "varchar"), "op": "varchar", "seq": "bigint"}
    project.create_table("events", columns)
    values = ", ".join(f"'v{n} ' || i" for n in range(1, w.columns + 1))
    rows = series(project.adapter, w.target_rows)
    project.execute(f"insert into {project.relation('events')} select i, {values}, 'U', 10 from {rows}")


def load_batch(project: CdcProject, w: Workload) -> None:
    """One event per key: updates and deletes of existing keys spread over the key range, new
    keys, and late events (sequence 5, older than the stored 10) among the updates."""
    step = max(w.target_rows // w.batch, 1)
    n_update, n_delete = int(w.batch * w.update_share), int(w.batch * w.delete_share)
    n_late = int(w.batch * w.late_share)
    values = ", ".join(f"'changed{n} ' || i" for n in range(1, w.columns + 1))
    emptied = "delete from" if project.adapter == "spark" else "truncate table"
    project.execute(f"{emptied} {project.relation('events')}")  # a fresh feed, no dead rows
    project.execute(
        f"insert into {project.relation('events')} select "
        f"case when i <= {n_update + n_delete} then i * {step} else {w.target_rows} + i end, {values}, "
        f"case when i > {n_update} and i <= {n_update + n_delete} then 'D' else 'U' end, "
        f"case when i <= {n_late} then 5 else 20 end "
        f"from {series(project.adapter, w.batch)}"
    )
    if project.adapter == "postgres":
        project.execute(f"analyze {project.relation('events')}")


MANY = Workload(target_rows=20_000, batch=2_000, update_share=0.7, delete_share=0.1, late_share=0.1)

# Section 8: the user's question of issue 47: one large replicated table, a `dbt run` per load.
BIG_TABLE = Workload(target_rows=1_000_000, batch=10_000, update_share=0.7, delete_share=0.1)


def many_events(project: CdcProject, table: str, w: Workload, loaded: int) -> None:
    """The feed of one replicated table, appended with a load number: every key at `loaded`
    1, then `w.batch` events (updates, late updates, deletes and new keys) at each later load,
    sequence 10 x the load (late ones 10 - the load: loads up to 9)."""
    relation, n = project.relation(table), w.batch
    if loaded == 1:
        columns = {"id": "bigint", "c1": "varchar", "c2": "varchar", "op": "varchar", "seq": "bigint", "loaded": "int"}
        project.create_table(table, columns)
        rows = series(project.adapter, w.target_rows)
        project.execute(f"insert into {relation} select i, 'a' || i, 'b' || i, 'U', 10, 1 from {rows}")
        return
    step, n_update, n_delete = w.target_rows // n, int(n * w.update_share), int(n * w.delete_share)
    project.execute(
        f"insert into {relation} select "
        f"case when i <= {n_update + n_delete} then i * {step} else {w.target_rows} + i end, "
        f"'c{loaded if loaded > 2 else ''}' || i, 'd' || i, "
        f"case when i > {n_update} and i <= {n_update + n_delete} then 'D' else 'U' end, "
        # Late events: below every stored sequence (10 and up), and another one at each load, so
        # that a load read again (the inclusive checkpoint) never meets the next load's late
        # events at their key and sequence with other values (a conflict, which fails the run).
        f"case when i <= {int(n * w.late_share)} then {10 - loaded} else {10 * loaded} end, {loaded} "
        f"from {series(project.adapter, n)}"
    )
