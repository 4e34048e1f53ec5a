"""The reference model itself against the SPEC's worked examples and rules."""

from reference import Event, scd1
from spec_data import USERS_CDF

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
