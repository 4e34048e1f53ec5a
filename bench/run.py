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

This file reads the arguments; the benchmark is the package beside it, bench/cdc_bench/: the
workloads, the baselines, the measurement of a dbt run, the numbered sections and the report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from cdc_bench import REPO, measure, workloads
from cdc_bench.report import Report, write_benchmarks
from cdc_bench.sections import run_all


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
    sections = [str(n) for n in range(1, 11)]
    parser.add_argument("--only", nargs="+", choices=sections, help="measure only these sections (print only)")
    parser.add_argument(
        "--quarantine",
        action="store_true",
        help="on_bad_rows='quarantine' on the models of sections 1, 2, 3 and 6 (print only)",
    )
    parser.add_argument("--output", default=str(REPO / "BENCHMARKS.md"))
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.big, args.batch, args.snapshot_rows, args.repeat = [20_000], 0, 2_000, 5_000, 1
    started = time.time()
    report = Report(lambda line: print(line, flush=True))
    measure.PROFILE = args.profile
    if args.quarantine:
        workloads.EXTRA_CONFIG["on_bad_rows"] = "quarantine"
    sizes = (args.sizes, args.big, args.batch, args.columns, args.snapshot_rows, args.repeat)
    run_all(args.adapters, *sizes, report, args.only or [str(n) for n in range(1, 10)])
    if args.quick or args.only or args.quarantine:
        return
    write_benchmarks(report, Path(args.output), started)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
