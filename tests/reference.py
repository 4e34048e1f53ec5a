"""A pure-Python reference model of auto_cdc's semantics (SPEC 3.1-3.4: SCD types 1 and 2,
bitemporal; SPEC 5.2: the events a series of snapshots stands for; SPEC 6.6: the same for
snapshots scoped to groups; SPEC 6.7: the events a quarantining run sets aside; SPEC 6.8: the
events a run ignores).

It is written from the SPEC as a function of the set of events, with no notion of runs or
state: that the materialization, run in any split and arrival order, matches it is the
fundamental rule. Keep it obviously correct rather than fast.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Op = Literal["upsert", "delete", "truncate"]


@dataclass(frozen=True)
class Event:
    key: Any
    seq: Any  # an int, or a tuple for a multi-part sequence (compared lexicographically)
    op: Op
    values: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    columns_to_update: tuple[str, ...] | None = None  # None: the event writes every column
    system: Any = None  # bitemporal: when the system learned of the event


def scd1(
    events: Iterable[Event],
    columns: Sequence[str],
    ignore_null: Collection[str] = (),
    use_columns_to_update: bool = False,
) -> dict[Any, dict[str, Any]]:
    """The SCD1 target for `events`: key -> {column: value} for every visible row.

    * Per key the newest upsert wins; a delete removes the row when it is newer than the
      newest upsert; a truncate at S removes every row whose newest upsert is older than S.
    * With partial updates each column takes the newest value written to it, and nothing
      written before the newest delete or truncate (the barrier) counts.
    """
    events = list(events)
    truncates = [e.seq for e in events if e.op == "truncate"]
    by_key: dict[Any, list[Event]] = defaultdict(list)
    for event in events:
        if event.op != "truncate":
            by_key[event.key].append(event)

    def writes(event: Event, column: str) -> bool:
        return _writes(event, column, ignore_null, use_columns_to_update)

    table: dict[Any, dict[str, Any]] = {}
    for key, key_events in by_key.items():
        barriers = truncates + [e.seq for e in key_events if e.op == "delete"]
        barrier = max(barriers) if barriers else None
        alive = sorted(
            (e for e in key_events if e.op == "upsert" and (barrier is None or e.seq >= barrier)),
            key=lambda e: e.seq,
        )
        if not alive:
            continue
        row = {}
        for column in columns:
            writers = [e for e in alive if writes(e, column)]
            row[column] = writers[-1].values.get(column) if writers else None
        table[key] = row
    return table


Reason = Literal["null_key", "null_sequence", "null_system_sequence", "conflicting_duplicate"]


def _has_null(value: Any) -> bool:
    return value is None or (isinstance(value, tuple) and any(part is None for part in value))


def set_aside(
    events: Iterable[Event], columns: Sequence[str], bitemporal: bool = False
) -> tuple[list[Event], list[tuple[Event, Reason]]]:
    """SPEC 6.7: (the events a run with on_bad_rows='quarantine' applies, the ones it sets aside
    with their reason), for the events of one run.

    An event is bad for the first rule it breaks: a NULL key (upserts and deletes; a truncate
    has none), a NULL sequence or part of one, a NULL system sequence (bitemporal). Of the rest,
    events that share a key and sequence (and system sequence) but differ in their kind or in a
    value the target keeps are a conflicting duplicate group: every event of it is set aside,
    since no order between them exists. Events that agree are one event, kept. The good events
    apply as if the bad ones had never arrived: scd1/scd2/bitemporal of the first list.
    """
    good: list[Event] = []
    bad: list[tuple[Event, Reason]] = []
    for event in events:
        if event.op != "truncate" and _has_null(event.key):
            bad.append((event, "null_key"))
        elif _has_null(event.seq):
            bad.append((event, "null_sequence"))
        elif bitemporal and event.system is None:
            bad.append((event, "null_system_sequence"))
        else:
            good.append(event)

    def identity(event: Event) -> tuple[Any, ...]:
        return (event.key, event.seq, event.system)

    def kept(event: Event) -> tuple[Any, ...]:  # what the target keeps of it
        return (event.op, *(event.values.get(c) for c in columns)) if event.op == "upsert" else (event.op,)

    contents: dict[Any, set[Any]] = defaultdict(set)
    for event in good:
        if event.op != "truncate":
            contents[identity(event)].add(kept(event))

    def conflicts(event: Event) -> bool:
        return event.op != "truncate" and len(contents[identity(event)]) > 1

    bad += [(e, "conflicting_duplicate") for e in good if conflicts(e)]
    return [e for e in good if not conflicts(e)], bad


def set_aside_snapshots(
    series: Sequence[tuple[Any, Sequence[tuple[Any, ...]]]],
) -> tuple[list[tuple[Any, list[tuple[Any, ...]]]], list[tuple[Any, ...]]]:
    """SPEC 6.7 for snapshots (rows with the key first), in version order: (the snapshots
    applied, the rows set aside with their version and reason). A NULL key is set aside; so is
    every row of a key a snapshot holds twice, and that key keeps what the snapshot before held
    of it (its row, or nothing), since the snapshot says nothing certain about it. A version left
    with no row is not applied (a version is known by its rows)."""
    applied: list[tuple[Any, list[tuple[Any, ...]]]] = []
    bad: list[tuple[Any, ...]] = []
    before: dict[Any, tuple[Any, ...]] = {}
    for version, rows in series:
        counts = Counter(row[0] for row in rows if row[0] is not None)
        bad += [(version, *row, "null_key") for row in rows if row[0] is None]
        bad += [(version, *row, "duplicate_key") for row in rows if row[0] is not None and counts[row[0]] > 1]
        good = {row[0]: row for row in rows if row[0] is not None and counts[row[0]] == 1}
        if not good:
            continue
        good.update({key: before[key] for key in counts if counts[key] > 1 and key in before})
        applied.append((version, sorted(good.values())))
        before = good
    return applied, bad


def ignored_events(
    earlier: Iterable[Event],
    batch: Iterable[Event],
    columns: Sequence[str],
    scd_type: str = "1",
    ignore_null: Collection[str] = (),
    use_columns_to_update: bool = False,
) -> int:
    """SPEC 6.8, a run's `num_ignored_events`: how many events of its `batch` (copies of one
    event counted once; truncates are never ignored) change nothing because what the `earlier`
    runs applied is as new or newer. The one rule here that knows of runs: a metric of each.

    * SCD1: the event is at or below the key's barrier (its newest delete, or the newest
      truncate), or the key has a row whose newest upsert is at or above it and so is every
      column it writes (a delete: every column it would clear); a column's newest write counts
      from the barrier on.
    * SCD2 and bitemporal keep every event: only a replay of an earlier run's event is ignored.
    """
    earlier = list(earlier)
    distinct = {(e.key, e.seq, e.system): e for e in batch if e.op != "truncate"}
    if scd_type != "1":
        seen = {(e.key, e.seq, e.system) for e in earlier}
        return sum(identity in seen for identity in distinct)
    truncates = [e.seq for e in earlier if e.op == "truncate"]

    def writes(event: Event, column: str) -> bool:
        return _writes(event, column, ignore_null, use_columns_to_update)

    def ignored(event: Event) -> bool:
        before = [e for e in earlier if e.op != "truncate" and e.key == event.key]
        barriers = truncates + [e.seq for e in before if e.op == "delete"]
        barrier = max(barriers) if barriers else None
        if barrier is not None and event.seq <= barrier:
            return True
        alive = [e for e in before if e.op == "upsert" and (barrier is None or e.seq >= barrier)]
        if not alive or max(e.seq for e in alive) < event.seq:
            return False
        for column in columns:
            newest = max((e.seq for e in alive if writes(e, column)), default=None)
            if event.op == "upsert" and writes(event, column) and (newest is None or newest < event.seq):
                return False
            if event.op == "delete" and newest is not None and newest < event.seq:
                return False
        return True

    return sum(ignored(event) for event in distinct.values())


def live_tombstones(events: Iterable[Event]) -> int:
    """SPEC 6.8, an SCD1 run's `num_live_tombstones`: after the runs that read `events`, the keys
    whose newest delete is not older than the newest truncate (an older one is forgotten: the
    truncate blocks what it blocked). A key with a row again keeps its delete's tombstone. No
    tombstone expires here: the tests run well within `tombstone_retention`."""
    events = list(events)
    watermark = max((e.seq for e in events if e.op == "truncate"), default=None)
    newest: dict[Any, Any] = {}
    for e in events:
        if e.op == "delete":
            newest[e.key] = max(newest.get(e.key, e.seq), e.seq)
    return sum(watermark is None or seq >= watermark for seq in newest.values())


def _writes(event: Event, column: str, ignore_null: Collection[str], use_columns_to_update: bool) -> bool:
    if use_columns_to_update:
        listed = event.columns_to_update
        return listed is None or column.lower() in {name.lower() for name in listed}
    return column not in ignore_null or event.values.get(column) is not None


def scd2(
    events: Iterable[Event],
    columns: Sequence[str],
    tracked: Collection[str] | None = None,
    ignore_null: Collection[str] = (),
    use_columns_to_update: bool = False,
) -> list[tuple[Any, ...]]:
    """The SCD2 target for `events`: sorted (key, *columns, start, end) rows.

    Per key, events sorted by sequence: a run is a maximal stretch of consecutive upserts whose
    tracked columns are equal (NULL equals NULL); each run is one row starting at its first
    sequence, holding its last event's values, ending at the next event's sequence (or None).
    Deletes give no row. With partial updates a value an event does not write comes from the
    chronologically preceding event of the key (NULL after a delete).
    """
    tracked = list(columns) if tracked is None else [c for c in columns if c in tracked]
    by_key: dict[Any, list[Event]] = defaultdict(list)
    for event in events:
        by_key[event.key].append(event)
    rows: list[tuple[Any, ...]] = []
    for key, key_events in by_key.items():
        key_events = sorted(key_events, key=lambda e: e.seq)
        previous: dict[str, Any] = dict.fromkeys(columns)
        run: dict[str, Any] | None = None  # {"start", "values"}
        for event in key_events:
            if event.op == "delete":
                if run is not None:
                    rows.append((key, *(run["values"][c] for c in columns), run["start"], event.seq))
                    run = None
                previous = dict.fromkeys(columns)
                continue
            values = {
                c: event.values.get(c) if _writes(event, c, ignore_null, use_columns_to_update) else previous[c]
                for c in columns
            }
            previous = values
            if run is not None and all(values[c] == run["values"][c] for c in tracked):
                run["values"] = values
                continue
            if run is not None:
                rows.append((key, *(run["values"][c] for c in columns), run["start"], event.seq))
            run = {"start": event.seq, "values": values}
        if run is not None:
            rows.append((key, *(run["values"][c] for c in columns), run["start"], None))
    return sorted(rows, key=_row_sort_key)


def _row_sort_key(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple((v is not None, str(type(v)), v if v is not None else 0) for v in row)


def sort_rows(rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Rows in the order CdcProject.rows() returns them (NULLs first)."""
    return sorted((tuple(row) for row in rows), key=_row_sort_key)


def as_rows(table: dict[Any, dict[str, Any]], columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """The table as sorted (key, *columns) tuples, NULLs first, like CdcProject.rows()."""
    return sorted(((key, *(row[c] for c in columns)) for key, row in table.items()), key=_row_sort_key)


Snapshot = dict[Any, dict[str, Any]]  # key -> {column: value}: the complete source at one version


def snapshot_events(snapshots: Iterable[tuple[Any, Snapshot]], columns: Sequence[str]) -> list[Event]:
    """SPEC 5.2: the change events a series of (version, snapshot) pairs stands for.

    In ascending version order each snapshot is compared with the one before it (nothing before
    the first): a new key is an upsert, a key with some changed value is an upsert, a missing
    key is a delete, all at sequence = the snapshot's version. SCD1/SCD2 of these events is the
    table auto_cdc_from_snapshot must build.
    """
    events: list[Event] = []
    previous: Snapshot = {}
    for version, snapshot in sorted(snapshots, key=lambda pair: pair[0]):
        for key, values in snapshot.items():
            if key not in previous or any(previous[key].get(c) != values.get(c) for c in columns):
                events.append(Event(key, version, "upsert", dict(values)))
        events.extend(Event(key, version, "delete") for key in previous if key not in snapshot)
        previous = snapshot
    return events


def scoped_snapshot_events(
    snapshots: Iterable[tuple[Any, Snapshot]], columns: Sequence[str], group_of: Callable[[Any], Any]
) -> list[Event]:
    """SPEC 6.6: the change events a series of (version, snapshot) pairs stands for when each
    snapshot is complete only for the groups it contains (`group_of(key)`, the `replace_using`
    columns of a key). Each group is a series of its own: the versions whose snapshot has rows
    of it, compared as SPEC 5.2 compares whole snapshots; a version without the group leaves it
    alone. Keys are never shared between groups (the group columns are part of the key).
    """
    per_group: dict[Any, list[tuple[Any, Snapshot]]] = defaultdict(list)
    for version, snapshot in snapshots:
        parts: dict[Any, Snapshot] = defaultdict(dict)
        for key, values in snapshot.items():
            parts[group_of(key)][key] = values
        for group, part in parts.items():
            per_group[group].append((version, part))
    return [event for series in per_group.values() for event in snapshot_events(series, columns)]


def bitemporal(
    events: Iterable[Event],
    columns: Sequence[str],
    tracked: Collection[str] | None = None,
    ignore_null: Collection[str] = (),
) -> list[tuple[Any, ...]]:
    """SPEC 3.4: sorted (key, *columns, start, end, system_start, system_end) rows.

    H(t) is the SCD2 history (scd2 above) of the events whose system time is <= t, where of the
    events of one key and sequence only the one with the latest such system time counts (a
    correction). Each row of H gets one output row per unbroken stretch of system times at
    which it is in H(t): from the first such time to the first later one at which it is not.
    """
    events = list(events)
    times = sorted({e.system for e in events})
    histories: list[set[tuple[Any, ...]]] = []
    for t in times:
        latest: dict[tuple[Any, Any], Event] = {}
        for event in events:
            if event.system <= t:
                known = latest.get((event.key, event.seq))
                if known is None or event.system > known.system:
                    latest[(event.key, event.seq)] = event
        histories.append(set(scd2(latest.values(), columns, tracked=tracked, ignore_null=ignore_null)))
    rows: list[tuple[Any, ...]] = []
    for row in set().union(*histories):
        start = None
        for t, history in zip(times, histories):
            if row in history and start is None:
                start = t
            elif row not in history and start is not None:
                rows.append((*row, start, t))
                start = None
        if start is not None:
            rows.append((*row, start, None))
    return sorted(rows, key=_row_sort_key)
