"""change_feed=true: every run appends its net changes to `<model>__cdc_changes`. Replaying a
run's changes onto the table before it (deletes and preimages out, inserts and postimages in)
gives the table after it, for any feed and split (hypothesis, SCD1 and SCD2), across a full
refresh too; each run's metrics equal its change counts. Plus the lifecycle: `--empty`,
turning it on later, schema evolution, retention and a consumer that fell behind, snapshots."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_property import SETTINGS, split_feeds

from harness import REPO_ROOT, CdcProject, RunOutcome, derived_name
from scenarios import (
    CITY_EVENTS,
    CONFIG,
    EPOCH_CONFIG,
    EPOCH_EVENTS,
    EVENTS,
    MODEL,
    SNAPSHOT_A,
    SNAPSHOT_B,
    TRUNCATING_CONFIG,
    built_snapshots,
    fails,
    load_snapshot,
)
from spec_data import (
    COMPANY_COLUMNS,
    COMPANY_CONFIG,
    COMPANY_EVENTS,
    FEED_MODEL,
    SPEC_7_6,
    USERS_CDF,
    USERS_COLUMNS,
    USERS_CONFIG,
)

pytestmark = [pytest.mark.dbt_v2, pytest.mark.spark]  # on DuckDB under dbt v2 and on Spark too

FEED = {"change_feed": True}
# file_format: on Spark a dropped table of another format can leave its files behind (docs/spark.md).
CONSUMER = (
    "{{ config(materialized='incremental', file_format='iceberg') }}\n"
    "select id, _change_type, _run_id from ({{ auto_cdc.changes(ref('dim')) }}) as c\n"
)
# The consumer of docs/change-feed.md: the example project's model, as it is written there.
USERS_PER_CITY = REPO_ROOT / "integration_tests" / "models" / "users_per_city.sql"


def _changes(project: CdcProject, model: str, run_id: int | None = None) -> list[tuple[Any, ...]]:
    """The change rows (the target's columns in its order, then _change_type), of one run or all."""
    columns = ", ".join(project.quote(c) for c in project.columns(model))
    where = "" if run_id is None else f" where _run_id = {run_id}"
    return project.query(
        f"select {columns}, _change_type from {project.relation(derived_name(model, '__cdc_changes'))}{where}"
    )


def _run_id(project: CdcProject, outcome: RunOutcome, model: str) -> int:
    runs = project.relation(derived_name(model, "__cdc_runs"))
    return project.query(f"select run_id from {runs} where invocation_id = '{outcome.invocation_id}'")[0][0]


def _replay(before: list[tuple[Any, ...]], changes: list[tuple[Any, ...]]) -> Counter:
    rows = Counter(before)
    for *row, kind in changes:
        if kind in ("delete", "update_preimage"):
            assert rows[tuple(row)] > 0, f"{kind} of a row the table did not have: {row}"
            rows[tuple(row)] -= 1
    for *row, kind in changes:
        if kind in ("insert", "update_postimage"):
            rows[tuple(row)] += 1
    return +rows


def _replay_all(project: CdcProject, model: str = "dim") -> Counter:
    """Every run's changes replayed in run order, from an empty table."""
    feed = project.relation(derived_name(model, "__cdc_changes"))
    rows: Counter = Counter()
    for (run_id,) in project.query(f"select distinct _run_id from {feed} order by _run_id"):
        rows = _replay(list(rows.elements()), _changes(project, model, run_id))
    return rows


def _run_and_check(project: CdcProject, model: str = "dim", **run: Any) -> int:
    """One run of `model`; its changes replayed onto the table before it give the table after
    it, and its metrics are its change counts. Returns its run id."""
    before = project.rows(model) if project.exists(model) else []
    outcome = project.run(model, **run)
    run_id = _run_id(project, outcome, model)
    changes = _changes(project, model, run_id)
    assert _replay(before, changes) == Counter(project.rows(model)), changes
    kinds = Counter(kind for *_, kind in changes)
    assert kinds["update_preimage"] == kinds["update_postimage"]
    assert outcome.metrics(model) == (kinds["insert"] + kinds["update_postimage"], kinds["delete"])
    return run_id


@pytest.mark.not_on_spark("a property test: test_spark.py runs it with AUTO_CDC_SPARK_EXAMPLES cases")
@pytest.mark.parametrize("scd_type", [1, 2])
@SETTINGS
@given(data=st.data())
def test_replaying_each_runs_changes_gives_the_next_table(
    module_project: CdcProject, scd_type: int, data: st.DataObject
) -> None:
    _, batches = data.draw(split_feeds(False, with_truncates=scd_type == 1))
    module_project.drop_model_tables("dim")
    module_project.create_table("events", CITY_EVENTS)
    config = TRUNCATING_CONFIG if scd_type == 1 else CONFIG
    module_project.model("dim", MODEL, **config, stored_as_scd_type=scd_type, **FEED)
    run_ids = []
    for batch in batches:
        module_project.replace_rows("events", batch)
        run_ids.append(_run_and_check(module_project))
    assert run_ids == list(range(1, len(batches) + 1))
    # All changes replayed from nothing give the table (the change feed started with it).
    assert _replay_all(module_project) == Counter(module_project.rows("dim"))


def test_full_refresh_is_recorded_as_deletes_and_inserts_and_run_ids_grow(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=2, **FEED)
    first = [(1, "a", "U", 1), (2, "b", "U", 1)]
    second = [(1, "a2", "U", 2), (2, None, "D", 3)]
    project.replace_rows("events", first)
    ids = [_run_and_check(project)]
    project.replace_rows("events", second)
    ids.append(_run_and_check(project))
    old_rows = len(project.rows("dim"))
    # The rebuild reads the whole query (here only the first batch: history the query no
    # longer returns is lost, and the change feed says so).
    project.replace_rows("events", first)
    ids.append(_run_and_check(project, full_refresh=True))
    kinds = Counter(kind for *_, kind in _changes(project, "dim", ids[-1]))
    assert kinds == {"delete": old_rows, "insert": 2}
    project.replace_rows("events", second)
    ids.append(_run_and_check(project))
    assert ids == [1, 2, 3, 4]
    assert _replay_all(project) == Counter(project.rows("dim"))
    runs = project.relation(derived_name("dim", "__cdc_runs"))
    # With a change feed the run history is kept through the rebuild, which it records.
    history = project.query(f"select run_id, full_refresh from {runs} order by run_id")
    assert history == [(1, True), (2, False), (3, True), (4, False)]  # a first run is a build too


def test_a_consumer_reads_on_past_a_full_refresh_after_a_quiet_run(project: CdcProject) -> None:
    """Run 2 changes nothing (no change rows); the full refresh keeps the run history that says
    so, and the consumer reads on instead of failing for a gap that is not one."""
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **FEED)
    project.write("models/consumer.sql", CONSUMER)
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run()
    project.run("dim")  # nothing new: a quiet run
    project.run("dim", full_refresh=True)
    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    project.run()
    assert sorted(project.rows("consumer")) == [(1, "delete", 3), (1, "insert", 1), (1, "insert", 3), (2, "insert", 4)]


def test_empty_run_writes_no_change(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **FEED)
    project.replace_rows("events", [(1, "a", "U", 1)])
    assert project.dbt("run", "--empty").success
    assert project.exists(derived_name("dim", "__cdc_changes"))
    assert _changes(project, "dim") == []
    _run_and_check(project)
    before = project.snapshot(*project.cdc_tables("dim"))
    project.replace_rows("events", [(1, "b", "U", 2)])
    assert project.dbt("run", "--empty").success
    assert project.snapshot(*project.cdc_tables("dim")) == before


def test_turned_on_later_records_from_that_run_off_keeps_the_table_orphan_fails(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG)
    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    project.run("dim")
    assert not project.exists(derived_name("dim", "__cdc_changes"))
    project.write("models/consumer.sql", CONSUMER)
    assert "configure 'dim' with change_feed=true" in project.run("consumer", expect_success=False).error
    project.model("dim", MODEL, **CONFIG, **FEED)
    project.replace_rows("events", [(1, "a2", "U", 2)])
    # A change feed that did not see every change skips a run id, so no consumer mistakes it for complete.
    assert _run_and_check(project) == 3
    assert sorted(_changes(project, "dim")) == [(1, "a", "update_preimage"), (1, "a2", "update_postimage")]
    project.model("dim", MODEL, **CONFIG, change_feed=False)
    project.replace_rows("events", [(2, None, "D", 2)])
    project.run("dim")
    assert len(_changes(project, "dim")) == 2
    # The target and its state gone but the change feed left: a new target would be recorded as
    # inserts on top of what consumers hold, so the run fails.
    project.model("dim", MODEL, **CONFIG, **FEED)
    for table in project.cdc_tables("dim")[:3]:
        project.execute(f"drop table {project.relation(table)}")
    fails(project, "its change feed", "exists")


def test_a_new_source_column_is_added_to_the_change_feed(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **FEED)
    project.replace_rows("events", [(1, "a", "U", 1)])
    _run_and_check(project)
    project.create_table("events", CITY_EVENTS)
    project.replace_rows("events", [(1, "a", "x", "U", 2), (2, "b", "y", "U", 2)])
    assert project.run("dim").metrics("dim") == (2, 0)  # the new column is NULL in the rows before
    assert "city" in project.columns(derived_name("dim", "__cdc_changes"))
    assert Counter(_changes(project, "dim")) == Counter(
        [
            (1, "a", None, "insert"),
            (1, "a", None, "update_preimage"),
            (1, "a", "x", "update_postimage"),
            (2, "b", "y", "insert"),
        ]
    )


def test_retention_trims_and_a_consumer_that_fell_behind_fails(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **FEED, change_feed_retention=3600)
    project.write("models/consumer.sql", CONSUMER)
    feed = project.relation(derived_name("dim", "__cdc_changes"))
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run()  # run 1, and the consumer reads it
    project.replace_rows("events", [(2, "b", "U", 1)])
    project.run("dim")  # run 2, not consumed
    project.execute(f"update {feed} set _committed_at = _committed_at - interval '2 hours'")
    project.replace_rows("events", [(3, "c", "U", 1)])
    project.run("dim")  # run 3 trims runs 1 and 2
    assert project.query(f"select distinct _run_id from {feed}") == [(3,)]
    outcome = project.run("consumer", expect_success=False)
    for fragment in ("'consumer'", "'dim'", "run 1", "--full-refresh -s consumer"):
        assert fragment in outcome.error, outcome.error
    # Rebuilt, it reads what is left (with a warning: the change feed no longer starts at the
    # table's beginning), and then keeps up.
    rebuilt = project.run("consumer", full_refresh=True)
    assert any("replaying it does not give the table" in w for w in rebuilt.warnings)
    project.replace_rows("events", [(3, None, "D", 2)])
    project.run()
    consumer = project.relation("consumer")
    assert project.query(f"select id, _change_type, _run_id from {consumer} order by _run_id") == [
        (3, "insert", 3),
        (3, "delete", 4),
    ]


def test_snapshots_record_their_changes(project: CdcProject) -> None:
    built_snapshots(project, "per_run", SNAPSHOT_A, scd_type=2, **FEED)
    assert Counter(kind for *_, kind in _changes(project, "users")) == {"insert": 3}
    load_snapshot(project, 2, SNAPSHOT_B, replace=True)
    _run_and_check(project, "users")
    assert _replay_all(project, "users") == Counter(project.rows("users"))


def test_bitemporal_changes_replay_spec_7_6_in_four_runs(project: CdcProject) -> None:
    project.create_table("events", COMPANY_COLUMNS)
    project.model("companies", MODEL, **COMPANY_CONFIG, **FEED)
    for event in COMPANY_EVENTS:
        project.replace_rows("events", [event])
        _run_and_check(project, "companies")
    assert project.rows("companies") == SPEC_7_6
    assert _replay_all(project, "companies") == Counter(SPEC_7_6)


def test_the_readme_consumer_keeps_one_exact_row_per_city(project: CdcProject) -> None:
    """The consumer of docs/change-feed.md, users_per_city, over two runs: one row per city, each the count
    the table has. A city the second run changes is updated in place: dbt-spark's default
    incremental strategy (append) ignores unique_key and would add a second row for it."""
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users_tracked", FEED_MODEL, **{**USERS_CONFIG, **FEED})
    project.write("models/users_per_city.sql", USERS_PER_CITY.read_text())
    seen: set[str] = set()
    for batch in (USERS_CDF[:4], USERS_CDF[4:]):  # the second run moves users out of Monterrey and Tijuana
        project.replace_rows("users_cdf", batch)
        project.run()
        users = Counter(city for _, _, city in project.rows("users_tracked"))
        seen |= set(users)  # a city whose users all left keeps its row, with 0
        per_city = project.query(f"select city, users from {project.relation('users_per_city')}")
        assert sorted(per_city) == sorted((city, users[city]) for city in seen)


@pytest.mark.not_on_spark("configuration rules, checked before any SQL runs: the same on every adapter")
def test_change_feed_config_errors(project: CdcProject) -> None:
    project.create_table("events", {**EVENTS, "_run_id": "integer"})
    project.model("dim", MODEL, **CONFIG, change_feed="yes", change_feed_retention=0)
    fails(project, "`change_feed` must be true or false", "`change_feed_retention` must be a whole number")
    project.model("dim", MODEL, **CONFIG, **FEED)
    fails(project, "a column named '_run_id', which `change_feed` adds")


def test_scd2_with_a_sequence_list(project: CdcProject) -> None:
    # PostgreSQL keeps a multi-part SCD2 sequence as a composite type that a full refresh drops
    # with CASCADE (the change feed's __START_AT/__END_AT with it): refused there, before writing.
    project.create_table("events", EPOCH_EVENTS)
    project.model("dim", MODEL, **EPOCH_CONFIG, stored_as_scd_type=2, change_feed=True)
    project.insert("events", [(1, "a", "U", 1, 1), (1, "b", "U", 1, 2)])
    if project.adapter == "postgres":
        fails(project, "`change_feed` with a `sequence_by` list on an SCD2 target is not supported on postgres")
    else:  # DuckDB keeps it as a struct: the feed works (two history rows inserted)
        assert project.run("dim").metrics("dim") == (2, 0)
        feed = project.relation(derived_name("dim", "__cdc_changes"))
        assert project.query(f"select _change_type, count(*) from {feed} group by 1") == [("insert", 2)]


def test_a_consumer_of_a_model_made_anew_fails(project: CdcProject) -> None:
    # The model's tables dropped (not --full-refresh) and built again: run ids start again at 1,
    # below what the consumer has read. Reading on would miss the new table's first runs.
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **FEED)
    project.write("models/consumer.sql", CONSUMER)
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run()
    project.replace_rows("events", [(2, "b", "U", 1)])
    project.run()  # the consumer has read run 2
    project.drop_model_tables("dim")
    project.run("dim")  # run 1 of the new tables
    outcome = project.run("consumer", expect_success=False)
    for fragment in ("last consumed run 2", "whose last run is 1", "--full-refresh -s consumer"):
        assert fragment in outcome.error, outcome.error


def test_a_consumer_compiles_before_its_upstream_ever_ran_and_a_run_says_to_run_it(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **FEED)
    project.write("models/consumer.sql", CONSUMER)
    project.replace_rows("events", [(1, "a", "U", 1)])
    compiled = project.dbt("compile")
    assert compiled.success, compiled.error
    catalog = ("compile", "--write-catalog") if project.dbt_v2 else ("docs", "generate")
    documented = project.dbt(*catalog)
    assert documented.success, documented.error
    outcome = project.run("consumer", expect_success=False)
    for fragment in ("'dim' has change_feed=true but has not run yet", "dbt run -s dim", "dbt build -s +consumer"):
        assert fragment in outcome.error, outcome.error
    project.model("dim", MODEL, **CONFIG)
    project.run("dim")
    outcome = project.run("consumer", expect_success=False)
    assert "configure 'dim' with change_feed=true" in outcome.error, outcome.error
    project.model("dim", MODEL, **CONFIG, **FEED)  # records from its next run on
    project.replace_rows("events", [(2, "b", "U", 1)])
    project.run()
    assert [row[:2] for row in project.rows("consumer")] == [(2, "insert")]
