"""dbt model contracts describe the target: its columns and types are checked before anything
is written, and the constraints are created with the table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ADAPTERS, SPARK, V2, CdcProject
from scenarios import CONFIG, EVENTS, HISTORY, MODEL, fails

pytestmark = [pytest.mark.dbt_v2, pytest.mark.spark]  # on DuckDB under dbt v2 and on Spark too


def _contract(project: CdcProject, columns: list[dict[str, Any]], scd_type: int = 1) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type)
    columns = [{**column, "data_type": project.type_name(column["data_type"])} for column in columns]
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


@pytest.mark.parametrize("project", [*ADAPTERS, V2], indirect=True)  # Spark: the next test
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


@pytest.mark.parametrize("project", [SPARK], indirect=True)
def test_on_spark_not_null_is_enforced_and_other_constraints_are_declared_only(project: CdcProject) -> None:
    """Iceberg enforces NOT NULL; the other constraints are declared with a warning naming them,
    as dbt-spark does, and the target holds what the events say."""
    _contract(
        project,
        [
            {"name": "id", "data_type": "integer", "constraints": [{"type": "primary_key"}, {"type": "not_null"}]},
            {"name": "name", "data_type": "varchar", "constraints": [{"type": "unique"}]},
        ],
    )
    outcome = project.run("dim")
    declared = "the contract's primary_key on id; unique on name constraint(s) are declared, not enforced"
    assert any(declared in warning for warning in outcome.warnings), outcome.warnings
    assert project.spark is not None
    schema = project.spark.session.table(project.relation("dim")).schema
    assert (schema["id"].nullable, schema["name"].nullable) == (False, True)  # a required Iceberg field
    project.replace_rows("events", [(1, "a3", "U", 3), (2, None, "D", 3), (4, "d", "U", 3)])
    assert project.run("dim").metrics("dim") == (2, 1)
    assert project.rows("dim") == [(1, "a3"), (4, "d")]
