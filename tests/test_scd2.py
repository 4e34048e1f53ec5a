"""SCD type 2 (SPEC 3.3) through dbt on both adapters: the SPEC tables in one run and in split
runs, late events that repair closed history, partial updates, compaction, generic tests."""

from __future__ import annotations

import time

import pytest

import spec_data
from harness import CdcProject
from reference import Event, scd2, sort_rows
from scenarios import CITY_EVENTS, CONFIG, EPOCH_CONFIG, EPOCH_EVENTS, MODEL, run_batches
from spec_data import FEED_MODEL, USERS_CDF, USERS_COLUMNS, USERS_RUN, USERS_SCD2_CONFIG, shuffled_split

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]  # every case on Spark too

SPEC_7_3 = sort_rows(spec_data.SPEC_7_3)
SPEC_7_4 = sort_rows(spec_data.SPEC_7_4)


def _users(project: CdcProject, **config: object) -> None:
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **{**USERS_SCD2_CONFIG, **config})


def test_spec_7_3_in_one_run(project: CdcProject) -> None:
    _users(project)
    assert run_batches(project, USERS_CDF, **USERS_RUN) == [(7, 0)]
    assert project.rows("users") == SPEC_7_3
    assert project.columns("users") == ["userId", "name", "city", "__START_AT", "__END_AT"]


@pytest.mark.parametrize("split", ["one_per_run_reversed", "seed_3", "seed_5"])
def test_spec_7_3_any_split_and_order(project: CdcProject, split: str) -> None:
    _users(project)
    batches = (
        [[e] for e in reversed(USERS_CDF)]
        if split == "one_per_run_reversed"
        else shuffled_split(USERS_CDF, seed=int(split[-1]), runs=3)
    )
    run_batches(project, *batches, **USERS_RUN)
    assert project.rows("users") == SPEC_7_3


def test_spec_7_4_track_history_except_city(project: CdcProject) -> None:
    _users(project, track_history_except_column_list=["city"])
    run_batches(project, USERS_CDF, **USERS_RUN)
    assert project.rows("users") == SPEC_7_4


@pytest.mark.parametrize("seed", [2, 4])
def test_spec_7_4_split(project: CdcProject, seed: int) -> None:
    _users(project, track_history_column_list=["name"])
    run_batches(project, *shuffled_split(USERS_CDF, seed=seed, runs=4), **USERS_RUN)
    assert project.rows("users") == SPEC_7_4


# --- late events repairing history ----------------------------------------------------------

DIM_SCD2 = {**CONFIG, "stored_as_scd_type": 2}


def _dim(project: CdcProject, columns: dict[str, str] | None = None, **config: object) -> None:
    project.create_table("events", columns or CITY_EVENTS)
    project.model("dim", MODEL, **{**DIM_SCD2, **config})


def test_late_update_inside_a_closed_interval(project: CdcProject) -> None:
    _dim(project)
    metrics = run_batches(project, [(1, "a", "x", "U", 1), (1, "b", "x", "U", 10)], [(1, "late", "x", "U", 5)])
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 5), (1, "late", "x", 5, 10), (1, "b", "x", 10, None)])
    assert metrics == [(2, 0), (2, 0)]  # [1,10) shortened to [1,5), [5,10) new


def test_late_delete_inside_a_closed_interval(project: CdcProject) -> None:
    _dim(project)
    run_batches(project, [(1, "a", "x", "U", 1), (1, "b", "x", "U", 10)], [(1, None, None, "D", 5)])
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 5), (1, "b", "x", 10, None)])


def test_delete_before_any_upsert_closes_an_older_late_upsert(project: CdcProject) -> None:
    _dim(project)
    run_batches(project, [(1, None, None, "D", 8)], [(1, "old", "x", "U", 3)])
    assert project.rows("dim") == [(1, "old", "x", 3, 8)]


def test_upsert_delete_upsert_leaves_a_gap(project: CdcProject) -> None:
    _dim(project)
    metrics = run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "D", 4)], [(1, "a", "x", "U", 7)])
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 4), (1, "a", "x", 7, None)])
    assert metrics == [(1, 0), (1, 0), (1, 0)]


def test_late_event_splits_a_run_of_no_op_upserts(project: CdcProject) -> None:
    _dim(project, except_column_list=["op", "seq", "city"])
    run_batches(
        project,
        [
            (1, "Alice", None, "U", 5),
            (1, "Alice", None, "U", 10),
            (1, "Alice", None, "U", 15),
            (1, "Charlie", None, "U", 20),
        ],
        [(1, "Bob", None, "U", 12)],
    )
    assert project.rows("dim") == sort_rows(
        [(1, "Alice", 5, 12), (1, "Bob", 12, 15), (1, "Alice", 15, 20), (1, "Charlie", 20, None)]
    )


def test_untracked_change_updates_the_row_in_place(project: CdcProject) -> None:
    _dim(project, track_history_column_list=["name"])
    metrics = run_batches(project, [(1, "a", "x", "U", 1)], [(1, "a", "y", "U", 2)], [(1, "b", "y", "U", 3)])
    assert project.rows("dim") == sort_rows([(1, "a", "y", 1, 3), (1, "b", "y", 3, None)])
    assert metrics == [(1, 0), (1, 0), (2, 0)]


def test_sequence_column_is_not_tracked_by_default(project: CdcProject) -> None:
    _dim(project, except_column_list=["op"])
    run_batches(project, [(1, "a", "x", "U", 1), (1, "a", "x", "U", 2)])
    assert project.rows("dim") == [(1, "a", "x", 2, 1, None)]


def test_replay_changes_nothing(project: CdcProject) -> None:
    _dim(project)
    run_batches(project, [(1, "a", "x", "U", 1), (1, "b", "x", "U", 2)])
    before = project.snapshot("dim", "dim__cdc_state")
    assert run_batches(project, [(1, "a", "x", "U", 1), (1, "b", "x", "U", 2)]) == [(0, 0)]
    assert project.rows("dim") == before["dim"]


# --- partial updates --------------------------------------------------------------------------


def test_ignore_null_updates_take_the_preceding_value(project: CdcProject) -> None:
    _dim(project, ignore_null_updates=True)
    run_batches(project, [(1, "a", "x", "U", 1), (1, None, "y", "U", 3)], [(1, "b", None, "U", 2)])
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 2), (1, "b", "x", 2, 3), (1, "b", "y", 3, None)])


def test_columns_to_update_in_scd2(project: CdcProject) -> None:
    _dim(project, columns={**CITY_EVENTS, "cols": "varchar"}, columns_to_update="cols")
    run_batches(
        project, [(1, "a", "x", "U", 1, None)], [(1, None, "y", "U", 2, "city")], [(1, "z", "q", "U", 3, "name")]
    )
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 2), (1, "a", "y", 2, 3), (1, "z", "y", 3, None)])


def test_delete_resets_ignored_values(project: CdcProject) -> None:
    _dim(project, ignore_null_updates=True)
    run_batches(project, [(1, "a", "x", "U", 1), (1, None, None, "D", 2)], [(1, None, "y", "U", 3)])
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 2), (1, None, "y", 3, None)])


# --- state, schema, tests -------------------------------------------------------------------


def test_old_events_are_compacted_and_history_stays_right(project: CdcProject) -> None:
    _dim(project, tombstone_retention=1)
    run_batches(
        project, [(1, "a", "x", "U", s) for s in (1, 2, 3, 4)] + [(1, "b", "x", "U", 5), (1, None, None, "D", 6)]
    )
    assert len(project.rows("dim__cdc_state")) == 6
    time.sleep(2.2)
    run_batches(project, [(1, "c", "x", "U", 9)])
    # Of the old events only the run heads (1, 5), tails (4, 5) and the closing delete remain.
    assert [row[1] for row in project.rows("dim__cdc_state")] == [1, 4, 5, 6, 9]
    expected = sort_rows([(1, "a", "x", 1, 5), (1, "b", "x", 5, 6), (1, "c", "x", 9, None)])
    assert project.rows("dim") == expected
    run_batches(project, [(1, "d", "x", "U", 10)])
    assert project.rows("dim") == sort_rows([*expected[:2], (1, "c", "x", 9, 10), (1, "d", "x", 10, None)])


def test_compaction_fixes_the_values_of_partial_events_it_keeps(project: CdcProject) -> None:
    """Event 3, which kept its city from event 2 (city only), is rewritten once with that value
    fixed, so later recomputations of the history still see it. Event 2 stays while event 5, in
    its city's group, is recent (test below), then is compacted away."""
    _dim(project, tombstone_retention=1, ignore_null_updates=True, track_history_column_list=["name"])
    run_batches(project, [(1, "a", "x", "U", 1), (1, None, "y", "U", 2), (1, None, None, "U", 3)])
    assert project.rows("dim") == [(1, "a", "y", 1, None)]
    time.sleep(2.2)
    run_batches(project, [(1, "b", None, "U", 5)])
    assert [row[1] for row in project.rows("dim__cdc_state")] == [1, 2, 3, 5]
    time.sleep(2.2)
    run_batches(project, [(1, "c", None, "U", 6)])
    assert [row[1] for row in project.rows("dim__cdc_state")] == [1, 3, 5, 6]
    assert project.rows("dim") == sort_rows([(1, "a", "y", 1, 5), (1, "b", "y", 5, 6), (1, "c", "y", 6, None)])


def test_compaction_keeps_the_event_a_recent_partial_event_takes_its_values_from(project: CdcProject) -> None:
    """Event 2 (city only) is old when event 3 (name only) arrives, and sits inside the stretch,
    but event 3 is stored unfilled and takes its city from event 2 in every later run: event 2
    stays while event 3 is recent. (Compacted away, event 3 took event 1's city: the closed row
    said `x` where it had said `y`.)"""
    _dim(project, tombstone_retention=3, ignore_null_updates=True, track_history_column_list=["name"])
    run_batches(project, [(1, "a", "x", "U", 1), (1, None, "y", "U", 2)])
    time.sleep(3.2)
    run_batches(project, [(1, "a", None, "U", 3)])
    assert project.rows("dim") == [(1, "a", "y", 1, None)]
    run_batches(project, [(1, "b", None, "U", 5)])
    assert project.rows("dim") == sort_rows([(1, "a", "y", 1, 5), (1, "b", "y", 5, None)])


def test_new_column_is_ignored(project: CdcProject) -> None:
    # on_schema_change='ignore': the new column is neither written nor tracked.
    _dim(project, on_schema_change="ignore")
    run_batches(project, [(1, "a", "x", "U", 1)])
    project.add_column("events", "zip", "varchar")
    run_batches(project, [(1, "b", "x", "U", 2, "01000"), (2, "c", "y", "U", 1, "02000")])
    assert project.columns("dim") == ["id", "name", "city", "__START_AT", "__END_AT"]
    assert project.rows("dim") == sort_rows([(1, "a", "x", 1, 2), (1, "b", "x", 2, None), (2, "c", "y", 1, None)])


def test_new_column_is_appended_without_new_versions(project: CdcProject) -> None:
    _dim(project)
    run_batches(project, [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)])
    project.add_column("events", "zip", "varchar")
    metrics = run_batches(
        project, [(1, "a", "x", "U", 2, "01000"), (3, "c", "z", "U", 1, "02000")], [(1, "a", "x", "U", 3, "03000")]
    )
    assert project.columns("dim") == ["id", "name", "city", "__START_AT", "__END_AT", "zip"]
    # Key 1 keeps one version: the column's first value is not a change, its next one is.
    assert project.rows("dim") == sort_rows(
        [
            (1, "a", "x", 1, 3, "01000"),
            (1, "a", "x", 3, None, "03000"),
            (2, "b", "y", 1, None, None),
            (3, "c", "z", 1, None, "02000"),
        ]
    )
    assert metrics == [(2, 0), (2, 0)]


def test_changing_the_scd_type_asks_for_a_full_refresh(project: CdcProject) -> None:
    _dim(project)
    run_batches(project, [(1, "a", "x", "U", 1)])
    project.model("dim", MODEL, **{**DIM_SCD2, "stored_as_scd_type": 1})
    outcome = project.run("dim", expect_success=False)
    assert "--full-refresh" in outcome.error
    project.run("dim", full_refresh=True)
    assert project.rows("dim") == [(1, "a", "x")]


def test_generic_tests_catch_overlaps_and_two_current_rows(project: CdcProject) -> None:
    project.create_table("bad", {"id": "integer", "__START_AT": "integer", "__END_AT": "integer"})
    project.insert("bad", [(1, 1, 5), (1, 4, None), (2, 1, None), (2, 3, None), (3, 1, 3), (3, 3, None)])
    (project.path / "models" / "bad_view.sql").write_text(
        "{{ config(materialized='view') }}\nselect * from {{ target.schema }}.bad\n"
    )
    project.write(
        "models/schema.yml",
        "version: 2\nmodels:\n  - name: bad_view\n    data_tests:\n"
        "      - auto_cdc.scd2_no_overlapping_intervals: {arguments: {keys: [id]}}\n"
        "      - auto_cdc.scd2_one_current_row: {arguments: {keys: [id]}}\n",
    )
    outcome = project.dbt("build", "--select", "bad_view")
    failures = {
        r.node.name.split("_bad_view")[0]: getattr(r, "failures", None)
        for r in outcome.results
        if r.node.resource_type == "test"
    }
    assert failures == {"auto_cdc_scd2_no_overlapping_intervals": 2, "auto_cdc_scd2_one_current_row": 1}


def test_reference_model_agrees_with_these_cases() -> None:
    events = [Event(1, 1, "upsert", {"name": "a", "city": "x"}), Event(1, 8, "delete")]
    assert scd2(events, ["name", "city"]) == [(1, "a", "x", 1, 8)]


def test_sequence_by_list_gives_an_ordered_period_type(project: CdcProject) -> None:
    project.create_table("events", EPOCH_EVENTS)
    project.model("dim", MODEL, **EPOCH_CONFIG, except_column_list=["op", "epoch", "offset_no"], stored_as_scd_type=2)
    run_batches(project, [(1, "a", "U", 1, 9), (1, "b", "U", 2, 1)], [(1, "late", "U", 1, 10), (1, None, "D", 2, 5)])
    dim, start, end = project.relation("dim"), project.quote("__START_AT"), project.quote("__END_AT")
    rows = project.query(f"select name, {start} < {end}, {end} is null from {dim} order by {start}")
    assert rows == [("a", True, False), ("late", True, False), ("b", True, False)]
    starts = project.query(f"select {start} from {dim} order by {start}")
    if project.adapter == "spark":
        assert [row[0].asDict() for row in starts] == [
            {"epoch": 1, "offset_no": 9},
            {"epoch": 1, "offset_no": 10},
            {"epoch": 2, "offset_no": 1},
        ]
    elif project.adapter == "duckdb":
        assert starts == [
            ({"epoch": 1, "offset_no": 9},),
            ({"epoch": 1, "offset_no": 10},),
            ({"epoch": 2, "offset_no": 1},),
        ]
    else:
        assert starts == [("(1,9)",), ("(1,10)",), ("(2,1)",)]
    # as_of takes a value of the first part, the others open-ended: the rows once every event of it applied.
    for epoch, expected in [(1, [("late",)]), (2, []), (0, [])]:
        as_of = f"{{{{ auto_cdc.as_of(ref('dim'), {epoch}) }}}}"
        project.write(f"models/dim_as_of_{epoch}.sql", f"select name from ({as_of}) as r\n")
        project.run(f"dim_as_of_{epoch}")
        assert project.rows(f"dim_as_of_{epoch}") == expected, epoch
    project.replace_rows("events", [(1, "again", "U", 3, 0)])
    project.run("dim")
    current = project.query(f"select name from {dim} where {end} is null")
    assert current == [("again",)]  # an open row's __END_AT is NULL, not a value of NULL parts
    project.run("dim", full_refresh=True)  # the period type is rebuilt with the tables
