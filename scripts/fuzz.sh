#!/usr/bin/env bash
# libFuzzer runs of the C fuzz targets (tests/fuzz/fuzz_*.c), built with
# clang and -fsanitize=fuzzer,address,undefined (the engine instrumented
# too).  Each target fuzzes for SECONDS from its seed corpus
# tests/fuzz/corpus/<target>/ (read only) into build/fuzzrun/<target>/work,
# two targets at a time; a crash, leak, UB report or broken invariant
# fails the script and leaves the reproducer in build/fuzzrun/<target>/
# (add it to the seed corpus once fixed).
# Usage: bash scripts/fuzz.sh [SECONDS (default 30)] [target ...]
# .ci/run calls it with 30 (installing clang and libFuzzer from Debian when
# missing); tests/fuzz/RESULTS.md has the long local runs.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER=${1:-30}
shift || true
BUILD=${RV_FUZZ_BUILD:-build/fuzz}
OUT=${RV_FUZZ_OUT:-build/fuzzrun}
CC=${CC_FUZZ:-clang} cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRV_BUILD_FUZZ=ON -DRV_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" --parallel 2 >/dev/null
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for f in tests/fuzz/fuzz_*.c; do t=${f##*/fuzz_}; targets+=("${t%.c}"); done
fi

run_one() {
    local t=$1 dir="$OUT/$1"
    mkdir -p "$dir/work"
    if "$BUILD/fuzz_$t" -max_total_time="$SECONDS_PER" -print_final_stats=1 -timeout=25 \
        -rss_limit_mb=2048 -artifact_prefix="$dir/" "$dir/work" "tests/fuzz/corpus/$t" \
        >"$dir/log" 2>&1; then
        printf 'fuzz ok   %-10s %s exec/s, %s runs, corpus %s\n' "$t" \
            "$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")" \
            "$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")" \
            "$(find "$dir/work" -type f | wc -l)"
    else
        echo "fuzz FAIL $t (reproducer and log in $dir/)"
        grep -E "ERROR|invariant|runtime error|SUMMARY" "$dir/log" | head -n 20
        return 1
    fi
}

failed=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    pids=()
    for t in "${targets[@]:i:2}"; do
        run_one "$t" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
done
exit $failed
