"""A local Spark 3.5 with Iceberg tables, for the Spark tier of the tests and the benchmark.

Test set-up only (README, "Spark"): on a real cluster users load the standard Iceberg runtime.
Here the runtime jar comes from the PyPI package snowpark-connect-deps-iceberg, whose copy lacks
the relocated Jackson classes it references (the first Iceberg write fails with
NoClassDefFoundError .../shaded/com/fasterxml/jackson/core/JsonFactoryBuilder). `jackson_shim`
builds them from pyspark's own Jackson jars by renaming the package in each class file's
constant pool, which is all the Iceberg build's shading does.

The session runs in dbt-spark's `session` mode, in the test process: one JVM per process, which
every dbt invocation and the tests' own reads share (SparkSession.getOrCreate). Its Hive
metastore is an embedded Derby database, which allows one JVM per directory, so each process
gets its own `home`.
"""

from __future__ import annotations

import glob
import hashlib
import os
import struct
import zipfile
from pathlib import Path
from typing import Any

RUNTIME_JAR = "iceberg-spark-runtime-3.5_2.12-*.jar"  # pyspark 3.5 bundles Scala 2.12
SHADED = "org/apache/iceberg/shaded/"
JACKSON_JARS = (
    "jackson-core-2.*.jar",
    "jackson-databind-2.*.jar",
    "jackson-annotations-2.*.jar",
    "jackson-datatype-jsr310-2.*.jar",
)
# Constant-pool entry sizes (tag -> bytes, tag included) for every tag but UTF-8 (1).
_CONSTANT_SIZES = {3: 5, 4: 5, 5: 9, 6: 9, 7: 3, 8: 3, 9: 5, 10: 5, 11: 5, 12: 5}
_CONSTANT_SIZES.update({15: 4, 16: 3, 17: 5, 18: 5, 19: 3, 20: 3})


def java_home() -> str | None:
    """JAVA_HOME, or the Java 17 that apt installs (scripts/test.sh)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    found = sorted(glob.glob("/usr/lib/jvm/java-17-openjdk-*"))
    return found[0] if found else None


def pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def iceberg_runtime_jar() -> Path:
    import snowpark_connect_deps_iceberg

    (jar,) = (Path(snowpark_connect_deps_iceberg.__file__).parent / "jars").glob(RUNTIME_JAR)
    return jar


def relocate(class_file: bytes, mapping: list[tuple[bytes, bytes]]) -> bytes:
    """A class file with every UTF-8 constant rewritten by `mapping` (old prefix, new prefix)."""
    assert class_file[:4] == b"\xca\xfe\xba\xbe", "not a class file"
    count = struct.unpack(">H", class_file[8:10])[0]
    out, pos, index = [class_file[:10]], 10, 1
    while index < count:
        tag = class_file[pos]
        if tag == 1:
            length = struct.unpack(">H", class_file[pos + 1 : pos + 3])[0]
            text = class_file[pos + 3 : pos + 3 + length]
            for old, new in mapping:
                text = text.replace(old, new)
            out.append(b"\x01" + struct.pack(">H", len(text)) + text)
            pos += 3 + length
        else:
            size = _CONSTANT_SIZES[tag]
            out.append(class_file[pos : pos + size])
            pos += size
        index += 2 if tag in (5, 6) else 1  # long and double take two slots
    out.append(class_file[pos:])
    return b"".join(out)


def jackson_shim(cache_dir: Path) -> Path:
    """The jar of pyspark's Jackson classes relocated under org.apache.iceberg.shaded, built once
    per pyspark installation (its name carries a hash of the source jars' paths and sizes)."""
    sources = [next(iter(sorted(pyspark_jars().glob(pattern)))) for pattern in JACKSON_JARS]
    digest = hashlib.sha256("".join(f"{p}:{p.stat().st_size}" for p in sources).encode()).hexdigest()[:12]
    shim = cache_dir / f"iceberg-jackson-shim-{digest}.jar"
    if shim.exists():
        return shim
    mapping = [
        (b"com/fasterxml/jackson/", (SHADED + "com/fasterxml/jackson/").encode()),
        (b"com.fasterxml.jackson.", (SHADED.replace("/", ".") + "com.fasterxml.jackson.").encode()),
    ]
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = shim.with_suffix(f".{os.getpid()}.tmp")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for jar in sources:
            with zipfile.ZipFile(jar) as source:
                for name in source.namelist():
                    if name.endswith(".class") and not name.startswith("META-INF/") and "module-info" not in name:
                        out.writestr(SHADED + name, relocate(source.read(name), mapping))
    partial.replace(shim)  # atomic: two test workers may build it at once
    return shim


def session_parameters(home: Path, cache_dir: Path) -> dict[str, str]:
    """The Spark configuration (profiles.yml `server_side_parameters`): local[2], Iceberg as the
    session catalog over an embedded Derby Hive metastore in `home`."""
    return {
        "spark.master": "local[2]",
        "spark.driver.memory": "2g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.jars": f"{iceberg_runtime_jar()},{jackson_shim(cache_dir)}",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "hive",
        # Iceberg's catalog cache (on by default) serves a table's metadata for 30 s: a table
        # dropped with its database, or written by another process, would look unchanged.
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
        # Embedded Derby has no Hive lock tables; a fresh Derby database has no schema version.
        "spark.hadoop.iceberg.engine.hive.lock-enabled": "false",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={home}",
    }


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
