"""A local Spark 3.5 session with Iceberg tables, for dbt-spark's `session` method
(docs/spark.md): the profile, run from the dbt project's directory::

    python -m auto_cdc.spark > profiles.yml

prints a profiles.yml whose `server_side_parameters` load the Iceberg runtime, make Iceberg the
session catalog, and keep the Hive metastore in an embedded Derby database under `--home`
(default `./spark-local`), with the settings an embedded Derby needs: it has no Hive lock
tables (Iceberg's first commit would wait on them for minutes, then fail to find its lock) and a
new one has no schema version. Derby lets one process open the database at a time: one `dbt`
command at a time per home.

The Iceberg runtime jar comes from the PyPI package snowpark-connect-deps-iceberg (the `spark`
extra), or from `--iceberg-jar` (e.g. Maven Central's iceberg-spark-runtime-3.5_2.12). The PyPI
copy lacks the relocated Jackson classes it refers to (the first Iceberg write fails with
NoClassDefFoundError .../shaded/com/fasterxml/jackson/core/JsonFactoryBuilder): `jackson_shim`
builds them from pyspark's own Jackson jars by renaming the package in each class file's
constant pool, which is all the Iceberg build's shading does. A runtime that has them gets no
shim. The test suite's Spark session (tests/spark_env.py) is configured by `session_parameters`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import struct
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import yaml

RUNTIME_JAR = "iceberg-spark-runtime-3.5_2.12-*.jar"  # pyspark 3.5 bundles Scala 2.12
SHADED = "org/apache/iceberg/shaded/"
# A class the runtime refers to under SHADED: a runtime without it needs the shim.
SHADED_MARKER = SHADED + "com/fasterxml/jackson/core/JsonFactoryBuilder.class"
JACKSON_JARS = (
    "jackson-core-2.*.jar",
    "jackson-databind-2.*.jar",
    "jackson-annotations-2.*.jar",
    "jackson-datatype-jsr310-2.*.jar",
)
# Constant-pool entry sizes (tag -> bytes, tag included) for every tag but UTF-8 (1).
_CONSTANT_SIZES = {3: 5, 4: 5, 5: 9, 6: 9, 7: 3, 8: 3, 9: 5, 10: 5, 11: 5, 12: 5}
_CONSTANT_SIZES.update({15: 4, 16: 3, 17: 5, 18: 5, 19: 3, 20: 3})


def iceberg_runtime_jar() -> Path:
    """The Iceberg runtime for Spark 3.5 that snowpark-connect-deps-iceberg carries."""
    try:
        import snowpark_connect_deps_iceberg
    except ImportError:
        raise RuntimeError(
            "no Iceberg runtime: install the spark extra (pip install 'dbt-auto-cdc[spark]', Python 3.10-3.12) "
            "or give the jar with --iceberg-jar"
        ) from None
    (jar,) = (Path(snowpark_connect_deps_iceberg.__file__).parent / "jars").glob(RUNTIME_JAR)
    return jar


def needs_jackson_shim(runtime_jar: Path) -> bool:
    """Whether the runtime lacks the relocated Jackson classes it refers to."""
    with zipfile.ZipFile(runtime_jar) as jar:
        return SHADED_MARKER not in jar.namelist()


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
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    sources = [next(iter(sorted(jars.glob(pattern)))) for pattern in JACKSON_JARS]
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
    partial.replace(shim)  # atomic: two processes may build it at once
    return shim


def session_parameters(
    home: Path, cache_dir: Path | None = None, runtime_jar: Path | None = None, master: str = "local[*]"
) -> dict[str, str]:
    """The Spark configuration (profiles.yml `server_side_parameters`): Iceberg as the session
    catalog over an embedded Derby Hive metastore and a warehouse in `home`. The shim, where the
    runtime needs one, is built in `cache_dir` (default `home`)."""
    home = home.resolve()
    runtime_jar = runtime_jar or iceberg_runtime_jar()
    jars = [runtime_jar]
    if needs_jackson_shim(runtime_jar):
        jars.append(jackson_shim(cache_dir or home))
    return {
        "spark.master": master,
        "spark.driver.memory": "2g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",  # Spark's 200 suits a cluster, not a laptop
        "spark.jars": ",".join(str(jar) for jar in jars),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "hive",
        # Iceberg's catalog cache (on by default) serves a table's metadata for 30 s: a table
        # dropped with its database, or written by another process, would look unchanged.
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
        # Embedded Derby has no Hive lock tables; a fresh Derby database has no schema version.
        "spark.hadoop.iceberg.engine.hive.lock-enabled": "false",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        # Hive compares a table's columns by position: dropping one that is not last (a state
        # column, when partial updates are turned off or a column leaves an SCD2 model) would
        # read as a type change and be refused (Iceberg's docs, "Hive Catalog Limitation").
        "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={home}",
    }


def profile_yaml(profile: str, schema: str, parameters: dict[str, str]) -> str:
    """A profiles.yml with one target, `spark`, in dbt-spark's session mode."""
    target = {
        "type": "spark",
        "method": "session",
        "host": "localhost",  # required by dbt-spark, unused in session mode
        "schema": schema,
        "server_side_parameters": parameters,
    }
    document = {profile: {"target": "spark", "outputs": {"spark": target}}}
    header = "# A local Spark session with Iceberg tables: written by `python -m auto_cdc.spark`.\n"
    body: str = yaml.safe_dump(document, sort_keys=False, width=1000)
    return header + body


def _project_profile() -> str | None:
    """The `profile:` of dbt_project.yml in the current directory."""
    path = Path("dbt_project.yml")
    return str(yaml.safe_load(path.read_text()).get("profile")) if path.exists() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m auto_cdc.spark",
        description="Print a profiles.yml for a local Spark 3.5 session with Iceberg tables (dbt-spark session mode).",
    )
    parser.add_argument("--profile", help="the profile's name (default: dbt_project.yml's `profile` here)")
    parser.add_argument("--schema", default="analytics", help="the target's schema (default: analytics)")
    parser.add_argument(
        "--home",
        type=Path,
        default=Path("spark-local"),
        help="the metastore's and warehouse's directory (default: ./spark-local)",
    )
    parser.add_argument("--iceberg-jar", type=Path, help="an Iceberg runtime jar for Spark 3.5 and Scala 2.12")
    args = parser.parse_args(argv)
    profile = args.profile or _project_profile()
    if not profile:
        parser.error("no dbt_project.yml here: name the profile with --profile")
    if args.iceberg_jar and not args.iceberg_jar.is_file():
        parser.error(f"--iceberg-jar: no such file: {args.iceberg_jar}")
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        print("warning: no Java found; Spark 3.5 needs Java 17 (set JAVA_HOME or put java on PATH)", file=sys.stderr)
    try:
        parameters = session_parameters(args.home, runtime_jar=args.iceberg_jar)
    except RuntimeError as error:
        parser.exit(1, f"{parser.prog}: {error}\n")
    sys.stdout.write(profile_yaml(profile, args.schema, parameters))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
