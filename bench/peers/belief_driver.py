"""The driver of the ``belief`` suite (bench/suites/belief.py): the protocol
of ``keys_driver.py`` beside it, whose ``load_frame`` and ``max_rss_mb`` it
executes (so both suites build identical frames).  Run by path in the
reference venv; the suite also executes it in-process.

Usage: python bench/peers/belief_driver.py SPEC_JSON
"""

import json
import os
import statistics
import sys
import time
import traceback


def _keys_driver():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "keys_driver.py")
    ns = {"__name__": "rowvoi_bench_keys_driver"}
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), ns)
    return ns


_K = _keys_driver()
load_frame = _K["load_frame"]
max_rss_mb = _K["max_rss_mb"]


def call_once(rowvoi, df, spec, fitted):
    """Run the benchmarked call once; returns (seconds, chosen columns, bits)."""
    rows = list(df.index)
    func = spec["func"]
    if func == "candidate_mi":
        state = rowvoi.CandidateState.uniform(rows)
        policy = rowvoi.CandidateMIPolicy()
        t0 = time.perf_counter()
        s = policy.suggest(df, state)
        dt = time.perf_counter() - t0
        return dt, [s.col], s.expected_voi
    if func == "mi_policy":
        state = rowvoi.CandidateState.uniform(rows)
        policy = rowvoi.MIPolicy(fitted)
        t0 = time.perf_counter()
        s = policy.suggest(df, state)
        dt = time.perf_counter() - t0
        return dt, [s.col], s.expected_voi
    if func == "session":
        policy = rowvoi.CandidateMIPolicy()
        session = rowvoi.DisambiguationSession(df, rows, policy=policy)
        true_row = rows[len(rows) // 2]
        t0 = time.perf_counter()
        steps = session.run(rowvoi.StopRules(), true_row=true_row)
        dt = time.perf_counter() - t0
        unique = session.state.is_unique and session.state.unique_row == true_row
        return dt, [s.col for s in steps], 1.0 if unique else 0.0
    raise ValueError(f"unknown func {func!r}")


def run_case(rowvoi, df, spec):
    """Median (and min-max) of spec["repeat"] runs (fresh state each run)."""
    fitted = rowvoi.RowVoiModel().fit(df) if spec["func"] == "mi_policy" else None
    times, cols, bits = [], None, None
    for _ in range(max(1, int(spec.get("repeat", 1)))):
        seconds, cols, bits = call_once(rowvoi, df, spec, fitted)
        times.append(seconds)
        if seconds > spec.get("repeat_threshold", 10.0):
            break
    return {
        "seconds": statistics.median(times),
        "seconds_min": min(times),
        "seconds_max": max(times),
        "all_seconds": times,
        "key": [str(c) for c in cols],
        "cost": None if bits is None else float(bits),
        "module": os.path.abspath(getattr(rowvoi, "__file__", "") or ""),
        "version": str(getattr(rowvoi, "__version__", "?")),
    }


def main():
    spec = json.loads(sys.argv[1])
    proto = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)

    def emit(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        import rowvoi

        df, _ = load_frame(spec["data"], spec["dtype"])
    except BaseException:
        emit({"event": "error", "stage": "load", "error": traceback.format_exc()})
        return 1
    loaded_mb = max_rss_mb()
    emit({"event": "ready", "loaded_mb": loaded_mb})
    try:
        result = run_case(rowvoi, df, spec)
    except BaseException:
        emit({"event": "error", "stage": "run", "error": traceback.format_exc()})
        return 1
    result.update(event="result", loaded_mb=loaded_mb, peak_mb=max_rss_mb())
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
