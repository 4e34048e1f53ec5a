"""What is dbt v2's own (docs/dbt-v2.md): configs only under `meta`, no Python version
function, working tables that a failed run may leave and the next run replaces, and tables a
model built under dbt-core that it continues under v2 (and back). The SPEC, the semantics,
snapshots, flows, the change feed and the lifecycle run under v2 through the tests marked
`dbt_v2` in the other modules; here the property tests too, with AUTO_CDC_V2_EXAMPLES cases."""

from __future__ import annotations

import os

import pytest
import test_property
import test_property_snapshots
from test_property import with_examples

from harness import HYPOTHESIS_EXAMPLES, V2, CdcProject, invoke_dbt
from scenarios import CONFIG, EVENTS, MODEL, fails, run_batches

pytestmark = pytest.mark.dbt_v2
ON_V2 = pytest.mark.parametrize("project", [V2], indirect=True)
ON_V2_MODULE = pytest.mark.parametrize("module_project", [V2], indirect=True)

# Random cases per property test and mode under dbt v2 (each case: several runs of about 1 s;
# default AUTO_CDC_HYPOTHESIS_EXAMPLES, as on DuckDB and PostgreSQL).
V2_EXAMPLES = int(os.environ.get("AUTO_CDC_V2_EXAMPLES", str(HYPOTHESIS_EXAMPLES)))

test_scd1_any_split_matches_the_reference = ON_V2_MODULE(
    pytest.mark.parametrize("mode", ["full_rows", "sequence_written", "columns_to_update"])(
        with_examples(test_property.test_any_split_and_arrival_order_matches_the_reference, V2_EXAMPLES)
    )
)
test_scd2_any_split_matches_the_reference = ON_V2_MODULE(
    pytest.mark.parametrize("mode", ["full_rows", "track_name_only"])(
        with_examples(test_property.test_scd2_history_for_any_split_matches_the_reference, V2_EXAMPLES)
    )
)
test_snapshots_in_any_runs_match_the_reference = ON_V2_MODULE(
    pytest.mark.parametrize("kind", ["scd1", "scd2"])(
        with_examples(test_property_snapshots.test_versioned_snapshots_in_any_runs_match_the_reference, V2_EXAMPLES)
    )
)


@ON_V2
def test_a_python_version_function_fails_before_writing(project: CdcProject) -> None:
    """dbt v2 runs no dbt-duckdb plugins, so the Python function cannot be called."""
    project.create_table("source", {"id": "integer", "name": "varchar"})
    project.model(
        "dim",
        "select * from {{ auto_cdc.current_snapshot() }}",
        materialized="auto_cdc_from_snapshot",
        keys=["id"],
        snapshot_version_function="snapshots:next_snapshot",
    )
    fails(
        project,
        "`snapshot_version_function` needs the auto_cdc.plugin",
        "dbt v2, which runs no dbt-duckdb plugins",
        "snapshot_version_column",
        model="dim",
    )
    assert not project.exists("dim")


@ON_V2
def test_configs_at_the_top_level_are_refused_and_under_meta_read(project: CdcProject) -> None:
    """dbt v2 itself refuses a package's configs at the top level of config(), naming the key;
    the same configs under `meta` build the table."""
    project.create_table("events", EVENTS)
    (project.path / "models" / "dim.sql").write_text(
        "{{ config(materialized='auto_cdc', keys=['id'], sequence_by='seq') }}\n" + MODEL + "\n"
    )
    outcome = project.dbt("run", "--select", "dim")
    assert not outcome.success and "unexpected key" in outcome.error and "sequence_by" in outcome.error, outcome.error
    project.model("dim", MODEL, **CONFIG)  # the harness puts auto_cdc's configs under meta
    run_batches(project, [(1, "a", "U", 1), (2, "b", "U", 1)], [(2, None, "D", 2)])
    assert project.rows("dim") == [(1, "a")]


@ON_V2
def test_a_failed_runs_working_tables_are_replaced_and_dropped(project: CdcProject) -> None:
    """Under v2 a run's working tables are tables next to the target (its statements share no
    session): one that fails after making them leaves them, and the next run replaces them and
    drops them when it ends."""
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG)
    project.replace_rows("events", [(None, "a", "U", 1)])  # a NULL key: the run fails in validation
    project.run("dim", expect_success=False)
    assert any("__cdc_tmp_" in table for table in project.tables())
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run("dim")
    assert project.rows("dim") == [(1, "a")]
    assert not [table for table in project.tables() if "__cdc_tmp_" in table]


@ON_V2
def test_tables_built_by_dbt_core_continue_under_v2_and_back(project: CdcProject) -> None:
    """A team moving a project from dbt-core to dbt v2 keeps its tables: the target, its state
    and run history that a dbt-core 1.x run wrote are v2's to continue, and the other way round."""
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG)  # configs under meta: both engines read them there

    def run_on_dbt_core() -> None:
        args = ["run", "--select", "dim", "--project-dir", str(project.path), "--profiles-dir", str(project.path)]
        result = invoke_dbt(args)
        CdcProject._release_duckdb()
        assert result.success, result.exception

    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    run_on_dbt_core()
    project.replace_rows("events", [(2, None, "D", 2), (3, "c", "U", 1), (1, "late", "U", 0)])
    assert project.run("dim").metrics("dim") == (1, 1)
    project.replace_rows("events", [(3, "c2", "U", 2), (2, "late", "U", 1)])  # 2's tombstone blocks its late upsert
    run_on_dbt_core()
    assert project.rows("dim") == [(1, "a"), (3, "c2")]
    assert len(project.query(f"select * from {project.relation('dim__cdc_runs')}")) == 3
