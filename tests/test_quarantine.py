"""Bad rows set aside (SPEC 6.7, on_bad_rows='quarantine'): the rows that would fail the run go
to <model>__cdc_quarantine with their reason, and the rest applies as if they had never arrived.
Random feeds with random bad rows, split into runs, are checked against the reference model in
test_property.py."""

from __future__ import annotations

from typing import Any

import pytest
from test_snapshots import BY_QUERY, QUERY_MODEL

from harness import CdcProject, derived_name
from reference import sort_rows
from scenarios import fails

pytestmark = pytest.mark.dbt_v2  # on DuckDB under dbt v2 too

EVENTS = {"id": "integer", "v": "varchar", "seq": "integer", "op": "varchar", "loaded": "integer"}
MODEL = "select * from {{ target.schema }}.events"
CONFIG = {"keys": ["id"], "sequence_by": "seq", "apply_as_deletes": "op = 'd'", "on_bad_rows": "quarantine"}
FIRST = [
    (1, "a", 1, "u", 1),
    (1, "a", 1, "u", 1),  # a copy: one event
    (2, "b", 1, "u", 1),
    (None, "no key", 1, "u", 1),
    (3, "no sequence", None, "u", 1),
    (4, "x", 2, "u", 1),  # two different events at one key and sequence:
    (4, "y", 2, "u", 1),  # both set aside
    (4, "older", 1, "u", 1),  # applies: the conflict is at sequence 2 only
]
SET_ASIDE = [
    (None, "no key", 1, "u", 1, "null_key"),
    (3, "no sequence", None, "u", 1, "null_sequence"),
    (4, "x", 2, "u", 1, "conflicting_duplicate"),
    (4, "y", 2, "u", 1, "conflicting_duplicate"),
]


def _quarantined(project: CdcProject, model: str = "dim") -> list[tuple[Any, ...]]:
    table = project.relation(derived_name(model, "__cdc_quarantine"))
    return project.query(f"select id, v, seq, op, loaded, _cdc_reason from {table} order by v")


def _runs(project: CdcProject, model: str = "dim") -> list[tuple[int, ...]]:
    runs = project.relation(derived_name(model, "__cdc_runs"))
    query = f"select num_events, num_applied_events, num_quarantined_rows from {runs} order by run_id"
    return [tuple(int(value) for value in row) for row in project.query(query)]


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
def test_bad_rows_are_set_aside_and_the_rest_applies(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type, except_column_list=["op", "loaded"])
    outcome = project.run()
    # SCD1: id, v, seq; SCD2: then the validity columns.
    assert [row[:3] for row in project.rows("dim")] == [(1, "a", 1), (2, "b", 1), (4, "older", 1)]
    assert _quarantined(project) == sorted(SET_ASIDE, key=lambda row: row[1])
    table = project.relation(derived_name("dim", "__cdc_quarantine"))
    (warning,) = [w for w in outcome.warnings if "set aside" in w]
    assert "4 row(s) of this run were set aside in" in warning and table.split(".")[-1].strip('"`') in warning, warning
    assert "(2 conflicting_duplicate, 1 null_key, 1 null_sequence)" in warning, warning
    assert "num_quarantined_rows=4" in outcome.message("dim")

    # Read again (no checkpoint): the same bad rows are not added twice; a fixed row is a new event.
    project.insert("events", [(3, "fixed", 3, "u", 2)])
    again = project.run()
    assert _quarantined(project) == sorted(SET_ASIDE, key=lambda row: row[1])
    assert any("4 row(s) of this run were set aside" in w for w in again.warnings), again.warnings
    assert (3, "fixed", 3) in [row[:3] for row in project.rows("dim")]
    # Read 9 rows each run: 4 set aside, 1 collapsed, the rest applied (the second run: the fixed row).
    assert _runs(project) == [(8, 3, 4), (9, 1, 4)]


def test_with_a_checkpoint_a_row_read_again_is_kept_once(project: CdcProject) -> None:
    """The checkpoint is the highest value read, set-aside rows included (they are kept, not
    lost); the rows at it are read again by the next run, and set aside once."""
    project.create_table("events", EVENTS)
    project.insert("events", [(1, "a", 1, "u", 1), (2, "b", 1, "u", None), (None, "c", 1, "u", 2)])
    project.model("dim", MODEL, **CONFIG, checkpoint_column="loaded", except_column_list=["op", "loaded"])
    project.run()
    project.insert("events", [(3, "d", 1, "u", 2), (2, "b fixed", 2, "u", 3)])
    project.run()
    assert project.rows("dim") == [(1, "a", 1), (2, "b fixed", 2), (3, "d", 1)]
    assert _quarantined(project) == [(2, "b", 1, "u", None, "null_checkpoint"), (None, "c", 1, "u", 2, "null_key")]
    assert _runs(project) == [(3, 1, 2), (4, 2, 2)]  # the second run read the row at 2 again, and the null one


def test_full_refresh_keeps_the_quarantine_and_says_so(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **CONFIG, except_column_list=["op", "loaded"])
    project.run()
    project.replace_rows("events", FIRST[:3])
    outcome = project.dbt("run", "--full-refresh")
    assert outcome.success
    assert any("--full-refresh keeps" in line and "dim__cdc_quarantine" in line for line in outcome.logs), outcome.logs
    assert _quarantined(project) == sorted(SET_ASIDE, key=lambda row: row[1])
    assert project.rows("dim") == [(1, "a", 1), (2, "b", 1)]


def test_a_column_new_in_the_model_query_is_added_to_the_quarantine(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", [(None, "a", 1, "u", 1)])
    project.model("dim", MODEL, **CONFIG, except_column_list=["op", "loaded"])
    project.run()
    project.model(
        "dim", "select *, 'new' as note from {{ target.schema }}.events", **CONFIG, except_column_list=["op", "loaded"]
    )
    project.replace_rows("events", [(None, "b", 1, "u", 1)])
    project.run()
    table = project.relation(derived_name("dim", "__cdc_quarantine"))
    assert project.query(f"select v, note from {table} order by v") == [("a", None), ("b", "new")]


def test_on_bad_rows_takes_fail_or_quarantine(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.insert("events", FIRST)
    project.model("dim", MODEL, **{**CONFIG, "on_bad_rows": "skip"})
    fails(project, "`on_bad_rows` is 'skip'", "'quarantine'")


def test_bitemporal_sets_aside_a_null_system_sequence(project: CdcProject) -> None:
    project.create_table("events", {**EVENTS, "sys": "integer"})
    project.insert("events", [(1, "a", 1, "u", 1, 1), (1, "b", 2, "u", 1, None), (2, "c", 1, "u", 1, 1)])
    config = {**CONFIG, "stored_as_scd_type": "bitemporal", "system_sequence_by": "sys"}
    project.model("dim", MODEL, **config, except_column_list=["op", "loaded", "sys"])
    project.run()
    assert [row[:3] for row in project.rows("dim")] == [(1, "a", 1), (2, "c", 1)]
    table = project.relation(derived_name("dim", "__cdc_quarantine"))
    assert project.query(f"select id, v, sys, _cdc_reason from {table}") == [(1, "b", None, "null_system_sequence")]


SNAPSHOTS = [
    (1, 1, "Oaxaca"),
    (1, 2, "Monterrey"),
    (1, 3, "Tijuana"),
    (2, 1, "Oaxaca"),
    (2, 2, "Merida"),
    (2, 3, "Tijuana 2"),
    (3, 1, "Oaxaca"),
    (3, 2, "Dup A"),  # key 2 twice in snapshot 3: both rows set aside,
    (3, 2, "Dup B"),  # and key 2 keeps what snapshot 2 held (Merida): not deleted
    (3, 3, "Tijuana 2"),
    (3, None, "no key"),
    (4, 1, "Oaxaca"),
    (4, 3, "Tijuana 2"),  # key 2 gone: deleted at 4
]


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
@pytest.mark.parametrize("split", ["together", "one_per_run"])
def test_a_snapshot_sets_aside_duplicate_keys_and_they_keep_what_they_had(
    project: CdcProject, scd_type: int, split: str
) -> None:
    project.create_table("source", {"version": "bigint", "userId": "integer", "city": "varchar"})
    config = {"materialized": "auto_cdc_from_snapshot", "keys": ["userId"], "snapshot_version_column": "version"}
    model = "select * from {{ target.schema }}.source"
    project.model("users", model, **config, stored_as_scd_type=scd_type, on_bad_rows="quarantine")
    # Together: snapshots 1-3 in one run (key 2 carried from the run's own snapshot 2), then 4.
    versions = [[1, 2, 3], [4]] if split == "together" else [[1], [2], [3], [4]]
    outcomes = []
    for run in versions:
        project.insert("source", [row for row in SNAPSHOTS if row[0] in run])
        outcomes.append(project.run("users"))
        if scd_type == 1 and 3 in run:
            assert project.rows("users") == [(1, "Oaxaca"), (2, "Merida"), (3, "Tijuana 2")]
    if scd_type == 1:
        assert project.rows("users") == [(1, "Oaxaca"), (3, "Tijuana 2")]
    else:
        assert project.rows("users") == [
            (1, "Oaxaca", 1, None),
            (2, "Merida", 2, 4),
            (2, "Monterrey", 1, 2),
            (3, "Tijuana", 1, 2),
            (3, "Tijuana 2", 2, None),
        ]
    table = project.relation(derived_name("users", "__cdc_quarantine"))
    # The model query's columns, then the snapshot's version and the reason.
    columns = project.columns(derived_name("users", "__cdc_quarantine"))
    assert [name.lower() for name in columns[:5]] == [
        "version",
        "userid",
        "city",
        "_cdc_version",
        "_cdc_reason",
    ]
    assert sorted((row[:5] for row in project.query(f"select * from {table}")), key=lambda row: row[2]) == [
        (3, 2, "Dup A", 3, "duplicate_key"),
        (3, 2, "Dup B", 3, "duplicate_key"),
        (3, None, "no key", 3, "null_key"),
    ]
    assert any("3 row(s) of this run were set aside" in w for o in outcomes for w in o.warnings)


def test_a_snapshot_named_by_a_version_query_left_without_rows_fails(project: CdcProject) -> None:
    """Its version is read whatever its rows: without any, it would delete every key."""
    project.create_table("source", {"version": "bigint", "userId": "integer", "city": "varchar"})
    project.model(
        "users",
        project.dialect(QUERY_MODEL),
        **BY_QUERY,
        on_bad_rows="quarantine",
    )
    project.insert("source", [(1, 1, "Oaxaca"), (1, 2, "Monterrey")])
    project.run("users")
    project.insert("source", [(2, None, "no key"), (2, 1, "a"), (2, 1, "b")])
    fails(project, "every row of the snapshot at version 2 would be set aside", model="users")


def test_with_a_checkpoint_a_conflicting_group_is_read_again_whole(project: CdcProject) -> None:
    """The checkpoint stops below a conflicting group, so no later run reads one of its events
    alone and applies it."""
    project.create_table("events", EVENTS)
    project.insert("events", [(1, "a", 2, "u", 5), (1, "b", 2, "u", 6), (2, "c", 1, "u", 6)])
    project.model("dim", MODEL, **CONFIG, checkpoint_column="loaded", except_column_list=["op", "loaded"])
    project.run()
    project.insert("events", [(3, "d", 1, "u", 7)])
    project.run()
    assert project.rows("dim") == [(2, "c", 1), (3, "d", 1)]
    assert [row[:2] for row in _quarantined(project)] == [(1, "a"), (1, "b")]
    runs = project.relation(derived_name("dim", "__cdc_runs"))
    assert [row[0] for row in project.query(f"select checkpoint_value from {runs} order by run_id")] == ["5", "5"]


@pytest.mark.spark
def test_the_quarantine_follows_the_model_querys_columns(project: CdcProject) -> None:
    """A column the query no longer returns stays (NULL in new rows); a type the table cannot
    take fails before anything is written."""
    project.create_table("events", EVENTS)
    project.insert("events", [(None, "a", 1, "u", 1)])
    project.model("dim", MODEL, **CONFIG, except_column_list=["op", "loaded"])
    project.run()
    without_loaded = "select id, v, seq, op from {{ target.schema }}.events"
    project.model("dim", without_loaded, **CONFIG, except_column_list=["op"])
    project.replace_rows("events", [(None, "b", 1, "u", 2)])
    project.run()
    table = project.relation(derived_name("dim", "__cdc_quarantine"))
    assert project.query(f"select v, loaded from {table} order by v") == [("a", 1), ("b", None)]
    as_text = "select id, v, seq, op, 'x' as loaded from {{ target.schema }}.events"
    project.model("dim", as_text, **CONFIG, except_column_list=["op", "loaded"])
    fails(project, "column 'loaded' is now of type", "dim__cdc_quarantine", "nothing was written")


DUMP = {"id": "integer", "name": "varchar", "city": "varchar", "lsn": "integer"}
FEED = {"id": "integer", "name": "varchar", "city": "varchar", "op": "varchar", "seq": "integer", "loaded": "integer"}
FLOWS_MODEL = """
{{ auto_cdc.flow('dump', target.schema ~ '.dump', kind='snapshot', version='lsn') }}
{{ auto_cdc.flow('cdc', target.schema ~ '.feed', checkpoint_column='loaded') }}
"""
FLOWS_CONFIG = {
    "keys": ["id"],
    "sequence_by": "seq",
    "apply_as_deletes": "op = 'D'",
    "except_column_list": ["op", "seq", "lsn", "loaded"],
    "on_bad_rows": "quarantine",
}


def _flows_quarantined(project: CdcProject) -> list[tuple[Any, ...]]:
    table = project.relation(derived_name("users", "__cdc_quarantine"))
    return project.query(f"select _cdc_flow, id, name, lsn, seq, loaded, _cdc_reason from {table} order by name")


@pytest.mark.spark
def test_flows_set_aside_each_flows_bad_rows(project: CdcProject) -> None:
    """Per flow: a change feed's NULL keys, sequences, checkpoints and conflicting groups; a
    snapshot flow's NULL versions."""
    project.create_table("dump", DUMP)
    project.create_table("feed", FEED)
    project.insert("dump", [(1, "Ana", "Oaxaca", 10), (2, "Ben", "Merida", 10), (3, "Noversion", "x", None)])
    project.insert(
        "feed",
        [
            (4, "Dee", "Puebla", "U", 11, 1),
            (None, "Nokey2", "x", "U", 12, 1),
            (5, "Noseq", "x", "U", None, 1),
            (6, "Nocheckpoint", "x", "U", 13, None),
            (7, "Gx", "x", "U", 14, 1),  # two different events at one key and sequence,
            (7, "Gy", "y", "U", 14, 2),  # landed in two loads
            (8, "Eve", "Leon", "U", 15, 2),
        ],
    )
    project.model("users", FLOWS_MODEL, **FLOWS_CONFIG)
    outcome = project.run()
    applied = [(1, "Ana", "Oaxaca"), (2, "Ben", "Merida"), (4, "Dee", "Puebla"), (8, "Eve", "Leon")]
    assert project.rows("users") == applied
    expected = [
        ("cdc", 7, "Gx", None, 14, 1, "conflicting_duplicate"),
        ("cdc", 7, "Gy", None, 14, 2, "conflicting_duplicate"),
        ("cdc", 6, "Nocheckpoint", None, 13, None, "null_checkpoint"),
        ("cdc", None, "Nokey2", None, 12, 1, "null_key"),
        ("cdc", 5, "Noseq", None, None, 1, "null_sequence"),
        ("dump", 3, "Noversion", None, None, None, "null_version"),
    ]
    assert _flows_quarantined(project) == expected
    assert any("6 row(s) of this run were set aside" in w for w in outcome.warnings), outcome.warnings

    # The feed's checkpoint stays at its conflicting group's lowest load, so the next run reads
    # the group again whole (kept once), not Gy alone, which it would apply.
    project.insert("feed", [(9, "Fay", "Colima", "U", 16, 3)])
    project.run()
    assert project.rows("users") == [*applied, (9, "Fay", "Colima")]
    assert _flows_quarantined(project) == expected


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([(1, "Ana", "Leon", 20), (1, "Ana", "Tula", 20), (2, "Ben", "Merida", 20)], "2 row(s) have a NULL key"),
        ([(1, "Ana", "Leon", 20), (None, "Ben", "Merida", 20)], "1 row(s) have a NULL key"),
    ],
    ids=["duplicated_key", "null_key"],
)
def test_a_snapshot_flows_duplicated_or_null_key_fails_even_with_quarantine(
    project: CdcProject, rows: list[tuple[Any, ...]], message: str
) -> None:
    """Set aside, the key would be missing from its snapshot, which would delete it (a NULL key:
    some key, not known which)."""
    project.create_table("dump", DUMP)
    project.create_table("feed", FEED)
    project.insert("dump", [(1, "Ana", "Oaxaca", 10), (2, "Ben", "Merida", 10)])
    project.model("users", FLOWS_MODEL, **FLOWS_CONFIG)
    project.run()
    project.insert("dump", rows)
    fails(project, f"flow 'dump': {message}", "delete it", model="users")


def test_a_once_flows_conflicting_event_fails_even_with_quarantine(project: CdcProject) -> None:
    """A once flow is not read again: set aside, its event's group could not be read again whole,
    and the next run would apply the other flow's event alone."""
    project.create_table("dump", DUMP)
    project.create_table("feed", FEED)
    project.create_table("backfill", FEED)
    project.insert("backfill", [(1, "Ana", "Oaxaca", "U", 5, 1)])
    project.insert("feed", [(1, "Ana", "Leon", "U", 5, 1)])
    body = """
{{ auto_cdc.flow('backfill', target.schema ~ '.backfill', once=true) }}
{{ auto_cdc.flow('cdc', target.schema ~ '.feed', checkpoint_column='loaded') }}
"""
    project.model("users", body, **{**FLOWS_CONFIG, "except_column_list": ["op", "seq", "loaded"]})
    fails(project, "flow 'backfill' is a once flow, and 1 of its event(s) are in a group", model="users")


LAST = "{{ auto_cdc.last_snapshot_version() }}"
SCOPED_QUERY = (
    f"select min(day) from {{{{ target.schema }}}}.extracts where not exists (select 1 from {LAST})"
    f" or day > (select version from {LAST}) having count(*) > 0"
)
SCOPED_WAYS: dict[str, tuple[str, dict[str, Any]]] = {
    "column": ("select * from {{ target.schema }}.extracts", {"snapshot_version_column": "day"}),
    "query": (
        "select store_id, item, quantity from {{ target.schema }}.extracts"
        " where day = (select version from {{ auto_cdc.current_snapshot_version() }})",
        {"snapshot_version_query": SCOPED_QUERY},
    ),
}


@pytest.mark.spark
@pytest.mark.parametrize("way", SCOPED_WAYS)
def test_scoped_snapshots_set_aside_null_keys_and_a_store_left_without_rows_keeps_its_stock(
    project: CdcProject, way: str
) -> None:
    """replace_using: a store whose rows were all set aside is not in that extract, so it keeps
    what it had; a key an extract holds twice fails the run (its store is not known)."""
    sql, config = SCOPED_WAYS[way]
    project.create_table("extracts", {"day": "bigint", "store_id": "integer", "item": "varchar", "quantity": "integer"})
    day_1 = [(1, 1, "nail", 10), (1, 1, "bolt", 5), (1, 2, "nail", 7), (1, 3, "glue", 4)]
    day_2 = [(2, 1, "nail", 9), (2, 1, "tape", 2), (2, 2, None, 3), (2, None, "saw", 1)]  # store 2: no row with a key
    day_3 = [(3, 3, None, 1)]  # store 3 alone, no row with a key
    project.insert("extracts", day_1 + day_2 + day_3)
    scoped = {"keys": ["store_id", "item"], "replace_using": ["store_id"], "on_bad_rows": "quarantine"}
    project.model("stock", sql, materialized="auto_cdc_from_snapshot", **scoped, **config, stored_as_scd_type=1)
    project.run()
    kept = [(1, "nail", 9), (1, "tape", 2), (2, "nail", 7), (3, "glue", 4)]
    assert [row[-3:] for row in project.rows("stock")] == kept
    table = project.relation(derived_name("stock", "__cdc_quarantine"))
    quarantined = project.query(f"select _cdc_version, store_id, item, _cdc_reason from {table}")
    expected = [(2, 2, None, "null_key"), (2, None, "saw", "null_key"), (3, 3, None, "null_key")]
    assert sort_rows(quarantined) == sort_rows(expected)

    project.insert("extracts", [(4, 1, "nail", 1), (4, 1, "nail", 2)])
    fails(project, "2 snapshot row(s) share a key with another row of their snapshot", "replace_using", model="stock")
