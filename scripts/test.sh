#!/usr/bin/env bash
# Runs every test on DuckDB and PostgreSQL. Installs what is missing: the Python packages
# (with the development extras) and, through apt when run as root, the PostgreSQL server.
# The tests start a private PostgreSQL server themselves and stop it when they end.
# Extra arguments go to pytest (e.g. scripts/test.sh -k golden).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e ".[dev]"

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "PostgreSQL server binaries are missing; install them (e.g. apt-get install postgresql) and rerun." >&2
    exit 1
  fi
  echo "Installing PostgreSQL through apt..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

ruff check .
# Two workers (one per core); the example project's tests share its directory, so they stay on
# one worker (xdist_group).
python3 -m pytest -n 2 --dist loadgroup --durations=15 "$@"
