"""The mass-delete guard of auto_cdc_from_snapshot: a snapshot that would delete most keys
(an empty or truncated extract) fails before writing, unless configured otherwise; a snapshot
with no rows against current rows fails whatever the table's size (SPEC 6.1)."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CdcProject
from scenarios import built_snapshots, fails, load_snapshot, snapshot_model

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]


def _guarded(project: CdcProject, keys: int, **extra: Any) -> None:
    built_snapshots(project, "per_run", [(k, f"c{k}") for k in range(keys)], scd_type=1, **extra)


def test_snapshot_that_deletes_most_keys_fails(project: CdcProject) -> None:
    _guarded(project, 20)
    load_snapshot(project, 0, [(k, f"c{k}") for k in range(5)], replace=True)
    fails(project, "version 1", "delete 15 of the 20 keys", "`max_delete_fraction`", model="users")


@pytest.mark.parametrize("keys", [3, 20])
def test_empty_snapshot_fails_whatever_the_size_and_the_fraction(project: CdcProject, keys: int) -> None:
    _guarded(project, keys, max_delete_fraction=1)
    load_snapshot(project, 0, [], replace=True)
    fails(project, "version 1 has no rows", f"delete all {keys} keys", "`allow_empty_snapshots: true`", model="users")


def test_empty_snapshot_applies_when_allowed(project: CdcProject) -> None:
    _guarded(project, 20, allow_empty_snapshots=True)
    load_snapshot(project, 0, [], replace=True)
    assert project.run("users").metrics("users") == (0, 20)
    load_snapshot(project, 0, [(1, "back")], replace=True)
    assert project.run("users").metrics("users") == (1, 0)


def test_empty_snapshot_on_an_empty_target_is_no_change(project: CdcProject) -> None:
    _guarded(project, 0)
    assert project.run("users").metrics("users") == (0, 0)


def test_upstream_view_built_with_empty_writes_no_gap(project: CdcProject) -> None:
    """`dbt run -s +users --empty` builds the staging view with `limit 0` (dbt's doing); the
    next run of the snapshot model alone must not read that as a source that emptied."""
    project.create_table("source", {"id": "integer", "city": "varchar"})
    project.insert("source", [(k, f"c{k}") for k in range(3)])
    project.write(
        "models/sources.yml",
        "sources: [{name: raw, schema: '{{ target.schema }}', tables: [{name: source}]}]\n",
    )
    project.model("stg", "select id, city from {{ source('raw', 'source') }}", materialized="view")
    project.model(
        "users",
        "select * from {{ ref('stg') }}",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        stored_as_scd_type=2,
    )
    assert project.dbt("run").success
    assert project.dbt("run", "--select", "+users", "--empty").success
    if project.adapter == "spark":  # dbt-spark builds the view whole under --empty: nothing to refuse
        assert project.run("users").metrics("users") == (0, 0)
    else:
        fails(project, "version 1 has no rows", "delete all 3 keys", "dbt run -s +users", model="users")
    assert project.dbt("run").success  # the view rebuilt: the snapshot is whole again
    history = project.query(
        project.dialect(f'select id, "__START_AT", "__END_AT" from {project.relation("users")} order by id')
    )
    assert history == [(0, 0, None), (1, 0, None), (2, 0, None)]


def test_mass_delete_guard_by_version_column_checks_each_version(project: CdcProject) -> None:
    project.create_table("source", {"version": "bigint", "id": "integer", "city": "varchar"})
    snapshot_model(project, "column", scd_type=2)
    load_snapshot(project, 1, [(k, "a") for k in range(12)], replace=True)
    load_snapshot(project, 2, [(k, "a") for k in range(12)], replace=False)
    load_snapshot(project, 3, [(1, "a")], replace=False)
    fails(project, "version 3", "delete 11 of the 12 keys", model="users")


def test_mass_delete_guard_can_be_raised_or_turned_off(project: CdcProject) -> None:
    _guarded(project, 20, max_delete_fraction=1)
    load_snapshot(project, 0, [(0, "c0")], replace=True)
    assert project.run("users").metrics("users") == (0, 19)
    _guarded(project, 20, max_delete_fraction=0.8)
    load_snapshot(project, 0, [(k, "c") for k in range(5)], replace=True)
    assert project.run("users").metrics("users") == (5, 15)


def test_mass_delete_guard_leaves_tiny_tables_alone(project: CdcProject) -> None:
    _guarded(project, 5)
    load_snapshot(project, 0, [(0, "c0")], replace=True)
    assert project.run("users").metrics("users") == (0, 4)
