"""The example project (integration_tests/) builds with `dbt build` on both adapters and on
DuckDB under dbt v2: seeds, the SPEC 7.1-7.6 models, and the dbt tests that compare them with
the SPEC tables (the dated files on DuckDB, and the Python snapshot function on DuckDB under
dbt-core); an incremental aggregate over a change feed, consumed in two runs, equals the
aggregate of the table. A second run applies no change. A `dbt build --empty` before and after
(the schema-only dry run of CI jobs) passes and changes nothing."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg2
import pytest

from harness import ADAPTERS, REPO_ROOT, V2, CdcProject, V2Target, invoke_dbt, invoke_dbt_v2
from postgres_server import PostgresServer

EXAMPLE = REPO_ROOT / "integration_tests"


@dataclass
class Example:
    """The example project on one adapter (V2: DuckDB under dbt v2), and a way to run dbt on it."""

    adapter: str
    tmp: Path
    v2: V2Target | None

    def dbt(self, *args: str) -> list:
        """dbt in the project, as a user runs it there; its results (it must succeed)."""
        target = "duckdb" if self.adapter == V2 else self.adapter
        common = ["--project-dir", str(EXAMPLE), "--profiles-dir", str(EXAMPLE), "--target", target]
        os.environ["DBT_TARGET_PATH"] = str(self.tmp / "target")
        os.environ["DBT_LOG_PATH"] = str(self.tmp / "logs")
        if self.v2 is not None:
            success, results, error, _, _, _ = invoke_dbt_v2(self.v2, [*args, *common], EXAMPLE)
            assert success, error
            return results
        result = invoke_dbt([*args, *common])
        CdcProject._release_duckdb()
        assert result.success, result.exception or [str(r.message) for r in result.result.results]
        return list(getattr(result.result, "results", None) or [])


@pytest.fixture(params=(*ADAPTERS, V2))
def example(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Example]:
    adapter = request.param
    saved = dict(os.environ)
    os.environ["AUTO_CDC_DUCKDB_PATH"] = str(tmp_path / "example.duckdb")
    schema = f"example_{uuid.uuid4().hex[:8]}"
    server: PostgresServer | None = None
    if adapter == "postgres":
        server = request.getfixturevalue("postgres")
        os.environ.update(server.env())
        os.environ["AUTO_CDC_PG_SCHEMA"] = schema
    cwd = os.getcwd()
    os.chdir(EXAMPLE)  # like a user: dbt runs in the project, which reads data/ and python/ from there
    try:
        yield Example(adapter, tmp_path, request.getfixturevalue("v2") if adapter == V2 else None)
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)
        if server is not None:
            with psycopg2.connect(host=server.host, port=server.port, user=server.user, dbname="postgres") as conn:
                conn.cursor().execute(f"drop schema if exists {schema} cascade")


@pytest.mark.xdist_group("example_project")  # every run writes integration_tests/dbt_packages
def test_example_project_builds_and_passes_its_tests(example: Example) -> None:
    example.dbt("deps")
    example.dbt("build", "--empty")  # a fresh schema: every model's tables are created empty
    # The change feed consumed in two runs: users_per_city stays equal to the aggregate of users_tracked.
    first = example.dbt("build", "--select", "+users_tracked+", "--vars", "{users_up_to_sequence: 2}")
    assert {r.node.name: str(r.status) for r in first}["users_per_city_matches_users_tracked"] == "pass"
    results = example.dbt("build")
    statuses = {r.node.name: str(r.status) for r in results}
    assert statuses["users_matches_spec"] == "pass"
    assert statuses["users_truncated_matches_spec"] == "pass"
    assert statuses["users_backfilled_matches_spec"] == "pass"
    assert statuses["users_from_snapshots_matches_spec"] == "pass"
    assert statuses["users_from_snapshots_current_matches_spec"] == "pass"
    assert statuses["users_by_version_query_matches_spec"] == "pass"
    assert statuses["company_history_matches_spec"] == "pass"
    assert statuses["company_believed_at_1222_is_xfv1"] == "pass"
    assert statuses["users_per_city_matches_users_tracked"] == "pass"
    if example.adapter in ("duckdb", V2):
        assert statuses["users_from_files_matches_spec"] == "pass"
    if example.adapter == "duckdb":  # the Python version function needs dbt-duckdb's plugin (dbt-core 1.x)
        assert statuses["users_from_snapshot_function_matches_spec"] == "pass"
    assert "num_upserted_rows=3 num_deleted_rows=0" in next(str(r.message) for r in results if r.node.name == "users")

    # The run history of the models it names, one row per run (docs/monitoring.md).
    assert statuses["unique_cdc_dashboard_model_name"] == "pass"

    again = example.dbt("run", "--select", "users", "path:models/snapshots")
    assert len(again) == {"duckdb": 6, V2: 5, "postgres": 4}[example.adapter]
    assert {str(r.message).split(" num_events=")[0] for r in again} == {"num_upserted_rows=0 num_deleted_rows=0"}
    # Read again, every event of `users` is a replay: ignored, none applied.
    users_again = next(str(r.message) for r in again if r.node.name == "users")
    assert " num_applied_events=0 " in users_again and " num_ignored_events=0 " not in users_again, users_again

    empty = example.dbt("build", "--empty")
    assert {str(r.status) for r in empty} <= {"success", "pass"}
    assert {str(r.message) for r in empty if r.node.name == "users"} == {
        "num_upserted_rows=0 num_deleted_rows=0 (--empty: nothing applied)"
    }
    assert {str(r.message).split(" num_events=")[0] for r in example.dbt("run", "--select", "users")} == {
        "num_upserted_rows=0 num_deleted_rows=0"
    }
