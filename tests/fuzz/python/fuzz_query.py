"""Fuzz target: the structured-query parser (JSON text through
:func:`rowvoi.query.run_query`), differential between the pandas and the
SQLite executors.

Each input is decoded as UTF-8 (invalid bytes replaced) and handed to
``run_query`` as JSON text against a fixed schema and an 8-row table with
missing values, once on pandas and once on an in-memory SQLite copy.
A finding is any exception other than :class:`rowvoi.query.QueryError`
(the documented error for bad queries), or the two executors disagreeing
on a query both accept.

Run it for real (libFuzzer through atheris)::

    python tests/fuzz/python/fuzz_query.py -max_total_time=600 WORKDIR tests/fuzz/corpus/py_query

``tests/python/test_fuzz_python.py`` replays ``tests/fuzz/corpus/py_query/``
on every CI run (atheris not needed).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import sys

import pandas as pd

# Under atheris (run as a script), rowvoi's own modules are instrumented
# for coverage feedback; imported by the replay test, nothing is.
try:
    import atheris
except ImportError:  # replay only
    atheris = None
_instrument = (
    atheris.instrument_imports(include=["rowvoi"])
    if atheris is not None and __name__ == "__main__"
    else contextlib.nullcontext()
)
with _instrument:
    from rowvoi.query import QueryError, QuerySchema, run_query


SCHEMA = QuerySchema(
    {
        "age": {"type": "numeric", "integer": True},
        "income": "numeric",
        "name": "text",
        "sector": {"type": "categorical", "values": ["public", "private", "non-profit"]},
    }
)
FRAME = pd.DataFrame(
    {
        "age": pd.array([31, 45, None, 22, 45, 60, 38, 29], dtype="Int64"),
        "income": [52000.5, 71000.0, 38000.0, float("nan"), 71000.0, 99000.25, 0.0, -5.5],
        "name": ["Ann", "bob", "Cy", None, "bob", "Dee", "émile", "Ann"],
        "sector": [
            "public",
            "private",
            "non-profit",
            "public",
            None,
            "private",
            "public",
            "non-profit",
        ],
    }
)


def _sqlite() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", check_same_thread=False)
    con.execute('CREATE TABLE t ("age" INTEGER, "income" REAL, "name" TEXT, "sector" TEXT)')
    rows = []
    for rec in FRAME.astype(object).where(FRAME.notna(), None).itertuples(index=False):
        rows.append(tuple(None if (isinstance(v, float) and math.isnan(v)) else v for v in rec))
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    return con


CON = _sqlite()


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b and type(a) is type(b)


def test_one_input(data: bytes) -> None:
    """Run one input; raise on a finding."""
    text = data.decode("utf-8", errors="replace")
    try:
        got = run_query(FRAME, text, SCHEMA)
    except QueryError:
        return
    lite = run_query(CON, text, SCHEMA, table="t")
    if got.columns != lite.columns or len(got.records) != len(lite.records):
        raise AssertionError(
            f"pandas and sqlite differ on {text!r}: {got.records} vs {lite.records}"
        )
    for r1, r2 in zip(got.records, lite.records):
        for c in got.columns:
            if not _same(r1[c], r2[c]):
                raise AssertionError(
                    f"pandas and sqlite differ on {text!r} at {c}: {r1[c]!r} vs {r2[c]!r}"
                )


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
