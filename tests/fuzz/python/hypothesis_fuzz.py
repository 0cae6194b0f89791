"""Long fuzzing runs of the Python targets with hypothesis (opt-in).

atheris installs here but gives no coverage feedback on this interpreter
(3.11: libFuzzer keeps an empty corpus; see tests/fuzz/RESULTS.md), so the
Python targets are fuzzed with generated structured inputs instead:

* ``query``: JSON queries built from the query language's own pieces
  (real and bogus operations, columns, operators, values of every JSON
  type, NaN and huge numbers, nesting), plus raw text, through
  ``fuzz_query.test_one_input`` (pandas vs SQLite differential);
* ``corpus_load``: byte patches over a real ``docs.sqlite`` and whole
  random files, through ``fuzz_corpus_load.test_one_input``.

Usage::

    python tests/fuzz/python/hypothesis_fuzz.py query 600
    python tests/fuzz/python/hypothesis_fuzz.py corpus_load 600

Runs batches of examples (fresh random seeds) until the time is up; prints
examples, examples per second and any falsifying input (saved under
tests/fuzz/corpus/py_<target>/ as a reproducer for the replay test;
the run goes on after a finding and exits 1 at the end).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

COLUMNS = ["age", "income", "name", "sector", "nope", "", "$or"]
OPS = ["$eq", "$ne", "$in", "$nin", "$lt", "$lte", "$gt", "$gte", "$exists", "$contains", "$bad"]
AGGS = ["count", "sum", "mean", "min", "max", "median"]
scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["public", "Non Profit", "PRIVATE", "bob", "Ann", "2024-01-31"]),
    st.booleans(),
    st.none(),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=5),
    st.dictionaries(st.text(max_size=4), scalars, max_size=2),
)
leaf = st.dictionaries(
    st.sampled_from(COLUMNS),
    st.one_of(scalars, st.dictionaries(st.sampled_from(OPS), values, min_size=1, max_size=3)),
    min_size=1,
    max_size=3,
)
filters = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(lambda xs: {"$or": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda xs: {"$and": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda a, b: {**a, **b}, inner, inner),
    ),
    max_leaves=8,
)
queries = st.fixed_dictionaries(
    {"operation": st.sampled_from(["filter", "select", "aggregate", "count", "bogus"])},
    optional={
        "filters": st.one_of(filters, values),
        "columns": st.lists(st.sampled_from(COLUMNS), max_size=4),
        "group_by": st.lists(st.sampled_from(COLUMNS), max_size=2),
        "aggregations": st.lists(
            st.fixed_dictionaries(
                {"agg": st.sampled_from(AGGS)}, optional={"column": st.sampled_from(COLUMNS)}
            ),
            max_size=3,
        ),
        "order_by": st.lists(
            st.fixed_dictionaries(
                {"column": st.sampled_from(COLUMNS + ["count", "mean_income", "sum_age"])},
                optional={"direction": st.sampled_from(["asc", "desc", "up"])},
            ),
            max_size=3,
        ),
        "limit": st.one_of(st.integers(min_value=-5, max_value=10**20), st.floats()),
        "extra": scalars,
    },
)
query_inputs = st.one_of(queries.map(lambda q: json.dumps(q).encode()), st.binary(max_size=200))
corpus_inputs = st.one_of(
    st.lists(
        st.tuples(st.integers(0, 2**24 - 1), st.integers(0, 255)), min_size=1, max_size=40
    ).map(lambda ps: b"\x00" + b"".join(o.to_bytes(3, "little") + bytes([v]) for o, v in ps)),
    st.binary(max_size=2000).map(lambda b: b"\x01" + b),
    st.integers(0, 53248).map(lambda n: b"\x01" + __import__("fuzz_corpus_load").IMAGE[:n]),
)


def run(target: str, seconds: float) -> int:
    if target == "query":
        import fuzz_query as mod

        inputs, batch = query_inputs, 2000
    else:
        import fuzz_corpus_load as mod

        inputs, batch = corpus_inputs, 200
    count = [0]
    found: list[bytes] = []

    @settings(
        max_examples=batch,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(inputs)
    def check(data: bytes) -> None:
        count[0] += 1
        try:
            mod.test_one_input(data)
        except Exception:
            found.append(data)
            raise

    start = time.monotonic()
    findings = 0
    while time.monotonic() - start < seconds:
        try:
            check()
        except Exception as exc:  # a finding: save the (shrunk) input, go on
            findings += 1
            data = found[-1]
            out = (
                HERE.parent
                / "corpus"
                / f"py_{target}"
                / ("crash-" + hashlib.sha1(data).hexdigest()[:12])
            )
            out.write_bytes(data)
            print(
                f"FINDING after {count[0]} examples: {type(exc).__name__}: {exc}\n"
                f"reproducer: {out}",
                flush=True,
            )
    took = time.monotonic() - start
    print(
        f"{target}: {count[0]} examples in {took:.0f} s ({count[0] / took:.1f}/s), "
        f"{findings} finding(s)"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], float(sys.argv[2])))
