#!/usr/bin/env bash
# Static checks, each run even when an earlier one fails; exits non-zero if
# any fails:
#   ruff check, ruff format --check          (config: [tool.ruff] in pyproject.toml)
#   mypy --strict over python/rowvoi         ([tool.mypy])
#   mypy.stubtest: the compiled modules (cython/[PACKAGE/]_NAME.pyx) against
#                  their stubs (python/rowvoi/[PACKAGE/]_NAME.pyi;
#                  scripts/stubtest-allowlist.txt)
#   clang-format --dry-run -Werror over the C of src/ include/ tests/c/ tests/fuzz/ bench/c/
# Usage: bash scripts/lint.sh [VENV]
# VENV (default $ROWVOI_TEST_VENV or build/test-venv: the test environment
# scripts/test.sh builds, never the .venv you work in) needs rowvoi and its
# test extra installed (mypy reads their types; stubtest imports the compiled
# modules); scripts/test.sh makes it when it is missing or lacks them.
# The pinned tools (scripts/lint-requirements.txt) are installed into it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${1:-${ROWVOI_TEST_VENV:-build/test-venv}}
case $VENV in /*) ;; *) VENV=$PWD/$VENV ;; esac
export HNSWLIB_NO_NATIVE=1  # hnswlib compiles on install; no -march=native

if ! (cd tests && "$VENV/bin/python" -c "import rowvoi._setcover, dask, kuzu") 2>/dev/null; then
    echo "lint: making the test environment ($VENV) with scripts/test.sh --install-only"
    ROWVOI_TEST_VENV=$VENV bash scripts/test.sh --install-only
fi
bash scripts/pip-install.sh "$VENV/bin/python" -r scripts/lint-requirements.txt

failed=()
step() {  # step NAME COMMAND...: run, report, remember a failure
    local name=$1
    shift
    echo "== lint: $name"
    if ! "$@"; then
        failed+=("$name")
    fi
}

step "ruff check" "$VENV/bin/ruff" check .
step "ruff format" "$VENV/bin/ruff" format --check .
step "mypy --strict" "$VENV/bin/python" -m mypy

# Every compiled module, found from its .pyx (cython/index/_flat.pyx is
# rowvoi.index._flat); stubtest imports the installed module and reads the
# stubs of this tree (MYPYPATH), run from tests/ so the source package is not
# imported instead of the installed one.
modules=()
while IFS= read -r pyx; do
    rel=${pyx#cython/}
    modules+=("rowvoi.$(echo "${rel%.pyx}" | tr / .)")
done < <(find cython -name '*.pyx' | sort)
stubtest() {
    (cd tests && MYPYPATH=../python "$VENV/bin/python" -m mypy.stubtest \
        --mypy-config-file ../scripts/stubtest-mypy.ini \
        --allowlist ../scripts/stubtest-allowlist.txt "${modules[@]}")
}
step "stubtest (${#modules[@]} compiled modules)" stubtest

mapfile -t c_files < <(find src include tests/c tests/fuzz bench/c -path tests/fuzz/corpus -prune \
    -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
step "clang-format (${#c_files[@]} files)" "$VENV/bin/clang-format" --dry-run -Werror "${c_files[@]}"

if [ ${#failed[@]} -ne 0 ]; then
    printf 'lint failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "lint: all checks passed"
