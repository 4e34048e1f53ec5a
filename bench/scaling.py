"""Does a run cost what the batch costs, not what the target costs?

Builds targets of several sizes with auto_cdc, then applies one batch of events (updates of
existing keys, new keys, deletes, and late events older than the stored rows) and reports the
model's execution time from run_results.json (dbt start-up and parsing excluded).

    python bench/scaling.py [--sizes 100000 1000000] [--batch 10000] [--adapters duckdb postgres] [--scd-type 1|2]

PostgreSQL: a private server is started as in the tests (or AUTO_CDC_PGPORT is used).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import postgres_server
from harness import CdcProject

CONFIG = {
    "keys": ["id"],
    "sequence_by": "seq",
    "apply_as_deletes": "op = 'D'",
    "except_column_list": ["op", "seq"],
}


def _series(adapter: str, n: int) -> str:
    return f"generate_series(1, {n}) as g(i)" if adapter == "postgres" else f"range(1, {n} + 1) as g(i)"


def _execution_time(project: CdcProject) -> float:
    results = json.loads((project.path / "target" / "run_results.json").read_text())
    return float(results["results"][0]["execution_time"])


def measure(project: CdcProject, size: int, batch: int, scd_type: int = 1) -> dict[str, float]:
    adapter = project.adapter
    project.create_table(
        "events", {"id": "bigint", "name": "varchar", "city": "varchar", "op": "varchar", "seq": "bigint"}
    )
    project.model("dim", "select * from {{ target.schema }}.events", **CONFIG, stored_as_scd_type=scd_type)
    events = project.relation("events")
    project.execute(
        f"insert into {events} select i, 'name ' || i, 'city ' || (i % 97), 'U', 10 from {_series(adapter, size)}"
    )
    started = time.perf_counter()
    project.run("dim", full_refresh=True)
    load = time.perf_counter() - started
    if adapter == "postgres":
        project.execute(f"analyze {project.relation('dim')}")
        project.execute(f"analyze {project.relation('dim__cdc_state')}")
    # The batch: 70% updates, 10% late (older than the stored row), 10% deletes, 10% new keys,
    # spread over the whole key range.
    step = max(size // batch, 1)
    project.execute(f"truncate table {events}")
    project.execute(
        f"insert into {events} select "
        f"case when i % 10 = 9 then {size} + i else i * {step} end, "
        f"'renamed ' || i, 'city ' || (i % 89), case when i % 10 = 8 then 'D' else 'U' end, "
        f"case when i % 10 = 7 then 5 else 20 end "
        f"from {_series(adapter, batch)}"
    )
    outcome = project.run("dim")
    return {"load_s": load, "apply_s": _execution_time(project), "metrics": outcome.message("dim")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--adapters", nargs="+", default=["duckdb", "postgres"])
    parser.add_argument("--scd-type", type=int, choices=[1, 2], default=1)
    args = parser.parse_args()
    server = postgres_server.start() if "postgres" in args.adapters else None
    print("| adapter | SCD type | target rows | batch events | apply (s) | metrics |\n|---|---|---|---|---|---|")
    try:
        for adapter in args.adapters:
            for size in args.sizes:
                with tempfile.TemporaryDirectory() as tmp:
                    project = CdcProject(Path(tmp), adapter, server)
                    try:
                        result = measure(project, size, args.batch, args.scd_type)
                    finally:
                        project.close()
                cells = [
                    adapter,
                    args.scd_type,
                    f"{size:,}",
                    f"{args.batch:,}",
                    f"{result['apply_s']:.2f}",
                    result["metrics"],
                ]
                print("| " + " | ".join(map(str, cells)) + " |", flush=True)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
