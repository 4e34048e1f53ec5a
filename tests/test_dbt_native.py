"""auto_cdc behaves like a dbt materialization: hooks, grants, persist_docs, `dbt build`,
`dbt docs generate`, selection."""

from __future__ import annotations

import json
import re

import pytest

from harness import CdcProject, new_schema_name
from scenarios import CONFIG, EVENTS, MODEL, fails


@pytest.mark.spark
@pytest.mark.dbt_v2
def test_hooks_run_inside_the_transaction_and_see_the_result(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.create_table("audit", {"n": "integer"})
    project.model(
        "dim",
        MODEL,
        **CONFIG,
        pre_hook="insert into {{ target.schema }}.audit select -1",
        post_hook="insert into {{ target.schema }}.audit select count(*) from {{ this }}",
    )
    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    project.run("dim")
    assert project.rows("audit") == [(-1,), (2,)]


@pytest.mark.spark
@pytest.mark.dbt_v2
def test_build_runs_tests_after_the_model_and_docs_generate(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, persist_docs={"relation": True, "columns": True})
    project.write(
        "models/schema.yml",
        "version: 2\nmodels:\n  - name: dim\n    description: The dimension.\n    columns:\n"
        "      - name: id\n        description: The key's value.\n        data_tests: [unique, not_null]\n",
    )
    project.replace_rows("events", [(1, "a", "U", 1), (1, "b", "U", 2), (2, "c", "U", 1)])
    outcome = project.dbt("build", "--select", "dim")
    assert outcome.success, outcome.error
    assert {r.node.name: str(r.status) for r in outcome.results} == {
        "dim": "success",
        "unique_dim_id": "pass",
        "not_null_dim_id": "pass",
    }
    # dbt v2 writes the catalog with compile (its `docs generate` only says so).
    docs = project.dbt(*(["compile", "--write-catalog"] if project.dbt_v2 else ["docs", "generate", "--write-json"]))
    assert docs.success, docs.error
    catalog = json.loads((project.path / "target" / "catalog.json").read_text())
    (node,) = [n for key, n in catalog["nodes"].items() if key.endswith(".dim")]
    assert set(node["columns"]) == {"id", "name"}
    if project.adapter == "postgres":
        comment = project.query(f"select obj_description('{project.relation('dim')}'::regclass)")
        assert comment == [("The dimension.",)]
    if project.adapter == "spark":
        described = project.query(f"describe table extended {project.relation('dim')}")
        assert ("id", "int", "The key's value.") in described
        assert ("Comment", "The dimension.", "") in described


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # DuckDB has no roles
def test_grants_on_postgres(project: CdcProject) -> None:
    role = f"reader_{new_schema_name()}"  # roles are the server's, not the schema's
    project.execute(f"create role {role}")
    try:
        project.create_table("events", EVENTS)
        project.model("dim", MODEL, **CONFIG, grants={"select": [role]})
        project.replace_rows("events", [(1, "a", "U", 1)])
        project.run("dim")
        project.run("dim")
        granted = project.query(
            "select privilege_type from information_schema.role_table_grants "
            f"where table_schema = '{project.schema}' and table_name = 'dim' and grantee = '{role}'"
        )
        assert granted == [("SELECT",)]
    finally:
        project.execute(f"drop owned by {role}; drop role {role}")


@pytest.mark.spark
@pytest.mark.dbt_v2
def test_selection_runs_only_the_selected_model(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG)
    project.model("other", MODEL, **CONFIG)
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run("other")
    assert project.exists("other") and not project.exists("dim")


@pytest.mark.spark
@pytest.mark.dbt_v2
def test_snapshot_model_runs_hooks_persists_docs_and_grants(project: CdcProject) -> None:
    """auto_cdc_from_snapshot shares auto_cdc's finish: post-hooks see the result, docs and
    grants land on the target (grants where the database has roles)."""
    project.create_table("source", {"id": "integer", "name": "varchar"})
    project.create_table("audit", {"n": "integer"})
    role = f"reader_{new_schema_name()}"  # roles are the server's, not the schema's
    extra: dict[str, object] = {}
    if project.adapter == "postgres":
        project.execute(f"create role {role}")
        extra["grants"] = {"select": [role]}
    try:
        project.model(
            "history",
            "select * from {{ target.schema }}.source",
            materialized="auto_cdc_from_snapshot",
            keys=["id"],
            stored_as_scd_type=2,
            post_hook="insert into {{ target.schema }}.audit select count(*) from {{ this }}",
            persist_docs={"relation": True, "columns": True},
            **extra,
        )
        project.write("models/schema.yml", "version: 2\nmodels:\n  - name: history\n    description: From snapshots.\n")
        project.replace_rows("source", [(1, "a"), (2, "b")])
        project.run("history")
        project.replace_rows("source", [(1, "a2")])
        project.run("history")
        assert project.rows("audit") == [(2,), (3,)]  # then key 1 has two versions, key 2 one closed
        if project.adapter == "postgres":
            comment = project.query(f"select obj_description('{project.relation('history')}'::regclass)")
            assert comment == [("From snapshots.",)]
            granted = project.query(
                "select privilege_type from information_schema.role_table_grants "
                f"where table_schema = '{project.schema}' and table_name = 'history' and grantee = '{role}'"
            )
            assert granted == [("SELECT",)]
        if project.adapter == "spark":
            assert ("Comment", "From snapshots.", "") in project.query(
                f"describe table extended {project.relation('history')}"
            )
    finally:
        if project.adapter == "postgres":
            project.execute(f"drop owned by {role}; drop role {role}")


@pytest.mark.spark
@pytest.mark.dbt_v2
def test_target_run_holds_the_statements_the_run_executed(project: CdcProject) -> None:
    # dbt users look in target/run/<model>.sql for what a model ran: the batch's read of the
    # model query, then every write, as executed (a second run: its own, not the first's).
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG)
    artifact = project.path / "target" / "run" / "cdc_test" / "models" / "dim.sql"
    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    project.run("dim")
    first = artifact.read_text()
    project.replace_rows("events", [(1, "a2", "U", 2)])
    project.run("dim")
    second = artifact.read_text()
    assert first != second
    batch, writes = second.split("-- The writes, applied together")
    assert "events" in batch and "__cdc_op" in batch  # the model query, read into the batch
    assert "dim__cdc_state" in writes and "dim__cdc_runs" in writes  # state and run history written

    def writes_target(verbs: str, text: str) -> bool:  # "dim" quoted or not (dbt-spark), not dim__cdc_*
        return re.search(rf"({verbs}) \S*\bdim[`\"]?\s", text) is not None

    assert writes_target("insert into|merge into|update|delete from", writes), writes
    assert writes_target("create table", first) and not writes_target("create table", second)  # created, then applied
    assert project.rows("dim") == [(1, "a2"), (2, "b")]


@pytest.mark.spark
@pytest.mark.dbt_v2
def test_sql_header_runs_before_the_model_query(project: CdcProject) -> None:
    """dbt's `sql_header` (a session setting, a temporary function or view the model query
    needs) runs in the run's session before anything reads the query, on every run."""
    project.create_table("events", EVENTS)
    view = "create or replace temporary view cdc_header_tag as select 'tagged' as tag"
    query = (
        "select e.id, h.tag as name, e.op, e.seq from {{ target.schema }}.events as e cross join cdc_header_tag as h"
    )
    project.model("dim", query, **CONFIG, sql_header=view)
    if project.dbt_v2:  # its statements share no session: refused before anything is written
        fails(project, "`sql_header` cannot apply under dbt v2", "run the model with dbt-core")
        return
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run("dim")
    project.replace_rows("events", [(2, "b", "U", 1)])
    project.run("dim")
    assert project.rows("dim") == [(1, "tagged"), (2, "tagged")]


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # the one adapter with indexes
def test_indexes_on_postgres_are_created_with_the_target(project: CdcProject) -> None:
    """dbt's `indexes`, as dbt's table and incremental materializations create them: with the
    target (its first run, a --full-refresh), beside the package's unique index on the key."""
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, indexes=[{"columns": ["name"]}])

    def indexes() -> list[tuple[str, ...]]:
        return project.query(
            "select indexdef from pg_indexes "
            f"where schemaname = '{project.schema}' and tablename = 'dim' order by indexdef"
        )

    project.replace_rows("events", [(1, "a", "U", 1)])
    project.run("dim")
    project.replace_rows("events", [(1, "b", "U", 2)])
    project.run("dim")  # an applied run adds none
    defined = [definition for (definition,) in indexes()]
    assert len(defined) == 2, defined
    assert any(d.startswith("CREATE UNIQUE INDEX") and d.endswith("(id)") for d in defined), defined
    assert any(d.startswith("CREATE INDEX") and d.endswith("(name)") for d in defined), defined
    project.run("dim", full_refresh=True)
    assert len(indexes()) == 2
    assert project.rows("dim") == [(1, "b")]
