"""The driver of the ``keys`` suite (bench/suites/keys.py), run by path in
the reference venv (``rowvoi==0.2.0``) and in a child of this interpreter
(the 1M-row case); the suite also executes it in-process, so that both sides
share the loader, timing and checking code.  Standard library, numpy and
pandas only.

Usage: python bench/peers/keys_driver.py SPEC_JSON

Protocol: one JSON object per line on the original stdout: first
{"event": "ready", ...} once rowvoi is imported and the frame is loaded, then
{"event": "result", ...} or {"event": "error", ...}.  Anything else written to
stdout (e.g. a MIP solver's log) is redirected to stderr.
"""

import json
import os
import resource
import statistics
import sys
import time
import traceback


def load_frame(path, dtype):
    """Build the benchmark DataFrame and the column cost map from an .npz file."""
    import numpy as np
    import pandas as pd

    with np.load(path, allow_pickle=False) as z:
        codes = z["codes"]
        cards = [int(c) for c in z["cards"]]
        columns = [str(c) for c in z["columns"]]
        costs = [float(c) for c in z["costs"]]
    data = {}
    for j, name in enumerate(columns):
        col = codes[:, j]
        labels = [f"v{k}" for k in range(cards[j])]
        if dtype == "int":
            data[name] = col.astype(np.int64)
        elif dtype == "str":
            data[name] = np.array(labels, dtype=object)[col]
        elif dtype == "category":
            data[name] = pd.Categorical.from_codes(col.astype(np.int16), categories=labels)
        else:
            raise ValueError(f"unknown dtype {dtype!r}")
    df = pd.DataFrame(data)
    return df, dict(zip(columns, costs))


def call_once(rowvoi, df, rows, spec, costs):
    """Run the benchmarked call once; return (seconds, raw result)."""
    if spec["func"] == "find_key":
        t0 = time.perf_counter()
        kwargs = {}
        if spec.get("time_limit"):
            kwargs["time_limit"] = spec["time_limit"]
        out = rowvoi.find_key(df, rows, costs=costs, strategy=spec["strategy"], **kwargs)
        return time.perf_counter() - t0, out
    if spec["func"] == "plan_key_path":
        t0 = time.perf_counter()
        out = rowvoi.plan_key_path(df, rows, costs=costs)
        return time.perf_counter() - t0, out
    raise ValueError(f"unknown func {spec['func']!r}")


def run_case(rowvoi, df, cost_map, spec):
    """Time the call (median of spec["repeat"] runs) and check the key it returns."""
    rows = list(df.index)
    costs = cost_map if spec["costs"] == "random" else None
    times = []
    out = None
    for _ in range(max(1, int(spec.get("repeat", 1)))):
        seconds, out = call_once(rowvoi, df, rows, spec, costs)
        times.append(seconds)
        if seconds > spec.get("repeat_threshold", 10.0):
            break
    path_cost = None
    if spec["func"] == "plan_key_path":
        steps = list(out.steps)
        if steps:
            path_cost = float(steps[-1].cumulative_cost)
        key = list(out.columns())
    else:
        key = list(out)
    key = [str(c) for c in key]
    cost = float(sum(cost_map[c] for c in key)) if spec["costs"] == "random" else float(len(key))
    if len(df) <= 1:
        valid = True
    elif not key:
        valid = False
    else:
        valid = not bool(df.duplicated(subset=key).any())
    return {
        "seconds": statistics.median(times),
        "seconds_min": min(times),
        "seconds_max": max(times),
        "all_seconds": times,
        "key": key,
        "cost": cost,
        "path_cost": path_cost,
        "valid": valid,
        "optimal": getattr(out, "optimal", None),
        "module": os.path.abspath(getattr(rowvoi, "__file__", "") or ""),
        "version": str(getattr(rowvoi, "__version__", "?")),
    }


def max_rss_mb():
    """Peak resident set size of this process so far, in MB (Linux: KiB units)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    """Entry point when run as a script; see the module docstring."""
    spec = json.loads(sys.argv[1])
    proto = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)

    def emit(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        import rowvoi

        df, cost_map = load_frame(spec["data"], spec["dtype"])
    except BaseException:
        emit({"event": "error", "stage": "load", "error": traceback.format_exc()})
        return 1
    loaded_mb = max_rss_mb()
    emit({"event": "ready", "loaded_mb": loaded_mb})
    try:
        result = run_case(rowvoi, df, cost_map, spec)
    except BaseException:
        emit({"event": "error", "stage": "run", "error": traceback.format_exc()})
        return 1
    result.update(event="result", loaded_mb=loaded_mb, peak_mb=max_rss_mb())
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
