#!/usr/bin/env bash
# Runs every test on DuckDB and PostgreSQL, the Spark tier (tests marked `spark`) on a local
# Spark with Iceberg tables, and the v2 tier (tests marked `dbt_v2`) on DuckDB under dbt v2.
# Installs what is missing: the Python packages (the duckdb, postgres and spark extras, and the
# development ones, dev, typecheck and dev-debezium, with the pins of scripts/constraints.txt; dbt v2's CLI
# comes with dbt-core 1.12.0) and, through apt when run as root, the PostgreSQL
# server, Java 17 (Spark, and real Debezium in tests/debezium_capture.py) and npm (which fetches
# dbt v2's DuckDB driver, tests/v2_env.py). The tests start private PostgreSQL servers and a
# Spark session themselves and stop them when they end.
# Extra arguments go to pytest (e.g. scripts/test.sh -k golden). AUTO_CDC_SPARK=0 leaves the
# Spark tier out, and with it pyspark; AUTO_CDC_V2=0 the v2 tier, and with it npm.
set -euo pipefail
cd "$(dirname "$0")/.."

spark_tier=$([ "${AUTO_CDC_SPARK:-1}" != "0" ] && echo 1 || echo 0)
v2_tier=$([ "${AUTO_CDC_V2:-1}" != "0" ] && echo 1 || echo 0)
extras="duckdb,postgres,dev,typecheck,dev-debezium"
if [ "$spark_tier" = 1 ]; then extras="$extras,spark"; fi
python3 -m pip install --quiet --disable-pip-version-check -e ".[$extras]" -c scripts/constraints.txt

apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$1 is missing; install it (e.g. apt-get install $2) and rerun." >&2
    exit 1
  fi
  echo "Installing $1 through apt..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "$2" >/dev/null
}

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  apt_install "The PostgreSQL server" postgresql
fi
# Spark 3.5 and Debezium 3.6 run on Java 17 (found under /usr/lib/jvm or at JAVA_HOME).
if [ -z "${JAVA_HOME:-}" ] && ! ls -d /usr/lib/jvm/java-17-openjdk-* >/dev/null 2>&1; then
  apt_install "Java 17" openjdk-17-jre-headless
fi
if [ "$v2_tier" = 1 ] && ! command -v npm >/dev/null 2>&1; then
  apt_install "npm" npm
fi

# Lint, format and types (pyproject.toml; .pre-commit-config.yaml runs the same before a commit).
ruff check .
ruff format --check .
mypy
# Two workers (one per core); the example project's tests share its directory, so they stay on
# one worker (xdist_group).
python3 -m pytest -n 2 --dist loadgroup --durations=15 "$@"
