"""auto_cdc.debezium(): Debezium change events, landed as a Kafka sink lands them, into SCD1 and
SCD2 targets, case by case: each op code, a primary-key change, the TOAST placeholder, commit
order against interleaved LSNs, redeliveries, truncates in SCD2, the flattened form, the MySQL
and SQL Server orderings, the types inside the envelope and the argument errors. The events are
written in Debezium's own format (its PostgreSQL, MySQL and SQL Server `source` blocks);
test_debezium_capture.py applies a feed that real Debezium captured."""

from __future__ import annotations

import datetime
import decimal
import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from harness import REPO_ROOT, CdcProject, derived_name

pytestmark = [pytest.mark.dbt_v2, pytest.mark.spark]  # under dbt v2 and on Spark too

# The ready-made configs of docs/debezium.md.
SCD1: dict[str, Any] = {
    "keys": ["id"],
    "sequence_by": "_dbz_sequence",
    "apply_as_deletes": "_dbz_op = 'd'",
    "apply_as_truncates": "_dbz_op = 't'",
    "columns_to_update": "_dbz_columns",
    "except_column_list": ["_dbz_op", "_dbz_sequence", "_dbz_columns", "loaded"],
}
SCD2: dict[str, Any] = {
    **{key: value for key, value in SCD1.items() if key != "apply_as_truncates"},
    "stored_as_scd_type": 2,
    "track_history_except_column_list": ["_dbz_committed_at"],
}
COLUMNS = "{'id': 'integer', 'name': 'text', 'notes': 'text'}"
ARGS = f"columns={COLUMNS}, extra_columns=['loaded']"  # `loaded`: the sink's arrival number
UNAVAILABLE = "__debezium_unavailable_value"
COMMITTED_MS = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC


class PostgresFeed:
    """Debezium PostgreSQL events in delivery (commit) order: each transaction's events carry
    `source.sequence` = [the previous commit's LSN, the event's LSN]; LSNs may interleave."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any] | None] = []
        self.last_commit: int | None = None
        self.next_lsn = 1000

    def lsn(self) -> int:
        self.next_lsn += 8
        return self.next_lsn

    def snapshot(self, *rows: dict[str, Any]) -> None:
        """op 'r': every row at the snapshot's one LSN."""
        lsn = self.lsn()
        for row in rows:
            self.events.append(self._event("r", None, row, lsn, None))

    def transaction(
        self,
        *changes: tuple[str, dict[str, Any] | None, dict[str, Any] | None],
        lsns: list[int] | None = None,
        commit_lsn: int | None = None,
    ) -> None:
        """Changes (op, before, after) committed together, at the given LSNs or the next ones."""
        lsns = lsns or [self.lsn() for _ in changes]
        for (op, before, after), lsn in zip(changes, lsns):
            self.events.append(self._event(op, before, after, lsn, self.last_commit))
            if op == "d":
                self.events.append(None)  # the Kafka tombstone after a delete
        self.last_commit = commit_lsn or self.lsn()
        self.next_lsn = max(self.next_lsn, self.last_commit)

    def _event(self, op: str, before: Any, after: Any, lsn: int, last_commit: int | None) -> dict[str, Any]:
        sequence = json.dumps([None if last_commit is None else str(last_commit), str(lsn)])
        source = {
            "version": "3.6.3.Final",
            "connector": "postgresql",
            "name": "dbz",
            "ts_ms": COMMITTED_MS + lsn,
            "snapshot": "true" if op == "r" else "false",
            "db": "app",
            "sequence": sequence,
            "schema": "public",
            "table": "customers",
            "txId": 700 + lsn // 100,
            "lsn": lsn,
            "xmin": None,
        }
        return {
            "before": before,
            "after": after,
            "source": source,
            "op": op,
            "ts_ms": COMMITTED_MS + lsn + 3,
            "transaction": None,
        }


def land(project: CdcProject, events: list[dict[str, Any] | None], table: str = "landed", start: int = 1) -> None:
    """Landed as a Kafka sink lands the JSON converter's values: one row per record, in the
    envelope's top-level fields (JSON text), with its arrival number; a tombstone's row is empty."""
    if not project.exists(table):
        project.create_table(
            table,
            {"before": "text", "after": "text", "source": "text", "op": "text", "ts_ms": "bigint", "loaded": "integer"},
        )
    rows = []
    for number, event in enumerate(events, start):
        if event is None:
            rows.append((None, None, None, None, None, number))
        else:
            rows.append(
                (
                    json.dumps(event["before"]) if event["before"] is not None else None,
                    json.dumps(event["after"]) if event["after"] is not None else None,
                    json.dumps(event["source"]),
                    event["op"],
                    event["ts_ms"],
                    number,
                )
            )
    project.insert(table, rows)


def adapter_types(project: CdcProject, args: str) -> str:
    """The types in debezium()'s `columns=` as the adapter spells them. On Spark 'string', not
    'text', and a timestamp without a zone is `timestamp_ntz` (its `timestamp` holds points in time)."""
    spark = {"timestamp": "timestamp_ntz"} if project.adapter == "spark" else {}
    return re.sub(r"(?<!'encoding': )'(\w+)'", lambda name: repr(spark.get(name[1], project.type_name(name[1]))), args)


def model(
    project: CdcProject, config: dict[str, Any], args: str = ARGS, table: str = "landed", name: str = "customers"
) -> None:
    args = adapter_types(project, args)
    body = "select * from {{ auto_cdc.debezium(" + repr(project.relation(table)) + ", " + args + ") }}"
    project.model(name, body, **config)


def current(project: CdcProject, name: str = "customers", columns: str = "id, name, notes") -> list[tuple[Any, ...]]:
    where = ' where "__END_AT" is null' if "__END_AT" in project.columns(name) else ""
    return sorted(project.query(project.dialect(f"select {columns} from {project.relation(name)}{where}")))


def row(id: int, name: str | None = None, notes: str | None = None) -> dict[str, Any]:
    return {"id": id, "name": name, "notes": notes}


def key(id: int) -> dict[str, Any]:
    """A delete's `before` under REPLICA IDENTITY DEFAULT: the key, every other column NULL."""
    return {"id": id, "name": None, "notes": None}


# The fields ExtractNewRecordState adds to a flattened row (add.fields, delete.handling.mode
# rewrite), as the JSON converter types them, and the arrival number the tests land with them.
FLAT_FIELDS = {
    "__deleted": "text",
    "__op": "text",
    "__lsn": "bigint",
    "__sequence": "text",
    "__source_ts_ms": "bigint",
    "loaded": "integer",
}
# The flattened form's table: the row's own columns, Debezium's `__` fields, the arrival number.
FLAT_COLUMNS = {"id": "integer", "name": "text", "notes": "text", **FLAT_FIELDS}


def flat(events: list[dict[str, Any] | None]) -> list[tuple[Any, ...]]:
    """The events as ExtractNewRecordState lands them (FLAT_COLUMNS): `rewrite` drops the
    tombstones and gives a delete its before image."""
    rows = []
    for event in events:
        if event is not None:
            image = event["before"] if event["op"] == "d" else event["after"]
            source = event["source"]
            rows.append(
                (
                    image["id"],
                    image["name"],
                    image["notes"],
                    str(event["op"] == "d").lower(),
                    event["op"],
                    source["lsn"],
                    source["sequence"],
                    source["ts_ms"],
                    source["lsn"],
                )
            )
    return rows


@pytest.fixture
def feed() -> Iterator[PostgresFeed]:
    yield PostgresFeed()


def test_each_op_code_applies_as_debezium_means_it(project: CdcProject, feed: PostgresFeed) -> None:
    """r (snapshot rows) and c upsert, u updates, d deletes by the key in `before`, tombstones
    are skipped, t truncates (SCD1), and rows inserted after the truncate stay."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"), row(3, "c", "n3"))
    feed.transaction(("c", None, row(4, "d", "n4")), ("u", None, row(1, "a2", "n1")))
    feed.transaction(("d", key(2), None))
    land(project, feed.events)
    model(project, SCD1, ARGS)
    project.run("customers")
    assert current(project) == [(1, "a2", "n1"), (3, "c", "n3"), (4, "d", "n4")]

    done = len(feed.events)
    feed.transaction(("t", None, None))
    feed.transaction(("c", None, row(5, "e", "n5")))
    land(project, feed.events[done:], start=done + 1)
    project.run("customers")
    assert current(project) == [(5, "e", "n5")]


def test_a_primary_key_change_is_a_delete_and_an_insert(project: CdcProject, feed: PostgresFeed) -> None:
    """UPDATE ... SET id = 20 arrives as a delete of 2 (with its tombstone) and a create of 20."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    feed.transaction(("d", key(2), None), ("c", None, row(20, "b", "n2")))
    land(project, feed.events)
    model(project, SCD2)
    project.run("customers")
    assert current(project) == [(1, "a", "n1"), (20, "b", "n2")]
    closed = project.query(
        project.dialect(f'select id from {project.relation("customers")} where "__END_AT" is not null')
    )
    assert closed == [(2,)]


def test_the_toast_placeholder_keeps_the_stored_value(project: CdcProject, feed: PostgresFeed) -> None:
    """An update that leaves a TOASTed column unchanged sends Debezium's placeholder for it: the
    column is not written (SCD1 keeps it, SCD2's new version carries it), a real new value is."""
    feed.snapshot(row(1, "a", "long text"), row(2, "b", "other"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)))
    feed.transaction(("u", None, row(2, "b", "changed")))
    land(project, feed.events)
    model(project, SCD1, name="customers")
    model(project, SCD2, name="history")
    project.run()
    assert current(project) == [(1, "a2", "long text"), (2, "b", "changed")]
    assert current(project, "history") == [(1, "a2", "long text"), (2, "b", "changed")]
    assert project.query(f"select count(*) from {project.relation('history')} where notes = {UNAVAILABLE!r}") == [(0,)]


def test_the_placeholder_arriving_before_the_value_it_stands_for(project: CdcProject, feed: PostgresFeed) -> None:
    """Split across runs the other way round (the update first, the snapshot row later): the
    result is the same as in order."""
    feed.snapshot(row(1, "a", "long text"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)))
    land(project, feed.events[1:])
    model(project, {**SCD2, "checkpoint_column": "loaded"}, ARGS)
    project.run("customers")
    land(project, feed.events[:1], start=10)
    project.run("customers")
    assert current(project) == [(1, "a2", "long text")]


def test_a_key_change_of_a_toasted_row_takes_the_value_of_the_old_key(project: CdcProject, feed: PostgresFeed) -> None:
    """UPDATE ... SET id = 20 on a row whose TOASTed column is unchanged: the create of 20 carries
    the placeholder (REPLICA IDENTITY DEFAULT). Its value is the old key's latest; until the old
    key's events have landed the run fails, and the next run, after they have, applies it."""
    feed.snapshot(row(1, "a", "long text"))
    feed.transaction(("u", None, row(1, "a2", "longer text")))
    feed.transaction(("d", key(1), None), ("c", None, row(20, "a2", UNAVAILABLE)), lsns=[1500, 1500])
    land(project, feed.events[3:])  # the delete, its tombstone and the create first
    model(project, {**SCD2, "checkpoint_column": "loaded"})
    outcome = project.dbt("run", "--select", "customers")
    assert not outcome.success
    assert "a primary-key change" in outcome.error and "column notes" in outcome.error, outcome.error
    assert "the old key's events have not landed yet" in outcome.error
    assert not project.exists("customers")
    land(project, feed.events[:3], start=10)
    project.run("customers")
    assert current(project) == [(20, "a2", "longer text")]


def test_events_apply_in_commit_order_not_lsn_order(project: CdcProject, feed: PostgresFeed) -> None:
    """Two transactions whose LSNs interleave (the second to commit wrote first, at a lower LSN):
    the one that committed last wins, and SCD2's versions follow commit order."""
    feed.snapshot(row(1, "a", "n"))
    feed.transaction(("u", None, row(1, "first to commit", "n")), lsns=[1300], commit_lsn=1310)
    feed.transaction(("u", None, row(1, "last to commit", "n")), lsns=[1200], commit_lsn=1320)
    land(project, feed.events[::-1])  # arrival order does not matter either
    model(project, SCD1, name="customers")
    model(project, SCD2, name="history")
    project.run()
    assert current(project) == [(1, "last to commit", "n")]
    history = project.query(project.dialect(f'select name from {project.relation("history")} order by "__START_AT"'))
    assert history == [("a",), ("first to commit",), ("last to commit",)]


def test_redeliveries_collapse(project: CdcProject, feed: PostgresFeed) -> None:
    """At-least-once delivery: every event landed twice, in the same run and again in a later
    one, gives the target and history of each event once."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)), ("d", key(2), None))
    feed.transaction(("c", None, row(3, "c", "n3")))
    config = {**SCD2, "checkpoint_column": "loaded"}
    once = feed.events
    land(project, once, table="once")
    model(project, config, table="once", name="history_once")
    land(project, once + once[:4])
    model(project, config, name="history")
    project.run()
    land(project, once[2:], start=100)
    project.run()
    versions = project.dialect('select id, name, notes, "__START_AT", "__END_AT" from {}')
    assert sorted(project.query(versions.format(project.relation("history")))) == sorted(
        project.query(versions.format(project.relation("history_once")))
    )
    assert current(project, "history") == [(1, "a2", "n1"), (3, "c", "n3")]


def test_a_truncate_in_scd2_closes_every_key_before_it(project: CdcProject, feed: PostgresFeed) -> None:
    """SCD2 cannot apply a truncate: it becomes a delete at its sequence of every key seen before
    it, also of a key whose earlier event arrives in a later run; keys created after it stay."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    feed.transaction(("c", None, row(3, "late", "n3")))
    feed.transaction(("t", None, None))
    feed.transaction(("c", None, row(4, "d", "n4")), ("c", None, row(1, "again", "n1")))
    late = feed.events[2]
    land(project, [event for event in feed.events if event is not late])
    model(project, {**SCD2, "checkpoint_column": "loaded"}, ARGS)
    project.run("customers")
    assert current(project) == [(1, "again", "n1"), (4, "d", "n4")]
    land(project, [late], start=100)
    project.run("customers")
    assert current(project) == [(1, "again", "n1"), (4, "d", "n4")]
    truncated = project.query(
        project.dialect(
            f'select id, name from {project.relation("customers")} where "__END_AT" is not null order by id'
        )
    )
    assert truncated == [(1, "a"), (2, "b"), (3, "late")]


def test_the_value_column_form_with_schemas(project: CdcProject, feed: PostgresFeed) -> None:
    """One JSON column holding the whole record value, with `schemas.enable=true` (the payload
    under `payload`) or without, and tombstones as NULL values."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)), ("d", key(2), None))
    project.create_table("records", {"value": "text", "loaded": "integer"})
    values = [
        None if event is None else {"schema": {"type": "struct"}, "payload": event} if i % 2 else event
        for i, event in enumerate(feed.events)
    ]
    project.insert("records", [(None if value is None else json.dumps(value), i) for i, value in enumerate(values)])
    model(project, SCD1, f"columns={COLUMNS}, envelope_column='value', extra_columns=['loaded']", table="records")
    project.run("customers")
    assert current(project) == [(1, "a2", "n1")]


def test_the_flattened_form(project: CdcProject, feed: PostgresFeed) -> None:
    """ExtractNewRecordState with add.fields=op,lsn,sequence,source.ts_ms and deletes rewritten
    (`__deleted`, the before image): the table's own columns and Debezium's `__` fields. (The
    SMT drops truncates: test_debezium_capture.py shows it on real Debezium.)"""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)), ("d", key(2), None))
    feed.transaction(("c", None, row(3, "c", "n3")), ("u", None, row(1, "a3", "n1b")))
    project.create_table("flat", FLAT_COLUMNS)
    project.insert("flat", flat(feed.events[:5]))
    model(project, SCD1, "form='flattened', extra_columns=['loaded']", table="flat")
    project.run("customers")
    assert current(project) == [(1, "a2", "n1")]
    assert "__op" not in project.columns("customers")

    project.insert("flat", flat(feed.events[5:]))
    project.run("customers")
    assert current(project) == [(1, "a3", "n1b"), (3, "c", "n3")]


def test_a_flattened_table_without_the_fields_that_order_it_is_refused(project: CdcProject) -> None:
    """`__lsn` alone does not give commit order: without `__sequence` the run fails before
    writing, naming the missing fields and the add.fields to configure."""
    project.create_table(
        "flat", {"id": "integer", "name": "text", "__op": "text", "__lsn": "bigint", "__source_ts_ms": "bigint"}
    )
    model(
        project,
        {key: value for key, value in SCD1.items() if key != "except_column_list"},
        "form='flattened'",
        table="flat",
    )
    outcome = project.dbt("run", "--select", "customers")
    assert not outcome.success
    assert "without __sequence" in outcome.error and "add.fields=op,sequence,lsn,source.ts_ms" in outcome.error
    assert not project.exists("customers")


def _other_connector(project: CdcProject, connector: str, sources: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Updates of key 1 named by the position in `sources`, landed in reverse; the name that
    wins and the versions' order."""
    events = [
        {
            "before": None,
            "after": row(1, f"v{i}"),
            "op": "u" if i else "c",
            "source": {**source, "connector": connector, "ts_ms": COMMITTED_MS},
            "ts_ms": COMMITTED_MS,
        }
        for i, source in enumerate(sources)
    ]
    land(project, events[::-1])
    model(project, SCD2, f"{ARGS}, connector='{connector}'", name="history")
    project.run("history")
    return project.query(project.dialect(f'select name from {project.relation("history")} order by "__START_AT"'))


def test_mysql_events_are_ordered_by_binlog_file_position_and_row(project: CdcProject) -> None:
    """The binlog file's number (not its name: mysql-bin.999999 comes before mysql-bin.1000000),
    then the position, then the row within the event."""
    sources = [
        {"file": "mysql-bin.000009", "pos": 9000, "row": 0},
        {"file": "mysql-bin.000009", "pos": 9000, "row": 1},
        {"file": "mysql-bin.000010", "pos": 4, "row": 0},
        {"file": "mysql-bin.999999", "pos": 100, "row": 0},
        {"file": "mysql-bin.1000000", "pos": 4, "row": 0},
    ]
    assert _other_connector(project, "mysql", sources) == [(f"v{i}",) for i in range(5)]


def test_sql_server_events_are_ordered_by_commit_lsn_change_lsn_and_serial(project: CdcProject) -> None:
    """Two events of one commit share its LSN: the change LSN, then event_serial_no, order them."""
    sources = [
        {"commit_lsn": "0000002a:00000ab8:0003", "change_lsn": "0000002a:00000ab8:0002", "event_serial_no": 1},
        {"commit_lsn": "0000002a:00000ab8:0003", "change_lsn": "0000002a:00000ab8:0002", "event_serial_no": 2},
        {"commit_lsn": "0000002a:00000ab8:0003", "change_lsn": "0000002a:00000ac0:0001", "event_serial_no": 1},
        {"commit_lsn": "0000002b:00000010:0001", "change_lsn": "0000002b:00000008:0001", "event_serial_no": 1},
    ]
    assert _other_connector(project, "sqlserver", sources) == [(f"v{i}",) for i in range(4)]


def test_the_types_inside_the_envelope(project: CdcProject, feed: PostgresFeed) -> None:
    """Debezium's default encodings decoded exactly: a timestamp as epoch microseconds (or
    milliseconds, given), a date as epoch days, timestamptz as ISO-8601, a decimal as a string
    (decimal.handling.mode=string), booleans, big integers, JSON text."""
    moment = datetime.datetime(2026, 12, 3, 6, 18, 44, 123456)
    micros = (moment - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
    after = {
        "id": 1,
        "at_us": micros,
        "at_ms": micros // 1000,
        "day": (moment.date() - datetime.date(1970, 1, 1)).days,
        "seen": "2026-12-03T06:18:44.123456Z",
        "amount": "12345678901234567890.12",
        "flag": True,
        "big": 9007199254740993,
        "doc": '{"a": [1, 2]}',
    }
    feed.snapshot(after)
    land(project, feed.events)
    columns = (
        "{'id': 'integer', 'at_us': 'timestamp', 'at_ms': {'type': 'timestamp', 'encoding': 'epoch_millis'},"
        " 'day': 'date', 'seen': 'timestamptz', 'amount': 'decimal(24,2)', 'flag': 'boolean',"
        " 'big': 'bigint', 'doc': 'text'}"
    )
    model(project, SCD1, f"columns={columns}, extra_columns=['loaded']")
    project.run("customers")
    # The instant as microseconds since 1970 (Spark's driver gives it in the local zone).
    seen_us = "unix_micros(seen)" if project.adapter == "spark" else "seen"
    at_us, at_ms, day, seen, amount, flag, big, doc = project.query(
        f"select at_us, at_ms, day, {seen_us}, amount, flag, big, doc from {project.relation('customers')}"
    )[0]
    assert at_us == moment
    assert at_ms == moment.replace(microsecond=123000)
    assert day == moment.date()
    assert seen == (micros if project.adapter == "spark" else moment.replace(tzinfo=datetime.timezone.utc))
    assert amount == decimal.Decimal("12345678901234567890.12")
    assert (flag, big, json.loads(doc)) == (True, 9007199254740993, {"a": [1, 2]})


def test_a_value_its_type_cannot_read_fails_the_run(project: CdcProject, feed: PostgresFeed) -> None:
    """A timestamptz's ISO-8601 string given a timestamp's encoding (microseconds): the run fails,
    showing the value, and writes nothing (on Spark, whose casts give NULL, the macro checks)."""
    feed.snapshot({"id": 1, "seen": "2026-12-03T06:18:44Z"})
    land(project, feed.events)
    model(project, SCD1, "columns={'id': 'integer', 'seen': 'timestamp'}, extra_columns=['loaded']")
    outcome = project.dbt("run", "--select", "customers")
    assert not outcome.success and "2026-12-03T06:18:44Z" in outcome.error, outcome.error
    if project.adapter == "spark":  # the macro's own message
        assert "'customers'" in outcome.error and "column seen" in outcome.error, outcome.error
    assert not project.exists("customers")
    if project.adapter == "spark":  # where cast('1.9' as int) is 1 (ANSI off), try_cast reads nothing
        other = PostgresFeed()
        other.snapshot({"id": 1, "qty": "1.9"})
        land(project, other.events, table="quantities_landed")
        columns = "columns={'id': 'integer', 'qty': 'integer'}, extra_columns=['loaded']"
        model(project, SCD1, columns, table="quantities_landed", name="quantities")
        outcome = project.dbt("run", "--select", "quantities")
        assert not outcome.success and "column qty" in outcome.error and "1.9" in outcome.error, outcome.error


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ("columns={'name': 'text'}", ["has key 'id' but no column of that name in columns="]),
        ("connector='oracle', columns={'id': 'integer'}", ["connector='oracle'", "postgresql, mysql, sqlserver"]),
        ("columns={'id': {'type': 'timestamp', 'encoding': 'epoch_nanos'}}", ["encoding 'epoch_nanos'"]),
        ("", ["needs columns={name: type, ...}"]),
        ("columns={'id': 'integer'}, extra_columns=['loaded'], truncates='ignore'", ["truncates='ignore'"]),
    ],
    ids=["key_not_in_columns", "unknown_connector", "unknown_encoding", "no_columns", "unknown_truncates"],
)
def test_argument_errors_name_the_model_and_the_argument(
    project: CdcProject, feed: PostgresFeed, args: str, fragments: list[str]
) -> None:
    feed.snapshot(row(1, "a", "n1"))
    land(project, feed.events)
    model(project, SCD1, args)
    outcome = project.dbt("run", "--select", "customers")
    assert not outcome.success
    for fragment in ["'customers'", "auto_cdc.debezium(", *fragments]:
        assert fragment in outcome.error, f"{fragment!r} not in:\n{outcome.error}"
    assert not project.exists("customers")
    assert not project.exists(derived_name("customers", "__cdc_runs"))


# How a sink that writes the envelope typed (a schema-aware converter into Iceberg) lands it on
# Spark: before, after and source as structs.
IMAGE = "struct<id:int,name:string,notes:string>"
STRUCTS = {
    "before": IMAGE,
    "after": IMAGE,
    "source": "struct<version:string,connector:string,name:string,ts_ms:bigint,snapshot:string,db:string,"
    "sequence:string,schema:string,table:string,txId:bigint,lsn:bigint,xmin:bigint>",
    "op": "string",
    "ts_ms": "bigint",
    "loaded": "int",
}


@pytest.mark.parametrize("project", ["spark"], indirect=True)
def test_an_envelope_landed_as_structs_reads_as_its_json(project: CdcProject, feed: PostgresFeed) -> None:
    """The same events landed as JSON text and as structs give the same table: snapshot rows, an
    update with the TOAST placeholder, a delete keyed from `before`, a key change of a TOASTed
    row (the value of the old key), a truncate."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"), row(3, "c", "long text"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)), ("d", key(2), None))
    feed.transaction(("d", key(3), None), ("c", None, row(30, "c2", UNAVAILABLE)), lsns=[1500, 1500])
    land(project, feed.events)
    texts = ", ".join(f"`{name}`" for name in STRUCTS)
    typed = ", ".join(
        f"from_json(`{name}`, '{kind}')" if kind.startswith("struct") else f"`{name}`" for name, kind in STRUCTS.items()
    )
    columns = ", ".join(f"`{name}` {kind}" for name, kind in STRUCTS.items())
    project.execute(f"create table {project.relation('typed')} ({columns}) using iceberg")
    project.execute(
        f"insert into {project.relation('typed')} ({texts}) select {typed} from {project.relation('landed')}"
    )
    assert project.query(f"select after.name from {project.relation('typed')} where loaded = 1") == [("a",)]
    model(project, SCD1, table="landed", name="from_text")
    model(project, SCD1, table="typed", name="from_structs")
    project.run()
    assert (
        current(project, "from_structs") == current(project, "from_text") == [(1, "a2", "n1"), (30, "c2", "long text")]
    )

    done = len(feed.events)
    feed.transaction(("t", None, None))
    feed.transaction(("c", None, row(5, "e", "n5")))
    land(project, feed.events[done:], start=done + 1)
    project.execute(f"delete from {project.relation('typed')}")
    project.execute(
        f"insert into {project.relation('typed')} ({texts}) select {typed} from {project.relation('landed')}"
    )
    project.run()
    assert current(project, "from_structs") == current(project, "from_text") == [(5, "e", "n5")]


@pytest.mark.parametrize("project", ["spark"], indirect=True)
def test_typed_struct_fields_read_exactly(project: CdcProject) -> None:
    """Struct fields a sink typed: a decimal keeps all its digits, a timestamp its instant (here
    in the hour that repeats when New York's clocks go back, read in a session in that zone) and
    a timestamp_ntz its wall time."""
    image = "struct<id:int,amount:decimal(38,9),seen:timestamp,at:timestamp_ntz,big:bigint,flag:boolean>"
    source = "struct<sequence:string,lsn:bigint,ts_ms:bigint>"
    project.execute(
        f"create table {project.relation('typed')} (`before` {image}, `after` {image}, `source` {source},"
        " op string, loaded int) using iceberg"
    )
    seen = 1_730_615_400_654_321  # 2024-11-03 06:30:00.654321 UTC: 01:30 EST, after 01:30 EDT
    project.execute(
        f"insert into {project.relation('typed')} select null, named_struct('id', 1, 'amount',"
        " cast('12345678901234567890.123456789' as decimal(38,9)), 'seen', timestamp_micros("
        f"{seen}), 'at', timestamp_ntz '2024-11-03 01:30:00.123456', 'big', 9007199254740993L, 'flag', true),"
        f" named_struct('sequence', '[null,\"16\"]', 'lsn', 16L, 'ts_ms', {COMMITTED_MS}L), 'r', 1"
    )
    columns = (
        "columns={'id': 'integer', 'amount': 'decimal(38,9)', 'seen': 'timestamptz',"
        " 'at': {'type': 'timestamp', 'encoding': 'text'}, 'big': 'bigint', 'flag': 'boolean'}"
    )
    model(project, SCD1, f"{columns}, extra_columns=['loaded']", table="typed")
    assert project.spark is not None
    conf = project.spark.session.conf
    zone = conf.get("spark.sql.session.timeZone")
    conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        project.run("customers")
    finally:
        conf.set("spark.sql.session.timeZone", zone)
    read = "cast(amount as string), unix_micros(seen), cast(`at` as string), big, flag"
    assert project.query(f"select {read} from {project.relation('customers')}") == [
        ("12345678901234567890.123456789", seen, "2024-11-03 01:30:00.123456", 9007199254740993, True)
    ]


def test_the_readmes_sample_records_apply(project: CdcProject) -> None:
    """docs/debezium.md (once the README's "From Debezium"): its sample record of each
    connector, landed as it says (the value's top-level fields as columns), through its model
    gives the row the record's `after` holds, decoded."""
    section = (REPO_ROOT / "docs" / "debezium.md").read_text()
    columns = re.search(r"columns=(\{[^}]*\})", section)[1]
    samples = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.S)]
    connectors = [sample["source"]["connector"] for sample in samples]
    assert connectors == ["postgresql", "mysql", "sqlserver"]
    for connector, sample in zip(connectors, samples):
        land(project, [sample], table=f"landed_{connector}")
        model(
            project,
            SCD1,
            f"columns={columns}, extra_columns=['loaded'], connector='{connector}'",
            table=f"landed_{connector}",
            name=f"customers_{connector}",
        )
    project.run()
    expected = (
        1,
        "Ada L.",
        "first customer",
        decimal.Decimal("12.75"),
        datetime.datetime(2026, 1, 2, 10, 30),
        datetime.date(1990, 1, 1),
        datetime.datetime(2026, 1, 2, 10, 30, 0, 500000, datetime.timezone.utc),
    )
    # The instant as microseconds since 1970 on Spark (its driver gives it in the local zone).
    seen_at = "unix_micros(seen_at)" if project.adapter == "spark" else "seen_at"
    if project.adapter == "spark":
        expected = (
            *expected[:-1],
            (expected[-1] - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc))
            // datetime.timedelta(microseconds=1),
        )
    for connector in connectors:
        (row,) = project.query(
            f"select id, name, notes, balance, updated_at, born, {seen_at} "
            f"from {project.relation(f'customers_{connector}')}"
        )
        assert row == expected, connector


def test_a_run_reads_the_landed_rows_from_its_checkpoint(project: CdcProject, feed: PostgresFeed) -> None:
    """With `checkpoint_column` among extra_columns, a run reads the landed rows from its
    checkpoint only: an older row that no longer decodes is not read. New rows holding a truncate
    (SCD2: deletes of every key seen before it) make the run read them all, and fail on it."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"))
    land(project, feed.events)
    model(project, {**SCD2, "checkpoint_column": "loaded"})
    project.run("customers")
    broken = json.dumps({"id": "not a number", "name": "a", "notes": "n1"})
    project.execute(f"update {project.relation('landed')} set after = '{broken}' where loaded = 1")
    feed.transaction(("u", None, row(2, "b2", UNAVAILABLE)))
    land(project, feed.events[2:], start=10)
    project.run("customers")
    assert current(project) == [(1, "a", "n1"), (2, "b2", "n2")]
    feed.transaction(("t", None, None))
    land(project, feed.events[3:], start=20)
    outcome = project.dbt("run", "--select", "customers")
    assert not outcome.success and "not a number" in outcome.error, outcome.error
    repaired = json.dumps(row(1, "a", "n1"))
    project.execute(f"update {project.relation('landed')} set after = '{repaired}' where loaded = 1")
    project.run("customers")
    assert current(project) == []


@pytest.mark.parametrize(
    "seed", [0, 1, pytest.param(2, marks=pytest.mark.not_on_spark("two splits on Spark: the suite's clock"))]
)
def test_any_split_into_runs_gives_the_history_of_one_run(project: CdcProject, feed: PostgresFeed, seed: int) -> None:
    """The landed rows shuffled and split into runs (seed 0: two events before the truncate land
    after it), each reading from its checkpoint: placeholders, a moved row whose old key lands
    later (the run fails until it has), a truncate with late events before it, redeliveries.
    SCD2's whole history and SCD1's target equal one run's."""
    feed.snapshot(row(1, "a", "n1"), row(2, "b", "n2"), row(3, "c", "n3"))
    feed.transaction(("u", None, row(1, "a2", UNAVAILABLE)), ("u", None, row(3, "c2", "n3b")))
    feed.transaction(("d", key(2), None), ("c", None, row(20, "b", UNAVAILABLE)), lsns=[1500, 1500])
    feed.transaction(("c", None, row(4, "d", "n4")))
    feed.transaction(("t", None, None))
    feed.transaction(("c", None, row(5, "e", "n5")), ("c", None, row(1, "again", "n1c")))
    feed.transaction(("u", None, row(5, "e2", UNAVAILABLE)))
    land(project, feed.events, table="once")
    for name, config in [("scd1", SCD1), ("scd2", SCD2)]:
        checkpointed = {**config, "checkpoint_column": "loaded"}
        model(project, checkpointed, table="once", name=f"{name}_once")
        model(project, checkpointed, name=name)
    project.run("scd1_once", "scd2_once")
    if seed:
        rows = random.Random(seed).sample(feed.events, len(feed.events))
        rows += rows[:3]  # redelivered
        cuts = [*sorted(random.Random(seed).sample(range(1, len(rows)), 6)), len(rows)]
    else:  # two events before the truncate land after it was applied: one of a key seen before, one of a new key
        late = [event for event in feed.events if event and (event["after"] or {}).get("name") in ("c2", "d")]
        rows = [event for event in feed.events if not any(event is held for held in late)] + late
        cuts = [len(rows) - len(late), len(rows)]
    landed = 0
    for cut in cuts:
        land(project, rows[landed:cut], start=1 + landed)
        landed = cut
        outcome = project.dbt("run", "--select", "scd1", "scd2")
        assert outcome.success or "the old key's events have not landed yet" in outcome.error, outcome.error
    project.run("scd1", "scd2")
    versions = project.dialect('select id, name, notes, "__START_AT", "__END_AT" from {}')
    for name in ["scd1", "scd2"]:
        read = versions if name == "scd2" else "select id, name, notes from {}"
        assert sorted(project.query(read.format(project.relation(name)))) == sorted(
            project.query(read.format(project.relation(f"{name}_once")))
        ), name


def test_a_run_history_changed_after_compiling_fails_the_run(project: CdcProject, feed: PostgresFeed) -> None:
    """debezium() reads the landed rows from the checkpoint the run history held when dbt
    compiled the model; if the run applies from another (here a pre-hook takes the last run
    away, as another run or a full refresh between the two would change it), the run fails
    before writing instead of skipping the rows between them."""
    feed.snapshot(row(1, "a", "n1"))
    land(project, feed.events)
    model(project, {**SCD2, "checkpoint_column": "loaded"})
    project.run("customers")
    feed.transaction(("u", None, row(1, "a2", "n1")))
    land(project, feed.events[1:], start=10)
    project.run("customers")
    runs = project.relation(derived_name("customers", "__cdc_runs"))
    hook = f"delete from {runs} where run_id = 2"
    model(project, {**SCD2, "checkpoint_column": "loaded", "pre_hook": hook})
    outcome = project.dbt("run", "--select", "customers")
    assert not outcome.success
    assert "read the landed table from a checkpoint this run does not apply from" in outcome.error, outcome.error
    assert current(project) == [(1, "a2", "n1")]
