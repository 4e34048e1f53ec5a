#!/usr/bin/env bash
# demo.sh under dbt v2, the Rust engine: the example project (integration_tests/) built by
# dbt-core 2.0.0-alpha.4 on DuckDB, and the same three tables. Installs what it needs: the v2 CLI
# comes with dbt-core 1.12.0 (the `dbt-core-experimental-parser` wheel, scripts/constraints.txt),
# its DuckDB driver is DuckDB's own library from npm, named in a temporary folder
# (tests/v2_env.py).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e . -c scripts/constraints.txt

driver_home="$(mktemp -d)"
python3 - "$driver_home" <<'EOF'
import os, sys
from pathlib import Path
sys.path.insert(0, "tests")
import v2_env
v2_env.driver_path(Path(sys.argv[1]), Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dbt-auto-cdc")
EOF
export ADBC_DRIVER_PATH="$driver_home" RUST_BACKTRACE=0 DO_NOT_TRACK=1
dbt2="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/dbt-core-experimental-parser"
"$dbt2" --version

cd integration_tests
export AUTO_CDC_DUCKDB_PATH="${AUTO_CDC_DUCKDB_PATH:-$(mktemp -d)/auto_cdc_demo_v2.duckdb}"
"$dbt2" deps --profiles-dir . --quiet
"$dbt2" build --profiles-dir . --target duckdb
echo
echo "The users change feed applied as SCD type 1 (SPEC 7.1), under dbt v2:"
"$dbt2" show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select * from {{ ref("users") }} order by "userId"'
echo
echo "The same feed as SCD type 2 history (SPEC 7.3):"
"$dbt2" show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select * from {{ ref("users_history") }} order by "userId", "__START_AT"'
echo
echo "Two dated snapshot files (data/user_snapshots/) as SCD type 2 history (SPEC 7.5):"
"$dbt2" show --profiles-dir . --target duckdb --quiet --limit 50 \
  --inline 'select * from {{ ref("users_from_files") }} order by "userId", "__START_AT"'
