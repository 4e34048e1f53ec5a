"""Fixtures: a private PostgreSQL server for the session, and a fresh dbt project per test
on each adapter (`project` is parametrized over DuckDB and PostgreSQL)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import postgres_server
from harness import ADAPTERS, CdcProject


@pytest.fixture(scope="session")
def postgres() -> Iterator[postgres_server.PostgresServer]:
    server = postgres_server.start()
    try:
        yield server
    finally:
        server.stop()


def _make_project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CdcProject]:
    adapter = request.param
    server = request.getfixturevalue("postgres") if adapter == "postgres" else None
    project = CdcProject(tmp_path / adapter, adapter, server)
    try:
        yield project
    finally:
        project.close()


@pytest.fixture(params=ADAPTERS)
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CdcProject]:
    yield from _make_project(request, tmp_path)


@pytest.fixture(scope="module", params=ADAPTERS)
def module_project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CdcProject]:
    """One project per module and adapter, for tests that reset their own tables (hypothesis)."""
    yield from _make_project(request, tmp_path_factory.mktemp("module"))
