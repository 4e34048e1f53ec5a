"""Scoped snapshots (`replace_using`, SPEC 6.6): per-store inventory extracts, each complete for
the stores it holds. The worked example of docs/snapshots.md, every way of naming versions, the
mass-delete guard per group, the change feed, --full-refresh and --empty; the reference model
(tests/reference.py, scoped_snapshot_events) says what every table must be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness import CdcProject, derived_name
from reference import as_rows, scd1, scd2, scoped_snapshot_events, sort_rows
from scenarios import fails

pytestmark = pytest.mark.dbt_v2  # on DuckDB under dbt v2 too

SOURCE = "select * from {{ target.schema }}.extracts"
SCOPED = {"materialized": "auto_cdc_from_snapshot", "keys": ["store_id", "item"], "replace_using": ["store_id"]}
BY_DAY = {**SCOPED, "snapshot_version_column": "day"}
Extract = list[tuple[int, str, int]]  # (store_id, item, quantity)

DAY_1 = [(1, "nail", 10), (1, "bolt", 5), (2, "nail", 7), (2, "saw", 1), (3, "glue", 4)]
STORE_1_DAY_2 = [(1, "nail", 9), (1, "tape", 2)]  # bolt sold out; tape new; stores 2 and 3 not re-sent
STORE_2_DAY_2 = [(2, "nail", 7), (2, "saw", 3)]  # arrives after store 1's day 3
STORE_1_DAY_3 = [(1, "nail", 8), (1, "tape", 2)]


def _tagged(day: int, extract: Extract) -> list[tuple[Any, ...]]:
    return [(day, *row) for row in extract]


def _reference(series: list[tuple[int, Extract]], scd_type: int) -> list[tuple[Any, ...]]:
    """The target for these (version, extract) pairs: each store a series of its own."""
    snapshots = [(day, {(s, i): {"quantity": q} for s, i, q in extract}) for day, extract in series]
    events = scoped_snapshot_events(snapshots, ["quantity"], lambda key: key[0])
    rows = as_rows(scd1(events, ["quantity"]), ["quantity"]) if scd_type == 1 else scd2(events, ["quantity"])
    return sort_rows((*row[0], *row[1:]) for row in rows)


def _extracts(project: CdcProject, rows: list[tuple[Any, ...]], versioned: bool = True) -> None:
    columns = {"day": "bigint"} if versioned else {}
    project.create_table("extracts", {**columns, "store_id": "integer", "item": "varchar", "quantity": "integer"})
    project.insert("extracts", rows)


@pytest.mark.spark
@pytest.mark.parametrize("scd_type", [1, 2])
def test_extracts_per_store_arriving_at_different_times(project: CdcProject, scd_type: int) -> None:
    """docs/snapshots.md's worked example: day 1 has every store; store 1 is re-sent on days 2 and
    3, store 3 is missing from both (untouched); store 2's day-2 extract arrives after store 1's
    day 3 and still applies, as it is newer than store 2's last; a copy of store 1's day 1 sent
    again is skipped with a warning that names the store."""
    _extracts(project, _tagged(10, DAY_1))
    project.model("stock", SOURCE, **BY_DAY, stored_as_scd_type=scd_type)
    assert project.run().metrics("stock") == (5, 0)

    project.insert("extracts", _tagged(20, STORE_1_DAY_2) + _tagged(30, STORE_1_DAY_3))
    outcome = project.run()
    # SCD2 counts a closed row as changed: nail's two rows, bolt's and the new tape and nail rows.
    assert outcome.metrics("stock") == ((5, 0) if scd_type == 2 else (2, 1)), outcome.metrics("stock")
    assert not outcome.warnings

    project.insert("extracts", _tagged(20, STORE_2_DAY_2) + _tagged(15, [(1, "bolt", 99)]))
    outcome = project.run()
    assert any("version 15 of store_id=1" in w and "skipped" in w for w in outcome.warnings), outcome.warnings
    series = [(10, DAY_1), (20, STORE_1_DAY_2), (30, STORE_1_DAY_3), (20, STORE_2_DAY_2)]
    assert project.rows("stock") == _reference(series, scd_type)
    # The processed versions are kept per store; store 1's late 15 is recorded as not applied.
    versions = project.relation(derived_name("stock", "__cdc_versions"))
    applied = project.query(f"select store_id, version, applied from {versions} order by store_id, version")
    store_1 = [(1, 10, True), (1, 15, False), (1, 20, True), (1, 30, True)]
    assert applied == [*store_1, (2, 10, True), (2, 20, True), (3, 10, True)]
    assert not project.run().warnings  # nothing new: nothing said


@pytest.mark.spark
def test_one_extract_per_run_leaves_the_other_stores_alone(project: CdcProject) -> None:
    """Per-run versions: each run's query is the extract of the stores it holds. A run whose
    extract holds no store changes nothing (a group with no rows is absent)."""
    _extracts(project, DAY_1, versioned=False)
    project.model("stock", SOURCE, **SCOPED, stored_as_scd_type=2)
    project.run()
    project.replace_rows("extracts", STORE_1_DAY_2)
    assert project.run().metrics("stock") == (4, 0)  # nail closed and new, bolt closed, tape new
    project.replace_rows("extracts", [])
    assert project.run().metrics("stock") == (0, 0)
    project.replace_rows("extracts", STORE_2_DAY_2)
    project.run()
    assert project.rows("stock") == _reference([(0, DAY_1), (1, STORE_1_DAY_2), (3, STORE_2_DAY_2)], 2)


@pytest.mark.spark
def test_version_query_catches_up_over_extracts_of_different_stores(project: CdcProject) -> None:
    """snapshot_version_query: one run reads each new version in turn, each store compared with
    its own last extract."""
    _extracts(project, _tagged(1, DAY_1) + _tagged(2, STORE_1_DAY_2) + _tagged(3, STORE_2_DAY_2 + STORE_1_DAY_3))
    last = "{{ auto_cdc.last_snapshot_version() }}"
    query = (
        "select min(day) from {{ target.schema }}.extracts"
        f" where not exists (select 1 from {last}) or day > (select version from {last}) having count(*) > 0"
    )
    model = (
        "select store_id, item, quantity from {{ target.schema }}.extracts"
        " where day = (select version from {{ auto_cdc.current_snapshot_version() }})"
    )
    project.model("stock", model, **SCOPED, stored_as_scd_type=1, snapshot_version_query=query)
    project.run()
    assert project.rows("stock") == _reference([(1, DAY_1), (2, STORE_1_DAY_2), (3, STORE_2_DAY_2 + STORE_1_DAY_3)], 1)


@pytest.mark.parametrize("project", ["duckdb"], indirect=True)  # the plugin is DuckDB's
def test_python_function_reads_one_store_file_at_a_time(project: CdcProject, tmp_path: Path) -> None:
    """snapshot_version_function: files named by version, each one store's extract."""
    directory = tmp_path / "extracts"
    directory.mkdir()
    for version, extract in [(1, DAY_1), (2, STORE_1_DAY_2), (3, STORE_2_DAY_2)]:
        lines = "".join(f"{s},{i},{q}\n" for s, i, q in extract)
        (directory / f"extract_{version}.csv").write_text("store_id,item,quantity\n" + lines)
    module = tmp_path / "functions"
    module.mkdir()
    (module / "store_extracts.py").write_text(
        "from pathlib import Path\n"
        f"DIRECTORY = Path({str(directory)!r})\n\n"
        "def next_extract(latest_version):\n"
        "    versions = sorted(int(p.stem.removeprefix('extract_')) for p in DIRECTORY.glob('extract_*.csv'))\n"
        "    later = [v for v in versions if latest_version is None or v > latest_version]\n"
        "    return (str(DIRECTORY / f'extract_{later[0]}.csv'), later[0]) if later else None\n"
    )
    project.enable_snapshot_plugin(paths=[str(module)])
    project.model(
        "stock",
        "select * from {{ auto_cdc.current_snapshot() }}",
        **SCOPED,
        stored_as_scd_type=2,
        snapshot_version_function="store_extracts:next_extract",
    )
    project.run()
    assert project.rows("stock") == _reference([(1, DAY_1), (2, STORE_1_DAY_2), (3, STORE_2_DAY_2)], 2)


@pytest.mark.spark
def test_a_half_empty_extract_fails_naming_its_store(project: CdcProject) -> None:
    """The mass-delete guard counts per store: store 3's extract lost 8 of its 12 items, while the
    table as a whole would lose 8 of 14. Nothing is written, the other store's extract included."""
    store_3 = [(3, f"item{n:02}", n) for n in range(12)]
    _extracts(project, _tagged(1, [*store_3, (4, "nail", 1), (4, "saw", 2)]))
    project.model("stock", SOURCE, **BY_DAY, max_delete_fraction=0.5)
    project.run()
    project.insert("extracts", _tagged(2, [*store_3[:4], (4, "nail", 5)]))
    fails(project, "snapshot of store_id=3 at version 2 would delete 8 of the 12 keys of that group", model="stock")
    project.model("stock", SOURCE, **BY_DAY, max_delete_fraction=1)
    assert project.run().metrics("stock") == (1, 9)


@pytest.mark.spark
def test_change_feed_full_refresh_and_empty(project: CdcProject) -> None:
    """The change feed holds the store re-sent, and nothing of the others; `--empty` writes
    nothing; `--full-refresh` rebuilds every store from what the query returns."""
    _extracts(project, _tagged(1, DAY_1))
    project.model("stock", SOURCE, **BY_DAY, stored_as_scd_type=1, change_feed=True)
    project.run()
    project.insert("extracts", _tagged(2, STORE_1_DAY_2))
    project.run()
    changes = project.relation(derived_name("stock", "__cdc_changes"))
    last_run = f"(select max(_run_id) from {changes})"
    feed = project.query(f"select store_id, item, _change_type from {changes} where _run_id = {last_run}")
    nail = [(1, "nail", "update_postimage"), (1, "nail", "update_preimage")]
    assert sorted(feed) == [(1, "bolt", "delete"), *nail, (1, "tape", "insert")]

    project.insert("extracts", _tagged(3, STORE_2_DAY_2))
    before = project.snapshot(*project.cdc_tables("stock"))
    assert project.dbt("run", "--empty").success
    assert project.snapshot(*project.cdc_tables("stock")) == before

    project.run(full_refresh=True)
    assert project.rows("stock") == _reference([(1, DAY_1), (2, STORE_1_DAY_2), (3, STORE_2_DAY_2)], 1)


def test_events_of_the_reference_for_the_worked_example() -> None:
    """The reference itself: store 3, never re-sent, keeps its day-1 row; store 1's bolt is
    deleted at day 2 only in store 1."""
    rows = _reference([(1, DAY_1), (2, STORE_1_DAY_2)], 1)
    assert (3, "glue", 4) in rows and (2, "saw", 1) in rows
    assert not [row for row in rows if row[:2] == (1, "bolt")]
