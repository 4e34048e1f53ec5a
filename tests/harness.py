"""A throwaway dbt project that uses the auto_cdc package, on DuckDB or PostgreSQL (and Spark,
and DuckDB under dbt v2).

Tests write models, load source rows with plain SQL, run dbt in-process (dbt v2: its CLI, in a
process of its own) and read tables back through the database's own driver. Nothing is mocked:
the SQL runs on real databases.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import os
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import duckdb
import psycopg2
from dbt.cli.main import dbtRunner, dbtRunnerResult

import v2_env
from postgres_server import PostgresServer

REPO_ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ("duckdb", "postgres")
# The Spark tier (tests marked `spark`, conftest.py): a local Spark with Iceberg tables.
SPARK = "spark"
# The v2 tier (tests marked `v2`): DuckDB, run by dbt v2 (the Rust engine, v2_env.py).
V2 = "v2"
# dbt's own model configs: everything else a test sets is an auto_cdc config, which dbt v2 takes
# only under `meta` (and dbt-core 1.x at the top level or there).
DBT_CONFIGS = {
    "materialized",
    "enabled",
    "unique_key",
    "on_schema_change",
    "contract",
    "full_refresh",
    "tags",
    "pre_hook",
    "post_hook",
    "persist_docs",
    "grants",
    "alias",
    "schema",
    "file_format",
    "tblproperties",
    "sql_header",
    "indexes",
    "unlogged",
    "incremental_strategy",
    "batch_size",
    "meta",
}
# Column types the tests write in PostgreSQL/DuckDB spelling, as Spark spells them.
SPARK_TYPES = {
    "varchar": "string",
    "text": "string",
    "integer": "int",
    "timestamptz": "timestamp",
    "varchar[]": "array<string>",
    "text[]": "array<string>",
}
# Random cases per property test and adapter (34 tests, each case several dbt runs). Every run
# draws new cases; raise it for a deeper search (e.g. AUTO_CDC_HYPOTHESIS_EXAMPLES=200
# overnight). With 10 the DuckDB and PostgreSQL property tests take 28 worker-minutes; CI
# (.ci/run) draws 6 to stay within its budget (CONTRIBUTING.md, "The suite's clock").
HYPOTHESIS_EXAMPLES = int(os.environ.get("AUTO_CDC_HYPOTHESIS_EXAMPLES", "10"))


def new_schema_name() -> str:
    """A PostgreSQL schema name of its own (workers share one server with AUTO_CDC_PGPORT)."""
    return f"cdc_{uuid.uuid4().hex[:12]}"


def invoke_dbt(command: list[str], callbacks: Sequence[Any] = ()) -> dbtRunnerResult:
    """dbtRunner().invoke(command), in a thread of its own. dbt-common names each adapter
    behavior flag's source with inspect.stack() at every adapter registration (once per
    invocation), and that walks the whole stack reading source lines: 30-60 ms per flag under
    pytest, xdist and hypothesis frames, most of a small run's time; a new thread's stack is
    a few frames (0.4 ms)."""
    outcome: dict[str, Any] = {}

    def invoke() -> None:
        try:
            outcome["result"] = dbtRunner(callbacks=list(callbacks)).invoke(command)
        except BaseException as error:  # re-raised in the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=invoke, name="dbt")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def invoke_dbt_v2(
    v2: V2Target, args: Sequence[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[bool, list[Any], str, list[str], str, list[str]]:
    """dbt v2's CLI in a process of its own, read from its JSON log lines: (success, the nodes'
    results, the errors, the warnings, the invocation id, the macros' log lines). A result has a node (name,
    resource_type), a status and a message: for an auto_cdc model the metrics line it logs (v2
    reports no adapter response of a materialization: record/runs.sql, `report_result`)."""
    done = subprocess.run(
        [str(v2.binary), *args, "--log-format", "json"],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        env={**v2_env.environment(v2.driver_home), **(env or {})},
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    messages: dict[str, str] = {}
    results = []
    for event in events:
        info, data = event["info"], event.get("data", {})
        node = data.get("node_info", {})
        if info["name"] == "JinjaLogInfo" and "num_upserted_rows=" in info["msg"]:
            messages[node.get("unique_id", "")] = info["msg"].split(": ", 2)[-1]
        if info["name"] == "NodeFinished":
            results.append(
                SimpleNamespace(
                    node=SimpleNamespace(name=node["node_name"], resource_type=node["resource_type"]),
                    status=data["run_result"]["status"],
                    message=messages.get(node["unique_id"], data["run_result"].get("message", "")),
                    failures=data["run_result"].get("num_failures"),
                    adapter_response={},
                )
            )
    errors = [event["info"]["msg"] for event in events if event["info"]["level"] == "error"]
    if done.returncode != 0 and not errors:
        errors.append(done.stderr or done.stdout)
    warnings = [event["info"]["msg"] for event in events if event["info"]["level"] == "warn"]
    (invocation_id,) = {event["info"]["invocation_id"] for event in events}
    logs = [event["info"]["msg"] for event in events if event["info"]["name"] == "JinjaLogInfo"]
    return done.returncode == 0, results, "\n".join(errors), warnings, invocation_id, logs


# The package's limit for the names it derives (macros/_util/identifiers.sql), on every adapter.
MAX_IDENTIFIER_LENGTH = 63


def derived_name(base: str, suffix: str) -> str:
    """The name auto_cdc gives a table it derives from `base` (macro `derived_name`): `base ~ suffix`,
    or when that is too long, `base` cut and a hash of the full name."""
    full = base + suffix
    if len(full) <= MAX_IDENTIFIER_LENGTH:
        return full
    digest = hashlib.md5(full.encode("utf-8")).hexdigest()[:8]
    return f"{base[: MAX_IDENTIFIER_LENGTH - len(suffix) - 9]}_{digest}{suffix}"


@dataclass
class RunOutcome:
    success: bool
    results: list[Any]
    error: str
    warnings: list[str]
    invocation_id: str  # dbt's id of this invocation, as in run_results.json `metadata.invocation_id`
    project: CdcProject = field(repr=False)
    logs: list[str] = field(default_factory=list, repr=False)  # what macros logged (`log(..., info=true)`)
    debug_logs: list[str] = field(default_factory=list, repr=False)  # and at debug level (dbt-core only)

    def result(self, node_name: str) -> Any:
        for result in self.results:
            if result.node.name == node_name:
                return result
        raise KeyError(node_name)

    def message(self, node_name: str) -> str:
        """The node's message, as in its log line and run_results.json (a contract with users)."""
        return str(self.result(node_name).message)

    def metrics(self, node_name: str) -> tuple[int, int]:
        """(num_upserted_rows, num_deleted_rows) of this invocation's run of the model, from where
        they are stored as data: the model's run history row with this invocation's id. They must
        agree with the node's adapter response in run_results (code AUTO_CDC, rows_affected their
        sum); under dbt v2, which reports no adapter response of a materialization, with its log
        line. An invocation that recorded no run (`--empty`, a snapshot model with no new snapshot)
        applied nothing: (0, 0)."""
        recorded = self.project.recorded_runs(node_name, self.invocation_id)
        assert len(recorded) <= 1, f"{len(recorded)} run history rows for invocation {self.invocation_id}"
        upserted, deleted = recorded[0] if recorded else (0, 0)
        if self.project.dbt_v2:
            expected = f"num_upserted_rows={upserted} num_deleted_rows={deleted}"
            assert self.message(node_name).startswith(expected), (self.message(node_name), recorded)
            return int(upserted), int(deleted)
        response = self.result(node_name).adapter_response
        assert response.get("code") == "AUTO_CDC", response
        assert response.get("rows_affected") == upserted + deleted, (response, recorded)
        return int(upserted), int(deleted)


class CdcProject:
    """One dbt project directory and one schema, on one adapter."""

    def __init__(
        self,
        path: Path,
        adapter: str,
        postgres: PostgresServer | None,
        schema: str | None = None,
        spark: SparkTarget | None = None,
        v2: V2Target | None = None,
    ) -> None:
        self.path = path
        # Under dbt v2 the database is DuckDB: everything but running dbt is as on DuckDB.
        self.dbt_v2 = adapter == V2
        self.adapter = adapter = "duckdb" if self.dbt_v2 else adapter
        self.postgres = postgres
        self.spark = spark
        self.v2 = v2
        self.schema = "main" if adapter == "duckdb" else schema or new_schema_name()
        (path / "models").mkdir(parents=True, exist_ok=True)
        (path / "dbt_packages").mkdir(exist_ok=True)
        link = path / "dbt_packages" / "auto_cdc"
        if not link.exists():
            link.symlink_to(REPO_ROOT, target_is_directory=True)  # what `dbt deps` does for a local package
        (path / "dbt_project.yml").write_text(
            "name: cdc_test\nversion: '1.0.0'\nconfig-version: 2\nprofile: cdc_test\n"
            # No target/*.json: writing manifest.json and run_results.json is a third of each dbt
            # invocation here; tests that read an artifact pass --write-json.
            "flags:\n  send_anonymous_usage_stats: false\n  write_json: false\n"
        )
        (path / "packages.yml").write_text(f"packages:\n  - local: {REPO_ROOT}\n")
        if adapter == "duckdb":
            output = {"type": "duckdb", "path": str(path / "test.duckdb"), "threads": 1}
        elif adapter == SPARK:
            assert spark is not None
            output = {
                "type": "spark",
                "method": "session",
                "host": "localhost",  # required by dbt-spark, unused in session mode
                "schema": self.schema,
                "threads": 1,
                "server_side_parameters": spark.parameters,
            }
        else:
            assert postgres is not None
            output = {
                "type": "postgres",
                "host": postgres.host,
                "port": postgres.port,
                "user": postgres.user,
                "password": "",
                "dbname": "postgres",
                "schema": self.schema,
                "threads": 1,
            }
        self._output = output
        self._write_profile()
        if adapter == "postgres":
            self.execute(f'drop schema if exists "{self.schema}" cascade; create schema "{self.schema}"')
        if adapter == SPARK:
            self._drop_spark_schema()
            self.execute(f"create database {self.schema}")

    def _write_profile(self) -> None:
        profile = {"cdc_test": {"target": self.adapter, "outputs": {self.adapter: self._output}}}
        (self.path / "profiles.yml").write_text(json.dumps(profile))

    def profile_settings(self, **settings: Any) -> None:
        """More settings of the target in profiles.yml (e.g. dbt-duckdb's `retries`)."""
        self._output.update(settings)
        self._write_profile()

    def enable_snapshot_plugin(self, **config: Any) -> None:
        """DuckDB: load auto_cdc.plugin (snapshot_version_function) with the given plugin config."""
        self._output["plugins"] = [{"module": "auto_cdc.plugin", "config": config}]
        self._write_profile()

    # --- models and data -------------------------------------------------------------------

    def model(self, name: str, body: str, **config: Any) -> None:
        """Write models/<name>.sql with an auto_cdc config block (dbt v2: the auto_cdc configs
        under `meta`, the only place v2 takes a package's configs)."""
        config.setdefault("materialized", "auto_cdc")
        if self.dbt_v2:
            meta = {key: config.pop(key) for key in list(config) if key not in DBT_CONFIGS}
            config["meta"] = {**config.get("meta", {}), **meta}
        args = ", ".join(f"{key}={_jinja_literal(value)}" for key, value in config.items())
        (self.path / "models" / f"{name}.sql").write_text(f"{{{{ config({args}) }}}}\n{body}\n")

    def write(self, relative_path: str, text: str) -> None:
        """Any other project file (schema YAML, extra dbt_project.yml settings)."""
        path = self.path / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def relation(self, name: str) -> str:
        return f"{self.quote(self.schema)}.{self.quote(name)}"

    def quote(self, name: str) -> str:
        if self.adapter == SPARK:
            return "`" + name.replace("`", "``") + "`"
        return _quote(name)

    def dialect(self, sql: str) -> str:
        """SQL written with double-quoted identifiers, as this adapter quotes them."""
        return sql.replace('"', "`") if self.adapter == SPARK else sql

    def type_name(self, data_type: str) -> str:
        """A column type written in PostgreSQL/DuckDB spelling, as this adapter spells it."""
        return SPARK_TYPES.get(data_type, data_type) if self.adapter == SPARK else data_type

    def create_table(self, name: str, columns: dict[str, str]) -> None:
        ddl = ", ".join(f"{self.quote(column)} {self.type_name(data_type)}" for column, data_type in columns.items())
        self.execute(f"drop table if exists {self.relation(name)}")
        table_format = " using iceberg" if self.adapter == SPARK else ""
        self.execute(f"create table {self.relation(name)} ({ddl}){table_format}")

    def insert(self, table: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(row) for row in rows]
        if not rows:
            return
        if self.adapter == SPARK:  # Spark SQL takes no parameters: literals
            values = ", ".join("(" + ", ".join(_spark_literal(v) for v in row) + ")" for row in rows)
            self.execute(f"insert into {self.relation(table)} values {values}")
            return
        marks = ", ".join(["?" if self.adapter == "duckdb" else "%s"] * len(rows[0]))
        sql = f"insert into {self.relation(table)} values ({marks})"
        with self._connect() as (conn, cursor):
            cursor.executemany(sql, rows)
            conn.commit()

    def add_column(self, table: str, column: str, data_type: str) -> None:
        self.execute(f"alter table {self.relation(table)} add column {self.quote(column)} {self.type_name(data_type)}")

    def replace_rows(self, table: str, rows: Iterable[Sequence[Any]]) -> None:
        self.execute(f"delete from {self.relation(table)}")
        self.insert(table, rows)

    # --- running dbt -------------------------------------------------------------------------

    def dbt(self, *args: str) -> RunOutcome:
        if self.dbt_v2:
            return self._dbt_v2(args)
        command = [*args, "--project-dir", str(self.path), "--profiles-dir", str(self.path), "--target", self.adapter]
        warnings: list[str] = []
        logs: list[str] = []
        debug_logs: list[str] = []
        invocation_ids: set[str] = set()

        def collect(event: Any) -> None:
            invocation_ids.add(event.info.invocation_id)
            if event.info.level == "warn":
                warnings.append(event.info.msg)
            if event.info.name == "JinjaLogInfo":
                logs.append(event.info.msg)
            if event.info.name == "JinjaLogDebug":
                debug_logs.append(event.info.msg)

        result = invoke_dbt(command, callbacks=[collect])
        if self.adapter == "duckdb":
            self._release_duckdb()
        (invocation_id,) = invocation_ids  # every event of an invocation carries its id
        results = list(getattr(result.result, "results", None) or [])
        errors = [str(r.message) for r in results if str(r.status) in ("error", "fail")]
        if result.exception is not None:
            errors.append(str(result.exception))
        return RunOutcome(
            success=bool(result.success),
            results=results,
            error="\n".join(errors),
            warnings=warnings,
            invocation_id=invocation_id,
            project=self,
            logs=logs,
            debug_logs=debug_logs,
        )

    def _dbt_v2(self, args: Sequence[str]) -> RunOutcome:
        assert self.v2 is not None
        args = [*args, "--project-dir", str(self.path), "--profiles-dir", str(self.path), "--target", self.adapter]
        success, results, error, warnings, invocation_id, logs = invoke_dbt_v2(self.v2, args, self.path)
        return RunOutcome(success, results, error, warnings, invocation_id, project=self, logs=logs)

    def run(self, *select: str, full_refresh: bool = False, expect_success: bool = True) -> RunOutcome:
        args = ["run"]
        if select:
            args += ["--select", *select]
        if full_refresh:
            args.append("--full-refresh")
        outcome = self.dbt(*args)
        if outcome.success != expect_success:
            raise AssertionError(f"dbt run success={outcome.success}, expected {expect_success}:\n{outcome.error}")
        return outcome

    # --- reading back ------------------------------------------------------------------------

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        if self.adapter == SPARK:
            assert self.spark is not None
            return [tuple(row) for row in self.spark.session.sql(sql).collect()]
        with self._connect() as (_, cursor):
            cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()]

    def execute(self, sql: str) -> None:
        if self.adapter == SPARK:
            self.query(sql)
            return
        with self._connect() as (conn, cursor):
            cursor.execute(sql)
            conn.commit()

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        """All rows of a table, sorted (NULLs first), as tuples."""
        return sorted(self.query(f"select * from {self.relation(table)}"), key=_sort_key)

    def columns(self, table: str) -> list[str]:
        if self.adapter == SPARK:
            assert self.spark is not None
            return list(self.spark.session.table(self.relation(table)).columns)
        with self._connect() as (_, cursor):
            cursor.execute(f"select * from {self.relation(table)} where 1 = 0")
            return [d[0] for d in cursor.description]

    def exists(self, table: str) -> bool:
        if self.adapter == SPARK:
            return table.lower() in self.tables()
        found = self.query(
            "select count(*) from information_schema.tables "
            f"where table_schema = '{self.schema}' and table_name = '{table}'"
        )
        return found[0][0] > 0

    def tables(self) -> list[str]:
        """The schema's tables and views (Spark: lower-cased by the metastore)."""
        if self.adapter == SPARK:
            return [row[1] for row in self.query(f"show tables in {self.quote(self.schema)}") if not row[2]]
        return [
            row[0]
            for row in self.query(
                f"select table_name from information_schema.tables where table_schema = '{self.schema}'"
            )
        ]

    def snapshot(self, *tables: str) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of the given tables, to show that a failed run changed nothing."""
        return {table: self.rows(table) for table in tables if self.exists(table)}

    def cdc_tables(self, model: str) -> tuple[str, ...]:
        suffixes = ("__cdc_state", "__cdc_runs", "__cdc_versions", "__cdc_changes", "__cdc_quarantine")
        return (model, *(derived_name(model, suffix) for suffix in suffixes))

    def recorded_runs(self, model: str, invocation_id: str) -> list[tuple[Any, ...]]:
        """(num_upserted_rows, num_deleted_rows) of the model's run history rows of one invocation."""
        runs = derived_name(model, "__cdc_runs")
        if not self.exists(runs):
            return []
        return self.query(
            f"select num_upserted_rows, num_deleted_rows from {self.relation(runs)}"
            f" where invocation_id = '{invocation_id}'"
        )

    def drop_model_tables(self, model: str) -> None:
        for table in self.cdc_tables(model):
            self.execute(f"drop table if exists {self.relation(table)}")

    # --- connections ---------------------------------------------------------------------------

    def _connect(self) -> _Connection:
        return _Connection(self)

    @staticmethod
    def _release_duckdb() -> None:
        """dbt-duckdb keeps its database open between invocations (in-process, the test's own
        connections would share it, but the file stays locked for other processes, and a changed
        profile could not open it with another configuration). Dropping its environment with the
        public close_all_connections() lets the environment go, and with it the database."""
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager

        DuckDBConnectionManager.close_all_connections()

    def close(self) -> None:
        if self.adapter == "postgres":
            self.execute(f'drop schema if exists "{self.schema}" cascade')
        if self.adapter == SPARK:
            self._drop_spark_schema()

    def _drop_spark_schema(self) -> None:
        """Drops the database and its directory: dropping a database does not purge its tables'
        files, and a table created later under a dropped table's name would find them."""
        assert self.spark is not None
        self.execute(f"drop database if exists {self.schema} cascade")
        warehouse = Path(self.spark.parameters["spark.sql.warehouse.dir"])
        shutil.rmtree(warehouse / f"{self.schema}.db", ignore_errors=True)


@dataclass
class V2Target:
    """dbt v2's CLI and the folder that names its DuckDB driver (v2_env.py)."""

    binary: Path
    driver_home: Path


@dataclass
class SparkTarget:
    """The test process's Spark session and the configuration its profiles carry."""

    session: Any
    parameters: dict[str, str]


class _Connection:
    def __init__(self, project: CdcProject) -> None:
        self.project = project

    def __enter__(self) -> tuple[Any, Any]:
        if self.project.adapter == "duckdb":
            # A file dbt v2's DuckDB 1.5 opens is created in a storage format it reads.
            config = v2_env.STORAGE_COMPATIBILITY if self.project.dbt_v2 else {}
            self.conn = duckdb.connect(str(self.project.path / "test.duckdb"), config=config)
            return self.conn, self.conn
        server = self.project.postgres
        assert server is not None
        self.conn = psycopg2.connect(host=server.host, port=server.port, user=server.user, dbname="postgres")
        return self.conn, self.conn.cursor()

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _spark_literal(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return f"timestamp'{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"date'{value.isoformat()}'"
    if isinstance(value, (list, tuple)):
        return "array(" + ", ".join(_spark_literal(v) for v in value) + ")"
    if isinstance(value, float):
        return f"double('{value!r}')"
    if isinstance(value, decimal.Decimal):
        return f"{value}BD"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _sort_key(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple((value is not None, str(type(value)), value if value is not None else 0) for value in row)


def _jinja_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_jinja_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_jinja_literal(k)}: {_jinja_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)
