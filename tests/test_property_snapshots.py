"""The fundamental rule for auto_cdc_from_snapshot, checked by hypothesis on both adapters:
random series of snapshots (keys appearing, changing, vanishing and coming back, NULL values,
empty snapshots), delivered in random groups of runs and in random order, give the SCD1 table
and the SCD2 history that the reference model gives for the snapshots that were applied.
A snapshot that arrives after a later version was applied is skipped (SPEC 5.2)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import HYPOTHESIS_EXAMPLES as EXAMPLES
from harness import CdcProject, derived_name
from reference import as_rows, scd1, scd2, scoped_snapshot_events, set_aside_snapshots, snapshot_events, sort_rows

COLUMNS = ["name", "city"]
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
Row = tuple[int, Any, Any]  # (id, name, city)

snapshots = st.lists(
    st.tuples(st.integers(1, 4), st.sampled_from([None, "a", "b"]), st.sampled_from([None, "x", "o'k"])),
    max_size=4,
    unique_by=lambda row: row[0],
)


def _reference(applied: list[tuple[int, list[Row]]], scd_type: int, tracked: list[str] | None) -> list[tuple]:
    series = [(version, {k: {"name": n, "city": c} for k, n, c in rows}) for version, rows in applied]
    events = snapshot_events(series, COLUMNS)
    return as_rows(scd1(events, COLUMNS), COLUMNS) if scd_type == 1 else scd2(events, COLUMNS, tracked=tracked)


def _model(project: CdcProject, scd_type: int, tracked: list[str] | None, **config: Any) -> None:
    project.drop_model_tables("dim")
    if tracked is not None:
        config["track_history_column_list"] = tracked
    project.model(
        "dim",
        "select * from {{ target.schema }}.source",
        materialized="auto_cdc_from_snapshot",
        stored_as_scd_type=scd_type,
        **{"keys": ["id"], **config},
    )


TYPES = {"scd1": (1, None), "scd2": (2, None), "scd2_track_name": (2, ["name"])}


def _deliveries(data: st.DataObject, series: list[Any]) -> list[list[Any]]:
    """`series` (in arrival order) cut into a random number of runs' deliveries."""
    runs = data.draw(st.integers(1, max(1, len(series))))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(series)), min_size=runs - 1, max_size=runs - 1)))
    return [series[a:b] for a, b in zip([0, *cuts], [*cuts, len(series)])]


@pytest.mark.parametrize("kind", TYPES)
@SETTINGS
@given(data=st.data())
def test_versioned_snapshots_in_any_runs_match_the_reference(
    module_project: CdcProject, kind: str, data: st.DataObject
) -> None:
    """snapshot_version_column: each run sees every snapshot delivered so far (the source keeps
    them), some arriving after later ones."""
    scd_type, tracked = TYPES[kind]
    versions = data.draw(st.lists(st.integers(1, 30), min_size=1, max_size=5, unique=True))
    series = [(version, data.draw(snapshots)) for version in versions]  # in arrival order
    series = [(version, rows) for version, rows in series if rows]  # a version is known by its rows only
    groups = _deliveries(data, series)

    module_project.create_table("source", {"version": "integer", "id": "integer", "name": "varchar", "city": "varchar"})
    _model(module_project, scd_type, tracked, snapshot_version_column="version")
    applied: list[tuple[int, list[Row]]] = []
    for group in groups:
        last = max((v for v, _ in applied), default=None)
        applied += [(v, rows) for v, rows in group if last is None or v > last]
        module_project.insert("source", [(v, *row) for v, rows in group for row in rows])
        module_project.run("dim")
    assert module_project.rows("dim") == _reference(applied, scd_type, tracked)


@pytest.mark.parametrize("kind", TYPES)
@SETTINGS
@given(series=st.lists(snapshots, min_size=1, max_size=4))
def test_one_snapshot_per_run_matches_the_reference(
    module_project: CdcProject, kind: str, series: list[list[Row]]
) -> None:
    """Per-run versions: the model query is the next snapshot; versions are 0, 1, 2, ...
    (an empty one deletes every key: allowed explicitly, as it fails by default)."""
    scd_type, tracked = TYPES[kind]
    module_project.create_table("source", {"id": "integer", "name": "varchar", "city": "varchar"})
    _model(module_project, scd_type, tracked, allow_empty_snapshots=True)
    for rows in series:
        module_project.replace_rows("source", rows)
        module_project.run("dim")
    assert module_project.rows("dim") == _reference(list(enumerate(series)), scd_type, tracked)


# Scoped snapshots (replace_using, SPEC 6.6): key (store, id); a snapshot is complete only for
# the stores it holds, and each store's versions are a series of their own.
ScopedRow = tuple[int, int, Any, Any]  # (store, id, name, city)
SCOPED_TYPES = {"scd1": (1, None), "scd2": (2, None)}

scoped_snapshots = st.lists(
    st.tuples(st.integers(1, 2), st.integers(1, 3), st.sampled_from([None, "a", "b"]), st.sampled_from([None, "x"])),
    max_size=5,
    unique_by=lambda row: row[:2],
)


def _scoped_reference(applied: list[tuple[int, list[ScopedRow]]], scd_type: int) -> list[tuple]:
    series = [(version, {(s, i): {"name": n, "city": c} for s, i, n, c in rows}) for version, rows in applied]
    events = scoped_snapshot_events(series, COLUMNS, lambda key: key[0])
    rows = as_rows(scd1(events, COLUMNS), COLUMNS) if scd_type == 1 else scd2(events, COLUMNS)
    return sort_rows((*row[0], *row[1:]) for row in rows)


SCOPED = {"keys": ["store", "id"], "replace_using": ["store"], "max_delete_fraction": 1}


@pytest.mark.parametrize("kind", SCOPED_TYPES)
@SETTINGS
@given(data=st.data())
def test_scoped_versioned_snapshots_in_any_runs_match_the_reference(
    module_project: CdcProject, kind: str, data: st.DataObject
) -> None:
    """snapshot_version_column with replace_using: each run sees every extract delivered so far.
    A store's extract applies when its version is above that store's last applied version,
    whatever other stores did; an older one is skipped for that store alone."""
    scd_type, _ = SCOPED_TYPES[kind]
    versions = data.draw(st.lists(st.integers(1, 30), min_size=1, max_size=5, unique=True))
    # Mostly one store's extract per version, as per-store files are: their versions interleave.
    one_store = st.tuples(st.integers(1, 2), scoped_snapshots).map(lambda p: [(p[0], *row[1:]) for row in p[1]])
    series = [(version, data.draw(one_store | scoped_snapshots)) for version in versions]  # in arrival order
    series = [(version, list({row[:2]: row for row in rows}.values())) for version, rows in series if rows]
    deliveries = _deliveries(data, series)

    module_project.create_table(
        "source", {"version": "integer", "store": "integer", "id": "integer", "name": "varchar", "city": "varchar"}
    )
    _model(module_project, scd_type, None, **SCOPED, snapshot_version_column="version")
    applied: list[tuple[int, list[ScopedRow]]] = []
    for delivery in deliveries:
        last: dict[int, int] = {}
        for v, rows in applied:
            for store in {row[0] for row in rows}:
                last[store] = max(v, last.get(store, v))
        for v, rows in delivery:
            kept = [row for row in rows if row[0] not in last or v > last[row[0]]]
            if kept:
                applied.append((v, kept))
        module_project.insert("source", [(v, *row) for v, rows in delivery for row in rows])
        module_project.run("dim")
    assert module_project.rows("dim") == _scoped_reference(sorted(applied), scd_type)


@pytest.mark.parametrize("kind", SCOPED_TYPES)
@SETTINGS
@given(series=st.lists(scoped_snapshots, min_size=1, max_size=4))
def test_scoped_snapshot_per_run_matches_the_reference(
    module_project: CdcProject, kind: str, series: list[list[ScopedRow]]
) -> None:
    """Per-run versions with replace_using: each run's query is the extract of the stores it
    holds (none: nothing changes)."""
    scd_type, _ = SCOPED_TYPES[kind]
    module_project.create_table("source", {"store": "integer", "id": "integer", "name": "varchar", "city": "varchar"})
    _model(module_project, scd_type, None, **SCOPED)
    for rows in series:
        module_project.replace_rows("source", rows)
        module_project.run("dim")
    assert module_project.rows("dim") == _scoped_reference(list(enumerate(series)), scd_type)


@pytest.mark.parametrize("kind", ["scd1", "scd2"])
@SETTINGS
@given(data=st.data())
def test_quarantined_snapshots_match_the_reference_over_their_good_rows(
    module_project: CdcProject, kind: str, data: st.DataObject
) -> None:
    scd_type, tracked = TYPES[kind]
    series = []
    for version in range(1, data.draw(st.integers(1, 5)) + 1):
        rows = list(data.draw(snapshots))
        for row in data.draw(st.lists(st.sampled_from(rows), max_size=2)) if rows else []:
            rows.append((row[0], "dup", row[2]))  # the key again, in the same snapshot
        rows += [(None, "no key", "x")] * data.draw(st.integers(0, 1))
        series.append((version, data.draw(st.permutations(rows))))
    groups = _deliveries(data, series)

    module_project.create_table("source", {"version": "integer", "id": "integer", "name": "varchar", "city": "varchar"})
    _model(module_project, scd_type, tracked, snapshot_version_column="version", on_bad_rows="quarantine")
    for group in groups:
        module_project.insert("source", [(v, *row) for v, rows in group for row in rows])
        module_project.run("dim")
    applied, bad = set_aside_snapshots(series)
    assert module_project.rows("dim") == _reference(applied, scd_type, tracked)
    table = derived_name("dim", "__cdc_quarantine")
    stored = module_project.query(f"select * from {module_project.relation(table)}") if bad else []
    # (version, id, name, city, _cdc_version, _cdc_reason): the version is a column of the source here.
    assert sort_rows((*row[:4], row[5]) for row in stored) == sort_rows(bad)
