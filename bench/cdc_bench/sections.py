"""The benchmark's numbered sections, measured in order into a `Report`: 1 SCD1 and 2 SCD2 against
hand-written SQL, 3 growing targets, 4 auto_cdc_from_snapshot against `dbt snapshot`, 5 the
per-model overhead, 6 Spark against a MERGE, 7 many tables and 8 one big table against dbt
incremental models, 9 a scoped snapshot of one group against a hand-written delete + insert, 10
Debezium feeds read from the checkpoint (run from an earlier checkout: the whole read).
Each measured set-up is a fresh throwaway project; on PostgreSQL all of them
share one private server, started here with a larger shared_buffers.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

import postgres_server
from harness import CdcProject

from .baselines import (
    scaling,
    scd1_against_baseline,
    scd2_against_baseline,
    scoped_snapshot_against_delete_insert,
    snapshots_against_dbt_snapshot,
)
from .debezium import debezium_section
from .many_models import many_models, overhead
from .measure import Comparison, median_of
from .report import Report, comparison_cells, megabytes, memory_cells
from .spark import spark_section
from .workloads import BIG_TABLE, MANY, Workload

# The default shared_buffers (128 MB) is smaller than a 1M-row target, its state and the
# baseline's copy together; production servers give it a quarter of RAM.
SERVER_SETTINGS = {"shared_buffers": "1GB"}


def run_all(
    adapters: list[str],
    sizes: list[int],
    big: int,
    batch: int,
    columns: int,
    snapshot_rows: int,
    repeat: int,
    report: Report,
    sections: Collection[str] = tuple("123456789"),
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
                report.add(adapter, w.form, *comparison_cells(r), f"{r.ours.startup_s:.1f}", *memory_cells(r.ours))

        if "2" in sections:
            report.section(
                f"2. SCD2 against a hand-written close-and-insert ({batch:,} events on {largest:,} keys; "
                f"in order: median of {repeat})",
                *("adapter", "events", "auto_cdc SQL (s)", "baseline (s)", "SQL ratio", "auto_cdc model (s)"),
                *("same table", *memory),
            )
            for adapter in adapters:
                r = against_baseline(adapter, scd2_against_baseline)
                report.add(adapter, "in order", *comparison_cells(r), *memory_cells(r.ours))
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
                    *memory_cells(m),
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
                            *memory_cells(m),
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
                        megabytes(max(m.dbt_peak_mb for m in runs)),
                        megabytes(peak_db),
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
        if "9" in sections:
            per_store = min(10_000, sizes[0] // 2)
            report.section(
                f"9. Scoped snapshots: one store's extract ({per_store:,} rows; 5% changed, 1% gone, 1% new) into SCD1 "
                f"targets of growing size ({per_store:,} rows a store), replace_using=['store_id'], against a "
                f"hand-written delete + insert of that store (median of {repeat})",
                *("adapter", "target rows", "auto_cdc SQL (s)", "delete + insert SQL (s)", "ratio"),
                *("auto_cdc model (s)", "statements", "same table"),
            )
            for adapter, size in itertools.product(adapters, sizes):

                def scoped(project: CdcProject, server, _: Workload, stores: int = size // per_store) -> Comparison:
                    return scoped_snapshot_against_delete_insert(project, server, stores, per_store)

                c = against_baseline(adapter, scoped)
                report.add(
                    adapter,
                    f"{size:,}",
                    f"{c.ours.sql_s:.3f}",
                    f"{c.baseline_s:.3f}",
                    f"{c.ours.sql_s / c.baseline_s:.2f}x",
                    f"{c.ours.model_s:.2f}",
                    c.ours.statements,
                    "yes" if c.same_result else "NO",
                )
        if "10" in sections:
            debezium_section(adapters, server, largest, batch, repeat, report)
    finally:
        if server is not None:
            server.stop()
