"""The benchmark: auto_cdc's cost per run against hand-written SQL and against dbt snapshot.

    python bench/run.py                     # everything, both adapters; rewrites BENCHMARKS.md
    python bench/run.py --quick             # small sizes, to try it out (prints, writes nothing)

Each measured dbt invocation runs as its own process. Reported per run: the SQL time (the
database's timing of every statement the model ran, metadata queries included, from dbt's
JSON debug log), the model's execution time (SQL plus the materialization's Python/Jinja
work), dbt's fixed start-up (wall time minus that), the peak memory of the dbt process (which
on DuckDB includes the embedded database) and on PostgreSQL the peak memory of the server
backends. Baselines are the hand-written statements one would write for the same change, run
through the database driver in one transaction and timed the same way (wall time of the
statements and the commit). Comparisons with a baseline take the median of `--repeat` fresh
set-ups.

PostgreSQL: a private server is started as in the tests, with shared_buffers=1GB (or the
server at AUTO_CDC_PGPORT is used as it is).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import postgres_server
from harness import CdcProject

REPO = Path(__file__).resolve().parents[1]


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
        return {**CDC, "except_column_list": ["op"]} if self.sequence_written else CDC

    @property
    def form(self) -> str:
        return "written" if self.sequence_written else "not written"


@dataclass
class Measure:
    sql_s: float  # the statements the model ran, as the database timed them
    model_s: float  # the model's execution time: its SQL plus the materialization's own Python/Jinja work
    startup_s: float  # the rest of the dbt process's wall time
    dbt_peak_mb: float
    db_peak_mb: float | None
    message: str = ""
    statements: int = 0  # how many the model ran


@dataclass
class Comparison:
    ours: Measure
    baseline_s: float  # the hand-written statements and their commit, wall time
    same_result: bool  # both left the same table


# --- data --------------------------------------------------------------------------------------


def _series(adapter: str, n: int) -> str:
    if adapter == "spark":
        return f"(select id as i from range(1, {n} + 1)) as g"
    return f"generate_series(1, {n}) as g(i)" if adapter == "postgres" else f"range(1, {n} + 1) as g(i)"


def _load_initial(project: CdcProject, w: Workload) -> None:
    """Every key once, at sequence 10."""
    columns = {"id": "bigint", **dict.fromkeys(w.value_columns(), "varchar"), "op": "varchar", "seq": "bigint"}
    project.create_table("events", columns)
    values = ", ".join(f"'v{n} ' || i" for n in range(1, w.columns + 1))
    rows = _series(project.adapter, w.target_rows)
    project.execute(f"insert into {project.relation('events')} select i, {values}, 'U', 10 from {rows}")


def _load_batch(project: CdcProject, w: Workload) -> None:
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
        f"from {_series(project.adapter, w.batch)}"
    )
    if project.adapter == "postgres":
        project.execute(f"analyze {project.relation('events')}")


# --- running dbt as a process, with its memory --------------------------------------------------


def _status(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""


def _hwm_mb(status: str) -> float:
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakMemory:
    """Samples peak resident memory (VmHWM, which exec resets) while a dbt process runs: of
    that process, and of the PostgreSQL backends started during the run (not the long-lived
    server processes, whose shared memory would dominate)."""

    def __init__(self, watch_postgres: bool) -> None:
        self.watch_postgres = watch_postgres
        self.before = {pid for pid in os.listdir("/proc") if pid.isdigit()}
        self.dbt_mb = 0.0
        self.db_mb = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, dbt_pid: int) -> None:
        def sample() -> None:
            while not self._stop.is_set():
                self.dbt_mb = max(self.dbt_mb, _hwm_mb(_status(str(dbt_pid))))
                if self.watch_postgres:
                    for pid in os.listdir("/proc"):
                        if pid.isdigit() and pid not in self.before:
                            status = _status(pid)
                            if "Name:\tpostgres" in status:
                                self.db_mb = max(self.db_mb, _hwm_mb(status))
                self._stop.wait(0.02)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def dbt(project: CdcProject, server: postgres_server.PostgresServer | None, *args: str) -> Measure:
    log = project.path / "logs" / "dbt.log"
    log.unlink(missing_ok=True)
    command = ["dbt", *args, "--project-dir", str(project.path), "--profiles-dir", str(project.path)]
    # --write-json: the harness turns artifacts off, and the timings come from run_results.json.
    command += ["--target", project.adapter, "--quiet", "--write-json"]
    command += ["--log-format-file", "json", "--log-level-file", "debug"]
    memory = PeakMemory(watch_postgres=project.adapter == "postgres")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    memory.start(process.pid)
    output = process.stdout.read() if process.stdout else b""
    _, status, _ = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    memory.stop()
    if status != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{output.decode()[-3000:]}")
    results = json.loads((project.path / "target" / "run_results.json").read_text())["results"]
    model_s = sum(float(r["execution_time"]) for r in results)
    return Measure(
        sql_s=_statement_seconds(log),
        statements=len(_statements(log)),
        model_s=model_s,
        startup_s=wall - model_s,
        dbt_peak_mb=memory.dbt_mb,
        db_peak_mb=memory.db_mb if project.adapter == "postgres" else None,
        message="; ".join(str(r.get("message") or "") for r in results),
    )


def _statements(log: Path, node: str | None = None) -> list[tuple[float, str]]:
    """The database time and text of each statement run for the selected nodes (or one node),
    not dbt's own set-up queries, from the JSON debug log."""
    timed: list[tuple[float, str]] = []
    sql = ""
    for line in log.read_text().splitlines():
        event = json.loads(line)
        unique_id = (event["data"].get("node_info") or {}).get("unique_id")
        if not unique_id or (node is not None and unique_id != node):
            continue
        if event["info"]["name"] == "SQLQuery":
            sql = event["data"].get("sql", "")
        elif event["info"]["name"] == "SQLQueryStatus":
            timed.append((float(event["data"]["elapsed"]), sql))
    return timed


def _statement_seconds(log: Path) -> float:
    """The summed database time of the model's statements (with --profile, the slowest printed)."""
    timed = _statements(log)
    if PROFILE:
        for elapsed, sql in sorted(timed, key=lambda t: -t[0])[:PROFILE]:
            text = " ".join(sql.split(" */", 1)[-1].split())  # without dbt's query comment
            print(f"  {elapsed:7.4f}  {text[:200]}")
        print(f"  {sum(e for e, _ in timed):7.4f}  in all, {len(timed)} statements")
    return sum(elapsed for elapsed, _ in timed)


PROFILE = 0  # --profile N: print each dbt run's N slowest statements


def timed_sql(project: CdcProject, statements: list[str]) -> float:
    """Wall time of `statements` and the commit, in one transaction through the driver."""
    with project._connect() as (conn, cursor):
        started = time.perf_counter()
        for sql in statements:
            cursor.execute(sql)
        conn.commit()
        return time.perf_counter() - started


# --- the scenarios -------------------------------------------------------------------------------

# The default shared_buffers (128 MB) is smaller than a 1M-row target, its state and the
# baseline's copy together; production servers give it a quarter of RAM.
SERVER_SETTINGS = {"shared_buffers": "1GB"}

CDC = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'D'", "except_column_list": ["op", "seq"]}


def _prepared(project: CdcProject, server: postgres_server.PostgresServer | None, w: Workload, scd: int) -> None:
    _load_initial(project, w)
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


def scd1_against_baseline(project: CdcProject, server, w: Workload) -> Comparison:
    _prepared(project, server, w, 1)
    _copy_for_baseline(project, 1)
    _load_batch(project, w)
    cols = w.written_columns()
    events, base = project.relation("events"), project.relation("base")
    ranked = f"select *, row_number() over (partition by id order by seq desc) as rn from {events}"
    latest = f"select * from ({ranked}) as e where rn = 1"
    baseline = timed_sql(
        project,
        [
            f"merge into {base} as t using ({latest}) as s on t.id = s.id "
            "when matched and s.op = 'D' then delete "
            f"when matched then update set {', '.join(f'{c} = s.{c}' for c in cols)} "
            f"when not matched and s.op <> 'D' then insert (id, {', '.join(cols)}) "
            f"values (s.id, {', '.join('s.' + c for c in cols)})"
        ],
    )
    ours = dbt(project, server, "run", "-s", "dim")
    return Comparison(ours, baseline, _same(project, "base", "dim"))


def scd2_against_baseline(project: CdcProject, server, w: Workload) -> Comparison:
    _prepared(project, server, w, 2)
    _copy_for_baseline(project, 2)
    _load_batch(project, w)
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
    return Comparison(ours, baseline, _same(project, "base", "dim"))


def _same(project: CdcProject, a: str, b: str) -> bool:
    left, right = project.relation(a), project.relation(b)
    differing = project.query(
        f"select count(*) from ((select * from {left} except select * from {right})"
        f" union all (select * from {right} except select * from {left})) as d"
    )
    return differing == [(0,)]


def scaling(project: CdcProject, server, w: Workload, scd: int) -> Measure:
    _prepared(project, server, w, scd)
    _load_batch(project, w)
    return dbt(project, server, "run", "-s", "dim")


# --- Spark: in this process, one JVM for the section (its Derby metastore allows one) ------------

ICEBERG_MOR = (
    "using iceberg tblproperties ('format-version' = '2', 'write.merge.mode' = 'merge-on-read', "
    "'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')"
)


def spark_dbt(project: CdcProject, *args: str) -> Measure:
    """A dbt invocation in this process (the session is shared), timed from its JSON debug log."""
    log = project.path / "logs" / "dbt.log"
    log.unlink(missing_ok=True)
    started = time.perf_counter()
    outcome = project.dbt(*args, "--log-format-file", "json", "--log-level-file", "debug")
    wall = time.perf_counter() - started
    if not outcome.success:
        raise RuntimeError(f"{' '.join(args)} failed:\n{outcome.error}")
    model_s = sum(float(r.execution_time) for r in outcome.results)
    message = "; ".join(str(r.message or "") for r in outcome.results)
    return Measure(_statement_seconds(log), model_s, wall - model_s, 0.0, None, message, len(_statements(log)))


def spark_against_merge(project: CdcProject, w: Workload) -> Comparison:
    """SCD1 on an Iceberg target: auto_cdc against a hand-written dedupe plus one MERGE into a
    copy of the same target (same table properties), on the same session."""
    assert project.spark is not None
    _load_initial(project, w)
    project.model("dim", "select * from {{ target.schema }}.events", **w.config())
    spark_dbt(project, "run", "-s", "dim")
    dim, base, events = project.relation("dim"), project.relation("base"), project.relation("events")
    project.execute(f"create table {base} {ICEBERG_MOR} as select * from {dim}")
    _load_batch(project, w)
    cols = w.written_columns()
    latest = (
        f"select * from (select *, row_number() over (partition by id order by seq desc) as rn from {events}) as e"
        " where rn = 1"
    )
    merge = (
        f"merge into {base} as t using ({latest}) as s on t.id = s.id "
        "when matched and s.op = 'D' then delete "
        f"when matched then update set {', '.join(f'{c} = s.{c}' for c in cols)} "
        f"when not matched and s.op <> 'D' then insert (id, {', '.join(cols)}) "
        f"values (s.id, {', '.join('s.' + c for c in cols)})"
    )
    started = time.perf_counter()
    project.spark.session.sql(merge).collect()
    baseline = time.perf_counter() - started
    ours = spark_dbt(project, "run", "-s", "dim")
    return Comparison(ours, baseline, _same(project, "base", "dim"))


def spark_section(sizes: list[int], batch: int, columns: int, repeat: int, report: Report) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    import spark_env
    from harness import SparkTarget

    report.section(
        f"6. Spark 3.5 with Iceberg tables (local[2], dbt-spark session mode): SCD1, {batch:,} in-order events "
        f"against a hand-written dedupe + MERGE on the same session (median of {repeat})",
        *("target rows", "sequence in target", "auto_cdc SQL (s)", "hand-written MERGE (s)", "SQL ratio"),
        *("auto_cdc model (s)", "statements", "same table"),
    )
    with tempfile.TemporaryDirectory() as home:
        cache = Path.home() / ".cache" / "dbt-auto-cdc"
        session = spark_env.start_session(Path(home), cache)
        spark = SparkTarget(session, spark_env.session_parameters(Path(home), cache))
        try:
            for size, written in itertools.product(sizes, (True, False)):
                w = Workload(size, batch, columns=columns, sequence_written=written)
                runs = []
                for _ in range(repeat):
                    with tempfile.TemporaryDirectory() as tmp:
                        project = CdcProject(Path(tmp), "spark", None, spark=spark)
                        try:
                            runs.append(spark_against_merge(project, w))
                            statements = len(_statements(project.path / "logs" / "dbt.log"))
                        finally:
                            project.close()
                r = sorted(runs, key=lambda c: c.ours.sql_s / c.baseline_s)[len(runs) // 2]
                report.add(
                    f"{size:,}",
                    w.form,
                    f"{r.ours.sql_s:.2f}",
                    f"{r.baseline_s:.2f}",
                    f"{r.ours.sql_s / r.baseline_s:.2f}x",
                    f"{r.ours.model_s:.2f}",
                    statements,
                    "yes" if r.same_result else "NO",
                )
        finally:
            session.stop()


@dataclass
class Overhead:
    models: int
    whole: Measure  # the invocation
    first_s: float  # the first model's Python/Jinja time (macros compiled once per process)
    per_model_s: float  # the median of the other models' Python/Jinja time


def overhead(project: CdcProject, server, models: int) -> Overhead:
    """`models` small auto_cdc models in one invocation (one thread): how much of the
    materialization's own Python/Jinja time (model time minus its SQL) is paid once per
    process and how much per model."""
    project.create_table("events", {"id": "bigint", "c1": "varchar", "c2": "varchar", "op": "varchar", "seq": "bigint"})
    events = project.relation("events")
    project.execute(f"insert into {events} values (1, 'a', 'a', 'U', 1), (2, 'b', 'b', 'U', 1)")
    for i in range(models):
        project.model(f"m{i}", "select * from {{ target.schema }}.events", **CDC)
    dbt(project, server, "run", "--threads", "1")
    project.execute(f"insert into {events} values (1, 'c', 'c', 'U', 2), (3, 'd', 'd', 'U', 2)")
    whole = dbt(project, server, "run", "--threads", "1")
    log = project.path / "logs" / "dbt.log"
    results = json.loads((project.path / "target" / "run_results.json").read_text())["results"]
    results.sort(key=lambda r: r["timing"][0]["started_at"] if r.get("timing") else "")
    jinja = [
        float(r["execution_time"]) - sum(elapsed for elapsed, _ in _statements(log, r["unique_id"])) for r in results
    ]
    rest = sorted(jinja[1:])
    return Overhead(models, whole, jinja[0], rest[len(rest) // 2] if rest else float("nan"))


MANY = Workload(target_rows=20_000, batch=2_000, update_share=0.7, delete_share=0.1, late_share=0.1)

# What a user writes without auto_cdc: dbt's incremental model, merge strategy, over the events
# that arrived since its last run, deduplicated by a window. Wrong where auto_cdc is right: a
# late event overwrites a newer row, and a delete is kept as a row with op = 'D' (dbt's merge
# strategy updates and inserts only), which a view downstream would filter.
INCREMENTAL_MERGE = """{{{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',
                  tags=['incremental']) }}}}
select id, c1, c2, op, seq, loaded from (
  select *, row_number() over (partition by id order by seq desc) as rn from {{{{ target.schema }}}}.{events}
  {{% if is_incremental() %}} where loaded > (select max(loaded) from {{{{ this }}}}) {{% endif %}}
) as e where rn = 1
"""


def _many_events(project: CdcProject, table: str, w: Workload, loaded: int) -> None:
    """The feed of one replicated table, appended with a load number: every key at `loaded`
    1, then `w.batch` events (updates, late updates, deletes and new keys) at each later load,
    sequence 10 x the load (late ones 10 - the load: loads up to 9)."""
    relation, n = project.relation(table), w.batch
    if loaded == 1:
        columns = {"id": "bigint", "c1": "varchar", "c2": "varchar", "op": "varchar", "seq": "bigint", "loaded": "int"}
        project.create_table(table, columns)
        rows = _series(project.adapter, w.target_rows)
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
        f"from {_series(project.adapter, n)}"
    )


def many_models(
    project: CdcProject,
    server,
    models: int,
    w: Workload = MANY,
    incremental_first: bool | None = None,
    measured_load: int = 2,
) -> dict[str, Measure]:
    """`models` tables kept up to date by one `dbt run` (one thread), as auto_cdc models and as
    dbt incremental merge models over the same feeds: the run of each that applies load
    `measured_load` of events to every table (the loads before it applied by earlier runs), in
    turns (`incremental_first`; by default by the number of models). The auto_cdc models keep
    `seq` when `w.sequence_written`. Their checkpoint is inclusive: a run reads the last load it
    applied again (redeliveries, which change nothing), so the second run re-reads the initial
    load; later runs re-read the load before theirs."""
    excluded = ["op", "loaded"] if w.sequence_written else ["op", "seq", "loaded"]
    for i in range(models):
        _many_events(project, f"events{i}", w, 1)
        project.model(
            f"cdc{i}",
            f"select * from {{{{ target.schema }}}}.events{i}",
            **{**CDC, "except_column_list": excluded},
            checkpoint_column="loaded",
            tags=["auto_cdc"],
        )
        project.write(f"models/inc{i}.sql", INCREMENTAL_MERGE.format(events=f"events{i}"))
    dbt(project, server, "run", "--threads", "1")
    for load in range(2, measured_load + 1):
        if load > 2:
            dbt(project, server, "run", "--threads", "1")
        for i in range(models):
            _many_events(project, f"events{i}", w, load)
    if project.adapter == "postgres":
        project.execute("analyze")
    if incremental_first is None:
        incremental_first = models % 2 == 0
    measured: dict[str, Measure] = {}
    for tool in ("incremental", "auto_cdc") if incremental_first else ("auto_cdc", "incremental"):
        measured[tool] = dbt(project, server, "run", "--threads", "1", "-s", f"tag:{tool}")
    return measured


# Section 8: the user's question of issue 47: one large replicated table, a `dbt run` per load.
BIG_TABLE = Workload(target_rows=1_000_000, batch=10_000, update_share=0.7, delete_share=0.1)


def snapshots_against_dbt_snapshot(project: CdcProject, server, rows: int, versions: int) -> dict[str, object]:
    """The same series of full snapshots (5% of rows changed, 1% deleted, 1% new each time)
    through auto_cdc_from_snapshot (SCD2, per-run versions) and `dbt snapshot` (check strategy,
    all columns, hard deletes invalidated)."""
    project.create_table("source", {"id": "bigint", "c1": "varchar", "c2": "varchar"})
    source = project.relation("source")
    project.execute(f"insert into {source} select i, 'a ' || i, 'b ' || i from {_series(project.adapter, rows)}")
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
            new_rows = _series(project.adapter, rows // 100)
            project.execute(f"insert into {source} select {first_new} + i, 'new', 'new' from {new_rows}")
        ours.append(dbt(project, server, "run", "-s", "history"))
        theirs.append(dbt(project, server, "snapshot", "-s", "dbt_history"))
    return {"ours": ours, "theirs": theirs}


# --- report ----------------------------------------------------------------------------------------


def _machine() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    memory = int(Path("/proc/meminfo").read_text().split()[1]) // 1024 // 1024
    versions = subprocess.run(["dbt", "--version"], capture_output=True, text=True).stdout
    adapters = ", ".join(
        "dbt-" + " ".join(line.strip(" -").split()[:2]).replace(":", "")
        for line in versions.splitlines()
        if "duckdb:" in line or "postgres:" in line
    )
    return (
        f"{os.cpu_count()} cores ({cpu}), {memory} GiB RAM, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, dbt-core {_dbt_core_version(versions)}, {adapters}; "
        "PostgreSQL 15 private server with fsync=off (as in the tests) and shared_buffers=1GB; "
        "both sides of every comparison run on it"
    )


def _dbt_core_version(versions: str) -> str:
    lines = versions.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("- installed:") and i and "Core" in lines[i - 1]:
            return line.split(":", 1)[1].strip()
    return "?"


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _memory(m: Measure) -> tuple[str, str]:
    return _mb(m.dbt_peak_mb), _mb(m.db_peak_mb)


class Report:
    """Markdown sections, echoed as they are measured."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.lines: list[str] = []
        self.log = log

    def section(self, title: str, *columns: str) -> None:
        self.lines += ["", f"## {title}", "", _row(*columns), "|" + "---|" * len(columns)]
        self.log(title)

    def add(self, *cells: object) -> None:
        self.lines.append(_row(*cells))
        self.log(self.lines[-1])


def _compared(r: Comparison) -> tuple[str, str, str, str, bool]:
    """SQL, baseline, their ratio, model time, whether both left the same table."""
    m = r.ours
    return f"{m.sql_s:.3f}", f"{r.baseline_s:.3f}", f"{m.sql_s / r.baseline_s:.2f}x", f"{m.model_s:.2f}", r.same_result


def median_of(runs: int, measure: Callable[[], Comparison]) -> Comparison:
    """`measure` on `runs` fresh set-ups: the run with the median SQL time, and the median
    baseline (a DuckDB commit, which writes a checkpoint, varies by a third between identical
    runs here)."""
    results = sorted((measure() for _ in range(runs)), key=lambda r: r.ours.sql_s)
    baselines = sorted(r.baseline_s for r in results)
    return Comparison(
        ours=results[len(results) // 2].ours,
        baseline_s=baselines[len(baselines) // 2],
        same_result=all(r.same_result for r in results),
    )


def run_all(
    adapters: list[str],
    sizes: list[int],
    big: int,
    batch: int,
    columns: int,
    snapshot_rows: int,
    repeat: int,
    report: Report,
    sections: str = "12345678",
) -> None:
    server = postgres_server.start(SERVER_SETTINGS) if "postgres" in adapters else None
    largest = sizes[-1]

    @contextmanager
    def fresh(adapter: str) -> Iterator[CdcProject]:
        with tempfile.TemporaryDirectory() as tmp:
            project = CdcProject(Path(tmp), adapter, server)
            try:
                yield project
            finally:
                project.close()

    def against_baseline(adapter: str, scenario: Callable[..., Comparison], w: Workload | None = None) -> Comparison:
        def once() -> Comparison:
            with fresh(adapter) as project:
                return scenario(project, server, w or Workload(largest, batch, columns=columns))

        return median_of(repeat, once)

    memory = ("dbt peak MB", "PG backend peak MB")
    try:
        if "1" in sections:
            report.section(
                f"1. SCD1 against a hand-written MERGE ({batch:,} in-order events on {largest:,} rows; "
                f"median of {repeat})",
                *("adapter", "sequence in target", "auto_cdc SQL (s)", "baseline (s)", "SQL ratio"),
                *("auto_cdc model (s)", "same table", "dbt start-up (s)", *memory),
            )
            for adapter, written in itertools.product(adapters, (True, False)):
                w = Workload(largest, batch, columns=columns, sequence_written=written)
                r = against_baseline(adapter, scd1_against_baseline, w)
                report.add(adapter, w.form, *_compared(r), f"{r.ours.startup_s:.1f}", *_memory(r.ours))

        if "2" in sections:
            report.section(
                f"2. SCD2 against a hand-written close-and-insert ({batch:,} events on {largest:,} keys; "
                f"in order: median of {repeat})",
                *("adapter", "events", "auto_cdc SQL (s)", "baseline (s)", "SQL ratio", "auto_cdc model (s)"),
                *("same table", *memory),
            )
            for adapter in adapters:
                r = against_baseline(adapter, scd2_against_baseline)
                report.add(adapter, "in order", *_compared(r), *_memory(r.ours))
                with fresh(adapter) as project:
                    m = scaling(project, server, Workload(largest, batch, late_share=0.1, columns=columns), 2)
                report.add(
                    adapter,
                    "10% late",
                    f"{m.sql_s:.3f}",
                    "cannot repair history",
                    "",
                    f"{m.model_s:.2f}",
                    "",
                    *_memory(m),
                )

        if "3" in sections:
            report.section(
                f"3. Scaling: {batch:,} events (60% updates, 10% late, 10% deletes, 10% new keys) on growing targets; "
                f"SCD1 beside the hand-written MERGE (median of {repeat})",
                *("adapter", "SCD", "target rows", "SQL (s)", "hand-written MERGE (s)", "SQL ratio", "model (s)"),
                *("events/s applied (SQL)", "events/s applied (model time)", "statements", "dbt start-up (s)", *memory),
            )
            for adapter in adapters:
                for scd in (1, 2):
                    for size in sizes + ([big] if big and adapter == "duckdb" else []):
                        w = Workload(size, batch, update_share=0.6, late_share=0.1, columns=columns)
                        if scd == 1:
                            # The MERGE applies the late events too (it has no sequence check): cost only.
                            r = against_baseline(adapter, scd1_against_baseline, w)
                            m, base, ratio = r.ours, f"{r.baseline_s:.3f}", f"{r.ours.sql_s / r.baseline_s:.2f}x"
                        else:
                            with fresh(adapter) as project:
                                m, base, ratio = scaling(project, server, w, scd), "", ""
                        report.add(
                            adapter,
                            scd,
                            f"{size:,}",
                            f"{m.sql_s:.3f}",
                            base,
                            ratio,
                            f"{m.model_s:.2f}",
                            f"{batch / m.sql_s:,.0f}",
                            f"{batch / m.model_s:,.0f}",
                            m.statements,
                            f"{m.startup_s:.1f}",
                            *_memory(m),
                        )

        if "4" in sections:
            report.section(
                f"4. Snapshots: auto_cdc_from_snapshot against dbt snapshot (check strategy), {snapshot_rows:,} rows",
                *("adapter", "tool", "1st snapshot SQL (s)", "next 4 snapshots SQL (s)", "next 4 model (s)"),
                *("dbt start-up per run (s)", *memory),
            )
            for adapter in adapters:
                with fresh(adapter) as project:
                    r = snapshots_against_dbt_snapshot(project, server, snapshot_rows, 5)
                for tool, runs in (("auto_cdc_from_snapshot", r["ours"]), ("dbt snapshot", r["theirs"])):
                    assert isinstance(runs, list)
                    later = runs[1:]
                    peak_db = max((m.db_peak_mb or 0) for m in runs) if adapter == "postgres" else None
                    report.add(
                        adapter,
                        tool,
                        f"{runs[0].sql_s:.2f}",
                        f"{sum(m.sql_s for m in later):.2f}",
                        f"{sum(m.model_s for m in later):.2f}",
                        f"{sum(m.startup_s for m in runs) / len(runs):.1f}",
                        _mb(max(m.dbt_peak_mb for m in runs)),
                        _mb(peak_db),
                    )
        if "5" in sections:
            report.section(
                "5. Per-model overhead: small auto_cdc models in one invocation (one thread)",
                *("adapter", "models", "model time, all (s)", "SQL, all (s)", "1st model Python/Jinja (s)"),
                *("Python/Jinja per further model (s)", "dbt start-up (s)"),
            )
            for adapter in adapters:
                for models in (1, 10, 50):
                    with fresh(adapter) as project:
                        o = overhead(project, server, models)
                    report.add(
                        adapter,
                        models,
                        f"{o.whole.model_s:.2f}",
                        f"{o.whole.sql_s:.2f}",
                        f"{o.first_s:.2f}",
                        "" if models == 1 else f"{o.per_model_s:.3f}",
                        f"{o.whole.startup_s:.1f}",
                    )
        if "6" in sections:
            spark_section(sizes, batch, columns, repeat, report)
        if "7" in sections:
            report.section(
                f"7. Many models: N tables ({MANY.target_rows:,} rows, {MANY.batch:,} new events each) kept up to date "
                f"by one dbt run (one thread), auto_cdc against dbt incremental merge models: the third run "
                f"(median of {repeat})",
                *("adapter", "models", "auto_cdc wall (s)", "incremental wall (s)", "wall ratio"),
                *("auto_cdc model (s)", "incremental model (s)", "model ratio"),
                *("auto_cdc SQL (s)", "incremental SQL (s)"),
            )
            for adapter in adapters:
                for models in (10, 50):
                    runs = []
                    for _ in range(repeat):
                        with fresh(adapter) as project:
                            runs.append(many_models(project, server, models, measured_load=3))
                    wall = {t: sorted(r[t].model_s + r[t].startup_s for r in runs)[len(runs) // 2] for t in runs[0]}
                    model = {t: sorted(r[t].model_s for r in runs)[len(runs) // 2] for t in runs[0]}
                    sql = {t: sorted(r[t].sql_s for r in runs)[len(runs) // 2] for t in runs[0]}
                    report.add(
                        adapter,
                        models,
                        f"{wall['auto_cdc']:.2f}",
                        f"{wall['incremental']:.2f}",
                        f"{wall['auto_cdc'] / wall['incremental']:.2f}x",
                        f"{model['auto_cdc']:.2f}",
                        f"{model['incremental']:.2f}",
                        f"{model['auto_cdc'] / model['incremental']:.2f}x",
                        f"{sql['auto_cdc']:.2f}",
                        f"{sql['incremental']:.2f}",
                    )
        if "8" in sections:
            w = BIG_TABLE
            report.section(
                f"8. One big table: {w.target_rows:,} rows, {w.batch:,} in-order events per dbt run, one model a "
                f"run, auto_cdc against a dbt incremental merge model: the third run (median of {repeat}, in "
                "alternating order)",
                *("adapter", "sequence in target", "auto_cdc model (s)", "incremental model (s)", "model ratio"),
                *("auto_cdc wall (s)", "incremental wall (s)", "wall ratio", "auto_cdc Python/Jinja (s)"),
                *("events/s applied (model time)", "statements"),
            )
            for adapter, written in itertools.product(adapters, (True, False)):
                w = Workload(BIG_TABLE.target_rows, BIG_TABLE.batch, sequence_written=written)
                runs = []
                for i in range(repeat):
                    with fresh(adapter) as project:
                        runs.append(many_models(project, server, 1, w, incremental_first=i % 2 == 1, measured_load=3))
                wall = {t: statistics.median(r[t].model_s + r[t].startup_s for r in runs) for t in runs[0]}
                model = {t: statistics.median(r[t].model_s for r in runs) for t in runs[0]}
                jinja = statistics.median(r["auto_cdc"].model_s - r["auto_cdc"].sql_s for r in runs)
                report.add(
                    adapter,
                    w.form,
                    f"{model['auto_cdc']:.2f}",
                    f"{model['incremental']:.2f}",
                    f"{model['auto_cdc'] / model['incremental']:.2f}x",
                    f"{wall['auto_cdc']:.2f}",
                    f"{wall['incremental']:.2f}",
                    f"{wall['auto_cdc'] / wall['incremental']:.2f}x",
                    f"{jinja:.2f}",
                    f"{w.batch / model['auto_cdc']:,.0f}",
                    runs[0]["auto_cdc"].statements,
                )
    finally:
        if server is not None:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapters", nargs="+", default=["duckdb", "postgres"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--big", type=int, default=10_000_000, help="an extra DuckDB target size (0: none)")
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--columns", type=int, default=2, help="value columns besides the key (SCD1, SCD2, scaling)")
    parser.add_argument("--snapshot-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="fresh set-ups per comparison with a baseline (median)")
    parser.add_argument("--quick", action="store_true", help="small sizes; print only")
    parser.add_argument("--profile", type=int, default=0, help="print each dbt run's N slowest statements")
    parser.add_argument("--only", nargs="+", choices="12345678", help="measure only these sections (print only)")
    parser.add_argument("--output", default=str(REPO / "BENCHMARKS.md"))
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.big, args.batch, args.snapshot_rows, args.repeat = [20_000], 0, 2_000, 5_000, 1
    started = time.time()
    report = Report(lambda line: print(line, flush=True))
    global PROFILE
    PROFILE = args.profile
    sizes = (args.sizes, args.big, args.batch, args.columns, args.snapshot_rows, args.repeat)
    run_all(args.adapters, *sizes, report, "".join(args.only or "12345678"))
    if args.quick or args.only:
        return
    head = (REPO / "bench" / "BENCHMARKS.head.md").read_text()
    head = head.format(machine=_machine(), minutes=f"{(time.time() - started) / 60:.0f}")
    output = Path(args.output)
    kept = output.read_text().partition(HAND_WRITTEN)[1:] if output.exists() else ("", "")
    output.write_text(head + "\n".join(report.lines) + "\n\n" + "".join(kept).strip() + "\n")
    print(f"wrote {args.output}")


# BENCHMARKS.md from this line on is written by hand (comparisons, targets, history): kept.
HAND_WRITTEN = "<!-- Written by hand from here on"


if __name__ == "__main__":
    main()
