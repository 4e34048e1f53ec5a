"""Column types: types without an equality operator work (compared through their text form),
a widened source column widens the stored tables exactly, and any other change fails."""

from __future__ import annotations

from decimal import Decimal

import pytest

from harness import CdcProject
from scenarios import MODEL, fails, snapshot_model

pytestmark = pytest.mark.dbt_v2  # on DuckDB under dbt v2 too

# --- types without an equality operator ----------------------------------------------------------


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # DuckDB's JSON compares as text already
@pytest.mark.parametrize("scd_type", [1, 2])
def test_json_xml_and_point_columns_on_postgres(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", {"id": "integer", "doc": "json", "x": "xml", "p": "point", "seq": "integer"})
    project.model("dim", MODEL, keys=["id"], sequence_by="seq", except_column_list=["seq"], stored_as_scd_type=scd_type)
    project.replace_rows("events", [(1, '{"a": 1}', "<a/>", "(1,2)", 1), (1, '{"a": 1}', "<a/>", "(1,2)", 1)])
    assert project.run("dim").metrics("dim") == (1, 0)
    project.replace_rows("events", [(1, '{"a": 2}', "<a/>", "(1,2)", 2), (1, '{"a": 1}', "<a/>", "(1,2)", 1)])
    assert project.run("dim").metrics("dim") == ((1, 0) if scd_type == 1 else (2, 0))
    assert project.run("dim").metrics("dim") == (0, 0)
    docs = project.query(f"select doc::text from {project.relation('dim')} order by 1")
    assert docs == ([('{"a": 2}',)] if scd_type == 1 else [('{"a": 1}',), ('{"a": 2}',)])


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # PostgreSQL has no max(uuid)
@pytest.mark.parametrize("scd_type", [1, 2])
def test_a_uuid_sequence_on_postgres(project: CdcProject, scd_type: int) -> None:
    """An orderable type without max() (time-ordered UUIDs, e.g. version 7) sequences events."""
    project.create_table("events", {"id": "integer", "v": "varchar", "seq": "uuid"})
    project.model("dim", MODEL, keys=["id"], sequence_by="seq", except_column_list=["seq"], stored_as_scd_type=scd_type)
    first, second, third = (f"0190{n:04x}-0000-7000-8000-000000000000" for n in (1, 2, 3))
    project.replace_rows("events", [(1, "a", first), (1, "b", third)])
    project.run("dim")
    project.replace_rows("events", [(1, "late", second)])
    project.run("dim")
    values = [row[1] for row in sorted(project.rows("dim"), key=lambda row: row[2] if scd_type == 2 else row[0])]
    assert values == (["b"] if scd_type == 1 else ["a", "late", "b"]), project.rows("dim")  # by __START_AT


@pytest.mark.parametrize("project", ["postgres"], indirect=True)
def test_json_in_snapshots_on_postgres(project: CdcProject) -> None:
    project.create_table("source", {"id": "integer", "doc": "json"})
    project.model(
        "users",
        "select * from {{ target.schema }}.source",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        stored_as_scd_type=2,
    )
    project.insert("source", [(1, '{"a": 1}'), (2, '{"b": 1}')])
    project.run("users")
    project.replace_rows("source", [(1, '{"a": 2}'), (2, '{"b": 1}')])
    assert project.run("users").metrics("users") == (2, 0)


# --- column types that change in the source ------------------------------------------------------


@pytest.mark.parametrize("scd_type", [1, 2])
def test_widened_columns_widen_the_target_exactly(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", {"id": "integer", "amount": "decimal(10,2)", "n": "integer", "seq": "integer"})
    config = {"keys": ["id"], "sequence_by": "seq", "except_column_list": ["seq"], "stored_as_scd_type": scd_type}
    project.model("dim", MODEL, **config)
    project.replace_rows("events", [(1, "5.12", 1, 1)])
    project.run("dim")
    project.execute(f"drop table {project.relation('events')}")
    project.create_table("events", {"id": "bigint", "amount": "decimal(12,4)", "n": "bigint", "seq": "bigint"})
    project.insert("events", [(1, "5.12", 1, 1), (1, "5.1234", 3_000_000_000, 2), (3_000_000_000, "1.0001", 1, 1)])
    outcome = project.run("dim")
    assert outcome.metrics("dim") == ((2, 0) if scd_type == 1 else (3, 0))
    current = f"select id, amount, n from {project.relation('dim')}"
    if scd_type == 2:
        current += ' where "__END_AT" is null'
    assert sorted(project.query(current)) == [
        (1, Decimal("5.1234"), 3_000_000_000),
        (3_000_000_000, Decimal("1.0001"), 1),
    ]
    assert project.run("dim").metrics("dim") == (0, 0)
    assert project.run("dim").metrics("dim") == (0, 0)


@pytest.mark.spark
@pytest.mark.parametrize("project", ["spark"], indirect=True)
@pytest.mark.parametrize("scd_type", [1, 2])
def test_iceberg_widens_what_it_can_and_fails_before_writing_otherwise(project: CdcProject, scd_type: int) -> None:
    """Iceberg widens int to bigint and a decimal's precision at the same scale, nothing else:
    a scale change fails naming the column, before any table is altered or written."""
    project.create_table("events", {"id": "integer", "amount": "decimal(10,2)", "seq": "integer"})
    config = {"keys": ["id"], "sequence_by": "seq", "except_column_list": ["seq"], "stored_as_scd_type": scd_type}
    project.model("dim", MODEL, **config)
    project.replace_rows("events", [(1, Decimal("5.12"), 1)])
    project.run("dim")
    project.execute(f"drop table {project.relation('events')}")
    project.create_table("events", {"id": "bigint", "amount": "decimal(14,2)", "seq": "bigint"})
    project.insert("events", [(1, Decimal("123456789.12"), 2), (3_000_000_000, Decimal("1.00"), 1)])
    assert project.run("dim").metrics("dim") == ((2, 0) if scd_type == 1 else (3, 0))
    current = f"select id, amount from {project.relation('dim')}" + (
        " where `__END_AT` is null" if scd_type == 2 else ""
    )
    assert sorted(project.query(current)) == [
        (1, Decimal("123456789.12")),
        (3_000_000_000, Decimal("1.00")),
    ]
    before = project.rows("dim")
    types = project.query(f"describe {project.relation('dim')}")
    project.execute(f"drop table {project.relation('events')}")
    project.create_table("events", {"id": "bigint", "amount": "decimal(16,4)", "seq": "bigint"})
    project.insert("events", [(1, Decimal("5.1234"), 3)])
    fails(project, "column 'amount'", "decimal(14,2)", "--full-refresh")
    assert project.rows("dim") == before
    assert project.query(f"describe {project.relation('dim')}") == types


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
def test_incompatible_type_change_fails_naming_the_column(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", {"id": "integer", "v": "integer", "seq": "integer"})
    config = {"keys": ["id"], "sequence_by": "seq", "except_column_list": ["seq"], "stored_as_scd_type": scd_type}
    project.model("dim", MODEL, **config)
    project.replace_rows("events", [(1, 5, 1)])
    project.run("dim")
    project.model(
        "dim",
        "select id, cast(v as {{ dbt.type_string() }}) || 'x' as v, seq from {{ target.schema }}.events",
        **config,
    )
    outcome = fails(project, "column 'v'", "cast(", "--full-refresh")
    assert outcome.error.count("is now of type") == 1, outcome.error  # one error, naming every table that holds it
    if scd_type == 2:
        assert "dim__cdc_state" in outcome.error, outcome.error
    if project.adapter == "duckdb":
        assert "VARCHAR" in outcome.error and "character varying(256)" not in outcome.error, outcome.error


def test_widened_snapshot_versions_and_columns_are_widened(project: CdcProject) -> None:
    project.create_table("source", {"version": "integer", "id": "integer", "amount": "decimal(10,2)"})
    snapshot_model(project, "column")
    project.insert("source", [(1, 1, "5.12"), (1, 2, "1.00")])
    project.run("users")
    project.execute(f"drop table {project.relation('source')}")
    project.create_table("source", {"version": "bigint", "id": "integer", "amount": "decimal(12,4)"})
    project.insert("source", [(3_000_000_000, 1, "5.1234"), (3_000_000_000, 2, "1.00")])
    assert project.run("users").metrics("users") == (2, 0)  # key 1: one version closed, one opened
    history = f'select id, amount, "__START_AT", "__END_AT" from {project.relation("users")} order by 1, 3'
    assert project.query(history) == [
        (1, Decimal("5.1200"), 1, 3_000_000_000),
        (1, Decimal("5.1234"), 3_000_000_000, None),
        (2, Decimal("1.0000"), 1, None),
    ]
    assert project.run("users").metrics("users") == (0, 0)


@pytest.mark.spark
def test_narrower_source_type_is_accepted(project: CdcProject) -> None:
    project.create_table("events", {"id": "integer", "v": "decimal(12,4)", "seq": "integer"})
    project.model("dim", MODEL, keys=["id"], sequence_by="seq", except_column_list=["seq"])
    project.replace_rows("events", [(1, Decimal("1.2345"), 1)])
    project.run("dim")
    project.model(
        "dim",
        "select id, cast(v as decimal(10,2)) as v, seq from {{ target.schema }}.events",
        keys=["id"],
        sequence_by="seq",
        except_column_list=["seq"],
    )
    project.replace_rows("events", [(1, Decimal("2.5"), 2)])
    assert project.run("dim").metrics("dim") == (1, 0)
