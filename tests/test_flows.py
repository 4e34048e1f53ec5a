"""Several flows into one target (docs/flows.md): a snapshot flow (a dump loaded once, or a
series of snapshots) plus change feeds into SCD1, several change feeds into SCD1 and SCD2, each
flow read from its own checkpoint; checked against the reference model on the merged ordering
domain, in one run and split, and every flow rule violated once."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_change_feed import _run_and_check
from test_property import SETTINGS, _cut

from harness import CdcProject, derived_name
from reference import Event, as_rows, scd1, scd2, sort_rows
from scenarios import fails, run_count

pytestmark = [pytest.mark.dbt_v2, pytest.mark.spark]  # on DuckDB under dbt v2 and on Spark too

COLUMNS = ["name", "city"]
DUMP = {"id": "integer", "name": "varchar", "city": "varchar", "lsn": "integer"}
FEED = {"id": "integer", "name": "varchar", "city": "varchar", "op": "varchar", "seq": "integer", "loaded": "integer"}
CONFIG: dict[str, Any] = {
    "keys": ["id"],
    "sequence_by": "seq",
    "apply_as_deletes": "op = 'D'",
    "except_column_list": ["op", "seq", "lsn", "loaded"],
}
BACKFILL_MODEL = """
{{ auto_cdc.flow('dump', target.schema ~ '.dump', kind='snapshot', version='lsn', once=true) }}
{% call auto_cdc.flow('cdc', checkpoint_column='loaded') %}
  select * from {{ target.schema }}.feed
{% endcall %}
"""
SNAPSHOTS_MODEL = """
{{ auto_cdc.flow('snapshots', target.schema ~ '.dump', kind='snapshot', version='lsn') }}
{{ auto_cdc.flow('cdc', target.schema ~ '.feed', checkpoint_column='loaded') }}
"""
TWO_FEEDS_MODEL = """
{{ auto_cdc.flow('eu', target.schema ~ '.feed', checkpoint_column='loaded') }}
{{ auto_cdc.flow('us', target.schema ~ '.feed_us', checkpoint_column='loaded') }}
"""


def _reference_events(dump: list[tuple[Any, ...]], feed: list[tuple[Any, ...]]) -> list[Event]:
    """The merged ordering domain: a snapshot at version V truncates at V and upserts its rows at V."""
    events = [Event(None, version, "truncate") for version in {row[3] for row in dump}]
    events += [Event(row[0], row[3], "upsert", {"name": row[1], "city": row[2]}) for row in dump]
    events += [
        Event(row[0], row[4], "delete" if row[3] == "D" else "upsert", {"name": row[1], "city": row[2]}) for row in feed
    ]
    return events


def _setup(project: CdcProject, body: str, **extra: Any) -> None:
    project.create_table("dump", DUMP)
    project.create_table("feed", FEED)
    project.create_table("feed_us", FEED)
    project.model("users", body, **{**CONFIG, **extra})


# Dump at version 10; the feed around it (loaded: the batch it arrived in).
DUMP_ROWS = [(1, "Ana", "Oaxaca", 10), (2, "Ben", "Monterrey", 10), (3, "Cy", "Tijuana", 10)]
FEED_ROWS = [
    (1, "Ana", "Old", "U", 5, 1),  # older than the dump: loses to it
    (2, "Ben", "Cancun", "U", 12, 1),  # newer: wins
    (4, "Dee", "Merida", "U", 11, 1),  # a key the dump lacks, added after it
    (3, None, None, "D", 9, 2),  # a late delete older than the dump: ignored
    (5, "Eve", "Puebla", "U", 8, 2),  # a key older than the dump and not in it: deleted by it
    (1, None, None, "D", 15, 3),  # a newer delete
]


def test_backfill_then_feed_matches_the_reference_in_any_split(project: CdcProject) -> None:
    _setup(project, BACKFILL_MODEL)
    project.insert("dump", DUMP_ROWS)
    expected = as_rows(scd1(_reference_events(DUMP_ROWS, FEED_ROWS), COLUMNS), COLUMNS)
    assert expected == [(2, "Ben", "Cancun"), (3, "Cy", "Tijuana"), (4, "Dee", "Merida")]

    # One run over everything.
    project.insert("feed", FEED_ROWS)
    project.run("users")
    assert project.rows("users") == expected

    # Split: the feed arrives in three runs, newest events first, each load stamped later than
    # the one before (the checkpoint reads each row once).
    project.execute(f"delete from {project.relation('feed')}")
    project.run("users", full_refresh=True)
    for arrival, batch in enumerate((3, 1, 2)):
        project.insert("feed", [(*row[:5], 100 + arrival) for row in FEED_ROWS if row[5] == batch])
        project.run("users")
    assert project.rows("users") == expected


def test_once_flow_is_read_once_and_again_after_a_full_refresh(project: CdcProject) -> None:
    _setup(project, BACKFILL_MODEL)
    project.insert("dump", DUMP_ROWS)
    project.run("users")
    assert [row[0] for row in project.rows("users")] == [1, 2, 3]
    # A row added to the dump later is not read: the once flow has been read.
    project.insert("dump", [(9, "Zed", "Leon", 10)])
    project.insert("feed", [(2, "Ben", "Cancun", "U", 12, 1)])
    project.run("users")
    assert project.rows("users") == [(1, "Ana", "Oaxaca"), (2, "Ben", "Cancun"), (3, "Cy", "Tijuana")]
    # A full refresh runs the once flow again (and the feed from its beginning).
    project.run("users", full_refresh=True)
    assert [row[0] for row in project.rows("users")] == [1, 2, 3, 9]
    assert project.rows("users")[1] == (2, "Ben", "Cancun")


def test_later_snapshot_deletes_missing_keys_and_newer_events_restore_them(project: CdcProject) -> None:
    _setup(project, SNAPSHOTS_MODEL)
    project.insert("dump", DUMP_ROWS)
    project.run("users")
    # Snapshot 20 lacks key 3; an event at 25 brings key 3 back, one at 18 (older) does not bring 1 back.
    second = [(1, "Ana", "Oaxaca", 20), (2, "Ben", "Monterrey", 20)]
    project.insert("dump", second)
    feed = [(3, "Cy", "Reborn", "U", 25, 1), (2, "Ben", "Late", "U", 18, 1)]
    project.insert("feed", feed)
    project.run("users")
    expected = as_rows(scd1(_reference_events(DUMP_ROWS + second, feed), COLUMNS), COLUMNS)
    assert project.rows("users") == expected == [(1, "Ana", "Oaxaca"), (2, "Ben", "Monterrey"), (3, "Cy", "Reborn")]
    # No new version, no new event: nothing changes, and the run says so.
    outcome = project.run("users")
    assert outcome.metrics("users") == (0, 0)
    # Catch-up of two versions in one run equals reading them one by one.
    third = [(2, "Ben", "Monterrey", 30), (4, "Dee", "Merida", 30)]
    fourth = [(4, "Dee", "Merida", 40)]
    project.insert("dump", third + fourth)
    project.run("users")
    everything = as_rows(scd1(_reference_events(DUMP_ROWS + second + third + fourth, feed), COLUMNS), COLUMNS)
    assert project.rows("users") == everything == [(4, "Dee", "Merida")]


@pytest.mark.parametrize("scd_type", [1, 2])
def test_two_feeds_each_from_its_own_checkpoint(project: CdcProject, scd_type: int) -> None:
    _setup(project, TWO_FEEDS_MODEL, stored_as_scd_type=scd_type, except_column_list=["op", "seq", "loaded"])
    eu = [(1, "Ana", "Oaxaca", "U", 1, 1), (2, "Ben", "Leon", "U", 3, 1)]
    us = [(1, "Ana", "Austin", "U", 2, 50), (2, None, None, "D", 4, 50)]
    project.insert("feed", eu[:1])
    project.insert("feed_us", us)
    project.run("users")
    # The EU feed's next rows have checkpoints below the US feed's: each flow has its own.
    project.insert("feed", [(*row[:5], 2) for row in eu[1:]] + [(3, "Cy", "Rome", "U", 7, 3)])
    project.run("users")
    events = [Event(r[0], r[4], "delete" if r[3] == "D" else "upsert", {"name": r[1], "city": r[2]}) for r in eu + us]
    events.append(Event(3, 7, "upsert", {"name": "Cy", "city": "Rome"}))
    expected = as_rows(scd1(events, COLUMNS), COLUMNS) if scd_type == 1 else scd2(events, COLUMNS)
    assert project.rows("users") == expected
    assert run_count(project, "users") == 2


def test_a_feed_row_landed_later_at_its_last_checkpoint_value_is_read(project: CdcProject) -> None:
    """A change feed flow reads from its last checkpoint value on, as a model's checkpoint does:
    the rest of a load stamped like the one read is applied, what is read again changes nothing."""
    _setup(project, TWO_FEEDS_MODEL, except_column_list=["op", "seq", "loaded"])
    project.insert("feed", [(1, "Ana", "Oaxaca", "U", 1, 5)])
    project.insert("feed_us", [(2, "Ben", "Austin", "U", 1, 7)])
    project.run("users")
    project.insert("feed", [(1, "Ana", "Puebla", "U", 2, 5)])  # the rest of the EU feed's load 5
    assert project.run("users").metrics("users") == (1, 0)
    assert project.rows("users") == [(1, "Ana", "Puebla"), (2, "Ben", "Austin")]
    assert project.run("users").metrics("users") == (0, 0)


DUMP_FLOW = "{{ auto_cdc.flow('dump', target.schema ~ '.dump', kind='snapshot', version='lsn', once=true) }}"
SNAPSHOT_FLOW = "{{ auto_cdc.flow('dump', target.schema ~ '.dump', kind='snapshot', version='lsn') }}"
FEED_FLOW = "{{ auto_cdc.flow('cdc', target.schema ~ '.feed', checkpoint_column='loaded') }}"
RULES: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    # Every rule that needs the configuration, broken at once: all are listed in one error.
    "configuration": (
        DUMP_FLOW
        + "{{ auto_cdc.flow('DUMP', target.schema ~ '.dump', kind='snapshot', version='lsn') }}"
        + "{% call auto_cdc.flow('narrow', checkpoint_column='stamp') %}"
        + " select id, name, op, seq, loaded from {{ target.schema }}.feed {% endcall %}"
        + "{% call auto_cdc.flow('typed') %}"
        + " select id, name, cast(city as integer) as city, op, seq from {{ target.schema }}.feed {% endcall %}",
        {"stored_as_scd_type": 2, "ignore_null_updates": True, "sequence_by": ["seq", "loaded"]},
        (
            "two flows are named 'dump'",
            "flows dump, DUMP are all snapshot flows",
            "combines with change feeds only in stored_as_scd_type=1, not '2'",
            "`ignore_null_updates` cannot be used with a snapshot flow",
            "`sequence_by` must be one column or expression, not 2",
            "flow 'narrow' does not return city, which the target keeps",
            "flow 'typed' does not return loaded, which the target keeps or a change event needs",
            "flow 'narrow' has no column 'stamp'",
            "column 'city' is ",
            "in flow 'typed': flows into one target must agree on each column's type",
        ),
    ),
    "snapshot_alone": (DUMP_FLOW, {}, ("has no change feed beside it", "auto_cdc_from_snapshot")),
    "version_type": (
        "{{ auto_cdc.flow('dump', target.schema ~ '.dump', kind='snapshot', version='cast(lsn as varchar)') }}"
        + FEED_FLOW,
        {},
        (
            "flow 'dump' orders its rows by its version, of type",
            "flow 'cdc' by `sequence_by`, of type",
            "must have one type",
        ),
    ),
    "arguments": (
        "{{ auto_cdc.flow('dump', target.schema ~ '.dump', kind='snapshots', once='yes') }}",
        {},
        ("flow 'dump' has kind='snapshots'", "has once='yes'", "Example: {{ auto_cdc.flow("),
    ),
    "sql_outside_flows": ("select 1 as id union all " + FEED_FLOW, {}, ("has SQL before its first auto_cdc.flow()",)),
    "expression": (
        DUMP_FLOW
        + "{% call auto_cdc.flow('cdc') %} select id, name, city, seq from {{ target.schema }}.feed {% endcall %}",
        {"except_column_list": ["seq", "lsn"]},
        ("`apply_as_deletes` (op = 'D') cannot be evaluated on the rows of flow 'cdc'",),
    ),
    "null_checkpoint": (DUMP_FLOW + FEED_FLOW, {}, ("flow 'cdc': 1 event(s) have a NULL checkpoint column 'loaded'",)),
    "null_version": (
        DUMP_FLOW.replace(", once=true", "") + FEED_FLOW,
        {},
        ("flow 'dump': 1 row(s) have a NULL version (lsn)",),
    ),
}


@pytest.mark.not_on_spark("configuration rules, checked before any SQL runs: the same on every adapter")
@pytest.mark.parametrize("rule", RULES)
def test_every_flow_rule_fails_before_writing_and_names_the_flow(project: CdcProject, rule: str) -> None:
    body, config, fragments = RULES[rule]
    _setup(project, DUMP_FLOW + FEED_FLOW)
    project.insert("dump", DUMP_ROWS)
    project.insert("feed", [(2, "Ben", "Cancun", "U", 12, 1)])
    project.run("users")
    project.insert(
        "dump" if rule == "null_version" else "feed",
        [(7, "Gil", "Colima", None)] if rule == "null_version" else [(7, "Gil", "Colima", "U", 13, None)],
    )
    project.model("users", body, **{**CONFIG, **config})
    fails(project, *fragments, model="users")


@pytest.mark.not_on_spark("configuration rules, checked before any SQL runs: the same on every adapter")
def test_flows_belong_to_auto_cdc_models(project: CdcProject) -> None:
    _setup(project, DUMP_FLOW)
    project.model("users", DUMP_FLOW + FEED_FLOW, materialized="auto_cdc_from_snapshot", keys=["id"])
    fails(project, "flow 'dump' is in a model materialized as 'auto_cdc_from_snapshot'", model="users")


@st.composite
def flow_deliveries(draw: st.DrawFn, with_snapshots: bool) -> tuple[list[Event], list[list[tuple[str, Any]]]]:
    """(every event of the merged ordering domain, the runs: each a list of (table, row) to load
    before it). Change events (odd sequences) go to the EU or US feed; snapshots (even versions,
    each a random subset of the keys) to the dump. Deliveries arrive in a random order and are
    cut into 1 to 4 runs; loads are stamped with their run, so each feed's checkpoint grows."""
    deliveries: list[list[tuple[str, Any]]] = []
    events: list[Event] = []
    used: set[tuple[int, int]] = set()
    for _ in range(draw(st.integers(1, 10))):
        key, seq = draw(st.integers(1, 3)), 2 * draw(st.integers(0, 5)) + 1
        if (key, seq) in used:
            continue
        used.add((key, seq))
        op = draw(st.sampled_from("UUD"))
        name, city = draw(st.sampled_from([None, "a", "b"])), draw(st.sampled_from([None, "x", "y"]))
        events.append(Event(key, seq, "delete" if op == "D" else "upsert", {"name": name, "city": city}))
        deliveries.append([(draw(st.sampled_from(["feed", "feed_us"])), (key, name, city, op, seq))])
    versions = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3, unique=True)) if with_snapshots else []
    for version in (2 * v for v in versions):
        # Each snapshot lacks at least one key, which it deletes at its version.
        keys = draw(st.sets(st.integers(1, 3), min_size=1, max_size=2))
        rows = [(key, draw(st.sampled_from(["a", "b"])), "s") for key in sorted(keys)]
        events.append(Event(None, version, "truncate"))
        events += [Event(key, version, "upsert", {"name": name, "city": city}) for key, name, city in rows]
        deliveries.append([("dump", (*row, version)) for row in rows])
    batches = _cut(draw, draw(st.permutations(deliveries)), max_runs=4)
    return events, [[load for delivery in batch for load in delivery] for batch in batches]
    return events, batches


PROPERTY_MODELS = {
    "scd1_snapshot_and_two_feeds": (
        SNAPSHOT_FLOW + TWO_FEEDS_MODEL,
        {"stored_as_scd_type": 1},
    ),
    "scd2_two_feeds": (TWO_FEEDS_MODEL, {"stored_as_scd_type": 2, "except_column_list": ["op", "seq", "loaded"]}),
}


@pytest.mark.not_on_spark("a property test: test_spark.py runs it with AUTO_CDC_SPARK_EXAMPLES cases")
@pytest.mark.parametrize("case", PROPERTY_MODELS)
@SETTINGS
@given(data=st.data())
def test_flows_in_any_split_match_the_reference_on_the_union(
    module_project: CdcProject, case: str, data: st.DataObject
) -> None:
    body, config = PROPERTY_MODELS[case]
    scd_type = config["stored_as_scd_type"]
    events, batches = data.draw(flow_deliveries(with_snapshots=scd_type == 1))
    module_project.drop_model_tables("users")
    _setup(module_project, body, **config)
    for run, batch in enumerate(batches):
        for table in ("feed", "feed_us", "dump"):
            rows = [row for target, row in batch if target == table]
            module_project.insert(table, rows if table == "dump" else [(*row, run) for row in rows])
        module_project.run("users")
    expected = as_rows(scd1(events, COLUMNS), COLUMNS) if scd_type == 1 else scd2(events, COLUMNS)
    assert module_project.rows("users") == expected


@st.composite
def flow_deliveries_with_bad_rows(
    draw: st.DrawFn, with_snapshots: bool
) -> tuple[list[Event], list[list[tuple[str, Any]]], list[tuple[Any, ...]]]:
    """flow_deliveries' events and runs, with bad rows mixed into each run (each unique, by its
    name): a feed's NULL key, sequence or checkpoint (`loaded`), a different event at the key
    and sequence of one of the run's own upserts, in either feed (both set aside), a snapshot
    row with a NULL version. Returns (the good events, the runs: each a list of (table, row), a
    feed row stamped with its run unless it has its own `loaded`; the rows set aside: (flow,
    id, name, reason))."""
    events, batches = draw(flow_deliveries(with_snapshots))
    bad: list[tuple[Any, ...]] = []
    runs = []
    for batch in batches:
        loads = list(batch)
        kinds = ["null_key", "null_sequence", "null_checkpoint", "conflict"] + (["null_version"] * with_snapshots)
        for _ in range(draw(st.integers(0, 3))):
            kind, name = draw(st.sampled_from(kinds)), f"bad{len(bad)}"
            feed = draw(st.sampled_from(["feed", "feed_us"]))
            flow = {"feed": "eu", "feed_us": "us"}[feed]
            if kind == "null_key":
                load: tuple[str, Any] = (feed, (None, name, "x", "U", 1))
            elif kind == "null_sequence":
                load = (feed, (1, name, "x", "U", None))
            elif kind == "null_checkpoint":
                load = (feed, (1, name, "x", "U", 1, None))
            elif kind == "conflict":
                upserts = [
                    (table, row)
                    for table, row in loads
                    if table != "dump" and row[3] == "U" and row[1] in (None, "a", "b")
                ]
                if not upserts:
                    continue
                original, (key, old_name, city, _, seq) = draw(st.sampled_from(upserts))
                # The different event lands in either feed: a group may span two flows.
                load = (feed, (key, name, city, "U", seq))
                if any(e.key == key and e.seq == seq for e in events):  # the first copy: the event is set aside too
                    bad.append(({"feed": "eu", "feed_us": "us"}[original], key, old_name, "conflicting_duplicate"))
                    events = [e for e in events if not (e.key == key and e.seq == seq)]
                kind = "conflicting_duplicate"
            else:
                load, flow = ("dump", (1, name, "x", None)), "dump"
            bad.append((flow, load[1][0], name, kind))
            loads.insert(draw(st.integers(0, len(loads))), load)
        runs.append(loads)
    return events, runs, bad


@pytest.mark.not_on_spark("a property test: test_quarantine.py runs the flows' rules on Spark")
@pytest.mark.parametrize("case", PROPERTY_MODELS)
@SETTINGS
@given(data=st.data())
def test_quarantined_flows_apply_the_good_rows_and_keep_the_bad(
    module_project: CdcProject, case: str, data: st.DataObject
) -> None:
    """SPEC 6.7 per flow: each run applies its good rows as if the bad ones had never arrived,
    and the quarantine table holds each bad row once, with its flow and reason."""
    body, config = PROPERTY_MODELS[case]
    scd_type = config["stored_as_scd_type"]
    events, batches, bad = data.draw(flow_deliveries_with_bad_rows(with_snapshots=scd_type == 1))
    module_project.drop_model_tables("users")
    _setup(module_project, body, **config, on_bad_rows="quarantine")
    for run, batch in enumerate(batches):
        for table in ("feed", "feed_us", "dump"):
            rows = [row for target, row in batch if target == table]
            module_project.insert(
                table, rows if table == "dump" else [row if len(row) == 6 else (*row, run) for row in rows]
            )
        module_project.run("users")
    expected = as_rows(scd1(events, COLUMNS), COLUMNS) if scd_type == 1 else scd2(events, COLUMNS)
    assert module_project.rows("users") == expected
    table = module_project.relation(derived_name("users", "__cdc_quarantine"))
    stored = module_project.query(f"select _cdc_flow, id, name, _cdc_reason from {table}") if bad else []
    assert sort_rows(stored) == sort_rows(bad)


def test_adding_a_flow_reads_it_from_its_beginning_and_removing_one_keeps_its_rows(project: CdcProject) -> None:
    _setup(project, FEED_FLOW, except_column_list=["op", "seq", "loaded"])
    project.insert("feed", [(1, "Ana", "Oaxaca", "U", 1, 5)])
    project.insert("feed_us", [(2, "Ben", "Austin", "U", 1, 1)])
    project.run("users")
    # `--empty` reads no flow and changes nothing that exists.
    before = project.snapshot(*project.cdc_tables("users"))
    project.model(
        "users", TWO_FEEDS_MODEL.replace("'eu'", "'cdc'"), **{**CONFIG, "except_column_list": ["op", "seq", "loaded"]}
    )
    assert project.dbt("run", "--select", "users", "--empty").success
    assert project.snapshot(*project.cdc_tables("users")) == before
    # The new flow is read from its beginning, though its checkpoints are below the other's.
    project.run("users")
    assert project.rows("users") == [(1, "Ana", "Oaxaca"), (2, "Ben", "Austin")]
    # Removed again: what it wrote stays; the remaining flow keeps its checkpoint.
    project.model("users", FEED_FLOW, **{**CONFIG, "except_column_list": ["op", "seq", "loaded"]})
    project.insert("feed", [(1, "Ana", "Old", "U", 0, 4), (3, "Cy", "Rome", "U", 1, 6)])
    project.run("users")
    assert project.rows("users") == [(1, "Ana", "Oaxaca"), (2, "Ben", "Austin"), (3, "Cy", "Rome")]


def test_flows_write_the_change_feed(project: CdcProject) -> None:
    # Each run's changes, replayed onto the table before it, give the table after it, and its
    # metrics are its change counts (_run_and_check); across a full refresh too.
    _setup(project, BACKFILL_MODEL, change_feed=True)
    project.insert("dump", DUMP_ROWS)
    for arrival, batch in enumerate((1, 2, 3)):
        project.insert("feed", [(*row[:5], arrival) for row in FEED_ROWS if row[5] == batch])
        _run_and_check(project, "users")
    _run_and_check(project, "users", full_refresh=True)


def test_an_empty_once_flow_is_read_once_it_has_rows(project: CdcProject) -> None:
    # Deployed before the dump was loaded: the once flow counts as read only once it delivered rows.
    _setup(project, BACKFILL_MODEL)
    project.insert("feed", [(2, "Ben", "Cancun", "U", 12, 1)])
    project.run("users")
    project.insert("dump", DUMP_ROWS)
    outcome = project.run("users")
    assert any("is a once flow this model has not read rows from before" in w for w in outcome.warnings)
    assert project.rows("users") == [(1, "Ana", "Oaxaca"), (2, "Ben", "Cancun"), (3, "Cy", "Tijuana")]


def test_a_once_flow_renamed_in_case_or_removed_and_added_back_is_not_read_again(project: CdcProject) -> None:
    _setup(project, BACKFILL_MODEL)
    project.insert("dump", DUMP_ROWS)
    project.run("users")
    project.insert("dump", [(9, "Zed", "Leon", 10)])
    project.model("users", BACKFILL_MODEL.replace("flow('dump'", "flow('DUMP'"), **CONFIG)
    project.run("users")
    project.model("users", FEED_FLOW, **{**CONFIG, "except_column_list": ["op", "seq", "loaded"]})
    project.run("users")
    project.model("users", BACKFILL_MODEL, **CONFIG)
    project.run("users")
    assert [row[0] for row in project.rows("users")] == [1, 2, 3]


def test_a_snapshot_version_that_grows_after_it_was_read_fails(project: CdcProject) -> None:
    _setup(project, SNAPSHOT_FLOW + FEED_FLOW)
    project.insert("dump", DUMP_ROWS[:2])
    project.run("users")
    project.insert("dump", DUMP_ROWS[2:])  # key 3 of version 10, after version 10 deleted it
    fails(
        project,
        "flow 'dump': version 10 had 2 row(s) when it was read and has 3 now",
        "--full-refresh -s users",
        model="users",
    )
    project.run("users", full_refresh=True)
    assert [row[0] for row in project.rows("users")] == [1, 2, 3]


def test_a_changed_version_expression_fails_until_a_full_refresh(project: CdcProject) -> None:
    # The stored sequences are versions of the old expression (1000); the new one gives 10, 11.
    _setup(project, SNAPSHOT_FLOW + FEED_FLOW)
    project.insert("dump", [(*row[:3], 1000) for row in DUMP_ROWS])
    project.run("users")
    project.model(
        "users", SNAPSHOT_FLOW.replace("version='lsn'", "version='cast(lsn / 100 as integer)'") + FEED_FLOW, **CONFIG
    )
    project.insert("dump", [(*row[:3], 1100) for row in DUMP_ROWS[:2]])
    fails(
        project,
        "flow 'dump' was read by version: lsn and is now read by version: cast(lsn / 100 as integer)",
        model="users",
    )
    project.run("users", full_refresh=True)
    assert [row[0] for row in project.rows("users")] == [1, 2]
