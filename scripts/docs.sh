#!/usr/bin/env bash
# Build the documentation (docs/) with every warning an error, then run
# every example it shows (the doctest builder: each rendered docstring's
# examples in its module's namespace, and the pages' own test blocks).
# Uses the test environment scripts/test.sh makes (build/test-venv, or
# $ROWVOI_TEST_VENV), with rowvoi installed in it (made first when missing);
# adds the `docs` extra's requirements from pyproject.toml.
# Output: docs/_build/html/index.html.  Usage: bash scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ROWVOI_TEST_VENV:-build/test-venv}
case $VENV in /*) ;; *) VENV=$PWD/$VENV ;; esac
PY="$VENV/bin/python"
# The examples' temporary folders (the docstrings' tempfile.mkdtemp()) go
# under one folder of this run, removed when it ends.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rowvoi-docs-XXXXXXXX")
trap 'chmod -R u+rwx "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
if ! (cd tests && "$PY" -c "import rowvoi._setcover") 2>/dev/null; then
    echo "docs: making the test environment ($VENV) with scripts/test.sh --install-only"
    ROWVOI_TEST_VENV=$VENV bash scripts/test.sh --install-only
fi

# Only the extra's requirements: rowvoi itself is already installed, and
# `pip install .[docs]` would build it again.
mapfile -t REQS < <("$PY" - <<'PYEOF'
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    sys.exit(0)
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"]["docs"]))
PYEOF
)
if [ ${#REQS[@]} -gt 0 ]; then
    bash scripts/pip-install.sh "$PY" "${REQS[@]}"
else
    bash scripts/pip-install.sh "$PY" ".[docs]"
fi

# -E: read every page afresh, so no warning hides in a cached page; the
# doctest builder then reuses the same doctrees.
start=$SECONDS
"$PY" -m sphinx -E -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html
"$PY" -m sphinx -W --keep-going -q -b doctest -d docs/_build/doctrees docs docs/_build/doctest
sed -n '/^Doctest summary/,$p' docs/_build/doctest/output.txt
echo "docs: $(find docs/_build/html -name '*.html' | wc -l) HTML pages in $((SECONDS - start)) s"
