"""Shared scenarios and constants of the tests: the change feed `events` and its model `dim`,
the snapshot model `users`, applying batches one per run, and a check that a failing run
wrote nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness import CdcProject, RunOutcome, derived_name

# --- the change feed `events` and the model `dim` over it ----------------------------------------

EVENTS = {"id": "integer", "name": "varchar", "op": "varchar", "seq": "integer"}
CITY_EVENTS = {"id": "integer", "name": "varchar", "city": "varchar", "op": "varchar", "seq": "integer"}
# A sequence of two parts (epoch, offset), compared lexicographically.
EPOCH_EVENTS = {"id": "integer", "name": "varchar", "op": "varchar", "epoch": "integer", "offset_no": "integer"}
CONFIG: dict[str, Any] = {
    "keys": ["id"],
    "sequence_by": "seq",
    "apply_as_deletes": "op = 'D'",
    "except_column_list": ["op", "seq"],
}
TRUNCATING_CONFIG: dict[str, Any] = {**CONFIG, "apply_as_truncates": "op = 'T'"}
EPOCH_CONFIG: dict[str, Any] = {"keys": "id", "sequence_by": ["epoch", "offset_no"], "apply_as_deletes": "op = 'D'"}
MODEL = "select * from {{ target.schema }}.events"
HISTORY = [(1, "a", "U", 1), (2, "b", "U", 1), (1, "a2", "U", 2), (3, "c", "U", 1), (3, None, "D", 2)]


def built(project: CdcProject, scd_type: int = 1, **extra: Any) -> dict[str, list[tuple[Any, ...]]]:
    """A model built over two runs; returns every row of its tables."""
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type, **extra)
    project.replace_rows("events", HISTORY[:3])
    project.run("dim")
    project.replace_rows("events", HISTORY[3:])
    project.run("dim")
    return project.snapshot(*project.cdc_tables("dim"))


def run_batches(
    project: CdcProject, *batches: Sequence[Sequence[Any]], model: str = "dim", table: str = "events"
) -> list[tuple[int, int]]:
    """Each batch in its own run: `table` holds only that batch when `model` runs. Returns each
    run's (num_upserted_rows, num_deleted_rows)."""
    metrics = []
    for batch in batches:
        project.replace_rows(table, batch)
        metrics.append(project.run(model).metrics(model))
    return metrics


def fails(project: CdcProject, *fragments: str, model: str = "dim", args: tuple[str, ...] = ()) -> RunOutcome:
    """Runs `model`, expects a failure whose message names the model and has every fragment,
    and nothing written to the model's tables."""
    before = project.snapshot(*project.cdc_tables(model))
    outcome = project.dbt("run", "--select", model, *args)
    assert not outcome.success, "the run succeeded"
    # dbt's own contract error names the model its way: `model dim` (dbt v2: `model.cdc_test.dim`).
    contract_named = f"model.cdc_test.{model}" if project.dbt_v2 else f"model {model}"
    for fragment in (contract_named if "contract" in fragments else f"'{model}'", *fragments):
        assert fragment in outcome.error, f"{fragment!r} not in:\n{outcome.error}"
    assert project.snapshot(*project.cdc_tables(model)) == before
    return outcome


def run_count(project: CdcProject, model: str = "dim") -> int:
    return project.query(f"select count(*) from {project.relation(derived_name(model, '__cdc_runs'))}")[0][0]


SNAPSHOT_A = [(1, "Oaxaca"), (2, "Monterrey"), (3, "Tijuana")]
SNAPSHOT_B = [(2, "Carmel"), (3, "Los Angeles"), (4, "Death Valley")]
LAST_VERSION = "{{ auto_cdc.last_snapshot_version() }}"
VERSION_QUERY = (
    "select min(version) from {{ target.schema }}.source"
    f" where not exists (select 1 from {LAST_VERSION}) or version > (select version from {LAST_VERSION})"
    " having count(*) > 0"
)
SNAPSHOT_MODELS = {
    "per_run": ("select id, city from {{ target.schema }}.source", {}),
    "column": ("select * from {{ target.schema }}.source", {"snapshot_version_column": "version"}),
    "query": (
        "select id, city from {{ target.schema }}.source"
        " where version = (select version from {{ auto_cdc.current_snapshot_version() }})",
        {"snapshot_version_query": VERSION_QUERY},
    ),
}


def snapshot_model(project: CdcProject, way: str, scd_type: int = 2, **extra: Any) -> None:
    body, config = SNAPSHOT_MODELS[way]
    project.model(
        "users",
        body,
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        stored_as_scd_type=scd_type,
        **config,
        **extra,
    )


def load_snapshot(project: CdcProject, version: int, rows: list[tuple[Any, ...]], replace: bool) -> None:
    tagged = [(version, *row) for row in rows]
    (project.replace_rows if replace else project.insert)("source", tagged)


def built_snapshots(
    project: CdcProject, way: str, rows: list[tuple[Any, ...]], scd_type: int = 2, **extra: Any
) -> None:
    """The snapshot model `users` (SNAPSHOT_MODELS[way]) with its first snapshot applied."""
    project.create_table("source", {"version": "bigint", "id": "integer", "city": "varchar"})
    snapshot_model(project, way, scd_type, **extra)
    load_snapshot(project, 1, rows, replace=True)
    project.run("users")
