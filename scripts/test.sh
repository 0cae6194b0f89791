#!/usr/bin/env bash
# Install rowvoi into a fresh virtual environment and run every test:
# the pytest suite (Python API, doctests, CLI, the installed C library) and
# the C unit tests under ctest.  Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# hnswlib ships as source and compiles on install with -march=native unless
# told otherwise; a portable build keeps the venv usable on other CPUs.
export HNSWLIB_NO_NATIVE=1
VENV=${ROWVOI_TEST_VENV:-.venv}

"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet ".[test]"

echo "== pytest"
# Run from tests/ so the source tree's python/ is never imported instead of
# the installed package.
(cd tests && "../$VENV/bin/python" -m pytest -c ../pyproject.toml --rootdir .. "$@")

echo "== ctest"
cmake -S . -B build/ctest -DCMAKE_BUILD_TYPE=Debug -DRV_BUILD_TESTS=ON >/dev/null
cmake --build build/ctest --parallel 2 >/dev/null
ctest --test-dir build/ctest --output-on-failure
