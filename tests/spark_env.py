"""A local Spark 3.5 with Iceberg tables, for the Spark tier of the tests and the benchmark.

The session's configuration is the one users get from `python -m auto_cdc.spark`
(docs/spark.md), `auto_cdc.spark.session_parameters`, with two cores; this module adds what the
test process needs around it. The session runs in dbt-spark's `session` mode, in the test process: one
JVM per process, which every dbt invocation and the tests' own reads share
(SparkSession.getOrCreate). Its Hive metastore is an embedded Derby database, which allows one
JVM per directory, so each process gets its own `home`.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from auto_cdc import spark


def java_home() -> str | None:
    """JAVA_HOME, or the Java 17 that apt installs (scripts/test.sh)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    found = sorted(glob.glob("/usr/lib/jvm/java-17-openjdk-*"))
    return found[0] if found else None


def session_parameters(home: Path, cache_dir: Path) -> dict[str, str]:
    """The users' configuration on two cores (one per pytest-xdist worker), the Jackson shim
    built once per machine in `cache_dir`, and a larger cache of generated code.

    The Spark tier runs thousands of small queries in one JVM, many of them the same plan over
    another test's tables. Spark keeps the classes it generates for 100 plans; beyond that it
    compiles them again, and the JVM compiles them again in turn: on 2026-12-06 the SCD2 and
    golden tests' Spark tier took 410 s with 10,000 instead of 488 s (CONTRIBUTING.md, "The
    suite's clock"). A cache changes no result. (A user's `dbt run` is a JVM of its own. The
    benchmark's Spark session, bench/cdc_bench/spark.py, is this one, measured since b47c53d.)"""
    parameters = spark.session_parameters(home, cache_dir, master="local[2]")
    parameters["spark.sql.codegen.cache.maxEntries"] = "10000"
    return parameters


def prepare_process(home: Path) -> None:
    """Environment the JVM that pyspark launches reads: Java, loopback, quiet logs."""
    found = java_home()
    if found:
        os.environ["JAVA_HOME"] = found
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = home / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "log4j2.properties").write_text(
        "rootLogger.level = error\nrootLogger.appenderRef.stdout.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\nappender.console.layout.pattern = %p %c{1}: %m%n%ex\n"
    )
    os.environ["SPARK_CONF_DIR"] = str(conf)


def start_session(home: Path, cache_dir: Path) -> Any:
    """The process's Spark session, configured as dbt-spark configures it from the profile (so
    dbt's getOrCreate finds it)."""
    from pyspark.sql import SparkSession

    prepare_process(home)
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in session_parameters(home, cache_dir).items():
        builder = builder.config(key, value)
    builder = builder.config("spark.sql.ansi.enabled", "false")  # as dbt-spark's session mode sets it
    return builder.getOrCreate()
