"""A pure-Python reference model of auto_cdc's SCD type 1 semantics (SPEC sections 3.1-3.2).

It is written from the SPEC as a function of the set of events, with no notion of runs or
state: that the materialization, run in any split and arrival order, matches it is the
fundamental rule. Keep it obviously correct rather than fast.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
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
        if use_columns_to_update:
            listed = event.columns_to_update
            return listed is None or column.lower() in {name.lower() for name in listed}
        return column not in ignore_null or event.values.get(column) is not None

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


def as_rows(table: dict[Any, dict[str, Any]], columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """The table as sorted (key, *columns) tuples, NULLs first, like CdcProject.rows()."""
    rows = [(key, *(row[c] for c in columns)) for key, row in table.items()]
    return sorted(rows, key=lambda r: tuple((v is not None, str(type(v)), v if v is not None else 0) for v in r))
