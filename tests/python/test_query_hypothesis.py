"""Property tests of rowvoi.query: random query dicts on random frames.

* Any query dict (valid or not) either validates or raises QueryError --
  nothing else -- and never runs code (eval/exec/DataFrame.query are
  booby-trapped; foreign objects in the dict record any method call).
* A valid query gives the same records on pandas, DuckDB and SQLite, and
  the same records as a plain-Python reference model written here from the
  documented semantics (floats within 1e-9).

Floats in the frames are multiples of 1/4, so every sum is exact in any
order and the engines cannot disagree through rounding.
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as dt
import math
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from rowvoi.errors import QueryError
from rowvoi.query import (
    QuerySchema,
    execute_duckdb,
    execute_pandas,
    execute_sqlite,
    validate_query,
)
from rowvoi.query.validate import AllOf, AnyOf, Compare, Contains, Exists, Member
from rowvoi.query.values import json_value

pytest.importorskip("duckdb")

CATS = ["Non-Profit", "Corporate", "Gov"]
TEXTS = ["a", "B", "ab", "é", "Z", "ß", "", "aB", "b a", "Ab"]
DATES = [
    dt.datetime(2024, 1, 1),
    dt.datetime(2024, 1, 1, 12, 30),
    dt.datetime(2023, 12, 31),
    dt.datetime(2024, 2, 29),
    dt.datetime(2024, 1, 1, 0, 0, 0, 250000),
]
SCHEMA = QuerySchema(
    {
        "i": {"type": "numeric", "integer": True},
        "f": "numeric",
        "cat": {"type": "categorical", "values": CATS},
        "txt": "text",
        "d": "date",
    },
    max_limit=7,
)
NAMES = list(SCHEMA.names)
JUNK_NAMES = ["__class__", "a; DROP TABLE x", 'i"', "missing", "", "$where"]
SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ------------------------------------------------------------------ frames
@st.composite
def frames(draw):
    n = draw(st.integers(0, 9))
    maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731
    ints = draw(st.lists(maybe(st.integers(-4, 4)), min_size=n, max_size=n))
    floats = draw(
        st.lists(maybe(st.integers(-12, 12).map(lambda k: k / 4)), min_size=n, max_size=n)
    )
    cats = draw(st.lists(maybe(st.sampled_from(CATS)), min_size=n, max_size=n))
    texts = draw(st.lists(maybe(st.sampled_from(TEXTS)), min_size=n, max_size=n))
    dates = draw(st.lists(maybe(st.sampled_from(DATES)), min_size=n, max_size=n))
    if draw(st.booleans()) or any(v is None for v in ints):
        i_col = pd.array(ints, dtype="Int64")
    else:
        i_col = np.array(ints, dtype=np.int64)
    cat_col = (
        pd.Series(cats, dtype="category") if draw(st.booleans()) else pd.Series(cats, dtype=object)
    )
    df = pd.DataFrame(
        {
            "i": i_col,
            "f": pd.Series([np.nan if v is None else v for v in floats], dtype="float64"),
            "cat": cat_col,
            "txt": pd.Series(texts, dtype=object),
            "d": pd.Series(pd.to_datetime(dates), dtype="datetime64[ns]"),
        }
    )
    return df


# ------------------------------------------------------------------ queries
VALUES = {
    "i": st.one_of(st.integers(-5, 5), st.sampled_from([2.5, -0.5, 1.0])),
    "f": st.one_of(st.integers(-13, 13).map(lambda k: k / 4), st.integers(-3, 3)),
    "cat": st.sampled_from(["non profit", "CORPORATE", "gov", "Gov", "non_profit"]),
    "txt": st.sampled_from(TEXTS + ["b", "A"]),
    "d": st.sampled_from(
        [
            "2024-01-01",
            "2024-01-01T06:00:00",
            "2023-12-31T23:59:59Z",
            "2024-02-29",
            "2024-01-01T12:30:00+00:00",
        ]
    ),
}
BAD_VALUES = st.sampled_from(
    ["old", None, float("nan"), [1, 2], {"$gt": 1}, True, 10**30, "not-a-date", object()]
)


def leaf(data, valid: bool):
    col = data.draw(st.sampled_from(NAMES if valid else NAMES + JUNK_NAMES))
    ops = list(SCHEMA[col].operators) if col in SCHEMA else ["$eq"]
    if not valid:
        ops += ["$where", "$regex", "$and", "$not"]
    op = data.draw(st.sampled_from(ops))
    values = VALUES.get(col, st.just(1))
    if not valid and data.draw(st.booleans()):
        values = BAD_VALUES
    if op == "$exists":
        arg = data.draw(st.booleans()) if valid else data.draw(st.sampled_from([1, "yes"]))
    elif op in ("$in", "$nin"):
        arg = data.draw(st.lists(values, max_size=4))
    elif op == "$contains":
        arg = data.draw(st.sampled_from(["a", "b", "", "é", "B"]))
    else:
        arg = data.draw(values)
    if op == "$eq" and data.draw(st.booleans()):
        return {col: arg}
    return {col: {op: arg}}


def filter_doc(data, valid: bool, depth: int = 0):
    kind = data.draw(
        st.sampled_from(["leaf", "leaf", "and", "or", "multi"] if depth < 3 else ["leaf"])
    )
    if kind == "leaf":
        return leaf(data, valid)
    if kind == "multi":
        doc = {}
        for _ in range(data.draw(st.integers(1, 2))):
            doc.update(leaf(data, valid))
        return doc
    children = [filter_doc(data, valid, depth + 1) for _ in range(data.draw(st.integers(1, 3)))]
    return {"$and" if kind == "and" else "$or": children}


def random_query(data):
    valid = data.draw(st.booleans())
    op = data.draw(st.sampled_from(["select", "filter", "aggregate", "filtered_aggregate"]))
    q = {"operation": op}
    names = NAMES if valid else NAMES + JUNK_NAMES
    if op in ("select", "filter"):
        if op == "select" or data.draw(st.booleans()):
            q["columns"] = data.draw(
                st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)
            )
        outputs = q.get("columns", NAMES)
    else:
        group = data.draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
        if group:
            q["group_by"] = group
        aggs, outputs = [], list(group)
        for _ in range(data.draw(st.integers(1, 3))):
            col = data.draw(st.sampled_from([None] + names))
            funcs = SCHEMA[col].aggregations if col in SCHEMA else ("count",)
            func = data.draw(st.sampled_from(list(funcs) + ([] if valid else ["median"])))
            name = func if col is None else f"{func}_{col}"
            if name in outputs:
                continue
            aggs.append(func if col is None else {"agg": func, "column": col})
            outputs.append(name)
        q["aggregations"] = aggs
    if op in ("filter", "filtered_aggregate") or (op == "select" and data.draw(st.booleans())):
        q["filters"] = filter_doc(data, valid)
    if outputs and data.draw(st.booleans()):
        keys = data.draw(st.lists(st.sampled_from(list(outputs)), max_size=2, unique=True))
        q["order_by"] = [
            {"column": k, "direction": data.draw(st.sampled_from(["asc", "desc"]))} for k in keys
        ]
    if data.draw(st.booleans()):
        q["limit"] = data.draw(
            st.sampled_from([1, 3, 7, 10**12] + ([] if valid else [0, -1, "10", True]))
        )
    return q


# ------------------------------------------------------------------ reference model
def _py(value, column):
    """A frame cell as the reference model's Python value (None if missing)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if value is pd.NaT:
        return None
    if column == "d":
        return pd.Timestamp(value).to_pydatetime()
    if column == "i":
        return int(value)
    if column == "f":
        return float(value)
    return str(value)


def _matches(node, row) -> bool:
    if isinstance(node, AllOf):
        return all(_matches(c, row) for c in node.children)
    if isinstance(node, AnyOf):
        return any(_matches(c, row) for c in node.children)
    v = row[node.column]
    if isinstance(node, Exists):
        return (v is not None) == node.present
    if isinstance(node, Member):
        hit = v is not None and any(v == x for x in node.values)
        return not hit if node.negate else hit
    if isinstance(node, Contains):
        return v is not None and node.needle in v
    assert isinstance(node, Compare)
    if node.op == "$ne":
        return v is None or v != node.value
    if v is None:
        return False
    return {
        "$eq": v == node.value,
        "$lt": v < node.value,
        "$lte": v <= node.value,
        "$gt": v > node.value,
        "$gte": v >= node.value,
    }[node.op]


def _sort(rows, keys):
    """Stable multi-key sort; missing values last in both directions."""
    for idx, desc in reversed(keys):
        present = [r for r in rows if r[idx] is not None]
        missing = [r for r in rows if r[idx] is None]
        present.sort(key=lambda r: r[idx], reverse=desc)
        rows = present + missing
    return rows


def _agg(func, values):
    present = [v for v in values if v is not None]
    if func == "count":
        return len(present)
    if func == "sum":
        return sum(present)
    if not present:
        return None
    if func == "mean":
        return sum(present) / len(present)
    return min(present) if func == "min" else max(present)


def reference(df, vq):
    rows = [{c: _py(df[c].iloc[k], c) for c in NAMES} for k in range(len(df))]
    if vq.where is not None:
        rows = [r for r in rows if _matches(vq.where, r)]
    if vq.operation == "filter":
        out = [tuple(r[c] for c in vq.columns) for r in rows]
    elif vq.operation == "select":
        out = list(dict.fromkeys(tuple(r[c] for c in vq.columns) for r in rows))
    else:
        groups: dict = {}
        for r in rows:
            groups.setdefault(tuple(r[c] for c in vq.group_by), []).append(r)
        if not vq.group_by:
            groups = {(): rows}
        keys = _sort(list(groups), [(i, False) for i in range(len(vq.group_by))])
        out = []
        for key in keys:
            members = groups[key]
            out.append(
                key
                + tuple(
                    len(members)
                    if a.column is None
                    else _agg(a.func, [m[a.column] for m in members])
                    for a in vq.aggregations
                )
            )
    out = _sort(out, list(vq.order_by))
    return [
        {o.name: json_value(v, o.kind) for o, v in zip(vq.outputs, row)} for row in out[: vq.limit]
    ], len(out) > vq.limit


def same(a, b):
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if ra.keys() != rb.keys():
            return False
        for k in ra:
            x, y = ra[k], rb[k]
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                    return False
                if type(x) is not type(y):
                    return False
            elif x != y or type(x) is not type(y):
                return False
    return True


@contextlib.contextmanager
def no_code():
    """Make every route to evaluating strings fail loudly while rowvoi runs."""

    def boom(*args, **kwargs):
        raise AssertionError("code evaluation attempted")

    targets = [
        (builtins, "eval"),
        (builtins, "exec"),
        (pd.DataFrame, "eval"),
        (pd.DataFrame, "query"),
        (pd, "eval"),
    ]
    saved = [getattr(obj, name) for obj, name in targets]
    for obj, name in targets:
        setattr(obj, name, boom)
    try:
        yield
    finally:
        for (obj, name), old in zip(targets, saved):
            setattr(obj, name, old)


@SETTINGS
@given(df=frames(), data=st.data())
def test_engines_agree_with_each_other_and_the_reference(df, data):
    q = random_query(data)
    try:
        with no_code():
            vq = validate_query(q, SCHEMA)
    except QueryError as exc:
        event("refused")
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        for run in (execute_pandas, execute_sqlite):
            with pytest.raises(QueryError), no_code():
                run(df, q, SCHEMA)
        return
    with no_code():
        results = [run(df, vq, SCHEMA) for run in (execute_pandas, execute_duckdb, execute_sqlite)]
    want, cut = reference(df, vq)
    event(f"valid {vq.operation}, {'some' if want else 'no'} rows")
    for r in results:
        assert same(r.records, want), (r.engine, q, r.records, want)
        assert r.truncated == cut
        assert r.clamped == (vq.requested_limit is not None and vq.requested_limit > 7)
        assert list(r.columns) == [o.name for o in vq.outputs]


class Foreign:
    """An object a query must never call into."""

    calls: ClassVar[list[str]] = []

    def _record(name):
        def method(self, *args, **kwargs):
            Foreign.calls.append(name)
            raise AssertionError(f"{name} called on a foreign object")

        return method

    for _n in (
        "__eq__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__str__",
        "__format__",
        "__index__",
        "__int__",
        "__float__",
        "__iter__",
        "__len__",
        "__bool__",
        "__contains__",
        "__getitem__",
    ):
        locals()[_n] = _record(_n)
    __hash__ = object.__hash__

    def __repr__(self):  # recorded, but harmless: hypothesis prints failing examples
        Foreign.calls.append("__repr__")
        return "Foreign()"


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5), st.builds(Foreign)
)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from(
                    NAMES
                    + JUNK_NAMES
                    + [
                        "$and",
                        "$or",
                        "$in",
                        "$gt",
                        "$exists",
                        "operation",
                        "filters",
                        "agg",
                        "column",
                        "direction",
                        "*",
                    ]
                ),
                st.builds(Foreign),
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@settings(SETTINGS, max_examples=400)
@given(
    body=st.dictionaries(
        st.one_of(
            st.sampled_from(
                [
                    "operation",
                    "columns",
                    "filters",
                    "aggregations",
                    "group_by",
                    "order_by",
                    "limit",
                    "where",
                    "__class__",
                ]
            ),
            st.builds(Foreign),
        ),
        JSONISH,
        max_size=6,
    ),
    op=st.sampled_from(["select", "filter", "aggregate", "filtered_aggregate", "drop"]),
)
def test_arbitrary_dicts_only_ever_raise_query_error(body, op):
    Foreign.calls.clear()
    query = {"operation": op, **body}
    try:
        with no_code():
            validate_query(query, SCHEMA)
    except QueryError:
        pass
    assert Foreign.calls == []


# ------------------------------------------------------------------ lone surrogates
# Issue 28: a lone surrogate ("\ud800") in a filter value raised
# UnicodeEncodeError on SQLite (and in pandas' $in) while pandas answered
# its $eq. It is not text any UTF-8 encoder accepts, so validation refuses
# it, once, for every executor alike.
SURROGATE_TEXT = st.builds(
    lambda a, s, b: a + s + b,
    st.text(max_size=3),
    st.lists(st.integers(0xD800, 0xDFFF).map(chr), min_size=1, max_size=2).map("".join),
    st.text(max_size=3),
)


def surrogate_leaf(data):
    """A leaf condition holding a lone surrogate where a string goes."""
    bad = data.draw(SURROGATE_TEXT)
    form = data.draw(st.sampled_from(["txt-eq", "txt-op", "cat", "in", "contains"]))
    if form == "txt-eq":
        return {"txt": bad}
    if form == "txt-op":
        return {"txt": {data.draw(st.sampled_from(["$eq", "$ne", "$lt", "$gte"])): bad}}
    if form == "cat":
        return {"cat": bad}
    if form == "in":
        good = data.draw(st.lists(st.sampled_from(TEXTS), max_size=2))
        at = data.draw(st.integers(0, len(good)))
        op = data.draw(st.sampled_from(["$in", "$nin"]))
        return {"txt": {op: good[:at] + [bad] + good[at:]}}
    return {"txt": {"$contains": bad}}


@SETTINGS
@given(df=frames(), data=st.data())
def test_a_lone_surrogate_is_a_query_error_on_every_executor(df, data):
    bad = surrogate_leaf(data)
    shape = data.draw(st.sampled_from(["leaf", "and", "or"]))
    doc = bad
    if shape != "leaf":
        others = [leaf(data, True) for _ in range(data.draw(st.integers(0, 2)))]
        at = data.draw(st.integers(0, len(others)))
        doc = {"$and" if shape == "and" else "$or": others[:at] + [bad] + others[at:]}
    q = {"operation": data.draw(st.sampled_from(["filter", "filtered_aggregate"])), "filters": doc}
    if q["operation"] == "filtered_aggregate":
        q["aggregations"] = ["count"]
    messages = []
    for run in (execute_pandas, execute_duckdb, execute_sqlite):
        with pytest.raises(QueryError) as err, no_code():
            run(df, q, SCHEMA)
        messages.append(str(err.value))
    assert messages[0] == messages[1] == messages[2]
    assert "lone surrogate" in messages[0] and "not valid Unicode text" in messages[0]
    messages[0].encode("utf-8")  # the message itself prints anywhere
    with pytest.raises(QueryError):
        validate_query(q, SCHEMA)


def test_a_lone_surrogate_message_names_the_place():
    with pytest.raises(QueryError) as err:
        validate_query(
            {"operation": "filter", "filters": {"txt": {"$in": ["a", "x\udfff"]}}}, SCHEMA
        )
    assert list(err.value.problems) == [
        "filters.txt.$in[1]: 'x\\udfff' holds a lone surrogate (U+DFFF) at position 1, "
        "which is not valid Unicode text; send UTF-8 text"
    ]
    # a column name that is not text: unknown, and printable in the message
    with pytest.raises(QueryError) as err:
        validate_query({"operation": "filter", "filters": {"t\ud800": "a"}}, SCHEMA)
    assert err.value.problems[0].startswith("filters.t\\ud800: unknown column")
    str(err.value).encode("utf-8")
    # valid text beyond ASCII, astral characters included, still runs everywhere
    df = pd.DataFrame({"txt": ["é", "😀", "b"]})
    schema = QuerySchema({"txt": "text"})
    q = {"operation": "filter", "filters": {"txt": {"$in": ["😀", "é"]}}}
    for run in (execute_pandas, execute_duckdb, execute_sqlite):
        assert sorted(r["txt"] for r in run(df, q, schema).records) == ["é", "😀"]
