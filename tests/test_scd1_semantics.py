"""Named SCD type 1 cases (SPEC 3.1, 3.2, 4) through dbt on both adapters."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from harness import CdcProject
from scenarios import CITY_EVENTS, CONFIG, EPOCH_CONFIG, EPOCH_EVENTS, MODEL, TRUNCATING_CONFIG, fails, run_batches

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]  # on Spark too


def _setup(project: CdcProject, columns: dict[str, str] | None = None, **config: object) -> None:
    project.create_table("events", columns or CITY_EVENTS)
    project.model("dim", MODEL, **{**TRUNCATING_CONFIG, **config})


# --- deletes and tombstones -----------------------------------------------------------------


def test_late_upsert_is_blocked_by_a_tombstone_from_an_earlier_run(project: CdcProject) -> None:
    _setup(project)
    metrics = run_batches(
        project,
        [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)],
        [(1, None, None, "D", 5)],
        [(1, "late", "x", "U", 3)],
    )
    assert project.rows("dim") == [(2, "b", "y")]
    assert metrics == [(2, 0), (0, 1), (0, 0)]


def test_tombstone_for_a_key_never_seen_blocks_an_older_upsert(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, [(7, None, None, "D", 10)], [(7, "old", "x", "U", 4)])
    assert project.rows("dim") == []


def test_expired_tombstone_lets_the_late_upsert_through(project: CdcProject) -> None:
    _setup(project, tombstone_retention=1)
    run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "D", 5)])
    assert project.rows("dim__cdc_state") != []  # the tombstone
    time.sleep(2.2)
    assert run_batches(project, [(1, "late", "x", "U", 3)]) == [(1, 0)]
    assert project.rows("dim") == [(1, "late", "x")]


def test_tombstone_within_retention_still_blocks(project: CdcProject) -> None:
    _setup(project, tombstone_retention=3600)
    run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "D", 5)])
    time.sleep(1.1)
    run_batches(project, [(1, "late", "x", "U", 3)])
    assert project.rows("dim") == []


def test_expired_tombstones_are_removed_from_state(project: CdcProject) -> None:
    _setup(project, tombstone_retention=1)
    run_batches(project, [(1, None, None, "D", 5), (2, None, None, "D", 5)])
    assert len(project.rows("dim__cdc_state")) == 2
    time.sleep(2.2)
    run_batches(project, [(3, "c", "z", "U", 1)])
    assert [row[0] for row in project.rows("dim__cdc_state")] == [3]


def test_reinsert_newer_than_the_delete(project: CdcProject) -> None:
    _setup(project)
    metrics = run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "D", 5)], [(1, "back", "y", "U", 8)])
    assert project.rows("dim") == [(1, "back", "y")]
    assert metrics == [(1, 0), (0, 1), (1, 0)]


def test_delete_needs_a_newer_sequence_than_the_stored_upsert(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, [(1, "a", "x", "U", 5)], [(1, None, None, "D", 5)], [(1, None, None, "D", 4)])
    assert project.rows("dim") == [(1, "a", "x")]


def test_redelivered_event_at_the_stored_sequence_replaces_it(project: CdcProject) -> None:
    _setup(project)
    metrics = run_batches(project, [(1, "a", "x", "U", 5)], [(1, "a", "x", "U", 5)], [(1, "fixed", "x", "U", 5)])
    assert metrics == [(1, 0), (0, 0), (1, 0)]
    assert project.rows("dim") == [(1, "fixed", "x")]


def test_identical_duplicates_in_one_run_collapse(project: CdcProject) -> None:
    _setup(project)
    assert run_batches(project, [(1, "a", "x", "U", 5), (1, "a", "x", "U", 5), (2, None, None, "D", 3)] * 2) == [(1, 0)]
    assert project.rows("dim") == [(1, "a", "x")]


def test_truncate_blocks_older_late_upserts_and_keeps_newer_rows(project: CdcProject) -> None:
    _setup(project)
    metrics = run_batches(
        project,
        [(1, "a", "x", "U", 1), (2, "b", "y", "U", 9)],
        [(None, None, None, "T", 5)],
        [(3, "c", "z", "U", 4), (4, "d", "w", "U", 5)],
    )
    assert project.rows("dim") == [(2, "b", "y"), (4, "d", "w")]
    assert metrics == [(2, 0), (0, 1), (1, 0)]


# --- the state's layout: with the sequence in the target, tombstones only -----------------------

SEQUENCE_WRITTEN = {"except_column_list": ["op"]}  # the target keeps `seq`: each row's last upsert


def _state_keys(project: CdcProject) -> list[Any]:
    return sorted(row[0] for row in project.rows("dim__cdc_state"))


def _forget_layout(project: CdcProject) -> None:
    """Makes the run history look as one from before the state's layout was chosen."""
    runs = project.relation("dim__cdc_runs")
    for run_id, config in project.query(f"select run_id, config from {runs}"):
        recorded = json.loads(config)
        recorded.pop("state_layout", None)
        text = json.dumps(recorded)
        literal = (
            text.replace("\\", "\\\\").replace("'", "\\'") if project.adapter == "spark" else text.replace("'", "''")
        )
        project.execute(f"update {runs} set config = '{literal}' where run_id = {run_id}")


def test_a_target_holding_the_sequence_keeps_only_tombstones_in_the_state(project: CdcProject) -> None:
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1), (3, "c", "z", "U", 1)])
    assert _state_keys(project) == []
    assert run_batches(project, [(2, None, None, "D", 5), (4, None, None, "D", 5)]) == [(0, 1)]
    assert _state_keys(project) == [2, 4]  # the tombstones of a deleted row and of a key never seen
    before = project.snapshot("dim__cdc_state")
    assert run_batches(project, [(1, "a2", "x", "U", 6), (3, "c2", "z", "U", 6)]) == [(2, 0)]
    assert project.snapshot("dim__cdc_state") == before
    assert run_batches(project, [(2, "late", "y", "U", 3), (4, "old", "w", "U", 4), (1, "older", "x", "U", 2)]) == [
        (0, 0)
    ]
    assert run_batches(project, [(2, "back", "y", "U", 7), (3, "c2", "z", "U", 6)]) == [(1, 0)]  # 3: replayed
    assert _state_keys(project) == [2, 4]  # a key with a row again keeps its tombstone while it lives
    assert project.rows("dim") == [(1, "a2", "x", 6), (2, "back", "y", 7), (3, "c2", "z", 6)]


def test_a_state_from_before_moves_to_tombstones_in_place(project: CdcProject) -> None:
    """A state built before the layout was chosen holds every key's last upsert; the next run
    finds the target holds them too and keeps only the tombstones."""
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)], [(2, None, None, "D", 3)])
    state = project.relation("dim__cdc_state")
    project.execute(
        f"insert into {state} (id, __cdc_upsert_seq, __cdc_delete_seq, __cdc_deleted_at)"
        f" select id, seq, null, null from {project.relation('dim')}"
    )
    _forget_layout(project)
    assert _state_keys(project) == [1, 2]
    assert run_batches(project, [(1, "late", "x", "U", 0), (2, "late", "y", "U", 2), (5, "e", "v", "U", 1)]) == [(1, 0)]
    assert _state_keys(project) == [2]
    assert project.rows("dim") == [(1, "a", "x", 1), (5, "e", "v", 1)]
    runs = project.query(f"select config from {project.relation('dim__cdc_runs')} order by run_id desc")
    assert json.loads(runs[0][0])["state_layout"] == "tombstones"


def _expiry_plan(project: CdcProject) -> tuple[str, str]:
    """The state's tombstone index and PostgreSQL's plan for its expiry in a state of tombstones
    (every row, a key with a row again too), sequential scans priced out of reach."""
    state = project.relation("dim__cdc_state")
    (definition,) = project.query(
        "select indexdef from pg_indexes"
        f" where schemaname = '{project.schema}' and indexname = 'dim__cdc_state__cdc_tomb'"
    )[0]
    plan = project.query(f"set enable_seqscan = off; explain delete from {state} as s where s.__cdc_deleted_at < now()")
    return definition, "\n".join(row[0] for row in plan)


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # the only adapter whose tables get indexes
def test_a_state_of_tombstones_finds_its_expired_ones_by_index(project: CdcProject) -> None:
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "D", 2)])
    definition, plan = _expiry_plan(project)
    assert "WHERE (__cdc_deleted_at IS NOT NULL)" in definition and "Index" in plan, plan
    # A state from before the layout, with the index of its time (rows without an upsert only):
    # its move to tombstones replaces the index, which no longer matched the expiry.
    state, index = project.relation("dim__cdc_state"), f'"{project.schema}".dim__cdc_state__cdc_tomb'
    project.execute(
        f"drop index {index}; create index dim__cdc_state__cdc_tomb on {state} (__cdc_deleted_at)"
        " where __cdc_upsert_seq is null"
    )
    assert "Index" not in _expiry_plan(project)[1]
    _forget_layout(project)
    run_batches(project, [(2, "b", "y", "U", 1)])
    definition, plan = _expiry_plan(project)
    assert "WHERE (__cdc_deleted_at IS NOT NULL)" in definition and "Index" in plan, plan


def test_a_state_from_before_keeps_its_sequences_when_the_target_lacks_them(project: CdcProject) -> None:
    """The sequence column appended to the target after rows were written is NULL in them: the
    state keeps every row's sequence, until a full refresh."""
    _setup(project)  # `seq` not in the target: the state keeps every key's
    run_batches(project, [(1, "a", "x", "U", 5), (2, "b", "y", "U", 5)])
    _forget_layout(project)
    project.model("dim", MODEL, **{**TRUNCATING_CONFIG, **SEQUENCE_WRITTEN})
    assert run_batches(project, [(1, "late", "x", "U", 4), (3, "c", "z", "U", 1)]) == [(1, 0)]
    assert project.rows("dim") == [(1, "a", "x", None), (2, "b", "y", None), (3, "c", "z", 1)]
    assert _state_keys(project) == [1, 2, 3]
    assert run_batches(project, [(2, "late", "y", "U", 4)]) == [(0, 0)]
    project.replace_rows("events", [])
    logs = "\n".join(project.run("dim").logs)
    assert "keeps each row's sequence in its state" in logs and "--full-refresh -s dim" in logs
    project.run("dim", full_refresh=True)
    assert _state_keys(project) == []


def test_the_state_takes_the_sequences_back_when_the_target_stops_holding_them(project: CdcProject) -> None:
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 5), (2, "b", "y", "U", 5)], [(2, None, None, "D", 6)])
    project.model("dim", MODEL, **TRUNCATING_CONFIG)  # `seq` no longer written (it stays in the target)
    assert run_batches(project, [(1, "late", "x", "U", 4), (3, "c", "z", "U", 1)]) == [(1, 0)]
    assert _state_keys(project) == [1, 2, 3]
    assert run_batches(project, [(1, "new", "x", "U", 7), (2, "late", "y", "U", 5)]) == [(1, 0)]
    assert [row[:3] for row in project.rows("dim")] == [(1, "new", "x"), (3, "c", "z")]


def test_moving_the_sequences_back_can_be_replayed(project: CdcProject) -> None:
    # As a Spark run leaves it that moved them and stopped before recording itself (no
    # transactions there): the next run moves them again, and must not add the keys twice.
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 5), (2, "b", "y", "U", 5)], [(2, None, None, "D", 6)])
    state, dim = project.relation("dim__cdc_state"), project.relation("dim")
    project.execute(
        f"insert into {state} (id, __cdc_upsert_seq, __cdc_delete_seq, __cdc_deleted_at)"
        f" select id, seq, null, null from {dim}"
    )
    project.model("dim", MODEL, **TRUNCATING_CONFIG)
    assert run_batches(project, [(1, "late", "x", "U", 4), (3, "c", "z", "U", 1)]) == [(1, 0)]
    assert _state_keys(project) == [1, 2, 3]
    assert [row[:3] for row in project.rows("dim")] == [(1, "a", "x"), (3, "c", "z")]


def test_a_tombstone_outlives_the_keys_return_so_a_move_to_partial_updates_keeps_it(project: CdcProject) -> None:
    # Found by a review: a state of tombstones dropped a key's tombstone once it had a row again.
    # Moved to per-column sequences (partial updates), a column appended later has none, and only
    # the delete stops an event older than it from filling that column.
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 5)], [(1, None, None, "D", 10)], [(1, "back", "y", "U", 15)])
    assert _state_keys(project) == [1]  # its tombstone, live for tombstone_retention
    project.model("dim", MODEL, **{**TRUNCATING_CONFIG, **SEQUENCE_WRITTEN, "ignore_null_updates": True})
    assert run_batches(project, [(1, None, "y2", "U", 16)]) == [(1, 0)]
    project.add_column("events", "zip", "varchar")
    assert run_batches(project, [(1, None, None, "U", 7, "01000")]) == [(0, 0)]
    assert project.rows("dim") == [(1, "back", "y2", 16, None)]


def test_a_sequence_column_dropped_from_the_target_fails_before_writing(project: CdcProject) -> None:
    # Appended again (on_schema_change's default), it would be NULL in every row: no row would
    # have a sequence left, and older late events would overwrite newer rows.
    _setup(project, **SEQUENCE_WRITTEN)
    run_batches(project, [(1, "a", "x", "U", 5)])
    project.execute(f"alter table {project.relation('dim')} drop column seq")
    project.replace_rows("events", [(1, "late", "x", "U", 4)])
    fails(project, "column(s) seq, which it no longer has; nothing was written", "dbt run --full-refresh -s dim")


# --- partial updates ------------------------------------------------------------------------


def test_ignore_null_updates_keeps_stored_values(project: CdcProject) -> None:
    _setup(project, ignore_null_updates=True)
    run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, "y", "U", 2)], [(1, "late", None, "U", 0)])
    # The late event at 0 still fills nothing: both columns were written later.
    assert project.rows("dim") == [(1, "a", "y")]


def test_late_partial_update_fills_a_column_newer_events_left_untouched(project: CdcProject) -> None:
    _setup(project, ignore_null_updates=True)
    run_batches(project, [(1, None, "x", "U", 5)], [(1, "early-name", "old-city", "U", 3)])
    assert project.rows("dim") == [(1, "early-name", "x")]


def test_delete_clears_columns_written_before_it(project: CdcProject) -> None:
    # SPEC 3.2: events 10 full, 30 partial, 20 delete, in that arrival order.
    _setup(project, ignore_null_updates=True)
    run_batches(project, [(1, "a", "x", "U", 10)], [(1, None, "y", "U", 30)], [(1, None, None, "D", 20)])
    assert project.rows("dim") == [(1, None, "y")]


def test_ignore_null_updates_column_list(project: CdcProject) -> None:
    _setup(project, ignore_null_updates_column_list=["city"])
    run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "U", 2)])
    assert project.rows("dim") == [(1, None, "x")]


def test_ignore_null_updates_except_column_list(project: CdcProject) -> None:
    _setup(project, ignore_null_updates_except_column_list=["city"])
    run_batches(project, [(1, "a", "x", "U", 1)], [(1, None, None, "U", 2)])
    assert project.rows("dim") == [(1, "a", None)]


@pytest.mark.parametrize("kind", ["string", "array"])
def test_columns_to_update(project: CdcProject, kind: str) -> None:
    array_type = "varchar[]" if project.adapter == "duckdb" else "text[]"
    columns = {**CITY_EVENTS, "cols": "varchar" if kind == "string" else array_type}

    def listed(*names: str) -> object:
        return ", ".join(names) if kind == "string" else list(names)

    _setup(project, columns=columns, columns_to_update="cols")
    metrics = run_batches(
        project,
        [(1, "a", "x", "U", 1, listed("name")), (2, "b", "y", "U", 1, None)],
        [(1, None, "z", "U", 3, listed("name", "City")), (2, "ignored", None, "U", 2, listed("city"))],
        [(1, "late", "late", "U", 2, listed("name", "city"))],
    )
    # key 1: name written NULL at 3 (listed), city z at 3; the late event at 2 loses both.
    # key 2: a NULL list writes every column; then city is written NULL at 2, name kept.
    assert project.rows("dim") == [(1, None, "z"), (2, "b", None)]
    assert "cols" not in project.columns("dim")
    assert metrics[2] == (0, 0)


def test_switching_partial_updates_on_later_keeps_the_table_right(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, [(1, "a", "x", "U", 5)])
    project.model("dim", MODEL, **{**TRUNCATING_CONFIG, "ignore_null_updates": True})
    run_batches(project, [(1, None, "y", "U", 6), (1, "late", "late", "U", 4)])
    assert project.rows("dim") == [(1, "a", "y")]
    project.model("dim", MODEL, **TRUNCATING_CONFIG)
    run_batches(project, [(1, "b", None, "U", 7)])
    assert project.rows("dim") == [(1, "b", None)]


# --- sequences --------------------------------------------------------------------------------


def test_sequence_by_list_orders_lexicographically(project: CdcProject) -> None:
    project.create_table("events", EPOCH_EVENTS)
    project.model("dim", MODEL, **EPOCH_CONFIG, column_list=["name"])
    project.replace_rows("events", [(1, "a", "U", 1, 9), (1, "b", "U", 2, 1), (2, "c", "U", 1, 1)])
    project.run("dim")
    project.replace_rows("events", [(1, "late", "U", 1, 99), (2, None, "D", 1, 2), (2, "old", "U", 1, 1)])
    project.run("dim")
    assert project.rows("dim") == [(1, "b")]


def test_sequence_by_expression(project: CdcProject) -> None:
    columns = {"id": "integer", "name": "varchar", "version": "varchar"}
    project.create_table("events", columns)
    project.model("dim", MODEL, keys=["id"], sequence_by="cast(version as integer)", except_column_list=["version"])
    project.replace_rows("events", [(1, "ten", "10"), (1, "nine", "9")])
    project.run("dim")
    assert project.rows("dim") == [(1, "ten")]


# --- checkpoint -------------------------------------------------------------------------------


def test_checkpoint_reads_only_new_rows(project: CdcProject) -> None:
    columns = {**CITY_EVENTS, "loaded_at": "integer"}
    _setup(project, columns=columns, checkpoint_column="loaded_at", except_column_list=["op", "seq", "loaded_at"])
    project.insert("events", [(1, "a", "x", "U", 5, 1), (2, "b", "y", "U", 5, 1)])
    assert project.run("dim").metrics("dim") == (2, 0)

    before = project.snapshot("dim", "dim__cdc_state")
    assert project.run("dim").metrics("dim") == (0, 0)
    assert project.snapshot("dim", "dim__cdc_state") == before

    # A late event: old sequence, new load time. Key 3 is new; key 1's event is older than stored.
    project.insert("events", [(3, "c", "z", "U", 1, 2), (1, "older", "x", "U", 3, 2)])
    assert project.run("dim").metrics("dim") == (1, 0)

    # Rows at or below the checkpoint are never read again, even if they change.
    project.execute(f"update {project.relation('events')} set name = 'CHANGED', seq = 9 where id = 2")
    assert project.run("dim").metrics("dim") == (0, 0)
    assert project.rows("dim") == [(1, "a", "x"), (2, "b", "y"), (3, "c", "z")]

    # A full refresh reads everything again.
    project.run("dim", full_refresh=True)
    assert project.rows("dim") == [(1, "a", "x"), (2, "CHANGED", "y"), (3, "c", "z")]
    runs = project.query(f"select checkpoint_value from {project.relation('dim__cdc_runs')} order by run_id desc")
    assert runs[0] == ("2",)


@pytest.mark.parametrize("scd_type", [1, 2])
def test_a_row_landed_later_at_the_last_checkpoint_value_is_read(project: CdcProject, scd_type: int) -> None:
    """Two halves of one load share a `loaded_at`; the second lands after the run that read the
    first. The checkpoint reads from its last value on, so order 3 ends `cancelled`, as a model
    without a checkpoint shows, and the rows read again change nothing."""
    project.create_table("events", {**CITY_EVENTS, "loaded_at": "integer"})
    config = {**CONFIG, "stored_as_scd_type": scd_type, "except_column_list": ["op", "seq", "loaded_at"]}
    project.model("dim", MODEL, **config, checkpoint_column="loaded_at")
    project.model("dim_whole", MODEL, **config)
    project.insert("events", [(1, "paid", "x", "U", 1, 1), (2, "paid", "y", "U", 1, 1)])
    project.run()
    project.insert("events", [(3, "paid", "z", "U", 1, 2)])
    project.run()
    project.insert("events", [(3, "cancelled", "z", "U", 2, 2), (1, None, None, "D", 2, 2)])
    assert project.run("dim").metrics("dim") == ((1, 1) if scd_type == 1 else (3, 0))
    project.run("dim_whole")
    assert project.rows("dim") == project.rows("dim_whole")
    current = {row[0]: row[1] for row in project.rows("dim") if scd_type == 1 or row[-1] is None}
    assert current == {2: "paid", 3: "cancelled"}
    before = project.snapshot("dim", "dim__cdc_state")
    assert project.run("dim").metrics("dim") == (0, 0)
    assert project.snapshot("dim", "dim__cdc_state") == before


# --- schema changes ---------------------------------------------------------------------------


def test_new_source_column_is_appended(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, [(1, "a", "x", "U", 1)])
    project.add_column("events", "zip", "varchar")
    run_batches(project, [(2, "b", "y", "U", 1, "01000")])
    assert project.columns("dim") == ["id", "name", "city", "zip"]
    assert project.rows("dim") == [(1, "a", "x", None), (2, "b", "y", "01000")]


def test_new_source_column_is_ignored(project: CdcProject) -> None:
    _setup(project, on_schema_change="ignore")
    run_batches(project, [(1, "a", "x", "U", 1)])
    project.add_column("events", "zip", "varchar")
    run_batches(project, [(2, "b", "y", "U", 1, "01000")])
    assert project.rows("dim") == [(1, "a", "x"), (2, "b", "y")]


# --- reporting, naming ------------------------------------------------------------------------


@pytest.mark.not_on_v2(
    "dbt v2 (2.0.0-alpha.4) writes no materialization's message or adapter response to run_results.json;"
    " the v2 tier checks the metrics' log line against the run history (RunOutcome.metrics)"
)
def test_metrics_in_run_results_and_run_history(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)])
    project.replace_rows("events", [(1, None, None, "D", 2), (2, "c", "y", "U", 2)])
    outcome = project.dbt("run", "--select", "dim", "--write-json")
    assert outcome.success
    results = json.loads((project.path / "target" / "run_results.json").read_text())
    (node,) = [r for r in results["results"] if r["unique_id"].endswith(".dim")]
    # The message is the log line users read: its wording is a contract.
    assert "num_upserted_rows=1" in node["message"] and "num_deleted_rows=1" in node["message"]
    assert node["adapter_response"]["rows_affected"] == 2
    # The harness reads metrics by this invocation id, the one run_results.json names.
    assert results["metadata"]["invocation_id"] == outcome.invocation_id
    assert outcome.metrics("dim") == (1, 1)
    history = project.query(
        f"select run_id, num_events, num_upserted_rows, num_deleted_rows from {project.relation('dim__cdc_runs')}"
        " order by run_id"
    )
    assert history == [(1, 2, 2, 0), (2, 2, 1, 1)]


def test_unquoted_camel_case_in_the_model_query(project: CdcProject) -> None:
    # PostgreSQL folds unquoted userId to userid; config names still match case-insensitively.
    project.create_table("events", {"userid": "integer", "cityname": "varchar", "seqnum": "integer"})
    project.model(
        "dim",
        "select userId, cityName, seqNum from {{ target.schema }}.events",
        keys=["userId"],
        sequence_by="seqNum",
        column_list=["cityName"],
    )
    project.replace_rows("events", [(1, "x", 1), (1, "y", 2)])
    project.run("dim")
    assert project.rows("dim") == [(1, "y")]


def test_quoted_mixed_case_columns(project: CdcProject) -> None:
    project.create_table("events", {"userId": "integer", "Home City": "varchar", "seqNum": "integer", "Op": "varchar"})
    project.model(
        "dim",
        MODEL,
        keys=["userId"],
        sequence_by="seqNum",
        apply_as_deletes=project.dialect("\"Op\" = 'D'"),
        except_column_list=["seqNum", "Op"],
        ignore_null_updates_column_list=["Home City"],
    )
    project.replace_rows("events", [(1, "x", 1, "U"), (2, "y", 1, "U")])
    project.run("dim")
    project.replace_rows("events", [(1, None, 2, "U"), (2, None, 2, "D")])
    project.run("dim")
    assert project.columns("dim") == ["userId", "Home City"]
    assert project.rows("dim") == [(1, "x")]


def test_config_from_yaml_meta_and_dbt_project(project: CdcProject) -> None:
    """Configs in a properties file and dbt_project.yml, at the top level and under `meta`; under
    dbt v2, which takes a package's configs only under `meta`, all of them there (docs/configuration.md,
    "Configuration reference"), dbt's own on_schema_change still at the top level."""
    project.create_table("events", CITY_EVENTS)
    (project.path / "models" / "dim.sql").write_text("{{ config(materialized='auto_cdc') }}\n" + MODEL + "\n")
    top_level = "" if project.dbt_v2 else "      sequence_by: seq\n"
    in_meta = "        sequence_by: seq\n" if project.dbt_v2 else ""
    project.write(
        "models/schema.yml",
        f"version: 2\nmodels:\n  - name: dim\n    config:\n{top_level}"
        f"      meta:\n{in_meta}        keys: [id]\n        except_column_list: [op, seq]\n",
    )
    deletes = "+meta:\n      apply_as_deletes" if project.dbt_v2 else "+apply_as_deletes"
    project.write(
        "dbt_project.yml",
        (project.path / "dbt_project.yml").read_text()
        + f"models:\n  cdc_test:\n    {deletes}: \"op = 'D'\"\n    +on_schema_change: fail\n",
    )
    run_batches(project, [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)], [(2, None, None, "D", 2)])
    assert project.rows("dim") == [(1, "a", "x")]
    # Configs under `meta` are read without a warning (dbt warns when config.get asks for one).
    assert project.dbt("run", "--select", "dim", "--warn-error").success
    project.add_column("events", "zip", "varchar")
    outcome = project.run("dim", expect_success=False)
    assert "on_schema_change='fail'" in outcome.error
