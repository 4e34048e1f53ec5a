"""What each run reports (SPEC 6.8, docs/monitoring.md): events read, applied, ignored and
collapsed, live tombstones, duration and lag, in the run history, the log line and
run_results.json; `auto_cdc.run_history()` over many models; the lag and ignored-events tests;
the stage lines of a long run. The counts for random feeds split into runs are checked against
the reference model in test_property.py."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from harness import CdcProject, derived_name
from scenarios import fails, run_batches

pytestmark = pytest.mark.dbt_v2  # on DuckDB under dbt v2 too


def _at(hour: int, minute: int, second: int) -> dt.datetime:
    """A source commit time on 2026-12-06 (UTC)."""
    return dt.datetime(2026, 12, 6, hour, minute, second)


EVENTS = {"id": "integer", "v": "varchar", "seq": "integer", "op": "varchar", "ts": "timestamp"}
MODEL = "select * from {{ target.schema }}.events"
CONFIG = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'd'", "commit_time_column": "ts"}
FIRST = [
    (1, "a", 1, "u", _at(10, 0, 0)),
    (1, "a", 1, "u", _at(10, 0, 0)),  # a copy: collapsed
    (2, "b", 2, "u", _at(10, 0, 1)),
    (3, "c", 3, "u", _at(10, 0, 2)),
    (3, None, 4, "d", _at(10, 0, 3)),
]
SECOND = [
    (1, "a", 1, "u", _at(10, 0, 0)),  # a replay of a stored event
    (1, "z", 0, "u", _at(9, 0, 0)),  # older than the stored upsert
    (2, "bb", 5, "u", _at(11, 0, 0)),
    (3, "late", 2, "u", _at(8, 0, 0)),  # older than the stored delete
]
METRICS = "num_events, num_applied_events, num_ignored_events, num_collapsed_duplicates, num_live_tombstones"
# Per SCD type, each run's (read, applied, ignored, collapsed, live tombstones): SCD1 ignores
# what is older than its stored key; SCD2 places late events in the history, ignoring replays only.
EXPECTED = {
    1: [(5, 4, 0, 1, 1), (4, 1, 3, 0, 1)],
    2: [(5, 4, 0, 1, None), (4, 3, 1, 0, None)],
}


def _history(project: CdcProject, model: str, columns: str) -> list[tuple[Any, ...]]:
    runs = project.relation(derived_name(model, "__cdc_runs"))
    return project.query(f"select {columns} from {runs} order by run_id")


def _as_utc(value: Any) -> dt.datetime:
    return value.astimezone(dt.timezone.utc) if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
def test_a_run_reports_what_it_did_with_its_events(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type)
    outcomes = [project.run()]
    project.replace_rows("events", SECOND)
    outcomes.append(project.run())

    recorded = _history(project, "dim", METRICS)
    assert [tuple(None if v is None else int(v) for v in row) for row in recorded] == EXPECTED[scd_type]
    times = _history(project, "dim", "applied_at, duration_s, max_commit_time, lag_s")
    newest = [
        dt.datetime(2026, 12, 6, 10, 0, 3, tzinfo=dt.timezone.utc),
        dt.datetime(2026, 12, 6, 11, tzinfo=dt.timezone.utc),
    ]
    for (applied_at, duration, max_commit_time, lag), expected_newest in zip(times, newest):
        assert _as_utc(max_commit_time) == expected_newest
        assert 0 <= float(duration) < 600
        # The lag runs from the newest commit to the run's record: its start plus its duration.
        behind = (_as_utc(applied_at) - expected_newest).total_seconds()
        assert abs(float(lag) - float(duration) - behind) < 0.01, (lag, duration, behind)

    # The log line (and run_results.json) carries the same numbers, after the row counts.
    read, applied, ignored, collapsed, tombstones = EXPECTED[scd_type][1]
    message = outcomes[1].message("dim")
    counts = f"num_applied_events={applied} num_ignored_events={ignored} num_collapsed_duplicates={collapsed}"
    assert f"num_events={read} {counts}" in message, message
    assert (f"num_live_tombstones={tombstones}" in message) == (tombstones is not None), message
    assert "max_commit_time=2026-12-06T11:00:00" in message and " lag_s=" in message, message
    if not project.dbt_v2:
        response = outcomes[1].result("dim").adapter_response
        assert response["_message"] == message and response["code"] == "AUTO_CDC", response


@pytest.mark.spark
@pytest.mark.parametrize("sequence_written", [False, True])
def test_live_tombstones_older_than_a_truncate_are_not_counted(project: CdcProject, sequence_written: bool) -> None:
    """A truncate blocks what an older tombstone blocked: from its run on, only the deletes at
    or after it count (the older ones are forgotten once the run is recorded, but for a key
    with a row again). In both state layouts: every key (the sequence not written), or
    tombstones only. The last two runs count on from the run before (on Spark: carried)."""
    project.create_table("events", EVENTS)
    config = {**CONFIG, "apply_as_truncates": "op = 't'"}
    if not sequence_written:
        config["except_column_list"] = ["seq", "op", "ts"]
    project.model("dim", MODEL, **config)
    ts = _at(10, 0, 0)
    first = [(1, "a", 1, "u", ts), (2, "b", 2, "u", ts), (2, None, 3, "d", ts), (3, None, 4, "d", ts)]
    # Key 5 has a row again, newer than the truncate: it keeps its row and its older tombstone.
    first += [(5, None, 3, "d", ts), (5, "e", 6, "u", ts)]
    runs = [
        first,
        [(None, None, 5, "t", ts), (4, "c", 6, "u", ts)],
        [(4, None, 7, "d", ts), (3, None, 2, "d", ts)],  # the second is older than the truncate
        [(5, "f", 8, "u", ts)],  # 5's tombstone, older than the truncate, is not counted before either
        [(5, None, 9, "d", ts)],
    ]
    run_batches(project, *runs[:3])
    assert [row[:2] for row in project.rows("dim")] == [(5, "e")]
    run_batches(project, *runs[3:])
    assert [int(n) for (n,) in _history(project, "dim", "num_live_tombstones")] == [3, 0, 1, 1, 2]


@pytest.mark.not_on_v2("dbt v2 runs each statement on a connection of its own: a session setting does not last")
def test_a_commit_time_without_a_time_zone_is_read_as_utc(project: CdcProject) -> None:
    """Whatever the session's time zone (DuckDB's default is the machine's)."""
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    zone = "set TimeZone = 'America/New_York'" if project.adapter == "duckdb" else "set time zone 'America/New_York'"
    project.model("dim", MODEL, **CONFIG, pre_hook=zone)
    project.run()
    ((max_commit_time, lag, duration, applied_at),) = _history(
        project, "dim", "max_commit_time, lag_s, duration_s, applied_at"
    )
    assert _as_utc(max_commit_time) == dt.datetime(2026, 12, 6, 10, 0, 3, tzinfo=dt.timezone.utc)
    behind = (_as_utc(applied_at) - _as_utc(max_commit_time)).total_seconds()
    assert abs(float(lag) - float(duration) - behind) < 0.01, (lag, duration, behind)


def test_without_a_commit_time_there_is_no_lag(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **{k: v for k, v in CONFIG.items() if k != "commit_time_column"})
    message = project.run().message("dim")
    assert _history(project, "dim", "max_commit_time, lag_s") == [(None, None)]
    assert "max_commit_time=" not in message and "lag_s=" not in message and " duration_s=" in message, message


@pytest.mark.parametrize(("column", "fragment"), [("v", "`commit_time_column` 'v' is"), ("tss", "commit_time_column")])
def test_a_commit_time_column_that_is_not_a_time_fails_before_writing(
    project: CdcProject, column: str, fragment: str
) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG)
    project.run()
    project.model("dim", MODEL, **{**CONFIG, "commit_time_column": column})
    fails(project, fragment)


def test_a_snapshot_model_reports_its_changes(project: CdcProject) -> None:
    """A snapshot's changes are all new: applied, none ignored or collapsed."""
    project.create_table("extracts", {"day": "integer", "id": "integer", "v": "varchar"})
    project.insert("extracts", [(1, 1, "a"), (1, 2, "b"), (2, 1, "a"), (2, 2, "c"), (2, 3, "d")])
    project.model(
        "stock",
        "select * from {{ target.schema }}.extracts",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        snapshot_version_column="day",
    )
    project.run()
    # Day 1: 2 inserts; day 2: 1 update and 1 insert.
    assert _history(project, "stock", METRICS + ", lag_s") == [(4, 4, 0, 0, 0, None)]


@pytest.mark.spark
def test_run_history_reads_every_model_as_one_relation(project: CdcProject) -> None:
    """By refs, and every auto_cdc model of the project; a history from before a metric existed
    reads NULL there, until the model's next run adds the column."""
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG)
    project.model("dim_history", MODEL, **CONFIG, stored_as_scd_type=2)
    project.run()
    runs = project.relation(derived_name("dim", "__cdc_runs"))
    project.execute(f"alter table {runs} drop column lag_s")  # as a run history of an earlier version has it
    columns = "model_name, num_events, num_applied_events, lag_s is null"
    project.model(
        "by_refs",
        f"select {columns} from ({{{{ auto_cdc.run_history([ref('dim'), ref('dim_history')]) }}}}) as r",
        materialized="view",
    )
    project.model(
        "every_model",
        f"-- depends_on: {{{{ ref('dim') }}}} {{{{ ref('dim_history') }}}}\n"
        f"select {columns} from ({{{{ auto_cdc.run_history() }}}}) as r",
        materialized="view",
    )
    project.run("by_refs", "every_model")
    expected = [("dim", 5, 4, True), ("dim_history", 5, 4, False)]
    assert sorted(project.rows("by_refs")) == expected
    assert sorted(project.rows("every_model")) == expected

    project.replace_rows("events", SECOND)
    project.run()  # dim's history gains lag_s again: its new row has one
    view = project.relation("every_model")
    if project.adapter == "spark":
        # A Spark view over an Iceberg column dropped and added again reads the dropped column
        # (NULL); users never drop lag_s. The view's query itself reads the new values.
        view = (
            "(" + (project.path / "target/run/cdc_test/models/every_model.sql").read_text().split(" as\n", 1)[1] + ")"
        )
    assert sorted(project.query(f"select * from {view} as v")) == sorted(
        [*expected, ("dim", 4, 1, False), ("dim_history", 4, 3, False)]
    )


def test_run_history_of_a_model_that_is_not_auto_cdc_fails(project: CdcProject) -> None:
    project.model("plain", "select 1 as id", materialized="view")
    project.model("runs", "select * from ({{ auto_cdc.run_history([ref('plain')]) }}) as r", materialized="view")
    outcome = project.dbt("run")
    assert not outcome.success
    assert "has no run history" in outcome.error and "plain__cdc_runs" in outcome.error, outcome.error


def _tests_yml(project: CdcProject, tests: str) -> None:
    project.write("models/tests.yml", "version: 2\nmodels:\n  - name: dim\n    data_tests:\n" + tests)


def _statuses(outcome: Any) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in outcome.results if r.node.resource_type == "test"}


@pytest.mark.spark
def test_the_lag_and_ignored_events_tests(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG)
    _tests_yml(
        project,
        "      - auto_cdc.lag_under: {arguments: {seconds: 1000000000}}\n"
        "      - auto_cdc.lag_under: {arguments: {seconds: 60}}\n"
        "      - auto_cdc.ignored_fraction_under: {arguments: {fraction: 0.5}}\n",
    )
    first = _statuses(project.dbt("build"))
    assert first == {
        "auto_cdc_lag_under_dim_1000000000": "pass",
        "auto_cdc_lag_under_dim_60": "fail",  # the events were committed long ago
        "auto_cdc_ignored_fraction_under_dim_0_5": "pass",
    }
    project.replace_rows("events", SECOND)  # 3 of 4 ignored
    second = _statuses(project.dbt("build"))
    assert second["auto_cdc_ignored_fraction_under_dim_0_5"] == "fail"

    # Without a commit time the lag cannot be checked: the test fails rather than pass unchecked.
    project.model("dim", MODEL, **{k: v for k, v in CONFIG.items() if k != "commit_time_column"})
    project.replace_rows("events", [])
    third = _statuses(project.dbt("build"))
    assert third["auto_cdc_lag_under_dim_1000000000"] == "fail"


@pytest.mark.not_on_v2("dbt v2 shows no debug-level log lines")
def test_each_stage_logs_its_duration(project: CdcProject) -> None:
    """Stages of 5 s or more are shown; the others go to the debug log."""
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG)
    outcome = project.run()
    stages = [line for line in outcome.debug_logs if line.startswith("auto_cdc: dim: ")]
    assert [line.split(": ")[2].split(" took ")[0] for line in stages] == [
        "batch read",
        "checks",
        "tables",
        "writes",
    ], stages
    assert not [line for line in outcome.logs if " took " in line]
    if project.adapter == "postgres":  # a slow model query: its stage is shown
        project.model(
            "dim", MODEL.replace("select *", "select events.*") + " cross join (select pg_sleep(5)) as slow", **CONFIG
        )
        shown = [line for line in project.run().logs if " took " in line]
        assert len(shown) == 1 and shown[0].startswith("auto_cdc: dim: batch read took "), shown
