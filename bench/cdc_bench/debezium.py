"""Section 10, Debezium: a run of `auto_cdc.debezium()` models (SCD1 and SCD2, `checkpoint_column`
among its extra columns) over a landed table of many events, after a batch of new ones has
landed. The landed rows are generated in SQL, as a Kafka sink lands the JSON converter's
envelope (before, after, source and op as JSON text, an arrival number): a snapshot of every key,
then updates, one in ten with the TOAST placeholder; on PostgreSQL with the indexes
docs/debezium.md asks for on the arrival column. Reported: the model's time and its SQL
time, and whether the run read only the rows from its checkpoint (its SQL carries debezium()'s
marker). Run from a checkout of an earlier commit, the same section measures the whole read.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from test_debezium import SCD1, SCD2

from harness import CdcProject

from .measure import Measure, dbt, spark_dbt
from .report import Report

KEYS = 100_000
COMMITTED_MS = 1_767_225_600_000
# The configs of docs/debezium.md, as the tests write them, reading from the arrival number.
MODELS = {name: {**config, "checkpoint_column": "loaded"} for name, config in (("scd1", SCD1), ("scd2", SCD2))}


def _numbers(project: CdcProject, start: int, count: int) -> str:
    """A query of the numbers start .. start + count - 1, as column `i`."""
    if project.adapter == "postgres":
        return f"select i from generate_series({start}, {start + count - 1}) as g(i)"
    if project.adapter == "spark":
        return f"select id as i from range({start}, {start + count})"
    return f"select range as i from range({start}, {start + count})"


def land_events(project: CdcProject, start: int, count: int) -> None:
    """Events start .. start + count - 1: event i is key i % KEYS, a snapshot row ('r') for the
    first KEYS, an update ('u') after that, one in ten with the placeholder for `notes`."""
    text = project.type_name("text")
    quoted = "chr(92), chr(34)"  # \" inside the JSON string source.sequence

    def s(expr: str) -> str:
        return f"cast({expr} as {text})"

    lsn = "(1000 + i * 8)"
    sequence = f"concat({quoted}, {s(lsn + ' - 1')}, {quoted}, ',', {quoted}, {s(lsn)}, {quoted})"
    placeholder = f"i >= {KEYS} and i % 10 = 0"
    notes = f"case when {placeholder} then '__debezium_unavailable_value' else concat('notes ', {s('i')}) end"
    key = s(f"i % {KEYS}")
    after = f'concat(\'{{"id": \', {key}, \', "name": "name \', {s("i")}, \'", "notes": "\', {notes}, \'"}}\')'
    source = (
        f'concat(\'{{"connector": "postgresql", "sequence": "[\', {sequence}, \']", "lsn": \', {s(lsn)}, '
        f"', \"ts_ms\": ', {s(f'{COMMITTED_MS} + i')}, '}}')"
    )
    op = f"case when i < {KEYS} then 'r' else 'u' end"
    project.execute(
        f"insert into {project.relation('landed')} (before, after, source, op, ts_ms, loaded) "
        f"select cast(null as {text}), {after}, {source}, {op}, {COMMITTED_MS} + i + 3, i + 1 "
        f"from ({_numbers(project, start, count)}) as numbers"
    )


def debezium_runs(
    project: CdcProject, run: Callable[..., Measure], events: int, batch: int, runs: int
) -> dict[str, dict]:
    """Both models over `events` landed events (their first run and one of `batch` new events,
    unmeasured), then `runs` times: `batch` more events and a run of each model. Per model: the
    median model and SQL seconds and whether every measured run read from its checkpoint."""
    project.create_table(
        "landed",
        {"before": "text", "after": "text", "source": "text", "op": "text", "ts_ms": "bigint", "loaded": "bigint"},
    )
    if project.adapter == "postgres":  # what docs/debezium.md asks of a landed table there
        project.execute(f"create index on {project.relation('landed')} (loaded)")
        project.execute(f"create index on {project.relation('landed')} (loaded) where op = 't'")
    land_events(project, 0, events)
    relation = project.relation("landed")
    text = project.type_name("text")
    columns = f"{{'id': 'integer', 'name': '{text}', 'notes': '{text}'}}"
    for name, config in MODELS.items():
        args = f"{relation!r}, columns={columns}, extra_columns=['loaded']"
        body = "select * from {{ auto_cdc.debezium(" + args + ") }}"
        project.model(name, body, **config)
    run("run")
    # One run of new events, unmeasured: a run reads again the rows at its checkpoint, which now
    # lie in the first load's last files; from the next run on, in the last batch's, as they do
    # in a feed's steady state.
    land_events(project, events, batch)
    run("run")
    measured: dict[str, list[tuple[Measure, bool]]] = {name: [] for name in MODELS}
    landed = events + batch
    for _ in range(runs):
        land_events(project, landed, batch)
        landed += batch
        for name in MODELS:
            m = run("run", "-s", name)
            ran = (project.path / "target" / "run" / "cdc_test" / "models" / f"{name}.sql").read_text()
            measured[name].append((m, "auto_cdc.debezium read from checkpoint" in ran))
    return {
        name: {
            "model_s": statistics.median(m.model_s for m, _ in results),
            "sql_s": statistics.median(m.sql_s for m, _ in results),
            "bounded": all(bounded for _, bounded in results),
        }
        for name, results in measured.items()
    }


def debezium_section(adapters: list[str], server, events: int, batch: int, repeat: int, report: Report) -> None:
    """On each adapter (Spark on one local session in this process, as section 6)."""
    report.section(
        f"10. Debezium: {batch:,} new events landed on {events:,} ({KEYS:,} keys; one update in ten with the TOAST "
        f"placeholder), a run of each auto_cdc.debezium() model with checkpoint_column (median of {repeat} runs)",
        *("adapter", "model", "read from the checkpoint", "model (s)", "SQL (s)"),
    )
    for adapter in adapters:
        with _project(adapter, server) as (project, run):
            for name, result in debezium_runs(project, run, events, batch, repeat).items():
                report.add(
                    adapter,
                    name,
                    "yes" if result["bounded"] else "no",
                    f"{result['model_s']:.2f}",
                    f"{result['sql_s']:.2f}",
                )


@contextmanager
def _project(adapter: str, server) -> Iterator[tuple[CdcProject, Callable[..., Measure]]]:
    """A throwaway project and how to run dbt in it (on Spark, a session of its own)."""
    with tempfile.TemporaryDirectory() as tmp:
        if adapter != "spark":
            project = CdcProject(Path(tmp), adapter, server)
            try:
                yield project, lambda *args: dbt(project, server, *args)
            finally:
                project.close()
            return
        import spark_env
        from harness import SparkTarget

        cache = Path.home() / ".cache" / "dbt-auto-cdc"
        session = spark_env.start_session(Path(tmp) / "home", cache)
        try:
            spark = SparkTarget(session, spark_env.session_parameters(Path(tmp) / "home", cache))
            project = CdcProject(Path(tmp) / "project", "spark", None, spark=spark)
            try:
                yield project, lambda *args: spark_dbt(project, *args)
            finally:
                project.close()
        finally:
            session.stop()
