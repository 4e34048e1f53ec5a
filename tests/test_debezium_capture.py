"""A real feed end to end: a PostgreSQL workload (inserts, updates of TOASTed rows under REPLICA
IDENTITY DEFAULT, primary-key changes, deletes, interleaved transactions, a truncate) captured by
real Debezium 3.6 (its PostgreSQL connector on pgoutput, debezium_capture.py), landed as a Kafka
sink lands it (JSON envelope columns, one JSON value column with tombstones, and the flattened
ExtractNewRecordState form), shuffled, split into batches and applied by auto_cdc.debezium()
models: every SCD1 target equals its source table, and so do the current rows of every SCD2
history."""

from __future__ import annotations

import datetime
import json
import random
import secrets
from collections.abc import Iterator
from typing import Any

import psycopg2
import pytest
from test_debezium import FLAT_FIELDS, adapter_types

import debezium_capture
import postgres_server
from debezium_capture import Capture, Record
from harness import SPARK, CdcProject, derived_name

pytestmark = pytest.mark.spark  # the capture landed into Iceberg tables too

SOURCE_COLUMNS = {
    "id": "integer",
    "name": "text",
    "notes": "text",
    "balance": "numeric(12,2)",
    "updated_at": "timestamp",
    "born": "date",
    "seen_at": "timestamptz",
}
COLUMNS = (
    "{'id': 'integer', 'name': 'text', 'notes': 'text', 'balance': 'decimal(12,2)',"
    " 'updated_at': 'timestamp', 'born': 'date', 'seen_at': 'timestamptz'}"
)
SCD1 = {
    "keys": ["id"],
    "sequence_by": "_dbz_sequence",
    "apply_as_deletes": "_dbz_op = 'd'",
    "apply_as_truncates": "_dbz_op = 't'",
    "columns_to_update": "_dbz_columns",
    "checkpoint_column": "loaded",
    "except_column_list": ["_dbz_op", "_dbz_sequence", "_dbz_columns", "loaded"],
}
SCD2 = {
    **{k: v for k, v in SCD1.items() if k != "apply_as_truncates"},
    "stored_as_scd_type": 2,
    "track_history_except_column_list": ["_dbz_committed_at"],
}
NAMES = ", ".join(SOURCE_COLUMNS)
SEEN = datetime.datetime(2026, 6, 1, tzinfo=datetime.timezone.utc)


def _big() -> str:
    """About 10 kB that does not compress below PostgreSQL's TOAST threshold: stored out of line,
    so an update that leaves it alone sends Debezium's placeholder."""
    return secrets.token_hex(5000)


def _rows(ids: range, big: bool = False) -> list[tuple[Any, ...]]:
    return [
        (
            i,
            f"name {i}",
            _big() if big and i % 2 else f"notes {i}",
            f"{i}.{i % 100:02d}",
            datetime.datetime(2026, 1, 1, 12, 0, 0, 123456) + datetime.timedelta(hours=i),
            datetime.date(1990, 1, 1) + datetime.timedelta(days=i),
            SEEN + datetime.timedelta(seconds=i, microseconds=7),
        )
        for i in ids
    ]


def _insert(cursor: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    for row in rows:
        cursor.execute(f"insert into {table} ({NAMES}) values (%s, %s, %s, %s, %s, %s, %s)", row)


def _workload(server: postgres_server.PostgresServer) -> None:
    """customers: everything but a truncate; accounts: a truncate between its other changes."""

    def connect() -> Any:
        connection = psycopg2.connect(host=server.host, port=server.port, user=server.user, dbname="postgres")
        connection.autocommit = True
        return connection

    first, second = connect(), connect()
    with first, second:
        a, b = first.cursor(), second.cursor()
        _insert(a, "customers", _rows(range(41, 61), big=True))
        a.execute("update customers set name = name || ' (renamed)' where id between 1 and 10")  # TOAST placeholders
        a.execute("update customers set notes = %s where id = 3", (_big(),))
        a.execute("update customers set id = id + 1000 where id in (11, 12)")  # a key change: delete and insert
        a.execute("delete from customers where id in (13, 14, 41)")
        a.execute("begin")  # interleaved: the first to write commits last
        a.execute("insert into customers (id, name) values (70, 'first to write')")
        b.execute("begin")
        b.execute("update customers set name = 'second to write', balance = 1.5 where id = 15")
        b.execute("insert into customers (id, name) values (71, 'committed first')")
        b.execute("commit")
        a.execute("update customers set name = 'written after the other committed' where id = 15")
        a.execute("commit")
        a.execute("begin")
        a.execute("update customers set name = 'twice, first' where id = 16")
        a.execute("update customers set name = 'twice, second', updated_at = null where id = 16")
        a.execute("delete from customers where id = 17")
        a.execute("insert into customers (id, name) values (17, 'again')")
        a.execute("commit")
        a.execute("update customers set balance = balance * 2 where id between 42 and 50")

        _insert(a, "accounts", _rows(range(41, 46)))
        a.execute("update accounts set name = 'before the truncate' where id = 2")
        a.execute("truncate accounts")
        _insert(a, "accounts", _rows(range(1, 4), big=True))  # keys seen before the truncate, again
        _insert(a, "accounts", _rows(range(90, 93)))
        a.execute("update accounts set name = 'after the truncate' where id in (1, 90)")
        a.execute("delete from accounts where id = 91")


@pytest.fixture(scope="module")
def feed() -> Iterator[tuple[Capture, dict[str, list[tuple[Any, ...]]]]]:
    """The workload's capture, and the source tables' rows after it."""
    server = postgres_server.start(settings=debezium_capture.LOGICAL_SETTINGS)
    try:
        columns = ", ".join(f"{name} {data_type}" for name, data_type in SOURCE_COLUMNS.items())
        with psycopg2.connect(host=server.host, port=server.port, user=server.user, dbname="postgres") as connection:
            cursor = connection.cursor()
            for table in ("customers", "accounts"):
                cursor.execute(f"create table {table} ({columns}, primary key (id))")
                cursor.execute(f"alter table {table} replica identity default")
                _insert(cursor, table, _rows(range(1, 41), big=True))  # read by the initial snapshot (op 'r')
        captured = debezium_capture.capture(
            server, "postgres", ["public.customers", "public.accounts"], lambda: _workload(server)
        )
        with psycopg2.connect(host=server.host, port=server.port, user=server.user, dbname="postgres") as connection:
            cursor = connection.cursor()
            tables = {}
            for table in ("customers", "accounts"):
                cursor.execute(f"select {NAMES} from {table}")
                tables[table] = sorted(_normalised(row) for row in cursor.fetchall())
        yield captured, tables
    finally:
        server.stop()


def _normalised(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Timestamps with time zone in UTC (DuckDB's driver gives them in the local zone)."""
    return tuple(
        value.astimezone(datetime.timezone.utc) if isinstance(value, datetime.datetime) and value.tzinfo else value
        for value in row
    )


def _land(project: CdcProject, records: list[Record], batch: int) -> None:
    """Each source table's records, as a Kafka sink lands them, with the batch's arrival number:
    the envelope's fields in JSON columns (tombstones left out), and whole values in one JSON
    column (tombstones as NULL)."""
    json_type = {"duckdb": "json", "postgres": "jsonb"}.get(project.adapter, "text")  # Spark: a string
    for table in ("customers", "accounts"):
        values = [record.value for record in records if record.table == f"public.{table}"]
        if not project.exists(f"{table}_envelopes"):
            project.create_table(
                f"{table}_envelopes",
                {"before": json_type, "after": json_type, "source": json_type, "op": "text", "loaded": "integer"},
            )
            project.create_table(f"{table}_values", {"value": json_type, "loaded": "integer"})
        project.insert(f"{table}_values", [(None if value is None else json.dumps(value), batch) for value in values])
        project.insert(
            f"{table}_envelopes",
            [
                (
                    *(
                        None if value[part] is None else json.dumps(value[part])
                        for part in ("before", "after", "source")
                    ),
                    value["op"],
                    batch,
                )
                for value in values
                if value is not None
            ],
        )


# A sink that writes the envelope typed lands before, after and source as structs (Spark): the
# same records, as from_json with the table's schema reads them.
IMAGE = "struct<id:int,name:string,notes:string,balance:string,updated_at:bigint,born:int,seen_at:string>"
SOURCE = "struct<sequence:string,lsn:bigint,ts_ms:bigint>"


def _land_structs(project: CdcProject) -> None:
    """customers' envelopes, landed again as structs (all of them so far: the table is replaced)."""
    structs = project.relation("customers_structs")
    project.execute(f"drop table if exists {structs}")
    project.execute(
        f"create table {structs} using iceberg as select from_json(`before`, '{IMAGE}') as `before`,"
        f" from_json(`after`, '{IMAGE}') as `after`, from_json(`source`, '{SOURCE}') as `source`, op, loaded"
        f" from {project.relation('customers_envelopes')}"
    )


def _land_flattened(project: CdcProject, records: list[Record], batch: int) -> None:
    """The flattened rows in columns of the JSON converter's types, as a sink creates them."""
    columns = {
        "id": "integer",
        "name": "text",
        "notes": "text",
        "balance": "text",
        "updated_at": "bigint",
        "born": "integer",
        "seen_at": "text",
        **FLAT_FIELDS,
    }
    if not project.exists("customers_flat"):
        project.create_table("customers_flat", columns)
    rows = [
        (*(record.value.get(name) for name in columns if name != "loaded"), batch)
        for record in records
        if record.table == "public.customers" and record.value is not None
    ]
    project.insert("customers_flat", rows)


def _models(project: CdcProject) -> None:
    def debezium(table: str, args: str) -> str:
        return "select * from {{ auto_cdc.debezium(" + repr(project.relation(table)) + ", " + args + ") }}"

    envelope = adapter_types(project, f"columns={COLUMNS}, extra_columns=['loaded']")
    if project.adapter == SPARK:
        project.model("customers_structs_scd1", debezium("customers_structs", envelope), **SCD1)
    for table in ("customers", "accounts"):
        project.model(f"{table}_scd1", debezium(f"{table}_envelopes", envelope), **SCD1)
        project.model(f"{table}_scd2", debezium(f"{table}_values", f"{envelope}, envelope_column='value'"), **SCD2)
    flattened = adapter_types(project, f"columns={COLUMNS}, form='flattened', extra_columns=['loaded']")
    project.model("customers_flat_scd1", debezium("customers_flat", flattened), **SCD1)
    project.model("customers_flat_scd2", debezium("customers_flat", flattened), **SCD2)


def _current(project: CdcProject, model: str) -> list[tuple[Any, ...]]:
    where = project.dialect(' where "__END_AT" is null') if "_scd2" in model else ""
    if project.adapter != SPARK:
        return sorted(
            _normalised(row) for row in project.query(f"select {NAMES} from {project.relation(model)}{where}")
        )
    # Spark's driver gives a point in time in the local zone: read it as microseconds.
    names = NAMES.replace("seen_at", "unix_micros(seen_at)")
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return sorted(
        (*row[:-1], None if row[-1] is None else epoch + datetime.timedelta(microseconds=row[-1]))
        for row in project.query(f"select {names} from {project.relation(model)}{where}")
    )


@pytest.mark.parametrize(
    "seed", [1, pytest.param(2, marks=pytest.mark.not_on_spark("one shuffle on Spark: the suite's clock"))]
)
def test_a_real_debezium_feed_shuffled_into_batches_equals_its_source(
    project: CdcProject, feed: tuple[Capture, dict[str, list[tuple[Any, ...]]]], seed: int
) -> None:
    captured, source = feed
    envelopes, flattened = list(captured.envelope_records), list(captured.flattened_records)
    shuffle = random.Random(seed)
    shuffle.shuffle(envelopes)
    shuffle.shuffle(flattened)
    _models(project)
    batches = 4
    for batch in range(batches):
        _land(project, envelopes[batch::batches], batch)
        _land_flattened(project, flattened[batch::batches], batch)
        if project.adapter == SPARK:
            _land_structs(project)
        outcome = project.dbt("run")
        if not outcome.success:  # a moved row's TOASTed value not landed yet: the next run reads it again
            assert "the old key's events have not landed yet" in outcome.error, outcome.error
    project.run()
    structs = ["customers_structs_scd1"] if project.adapter == SPARK else []
    for model in ("customers_scd1", "customers_scd2", "customers_flat_scd1", "customers_flat_scd2", *structs):
        assert _current(project, model) == source["customers"], model
    for model in ("accounts_scd1", "accounts_scd2"):
        assert _current(project, model) == source["accounts"], model
    unavailable = project.query(
        f"select count(*) from {project.relation('customers_scd2')} where notes like '%debezium_unavailable%'"
    )
    assert unavailable == [(0,)]
    # Each model knows the source's commit times (`_dbz_committed_at`): its newest, and how far
    # behind it the last run ended (docs/monitoring.md).
    for model, records, field in [
        ("customers_scd1", captured.envelope_records, "source"),
        ("customers_scd2", captured.envelope_records, "source"),
        ("customers_flat_scd1", captured.flattened_records, "__source_ts_ms"),
        ("accounts_scd1", captured.envelope_records, "source"),
    ]:
        _check_lag(project, model, _newest_commit(records, model.split("_")[0], field))


def _newest_commit(records: list[Record], table: str, field: str) -> datetime.datetime:
    stamps = [
        record.value["source"]["ts_ms"] if field == "source" else record.value[field]
        for record in records
        if record.table == f"public.{table}" and record.value is not None
    ]
    return datetime.datetime.fromtimestamp(max(stamps) / 1000, tz=datetime.timezone.utc)


def _check_lag(project: CdcProject, model: str, newest: datetime.datetime) -> None:
    runs = project.relation(derived_name(model, "__cdc_runs"))
    ((max_commit_time, lag, duration, applied_at),) = project.query(
        f"select max_commit_time, lag_s, duration_s, applied_at from {runs}"
        f" where run_id = (select max(run_id) from {runs})"
    )
    assert max_commit_time.astimezone(datetime.timezone.utc) == newest, model
    behind = (applied_at.astimezone(datetime.timezone.utc) - newest).total_seconds()
    assert 0 < behind < 3600 and abs(float(lag) - float(duration) - behind) < 0.01, (model, lag, duration, behind)


def test_the_feed_has_what_the_macros_handle(feed: tuple[Capture, dict[str, list[tuple[Any, ...]]]]) -> None:
    """What the feed really holds, as docs/debezium.md says: the placeholder for unchanged TOASTed
    values, a key change as a delete and a create at one LSN, a truncate in the envelope feed and
    none in the flattened one (ExtractNewRecordState drops it), LSNs that do not follow commit
    order, and a NULL first element of `source.sequence` in the snapshot's rows."""
    captured, _ = feed
    events = [record.value for record in captured.envelope_records if record.value is not None]
    ops = [event["op"] for event in events]
    assert {"r", "c", "u", "d", "t"} <= set(ops)
    assert any(event["op"] == "u" and event["after"]["notes"] == "__debezium_unavailable_value" for event in events)
    assert not [record for record in captured.flattened_records if record.value and record.value["__op"] == "t"]
    assert all(json.loads(event["source"]["sequence"])[0] is None for event in events if event["op"] == "r")
    lsns = [event["source"]["lsn"] for event in events if event["op"] != "r"]
    assert lsns != sorted(lsns), "the interleaved transactions arrive in commit order, not LSN order"
    deleted_11 = next(event for event in events if event["op"] == "d" and event["before"]["id"] == 11)
    created_1011 = next(event for event in events if event["op"] == "c" and event["after"]["id"] == 1011)
    assert deleted_11["source"]["lsn"] == created_1011["source"]["lsn"]
