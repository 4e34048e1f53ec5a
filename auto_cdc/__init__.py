"""dbt-auto-cdc: change-data-capture materializations for dbt (Python side)."""

from importlib.metadata import PackageNotFoundError, version

try:
    # The installed distribution's version, which setup.py reads from dbt_project.yml.
    __version__ = version("dbt-auto-cdc")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"
