"""SPEC 7.1 and 7.2 through dbt on both adapters: in one run, and split into several runs in
different arrival orders. Each run sees only the events that arrived since the last one. And
for SCD types 1 and 2 (SPEC 7.3): a full refresh gives what one run gives."""

from __future__ import annotations

import pytest

import spec_data
from harness import CdcProject
from reference import sort_rows
from scenarios import run_batches
from spec_data import (
    FEED_MODEL,
    SPEC_7_1,
    SPEC_7_2,
    TRUNCATE_AT_3,
    USERS_CDF,
    USERS_COLUMNS,
    USERS_CONFIG,
    USERS_RUN,
    USERS_SCD2_CONFIG,
    shuffled_split,
)

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]  # SPEC 7.1 and 7.2 on Spark and dbt v2 too


def _setup(project: CdcProject, config: dict | None = None) -> None:
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **(config or USERS_CONFIG))


def test_spec_7_1_in_one_run(project: CdcProject) -> None:
    _setup(project)
    assert run_batches(project, USERS_CDF, **USERS_RUN) == [(3, 0)]
    assert project.rows("users") == SPEC_7_1
    assert project.columns("users") == ["userId", "name", "city"]


def test_spec_7_1_metrics_when_split_at_sequence_2(project: CdcProject) -> None:
    _setup(project)
    early = [e for e in USERS_CDF if e[4] <= 2]
    late = [e for e in USERS_CDF if e[4] > 2]
    assert run_batches(project, early, late, **USERS_RUN) == [(4, 0), (1, 1)]
    assert project.rows("users") == SPEC_7_1


SPLITS = {
    "one_event_per_run_reversed": [[e] for e in reversed(USERS_CDF)],
    "newest_first": [[e for e in USERS_CDF if e[4] >= 5], [e for e in USERS_CDF if e[4] < 5]],
    "shuffled_3_runs": shuffled_split(USERS_CDF, seed=7, runs=3),
    "shuffled_4_runs": shuffled_split(USERS_CDF, seed=11, runs=4),
}


@pytest.mark.parametrize("split", SPLITS, ids=list(SPLITS))
def test_spec_7_1_any_split_and_order(project: CdcProject, split: str) -> None:
    _setup(project)
    run_batches(project, *SPLITS[split], **USERS_RUN)
    assert project.rows("users") == SPEC_7_1


def test_spec_7_2_truncate_in_one_run(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, [*USERS_CDF, TRUNCATE_AT_3], **USERS_RUN)
    assert project.rows("users") == SPEC_7_2


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_spec_7_2_truncate_split(project: CdcProject, seed: int) -> None:
    _setup(project)
    run_batches(project, *shuffled_split([*USERS_CDF, TRUNCATE_AT_3], seed=seed, runs=3), **USERS_RUN)
    assert project.rows("users") == SPEC_7_2


def test_spec_7_2_truncate_arrives_last(project: CdcProject) -> None:
    _setup(project)
    metrics = run_batches(project, USERS_CDF, [TRUNCATE_AT_3], **USERS_RUN)
    assert metrics == [(3, 0), (0, 2)]
    assert project.rows("users") == SPEC_7_2


def test_rerun_without_new_events_changes_nothing(project: CdcProject) -> None:
    _setup(project)
    project.replace_rows("users_cdf", USERS_CDF)
    project.run("users")
    before = project.snapshot("users", "users__cdc_state")
    assert project.run("users").metrics("users") == (0, 0)
    assert project.snapshot("users", "users__cdc_state") == before


# SCD type: (config, seed of the split, metrics of the full refresh, the SPEC table). A full
# refresh upserts every row it builds and deletes every row of the table it replaces.
FULL_REFRESH = {
    1: (USERS_CONFIG, 7, (3, 3), SPEC_7_1),
    2: (USERS_SCD2_CONFIG, 9, (7, 7), sort_rows(spec_data.SPEC_7_3)),
}


@pytest.mark.parametrize("scd_type", FULL_REFRESH)
def test_full_refresh_equals_one_run(project: CdcProject, scd_type: int) -> None:
    config, seed, metrics, expected = FULL_REFRESH[scd_type]
    _setup(project, config)
    run_batches(project, *shuffled_split(USERS_CDF, seed=seed, runs=3), **USERS_RUN)
    project.replace_rows("users_cdf", USERS_CDF)
    assert project.run("users", full_refresh=True).metrics("users") == metrics
    assert project.rows("users") == expected
