#!/usr/bin/env bash
# The test command.  Installs rowvoi into its own environment (build/test-venv,
# never the .venv you work in) and runs the tests of one tier:
#
#   bash scripts/test.sh             the quick tier: every test file, every
#                                    module and every C unit test (ctest,
#                                    built and run beside pytest), hypothesis
#                                    tests with 10 examples each (minutes)
#   bash scripts/test.sh --long      the long tier alone: the tests marked
#                                    slow or stress, and every hypothesis test
#                                    with its full example count (no ctest)
#   bash scripts/test.sh --all       both tiers and ctest in one run
#   bash scripts/test.sh --coverage  the quick tier under coverage, then
#                                    scripts/check_tiers.py: every module of
#                                    the package runs code in it, every test
#                                    file runs a test in it (CI runs this and
#                                    --long)
#   bash scripts/test.sh --install-only   make or update the environment only
#                                    (scripts/lint.sh and docs.sh use it)
#
# Other arguments go to pytest (a file, -k NAME, -x, ...).  Environment:
# ROWVOI_TEST_VENV (the environment, default build/test-venv), ROWVOI_TEST_JOBS
# (pytest workers, default "auto": one per core; 0 runs in one process).
#
# The environment is made once and updated in place: a second run rebuilds
# only what changed (the wheel's CMake build directory persists beside it,
# and the build runs without isolation, against the build requirements
# installed in it).  Remove build/test-venv to start from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
# hnswlib ships as source and compiles on install with -march=native unless
# told otherwise; a portable build keeps the environment usable on other
# CPUs (pip caches the wheel it builds, so this happens once per machine).
export HNSWLIB_NO_NATIVE=1
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
VENV=${ROWVOI_TEST_VENV:-build/test-venv}
case $VENV in /*) ;; *) VENV=$ROOT/$VENV ;; esac

tier=quick
case ${1:-} in
    --long | --all | --coverage | --install-only) tier=${1#--}; shift ;;
esac
ctest=yes
case $tier in
    quick) marks="not slow and not stress"; profile=quick ;;
    coverage) marks="not slow and not stress"; profile=quick ;;
    long) marks="slow or stress or hypothesis"; profile=full; ctest=no ;;
    all) marks=""; profile=full ;;
    install-only) ctest=no ;;
esac

mkdir -p build
# ------------------------------------------------- C unit tests, beside pytest
# They need no Python package; their build directory persists (a second run
# compiles only what changed).  Their output is printed after pytest's.
C_LOG=$ROOT/build/ctest.log
c_pid=
if [ "$ctest" = yes ]; then
    set -m  # (job control: the C tests run in a process group of their own)
    (
        set -euo pipefail
        cmake -S . -B build/ctest -DCMAKE_BUILD_TYPE=Debug -DRV_BUILD_TESTS=ON >/dev/null
        cmake --build build/ctest >/dev/null
        ctest --test-dir build/ctest --output-on-failure --parallel 2
    ) >"$C_LOG" 2>&1 &
    c_pid=$!
    set +m
    # stopping early (Ctrl-C, a failed install) stops the C tests too: the
    # group, with cmake, the compiler and ctest under it
    trap 'kill -- -"$c_pid" 2>/dev/null || true' EXIT
fi

# ------------------------------------------------------------- the environment
# (scripts/pip-install.sh: pip install, tried again when the network drops)
pip_install() { bash scripts/pip-install.sh "$VENV/bin/python" "$@"; }
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
    pip_install --upgrade pip
fi
# The build requirements (pyproject.toml's [build-system] requires, and
# ninja), installed when they change.  hnswlib is a source distribution only
# on PyPI, and the install below builds it without isolation too: its
# setup.py needs setuptools, wheel and pybind11 in this venv.
build_reqs=$("$VENV/bin/python" - <<'PYEOF'
import re
try:
    import tomllib
    with open("pyproject.toml", "rb") as f:
        reqs = tomllib.load(f)["build-system"]["requires"]
except ModuleNotFoundError:  # Python 3.10
    text = open("pyproject.toml").read()
    block = re.search(r"^requires\s*=\s*\[(.*?)\]", text, re.M | re.S).group(1)
    reqs = re.findall(r'"([^"]+)"', block)
print("\n".join([*reqs, "ninja", "setuptools", "wheel", "pybind11"]))
PYEOF
)
stamp=$VENV/.rowvoi-build-requires
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$build_reqs" ]; then
    mapfile -t reqs <<<"$build_reqs"
    pip_install "${reqs[@]}"
    printf '%s' "$build_reqs" >"$stamp"
fi
pip_install --no-build-isolation -Cbuild-dir="$VENV/rowvoi-build" ".[test]"
echo "== environment ready ($VENV, ${SECONDS} s)"
if [ "$tier" = install-only ]; then
    exit 0
fi

# --------------------------------------------------------------------- pytest
args=(-n "${ROWVOI_TEST_JOBS:-auto}" --dist loadgroup)
if [ -n "$marks" ]; then
    args+=(-m "$marks")
fi
if [ "$tier" = coverage ]; then
    rm -rf build/coverage
    mkdir -p build/coverage
    export COVERAGE_FILE=$ROOT/build/coverage/quick
    args+=(--cov=rowvoi --cov-config=../pyproject.toml --cov-report=
           --junitxml="$ROOT/build/coverage/quick.xml")
fi
echo "== pytest ($tier tier)"
# Run from tests/ so the source tree's python/ is never imported instead of
# the installed package.
py_rc=0
(cd tests && ROWVOI_HYPOTHESIS=$profile "$VENV/bin/python" -m pytest -c ../pyproject.toml \
    --rootdir .. "${args[@]}" "$@") || py_rc=$?
if [ "$tier" = coverage ] && [ "$py_rc" -eq 0 ]; then
    echo "== tier check (every module runs code, every test file runs a test)"
    "$VENV/bin/python" scripts/check_tiers.py build/coverage/quick build/coverage/quick.xml ||
        py_rc=$?
fi

c_rc=0
if [ -n "$c_pid" ]; then
    echo "== ctest (built and run beside pytest)"
    wait "$c_pid" || c_rc=$?
    trap - EXIT
    cat "$C_LOG"
    if [ "$c_rc" -ne 0 ]; then
        echo "ctest FAILED (exit $c_rc): see above" >&2
    fi
fi
echo "== done in ${SECONDS} s"
if [ "$py_rc" -ne 0 ]; then
    echo "pytest FAILED (exit $py_rc)" >&2
    exit "$py_rc"
fi
exit "$c_rc"
