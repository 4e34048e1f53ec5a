#!/usr/bin/env bash
# The lowest versions setup.py admits (dbt-core, dbt-duckdb and dbt-postgres 1.10, DuckDB 1.4),
# in a fresh virtual environment: dbt-native behaviour, contracts, config keys and the
# lifecycle (--empty, missing tables, config changes between runs), which lean most on dbt's
# internals, on DuckDB and PostgreSQL. The example project is left out: after a full-suite run in the
# same checkout its PostgreSQL build once found no auto_cdc materialization on dbt 1.10 (cause
# not found yet; it passes alone).
# Needs the package registries; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="$(mktemp -d)/lowest"
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[duckdb,postgres,dev]" \
  "dbt-core~=1.10.0" "dbt-duckdb~=1.10.0" "dbt-postgres~=1.10.0" "duckdb~=1.4.0"
"$venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null | grep -Ei '^(dbt-core|dbt-duckdb|dbt-postgres|duckdb) '
# Without the Spark tier, which pins dbt-spark 1.11 (and with it dbt-adapters 1.24 or newer), and
# the v2 tier, whose CLI comes with dbt-core 1.12.
AUTO_CDC_SPARK=0 AUTO_CDC_V2=0 "$venv/bin/python" -m pytest -n 2 --dist loadgroup -q -p no:cacheprovider \
  tests/test_dbt_native.py tests/test_config_keys.py tests/test_contracts.py tests/test_lifecycle.py "$@"
