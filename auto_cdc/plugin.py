"""dbt-duckdb plugin for `snapshot_version_function` (docs/snapshots.md, "Python snapshot versions").

Enable it in profiles.yml::

    plugins:
      - module: auto_cdc.plugin
        config: {paths: ["python"]}   # optional: folders (relative to where dbt runs) to import from

It registers the SQL function ``auto_cdc_next_snapshot(function, last_version, last_type)``.
The auto_cdc_from_snapshot materialization calls it until it returns NULL. It imports the user's
``package.module:function``, calls it with the last processed version (None the first time) and
answers with JSON: the version as a SQL literal and a query that reads the snapshot. A data frame
is written to a Parquet file first: a function running inside a query cannot register objects on
the connection that runs the query.
"""

from __future__ import annotations

import atexit
import datetime as dt
import decimal
import importlib
import json
import math
import numbers
import os
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable
from typing import Any, cast

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin

SQL_FUNCTION = "auto_cdc_next_snapshot"

_FILE_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".gz", ".zst")
_RELATION = re.compile(r'^(?:[A-Za-z_][\w$]*|"(?:[^"]|"")+")(?:\.(?:[A-Za-z_][\w$]*|"(?:[^"]|"")+")){0,2}$')
# A keyword followed by a word, dot or slash is a file name ("values.csv", "table/x.csv").
_QUERY_START = re.compile(r"^\s*(?:\(|(?:select|with|from|values|table)(?![\w.$/\\]))", re.IGNORECASE)
_DECIMAL_SCALE = 18
_INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}


class SnapshotFunctionError(ValueError):
    """The user's snapshot function or its result cannot be used."""


def load_function(spec: str, paths: Iterable[str] = ()) -> Callable[[Any], Any]:
    """Import 'package.module:function'; `paths` (and the working directory) are searched first."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SnapshotFunctionError(f"snapshot_version_function '{spec}': write it as 'package.module:function'")
    for path in [*paths, os.getcwd()]:
        absolute = os.path.abspath(path)
        if absolute not in sys.path:
            sys.path.insert(0, absolute)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SnapshotFunctionError(
            f"snapshot_version_function '{spec}': cannot import {module_name}: {error}"
        ) from error
    function = getattr(module, attribute, None)
    if not callable(function):
        raise SnapshotFunctionError(f"snapshot_version_function '{spec}': {module_name} has no function {attribute}")
    return cast("Callable[[Any], Any]", function)


def parse_version(text: str | None, type_name: str | None) -> Any:
    """The last processed version as the Python value the function returned: DuckDB hands it
    over as text plus its SQL type."""
    if text is None:
        return None
    name = (type_name or "VARCHAR").upper()
    if name in _INTEGER_TYPES:
        return int(text)
    if name in {"DOUBLE", "FLOAT", "REAL"}:
        return float(text)
    if name.startswith("DECIMAL"):
        return decimal.Decimal(text)
    if name == "DATE":
        return dt.date.fromisoformat(text)
    if name.startswith("TIMESTAMP"):
        return dt.datetime.fromisoformat(text)
    return text


def version_literal(version: Any) -> str:
    """A SQL literal for a version, typed so that versions compare in their natural order."""
    if isinstance(version, bool):
        raise SnapshotFunctionError("a snapshot version cannot be a bool; use an int, a string, a date or a timestamp")
    if isinstance(version, numbers.Integral):  # also numpy integers
        version = int(version)
        return f"cast({version} as {'bigint' if -(2**63) <= version < 2**63 else 'hugeint'})"
    if isinstance(version, float):  # also numpy floats, whose repr is no SQL
        if math.isnan(version):
            raise SnapshotFunctionError("a snapshot version cannot be NaN: it is not ordered")
        return f"cast('{float(version)!r}' as double)"
    if isinstance(version, decimal.Decimal):
        # One type for every version (the stored versions' type is checked on each run).
        exponent = version.normalize().as_tuple().exponent if version.is_finite() else None
        if not isinstance(exponent, int) or exponent < -_DECIMAL_SCALE:
            raise SnapshotFunctionError(
                f"a Decimal snapshot version must be finite with at most {_DECIMAL_SCALE} decimals"
            )
        return f"cast('{version}' as decimal(38, {_DECIMAL_SCALE}))"
    if isinstance(version, dt.datetime):
        kind = "timestamptz" if version.tzinfo is not None else "timestamp"
        return f"cast('{version.isoformat(sep=' ')}' as {kind})"
    if isinstance(version, dt.date):
        return f"cast('{version.isoformat()}' as date)"
    if isinstance(version, str):
        return _string_literal(version)
    raise SnapshotFunctionError(
        f"a snapshot version must be an int, str, date, datetime, float or Decimal, not {type(version).__name__}"
    )


def snapshot_query(snapshot: Any, spill_dir: str) -> str:
    """A query that reads `snapshot`: SQL text, a relation name, a file path or glob, or a data
    frame (pandas, Arrow, Polars: anything DuckDB can scan), which is spilled to Parquet."""
    if isinstance(snapshot, str):
        text = snapshot.strip()
        if _QUERY_START.match(text):
            return text
        if any(mark in text for mark in ("/", "\\", "*", "?")) or text.lower().endswith(_FILE_SUFFIXES):
            return f"select * from {_string_literal(text)}"
        if _RELATION.match(text):
            return f"select * from {text}"
        raise SnapshotFunctionError(f"cannot tell whether snapshot '{text}' is a query, a relation or a file")
    path = os.path.join(spill_dir, f"snapshot_{uuid.uuid4().hex}.parquet")
    with duckdb.connect() as scratch:  # not the connection running the query (see module docstring)
        try:
            scratch.register("snapshot_frame", snapshot)
        except Exception as error:
            raise SnapshotFunctionError(
                "a snapshot must be SQL text, a relation name, a file path or a data frame, "
                f"not {type(snapshot).__name__}"
            ) from error
        scratch.execute(f"copy snapshot_frame to {_string_literal(path)} (format parquet)")
    return f"select * from read_parquet({_string_literal(path)})"


def next_snapshot(function: Callable[[Any], Any], last_version: Any, spill_dir: str) -> str | None:
    """Calls the user's function once; returns the JSON answer for the materialization, or None."""
    result = function(last_version)
    if result is None:
        return None
    if not isinstance(result, tuple) or len(result) != 2:
        raise SnapshotFunctionError(
            f"the snapshot function must return None or (snapshot, version), not {result!r:.200}"
        )
    snapshot, version = result
    if version is None:
        raise SnapshotFunctionError(
            "the snapshot function returned a NULL (None) version; every snapshot needs a version"
        )
    return json.dumps({"version_sql": version_literal(version), "snapshot_sql": snapshot_query(snapshot, spill_dir)})


def _string_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Plugin(BasePlugin):
    """Registers auto_cdc_next_snapshot on every DuckDB connection dbt opens."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        # Keys this plugin does not know are ignored: a shared plugin config may carry others.
        paths = plugin_config.get("paths") or []
        self.paths: list[str] = [paths] if isinstance(paths, str) else [str(path) for path in paths]
        self.functions: dict[str, Callable[[Any], Any]] = {}
        self.spill_dir = tempfile.mkdtemp(prefix="auto_cdc_snapshots_")
        atexit.register(shutil.rmtree, self.spill_dir, ignore_errors=True)

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        conn.create_function(
            SQL_FUNCTION,
            self._next_snapshot,
            [duckdb.sqltype("VARCHAR")] * 3,
            duckdb.sqltype("VARCHAR"),
            # A string: DuckDB's stubs name an enum that DuckDB 2.0 does not export.
            null_handling=cast(Any, "special"),
            side_effects=True,
        )

    def _next_snapshot(self, spec: str, last_text: str | None, last_type: str | None) -> str | None:
        if spec not in self.functions:
            self.functions[spec] = load_function(spec, self.paths)
        return next_snapshot(self.functions[spec], parse_version(last_text, last_type), self.spill_dir)
