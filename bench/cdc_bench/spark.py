"""Section 6, Spark 3.5 with Iceberg tables: auto_cdc's SCD1 against a hand-written dedupe plus one
MERGE into a copy of the same target (same table properties), both on one local session in this
process (dbt-spark's session mode). One JVM serves the whole section, since its Derby metastore
allows one; the Spark extra and Java 17 are needed only here.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from pathlib import Path

from harness import CdcProject

from .baselines import same_table, scd1_merge_sql
from .measure import Comparison, spark_dbt, timed_statements
from .report import Report
from .workloads import Workload, load_batch, load_initial

ICEBERG_MOR = (
    "using iceberg tblproperties ('format-version' = '2', 'write.merge.mode' = 'merge-on-read', "
    "'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')"
)


def spark_against_merge(project: CdcProject, w: Workload) -> Comparison:
    """SCD1 on an Iceberg target: auto_cdc against a hand-written dedupe plus one MERGE into a
    copy of the same target (same table properties), on the same session."""
    assert project.spark is not None
    load_initial(project, w)
    project.model("dim", "select * from {{ target.schema }}.events", **w.config())
    spark_dbt(project, "run", "-s", "dim")
    dim, base, events = project.relation("dim"), project.relation("base"), project.relation("events")
    project.execute(f"create table {base} {ICEBERG_MOR} as select * from {dim}")
    load_batch(project, w)
    cols = w.written_columns()
    merge = scd1_merge_sql(base, events, cols)
    started = time.perf_counter()
    project.spark.session.sql(merge).collect()
    baseline = time.perf_counter() - started
    ours = spark_dbt(project, "run", "-s", "dim")
    return Comparison(ours, baseline, same_table(project, "base", "dim"))


def spark_section(sizes: list[int], batch: int, columns: int, repeat: int, report: Report) -> None:
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
                            statements = len(timed_statements(project.path / "logs" / "dbt.log"))
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
