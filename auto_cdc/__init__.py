"""dbt-auto-cdc: change-data-capture materializations for dbt (Python side)."""

__version__ = "0.1.0"
