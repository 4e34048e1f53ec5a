#!/usr/bin/env bash
# Runs the example project (integration_tests/) on embedded DuckDB and prints the SCD1 table
# and the SCD2 history that the SPEC 7.1/7.3 users change feed produces, and the history two
# dated snapshot files give (SPEC 7.5), and the dashboard of their runs. Installs the Python packages it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e ".[duckdb]" -c scripts/constraints.txt

cd integration_tests
export AUTO_CDC_DUCKDB_PATH="${AUTO_CDC_DUCKDB_PATH:-$(mktemp -d)/auto_cdc_demo.duckdb}"
dbt deps --profiles-dir . --quiet
dbt build --profiles-dir . --target duckdb
echo
echo "The users change feed applied as SCD type 1 (SPEC 7.1):"
dbt show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select * from {{ ref("users") }} order by "userId"'
echo
echo "The same feed as SCD type 2 history (SPEC 7.3):"
dbt show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select * from {{ ref("users_history") }} order by "userId", "__START_AT"'
echo
echo "Two dated snapshot files (data/user_snapshots/) as SCD type 2 history (SPEC 7.5):"
dbt show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select * from {{ ref("users_from_files") }} order by "userId", "__START_AT"'
echo
echo "What each model's latest run did, from the dashboard model over auto_cdc.run_history() (docs/monitoring.md):"
dbt show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select model_name, events_read, events_ignored, num_live_tombstones, duration_s from {{ ref("cdc_dashboard") }} order by model_name'
