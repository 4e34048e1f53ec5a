"""The snapshot function of SPEC 7.5 (Databricks' `next_snapshot_and_version`), for
`snapshot_version_function='user_snapshots:next_snapshot_and_version'`.

Snapshots are dated files `snapshot_<version>.csv`; each call returns the oldest one above the
last processed version, as a path DuckDB reads, or None when there is none.
"""

from __future__ import annotations

from pathlib import Path

SNAPSHOT_DIR = Path(__file__).resolve().parent.parent / "data" / "user_snapshots"


def next_snapshot_and_version(latest_snapshot_version: int | None) -> tuple[str, int] | None:
    snapshot_versions = []
    for path in SNAPSHOT_DIR.glob("snapshot_*.csv"):
        try:
            snapshot_versions.append(int(path.stem.removeprefix("snapshot_")))
        except ValueError:
            continue
    snapshot_versions.sort()

    if latest_snapshot_version is None:
        next_versions = snapshot_versions
    else:
        next_versions = [v for v in snapshot_versions if v > latest_snapshot_version]
    if not next_versions:
        return None
    next_version = next_versions[0]
    return str(SNAPSHOT_DIR / f"snapshot_{next_version}.csv"), next_version
