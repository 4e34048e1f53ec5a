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
    # Which rows, how many, and how to break the tie.
    outcome = fails(
        project,
        "2 key(s) have two or more different events at the same sequence",
        "for example id=1, seq=1: they differ in: name (upsert name='a'; upsert name='b')",
        "add a column that orders them to `sequence_by` (e.g. sequence_by=['seq', '<load time or log offset>'])",
    )
    assert "Compilation Error" not in outcome.error
    project.replace_rows("events", [(2, "c", "U", 1, "y"), (2, "c", "U", 1, None)])
    fails(
        project, "for example id=2, seq=1: they differ in: city (upsert city=NULL; upsert city='y')"
    )  # NULL differs too
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


REDELIVERY_MODELS: dict[str, dict[str, Any]] = {
    "scd1": {},
    "scd1_partial": {"ignore_null_updates": True},
    "scd2": {"stored_as_scd_type": 2},
    "bitemporal": {"stored_as_scd_type": "bitemporal", "system_sequence_by": "seq"},
}


@pytest.mark.parametrize("model", REDELIVERY_MODELS)
def test_a_redelivery_with_other_contents_replaces_with_a_warning_and_a_full_refresh_says_which(
    project: CdcProject, model: str
) -> None:
    """SPEC 3.5: an event delivered again in a later run at a stored key and sequence replaces
    the stored one; when it differs, the run says so (one run over both fails as a conflict),
    and the run history keeps the count and an example. The full refresh then names the rows."""
    project.create_table("events", {**EVENTS, "loaded_at": "integer"})
    config = {**CONFIG, "except_column_list": ["op", "seq", "loaded_at"], "checkpoint_column": "loaded_at"}
    project.model("dim", MODEL, **config, **REDELIVERY_MODELS[model])
    project.insert("events", [(3, "paid", "U", 7, 1), (4, "open", "U", 7, 1)])
    assert not [w for w in project.run("dim").warnings if "delivered before" in w]
    project.insert("events", [(5, "new", "U", 1, 2)])  # the next run reads load 1 again: the same events
    assert not [w for w in project.run("dim").warnings if "delivered before" in w]

    project.insert("events", [(3, "cancelled", "U", 7, 3), (4, "open", "U", 7, 3)])  # 4: an identical copy
    outcome = project.run("dim")
    said = [w for w in outcome.warnings if "delivered before" in w]
    assert len(said) == 1, outcome.warnings
    for part in (
        "1 event(s) of this run",
        "(e.g. id=3 at seq=7)",
        "`dbt run --full-refresh`",
        "sequence_by=['seq', 'loaded_at']",
    ):
        assert part in said[0], said[0]
    assert outcome.metrics("dim") == (1, 0)
    assert "cancelled" in str(project.rows("dim")) and "paid" not in str(project.rows("dim"))
    runs_table = project.relation("dim__cdc_runs")
    runs = project.query(f"select num_differing_redeliveries, differing_redelivery from {runs_table} order by run_id")
    assert runs == [(0, None), (0, None), (1, "id=3 at seq=7")]
    state = project.relation("dim__cdc_state")
    assert project.query(f"select count(*) from {state} where id = 3") == [(1,)]  # the stored copy replaced

    # Read again at the checkpoint (loaded_at 3): the same events, no warning, nothing changes.
    outcome = project.run("dim")
    assert not [w for w in outcome.warnings if "delivered before" in w]
    assert outcome.metrics("dim") == (0, 0)

    fails(
        project,
        "1 key(s) have two or more different events at the same sequence",
        "for example id=3, seq=7",
        "upsert name='cancelled'; upsert name='paid'",
        "sequence_by=['seq', 'loaded_at']",
        args=("--full-refresh",),
    )


@pytest.mark.parametrize("scd_type", [1, 2])
def test_a_redelivered_delete_at_the_sequence_of_a_stored_upsert_warns(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type)
    project.replace_rows("events", [(3, "paid", "U", 7)])
    project.run("dim")
    project.replace_rows("events", [(3, None, "D", 7)])
    outcome = project.run("dim")
    assert [w for w in outcome.warnings if "delivered before" in w and "id=3 at seq=7" in w], outcome.warnings
