"""Many auto_cdc models in one `dbt run` (one thread): the per-model overhead (section 5: how much
of the materialization's Python/Jinja time is paid once per process and how much per model),
and tables kept up to date by auto_cdc models against dbt incremental merge models over the same
feeds, what a user writes without auto_cdc (sections 7 and 8: many small tables, one big one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from harness import CdcProject

from .measure import Measure, dbt, timed_statements
from .workloads import CDC, MANY, Workload, many_events


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
        float(r["execution_time"]) - sum(elapsed for elapsed, _ in timed_statements(log, r["unique_id"]))
        for r in results
    ]
    rest = sorted(jinja[1:])
    return Overhead(models, whole, jinja[0], rest[len(rest) // 2] if rest else float("nan"))


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
        many_events(project, f"events{i}", w, 1)
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
            many_events(project, f"events{i}", w, load)
    if project.adapter == "postgres":
        project.execute("analyze")
    if incremental_first is None:
        incremental_first = models % 2 == 0
    measured: dict[str, Measure] = {}
    for tool in ("incremental", "auto_cdc") if incremental_first else ("auto_cdc", "incremental"):
        measured[tool] = dbt(project, server, "run", "--threads", "1", "-s", f"tag:{tool}")
    return measured
