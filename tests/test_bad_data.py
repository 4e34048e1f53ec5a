"""Bad data is named, never skipped: a NULL checkpoint value, events for one key and sequence
that really conflict (with the columns that differ), and a sequence that orders as text."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CdcProject
from scenarios import CONFIG, EVENTS, MODEL, fails

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]


def test_null_checkpoint_value_fails_like_a_null_key(project: CdcProject) -> None:
    project.create_table("events", {**EVENTS, "loaded_at": "integer"})
    project.model("dim", MODEL, **CONFIG, checkpoint_column="loaded_at")
    project.replace_rows("events", [(1, "a", "U", 1, 10)])
    project.run("dim")
    project.insert("events", [(2, "b", "U", 1, None), (3, "c", "U", 1, None), (4, "d", "U", 1, 11)])
    outcome = fails(project, "2 event(s)", "NULL", "`checkpoint_column` 'loaded_at'")
    assert "Compilation Error" not in outcome.error


@pytest.mark.parametrize("scd_type", [1, 2, "bitemporal"])
def test_redelivery_differing_only_in_columns_not_kept_is_one_event(project: CdcProject, scd_type: Any) -> None:
    project.create_table("events", {**EVENTS, "ingested_at": "integer"})
    config = {**CONFIG, "except_column_list": ["op", "seq", "ingested_at"], "stored_as_scd_type": scd_type}
    if scd_type == "bitemporal":
        config["system_sequence_by"] = "seq"
    project.model("dim", MODEL, **config)
    project.replace_rows(
        "events", [(1, "a", "U", 1, 100), (1, "a", "U", 1, 200), (2, None, "D", 1, 100), (2, None, "D", 1, 300)]
    )
    assert project.run("dim").metrics("dim") == (1, 0)
    project.insert("events", [(1, "a", "U", 1, 400)])
    assert project.run("dim").metrics("dim") == (0, 0)


def test_redelivered_columns_to_update_lists_in_another_order_are_one_event(project: CdcProject) -> None:
    project.create_table("events", {**EVENTS, "city": "varchar", "changed": "varchar"})
    project.model("dim", MODEL, **CONFIG, columns_to_update="changed")
    project.replace_rows(
        "events",
        [
            (1, "a", "U", 1, "x", "name, city"),
            (1, "a", "U", 1, "x", "city,name"),
            (1, "a", "U", 1, "y", "name, ingested"),
        ],
    )
    fails(project, "differ in: city")  # the third event writes only name, so city differs
    project.replace_rows("events", [(1, "a", "U", 1, "x", "name, city"), (1, "a", "U", 1, "x", "city,name")])
    assert project.run("dim").metrics("dim") == (1, 0)


def test_conflicting_events_name_the_columns_that_differ(project: CdcProject) -> None:
    project.create_table("events", {**EVENTS, "city": "varchar"})
    project.model("dim", MODEL, **CONFIG)
    project.replace_rows(
        "events", [(1, "a", "U", 1, "x"), (1, "b", "U", 1, "x"), (2, "c", "U", 1, "y"), (2, "c", "U", 1, None)]
    )
    outcome = fails(project, "same key and sequence", "for example id=1, seq=1", "differ in: name)")
    assert "Compilation Error" not in outcome.error
    project.replace_rows("events", [(2, "c", "U", 1, "y"), (2, "c", "U", 1, None)])
    fails(project, "for example id=2, seq=1", "differ in: city)")  # a NULL against a value differs too
    project.replace_rows("events", [(2, "c", "U", 1, "y"), (2, None, "D", 1, None)])
    fails(project, "differ in: the kind of event")


def test_text_sequence_warns_that_it_orders_as_text(project: CdcProject) -> None:
    project.create_table("events", {"id": "integer", "name": "varchar", "seq": "varchar"})
    project.model("dim", MODEL, keys=["id"], sequence_by="seq")
    project.replace_rows("events", [(1, "a", "50"), (1, "b", "150")])
    outcome = project.run("dim")
    said = ("orders as text", "`sequence_by`", "widths 2 to 3")
    assert any(all(part in w for part in said) for w in outcome.warnings), outcome.warnings
    if project.adapter == "duckdb":
        assert not any("character varying(256)" in w for w in outcome.warnings), outcome.warnings
    project.model("dim", MODEL, keys=["id"], sequence_by="cast(seq as integer)")
    assert not any("orders as text" in w for w in project.run("dim", full_refresh=True).warnings)
    assert project.rows("dim") == [(1, "b", "150")]


@pytest.mark.parametrize("scd_type", [1, 2])
def test_a_fixed_width_text_sequence_is_only_warned_about_when_its_width_changes(
    project: CdcProject, scd_type: int
) -> None:
    """SQL Server's change_lsn as hex text: one width, so it orders correctly; no warning on any
    run, until a batch of another width than the stored sequences arrives."""
    project.create_table("events", {"id": "integer", "name": "varchar", "seq": "varchar"})
    project.model("dim", MODEL, keys=["id"], sequence_by="seq", stored_as_scd_type=scd_type)
    project.replace_rows("events", [(1, "a", "0x0000002A000001B80003"), (2, "b", "0x0000002A000001B80004")])
    assert not any("orders as text" in w for w in project.run("dim").warnings)
    project.replace_rows("events", [(1, "c", "0x0000002A000001C00001")])
    assert not any("orders as text" in w for w in project.run("dim").warnings)
    project.replace_rows("events", [(2, "d", "0x2B00000001")])
    outcome = project.run("dim")
    assert any("values of width 12, the stored ones of width 22" in w for w in outcome.warnings), outcome.warnings
