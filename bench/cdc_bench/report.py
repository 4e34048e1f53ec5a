"""The report: the measured sections as Markdown tables, echoed line by line as they are measured,
the cells they share (peak memory, a comparison with its baseline), the machine's description
(CPU, memory, Python, dbt and its adapters), and BENCHMARKS.md written anew from
`bench/BENCHMARKS.head.md` and the tables, keeping what follows its "Written by hand" marker.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from . import REPO
from .measure import Comparison, Measure

# BENCHMARKS.md from this line on is written by hand (comparisons, targets, history): kept.
HAND_WRITTEN = "<!-- Written by hand from here on"


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


def megabytes(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def memory_cells(m: Measure) -> tuple[str, str]:
    return megabytes(m.dbt_peak_mb), megabytes(m.db_peak_mb)


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


def comparison_cells(r: Comparison) -> tuple[str, str, str, str, bool]:
    """SQL, baseline, their ratio, model time, whether both left the same table."""
    m = r.ours
    return f"{m.sql_s:.3f}", f"{r.baseline_s:.3f}", f"{m.sql_s / r.baseline_s:.2f}x", f"{m.model_s:.2f}", r.same_result


def write_benchmarks(report: Report, output: Path, started: float) -> None:
    """BENCHMARKS.md: the head (machine, minutes since `started`), the measured tables, and the
    part written by hand, as the file has it."""
    head = (REPO / "bench" / "BENCHMARKS.head.md").read_text()
    head = head.format(machine=_machine(), minutes=f"{(time.time() - started) / 60:.0f}")
    kept = output.read_text().partition(HAND_WRITTEN)[1:] if output.exists() else ("", "")
    output.write_text(head + "\n".join(report.lines) + "\n\n" + "".join(kept).strip() + "\n")
