"""auto_cdc_from_snapshot on both adapters: SPEC 7.5 with every way of naming versions, catch-up
over several snapshots in one run, late snapshots, deletes by absence, schema changes and the
errors of SPEC 5.2. Snapshots are loaded with plain SQL; dbt runs in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import CdcProject
from reference import as_rows, scd1, scd2, snapshot_events, sort_rows
from scenarios import fails

pytestmark = pytest.mark.dbt_v2  # on DuckDB under dbt v2 too

SNAPSHOT_A = [(1, "Oaxaca"), (2, "Monterrey"), (3, "Tijuana")]
SNAPSHOT_B = [(2, "Carmel"), (3, "Los Angeles"), (4, "Death Valley"), (6, "Kings Canyon")]
SPEC_7_5_SCD2 = sort_rows(
    [
        (1, "Oaxaca", 0, 1),
        (2, "Monterrey", 0, 1),
        (2, "Carmel", 1, None),
        (3, "Tijuana", 0, 1),
        (3, "Los Angeles", 1, None),
        (4, "Death Valley", 1, None),
        (6, "Kings Canyon", 1, None),
    ]
)
SPEC_7_5_SCD1 = sort_rows(SNAPSHOT_B)
# The dated-files variant: versions 1 and 2 from the file names, and B without key 6.
SPEC_7_5_FILES = sort_rows([(k, c, s + 1, None if e is None else e + 1) for k, c, s, e in SPEC_7_5_SCD2 if k != 6])

SOURCE = "select * from {{ target.schema }}.source"
PER_RUN = {"materialized": "auto_cdc_from_snapshot", "keys": ["userId"]}
BY_COLUMN = {**PER_RUN, "snapshot_version_column": "version"}
VERSION_QUERY = (
    "select distinct version from {{ target.schema }}.source"
    " where not exists (select 1 from {{ auto_cdc.last_snapshot_version() }})"
    " or version > (select version from {{ auto_cdc.last_snapshot_version() }})"
    " order by version limit 1"
)
BY_QUERY = {**PER_RUN, "snapshot_version_query": VERSION_QUERY}
QUERY_MODEL = (
    'select "userId", city from {{ target.schema }}.source'
    " where version = (select version from {{ auto_cdc.current_snapshot_version() }})"
)


def _per_run(project: CdcProject, scd_type: int) -> None:
    project.create_table("source", {"userId": "integer", "city": "varchar"})
    project.model("users", SOURCE, **PER_RUN, stored_as_scd_type=scd_type)


def _versioned(project: CdcProject, rows: list[tuple], config: dict, model: str = SOURCE) -> None:
    project.create_table("source", {"version": "bigint", "userId": "integer", "city": "varchar"})
    project.insert("source", rows)
    project.model("users", model, **config)


def _tagged(version: int, snapshot: list[tuple]) -> list[tuple]:
    return [(version, *row) for row in snapshot]


# --- SPEC 7.5 ------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
def test_spec_7_5_per_run_versions(project: CdcProject, scd_type: int) -> None:
    _per_run(project, scd_type)
    project.insert("source", SNAPSHOT_A)
    assert project.run().metrics("users") == (3, 0)
    project.replace_rows("source", SNAPSHOT_B)
    second = project.run().metrics("users")
    if scd_type == 2:
        assert second == (7, 0)  # 3 rows closed, 4 opened
        assert project.rows("users") == SPEC_7_5_SCD2
        # SCD2 from snapshots resolves from the open rows: it stores no events.
        assert project.rows("users__cdc_state") == []
    else:
        assert second == (4, 1)
        assert project.rows("users") == SPEC_7_5_SCD1
    assert project.query(f"select version from {project.relation('users__cdc_versions')} order by 1") == [(0,), (1,)]


@pytest.mark.spark
@pytest.mark.parametrize("config", ["column", "query"])
def test_spec_7_5_both_snapshots_in_one_run(project: CdcProject, config: str) -> None:
    """Catch-up: two snapshots already there at the first run give the table two runs give."""
    rows = _tagged(0, SNAPSHOT_A) + _tagged(1, SNAPSHOT_B)
    if config == "column":
        _versioned(project, rows, {**BY_COLUMN, "stored_as_scd_type": 2})
    else:
        _versioned(project, rows, {**BY_QUERY, "stored_as_scd_type": 2}, project.dialect(QUERY_MODEL))
    assert project.run().metrics("users") == (7, 0)
    assert project.rows("users") == SPEC_7_5_SCD2
    assert project.run().metrics("users") == (0, 0)
    assert project.rows("users") == SPEC_7_5_SCD2


@pytest.mark.parametrize("project", ["duckdb"], indirect=True)  # DuckDB reads files from SQL
def test_spec_7_5_dated_files_by_version_column(project: CdcProject, tmp_path: Path) -> None:
    directory = _write_snapshot_files(tmp_path)
    model = (
        "select \"userId\", city, cast(regexp_extract(filename, 'snapshot_([0-9]+)[.]csv$', 1) as bigint) as version"
        f" from read_csv('{directory}/snapshot_*.csv', filename = true)"
    )
    project.model("users", model, **BY_COLUMN, stored_as_scd_type=2)
    assert project.run().metrics("users") == (6, 0)
    assert project.rows("users") == SPEC_7_5_FILES


@pytest.mark.parametrize("project", ["duckdb"], indirect=True)  # the plugin is DuckDB's
def test_spec_7_5_dated_files_by_python_function(project: CdcProject, tmp_path: Path) -> None:
    directory = _write_snapshot_files(tmp_path)
    module = tmp_path / "functions"
    module.mkdir()
    (module / "spec_7_5_snapshots.py").write_text(
        "from pathlib import Path\n"
        f"SNAPSHOT_DIR = Path({str(directory)!r})\n\n"
        "def next_snapshot_and_version(latest_snapshot_version):\n"
        "    versions = sorted(int(p.stem.removeprefix('snapshot_')) for p in SNAPSHOT_DIR.glob('snapshot_*.csv'))\n"
        "    later = [v for v in versions if latest_snapshot_version is None or v > latest_snapshot_version]\n"
        "    if not later:\n"
        "        return None\n"
        "    return str(SNAPSHOT_DIR / f'snapshot_{later[0]}.csv'), later[0]\n"
    )
    project.enable_snapshot_plugin(paths=[str(module)])
    project.model(
        "users",
        "select * from {{ auto_cdc.current_snapshot() }}",
        **PER_RUN,
        stored_as_scd_type=2,
        snapshot_version_function="spec_7_5_snapshots:next_snapshot_and_version",
    )
    assert project.run().metrics("users") == (6, 0)
    assert project.rows("users") == SPEC_7_5_FILES
    assert project.run().metrics("users") == (0, 0)  # the function has no further snapshot

    (directory / "snapshot_3.csv").write_text("userId,city\n2,Carmel\n")
    assert project.run().metrics("users") == (2, 0)  # keys 3 and 4 are gone: their rows are closed
    assert project.query(f"select max(version) from {project.relation('users__cdc_versions')}") == [(3,)]


def _write_snapshot_files(tmp_path: Path) -> Path:
    directory = tmp_path / "snapshots"
    directory.mkdir()
    (directory / "snapshot_1.csv").write_text("userId,city\n" + "".join(f"{k},{c}\n" for k, c in SNAPSHOT_A))
    (directory / "snapshot_2.csv").write_text("userId,city\n" + "".join(f"{k},{c}\n" for k, c in SNAPSHOT_B if k != 6))
    return directory


# --- versions ------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
def test_catch_up_over_three_snapshots_equals_three_runs(project: CdcProject, scd_type: int) -> None:
    series = {
        10: [(1, "a"), (2, "b"), (3, "c")],
        20: [(1, "a"), (2, "B"), (4, "d")],
        30: [(2, "b"), (3, "c"), (4, "d")],
    }
    rows = [row for version, snapshot in series.items() for row in _tagged(version, snapshot)]
    _versioned(project, rows, {**BY_COLUMN, "stored_as_scd_type": scd_type})
    project.run()
    together = project.rows("users")

    project.drop_model_tables("users")
    project.replace_rows("source", [])
    for version, snapshot in series.items():
        project.insert("source", _tagged(version, snapshot))  # the source keeps the old snapshots
        project.run()
    assert project.rows("users") == together
    assert together == _reference(series, scd_type)


def _reference(series: dict[int, list[tuple]], scd_type: int) -> list[tuple]:
    events = snapshot_events(
        [(version, {k: {"city": c} for k, c in rows}) for version, rows in series.items()], ["city"]
    )
    return as_rows(scd1(events, ["city"]), ["city"]) if scd_type == 1 else scd2(events, ["city"])


def test_warnings_fail_the_run_under_warn_error_before_anything_is_written(project: CdcProject) -> None:
    """The package's warnings are dbt warnings: `--warn-error` (or `--warn-error-options`
    naming JinjaLogWarning) turns a skipped late snapshot into a failed run, nothing written."""
    _versioned(project, _tagged(1, SNAPSHOT_A) + _tagged(3, SNAPSHOT_B), {**BY_COLUMN, "stored_as_scd_type": 2})
    project.run()
    project.insert("source", _tagged(2, [(9, "Late")]))
    fails(project, "snapshot version(s) 2 arrived after a later version", model="users", args=("--warn-error",))


@pytest.mark.spark
def test_late_snapshot_in_version_column_is_skipped_with_a_warning(project: CdcProject) -> None:
    _versioned(project, _tagged(1, SNAPSHOT_A) + _tagged(3, SNAPSHOT_B), {**BY_COLUMN, "stored_as_scd_type": 2})
    project.run()
    before = project.rows("users")
    project.insert("source", _tagged(2, [(9, "Late")]))
    outcome = project.run()
    assert outcome.metrics("users") == (0, 0)
    assert project.rows("users") == before
    assert any("snapshot version(s) 2 arrived after a later version" in w for w in outcome.warnings)
    # Re-reading versions already applied is normal and says nothing.
    assert not project.run().warnings
    # A full refresh applies the late version where it falls, and says so before it starts.
    rebuilt = project.run(full_refresh=True)
    said = "versions skipped before as late are applied where they fall"
    assert any(said in line for line in rebuilt.logs), rebuilt.logs
    assert project.rows("users") != before


@pytest.mark.spark
def test_older_version_from_version_query_is_skipped_with_a_warning(project: CdcProject) -> None:
    project.create_table("source", {"version": "bigint", "userId": "integer", "city": "varchar"})
    project.create_table("next_version", {"version": "bigint"})
    project.insert("source", _tagged(5, SNAPSHOT_A) + _tagged(3, SNAPSHOT_B))
    project.insert("next_version", [(5,)])
    # Like Databricks' snapshot_version table: the query returns the version it is told, unless
    # it was already processed.
    query = (
        "select version from {{ target.schema }}.next_version"
        " where not exists (select 1 from {{ auto_cdc.last_snapshot_version() }})"
        " or version <> (select version from {{ auto_cdc.last_snapshot_version() }})"
    )
    project.model("users", project.dialect(QUERY_MODEL), **PER_RUN, stored_as_scd_type=2, snapshot_version_query=query)
    project.run()
    before = project.rows("users")
    assert before == sort_rows([(k, c, 5, None) for k, c in SNAPSHOT_A])
    project.replace_rows("next_version", [(3,)])
    outcome = project.run()
    assert outcome.metrics("users") == (0, 0)
    assert project.rows("users") == before
    assert any("snapshot version 3 is not above the last processed version" in w for w in outcome.warnings)


@pytest.mark.spark
def test_unchanged_snapshot_changes_nothing_but_advances_the_version(project: CdcProject) -> None:
    _per_run(project, 2)
    project.insert("source", SNAPSHOT_A)
    project.run()
    assert project.run().metrics("users") == (0, 0)
    project.replace_rows("source", SNAPSHOT_B)
    project.run()
    assert {row[2] for row in project.rows("users") if row[3] is None} == {2}  # B is version 2


@pytest.mark.spark
def test_empty_snapshot_deletes_every_key_and_keys_come_back(project: CdcProject) -> None:
    _per_run(project, 2)
    project.insert("source", SNAPSHOT_A)
    project.run()
    project.replace_rows("source", [])
    fails(project, "has no rows", "`allow_empty_snapshots: true`", model="users")  # unless allowed
    project.model("users", SOURCE, **PER_RUN, stored_as_scd_type=2, allow_empty_snapshots=True)
    assert project.run().metrics("users") == (3, 0)  # three rows closed
    project.replace_rows("source", [(1, "Oaxaca")])
    assert project.run().metrics("users") == (1, 0)
    assert project.rows("users") == sort_rows(
        [(1, "Oaxaca", 0, 1), (1, "Oaxaca", 2, None), (2, "Monterrey", 0, 1), (3, "Tijuana", 0, 1)]
    )


@pytest.mark.spark
def test_full_refresh_starts_versions_again_at_zero(project: CdcProject) -> None:
    _per_run(project, 2)
    project.insert("source", SNAPSHOT_A)
    project.run()
    project.replace_rows("source", SNAPSHOT_B)
    project.run()
    rebuilt = project.run(full_refresh=True)
    assert project.rows("users") == sort_rows([(k, c, 0, None) for k, c in SNAPSHOT_B])
    said = "from the current snapshot only, as version 0: the history of every earlier version is discarded"
    assert any(said in line for line in rebuilt.logs), rebuilt.logs


@pytest.mark.spark
def test_version_query_with_no_snapshot_yet_creates_nothing(project: CdcProject) -> None:
    _versioned(project, [], {**BY_QUERY, "stored_as_scd_type": 2}, project.dialect(QUERY_MODEL))
    outcome = project.run()
    assert outcome.metrics("users") == (0, 0)
    assert any("no snapshot is available yet" in w for w in outcome.warnings)
    assert not project.exists("users")
    project.insert("source", _tagged(0, SNAPSHOT_A))
    project.run()
    assert project.rows("users") == sort_rows([(k, c, 0, None) for k, c in SNAPSHOT_A])


@pytest.mark.spark
def test_text_versions_order_as_text(project: CdcProject) -> None:
    project.create_table("source", {"version": "varchar", "userId": "integer", "city": "varchar"})
    project.insert("source", [("2024-01-02", 1, "b"), ("2024-01-01", 1, "a")])
    project.model("users", SOURCE, **BY_COLUMN, stored_as_scd_type=2)
    project.run()
    assert project.rows("users") == [(1, "a", "2024-01-01", "2024-01-02"), (1, "b", "2024-01-02", None)]


# --- columns -------------------------------------------------------------------------------------


@pytest.mark.spark
def test_untracked_change_updates_the_current_row_in_place(project: CdcProject) -> None:
    project.create_table("source", {"userId": "integer", "name": "varchar", "city": "varchar"})
    project.model("users", SOURCE, **PER_RUN, stored_as_scd_type=2, track_history_except_column_list=["city"])
    project.insert("source", [(1, "Isabel", "Monterrey")])
    project.run()
    project.replace_rows("source", [(1, "Isabel", "Chihuahua")])
    assert project.run().metrics("users") == (1, 0)
    assert project.rows("users") == [(1, "Isabel", "Chihuahua", 0, None)]


@pytest.mark.spark
def test_changed_track_history_list_keeps_closed_rows(project: CdcProject) -> None:
    """SCD2 from snapshots stores no events: a new tracked list applies from each key's open row on."""
    project.create_table("source", {"userId": "integer", "name": "varchar", "city": "varchar"})
    project.model("users", SOURCE, **PER_RUN, stored_as_scd_type=2)
    for city in ["Oaxaca", "Monterrey"]:
        project.replace_rows("source", [(1, "Isabel", city)])
        project.run()
    project.model("users", SOURCE, **PER_RUN, stored_as_scd_type=2, track_history_column_list=["name"])
    project.replace_rows("source", [(1, "Isabel", "Tijuana")])
    outcome = project.run()
    assert any("closed rows stay as they are" in w for w in outcome.warnings), outcome.warnings
    assert project.rows("users") == [(1, "Isabel", "Oaxaca", 0, 1), (1, "Isabel", "Tijuana", 1, None)]


@pytest.mark.spark
def test_new_source_column_is_appended_without_new_versions(project: CdcProject) -> None:
    _per_run(project, 2)
    project.insert("source", SNAPSHOT_A)
    project.run()
    project.add_column("source", "zip", "varchar")
    project.replace_rows("source", [(1, "Oaxaca", "68000"), (2, "Monterrey", None), (3, "Tijuana", None)])
    project.run()
    assert project.columns("users") == ["userId", "city", "__START_AT", "__END_AT", "zip"]
    assert project.rows("users") == sort_rows(
        [(1, "Oaxaca", 0, None, "68000"), (2, "Monterrey", 0, None, None), (3, "Tijuana", 0, None, None)]
    )
    # Once the column exists, a snapshot's NULL is a value like any other: key 2 changes from
    # NULL to "64000" at version 2 and opens a version (docs/snapshots.md, "Snapshot semantics").
    project.replace_rows("source", [(1, "Oaxaca", "68000"), (2, "Monterrey", "64000"), (3, "Tijuana", None)])
    project.run()
    assert project.rows("users") == sort_rows(
        [
            (1, "Oaxaca", 0, None, "68000"),
            (2, "Monterrey", 0, 2, None),
            (2, "Monterrey", 2, None, "64000"),
            (3, "Tijuana", 0, None, None),
        ]
    )


def test_column_list_limits_what_is_compared(project: CdcProject) -> None:
    project.create_table("source", {"userId": "integer", "city": "varchar", "loaded_at": "varchar"})
    project.model("users", SOURCE, **PER_RUN, stored_as_scd_type=2, except_column_list=["loaded_at"])
    project.insert("source", [(1, "Oaxaca", "monday")])
    project.run()
    project.replace_rows("source", [(1, "Oaxaca", "tuesday")])
    assert project.run().metrics("users") == (0, 0)
    assert project.columns("users") == ["userId", "city", "__START_AT", "__END_AT"]


# --- errors: nothing is written --------------------------------------------------------------------


@pytest.mark.spark
def test_two_rows_for_a_key_fail_naming_the_key(project: CdcProject) -> None:
    _per_run(project, 1)
    project.insert("source", SNAPSHOT_A)
    project.run()
    project.replace_rows("source", [*SNAPSHOT_B, (4, "Again")])
    fails(project, "has 2 rows for key userId=4", "version 1", model="users")


@pytest.mark.spark
def test_null_version_fails(project: CdcProject) -> None:
    _versioned(project, _tagged(1, SNAPSHOT_A), {**BY_COLUMN, "stored_as_scd_type": 2})
    project.run()
    project.insert("source", [(None, 9, "Nowhere")])
    fails(project, "NULL version", "'version'", model="users")


def test_null_version_from_version_query_fails(project: CdcProject) -> None:
    _versioned(project, _tagged(1, SNAPSHOT_A), {**PER_RUN, "snapshot_version_query": "select null as version"})
    fails(project, "the next snapshot version is NULL", model="users")


def test_version_query_with_two_rows_fails(project: CdcProject) -> None:
    query = "select distinct version from {{ target.schema }}.source"
    _versioned(project, _tagged(1, SNAPSHOT_A) + _tagged(2, SNAPSHOT_B), {**PER_RUN, "snapshot_version_query": query})
    fails(project, "returned 2 rows", model="users")


def test_changed_version_type_fails(project: CdcProject) -> None:
    _versioned(project, _tagged(1, SNAPSHOT_A), {**BY_COLUMN, "stored_as_scd_type": 2})
    project.run()
    project.model(
        "users",
        'select cast(version as varchar) as version, "userId", city from {{ target.schema }}.source',
        **BY_COLUMN,
        stored_as_scd_type=2,
    )
    fails(project, "snapshot versions are now of type", "--full-refresh", model="users")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"sequence_by": "version"}, "`sequence_by` does not apply to auto_cdc_from_snapshot"),
        ({"apply_as_deletes": "city is null"}, "`apply_as_deletes` does not apply"),
        ({"ignore_null_updates": True}, "`ignore_null_updates` does not apply"),
        ({"stored_as_scd_type": "bitemporal"}, "1 or 2, not 'bitemporal'"),
        ({"snapshot_version_query": "select 1"}, "set at most one of snapshot_version_column, snapshot_version_query"),
        ({"keys": ["nope"]}, "`keys` names column 'nope'"),
        ({"replace_using": ["city"]}, "`replace_using` names 'city', which is not one of `keys` (userId)"),
        ({"replace_using": ["nope"]}, "`replace_using` names column 'nope'"),
        ({"replace_using": []}, "`replace_using` names no column"),
        ({"replace_using": ["userId"]}, "`replace_using` changed from not set to ['userid']"),
    ],
)
def test_invalid_config_fails_before_writing(project: CdcProject, extra: dict, message: str) -> None:
    _versioned(project, _tagged(1, SNAPSHOT_A), {**BY_COLUMN, "stored_as_scd_type": 2})
    project.run()
    project.model("users", SOURCE, **{**BY_COLUMN, "stored_as_scd_type": 2, **extra})
    fails(project, message, "model 'users'", model="users")


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # the error where no plugin exists
def test_python_function_on_postgres_names_alternatives(project: CdcProject) -> None:
    project.model(
        "users",
        "select 1 as id",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        snapshot_version_function="snapshots:next_snapshot_and_version",
    )
    fails(project, "not available on postgres", "snapshot_version_column", "snapshot_version_query", model="users")


@pytest.mark.parametrize("project", ["duckdb"], indirect=True)  # the plugin is DuckDB's
def test_python_function_without_the_plugin_says_how_to_enable_it(project: CdcProject) -> None:
    project.model(
        "users",
        "select * from {{ auto_cdc.current_snapshot() }}",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        snapshot_version_function="snapshots:next_snapshot_and_version",
    )
    fails(project, "plugins: [{module: auto_cdc.plugin}]", model="users")


def test_events_of_the_reference_for_spec_7_5() -> None:
    """The reference model itself, on SPEC 7.5 (the dbt tests above compare with it)."""
    a = {k: {"city": c} for k, c in SNAPSHOT_A}
    b = {k: {"city": c} for k, c in SNAPSHOT_B}
    events = snapshot_events([(1, b), (0, a)], ["city"])
    assert {(e.key, e.seq, e.op) for e in events} == {
        (1, 0, "upsert"),
        (2, 0, "upsert"),
        (3, 0, "upsert"),
        (1, 1, "delete"),
        (2, 1, "upsert"),
        (3, 1, "upsert"),
        (4, 1, "upsert"),
        (6, 1, "upsert"),
    }
    assert scd2(events, ["city"]) == SPEC_7_5_SCD2
    assert as_rows(scd1(events, ["city"]), ["city"]) == SPEC_7_5_SCD1
