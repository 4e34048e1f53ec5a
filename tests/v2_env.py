"""dbt v2 (the Rust engine) on DuckDB, for the v2 tier of the tests and scripts/demo_v2.sh.

The v2 CLI installable here is dbt-core 2.0.0-alpha.4: the binary `dbt-core-experimental-parser`
of the PyPI wheel that dbt-core 1.12.0 depends on (scripts/constraints.txt). It reaches DuckDB
through ADBC and would download a driver when it first runs; here it loads DuckDB's own C
library instead, from the npm package below, named by a driver manifest in the folder that
ADBC_DRIVER_PATH gives. That DuckDB (1.5) reads database files up to DuckDB 1.5's storage
format, so a file that Python's DuckDB (2.x) creates for it must be created in that format
(STORAGE_COMPATIBILITY).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "dbt-core 2.0.0-alpha.4"
DRIVER_PACKAGE = "@duckdb/node-bindings-linux-x64@1.5.6-r.1"
DRIVER_VERSION = "1.5.6"
# duckdb.connect(config=...) for a file v2's DuckDB opens: created in the format it reads.
STORAGE_COMPATIBILITY = {"storage_compatibility_version": "v1.5.0"}


def binary() -> Path:
    """The v2 CLI installed with this interpreter's packages (the wheel puts it next to python)."""
    found = Path(sys.executable).parent / "dbt-core-experimental-parser"
    if not found.exists():
        raise RuntimeError(f"{found} is missing: install dbt-core 1.12.0 (scripts/test.sh does)")
    version = subprocess.run([str(found), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if version != VERSION:
        raise RuntimeError(f"{found} is {version!r}; the v2 tier is written for {VERSION!r}")
    return found


def driver_library(cache: Path) -> Path:
    """DuckDB's C library from npm (`npm pack`: the package's tarball, no install), kept in `cache`."""
    library = cache / f"duckdb-{DRIVER_VERSION}" / "libduckdb.so"
    if library.exists():
        return library
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is missing: the v2 tier takes DuckDB's driver from npm (scripts/test.sh installs npm)")
    # Each worker packs and extracts in a directory of its own, then renames into place: the
    # library is whole or absent, whichever worker gets there first.
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix="npm-pack-") as download:
        tarball = subprocess.run(
            [npm, "pack", DRIVER_PACKAGE, "--silent"], cwd=download, capture_output=True, text=True, check=True
        ).stdout.split()[-1]
        with tarfile.open(Path(download) / tarball) as archive:
            content = archive.extractfile("package/libduckdb.so")
            assert content is not None
            partial = Path(download) / "libduckdb.so"
            partial.write_bytes(content.read())
        library.parent.mkdir(parents=True, exist_ok=True)
        partial.replace(library)
    return library


def driver_path(home: Path, cache: Path) -> Path:
    """A folder for ADBC_DRIVER_PATH holding the manifest that names the DuckDB library."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "duckdb.toml").write_text(
        "manifest_version = 1\n"
        "name = 'DuckDB'\n"
        f"version = '{DRIVER_VERSION}'\n"
        "[Driver]\n"
        "entrypoint = 'duckdb_adbc_init'\n"
        "[Driver.shared]\n"
        f"linux_amd64 = '{driver_library(cache)}'\n"
    )
    return home


def environment(driver_home: Path) -> dict[str, str]:
    """The environment a v2 invocation runs in: the driver, no backtraces in error messages, no
    usage statistics (CI reaches no host but the package registries)."""
    env = dict(os.environ)
    env.update({"ADBC_DRIVER_PATH": str(driver_home), "RUST_BACKTRACE": "0", "DO_NOT_TRACK": "1"})
    return env
