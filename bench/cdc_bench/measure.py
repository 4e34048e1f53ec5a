"""The measurement: a dbt invocation run as its own process (or, on Spark, in this one), with what
it cost: the database's timing of every statement the model ran, read from dbt's JSON debug
log (`--profile N` prints the slowest), the model's execution time from run_results.json, dbt's
fixed start-up (wall time minus that) and the peak resident memory of the dbt process and of the
PostgreSQL backends it used. Also the timing of a baseline's hand-written statements through the
driver, and the median of a comparison over fresh set-ups.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import postgres_server
from harness import CdcProject


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
        sql_s=statement_seconds(log),
        statements=len(timed_statements(log)),
        model_s=model_s,
        startup_s=wall - model_s,
        dbt_peak_mb=memory.dbt_mb,
        db_peak_mb=memory.db_mb if project.adapter == "postgres" else None,
        message="; ".join(str(r.get("message") or "") for r in results),
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
    return Measure(statement_seconds(log), model_s, wall - model_s, 0.0, None, message, len(timed_statements(log)))


def timed_statements(log: Path, node: str | None = None) -> list[tuple[float, str]]:
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


def statement_seconds(log: Path) -> float:
    """The summed database time of the model's statements (with --profile, the slowest printed)."""
    timed = timed_statements(log)
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
