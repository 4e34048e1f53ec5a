"""The mass-delete guard of auto_cdc_from_snapshot: a snapshot that would delete most keys
(an empty or truncated extract) fails before writing, unless configured otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CdcProject
from scenarios import built_snapshots, fails, load_snapshot, snapshot_model

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]


def _guarded(project: CdcProject, keys: int, **extra: Any) -> None:
    built_snapshots(project, "per_run", [(k, f"c{k}") for k in range(keys)], scd_type=1, **extra)


@pytest.mark.parametrize("snapshot", ["truncated", "empty"])
def test_snapshot_that_deletes_most_keys_fails(project: CdcProject, snapshot: str) -> None:
    _guarded(project, 20)
    rows = [(k, f"c{k}") for k in range(5)] if snapshot == "truncated" else []
    load_snapshot(project, 0, rows, replace=True)
    deleted = 15 if snapshot == "truncated" else 20
    fails(project, "version 1", f"delete {deleted} of the 20 keys", "`max_delete_fraction`", model="users")


def test_mass_delete_guard_by_version_column_checks_each_version(project: CdcProject) -> None:
    project.create_table("source", {"version": "bigint", "id": "integer", "city": "varchar"})
    snapshot_model(project, "column", scd_type=2)
    load_snapshot(project, 1, [(k, "a") for k in range(12)], replace=True)
    load_snapshot(project, 2, [(k, "a") for k in range(12)], replace=False)
    load_snapshot(project, 3, [(1, "a")], replace=False)
    fails(project, "version 3", "delete 11 of the 12 keys", model="users")


def test_mass_delete_guard_can_be_raised_or_turned_off(project: CdcProject) -> None:
    _guarded(project, 20, max_delete_fraction=1)
    load_snapshot(project, 0, [], replace=True)
    assert project.run("users").metrics("users") == (0, 20)
    _guarded(project, 20, max_delete_fraction=0.8)
    load_snapshot(project, 0, [(k, "c") for k in range(5)], replace=True)
    assert project.run("users").metrics("users") == (5, 15)


def test_mass_delete_guard_leaves_tiny_tables_alone(project: CdcProject) -> None:
    _guarded(project, 5)
    load_snapshot(project, 0, [], replace=True)
    assert project.run("users").metrics("users") == (0, 5)
