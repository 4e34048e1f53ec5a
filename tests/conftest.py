"""Fixtures: a private PostgreSQL server for the session, and a fresh dbt project per test
on each adapter (`project` is parametrized over DuckDB and PostgreSQL, for tests marked
`spark` also over Spark with Iceberg tables: one Spark session per test process, and all Spark
tests on one worker, so one JVM runs at a time; and for tests marked `dbt_v2` over DuckDB run by
dbt v2, the Rust engine, a process per dbt invocation).

A fresh project is an emptied directory that a worker reuses, with the same profile and
schema: everything the previous test wrote is gone (models, YAML, the DuckDB file, the
PostgreSQL schema, dbt's artifacts) except dbt's partial-parse file, so dbt parses only the new
test's files, as on any user's second run, instead of all ~800 macros again (3-8 s a test).
AUTO_CDC_FRESH_PROJECTS=1 gives every test a new directory and schema instead (dbt parses
everything each time): to rule out partial parsing when a test fails in the suite only."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import postgres_server
import spark_env
import v2_env
from harness import ADAPTERS, SPARK, V2, CdcProject, SparkTarget, V2Target, new_schema_name

# AUTO_CDC_SPARK=0 leaves the Spark tier out (scripts/check_lowest_versions.sh: the tier pins
# dbt-spark 1.11); the summary line counts its tests as deselected.
SPARK_TIER = os.environ.get("AUTO_CDC_SPARK", "1") != "0"
# AUTO_CDC_V2=0 leaves the v2 tier out (the lowest-versions check: dbt-core 1.10 has no v2 CLI).
V2_TIER = os.environ.get("AUTO_CDC_V2", "1") != "0"
TIERS = {SPARK: (SPARK_TIER, "spark"), V2: (V2_TIER, "dbt_v2")}  # tier: (run it, its marker)
KEPT = {"dbt_packages", "target"}  # the package link, and dbt's partial_parse.msgpack in target/
FRESH_PROJECTS = os.environ.get("AUTO_CDC_FRESH_PROJECTS") == "1"
# AUTO_CDC_<ADAPTER>_CASES=first for DUCKDB, POSTGRES, SPARK or V2 (CI's budget, .ci/run) runs,
# of each parametrized test, only that adapter's first case (test_spark.py's included). Default: all.
FIRST_CASES_ONLY = {
    tier: os.environ.get(f"AUTO_CDC_{tier.upper()}_CASES", "all") == "first" for tier in (*ADAPTERS, *TIERS)
}


@pytest.fixture(scope="session")
def postgres() -> Iterator[postgres_server.PostgresServer]:
    server = postgres_server.start()
    try:
        yield server
    finally:
        server.stop()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: also run the test on Spark with Iceberg tables (the Spark tier)")
    config.addinivalue_line("markers", "dbt_v2: also run the test on DuckDB under dbt v2, the Rust engine (v2 tier)")
    config.addinivalue_line("markers", "not_on_v2(reason): leave the test out of its module's v2 tier, saying why")
    config.addinivalue_line(
        "markers", "not_on_spark(reason): leave the test out of its module's Spark tier (test_spark.py runs it)"
    )
    config.addinivalue_line("markers", "on_spark: a Spark case (set by conftest; `-m on_spark` runs the tier alone)")
    config.addinivalue_line("markers", "on_v2: a dbt v2 case (set by conftest; `-m on_v2` runs the tier alone)")
    config.addinivalue_line(
        "markers", "spark_packages: needs the spark extra, not the suite's Spark session: left out with the Spark tier"
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spark and v2 variants only for tests marked `spark` / `dbt_v2`; the Spark ones all in one
    xdist group (one JVM)."""
    kept, dropped = [], []
    first_cases: set[tuple[str, str, str]] = set()  # (tier, module, function) with a case kept
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        project = (params.get("project"), params.get("module_project"))
        tier = next((t for t in TIERS if t in project), None)
        left_out_by = "not_on_v2" if tier == V2 else "not_on_spark"
        left_out = tier is not None and item.get_closest_marker(left_out_by) is not None
        if not SPARK_TIER and item.get_closest_marker("spark_packages") is not None:
            dropped.append(item)  # AUTO_CDC_SPARK=0 installs no pyspark
            continue
        if tier is not None and (not TIERS[tier][0] or item.get_closest_marker(TIERS[tier][1]) is None or left_out):
            dropped.append(item)
            continue
        adapter = tier or next((a for a in ADAPTERS if a in project), None)
        if adapter is not None and FIRST_CASES_ONLY[adapter]:
            function = (adapter, item.module.__name__, getattr(item, "originalname", item.name))
            if function in first_cases:
                dropped.append(item)
                continue
            first_cases.add(function)
        if tier == SPARK:
            item.add_marker(pytest.mark.xdist_group("spark"))
        if tier is not None:
            item.add_marker(pytest.mark.on_spark if tier == SPARK else pytest.mark.on_v2)
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def v2(tmp_path_factory: pytest.TempPathFactory) -> V2Target:
    """dbt v2's CLI, and its DuckDB driver named in a temporary folder (v2_env.py)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dbt-auto-cdc"
    return V2Target(v2_env.binary(), v2_env.driver_path(tmp_path_factory.mktemp("v2-driver"), cache))


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkTarget]:
    """The process's Spark session (embedded Derby metastore and warehouse in a temp directory)."""
    home = tmp_path_factory.mktemp("spark")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dbt-auto-cdc"
    session = spark_env.start_session(home, cache)
    try:
        yield SparkTarget(session, spark_env.session_parameters(home, cache))
    finally:
        session.stop()


@pytest.fixture(scope="session")
def project_slots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """This worker's project directories and their PostgreSQL schemas, by fixture and adapter."""
    return {}


def _emptied(path: Path) -> Path:
    """`path` with nothing left of a previous test but KEPT (dbt_packages/ is recreated as it was)."""
    path.mkdir(parents=True, exist_ok=True)
    for child in path.iterdir():
        if child.name == "target":
            for artifact in child.iterdir():
                if artifact.name != "partial_parse.msgpack":
                    shutil.rmtree(artifact) if artifact.is_dir() else artifact.unlink()
        elif child.name not in KEPT:
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    return path


def _make_project(request: pytest.FixtureRequest, slot: str) -> Iterator[CdcProject]:
    adapter = request.param
    server = request.getfixturevalue("postgres") if adapter == "postgres" else None
    spark = request.getfixturevalue("spark") if adapter == SPARK else None
    v2 = request.getfixturevalue("v2") if adapter == V2 else None
    slots = request.getfixturevalue("project_slots")
    if FRESH_PROJECTS:
        slot = f"{slot}-{uuid.uuid4().hex[:8]}"
    if slot not in slots:
        slots[slot] = (request.getfixturevalue("tmp_path_factory").mktemp(slot), new_schema_name())
    path, schema = slots[slot]
    project = CdcProject(_emptied(path), adapter, server, schema, spark, v2)
    leftovers = project.tables()  # e.g. a database dbt-duckdb kept open past a test
    assert not leftovers, f"{slot} kept tables of an earlier test: {leftovers}"
    try:
        yield project
    finally:
        project.close()


@pytest.fixture(params=(*ADAPTERS, SPARK, V2))
def project(request: pytest.FixtureRequest) -> Iterator[CdcProject]:
    yield from _make_project(request, f"test-{request.param}")


@pytest.fixture(scope="module", params=(*ADAPTERS, SPARK, V2))
def module_project(request: pytest.FixtureRequest) -> Iterator[CdcProject]:
    """One project per module and adapter, for tests that reset their own tables (hypothesis)."""
    yield from _make_project(request, f"module-{request.param}")
