#!/usr/bin/env bash
# valgrind memcheck over the C suite: builds the C tests without sanitizers
# (build/valgrind, Debug) and runs every ctest test under
#   valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect
# so an invalid read or write, a use of uninitialised memory or a leak fails.
# Usage: bash scripts/valgrind.sh [ctest -R regex]   (default: every test)
# .ci/run calls it; the slow generators (many thousands of generated inputs
# through the solvers) stay out via RV_VALGRIND_EXCLUDE.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed" >&2; exit 1; }
BUILD=${RV_VALGRIND_BUILD:-build/valgrind}
REGEX=${1:-.}
EXCLUDE=${RV_VALGRIND_EXCLUDE:-^$}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DRV_BUILD_TESTS=ON -DRV_SANITIZE= >/dev/null
cmake --build "$BUILD" --parallel 2 >/dev/null
# Each test's command line as ctest knows it (arguments included).
mapfile -t tests < <(ctest --test-dir "$BUILD" --show-only=json-v1 -R "$REGEX" -E "$EXCLUDE" |
    python3 -c 'import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    print(t["name"] + "\t" + shlex.join(t["command"]))')
[ "${#tests[@]}" -gt 0 ] || { echo "valgrind.sh: no test matches" >&2; exit 1; }
# Two tests at a time by default (valgrind runs a program's threads one at
# a time, so each run uses one core): RV_VALGRIND_JOBS=N to change it.
JOBS=${RV_VALGRIND_JOBS:-2}
FAILED="$BUILD/valgrind.failed"
: >"$FAILED"
run_one() {  # name command: one test under valgrind, its verdict on one line
    local name=$1 cmd=$2 start=$SECONDS
    if eval valgrind --quiet --error-exitcode=1 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --track-origins=yes \
        "$cmd" >"$BUILD/$name.valgrind.log" 2>&1; then
        echo "valgrind ok   $name ($((SECONDS - start)) s)"
    else
        echo "valgrind FAIL $name ($((SECONDS - start)) s)"
        echo "$name" >>"$FAILED"
    fi
}
running=0
for line in "${tests[@]}"; do
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_one "${line%%$'\t'*}" "${line#*$'\t'}" &
    running=$((running + 1))
done
wait
failed=0
while read -r name; do  # the failures' logs, after every verdict
    echo "== valgrind log of $name (last 40 lines)"
    tail -n 40 "$BUILD/$name.valgrind.log"
    failed=1
done <"$FAILED"
exit $failed
