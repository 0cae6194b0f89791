#!/usr/bin/env bash
# Apply the house formatting: ruff's import order and ruff format to the
# Python, clang-format (.clang-format) to the C of src/ include/ tests/c/
# tests/fuzz/.  scripts/lint.sh checks the same.
# Usage: bash scripts/format.sh [VENV]  (default $ROWVOI_TEST_VENV or
# build/test-venv, the test environment scripts/test.sh makes;
# created if absent; the pinned tools of scripts/lint-requirements.txt are
# installed into it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${1:-${ROWVOI_TEST_VENV:-build/test-venv}}

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
bash scripts/pip-install.sh "$VENV/bin/python" -r scripts/lint-requirements.txt

"$VENV/bin/ruff" check --select I --fix --quiet .
"$VENV/bin/ruff" format .
find src include tests/c tests/fuzz bench/c -path tests/fuzz/corpus -prune \
    -o -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    xargs -0 "$VENV/bin/clang-format" -i
echo "formatted"
