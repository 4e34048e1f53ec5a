"""The benchmark's code, behind `bench/run.py`: the workloads (event feeds loaded into a table),
the baselines auto_cdc is compared with (hand-written SQL, a Spark MERGE, `dbt snapshot`, dbt
incremental models), the measurement of a dbt run (statement timings from dbt's JSON debug log,
peak memory), the numbered sections that put them together, and the report that rewrites
BENCHMARKS.md. It reuses the tests' throwaway dbt project (`harness`) and private PostgreSQL
server (`postgres_server`), so `tests/` goes on the import path here, before any module of the
package imports them.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

if str(REPO / "tests") not in sys.path:
    sys.path.insert(0, str(REPO / "tests"))
