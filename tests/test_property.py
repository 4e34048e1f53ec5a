"""The fundamental rule, checked by hypothesis on both adapters: random change feeds (inserts,
updates, deletes, truncates, NULLs for partial updates, redeliveries), split into random runs
in random arrival order, give through dbt the same SCD1 table, and the same SCD2 history, as
the reference model gives for the whole set of events."""

from __future__ import annotations

import types
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import HYPOTHESIS_EXAMPLES as EXAMPLES
from harness import CdcProject, derived_name
from reference import Event, as_rows, bitemporal, ignored_events, live_tombstones, scd1, scd2, set_aside, sort_rows
from scenarios import CITY_EVENTS, CONFIG, MODEL, TRUNCATING_CONFIG, run_batches

COLUMNS = ["name", "city"]
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def with_examples(property_test: Any, examples: int) -> Any:
    """A property test of these modules with `examples` random cases: for the tiers where each
    case costs more (Spark, dbt v2). A copy of its body (same code), since hypothesis takes one
    settings object per function."""
    body = property_test.hypothesis.inner_test
    copy = types.FunctionType(body.__code__, body.__globals__, body.__name__, body.__defaults__, body.__closure__)
    copy.__annotations__ = body.__annotations__
    tier_settings = settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    return given(data=st.data())(tier_settings(copy))


MODES: dict[str, dict[str, Any]] = {
    "full_rows": {},
    # The target keeps `seq`, each row's last upsert: the state keeps only tombstones.
    "sequence_written": {"except_column_list": ["op"]},
    "ignore_null_updates": {"ignore_null_updates": True},
    "ignore_null_city_only": {"ignore_null_updates_column_list": ["city"]},
    "columns_to_update": {"columns_to_update": "cols"},
}


def _cut(draw: st.DrawFn, order: list[tuple[Any, ...]], max_runs: int) -> list[list[tuple[Any, ...]]]:
    """The events in arrival order, cut into 1 to `max_runs` non-empty runs."""
    runs = draw(st.integers(1, min(max_runs, len(order))))
    cuts = (
        sorted(draw(st.lists(st.integers(1, len(order) - 1), min_size=runs - 1, max_size=runs - 1, unique=True)))
        if runs > 1
        else []
    )
    return [list(order[a:b]) for a, b in zip([0, *cuts], [*cuts, len(order)])]


@st.composite
def split_feeds(
    draw: st.DrawFn, with_columns_to_update: bool, with_truncates: bool = True
) -> tuple[list[tuple[Any, ...]], list[list[tuple[Any, ...]]]]:
    """(all distinct events, the batches they arrive in)."""
    events: list[tuple[Any, ...]] = []
    used: set[tuple[int, int]] = set()
    for _ in range(draw(st.integers(1, 16))):
        op = draw(st.sampled_from("UUUDT" if with_truncates else "UUUD"))
        seq = draw(st.integers(1, 9))
        key = None if op == "T" else draw(st.integers(1, 3))
        if key is not None:
            if (key, seq) in used:
                continue  # one event per key and sequence: anything else is a conflict error
            used.add((key, seq))
        row: tuple[Any, ...] = (
            key,
            draw(st.sampled_from([None, None, "a", "b", "o'k", "ü"])),
            draw(st.sampled_from([None, None, "x", "y"])),
            op,
            seq,
        )
        if with_columns_to_update:
            row += (draw(st.sampled_from([None, "", "name", "city", "name,city", "CITY, name"])),)
        events.append(row)
    # Arrival order: a random permutation, or an adversarial one (newest first; deletes and
    # truncates last, after the newer upserts they must not undo).
    arrival = draw(st.sampled_from(["shuffled", "shuffled", "newest_first", "removals_last"]))
    if arrival == "shuffled":
        order = draw(st.permutations(events))
    elif arrival == "newest_first":
        order = sorted(events, key=lambda e: -e[4])
    else:
        order = sorted(events, key=lambda e: (e[3] != "U", e[4]))
    batches = _cut(draw, order, max_runs=5)
    # Redeliveries: some events arrive again in the last run (an identical duplicate if already there).
    for event in draw(st.lists(st.sampled_from(events), max_size=2)):
        batches[-1].append(event)
    return events, batches


def _events(rows: list[tuple[Any, ...]], with_columns_to_update: bool) -> list[Event]:
    def to_event(row: tuple[Any, ...]) -> Event:
        key, name, city, op, seq = row[:5]
        kind = {"U": "upsert", "D": "delete", "T": "truncate"}[op]
        listed = None
        if with_columns_to_update and row[5] is not None:
            listed = tuple(part.strip() for part in row[5].split(",") if part.strip())
        return Event(key, seq, kind, {"name": name, "city": city}, listed)

    return [to_event(row) for row in rows]


IGNORE_NULL = {"ignore_null_updates": {"name", "city"}, "ignore_null_city_only": {"city"}}


TRACKED = {"sequence_written": COLUMNS}  # SCD2 and bitemporal: the default, without `seq`


def _written(feed: list[Event], mode: str) -> tuple[list[Event], list[str]]:
    """The reference's events and columns: in mode `sequence_written`, `seq` is a column each
    event writes (the target keeps it; SCD2 and bitemporal track no `sequence_by` column by
    default, so a change of `seq` alone updates the current version: `TRACKED`)."""
    if mode != "sequence_written":
        return feed, COLUMNS
    return [replace(e, values={**e.values, "seq": e.seq}) for e in feed], [*COLUMNS, "seq"]


def _reference(events: list[tuple[Any, ...]], mode: str) -> list[tuple[Any, ...]]:
    with_ctu = mode == "columns_to_update"
    feed, columns = _written(_events(events, with_ctu), mode)
    table = scd1(feed, columns, ignore_null=IGNORE_NULL.get(mode, set()), use_columns_to_update=with_ctu)
    return as_rows(table, columns)


def _run_metrics(project: CdcProject) -> list[tuple[int | None, ...]]:
    """Each run's (num_events, num_collapsed_duplicates, num_ignored_events, num_applied_events,
    num_live_tombstones), as its run history records them."""
    runs = project.relation(derived_name("dim", "__cdc_runs"))
    counts = "num_events, num_collapsed_duplicates, num_ignored_events, num_applied_events, num_live_tombstones"
    query = f"select {counts} from {runs} order by run_id"
    return [tuple(None if value is None else int(value) for value in row) for row in project.query(query)]


def _expected_run_metrics(
    batches: list[list[tuple[Any, ...]]], mode: str, scd_type: str
) -> list[tuple[int | None, ...]]:
    """What each run reads, collapses and ignores (SPEC 6.8): ignored_events over the runs before
    it; and SCD1's live tombstones after it (SCD2 keeps deletes as history: NULL)."""
    with_ctu = mode == "columns_to_update"
    expected, earlier = [], []
    for batch in batches:
        feed, columns = _written(_events(batch, with_ctu), mode)
        events = [e for e in feed if e.op != "truncate"]
        collapsed = len(events) - len({(e.key, e.seq) for e in events})
        ignored = ignored_events(earlier, feed, columns, scd_type, IGNORE_NULL.get(mode, set()), with_ctu)
        earlier += feed
        tombstones = live_tombstones(earlier) if scd_type == "1" else None
        expected.append((len(feed), collapsed, ignored, len(feed) - collapsed - ignored, tombstones))
    return expected


def _load_and_run(
    project: CdcProject, batches: list[list[tuple[Any, ...]]], with_ctu: bool, config: dict[str, Any]
) -> None:
    project.drop_model_tables("dim")
    project.create_table("events", {**CITY_EVENTS, "cols": "varchar"} if with_ctu else CITY_EVENTS)
    project.model("dim", MODEL, **config)
    run_batches(project, *batches)


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(data=st.data())
def test_any_split_and_arrival_order_matches_the_reference(
    module_project: CdcProject, mode: str, data: st.DataObject
) -> None:
    with_ctu = mode == "columns_to_update"
    events, batches = data.draw(split_feeds(with_ctu))
    _load_and_run(module_project, batches, with_ctu, {**TRUNCATING_CONFIG, **MODES[mode]})
    assert module_project.rows("dim") == _reference(events, mode)
    assert _run_metrics(module_project) == _expected_run_metrics(batches, mode, "1")


SCD2_MODES: dict[str, dict[str, Any]] = {
    "full_rows": {},
    # The target keeps `seq` (not tracked by default: a change of it alone updates the version).
    "sequence_written": {"except_column_list": ["op"]},
    "track_name_only": {"track_history_column_list": ["name"]},
    "ignore_null_updates": {"ignore_null_updates": True},
    "columns_to_update": {"columns_to_update": "cols"},
}


@pytest.mark.parametrize("mode", SCD2_MODES)
@SETTINGS
@given(data=st.data())
def test_scd2_history_for_any_split_matches_the_reference(
    module_project: CdcProject, mode: str, data: st.DataObject
) -> None:
    with_ctu = mode == "columns_to_update"
    events, batches = data.draw(split_feeds(with_ctu, with_truncates=False))
    _load_and_run(module_project, batches, with_ctu, {**CONFIG, "stored_as_scd_type": 2, **SCD2_MODES[mode]})
    expected = scd2(
        *_written(_events(events, with_ctu), mode),
        tracked=SCD2_MODES[mode].get("track_history_column_list", TRACKED.get(mode)),
        ignore_null=IGNORE_NULL.get(mode, set()),
        use_columns_to_update=with_ctu,
    )
    assert module_project.rows("dim") == expected
    assert _run_metrics(module_project) == _expected_run_metrics(batches, mode, "2")


CHECKPOINTED_MODES: dict[str, tuple[int, str]] = {
    "scd1_full_rows": (1, "full_rows"),
    "scd1_sequence_written": (1, "sequence_written"),
    "scd1_columns_to_update": (1, "columns_to_update"),
    "scd2_ignore_null_updates": (2, "ignore_null_updates"),
}


@st.composite
def checkpointed_loads(draw: st.DrawFn, with_columns_to_update: bool, with_truncates: bool) -> tuple[Any, Any]:
    """(all distinct events, each run's new rows stamped with their load): the rows of a run share
    a stamp, and the next run's rows keep it (the rest of one load, landed after the run that read
    its first part) or take the next one."""
    events, batches = draw(split_feeds(with_columns_to_update, with_truncates))
    stamp, loads = 1, []
    for batch in batches:
        stamp += 1 if loads and draw(st.booleans()) else 0
        loads.append([(*row, stamp) for row in batch])
    return events, loads


@pytest.mark.parametrize("case", CHECKPOINTED_MODES)
@SETTINGS
@given(data=st.data())
def test_checkpointed_loads_in_any_split_match_the_reference(
    module_project: CdcProject, case: str, data: st.DataObject
) -> None:
    """With `checkpoint_column`, rows accumulate in the source and each run reads from the last
    checkpoint value on: rows landing at that value after a run are applied, and the rows read
    again change nothing."""
    scd_type, mode = CHECKPOINTED_MODES[case]
    with_ctu = mode == "columns_to_update"
    events, loads = data.draw(checkpointed_loads(with_ctu, with_truncates=scd_type == 1))
    module_project.drop_model_tables("dim")
    columns = {**CITY_EVENTS, **({"cols": "varchar"} if with_ctu else {}), "loaded": "integer"}
    module_project.create_table("events", columns)
    config = TRUNCATING_CONFIG if scd_type == 1 else {**CONFIG, "stored_as_scd_type": 2}
    excluded = ["op", "loaded"] if mode == "sequence_written" else ["op", "seq", "loaded"]
    config = {**config, **(MODES if scd_type == 1 else SCD2_MODES)[mode], "except_column_list": excluded}
    module_project.model("dim", MODEL, **config, checkpoint_column="loaded")
    for load in loads:
        module_project.insert("events", load)
        module_project.run("dim")
    if scd_type == 1:
        expected = _reference(events, mode)
    else:
        expected = scd2(_events(events, with_ctu), COLUMNS, ignore_null=IGNORE_NULL[mode])
    assert module_project.rows("dim") == expected


BITEMPORAL_CONFIG = {
    **CONFIG,
    "system_sequence_by": "sys",
    "stored_as_scd_type": "bitemporal",
    "except_column_list": ["op", "seq", "sys"],
}
BITEMPORAL_MODES: dict[str, dict[str, Any]] = {
    "full_rows": {},
    # The target keeps `seq` (business time).
    "sequence_written": {"except_column_list": ["op", "sys"]},
    "track_name_only": {"track_history_column_list": ["name"]},
    "ignore_null_updates": {"ignore_null_updates": True},
}


@st.composite
def bitemporal_feeds(draw: st.DrawFn) -> tuple[list[tuple[Any, ...]], list[list[tuple[Any, ...]]]]:
    """(all distinct events, the batches they arrive in): business and system times drawn
    independently, so events are out of order on both axes, with corrections (one key and
    business time at several system times) and redeliveries."""
    events: list[tuple[Any, ...]] = []
    used: set[tuple[int, int, int]] = set()
    for _ in range(draw(st.integers(1, 10))):
        key, seq, system = draw(st.integers(1, 2)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
        if (key, seq, system) in used:
            continue
        used.add((key, seq, system))
        op = draw(st.sampled_from("UUUD"))
        name = draw(st.sampled_from([None, "a", "b"]))
        city = draw(st.sampled_from([None, "x", "y"]))
        events.append((key, name, city, op, seq, system))
    order = draw(st.permutations(events))
    batches = _cut(draw, order, max_runs=4)
    for event in draw(st.lists(st.sampled_from(events), max_size=1)):
        batches[-1].append(event)
    return events, batches


@pytest.mark.parametrize("mode", BITEMPORAL_MODES)
@SETTINGS
@given(data=st.data())
def test_bitemporal_history_for_any_split_matches_the_reference(
    module_project: CdcProject, mode: str, data: st.DataObject
) -> None:
    events, batches = data.draw(bitemporal_feeds())
    module_project.drop_model_tables("dim")
    module_project.create_table("events", {**CITY_EVENTS, "sys": "integer"})
    module_project.model("dim", MODEL, **{**BITEMPORAL_CONFIG, **BITEMPORAL_MODES[mode]})
    run_batches(module_project, *batches)
    expected = bitemporal(
        *_written(
            [
                Event(key, seq, "delete" if op == "D" else "upsert", {"name": name, "city": city}, system=system)
                for key, name, city, op, seq, system in events
            ],
            mode,
        ),
        tracked=BITEMPORAL_MODES[mode].get("track_history_column_list", TRACKED.get(mode)),
        ignore_null={"name", "city"} if mode == "ignore_null_updates" else set(),
    )
    assert module_project.rows("dim") == expected


@st.composite
def feeds_with_bad_rows(draw: st.DrawFn, with_truncates: bool) -> list[list[tuple[Any, ...]]]:
    """split_feeds' runs, each with bad rows mixed in at random places: NULL keys, NULL
    sequences, and a different event at the key and sequence of one of the run's own."""
    _, batches = draw(split_feeds(False, with_truncates))
    mixed = []
    for batch in batches:
        rows = list(batch)
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["null_key", "null_sequence", "conflict"]))
            name = draw(st.sampled_from(["a", "bad", None]))
            if kind == "null_key":
                bad: tuple[Any, ...] = (None, name, "x", draw(st.sampled_from("UD")), draw(st.integers(1, 9)))
            elif kind == "null_sequence":
                bad = (draw(st.integers(1, 3)), name, "x", "U", None)
            else:
                upserts = [row for row in rows if row[3] == "U" and row[0] is not None]
                if not upserts:
                    continue
                key, old_name, city, _, seq = draw(st.sampled_from(upserts))
                bad = (key, f"{old_name}!", city, "U", seq)
            rows.insert(draw(st.integers(0, len(rows))), bad)
        mixed.append(rows)
    return mixed


QUARANTINED_MODES: dict[str, dict[str, Any]] = {
    "scd1": TRUNCATING_CONFIG,
    "scd2": {**CONFIG, "stored_as_scd_type": 2},
}


@pytest.mark.parametrize("mode", QUARANTINED_MODES)
@SETTINGS
@given(data=st.data())
def test_quarantined_runs_apply_the_good_rows_and_keep_the_bad(
    module_project: CdcProject, mode: str, data: st.DataObject
) -> None:
    """SPEC 6.7: each run applies its good rows as if the bad ones had never arrived
    (reference.set_aside, per run: a conflict is between the events of one run) and keeps the
    bad ones in the quarantine table, a row once however often it is read."""
    batches = data.draw(feeds_with_bad_rows(with_truncates=mode == "scd1"))
    _load_and_run(module_project, batches, False, {**QUARANTINED_MODES[mode], "on_bad_rows": "quarantine"})
    good: dict[tuple[Any, ...], Event] = {}
    quarantined: list[tuple[Any, ...]] = []
    per_run = []
    for batch in batches:
        kept, bad = set_aside(_events(batch, False), COLUMNS)
        good.update({(e.key, e.seq, e.op, *e.values.values()): e for e in kept})
        rows = [(e.key, e.values["name"], e.values["city"], e.op, e.seq, reason) for e, reason in bad]
        quarantined += [row for row in rows if row[:5] not in {q[:5] for q in quarantined}]
        per_run.append((len(batch), len(bad)))
    if mode == "scd1":
        expected = as_rows(scd1(list(good.values()), COLUMNS), COLUMNS)
    else:
        expected = scd2(list(good.values()), COLUMNS)
    assert module_project.rows("dim") == expected
    table = module_project.relation(derived_name("dim", "__cdc_quarantine"))
    op = {"U": "upsert", "D": "delete", "T": "truncate"}
    stored = module_project.query(f"select id, name, city, op, seq, _cdc_reason from {table}") if quarantined else []
    assert sort_rows((r[0], r[1], r[2], op[r[3]], r[4], r[5]) for r in stored) == sort_rows(quarantined)
    runs = module_project.relation(derived_name("dim", "__cdc_runs"))
    recorded = module_project.query(f"select num_events, num_quarantined_rows from {runs} order by run_id")
    assert [tuple(int(v) for v in row) for row in recorded] == per_run
