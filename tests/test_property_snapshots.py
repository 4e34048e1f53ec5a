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
from harness import CdcProject
from reference import as_rows, scd1, scd2, snapshot_events

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
        keys=["id"],
        stored_as_scd_type=scd_type,
        **config,
    )


TYPES = {"scd1": (1, None), "scd2": (2, None), "scd2_track_name": (2, ["name"])}


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
    runs = data.draw(st.integers(1, max(1, len(series))))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(series)), min_size=runs - 1, max_size=runs - 1)))
    groups = [series[a:b] for a, b in zip([0, *cuts], [*cuts, len(series)])]

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
