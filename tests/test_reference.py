"""The reference model itself against the SPEC's worked examples and rules."""

from reference import (
    Event,
    as_rows,
    scd1,
    scd2,
    scoped_snapshot_events,
    set_aside,
    set_aside_snapshots,
    snapshot_events,
    sort_rows,
)
from spec_data import SPEC_7_3, SPEC_7_4, USERS_CDF

COLUMNS = ["name", "city"]


def users_cdf() -> list[Event]:
    return [
        Event(key, seq, "delete" if op == "DELETE" else "upsert", {"name": name, "city": city})
        for key, name, city, op, seq in USERS_CDF
    ]


def test_spec_7_1() -> None:
    assert scd1(users_cdf(), COLUMNS) == {
        124: {"name": "Raul", "city": "Oaxaca"},
        125: {"name": "Mercedes", "city": "Guadalajara"},
        126: {"name": "Lily", "city": "Cancun"},
    }


def test_spec_7_2_truncate() -> None:
    events = [*users_cdf(), Event(None, 3, "truncate")]
    assert scd1(events, COLUMNS) == {125: {"name": "Mercedes", "city": "Guadalajara"}}


def test_delete_clears_columns_written_before_it() -> None:
    events = [
        Event(1, 10, "upsert", {"name": "a", "city": "x"}),
        Event(1, 30, "upsert", {"name": None, "city": "y"}),
        Event(1, 20, "delete"),
    ]
    assert scd1(events, COLUMNS, ignore_null={"name", "city"}) == {1: {"name": None, "city": "y"}}


def test_truncate_and_upsert_at_the_same_sequence() -> None:
    events = [Event(1, 3, "upsert", {"name": "a", "city": "x"}), Event(None, 3, "truncate")]
    assert scd1(events, COLUMNS) == {1: {"name": "a", "city": "x"}}


def test_columns_to_update() -> None:
    events = [
        Event(1, 1, "upsert", {"name": "a", "city": "x"}, ("name",)),
        Event(1, 2, "upsert", {"name": None, "city": "y"}, ("name", "CITY")),
    ]
    assert scd1(events, COLUMNS, use_columns_to_update=True) == {1: {"name": None, "city": "y"}}


def test_spec_7_3_scd2() -> None:
    assert scd2(users_cdf(), COLUMNS) == sort_rows(SPEC_7_3)


def test_spec_7_4_scd2_track_history_except_city() -> None:
    assert scd2(users_cdf(), COLUMNS, tracked=["name"]) == sort_rows(SPEC_7_4)


def test_scd2_late_event_splits_a_run_of_no_op_upserts() -> None:
    events = [
        Event(1, s, "upsert", {"name": n, "city": None})
        for s, n in [(5, "Alice"), (10, "Alice"), (15, "Alice"), (20, "Charlie"), (12, "Bob")]
    ]
    assert scd2(events, COLUMNS) == sort_rows(
        [
            (1, "Alice", None, 5, 12),
            (1, "Alice", None, 15, 20),
            (1, "Bob", None, 12, 15),
            (1, "Charlie", None, 20, None),
        ]
    )


def test_scd2_partial_update_takes_the_preceding_value() -> None:
    events = [
        Event(1, 1, "upsert", {"name": "a", "city": "x"}),
        Event(1, 3, "upsert", {"name": None, "city": "y"}),
        Event(1, 2, "upsert", {"name": "b", "city": None}),
    ]
    assert scd2(events, COLUMNS, ignore_null={"name", "city"}) == sort_rows(
        [
            (1, "a", "x", 1, 2),
            (1, "b", "x", 2, 3),
            (1, "b", "y", 3, None),
        ]
    )


# SPEC 6.6: per-store inventory, key (store, item); each extract holds the stores it re-sends.
STORE_1_DAY_1 = {(1, "nail"): {"name": 10, "city": None}, (1, "bolt"): {"name": 5, "city": None}}
STORE_2_DAY_1 = {(2, "nail"): {"name": 7, "city": None}}
STORE_1_DAY_2 = {(1, "nail"): {"name": 9, "city": None}}  # bolt sold out: deleted in store 1 only


def _store(key: tuple[int, str]) -> int:
    return key[0]


def test_a_scoped_snapshot_leaves_the_groups_it_does_not_hold_alone() -> None:
    series = [(1, {**STORE_1_DAY_1, **STORE_2_DAY_1}), (2, STORE_1_DAY_2)]
    events = scoped_snapshot_events(series, COLUMNS, _store)
    assert as_rows(scd1(events, COLUMNS), COLUMNS) == as_rows({**STORE_1_DAY_2, **STORE_2_DAY_1}, COLUMNS)
    assert Event((1, "bolt"), 2, "delete") in events
    assert not [e for e in events if e.key[0] == 2 and e.seq == 2]  # store 2 has no version 2


def test_scoped_snapshots_of_one_group_are_whole_snapshots() -> None:
    series = [(1, STORE_1_DAY_1), (2, STORE_1_DAY_2), (3, {})]
    assert scoped_snapshot_events(series, COLUMNS, _store) == snapshot_events(series[:2], COLUMNS)
    # An empty snapshot holds no group: it deletes nothing (a group with no rows is absent).


def test_a_group_absent_for_a_version_is_compared_with_its_last_rows() -> None:
    series = [(1, STORE_2_DAY_1), (2, STORE_1_DAY_1), (3, {(2, "nail"): {"name": 6, "city": None}})]
    events = scoped_snapshot_events(series, COLUMNS, _store)
    store_2 = sorted((e.key, e.seq, e.op) for e in events if e.key[0] == 2)
    assert store_2 == [((2, "nail"), 1, "upsert"), ((2, "nail"), 3, "upsert")]


# SPEC 6.7: what a quarantining run sets aside, and what it applies.
def test_set_aside_names_the_first_rule_each_bad_event_breaks() -> None:
    events = [
        Event(None, 1, "upsert", {"name": "a", "city": "x"}),
        Event(1, None, "upsert", {"name": "b", "city": "x"}),
        Event(2, 3, "upsert", {"name": "c", "city": "x"}),
        Event(None, 4, "truncate"),  # a truncate has no key
    ]
    good, bad = set_aside(events, COLUMNS)
    assert [reason for _, reason in bad] == ["null_key", "null_sequence"]
    assert good == [events[2], events[3]]


def test_set_aside_takes_every_event_of_a_conflicting_group_and_keeps_agreeing_copies() -> None:
    copies = [Event(1, 5, "upsert", {"name": "a", "city": "x"}), Event(1, 5, "upsert", {"name": "a", "city": "x"})]
    conflict = [Event(2, 5, "upsert", {"name": "a", "city": "x"}), Event(2, 5, "delete")]
    good, bad = set_aside(copies + conflict, COLUMNS)
    assert good == copies
    assert [(e.key, reason) for e, reason in bad] == [(2, "conflicting_duplicate"), (2, "conflicting_duplicate")]
    # The good events apply as if the others had never arrived.
    assert as_rows(scd1(good, COLUMNS), COLUMNS) == [(1, "a", "x")]


def test_set_aside_checks_the_system_sequence_only_for_bitemporal() -> None:
    event = Event(1, 1, "upsert", {"name": "a", "city": "x"})
    assert set_aside([event], COLUMNS, bitemporal=True)[1] == [(event, "null_system_sequence")]
    assert set_aside([event], COLUMNS) == ([event], [])


def test_a_key_a_snapshot_holds_twice_keeps_what_it_had_and_a_version_of_bad_rows_is_not_applied() -> None:
    series = [
        (1, [(1, "a"), (2, "b")]),
        (2, [(1, "a2"), (2, "x"), (2, "y"), (None, "z")]),  # key 2 twice: keeps "b"
        (3, [(None, "only bad")]),  # nothing left: not applied
        (4, [(1, "a2")]),  # key 2 gone
    ]
    applied, bad = set_aside_snapshots(series)
    assert applied == [(1, [(1, "a"), (2, "b")]), (2, [(1, "a2"), (2, "b")]), (4, [(1, "a2")])]
    assert bad == [
        (2, None, "z", "null_key"),
        (2, 2, "x", "duplicate_key"),
        (2, 2, "y", "duplicate_key"),
        (3, None, "only bad", "null_key"),
    ]
