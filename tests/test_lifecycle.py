"""The model's tables over dbt's commands (SPEC 6.1): `--empty` changes nothing that exists,
a missing helper table fails instead of a silent rebuild, and a configuration change between
runs fails when the stored state cannot follow it, or is applied with a warning."""

from __future__ import annotations

from typing import Any

import pytest
import test_flows
from test_debezium import FLAT_COLUMNS, SCD1, PostgresFeed, flat, land, row

from harness import CdcProject
from scenarios import (
    CONFIG,
    EVENTS,
    HISTORY,
    LAST_VERSION,
    MODEL,
    SNAPSHOT_A,
    SNAPSHOT_B,
    SNAPSHOT_MODELS,
    built,
    built_snapshots,
    fails,
    load_snapshot,
    run_count,
    snapshot_model,
)

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]  # on Spark too

# --- `--empty` changes nothing that exists ---------------------------------------------------------


@pytest.mark.parametrize("scd_type", [1, 2])
def test_empty_run_changes_nothing_and_says_so(project: CdcProject, scd_type: int) -> None:
    before = built(project, scd_type)
    project.replace_rows("events", [(1, "a3", "U", 3), (2, None, "D", 3)])
    outcome = project.dbt("run", "--select", "dim", "--empty")
    assert outcome.success, outcome.error
    assert "--empty" in outcome.message("dim")
    assert outcome.metrics("dim") == (0, 0)
    assert project.snapshot(*project.cdc_tables("dim")) == before
    assert project.run("dim").metrics("dim") == ((1, 1) if scd_type == 1 else (3, 0))


@pytest.mark.parametrize("scd_type", [1, 2])
def test_first_empty_run_creates_empty_tables_and_records_no_run(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type)
    project.replace_rows("events", HISTORY[:3])
    assert project.dbt("build", "--select", "dim", "--empty").success
    assert project.rows("dim") == [] and project.rows("dim__cdc_state") == [] and run_count(project) == 0
    assert project.run("dim").metrics("dim") == ((2, 0) if scd_type == 1 else (3, 0))
    assert run_count(project) == 1


@pytest.mark.parametrize("way", list(SNAPSHOT_MODELS))
def test_empty_run_keeps_snapshot_history(project: CdcProject, way: str) -> None:
    project.create_table("source", {"version": "bigint", "id": "integer", "city": "varchar"})
    snapshot_model(project, way)
    per_run = way == "per_run"
    load_snapshot(project, 0 if per_run else 1, SNAPSHOT_A, replace=True)
    project.run("users")
    load_snapshot(project, 1 if per_run else 2, SNAPSHOT_B, replace=per_run)
    project.run("users")
    before = project.snapshot(*project.cdc_tables("users"))
    load_snapshot(project, 3, [(9, "Nowhere")], replace=per_run)
    outcome = project.dbt("run", "--select", "users", "--empty")
    assert outcome.success, outcome.error
    assert outcome.metrics("users") == (0, 0) and "--empty" in outcome.message("users")
    assert project.snapshot(*project.cdc_tables("users")) == before


@pytest.mark.parametrize("way", list(SNAPSHOT_MODELS))
def test_first_empty_snapshot_run_records_no_version(project: CdcProject, way: str) -> None:
    project.create_table("source", {"version": "bigint", "id": "integer", "city": "varchar"})
    snapshot_model(project, way)
    load_snapshot(project, 0, SNAPSHOT_A, replace=True)
    assert project.dbt("run", "--select", "users", "--empty").success
    assert project.rows("users") == [] and project.rows("users__cdc_versions") == []
    assert run_count(project, "users") == 0
    project.run("users")
    assert project.query(f"select version from {project.relation('users__cdc_versions')}") == [(0,)]


@pytest.mark.parametrize("project", ["duckdb"], indirect=True)  # the plugin is DuckDB's
def test_empty_runs_with_a_snapshot_function(project: CdcProject, tmp_path: Any) -> None:
    """The first --empty run calls the function once (only it knows the snapshot's columns),
    creates the tables empty and records no version; later --empty runs do not call it."""
    module = tmp_path / "functions"
    module.mkdir()
    calls = tmp_path / "calls.txt"
    (module / "counted_snapshots.py").write_text(
        "def next_snapshot(latest):\n"
        f"    open({str(calls)!r}, 'a').write(f'{{latest}}\\n')\n"
        "    return None if latest is not None else ('select 1 as id, 2 as v', 1)\n"
    )
    project.enable_snapshot_plugin(paths=[str(module)])
    project.model(
        "users",
        "select * from {{ auto_cdc.current_snapshot() }}",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        snapshot_version_function="counted_snapshots:next_snapshot",
    )
    assert project.dbt("build", "--select", "users", "--empty").success
    assert calls.read_text() == "None\n"
    assert project.rows("users") == [] and project.rows("users__cdc_versions") == []
    project.run("users")
    assert project.rows("users") == [(1, 2)]
    before = project.snapshot(*project.cdc_tables("users"))
    calls.write_text("")
    assert project.dbt("run", "--select", "users", "--empty").success
    assert calls.read_text() == "" and project.snapshot(*project.cdc_tables("users")) == before


# --- every public macro under `--empty`, fed by ref() and source() ---------------------------------

# dbt's `--empty` renders each ref() and source() as a subquery without rows, which PostgreSQL
# gives an alias of its own (`(select ... limit 0) _dbt_limit_subq_x`). Every public macro, in a
# model fed by ref() and source(): the SCD2 generic tests, as_of, changes, flow, the snapshot
# version macros and debezium. rename_column is an operation,
# which takes no --empty; current_snapshot() needs the plugin: test_empty_runs_with_a_snapshot_function.
RAW = {
    "events": EVENTS,
    "dump": test_flows.DUMP,
    "feed": test_flows.FEED,
    "snaps": {"version": "bigint", "id": "integer", "city": "varchar"},
}
DEBEZIUM_RAW = {
    "landed": {
        "before": "text",
        "after": "text",
        "source": "text",
        "op": "text",
        "ts_ms": "bigint",
        "loaded": "integer",
    },
    "flat": FLAT_COLUMNS,
}
PUBLIC_MACROS_YML = """
version: 2
sources:
  - name: raw
    schema: "{{{{ target.schema }}}}"
    tables: [{tables}]
models:
  - name: dim
    data_tests:
      - auto_cdc.scd2_no_overlapping_intervals: {{arguments: {{keys: [id]}}}}
      - auto_cdc.scd2_one_current_row: {{arguments: {{keys: [id]}}}}
"""
SNAPS = "{{ source('raw', 'snaps') }}"
LATEST_SNAPSHOT = f"select id, city from {SNAPS} where version = (select max(version) from {SNAPS})"
NEXT_VERSION = (
    f"select min(version) from {SNAPS} where not exists (select 1 from {LAST_VERSION})"
    f" or version > (select version from {LAST_VERSION}) having count(*) > 0"
)


def _public_macro_models(project: CdcProject) -> list[str]:
    """The models, each using a public macro on ref() or source(); returns the auto_cdc ones."""
    tables = [*RAW, *DEBEZIUM_RAW]
    project.write("models/public_macros.yml", PUBLIC_MACROS_YML.format(tables=", ".join(f"name: {t}" for t in tables)))
    scd2 = {**CONFIG, "stored_as_scd_type": 2, "change_feed": True}
    project.model("dim", "select * from {{ source('raw', 'events') }}", **scd2)
    # file_format: on Spark a dropped table of another format can leave its files behind (docs/spark.md).
    project.write(
        "models/dim_as_of.sql",
        "{{ config(materialized='table', file_format='iceberg') }}\n"
        "{{ auto_cdc.as_of(ref('dim'), business_time='2') }}\n",
    )
    project.write(
        "models/dim_changes.sql",
        "{{ config(materialized='incremental', file_format='iceberg') }}\n"
        "select id, _change_type, _run_id from ({{ auto_cdc.changes(ref('dim')) }}) as c\n",
    )
    project.model(
        "users",
        "{{ auto_cdc.flow('dump', source('raw', 'dump'), kind='snapshot', version='lsn', once=true) }}\n"
        "{{ auto_cdc.flow('cdc', source('raw', 'feed'), checkpoint_column='loaded') }}",
        **test_flows.CONFIG,
    )
    snapshot = {"materialized": "auto_cdc_from_snapshot", "keys": ["id"], "stored_as_scd_type": 2}
    project.model("snap_per_run", LATEST_SNAPSHOT, **snapshot)
    project.model("snap_column", f"select * from {SNAPS}", **snapshot, snapshot_version_column="version")
    project.model(
        "snap_query",
        f"select id, city from {SNAPS} where version = (select version from "
        "{{ auto_cdc.current_snapshot_version() }})",
        **snapshot,
        snapshot_version_query=NEXT_VERSION,
    )
    types = {name: project.type_name(name) for name in ("integer", "text")}
    columns = f"columns={{'id': '{types['integer']}', 'name': '{types['text']}', 'notes': '{types['text']}'}}"
    project.model(
        "customers",
        f"select * from {{{{ auto_cdc.debezium(source('raw', 'landed'), {columns}, extra_columns=['loaded']) }}}}",
        **SCD1,
    )
    project.model(
        "customers_flat",
        "select * from {{ auto_cdc.debezium(source('raw', 'flat'), form='flattened', extra_columns=['loaded']) }}",
        **SCD1,
    )
    return ["dim", "users", "snap_per_run", "snap_column", "snap_query", "customers", "customers_flat"]


def _load_sources(project: CdcProject, batch: int, feed: PostgresFeed) -> None:
    """Batch 1, 2 or 3 of every source (Debezium's: the feed's events so far)."""
    project.insert("events", [HISTORY[:3], HISTORY[3:], [(4, "d", "U", 1)]][batch - 1])
    project.insert("feed", [(*row[:5], batch) for row in test_flows.FEED_ROWS if row[5] == batch])
    project.insert("snaps", [(batch, *row) for row in [SNAPSHOT_A, SNAPSHOT_B, [(9, "Nowhere")]][batch - 1]])
    if batch == 1:
        project.insert("dump", test_flows.DUMP_ROWS)
    landed = len(project.rows("landed")) if project.exists("landed") else 0
    if batch == 1:
        feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    feed.transaction(("u", None, row(1, f"a{batch}", "n1")), ("c", None, row(10 + batch, "x", "n")))
    land(project, feed.events[landed:], start=landed + 1)
    project.insert("flat", flat([e for e in feed.events[landed:] if e is not None]))


def test_every_public_macro_works_under_empty_on_refs_and_sources(project: CdcProject) -> None:
    """`dbt build --empty` on a fresh schema creates every model's tables empty; on built tables
    `dbt run --empty` and `dbt build --empty` change none of them (a consumer of the change feed
    reads no change either); the next real build applies everything."""
    for name, columns in {**RAW, **DEBEZIUM_RAW}.items():
        project.create_table(name, columns)
    models = _public_macro_models(project)
    feed = PostgresFeed()
    _load_sources(project, 1, feed)

    fresh = project.dbt("build", "--empty")
    assert fresh.success, fresh.error
    for model in models:
        assert project.exists(model) and project.rows(model) == [], model
        assert run_count(project, model) == 0, model
    assert project.rows("dim_changes") == [] and project.rows("dim_as_of") == []

    assert project.dbt("build").success
    _load_sources(project, 2, feed)
    project.run("dim")  # changes dim_changes has not read yet
    tables = [table for model in models for table in project.cdc_tables(model)] + ["dim_changes"]
    before = project.snapshot(*tables)
    assert all(before[model] for model in models) and before["dim_changes"]
    _load_sources(project, 3, feed)
    for command in ("run", "build"):
        outcome = project.dbt(command, "--empty")
        assert outcome.success, outcome.error
        assert project.snapshot(*tables) == before, command

    assert project.dbt("build").success
    last_run = project.query(f"select max(run_id) from {project.relation('dim__cdc_runs')}")[0][0]
    assert max(row[2] for row in project.rows("dim_changes")) == last_run


# --- the state belongs to the model ---------------------------------------------------------------


@pytest.mark.parametrize("missing", ["dim__cdc_state", "dim__cdc_runs"])
@pytest.mark.parametrize("scd_type", [1, 2])
def test_missing_helper_table_fails_until_a_full_refresh(project: CdcProject, missing: str, scd_type: int) -> None:
    built(project, scd_type)
    project.execute(f"drop table {project.relation(missing)}")
    fails(project, missing, "is missing", "--full-refresh")
    rebuilt = project.run("dim", full_refresh=True)
    assert project.exists(missing)
    said = "from every event the model query returns now: events it no longer returns are lost"
    assert any(said in line for line in rebuilt.logs), rebuilt.logs


@pytest.mark.parametrize("materialization", ["auto_cdc", "auto_cdc_from_snapshot"])
def test_a_run_history_of_an_earlier_version_gains_the_new_columns_in_place(
    project: CdcProject, materialization: str
) -> None:
    """Tables built by an earlier version of the package go on without a rebuild: the run history
    gains the columns added since (NULL in its earlier rows)."""
    if materialization == "auto_cdc":
        built(project)
        model, next_load = "dim", lambda: project.replace_rows("events", [(1, "a3", "U", 3)])
    else:
        built_snapshots(project, "column", SNAPSHOT_A)
        model, next_load = "users", lambda: load_snapshot(project, 2, SNAPSHOT_B, replace=False)
    runs = project.relation(f"{model}__cdc_runs")
    for column in ("num_differing_redeliveries", "differing_redelivery"):
        project.execute(f"alter table {runs} drop column {column}")
    before = project.rows(model)
    next_load()
    project.run(model)
    assert project.rows(model) != before
    assert project.query(f"select num_differing_redeliveries from {runs} order by run_id")[-2:] == [(None,), (0,)]


def test_missing_target_with_state_fails(project: CdcProject) -> None:
    built(project)
    project.execute(f"drop table {project.relation('dim')}")
    fails(project, ".dim is missing" if project.adapter == "spark" else '"dim"', "is missing", "--full-refresh")


def test_missing_versions_table_fails_and_says_snapshot_history_cannot_be_rebuilt(project: CdcProject) -> None:
    built_snapshots(project, "per_run", SNAPSHOT_A)
    project.execute(f"drop table {project.relation('users__cdc_versions')}")
    fails(project, "users__cdc_versions", "is missing", "--full-refresh", "cannot be rebuilt", model="users")


def test_full_refresh_false_is_honoured(project: CdcProject) -> None:
    before = built(project, full_refresh=False)
    project.replace_rows("events", [(5, "e", "U", 9)])
    outcome = project.dbt("run", "--select", "dim", "--full-refresh")
    assert outcome.success, outcome.error
    assert project.rows("dim") == sorted([*before["dim"], (5, "e")])
    project.execute(f"drop table {project.relation('dim__cdc_state')}")
    fails(project, "dim__cdc_state", "full_refresh: false", args=("--full-refresh",))


def test_a_table_not_built_by_auto_cdc_is_not_replaced(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.create_table("dim", {"id": "integer", "name": "varchar"})
    project.insert("dim", [(7, "kept")])
    project.model("dim", MODEL, **CONFIG)
    project.replace_rows("events", HISTORY[:3])
    fails(project, "dim__cdc_state", "--full-refresh")
    assert project.rows("dim") == [(7, "kept")]


# --- configuration changes between runs ------------------------------------------------------------

DRIFT_FAILS: dict[str, tuple[dict[str, Any], dict[str, Any], list[str]]] = {
    "fewer_keys": ({"keys": ["id", "seq"]}, {"keys": ["id"]}, ["`keys` changed", "['id', 'seq']", "['id']"]),
    "more_keys": ({"keys": ["id"]}, {"keys": ["id", "name"]}, ["`keys` changed", "['id']", "['id', 'name']"]),
    "scd_type": ({}, {"stored_as_scd_type": 2}, ["`stored_as_scd_type` changed", "'1'", "'2'"]),
    "sequence": ({}, {"sequence_by": ["seq", "id"]}, ["`sequence_by` changed", "['seq']", "['seq', 'id']"]),
    "sequence_expression": ({}, {"sequence_by": "seq * 10"}, ["`sequence_by` changed", "seq * 10"]),
}


@pytest.mark.parametrize("case", DRIFT_FAILS, ids=list(DRIFT_FAILS))
def test_config_change_the_state_cannot_survive_fails(project: CdcProject, case: str) -> None:
    old, new, fragments = DRIFT_FAILS[case]
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **{**CONFIG, **old})
    project.replace_rows("events", [(1, "a", "U", 1), (1, "b", "U", 2), (2, "c", "U", 1)])
    project.run("dim")
    project.model("dim", MODEL, **{**CONFIG, **new})
    fails(project, *fragments, "--full-refresh")
    project.run("dim", full_refresh=True)


def test_system_sequence_change_fails(project: CdcProject) -> None:
    columns = {**EVENTS, "sys": "integer", "sys2": "integer"}
    project.create_table("events", columns)
    bitemporal = {**CONFIG, "stored_as_scd_type": "bitemporal", "except_column_list": ["op", "seq", "sys", "sys2"]}
    project.model("dim", MODEL, **bitemporal, system_sequence_by="sys")
    project.replace_rows("events", [(1, "a", "U", 1, 10, 10)])
    project.run("dim")
    project.model("dim", MODEL, **bitemporal, system_sequence_by="sys2")
    fails(project, "`system_sequence_by` changed", "sys2", "--full-refresh")


def test_snapshot_version_mode_change_fails(project: CdcProject) -> None:
    built_snapshots(project, "column", SNAPSHOT_A)
    snapshot_model(project, "query")
    fails(project, "versions are named", "snapshot_version_column", "snapshot_version_query", model="users")


DRIFT_WARNS: dict[str, tuple[dict[str, Any], str]] = {
    "deletes": (
        {"apply_as_deletes": "op in ('D', 'X')"},
        "`apply_as_deletes` changed from \"op = 'D'\" to \"op in ('D', 'X')\"",
    ),
    "checkpoint": ({"checkpoint_column": "seq"}, "`checkpoint_column` changed"),
    "partial_updates": ({"ignore_null_updates": True}, "`ignore_null_updates` changed"),
    "track_history": ({"track_history_column_list": ["name"]}, "`track_history_column_list` changed"),
    "retention": ({"tombstone_retention": 60}, "`tombstone_retention` changed"),
}


@pytest.mark.parametrize("case", DRIFT_WARNS, ids=list(DRIFT_WARNS))
def test_config_change_for_future_events_is_applied_with_a_warning(project: CdcProject, case: str) -> None:
    change, warning = DRIFT_WARNS[case]
    project.create_table("events", EVENTS)
    scd2 = {"stored_as_scd_type": 2} if case == "track_history" else {}
    project.model("dim", MODEL, **CONFIG, **scd2)
    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    project.run("dim")
    project.model("dim", MODEL, **{**CONFIG, **scd2, **change})
    project.replace_rows("events", [(1, "a2", "U", 2), (2, None, "X", 2)])
    outcome = project.run("dim")
    assert any(warning in w for w in outcome.warnings), outcome.warnings
    again = project.run("dim")
    assert not any("changed" in w for w in again.warnings), again.warnings
