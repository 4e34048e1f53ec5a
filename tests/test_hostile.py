"""Hostile input: awkward identifiers and values, long names, empty batches, failures after
the writes began. Each is handled correctly or fails clearly, and nothing is lost."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_spark import killed_before

from harness import ADAPTERS, V2, CdcProject, derived_name
from reference import sort_rows

V_EVENTS = {"id": "integer", "v": "varchar", "seq": "integer"}
AWKWARD = {"user id": "integer", 'say "hi"': "varchar", "Select": "varchar", "Order": "integer", "op": "varchar"}

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]


def _dbt_run_process(project: CdcProject, name: str, *args: str) -> subprocess.Popen[bytes]:
    """`dbt run` in its own process (so it can run beside another, or be killed)."""
    command = [sys.executable, "-c", "from dbt.cli.main import cli; cli()", "run", *args]
    command += ["--project-dir", str(project.path), "--profiles-dir", str(project.path), "--target", project.adapter]
    command += ["--target-path", str(project.path / f"target_{name}"), "--log-path", str(project.path / f"logs_{name}")]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.parametrize("scd_type", [1, 2])
def test_awkward_column_names(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", AWKWARD)
    project.model(
        "dim",
        "select * from {{ target.schema }}.events",
        keys=["user id"],
        sequence_by="Order",
        apply_as_deletes="op = 'D'",
        except_column_list=["op"],
        ignore_null_updates_column_list=['say "hi"'],
        stored_as_scd_type=scd_type,
    )
    project.replace_rows("events", [(1, "it's", "ü", 1, "U"), (2, "x", None, 1, "U")])
    project.run("dim")
    project.replace_rows("events", [(1, None, "naïve", 2, "U"), (2, None, None, 2, "D")])
    project.run("dim")
    if scd_type == 1:
        assert project.rows("dim") == [(1, "it's", "naïve", 2)]
    else:
        assert project.rows("dim") == sort_rows(
            [(1, "it's", "ü", 1, 1, 2), (1, "it's", "naïve", 2, 2, None), (2, "x", None, 1, 1, 2)]
        )


def test_long_model_name(project: CdcProject) -> None:
    # 60 characters: the target fits PostgreSQL's 63, its state, history, index and temp names do not.
    name = "a_model_name_of_sixty_characters_so_derived_names_overflow_x"
    assert len(name) == 60
    project.create_table("events", V_EVENTS)
    project.model(name, "select * from {{ target.schema }}.events", keys="id", sequence_by="seq")
    project.replace_rows("events", [(1, "a", 1)])
    project.run(name)
    project.replace_rows("events", [(1, "b", 2)])
    assert project.run(name).metrics(name) == (1, 0)


# Spark has no transactions: there, test_spark.py stops a run between its writes instead. Under
# dbt v2 the post-hook ends the run's write script, in its transaction (apply_writes).
@pytest.mark.dbt_v2
@pytest.mark.parametrize("project", (*ADAPTERS, V2), indirect=True)
@pytest.mark.parametrize("scd_type", [1, 2])
def test_failure_after_the_writes_changes_nothing_and_the_next_run_converges(
    project: CdcProject, scd_type: int
) -> None:
    project.create_table("events", {"id": "integer", "v": "varchar", "op": "varchar", "seq": "integer"})
    config = {
        "keys": "id",
        "sequence_by": "seq",
        "apply_as_deletes": "op = 'D'",
        "except_column_list": ["op"],
        "stored_as_scd_type": scd_type,
    }
    project.model("dim", "select * from {{ target.schema }}.events", **config)
    project.replace_rows("events", [(1, "a", "U", 1), (2, "b", "U", 1)])
    project.run("dim")
    before = project.snapshot(*project.cdc_tables("dim"))
    # A post-hook runs inside the transaction after target, state and history were written.
    project.model(
        "dim", "select * from {{ target.schema }}.events", **config, post_hook="select cast('boom' as integer)"
    )
    project.replace_rows("events", [(1, "a2", "U", 2), (2, None, "D", 2), (3, "c", "U", 1)])
    project.run("dim", expect_success=False)
    assert project.snapshot(*project.cdc_tables("dim")) == before
    project.model("dim", "select * from {{ target.schema }}.events", **config)
    assert project.run("dim").metrics("dim") == ((2, 1) if scd_type == 1 else (4, 0))


def _working_tables(project: CdcProject) -> list[str]:
    """Every working table (`__cdc_tmp`) in the database; PostgreSQL's catalog lists every
    session's temporary tables too."""
    if project.adapter == "spark":
        return [table for table in project.tables() if "__cdc_tmp" in table]
    catalog = "pg_class" if project.adapter == "postgres" else "duckdb_tables()"
    name = "relname" if project.adapter == "postgres" else "table_name"
    return [row[0] for row in project.query(f"select {name} from {catalog} where strpos({name}, '__cdc_tmp') > 0")]


@pytest.mark.parametrize("materialized", ["auto_cdc", "auto_cdc_from_snapshot"])
def test_a_failed_runs_working_tables_are_gone_after_the_next_run(project: CdcProject, materialized: str) -> None:
    """A run that fails once its working tables exist leaves none for good. On DuckDB and
    PostgreSQL they are temporary tables (the failed run's statements say so), gone with its
    transaction and session; under dbt v2 and on Spark (named per invocation there) they are
    tables next to the target, and the next run of the model drops them."""
    project.create_table("source", V_EVENTS)
    if materialized == "auto_cdc":
        body, config = "select * from {{ target.schema }}.source", {"keys": "id", "sequence_by": "seq"}
        history = [(1, "a", 1, 1, 2), (1, "a2", 2, 2, None), (2, "b", 1, 1, None), (3, "c", 1, 1, None)]
    else:  # per-run versions 0 and 1: the second snapshot lacks key 2
        body, config = "select id, v from {{ target.schema }}.source", {"materialized": materialized, "keys": "id"}
        history = [(1, "a", 0, 1), (1, "a2", 1, None), (2, "b", 0, 1), (3, "c", 1, None)]
    config["stored_as_scd_type"] = 2
    project.model("dim", body, **config)
    project.replace_rows("source", [(1, "a", 1), (2, "b", 1)])
    project.run("dim")
    project.replace_rows("source", [(1, "a2", 2), (3, "c", 1)])
    if project.adapter == "spark":  # no transaction: the run stops before its first write (test_spark.py)
        with killed_before(project, "merge into"):
            assert not project.dbt("run", "--select", "dim").success
    else:  # a post-hook fails the run after its writes (under dbt v2 it ends their script)
        project.model("dim", body, **config, post_hook="select cast('boom' as integer)")
        project.run("dim", expect_success=False)
        project.model("dim", body, **config)
    left = _working_tables(project)
    if project.adapter == "spark" or project.dbt_v2:
        assert any(table.startswith(derived_name("dim", "__cdc_tmp_batch")) for table in left), left
    else:
        ran = (project.path / "target" / "run" / "cdc_test" / "models" / "dim.sql").read_text()
        assert f'create temporary table "{derived_name("dim", "__cdc_tmp_batch")}"' in ran
        assert left == []
    project.run("dim")
    assert _working_tables(project) == []
    assert project.rows("dim") == history


@pytest.mark.parametrize("scd_type", [1, 2])
def test_empty_batch(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", V_EVENTS)
    project.model(
        "dim", "select * from {{ target.schema }}.events", keys="id", sequence_by="seq", stored_as_scd_type=scd_type
    )
    assert project.run("dim").metrics("dim") == (0, 0)
    assert project.rows("dim") == []
    project.replace_rows("events", [(1, "a", 1)])
    assert project.run("dim").metrics("dim") == (1, 0)
    project.replace_rows("events", [])
    assert project.run("dim").metrics("dim") == (0, 0)


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # DuckDB allows one writer per file
def test_concurrent_runs_of_one_model_serialise_on_postgres(project: CdcProject) -> None:
    """Two `dbt run`s of the same model started together: the second waits for the first's
    transaction (advisory lock), then applies what is left; no duplicates, nothing lost."""

    project.create_table("events", V_EVENTS)
    project.model(
        "dim",
        "select * from {{ target.schema }}.events",
        keys="id",
        sequence_by="seq",
        stored_as_scd_type=2,
        pre_hook="select pg_sleep(1)",
    )
    project.replace_rows("events", [(k, f"v{s}", s) for k in range(1, 51) for s in (1, 2, 3)])
    first, second = _dbt_run_process(project, "first"), _dbt_run_process(project, "second")
    try:
        outputs = [process.communicate(timeout=300)[0].decode() for process in (first, second)]
    finally:  # never left running into the next test, which reuses this project's directory and schema
        for process in (first, second):
            process.kill()
            process.wait()
    assert first.returncode == 0 and second.returncode == 0, outputs
    assert len(project.rows("dim")) == 150
    assert project.query(f'select count(*) from {project.relation("dim")} where "__END_AT" is null') == [(50,)]
    history = project.query(f"select num_upserted_rows from {project.relation('dim__cdc_runs')} order by run_id")
    assert sorted(history) in ([(0,), (150,)], [(150,)])


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # DuckDB allows one writer per file
def test_concurrent_runs_are_stamped_in_commit_order_on_postgres(project: CdcProject) -> None:
    """A run that waited for the lock is stamped after the commit of the run it waited for:
    each run holds the lock 2 s past its stamp (a post-hook inside its transaction), so the
    stamps of two runs that overlapped are at least 2 s apart, in run_id order, and the change
    feed's `_committed_at` is its run's `applied_at`."""
    project.create_table("events", V_EVENTS)
    config = {"keys": "id", "sequence_by": "seq", "change_feed": True}
    project.model("dim", "select * from {{ target.schema }}.events", **config)
    project.replace_rows("events", [(1, "a", 1)])
    project.run("dim")
    hooks = {"pre_hook": "select pg_sleep(1)", "post_hook": "select pg_sleep(2)"}
    project.model("dim", "select * from {{ target.schema }}.events", **config, **hooks)
    project.replace_rows("events", [(1, "b", 2), (2, "c", 1)])
    first, second = _dbt_run_process(project, "first"), _dbt_run_process(project, "second")
    try:
        outputs = [process.communicate(timeout=300)[0].decode() for process in (first, second)]
    finally:
        for process in (first, second):
            process.kill()
            process.wait()
    assert first.returncode == 0 and second.returncode == 0, outputs
    runs = project.query(f"select run_id, applied_at from {project.relation('dim__cdc_runs')} order by run_id")
    assert [run_id for run_id, _ in runs] == [1, 2, 3]
    assert (runs[2][1] - runs[1][1]).total_seconds() >= 2, runs
    feed = project.relation("dim__cdc_changes")
    stamps = project.query(f"select distinct _run_id, _committed_at from {feed} order by 1")
    assert stamps == runs[:2]  # the third run found its events applied: no change


@contextmanager
def _holding_duckdb(project: CdcProject, gate: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A `dbt run` that holds the DuckDB file: its model's pre-hook reads the named pipe
    `gate`, which blocks until the test writes a line, while the run's connection holds the file. Yields
    once the pre-hook has the pipe open; the line is written when the block ends."""
    process = _dbt_run_process(project, "first", "--vars", "{hold: true}")
    writer = None
    try:
        deadline = time.monotonic() + 120
        while writer is None and time.monotonic() < deadline and process.poll() is None:
            try:  # a FIFO opens for writing once a reader has it open
                writer = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.1)
        assert writer is not None, process.communicate()[0].decode()
        yield process
        os.write(writer, b"go\n")
        os.close(writer)
        writer = None
        output = process.communicate(timeout=300)[0].decode()
        assert process.returncode == 0, output
    finally:  # never left running into the next test, which reuses this project's directory
        if writer is not None:
            os.close(writer)
        process.kill()
        process.wait()


@pytest.mark.parametrize("project", ["duckdb"], indirect=True)
def test_a_second_run_on_a_held_duckdb_file_fails_before_anything_runs(project: CdcProject, tmp_path: Path) -> None:
    """DuckDB lets one process open a database file, and a dbt invocation holds it from its first
    statement to its end. A second `dbt run` meanwhile fails when dbt-duckdb opens the file, before
    any model starts, so nothing of the package runs: DuckDB's "Could not set lock on file" (with
    dbt-duckdb 1.11 on DuckDB 2.0, a Python traceback after it). It read and wrote nothing; the
    first run is unaffected. With dbt-duckdb's `retries: {connect_attempts: ...}` in the profile the
    second run waits for the file instead, then applies what is left (docs/operations.md,
    "Guarantees", "Concurrent runs")."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    project.create_table("events", V_EVENTS)
    hook = (
        "{% if var('hold', false) %}"
        f"select * from read_csv('{gate}', header = false, auto_detect = false, columns = {{'line': 'varchar'}})"
        "{% else %}select 1{% endif %}"
    )
    project.model("dim", "select * from {{ target.schema }}.events", keys="id", sequence_by="seq", pre_hook=hook)
    project.replace_rows("events", [(1, "a", 1), (2, "b", 1)])
    with _holding_duckdb(project, gate):
        second = _dbt_run_process(project, "second")
        output = second.communicate(timeout=300)[0].decode()
        assert second.returncode != 0
        assert "Could not set lock on file" in output and "START" not in output, output
    assert project.rows("dim") == [(1, "a", 1), (2, "b", 1)]
    assert project.query(f"select count(*) from {project.relation('dim__cdc_runs')}") == [(1,)]

    project.profile_settings(retries={"connect_attempts": 8})  # waits up to 2^8 - 1 s
    project.insert("events", [(3, "c", 1)])
    with _holding_duckdb(project, gate):
        second = _dbt_run_process(project, "waiting")
        log = project.path / "logs_waiting" / "dbt.log"
        while second.poll() is None and "Concurrency:" not in (log.read_text() if log.exists() else ""):
            time.sleep(0.1)  # until it opens the file, right after logging its concurrency
        time.sleep(2)
        assert second.poll() is None  # waiting for the file
    output = second.communicate(timeout=300)[0].decode()
    assert second.returncode == 0, output
    runs = project.query(f"select num_upserted_rows from {project.relation('dim__cdc_runs')} order by run_id")
    assert runs == [(2,), (1,), (0,)]  # the first run applied the new event; the second found nothing left


@pytest.mark.parametrize("project", ["postgres"], indirect=True)  # needs a server outliving the client
def test_killed_dbt_process_changes_nothing_on_postgres(project: CdcProject) -> None:
    """dbt killed (SIGKILL) after the writes, before the commit: PostgreSQL rolls the open
    transaction back, and the next run converges."""
    project.create_table("events", V_EVENTS)
    config = {"keys": "id", "sequence_by": "seq", "stored_as_scd_type": 2}
    project.model("dim", "select * from {{ target.schema }}.events", **config)
    project.replace_rows("events", [(1, "a", 1), (2, "b", 1)])
    project.run("dim")
    before = project.snapshot(*project.cdc_tables("dim"))
    project.model("dim", "select * from {{ target.schema }}.events", **config, post_hook="select pg_sleep(2)")
    project.replace_rows("events", [(1, "a2", 2), (3, "c", 1)])
    process = _dbt_run_process(project, "killed")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the run sits in its post-hook, writes done
        if project.query(
            "select count(*) from pg_stat_activity where query like '%pg_sleep(2)%' and pid <> pg_backend_pid()"
        )[0][0]:
            break
        time.sleep(0.1)
    process.kill()
    process.wait()
    time.sleep(2.5)  # the server notices the lost client when the sleep ends, and rolls back
    assert project.snapshot(*project.cdc_tables("dim")) == before
    project.model("dim", "select * from {{ target.schema }}.events", **config)
    assert project.run("dim").metrics("dim") == (3, 0)
    assert len(project.rows("dim")) == 4


@pytest.mark.parametrize("scd_type", [1, 2])
def test_sequence_type_change_between_runs_fails_clearly(project: CdcProject, scd_type: int) -> None:
    project.create_table("events", V_EVENTS)
    project.model(
        "dim", "select * from {{ target.schema }}.events", keys="id", sequence_by="seq", stored_as_scd_type=scd_type
    )
    project.replace_rows("events", [(1, "a", 1)])
    project.run("dim")
    before = project.snapshot(*project.cdc_tables("dim"))
    project.model(
        "dim",
        f"select id, v, cast(seq as {project.type_name('varchar')}) as seq from {{{{ target.schema }}}}.events",
        keys="id",
        sequence_by="seq",
        stored_as_scd_type=scd_type,
    )
    project.replace_rows("events", [(1, "b", 2)])
    outcome = project.run("dim", expect_success=False)
    assert "is now of type" in outcome.error and "--full-refresh" in outcome.error
    assert project.snapshot(*project.cdc_tables("dim")) == before
