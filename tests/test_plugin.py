"""Unit tests of the dbt-duckdb plugin `auto_cdc.plugin` (docs/snapshots.md, "Python snapshot versions").

Everything runs on real in-memory DuckDB connections. User modules are written into tmp_path
under unique names; sys.path, sys.modules and the working directory are restored after each test.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib
import json
import os
import re
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from dbt.adapters.duckdb.plugins import BasePlugin

from auto_cdc.plugin import (
    SQL_FUNCTION,
    Plugin,
    SnapshotFunctionError,
    load_function,
    next_snapshot,
    parse_version,
    snapshot_query,
    version_literal,
)

# --------------------------------------------------------------------------- helpers / fixtures


@pytest.fixture(autouse=True)
def restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """load_function prepends folders to sys.path: every test gets a copy, restored afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.fixture
def conn() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture
def spill_dir(tmp_path: Path) -> str:
    path = tmp_path / "spill"
    path.mkdir()
    return str(path)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory (load_function also imports from the cwd)."""
    path = tmp_path / "work"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def make_module(workdir: Path) -> Iterator[Callable[..., str]]:
    """Writes a throwaway user module under a unique name (default folder: tmp_path/python) and
    returns that name; its modules are dropped from sys.modules afterwards."""
    created: list[str] = []

    def make(source: str, directory: Path | None = None, package: bool = False) -> str:
        name = f"auto_cdc_test_{uuid.uuid4().hex}"
        folder = directory if directory is not None else workdir.parent / "python"
        folder.mkdir(parents=True, exist_ok=True)
        if package:
            (folder / name).mkdir()
            (folder / name / "__init__.py").write_text("")
            (folder / name / "snapshots.py").write_text(textwrap.dedent(source))
        else:
            (folder / f"{name}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        created.append(name)
        return name

    yield make
    for module_name in list(sys.modules):
        if any(module_name == name or module_name.startswith(name + ".") for name in created):
            del sys.modules[module_name]


def write_csv(path: Path, rows: list[tuple[int, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("id,name\n" + "".join(f"{key},{name}\n" for key, name in rows))
    return path


def rows_of(conn: duckdb.DuckDBPyConnection, query: str) -> list[tuple[Any, ...]]:
    return sorted(conn.execute(f"select * from ({query}) as snapshot").fetchall())


def round_trip(conn: duckdb.DuckDBPyConnection, literal: str) -> tuple[Any, str, str]:
    """What the materialization does between runs: the value, typeof() and cast(... as varchar)."""
    return conn.execute(f"select {literal}, typeof({literal}), cast({literal} as varchar)").fetchone()


# --------------------------------------------------------------------------- version_literal / parse_version

UTC_PLUS_2 = dt.timezone(dt.timedelta(hours=2))
UTC_MINUS_0530 = dt.timezone(-dt.timedelta(hours=5, minutes=30))

ROUND_TRIP_VERSIONS = [
    pytest.param(0, "BIGINT", id="int-zero"),
    pytest.param(-5, "BIGINT", id="int-negative"),
    pytest.param(2**63 - 1, "BIGINT", id="int-bigint-max"),
    pytest.param(-(2**63), "BIGINT", id="int-bigint-min"),
    pytest.param(2**63, "HUGEINT", id="int-above-bigint"),
    pytest.param(2**100 + 1, "HUGEINT", id="int-huge-exact"),
    pytest.param(-(2**100) - 1, "HUGEINT", id="int-huge-negative"),
    pytest.param(0.1, "DOUBLE", id="float-0.1"),
    pytest.param(1 / 3, "DOUBLE", id="float-third"),
    pytest.param(0.30000000000000004, "DOUBLE", id="float-17-digits"),
    pytest.param(-2.5e-300, "DOUBLE", id="float-tiny"),
    pytest.param(1.7976931348623157e308, "DOUBLE", id="float-max"),
    pytest.param(decimal.Decimal("1.50"), r"DECIMAL\(38,\d+\)", id="decimal-1.50"),
    pytest.param(decimal.Decimal("-0.001"), r"DECIMAL\(38,\d+\)", id="decimal-negative"),
    pytest.param(decimal.Decimal("12345678901234567890.123456789"), r"DECIMAL\(38,\d+\)", id="decimal-long"),
    pytest.param(decimal.Decimal("1E+3"), r"DECIMAL\(38,\d+\)", id="decimal-exponent"),
    pytest.param("it's", "VARCHAR", id="str-quote"),
    pytest.param("v2 'quoted' \\ back", "VARCHAR", id="str-quotes-backslash"),
    pytest.param("", "VARCHAR", id="str-empty"),
    pytest.param(dt.date(2024, 1, 31), "DATE", id="date"),
    pytest.param(dt.datetime(2024, 1, 31, 23, 59, 58, 123456), "TIMESTAMP", id="datetime-micro"),
    pytest.param(dt.datetime(2024, 1, 31), "TIMESTAMP", id="datetime-midnight"),
    pytest.param(dt.datetime(2024, 1, 31, 3, 4, 5, tzinfo=UTC_PLUS_2), "TIMESTAMP WITH TIME ZONE", id="datetime-tz+2"),
    pytest.param(
        dt.datetime(2024, 7, 1, 3, 4, 5, 500000, tzinfo=UTC_MINUS_0530),
        "TIMESTAMP WITH TIME ZONE",
        id="datetime-tz-0530",
    ),
]


@pytest.mark.parametrize(("version", "sql_type"), ROUND_TRIP_VERSIONS)
def test_version_literal_round_trips_through_duckdb(conn, version, sql_type):
    literal = version_literal(version)
    value, type_name, text = round_trip(conn, literal)
    assert re.fullmatch(sql_type, type_name)
    assert value == version
    back = parse_version(text, type_name)
    assert back == version
    assert type(back) is type(version)


@pytest.mark.parametrize("time_zone", ["UTC", "Asia/Kolkata", "America/St_Johns"])
def test_version_literal_tz_aware_round_trip_in_any_session_time_zone(conn, time_zone):
    version = dt.datetime(2024, 1, 31, 3, 4, 5, 250000, tzinfo=UTC_PLUS_2)
    conn.execute(f"set TimeZone = '{time_zone}'")
    value, type_name, text = round_trip(conn, version_literal(version))
    assert value == version
    back = parse_version(text, type_name)
    assert back == version
    assert back.tzinfo is not None


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        (9, 10),
        (2**63 - 1, 2**64),
        (9.5, 10.25),
        (decimal.Decimal("9.5"), decimal.Decimal("10.25")),
        (dt.date(2024, 1, 9), dt.date(2024, 1, 10)),
        (dt.datetime(2024, 1, 9, 23), dt.datetime(2024, 1, 10, 1)),
        ("v09", "v10"),
    ],
)
def test_version_literals_compare_in_natural_order(conn, smaller, larger):
    query = f"select {version_literal(smaller)} < {version_literal(larger)}"
    assert conn.execute(query).fetchone() == (True,)


def test_version_literal_rejects_bool():
    with pytest.raises(SnapshotFunctionError, match="bool"):
        version_literal(True)


@pytest.mark.parametrize(
    "version",
    [[1], {"v": 1}, None, b"1", dt.time(1, 2), object()],
    ids=["list", "dict", "None", "bytes", "time", "object"],
)
def test_version_literal_rejects_unsupported_types(version):
    with pytest.raises(SnapshotFunctionError, match=type(version).__name__):
        version_literal(version)


def test_version_literal_numpy_float64_is_valid_sql(conn):
    np = pytest.importorskip("numpy")
    value, type_name, text = round_trip(conn, version_literal(np.float64(1.5)))
    assert (value, type_name, parse_version(text, type_name)) == (1.5, "DOUBLE", 1.5)


def test_version_literal_infinite_float_is_valid_sql(conn):
    value, type_name, text = round_trip(conn, version_literal(float("inf")))
    assert value == float("inf")
    assert parse_version(text, type_name) == float("inf")


@pytest.mark.parametrize("version", ["NaN", "sNaN", "Infinity"])
def test_version_literal_non_finite_decimal_raises_snapshot_function_error(version):
    with pytest.raises(SnapshotFunctionError):
        version_literal(decimal.Decimal(version))


@pytest.mark.parametrize(
    ("first", "second"),
    [(decimal.Decimal("1.5"), decimal.Decimal("2")), (decimal.Decimal("1.50"), decimal.Decimal("1.6"))],
)
def test_version_literal_decimal_type_does_not_depend_on_the_value(conn, first, second):
    first_type = round_trip(conn, version_literal(first))[1]
    second_type = round_trip(conn, version_literal(second))[1]
    assert first_type == second_type


def test_parse_version_null_is_none():
    assert parse_version(None, None) is None
    assert parse_version(None, "BIGINT") is None


@pytest.mark.parametrize(
    ("text", "type_name", "expected"),
    [
        ("7", "bigint", 7),
        ("7", "UTINYINT", 7),
        ("2.5", "FLOAT", 2.5),
        ("7", None, "7"),
        ("a-uuid", "UUID", "a-uuid"),
    ],
)
def test_parse_version_type_names(text, type_name, expected):
    back = parse_version(text, type_name)
    assert back == expected
    assert type(back) is type(expected)


# --------------------------------------------------------------------------- snapshot_query


@pytest.mark.parametrize(
    "sql",
    [
        "select 1 as id",
        "  SELECT 1 AS id  ",
        "with s as (select 1 as id) select * from s",
        "from range(3)",
        "values (1), (2)",
        "table main.t",
        "(select 1)",
        "select * from 'data/*.csv'",
    ],
)
def test_snapshot_query_passes_sql_text_through(sql, spill_dir):
    assert snapshot_query(sql, spill_dir) == sql.strip()


@pytest.mark.parametrize(
    "path",
    [
        "snapshot_1.csv",
        "data/*.csv",
        "C:\\x\\y.parquet",
        "s3://bucket/snapshots/2024-01-01.parquet",
        "snapshot_?.json",
        "SNAPSHOT.CSV.GZ",
    ],
)
def test_snapshot_query_reads_files_and_globs(path, spill_dir):
    assert snapshot_query(path, spill_dir) == f"select * from '{path}'"


def test_snapshot_query_quotes_a_path_with_a_quote(spill_dir):
    assert snapshot_query("it's.csv", spill_dir) == "select * from 'it''s.csv'"


@pytest.mark.parametrize("name", ["my_table", "main.my_table", "memory.main.my_table", '"weird name"', '"a.b"."c""d"'])
def test_snapshot_query_reads_relations(name, spill_dir):
    assert snapshot_query(name, spill_dir) == f"select * from {name}"


@pytest.mark.parametrize("text", ["not a thing!", "", "   ", "a.b.c.d", "1table", "drop table t; x"])
def test_snapshot_query_rejects_unclassifiable_text(text, spill_dir):
    with pytest.raises(SnapshotFunctionError, match="cannot tell"):
        snapshot_query(text, spill_dir)


def test_snapshot_query_reads_a_real_csv_file(conn, workdir, spill_dir):
    write_csv(workdir / "snapshot_1.csv", [(1, "a"), (2, "it's")])
    assert rows_of(conn, snapshot_query("snapshot_1.csv", spill_dir)) == [(1, "a"), (2, "it's")]
    absolute = str(workdir / "snapshot_1.csv")
    assert rows_of(conn, snapshot_query(absolute, spill_dir)) == [(1, "a"), (2, "it's")]


def test_snapshot_query_reads_a_real_glob(conn, workdir, spill_dir):
    write_csv(workdir / "data" / "part_1.csv", [(1, "a")])
    write_csv(workdir / "data" / "part_2.csv", [(2, "b")])
    assert rows_of(conn, snapshot_query("data/*.csv", spill_dir)) == [(1, "a"), (2, "b")]


def test_snapshot_query_reads_a_real_relation(conn, spill_dir):
    conn.execute("create table \"weird name\" as select 1 as id, 'a' as name")
    assert rows_of(conn, snapshot_query('"weird name"', spill_dir)) == [(1, "a")]
    assert rows_of(conn, snapshot_query('main."weird name"', spill_dir)) == [(1, "a")]


@pytest.mark.parametrize("path", ["values.csv", "table/snapshot_1.csv", "select.parquet", "with/x.csv"])
def test_snapshot_query_file_named_like_a_keyword_is_a_file(conn, workdir, spill_dir, path):
    if path.endswith(".parquet"):
        conn.execute(f"copy (select 1 as id, 'a' as name) to '{path}' (format parquet)")
    else:
        write_csv(workdir / path, [(1, "a")])
    assert rows_of(conn, snapshot_query(path, spill_dir)) == [(1, "a")]


def _data_frame() -> Any:
    try:
        import pandas

        return pandas.DataFrame({"id": [1, 2], "name": ["a", "it's"]})
    except ImportError:
        pass
    try:
        import pyarrow

        return pyarrow.table({"id": [1, 2], "name": ["a", "it's"]})
    except ImportError:
        pytest.skip("neither pandas nor pyarrow is installed: no data frame to spill")


def test_snapshot_query_spills_a_data_frame_to_parquet(conn, spill_dir):
    frame = _data_frame()
    query = snapshot_query(frame, spill_dir)
    assert "read_parquet" in query
    assert len(os.listdir(spill_dir)) == 1
    assert rows_of(conn, query) == [(1, "a"), (2, "it's")]


def test_snapshot_query_spills_numpy_arrays_to_parquet(conn, spill_dir):
    # Runs the spill path without pandas/pyarrow: DuckDB also scans a dict of NumPy arrays.
    np = pytest.importorskip("numpy")
    query = snapshot_query({"id": np.array([1, 2]), "amount": np.array([1.5, 2.5])}, spill_dir)
    [spilled] = os.listdir(spill_dir)
    assert spilled.endswith(".parquet")
    assert rows_of(conn, query) == [(1, 1.5), (2, 2.5)]


def test_snapshot_query_spills_each_frame_to_its_own_file(conn, spill_dir):
    np = pytest.importorskip("numpy")
    first = snapshot_query({"id": np.array([1])}, spill_dir)
    second = snapshot_query({"id": np.array([2])}, spill_dir)
    assert first != second
    assert (rows_of(conn, first), rows_of(conn, second)) == ([(1,)], [(2,)])


@pytest.mark.parametrize("snapshot", [42, object(), None, 1.5], ids=["int", "object", "None", "float"])
def test_snapshot_query_rejects_objects_that_are_no_data_frame(snapshot, spill_dir):
    with pytest.raises(SnapshotFunctionError, match="data frame"):
        snapshot_query(snapshot, spill_dir)


# --------------------------------------------------------------------------- next_snapshot


def test_next_snapshot_none_means_no_more_snapshots(spill_dir):
    assert next_snapshot(lambda last: None, 3, spill_dir) is None


def test_next_snapshot_passes_the_last_version_to_the_function(spill_dir):
    seen = []
    next_snapshot(lambda last: seen.append(last), dt.date(2024, 1, 2), spill_dir)
    assert seen == [dt.date(2024, 1, 2)]


@pytest.mark.parametrize(
    "result",
    [["t", 1], "t", 1, ("t",), ("t", 1, "extra")],
    ids=["list", "str", "int", "1-tuple", "3-tuple"],
)
def test_next_snapshot_rejects_results_that_are_not_a_pair(result, spill_dir):
    with pytest.raises(SnapshotFunctionError, match="None or \\(snapshot, version\\)"):
        next_snapshot(lambda last: result, None, spill_dir)


def test_next_snapshot_rejects_a_none_version(spill_dir):
    with pytest.raises(SnapshotFunctionError, match="NULL"):
        next_snapshot(lambda last: ("my_table", None), None, spill_dir)


def test_next_snapshot_propagates_snapshot_and_version_errors(spill_dir):
    with pytest.raises(SnapshotFunctionError, match="bool"):
        next_snapshot(lambda last: ("my_table", True), None, spill_dir)
    with pytest.raises(SnapshotFunctionError, match="cannot tell"):
        next_snapshot(lambda last: ("not a thing!", 1), None, spill_dir)


def test_next_snapshot_answers_json_with_version_and_snapshot_sql(conn, workdir, spill_dir):
    write_csv(workdir / "snapshot_1.csv", [(1, "a")])
    answer = json.loads(next_snapshot(lambda last: ("snapshot_1.csv", dt.date(2024, 1, 1)), None, spill_dir))
    assert set(answer) == {"version_sql", "snapshot_sql"}
    assert answer["version_sql"] == version_literal(dt.date(2024, 1, 1))
    assert conn.execute(f"select {answer['version_sql']}").fetchone() == (dt.date(2024, 1, 1),)
    assert rows_of(conn, answer["snapshot_sql"]) == [(1, "a")]


# --------------------------------------------------------------------------- load_function


def test_load_function_imports_from_configured_paths(make_module, tmp_path):
    name = make_module("def fn(last):\n    return ('t', 1)\n")
    function = load_function(f"{name}:fn", [str(tmp_path / "python")])
    assert function(None) == ("t", 1)


def test_load_function_imports_from_the_working_directory(make_module, workdir):
    name = make_module("def fn(last):\n    return 'from cwd'\n", directory=workdir)
    assert load_function(f"{name}:fn")(None) == "from cwd"


def test_load_function_imports_a_dotted_module(make_module, tmp_path):
    name = make_module("def fn(last):\n    return 'dotted'\n", package=True)
    assert load_function(f"{name}.snapshots:fn", [str(tmp_path / "python")])(None) == "dotted"


def test_load_function_missing_module(workdir, tmp_path):
    spec = f"auto_cdc_test_missing_{uuid.uuid4().hex}:fn"
    with pytest.raises(SnapshotFunctionError, match=f"'{spec}'.*cannot import"):
        load_function(spec, [str(tmp_path / "python")])


def test_load_function_missing_attribute(make_module, tmp_path):
    name = make_module("def fn(last):\n    return None\n")
    spec = f"{name}:no_such_function"
    with pytest.raises(SnapshotFunctionError, match=f"'{spec}'.*has no function no_such_function"):
        load_function(spec, [str(tmp_path / "python")])


def test_load_function_attribute_that_is_not_callable(make_module, tmp_path):
    name = make_module("fn = 42\n")
    with pytest.raises(SnapshotFunctionError, match=f"'{name}:fn'"):
        load_function(f"{name}:fn", [str(tmp_path / "python")])


@pytest.mark.parametrize("spec", ["module_without_colon", "module.fn", ":fn", "module:", ""])
def test_load_function_spec_needs_module_colon_function(spec, workdir):
    with pytest.raises(SnapshotFunctionError, match=f"'{spec}'.*package.module:function"):
        load_function(spec)


# --------------------------------------------------------------------------- Plugin


def test_plugin_initialize_tolerates_unknown_config_keys(tmp_path):
    plugin = Plugin(name="auto_cdc", plugin_config={"paths": [str(tmp_path), tmp_path / "p"], "some_other_key": 1})
    assert plugin.paths == [str(tmp_path), str(tmp_path / "p")]
    assert os.path.isdir(plugin.spill_dir)


def test_plugin_initialize_accepts_a_single_path_string(tmp_path):
    assert Plugin(name="auto_cdc", plugin_config={"paths": str(tmp_path)}).paths == [str(tmp_path)]


def test_plugin_initialize_without_paths():
    assert Plugin(name="auto_cdc", plugin_config={}).paths == []


def test_plugin_is_created_the_way_dbt_duckdb_creates_plugins(tmp_path):
    plugin = BasePlugin.create("auto_cdc.plugin", config={"paths": [str(tmp_path)], "other": True})
    assert isinstance(plugin, Plugin)
    assert plugin.paths == [str(tmp_path)]


NEXT_SNAPSHOT_AND_VERSION = """\
import os

DIRECTORY = {directory!r}


def next_snapshot_and_version(latest_snapshot_version):
    version = 1 if latest_snapshot_version is None else latest_snapshot_version + 1
    path = os.path.join(DIRECTORY, f"snapshot_{{version}}.csv")
    if not os.path.exists(path):
        return None
    return path, version


def broken(latest_snapshot_version):
    raise RuntimeError("snapshot store unreachable")
"""


@pytest.fixture
def snapshots_module(make_module, tmp_path) -> str:
    write_csv(tmp_path / "snapshot_1.csv", [(1, "a"), (2, "b")])
    write_csv(tmp_path / "snapshot_2.csv", [(2, "b2"), (3, "c")])
    return make_module(NEXT_SNAPSHOT_AND_VERSION.format(directory=str(tmp_path)), directory=tmp_path)


def configured(plugin_config: dict[str, Any], conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    Plugin(name="auto_cdc", plugin_config=plugin_config).configure_connection(conn)
    return conn


def call(conn: Any, spec: str, last_text: str | None, last_type: str | None) -> dict[str, str] | None:
    def literal(text: str | None) -> str:
        return "NULL" if text is None else "'" + text.replace("'", "''") + "'"

    [answer] = conn.execute(
        f"select {SQL_FUNCTION}({literal(spec)}, {literal(last_text)}, {literal(last_type)})"
    ).fetchone()
    return None if answer is None else json.loads(answer)


def test_plugin_end_to_end_over_csv_snapshots(conn, snapshots_module, tmp_path):
    configured({"paths": [str(tmp_path)], "some_other_key": 1}, conn)
    spec = f"{snapshots_module}:next_snapshot_and_version"

    first = call(conn, spec, None, None)
    assert conn.execute(f"select {first['version_sql']}").fetchone() == (1,)
    assert rows_of(conn, first["snapshot_sql"]) == [(1, "a"), (2, "b")]

    second = call(conn, spec, "1", "BIGINT")
    assert conn.execute(f"select {second['version_sql']}").fetchone() == (2,)
    assert rows_of(conn, second["snapshot_sql"]) == [(2, "b2"), (3, "c")]

    assert call(conn, spec, "2", "BIGINT") is None


def test_plugin_with_a_plain_string_path(conn, snapshots_module, tmp_path):
    configured({"paths": str(tmp_path)}, conn)
    answer = call(conn, f"{snapshots_module}:next_snapshot_and_version", None, None)
    assert rows_of(conn, answer["snapshot_sql"]) == [(1, "a"), (2, "b")]


def test_plugin_loop_as_the_materialization_runs_it(conn, snapshots_module, tmp_path):
    """The macro's loop: last version kept in a table, handed over as cast(... as varchar) + typeof."""
    configured({"paths": [str(tmp_path)]}, conn)
    conn.execute("create temp table last_version as select cast(null as bigint) as version where 1 = 0")
    spec = f"{snapshots_module}:next_snapshot_and_version"
    seen = []
    for _ in range(5):
        [answer] = conn.execute(
            f"select {SQL_FUNCTION}('{spec}', (select cast(version as varchar) from last_version), "
            "(select typeof(version) from last_version))"
        ).fetchone()
        if answer is None:
            break
        chosen = json.loads(answer)
        seen.append(rows_of(conn, chosen["snapshot_sql"]))
        conn.execute(f"create or replace temp table last_version as select {chosen['version_sql']} as version")
    assert seen == [[(1, "a"), (2, "b")], [(2, "b2"), (3, "c")]]
    assert conn.execute("select version, typeof(version) from last_version").fetchone() == (2, "BIGINT")


def test_plugin_round_trips_date_versions(conn, make_module, tmp_path):
    module = make_module(
        """\
        import datetime

        def fn(last):
            if last is None:
                return "values (1)", datetime.date(2024, 1, 31)
            if last == datetime.date(2024, 1, 31):
                return "values (2)", last + datetime.timedelta(days=1)
            assert isinstance(last, datetime.date), repr(last)
            return None
        """
    )
    configured({"paths": [str(tmp_path / "python")]}, conn)
    first = call(conn, f"{module}:fn", None, None)
    version, type_name, text = round_trip(conn, first["version_sql"])
    assert (version, type_name, text) == (dt.date(2024, 1, 31), "DATE", "2024-01-31")
    second = call(conn, f"{module}:fn", text, type_name)
    assert conn.execute(f"select {second['version_sql']}").fetchone() == (dt.date(2024, 2, 1),)
    assert call(conn, f"{module}:fn", "2024-02-01", "DATE") is None


def test_plugin_spills_a_data_frame_from_inside_a_query(conn, make_module, tmp_path):
    pytest.importorskip("numpy")
    module = make_module(
        """\
        import numpy

        def fn(last):
            return None if last else ({"id": numpy.array([7, 8])}, 1)
        """
    )
    configured({"paths": [str(tmp_path / "python")]}, conn)
    answer = call(conn, f"{module}:fn", None, None)
    assert rows_of(conn, answer["snapshot_sql"]) == [(7,), (8,)]


def test_plugin_function_is_visible_from_a_cursor(conn, snapshots_module, tmp_path):
    configured({"paths": [str(tmp_path)]}, conn)
    cursor = conn.cursor()
    try:
        answer = call(cursor, f"{snapshots_module}:next_snapshot_and_version", "1", "BIGINT")
        assert rows_of(cursor, answer["snapshot_sql"]) == [(2, "b2"), (3, "c")]
        listed = f"select count(*) from duckdb_functions() where function_name = '{SQL_FUNCTION}'"
        assert cursor.execute(listed).fetchone()[0] >= 1
    finally:
        cursor.close()


def test_plugin_function_is_listed_in_duckdb_functions(conn):
    configured({}, conn)
    rows = conn.execute(
        "select function_type, return_type, parameter_types from duckdb_functions() "
        f"where function_name = '{SQL_FUNCTION}'"
    ).fetchall()
    assert rows == [("scalar", "VARCHAR", ["VARCHAR", "VARCHAR", "VARCHAR"])]


def test_plugin_user_exception_surfaces_as_a_duckdb_error(conn, snapshots_module, tmp_path):
    configured({"paths": [str(tmp_path)]}, conn)
    with pytest.raises(duckdb.Error, match="snapshot store unreachable"):
        call(conn, f"{snapshots_module}:broken", None, None)


def test_plugin_bad_spec_surfaces_as_a_duckdb_error_naming_it(conn, workdir, tmp_path):
    configured({"paths": [str(tmp_path)]}, conn)
    spec = f"auto_cdc_test_missing_{uuid.uuid4().hex}:fn"
    with pytest.raises(duckdb.Error, match=spec):
        call(conn, spec, None, None)
