"""A column the model query stops returning, as in a rename: named in a warning on every run
(its old values kept, new rows NULL there), and `auto_cdc.rename_column`, which renames it in
every table of the model so the table goes on as if it had always had the new name."""

from __future__ import annotations

import pytest

from harness import CdcProject, RunOutcome

pytestmark = [pytest.mark.dbt_v2]

EVENTS = {"id": "integer", "full_name": "varchar", "city": "varchar", "op": "varchar", "seq": "integer"}
EVENTS["cols"] = "varchar"  # columns_to_update
BODY = "select id, {name}, city, op, seq, cols from {{{{ target.schema }}}}.events"
CONFIGS = {
    "scd1": {"stored_as_scd_type": 1},
    "scd1_partial": {"stored_as_scd_type": 1, "columns_to_update": "cols"},
    "scd2": {"stored_as_scd_type": 2, "change_feed": True},
    "scd2_ignore_null": {"stored_as_scd_type": 2, "ignore_null_updates": True},
}
BEFORE = [(1, "Ana", "Oaxaca", "c", 1, None), (2, "Bo", "Tijuana", "c", 1, None), (3, "Cy", "Cancun", "c", 1, None)]
AFTER = [(2, "Bob", None, "u", 2, "name"), (3, None, "Merida", "u", 2, None), (4, "Di", "Leon", "c", 2, None)]


def _model(project: CdcProject, model: str, name: str, kind: str) -> None:
    config = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'd'"}
    config["except_column_list"] = ["op", "seq", "cols"]
    if project.adapter == "spark" and CONFIGS[kind].get("change_feed"):
        kind = "scd2_ignore_null"  # no change feed on Spark yet (README, "Spark")
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
    for fragment in ("'dim'", "full_name", "keep the values last written", "The new column(s) name are NULL",
                     "auto_cdc.rename_column", "--full-refresh -s dim"):
        assert fragment in warning, warning
    current = "" if kind == "scd1" else ' where "__END_AT" is null'
    query = f'select id, full_name, name from {project.relation("dim")}{current} order by id'
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
    if CONFIGS[kind].get("change_feed") and project.adapter != "spark":
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
        ("{model: dim, old: full_name, new: name}", "already has a column 'name'"),
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
    query = f'select id, name, city from {project.relation("dim")}{current} order by id'
    assert project.query(project.dialect(query)) == [(1, "Ann", None), (3, None, "Merida"), (4, "Di", "Leon")]
