"""What is Spark's own (docs/spark.md): no transactions, so a run stopped between any two of its
writes leaves tables that the next run brings to what an uninterrupted run gives; the tables are
Iceberg tables; and the test set-up's Jackson shim. SPEC 7.1-7.5 and the configurations run on
Spark through the tests marked `spark` in the other modules."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import test_change_feed
import test_flows
import test_property
import test_property_snapshots
import yaml
from test_property import with_examples

import spark_env
from auto_cdc import spark
from harness import REPO_ROOT, CdcProject
from reference import sort_rows
from scenarios import (
    CITY_EVENTS,
    CONFIG,
    MODEL,
    SNAPSHOT_A,
    SNAPSHOT_B,
    built_snapshots,
    fails,
    load_snapshot,
    run_batches,
)
from spec_data import (
    FEED_MODEL,
    SPEC_7_1,
    SPEC_7_3,
    USERS_CDF,
    USERS_COLUMNS,
    USERS_CONFIG,
    USERS_RUN,
    USERS_SCD2_CONFIG,
)

pytestmark = pytest.mark.spark
ON_SPARK = pytest.mark.parametrize("project", ["spark"], indirect=True)


# Random cases per property test and mode on Spark, where each case costs several runs of 2-4 s.
SPARK_EXAMPLES = int(os.environ.get("AUTO_CDC_SPARK_EXAMPLES", "4"))


def _on_spark(property_test: object, share: float = 1) -> object:
    """`share`: of SPARK_EXAMPLES, for the tests whose cases cost the most."""
    return with_examples(property_test, max(1, int(SPARK_EXAMPLES * share)))


ON_SPARK_MODULE = pytest.mark.parametrize("module_project", ["spark"], indirect=True)
test_scd1_any_split_matches_the_reference = ON_SPARK_MODULE(
    pytest.mark.parametrize("mode", ["full_rows", "sequence_written", "columns_to_update"])(
        _on_spark(test_property.test_any_split_and_arrival_order_matches_the_reference)
    )
)
test_scd2_any_split_matches_the_reference = ON_SPARK_MODULE(
    pytest.mark.parametrize("mode", ["full_rows", "track_name_only"])(
        _on_spark(test_property.test_scd2_history_for_any_split_matches_the_reference)
    )
)
test_snapshots_in_any_runs_match_the_reference = ON_SPARK_MODULE(
    pytest.mark.parametrize("kind", ["scd1", "scd2"])(
        _on_spark(test_property_snapshots.test_versioned_snapshots_in_any_runs_match_the_reference)
    )
)

test_change_feed_replays_to_each_next_table = ON_SPARK_MODULE(
    pytest.mark.parametrize("scd_type", [1, 2])(
        _on_spark(test_change_feed.test_replaying_each_runs_changes_gives_the_next_table, share=0.5)
    )
)
test_flows_in_any_split_match_the_reference = ON_SPARK_MODULE(
    pytest.mark.parametrize("case", test_flows.PROPERTY_MODELS)(
        _on_spark(test_flows.test_flows_in_any_split_match_the_reference_on_the_union, share=0.5)
    )
)


class Killed(Exception):
    """The run's process died here (raised instead of running the statement)."""


@contextmanager
def killed_before(
    project: CdcProject, fragment: str, meanwhile: str | Callable[[], object] | None = None
) -> Iterator[list[str]]:
    """Every statement of the Spark session runs, until the first one containing `fragment`:
    that one raises instead, as if the process had died just before it; or with `meanwhile`,
    that first (another writer's statement, or a function), then the statement itself. Yields
    the statements that ran."""
    assert project.spark is not None
    session = project.spark.session
    original = session.sql
    ran: list[str] = []

    def sql(text: str, *args: object, **kwargs: object) -> object:
        if fragment in " ".join(text.split()):
            if meanwhile is None:
                raise Killed(fragment)  # dbt reports the message: the fragment
            meanwhile() if callable(meanwhile) else original(meanwhile).collect()
        ran.append(text)
        return original(text, *args, **kwargs)

    session.sql = sql
    try:
        yield ran
    finally:
        del session.sql  # the class's method again


EARLY = [e for e in USERS_CDF if e[4] <= 2]
LATE = [e for e in USERS_CDF if e[4] > 2]
# The writes of an applying run, in order: each table by one statement, the run recorded last.
TARGET, STATE, RUNS = "merge into {s}.users as", "merge into {s}.users__cdc_state", "insert into {s}.users__cdc_runs"
WRITES = {1: [TARGET, STATE, RUNS], 2: [TARGET, STATE, RUNS]}
EXPECTED = {1: SPEC_7_1, 2: sort_rows(SPEC_7_3)}


def _run_killed_before(project: CdcProject, fragments: list[str], write: int) -> None:
    """Runs `users`, killed before the write `fragments[write]`: it fails there, and only the
    writes before it ran."""
    writes = [fragment.format(s=project.schema) for fragment in fragments]
    with killed_before(project, writes[write]) as ran:
        outcome = project.dbt("run", "--select", "users")
    assert not outcome.success and writes[write] in outcome.error, outcome.error
    statements = [" ".join(statement.split()) for statement in ran]
    assert [w for w in writes if any(w in statement for statement in statements)] == writes[:write]


@ON_SPARK
@pytest.mark.parametrize(
    ("scd_type", "write"), [(scd, i) for scd, writes in WRITES.items() for i in range(len(writes))]
)
def test_a_run_killed_before_any_write_converges(project: CdcProject, scd_type: int, write: int) -> None:
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **(USERS_CONFIG if scd_type == 1 else USERS_SCD2_CONFIG))
    run_batches(project, EARLY, **USERS_RUN)
    project.replace_rows("users_cdf", LATE)
    _run_killed_before(project, WRITES[scd_type], write)
    assert project.query(f"select count(*) from {project.relation('users__cdc_runs')}") == [(1,)]  # not recorded
    # The next run reads the same events again and gives what one uninterrupted run gives.
    project.run("users")
    assert project.rows("users") == EXPECTED[scd_type]
    assert project.run("users").metrics("users") == (0, 0)
    assert project.rows("users") == EXPECTED[scd_type]
    # Each run's live tombstones (SCD1: 123's delete), though a run stopped after its state write
    # left the state ahead of the last run recorded, from which a run may count on.
    runs = project.relation("users__cdc_runs")
    tombstones = project.query(f"select num_live_tombstones from {runs} order by run_id")
    assert tombstones == ([(0,), (1,), (1,)] if scd_type == 1 else [(None,)] * 3)


# With a change feed the run's changes are written first, before the target (docs/spark.md).
FEED_WRITES = ["into {s}.users__cdc_changes", TARGET, STATE, RUNS]
CONSUMER = (
    "{{ config(materialized='incremental', file_format='iceberg') }}\n"
    "select * from ({{ auto_cdc.changes(ref('users')) }}) as c\n"
)


@ON_SPARK
@pytest.mark.parametrize(("scd_type", "write"), [(scd, i) for scd in (1, 2) for i in range(len(FEED_WRITES))])
def test_a_change_feed_run_killed_before_any_write_converges(project: CdcProject, scd_type: int, write: int) -> None:
    """Killed before each write, and run again once more events have arrived: every run's changes
    replay onto the table before it (no change missing, none twice, every preimage a row the
    table had), a consumer never sees the stopped run's rows, and reads on to the table."""
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **(USERS_CONFIG if scd_type == 1 else USERS_SCD2_CONFIG), change_feed=True)
    project.write("models/consumer.sql", CONSUMER)
    run_batches(project, EARLY, **USERS_RUN)
    project.run("consumer")
    project.replace_rows("users_cdf", LATE[:2])
    _run_killed_before(project, FEED_WRITES, write)
    project.run("consumer")  # reads nothing of the stopped run
    assert {row[-2] for row in project.rows("consumer")} == {1}
    project.replace_rows("users_cdf", LATE)  # the stopped run's events, and two more
    project.run("users")
    assert project.rows("users") == EXPECTED[scd_type]
    assert test_change_feed._replay_all(project, "users") == Counter(project.rows("users"))
    project.run("consumer")
    feed = project.rows("users__cdc_changes")
    assert project.rows("consumer") == feed  # every change once
    assert {row[-2] for row in feed} == {1, 2}


@ON_SPARK
def test_a_change_feed_run_killed_twice_converges(project: CdcProject) -> None:
    """Stopped after its target write, then its replay stopped after its change feed write: the
    third run still takes its preimages from the table as the last recorded run left it."""
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **USERS_CONFIG, change_feed=True)
    run_batches(project, EARLY, **USERS_RUN)
    project.replace_rows("users_cdf", LATE[:2])
    _run_killed_before(project, FEED_WRITES, 2)
    project.replace_rows("users_cdf", LATE[:3])
    _run_killed_before(project, FEED_WRITES, 1)
    project.replace_rows("users_cdf", LATE)
    project.run("users")
    assert project.rows("users") == SPEC_7_1
    assert test_change_feed._replay_all(project, "users") == Counter(project.rows("users"))
    assert project.query(f"select max(run_id) from {project.relation('users__cdc_runs')}") == [(2,)]


# A snapshot model writes its versions after its run; SCD2 from snapshots keeps no state.
VERSIONS = "insert into {s}.users__cdc_versions"
SNAPSHOT_WRITES = {1: [TARGET, STATE, RUNS, VERSIONS], 2: [TARGET, RUNS, VERSIONS]}


@ON_SPARK
@pytest.mark.parametrize(
    ("scd_type", "write"), [(scd, i) for scd, writes in SNAPSHOT_WRITES.items() for i in range(len(writes))]
)
def test_a_snapshot_run_killed_before_any_write_converges(project: CdcProject, scd_type: int, write: int) -> None:
    """Two versions in one run, stopped before each write: the next run reads them again and
    gives the table a full refresh over all versions gives."""
    built_snapshots(project, "column", SNAPSHOT_A, scd_type=scd_type)
    load_snapshot(project, 2, SNAPSHOT_B, replace=False)
    load_snapshot(project, 3, [(2, "Carmel"), (4, "Reno")], replace=False)
    _run_killed_before(project, SNAPSHOT_WRITES[scd_type], write)
    project.run("users")
    recovered = project.rows("users")
    assert project.run("users").metrics("users") == (0, 0)
    project.run("users", full_refresh=True)
    assert project.rows("users") == recovered
    assert len(recovered) == (2 if scd_type == 1 else 7)


@ON_SPARK
@pytest.mark.parametrize(
    ("written", "change_feed"),
    [(t, False) for t in ("users", "users__cdc_state", "users__cdc_runs")]
    + [(t, True) for t in ("users", "users__cdc_changes")],
)
def test_a_run_whose_tables_another_run_wrote_meanwhile_writes_nothing(
    project: CdcProject, written: str, change_feed: bool
) -> None:
    """Two runs of one model at once: the one that reads the tables before the other commits and
    writes after fails before its first write (the check is part of its MERGE into the target,
    or with a change feed of its change feed write, the first)."""
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **USERS_SCD2_CONFIG, change_feed=change_feed)
    run_batches(project, EARLY, **USERS_RUN)
    project.replace_rows("users_cdf", LATE)
    other_write = {
        "users": f"update {project.relation('users')} set name = 'other' where userId = 124",
        "users__cdc_state": f"update {project.relation('users__cdc_state')} set name = 'other' where userId = 124",
        "users__cdc_runs": f"update {project.relation('users__cdc_runs')} set num_events = 99",
        "users__cdc_changes": f"delete from {project.relation('users__cdc_changes')} where userId = 124",
    }[written]
    before = project.snapshot(*project.cdc_tables("users"))
    first_write = FEED_WRITES[0] if change_feed else TARGET
    with killed_before(project, first_write.format(s=project.schema), meanwhile=other_write) as ran:
        outcome = project.dbt("run", "--select", "users")
    assert not outcome.success
    assert "another run wrote" in outcome.error and "nothing was written" in outcome.error, outcome.error
    after = project.snapshot(*project.cdc_tables("users"))
    assert {table for table in before if before[table] != after[table]} == {written}  # the other run's write only
    # Without schema changes the snapshots were read as the run built its SQL: no working table.
    assert not [statement for statement in ran if "__cdc_tmp_fence" in statement]
    assert project.run("users").metrics("users") != (0, 0)  # run again: it applies the events


@ON_SPARK
def test_a_run_with_schema_changes_notes_the_snapshots_after_them(project: CdcProject) -> None:
    """A run that alters its tables first (the source gained a column) notes the snapshots among
    its writes, after those (which can commit on Iceberg): its own do not fail it, and a write
    by another run after them still fails it before its first data write."""
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **USERS_SCD2_CONFIG)
    run_batches(project, EARLY, **USERS_RUN)
    columns = ", ".join(project.quote(c) for c in ["userId", "name", "city", "__START_AT", "__END_AT"])

    def noted_after_the_alters(ran: list[str]) -> bool:
        noted = [i for i, sql in enumerate(ran) if "create table" in sql and "__cdc_tmp_fence" in sql]
        altered = [i for i, sql in enumerate(ran) if "alter table" in sql.lower()]
        return bool(noted and altered and max(altered) < noted[0])

    project.add_column("users_cdf", "zip", "varchar")
    project.replace_rows("users_cdf", [(*event, None) for event in LATE])
    with killed_before(project, TARGET.format(s=project.schema), meanwhile=lambda: None) as ran:
        assert project.dbt("run", "--select", "users").success
    assert noted_after_the_alters(ran)
    assert sort_rows(project.query(f"select {columns} from {project.relation('users')}")) == sort_rows(SPEC_7_3)

    project.add_column("users_cdf", "zip2", "varchar")
    project.replace_rows("users_cdf", [(126, "Lily", "Merida", "UPDATE", 7, None, None)])
    other_write = f"update {project.relation('users')} set name = 'other' where userId = 124"
    with killed_before(project, TARGET.format(s=project.schema), meanwhile=other_write) as ran:
        outcome = project.dbt("run", "--select", "users")
    assert "another run wrote" in outcome.error and "nothing was written" in outcome.error, outcome.error
    assert noted_after_the_alters(ran)
    assert project.query(f"select count(*) from {project.relation('users__cdc_runs')}") == [(2,)]  # not recorded
    assert project.run("users").metrics("users") == (2, 0)  # run again: it applies the event


@ON_SPARK
@pytest.mark.parametrize("scd_type", [1, 2])
def test_a_run_slower_than_its_retention_keeps_its_own_events(project: CdcProject, scd_type: int) -> None:
    """Each Spark statement has its own current_timestamp; a run has one time (the run context's `now`), so its
    own events and tombstones are not past tombstone_retention when it writes them, however long
    its statements take (CI found SCD2 compacting a run's own events)."""
    project.create_table("events", CITY_EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type, tombstone_retention=1)
    project.replace_rows(
        "events", [(1, "a", "x", "U", s) for s in (1, 2, 3)] + [(1, None, None, "D", 4), (2, "b", "y", "U", 1)]
    )
    with killed_before(project, f"merge into {project.schema}.dim__cdc_state", meanwhile=lambda: time.sleep(2.5)):
        project.run("dim")
    stored = project.rows("dim__cdc_state")
    if scd_type == 1:
        assert [row[:3] for row in stored] == [(1, None, 4), (2, 1, None)]  # key 1's tombstone stays
    else:
        assert [row[:2] for row in stored] == [(1, 1), (1, 2), (1, 3), (1, 4), (2, 1)]  # none compacted


@ON_SPARK
def test_a_run_without_deletes_leaves_a_state_of_tombstones_without_files_alone(project: CdcProject) -> None:
    """Its MERGE would change nothing (no tombstone stored, none added) and cost an Iceberg commit."""
    project.create_table("events", CITY_EVENTS)
    project.model("dim", MODEL, **{**CONFIG, "except_column_list": ["op"]})  # the target keeps `seq`
    state_commits = f"select count(*) from {project.relation('dim__cdc_state')}.snapshots"
    run_batches(project, [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)])
    commits = project.query(state_commits)
    assert run_batches(project, [(1, "a2", "x", "U", 2), (3, "c", "z", "U", 1)]) == [(2, 0)]
    assert project.query(state_commits) == commits
    assert run_batches(project, [(2, None, None, "D", 3)], [(2, "late", "y", "U", 2), (4, "d", "w", "U", 1)]) == [
        (0, 1),
        (1, 0),
    ]
    assert [row[0] for row in project.rows("dim__cdc_state")] == [2]  # the tombstone, which blocked the late event
    assert project.rows("dim") == [(1, "a2", "x", 2), (3, "c", "z", 1), (4, "d", "w", 1)]


@ON_SPARK
def test_the_model_tables_are_iceberg_tables(project: CdcProject) -> None:
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **USERS_CONFIG)
    run_batches(project, USERS_CDF, **USERS_RUN)
    for table in project.cdc_tables("users")[:3]:
        # Only Iceberg tables have the `snapshots` metadata table.
        snapshots = project.query(f"select count(*) from {project.relation(table)}.snapshots")
        assert snapshots[0][0] >= 1, table
    leftovers = [t for t in project.tables() if "__cdc_tmp_" in t]
    assert leftovers == []  # the run's working tables are dropped


@pytest.mark.spark_packages
def test_jackson_shim_relocates_every_reference(tmp_path: Path) -> None:
    shim = spark.jackson_shim(tmp_path)
    with zipfile.ZipFile(shim) as jar:
        names = jar.namelist()
        builder = jar.read("org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactoryBuilder.class")
    assert all(name.startswith("org/apache/iceberg/shaded/") for name in names if name.endswith(".class"))
    # The class refers to its relocated siblings only.
    assert b"org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactory" in builder
    assert b"com/fasterxml/jackson" not in builder.replace(b"org/apache/iceberg/shaded/com/fasterxml/jackson", b"")
    assert spark.jackson_shim(tmp_path) == shim  # built once
    assert spark.needs_jackson_shim(spark.iceberg_runtime_jar())  # PyPI's runtime lacks these classes
    assert not spark.needs_jackson_shim(shim)  # a runtime that has them gets no shim


@ON_SPARK
def test_a_file_format_other_than_iceberg_fails_before_writing(project: CdcProject) -> None:
    project.create_table("users_cdf", USERS_COLUMNS)
    project.model("users", FEED_MODEL, **USERS_CONFIG)
    run_batches(project, USERS_CDF[:2], **USERS_RUN)
    project.model("users", FEED_MODEL, **USERS_CONFIG, file_format="delta")
    fails(project, "`file_format`", "is not supported on spark yet", model="users")


@ON_SPARK
def test_file_format_and_tblproperties_configs(project: CdcProject) -> None:
    project.create_table("users_cdf", USERS_COLUMNS)
    tblproperties = {"write.merge.mode": "copy-on-write"}
    project.model("users", FEED_MODEL, **USERS_CONFIG, file_format="iceberg", tblproperties=tblproperties)
    run_batches(project, USERS_CDF, **USERS_RUN)
    assert project.rows("users") == SPEC_7_1
    properties = dict(project.query(f"show tblproperties {project.relation('users')}"))
    assert properties["write.merge.mode"] == "copy-on-write"  # the model's, over auto_cdc's default
    assert properties["write.delete.mode"] == "merge-on-read"


README_MODEL = """\
{{ config(materialized='auto_cdc', meta={
    'keys': ['userId'], 'sequence_by': 'sequenceNum', 'apply_as_deletes': "operation = 'DELETE'",
    'except_column_list': ['operation', 'sequenceNum']}) }}
select * from values
    (124, 'Raul', 'Oaxaca', 'INSERT', 1), (123, 'Isabel', 'Monterrey', 'INSERT', 1), (123, null, null, 'DELETE', 2)
    as events(userId, name, city, operation, sequenceNum)
"""
# The profile's values that name this machine's files: docs/spark.md shows them shortened.
PATH_PARAMETERS = (
    "spark.jars",
    "spark.sql.warehouse.dir",
    "spark.hadoop.javax.jdo.option.ConnectionURL",
    "spark.driver.extraJavaOptions",
)


def _docs_block(page: str, language: str) -> str:
    """The first ```language block of a page of the manual (docs/)."""
    return re.search(rf"```{language}\n(.*?)```", (REPO_ROOT / "docs" / page).read_text(), re.S)[1]


@pytest.mark.spark_packages
def test_the_readmes_local_spark_runs_a_fresh_project(tmp_path: Path) -> None:
    """docs/spark.md (once the README's "Spark"): in a new dbt project, the documented commands, as
    written there, build an auto_cdc model as Iceberg tables in one `dbt run` of its own (its own
    JVM, metastore and warehouse), and the profile they write is the one the page shows. The
    profile the README showed before this lacked the embedded metastore's settings and the
    Jackson shim: its first Iceberg CREATE TABLE waited on Hive lock tables for 4 minutes, then
    failed to find its lock."""
    project = tmp_path / "my_project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: my_project\nprofile: my_project\nconfig-version: 2\n")
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO_ROOT}\n")
    (project / "models" / "users.sql").write_text(README_MODEL)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SPARK_", "DBT_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # this environment's python and dbt
    if spark_env.java_home():
        env["JAVA_HOME"] = str(spark_env.java_home())

    def shell(commands: str) -> float:
        started = time.monotonic()
        done = subprocess.run(["bash", "-ec", commands], cwd=project, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return time.monotonic() - started

    shell("dbt deps")
    seconds = shell(_docs_block("spark.md", "bash"))
    assert seconds < 150, f"docs/spark.md's commands took {seconds:.0f} s"

    written = yaml.safe_load((project / "profiles.yml").read_text())
    shown = yaml.safe_load(_docs_block("spark.md", "yaml"))
    parameters = written["my_project"]["outputs"]["spark"].pop("server_side_parameters")
    shown_parameters = shown["my_project"]["outputs"]["spark"].pop("server_side_parameters")
    assert written == shown
    assert list(parameters) == list(shown_parameters)
    assert {k: v for k, v in parameters.items() if k not in PATH_PARAMETERS} == {
        k: v for k, v in shown_parameters.items() if k not in PATH_PARAMETERS
    }
    warehouse = project / "spark-local" / "warehouse" / "analytics.db"
    for table in ("users", "users__cdc_state", "users__cdc_runs"):
        assert list((warehouse / table / "metadata").glob("*.metadata.json")), f"{table} is no Iceberg table"
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    assert [(r["unique_id"], r["status"], r["adapter_response"].get("rows_affected")) for r in results] == [
        ("model.my_project.users", "success", 1)
    ]
