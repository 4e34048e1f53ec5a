"""Distribution `dbt-auto-cdc`: the Python side of the auto_cdc dbt package.

The dbt package itself (macros, materializations) lives at the repository root and is
installed with `dbt deps`; this distribution pins the dbt adapters it is tested with and
carries the import package `auto_cdc` (the DuckDB plugin for Python snapshot versions).
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
        "dbt-core>=1.10,<1.12",
        "dbt-duckdb>=1.10",
        "dbt-postgres>=1.10",
    ],
    extras_require={
        "dev": [
            "pytest>=8",
            "pytest-xdist>=3.5",  # the suite runs on two workers
            "hypothesis>=6.100",
            "ruff>=0.5",
            "psycopg2-binary>=2.9",
            "pandas>=2",  # the plugin tests spill a real data frame
        ],
    },
)
