"""dbt model contracts describe the target: its columns and types are checked before anything
is written, and the constraints are created with the table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import CdcProject
from scenarios import CONFIG, EVENTS, HISTORY, MODEL, fails

pytestmark = pytest.mark.dbt_v2  # on DuckDB under dbt v2 too


def _contract(project: CdcProject, columns: list[dict[str, Any]], scd_type: int = 1) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type)
    spec = {"version": 2, "models": [{"name": "dim", "config": {"contract": {"enforced": True}}, "columns": columns}]}
    project.write("models/schema.yml", json.dumps(spec))
    project.replace_rows("events", HISTORY)


@pytest.mark.parametrize("scd_type", [1, 2])
def test_contract_that_matches_the_target_passes(project: CdcProject, scd_type: int) -> None:
    columns = [{"name": "id", "data_type": "integer"}, {"name": "name", "data_type": "varchar"}]
    if scd_type == 2:
        columns.append({"name": "__START_AT", "data_type": "integer", "quote": True})
    _contract(project, columns, scd_type)
    assert project.run("dim").success


def test_contract_with_a_wrong_type_fails(project: CdcProject) -> None:
    _contract(project, [{"name": "id", "data_type": "integer"}, {"name": "name", "data_type": "date"}])
    fails(project, "contract", "name")
    assert not project.exists("dim")


def test_contract_with_a_missing_or_undeclared_column_fails(project: CdcProject) -> None:
    _contract(project, [{"name": "id", "data_type": "integer"}])
    fails(project, "contract", "name")
    _contract(
        project,
        [
            {"name": "id", "data_type": "integer"},
            {"name": "name", "data_type": "varchar"},
            {"name": "city", "data_type": "varchar"},
        ],
    )
    fails(project, "contract", "city")


def test_contract_not_null_constraint_is_enforced(project: CdcProject) -> None:
    not_null = [{"type": "not_null"}]
    _contract(
        project,
        [
            {"name": "id", "data_type": "integer", "constraints": not_null},
            {"name": "name", "data_type": "varchar", "constraints": not_null},
        ],
    )
    project.run("dim")
    before = project.snapshot(*project.cdc_tables("dim"))
    project.replace_rows("events", [(1, None, "U", 5)])
    outcome = project.dbt("run", "--select", "dim")
    assert not outcome.success and "null" in outcome.error.lower()
    assert project.snapshot(*project.cdc_tables("dim")) == before


def test_contract_primary_key_is_created_and_holds_across_runs(project: CdcProject) -> None:
    _contract(
        project,
        [
            {"name": "id", "data_type": "integer", "constraints": [{"type": "primary_key"}]},
            {"name": "name", "data_type": "varchar"},
        ],
    )
    project.run("dim")
    constraint = project.query(
        "select constraint_type from information_schema.table_constraints "
        f"where table_schema = '{project.schema}' and table_name = 'dim'"
    )
    assert ("PRIMARY KEY",) in constraint
    project.replace_rows("events", [(1, "a3", "U", 3), (2, None, "D", 3), (4, "d", "U", 3)])
    assert project.run("dim").metrics("dim") == (2, 1)
    assert project.rows("dim") == [(1, "a3"), (4, "d")]
