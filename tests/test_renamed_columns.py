"""A column the model query stops returning, as in a rename: named in a warning on every run
(its old values kept, new rows NULL there), and `auto_cdc.rename_column`, which renames it in
every table of the model so the table goes on as if it had always had the new name. From any
point a user may be at (before a run with the new name, after one, after a `--full-refresh`
with either name), the warning's and rename_column's advice leads to one column: each step
either works or fails before writing, naming what blocks it and the step that works."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from test_change_feed import _replay_all

from harness import CdcProject, RunOutcome, derived_name
from scenarios import SNAPSHOT_A, SNAPSHOT_B

pytestmark = [pytest.mark.dbt_v2]

EVENTS = {"id": "integer", "full_name": "varchar", "city": "varchar", "op": "varchar", "seq": "integer"}
EVENTS["cols"] = "varchar"  # columns_to_update
BODY = "select id, {name}, city, op, seq, cols from {{{{ target.schema }}}}.events"
CONFIGS = {
    "scd1": {"stored_as_scd_type": 1},
    "scd1_partial": {"stored_as_scd_type": 1, "columns_to_update": "cols", "change_feed": True},
    "scd2": {"stored_as_scd_type": 2, "change_feed": True},
    "scd2_ignore_null": {"stored_as_scd_type": 2, "ignore_null_updates": True},
}
BEFORE = [(1, "Ana", "Oaxaca", "c", 1, None), (2, "Bo", "Tijuana", "c", 1, None), (3, "Cy", "Cancun", "c", 1, None)]
AFTER = [(2, "Bob", None, "u", 2, "name"), (3, None, "Merida", "u", 2, None), (4, "Di", "Leon", "c", 2, None)]


def _model(project: CdcProject, model: str, name: str, kind: str) -> None:
    config = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'd'"}
    config["except_column_list"] = ["op", "seq", "cols"]
    project.model(model, BODY.format(name=name), **config, **CONFIGS[kind])


def _renamed_in_the_query_only(project: CdcProject, kind: str) -> RunOutcome:
    """`dim` built with full_name, then run with the query returning it as `name`."""
    project.create_table("events", EVENTS)
    _model(project, "dim", "full_name", kind)
    project.insert("events", BEFORE)
    project.run("dim")
    _model(project, "dim", "full_name as name", kind)
    project.replace_rows("events", AFTER)
    return project.run("dim")


@pytest.mark.parametrize("kind", ["scd1", "scd2"])
def test_a_column_no_longer_returned_is_named_in_a_warning(project: CdcProject, kind: str) -> None:
    outcome = _renamed_in_the_query_only(project, kind)
    (warning,) = [w for w in outcome.warnings if "no longer writes" in w]
    for fragment in (
        "'dim'",
        "full_name",
        "keep the values last written",
        "The new column(s) name are NULL",
        "auto_cdc.rename_column",
        "--full-refresh -s dim",
    ):
        assert fragment in warning, warning
    current = "" if kind == "scd1" else ' where "__END_AT" is null'
    query = f"select id, full_name, name from {project.relation('dim')}{current} order by id"
    # Split in two, as warned: SCD1 updates keep the old column's value, SCD2's new versions do not.
    bo, cy = {"scd1": ["Bo", "Cy"], "scd2": [None, None]}[kind]
    assert project.query(project.dialect(query)) == [(1, "Ana", None), (2, bo, "Bob"), (3, cy, None), (4, None, "Di")]
    assert any("no longer writes" in w for w in project.run("dim").warnings)  # every run, until the table is consistent


@pytest.mark.spark
@pytest.mark.parametrize("kind", CONFIGS)
def test_rename_column_keeps_one_column_as_if_always_named_so(project: CdcProject, kind: str) -> None:
    """`dim` is renamed between its runs; `fresh` reads the same events under the new name from
    the start. Both end equal, their change feeds too."""
    project.create_table("events", EVENTS)
    _model(project, "dim", "full_name", kind)
    _model(project, "fresh", "full_name as name", kind)
    project.insert("events", BEFORE)
    project.run()
    args = "{model: dim, old: full_name, new: name}"
    renamed = project.dbt("run-operation", "auto_cdc.rename_column", "--args", args)
    assert renamed.success, renamed.error
    _model(project, "dim", "full_name as name", kind)
    project.insert("events", AFTER)
    outcome = project.run()
    assert not [w for w in outcome.warnings if "no longer writes" in w]
    assert project.columns("dim") == project.columns("fresh")
    assert project.rows("dim") == project.rows("fresh")
    assert project.columns("dim__cdc_state") == project.columns("fresh__cdc_state")  # no bookkeeping column left behind
    if CONFIGS[kind].get("change_feed"):
        changes = "select id, name, city, _change_type, _run_id from {} order by 1, 2, 3, 4, 5"
        assert project.query(changes.format(project.relation("dim__cdc_changes"))) == project.query(
            changes.format(project.relation("fresh__cdc_changes"))
        )


def test_rename_column_refuses_keys_and_names_taken(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    _model(project, "dim", "full_name, full_name as name", "scd1")
    project.insert("events", BEFORE)
    project.run("dim")
    before = project.snapshot(*project.cdc_tables("dim"))
    for args, fragment in [
        ("{model: dim, old: id, new: key}", "'id' is a key column"),
        ("{model: dim, old: full_name, new: name}", "already has a column 'name' next to 'full_name'"),
        ("{model: dim, old: full_name, new: FULL_NAME}", "differs from 'full_name' only in case"),
        ("{model: dim, old: nope, new: other}", "has no column 'nope'"),
        ("{model: missing, old: a, new: b}", "no auto_cdc or auto_cdc_from_snapshot model named 'missing'"),
    ]:
        outcome = project.dbt("run-operation", "auto_cdc.rename_column", "--args", args)
        assert not outcome.success and fragment in outcome.error, outcome.error
    assert project.snapshot(*project.cdc_tables("dim")) == before


@pytest.mark.parametrize("kind", ["scd1_partial", "scd2"])
def test_a_column_dropped_from_the_target_stops_the_warning(project: CdcProject, kind: str) -> None:
    assert any("no longer writes" in w for w in _renamed_in_the_query_only(project, kind).warnings)
    project.execute(f"alter table {project.relation('dim')} drop column full_name")
    project.replace_rows("events", [(1, "Ann", None, "u", 3, None), (2, None, None, "d", 3, None)])
    outcome = project.run("dim")
    assert not [w for w in outcome.warnings if "no longer writes" in w]
    current = "" if kind == "scd1_partial" else ' where "__END_AT" is null'
    query = f"select id, name, city from {project.relation('dim')}{current} order by id"
    assert project.query(project.dialect(query)) == [(1, "Ann", None), (3, None, "Merida"), (4, "Di", "Leon")]


# --- after a run with the new name: every point on the documented path -----------------------

RENAME = "{model: dim, old: full_name, new: name}"
MORE = [(1, "Ann", "Oaxaca", "u", 3, None), (2, None, None, "d", 3, None), (5, "Eve", "Puebla", "c", 3, None)]
# SCD1 without and with a change feed (and partial updates), SCD2 with one, and without (event flags).
SPLIT_KINDS = [
    # On Spark, scd1_partial's rename covers scd1's statements and more (the suite's clock,
    # CONTRIBUTING.md): 40 s of the Spark tier's time.
    pytest.param("scd1", marks=pytest.mark.not_on_spark("scd1_partial runs the same renames and more on Spark")),
    "scd1_partial",
    "scd2",
    "scd2_ignore_null",
]


def _model_tables(project: CdcProject, model: str = "dim") -> dict[str, Any]:
    """Every table of the model, its columns and rows: to show a refused rename wrote nothing."""
    return {
        table: (project.columns(table), project.rows(table))
        for table in project.cdc_tables(model)
        if project.exists(table)
    }


def _refused(project: CdcProject, *fragments: str, model: str = "dim", args: str = RENAME) -> str:
    """rename_column fails naming the model and every fragment, and changes no table. Returns its error."""
    before = _model_tables(project, model)
    outcome = project.dbt("run-operation", "auto_cdc.rename_column", "--args", args)
    assert not outcome.success, "the rename succeeded"
    for fragment in (f"model '{model}'", "nothing was renamed", *fragments):
        assert fragment in outcome.error, f"{fragment!r} not in:\n{outcome.error}"
    assert _model_tables(project, model) == before
    return outcome.error


def _split(project: CdcProject, kind: str) -> None:
    """`dim` built with full_name, then run with the query returning it as `name`: both columns
    now (the point where a user reads the warning). `fresh` reads the same events as `name`
    from the start; events accumulate, so a rebuild reads them all again."""
    project.create_table("events", EVENTS)
    _model(project, "dim", "full_name", kind)
    _model(project, "fresh", "full_name as name", kind)
    project.insert("events", BEFORE)
    project.run()
    _model(project, "dim", "full_name as name", kind)
    project.insert("events", AFTER)
    assert any("no longer writes" in w for w in project.run().warnings)


def _goes_on_as_if_always_named_so(project: CdcProject, kind: str) -> None:
    """The next run with the new name: no warning, the target as if it had always had the new
    name, and its change feed, replayed, gives it (a consumer reading `name` stays exact)."""
    project.insert("events", MORE)
    outcome = project.run()
    assert not [w for w in outcome.warnings if "no longer writes" in w]
    assert project.columns("dim") == project.columns("fresh")
    assert project.rows("dim") == project.rows("fresh")
    if CONFIGS[kind].get("change_feed"):
        assert _replay_all(project) == Counter(project.rows("dim"))


@pytest.mark.spark
@pytest.mark.parametrize("kind", SPLIT_KINDS)
def test_a_split_column_is_joined_by_a_rebuild_then_nothing_is_left_to_rename(project: CdcProject, kind: str) -> None:
    _split(project, kind)
    rebuild = "`dbt run --full-refresh -s dim` with the model query returning 'name'"
    _refused(project, "already has a column 'name' next to 'full_name'", rebuild)
    project.run("dim", full_refresh=True)  # the step it names
    kept = ["keeps its column 'full_name'"] if CONFIGS[kind].get("change_feed") else []
    _refused(project, "has no column 'full_name' but has 'name': nothing to rename", *kept)
    _goes_on_as_if_always_named_so(project, kind)


@pytest.mark.spark
@pytest.mark.parametrize("kind", SPLIT_KINDS)
def test_a_rebuild_under_the_old_name_then_rename_column_leads_to_one_column(project: CdcProject, kind: str) -> None:
    """The tester's path: split, back to the old name and `--full-refresh`, then rename_column.
    The change feed kept the column `name` the split runs gave it: the rename is refused before
    anything is written (it used to fail on a catalog error, on Spark with the target and the
    state already renamed), naming the statement that moves it out of the way."""
    _split(project, kind)
    _model(project, "dim", "full_name", kind)
    project.run("dim", full_refresh=True)
    if CONFIGS[kind].get("change_feed"):
        feed = derived_name("dim", "__cdc_changes")
        error = _refused(project, f"{feed}", "already has a column 'name'", "--full-refresh -s dim")
        (move,) = re.findall(r"move it out of the way first: (alter table .+?); then run this again", error)
        project.execute(move)  # the step it names
        assert "name__before_rename" in project.columns(feed)
    renamed = project.dbt("run-operation", "auto_cdc.rename_column", "--args", RENAME)
    assert renamed.success, renamed.error
    _model(project, "dim", "full_name as name", kind)
    _goes_on_as_if_always_named_so(project, kind)


@pytest.mark.spark
def test_rename_column_leaves_another_columns_sequences_alone(project: CdcProject) -> None:
    """SCD1 partial updates keep `__cdc_seq__full_name` for full_name and `__cdc_seq__full_name_1`
    for a column full_name_1: renaming full_name renames the first only (it used to take the
    second for a sequence part of full_name)."""
    project.create_table("events", EVENTS)
    body = "select id, {name}, city as full_name_1, op, seq, cols from {{{{ target.schema }}}}.events"
    config = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'd'", "stored_as_scd_type": 1}
    config.update(except_column_list=["op", "seq", "cols"], columns_to_update="cols")
    project.model("dim", body.format(name="full_name"), **config)
    project.model("fresh", body.format(name="full_name as name"), **config)
    project.insert("events", BEFORE)
    project.run()
    renamed = project.dbt("run-operation", "auto_cdc.rename_column", "--args", RENAME)
    assert renamed.success, renamed.error
    assert project.columns("dim__cdc_state") == project.columns("fresh__cdc_state")
    project.model("dim", body.format(name="full_name as name"), **config)
    project.insert("events", AFTER)
    project.run()
    assert project.rows("dim") == project.rows("fresh")
    assert project.rows("dim__cdc_state") == project.rows("fresh__cdc_state")


@pytest.mark.spark
@pytest.mark.parametrize("point", ["before_the_new_name", "after_it"])
def test_a_snapshot_model_follows_the_same_steps(project: CdcProject, point: str) -> None:
    """Renamed before the model runs with the new name, or joined by the rebuild the refusal
    names (from the current snapshot): either way the next snapshot finds one column, and the
    change feed replays to the table."""
    project.create_table("source", {"id": "integer", "city": "varchar"})
    config = {"materialized": "auto_cdc_from_snapshot", "keys": ["id"], "stored_as_scd_type": 2, "change_feed": True}
    body = "select id, {name} from {{{{ target.schema }}}}.source"
    project.model("users", body.format(name="city"), **config)
    project.insert("source", SNAPSHOT_A)
    project.run()
    args = "{model: users, old: city, new: town}"
    if point == "before_the_new_name":
        renamed = project.dbt("run-operation", "auto_cdc.rename_column", "--args", args)
        assert renamed.success, renamed.error
        project.model("users", body.format(name="city as town"), **config)
    else:
        project.model("users", body.format(name="city as town"), **config)
        project.replace_rows("source", SNAPSHOT_A[1:])
        assert any("no longer writes" in w for w in project.run().warnings)
        fragments = ("already has a column 'town' next to 'city'", "it starts again from the current snapshot")
        _refused(project, *fragments, model="users", args=args)
        project.run("users", full_refresh=True)  # the step it names
        _refused(project, "nothing to rename", "keeps its column 'city'", model="users", args=args)
    project.replace_rows("source", SNAPSHOT_B)
    assert not [w for w in project.run().warnings if "no longer writes" in w]
    assert project.columns("users") == ["id", "town", "__START_AT", "__END_AT"]
    current = project.dialect('select id, town from {} where "__END_AT" is null order by id')
    assert project.query(current.format(project.relation("users"))) == SNAPSHOT_B
    assert _replay_all(project, "users") == Counter(project.rows("users"))


@pytest.mark.spark
def test_a_rename_stopped_before_the_target_finishes_when_run_again(project: CdcProject) -> None:
    """On Spark the renames are separate commits, the target's last: one stopped before it leaves
    the change feed and the state renamed and the target not. Run again, it renames what is
    left (a column already renamed is not in the way)."""
    project.create_table("events", EVENTS)
    _model(project, "dim", "full_name", "scd2")
    _model(project, "fresh", "full_name as name", "scd2")
    project.insert("events", BEFORE)
    project.run()
    for table in ("dim__cdc_changes", "dim__cdc_state"):
        project.execute(project.dialect(f'alter table {project.relation(table)} rename column full_name to "name"'))
    renamed = project.dbt("run-operation", "auto_cdc.rename_column", "--args", RENAME)
    assert renamed.success, renamed.error
    _model(project, "dim", "full_name as name", "scd2")
    project.insert("events", AFTER)
    _goes_on_as_if_always_named_so(project, "scd2")
