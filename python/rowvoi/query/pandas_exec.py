"""The pandas executor: a validated query over an in-memory DataFrame.

Every filter node maps to a fixed function of a column (the operator map):
no ``eval``, ``exec``, ``DataFrame.query`` or string-built expression is
ever used. Comparisons run only on the non-missing cells, so a missing
value never matches ``$eq $in $lt $lte $gt $gte $contains``, and ``$ne`` /
``$nin`` (their complements) always match it. Sorting goes through sorted
integer codes, so missing values sort last in both directions and ties keep
the default order.

>>> import pandas as pd
>>> from rowvoi.query import QuerySchema
>>> df = pd.DataFrame({"sector": ["Non-Profit", "Corporate", "Non-Profit"],
...                    "income": [10.0, 50.0, 30.0]})
>>> schema = QuerySchema.from_frame(df, types={"sector": "categorical"})
>>> execute_pandas(df, {"operation": "filtered_aggregate", "group_by": "sector",
...                     "filters": {"sector": "non profit"},
...                     "aggregations": {"income": "mean"}}, schema).records
[{'sector': 'Non-Profit', 'mean_income': 20.0}]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from rowvoi.query.frames import prepare_frame
from rowvoi.query.model import DFQuery
from rowvoi.query.result import QueryResult, build_result
from rowvoi.query.schema import QuerySchema
from rowvoi.query.validate import (
    AllOf,
    AnyOf,
    Compare,
    Contains,
    Exists,
    FilterNode,
    Member,
    ValidQuery,
    validate_query,
)

__all__ = ["execute_pandas", "filter_mask"]

# The operator map: filter operator -> function(values, operand) on the
# non-missing cells of one column.
_COMPARE: Mapping[str, Callable[[Any, Any], Any]] = {
    "$eq": lambda a, v: a == v,
    "$ne": lambda a, v: a == v,  # complemented below, so missing cells match
    "$lt": lambda a, v: a < v,
    "$lte": lambda a, v: a <= v,
    "$gt": lambda a, v: a > v,
    "$gte": lambda a, v: a >= v,
}


def _present(s: pd.Series) -> tuple[np.ndarray, Any]:
    """(mask of non-missing cells, their values as a numpy array)."""
    present = s.notna().to_numpy()
    values = s[present]
    if isinstance(values.dtype, pd.Int64Dtype):
        return present, values.to_numpy(dtype=np.int64)
    return present, values.to_numpy()


def _operand(s: pd.Series, value: Any) -> Any:
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return np.datetime64(value, "us")
    return value


def _leaf(node: FilterNode, frame: pd.DataFrame) -> np.ndarray:
    s = frame[node.column]  # type: ignore[union-attr]
    if isinstance(node, Exists):
        present = s.notna().to_numpy()
        return present if node.present else ~present
    present, values = _present(s)
    hit = np.zeros(len(s), dtype=bool)
    if isinstance(node, Compare):
        hit[present] = np.asarray(_COMPARE[node.op](values, _operand(s, node.value)), bool)
        return ~hit if node.op == "$ne" else hit
    if isinstance(node, Member):
        operands = [_operand(s, v) for v in node.values]
        hit[present] = pd.Series(values).isin(operands).to_numpy(bool) if operands else False
        return ~hit if node.negate else hit
    if isinstance(node, Contains):
        needle = node.needle
        hit[present] = np.fromiter((needle in x for x in values), bool, len(values))
        return hit
    raise TypeError(f"not a filter node: {type(node).__name__}")


def filter_mask(node: FilterNode | None, frame: pd.DataFrame) -> np.ndarray:
    """Rows of a canonical frame (see :func:`~rowvoi.query.frames.prepare_frame`)
    that a filter tree matches, as a boolean array.

    >>> import pandas as pd
    >>> from rowvoi.query import QuerySchema, parse_filter
    >>> schema = QuerySchema({"n": "numeric"})
    >>> frame = pd.DataFrame({"n": [1.0, None, 3.0]})
    >>> filter_mask(parse_filter({"n": {"$ne": 1}}, schema), frame).tolist()
    [False, True, True]
    """
    n = len(frame)
    if node is None:
        return np.ones(n, dtype=bool)
    if isinstance(node, AllOf):
        out = np.ones(n, dtype=bool)
        for child in node.children:
            out &= filter_mask(child, frame)
        return out
    if isinstance(node, AnyOf):
        out = np.zeros(n, dtype=bool)
        for child in node.children:
            out |= filter_mask(child, frame)
        return out
    return _leaf(node, frame)


# ------------------------------------------------------------------ ordering
def _rank(values: Any, descending: bool = False) -> np.ndarray:
    """Integer sort codes: equal values equal codes, missing values last."""
    codes, uniques = pd.factorize(pd.Series(values, copy=False), sort=True, use_na_sentinel=True)
    k = len(uniques)
    if descending:
        return np.where(codes >= 0, k - 1 - codes, k)
    return np.where(codes >= 0, codes, k)


def _order(
    columns: list[Any], order_by: tuple[tuple[int, bool], ...], tiebreak: np.ndarray
) -> np.ndarray:
    """Positions sorted by the order_by columns, then by ``tiebreak``."""
    if not order_by:
        return np.argsort(tiebreak, kind="stable")
    keys = [tiebreak] + [_rank(columns[i], desc) for i, desc in reversed(order_by)]
    return np.lexsort(keys)


# ------------------------------------------------------------------ grouping
def _group_ids(frame: pd.DataFrame, keys: tuple[str, ...]) -> tuple[np.ndarray, list[Any]]:
    """Dense group ids in key order (missing last), and each group's key values."""
    n = len(frame)
    if not keys:
        return np.zeros(n, dtype=np.int64), []
    codes, uniques = [], []
    for key in keys:
        c, u = pd.factorize(frame[key], sort=True, use_na_sentinel=True)
        codes.append(np.where(c >= 0, c, len(u)).astype(np.int64))
        uniques.append(u)
    sizes = [len(u) + 1 for u in uniques]
    if float(np.prod(sizes, dtype=float)) < 2**62:
        combined = np.zeros(n, dtype=np.int64)
        for c, size in zip(codes, sizes):
            combined = combined * size + c
        first, gid = np.unique(combined, return_index=True, return_inverse=True)[1:]
    else:
        stacked = np.stack(codes, axis=1) if n else np.zeros((0, len(keys)), np.int64)
        first, gid = np.unique(stacked, axis=0, return_index=True, return_inverse=True)[1:]
    gid = np.asarray(gid).reshape(-1)
    key_values = []
    for c, u in zip(codes, uniques):
        picked = c[first]
        vals = np.asarray(u, dtype=object)
        key_values.append([vals[i] if i < len(u) else None for i in picked])
    return gid, key_values


def _aggregate(func: str, s: pd.Series | None, gid: np.ndarray, n_groups: int) -> list[Any]:
    counts: list[Any]
    if s is None:  # count rows
        counts = np.bincount(gid, minlength=n_groups).tolist()
        return counts
    present = s.notna().to_numpy()
    if func == "count":
        counts = np.bincount(gid[present], minlength=n_groups).tolist()
        return counts
    g = gid[present]
    values = _present(s)[1]
    if s.dtype == object:  # strings: min/max through sorted codes
        codes, uniques = pd.factorize(values, sort=True)
        out = pd.Series(codes).groupby(g).agg(func).reindex(range(n_groups))
        return [None if pd.isna(c) else uniques[int(c)] for c in out]
    if func == "sum" and values.dtype.kind in "iu":
        return _int_sums(values.astype(np.int64), g, n_groups)
    grouped = pd.Series(values, copy=False).groupby(g)
    if func == "sum":
        sums: list[Any] = grouped.sum().reindex(range(n_groups), fill_value=0).tolist()
        return sums
    return list(grouped.agg(func).reindex(range(n_groups)))


def _int_sums(values: np.ndarray, g: np.ndarray, n_groups: int) -> list[int]:
    """Exact integer sums per group, in Python ints when int64 could overflow."""
    big = max(abs(int(values.max())), abs(int(values.min()))) if len(values) else 0
    if big * len(values) < 2**63:
        exact: list[int] = (
            pd.Series(values).groupby(g).sum().reindex(range(n_groups), fill_value=0).tolist()
        )
        return exact
    sums = [0] * n_groups
    for gi, v in zip(g.tolist(), values.tolist()):
        sums[gi] += v
    return sums


# ------------------------------------------------------------------ operations
def _rows(
    frame: pd.DataFrame, positions: np.ndarray, names: tuple[str, ...]
) -> list[tuple[Any, ...]]:
    cols = [frame[c].iloc[positions].tolist() for c in names]
    return list(zip(*cols)) if cols else []


def _run_filter(vq: ValidQuery, frame: pd.DataFrame, idx: np.ndarray) -> list[tuple[Any, ...]]:
    cols = [frame[c].array[idx] for c in vq.columns]
    order = _order(cols, vq.order_by, idx)[: vq.limit + 1]
    return _rows(frame, idx[order], vq.columns)


def _run_select(vq: ValidQuery, frame: pd.DataFrame, idx: np.ndarray) -> list[tuple[Any, ...]]:
    sub = frame.iloc[idx]
    codes = pd.DataFrame({c: pd.factorize(sub[c], use_na_sentinel=True)[0] for c in vq.columns})
    keep = idx[~codes.duplicated(keep="first").to_numpy()]
    cols = [frame[c].iloc[keep].array for c in vq.columns]
    order = _order(cols, vq.order_by, keep)[: vq.limit + 1]
    return _rows(frame, keep[order], vq.columns)


def _run_aggregate(vq: ValidQuery, frame: pd.DataFrame, idx: np.ndarray) -> list[tuple[Any, ...]]:
    sub = frame.iloc[idx].reset_index(drop=True)
    gid, key_values = _group_ids(sub, vq.group_by)
    n_groups = len(key_values[0]) if vq.group_by else 1
    columns = list(key_values)
    for agg in vq.aggregations:
        s = None if agg.column is None else sub[agg.column]
        columns.append(_aggregate(agg.func, s, gid, n_groups))
    order = _order(
        [np.asarray(c, dtype=object) for c in columns], vq.order_by, np.arange(n_groups)
    )[: vq.limit + 1]
    return [tuple(c[i] for c in columns) for i in order]


_RUN = {
    "filter": _run_filter,
    "select": _run_select,
    "aggregate": _run_aggregate,
    "filtered_aggregate": _run_aggregate,
}


def execute_pandas(
    df: pd.DataFrame,
    query: DFQuery | Mapping[str, Any] | ValidQuery,
    schema: QuerySchema | None = None,
) -> QueryResult:
    """Run a query over an in-memory DataFrame.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified). Row order is the default order of
        ``filter`` results and decides ties.
    query : DFQuery, mapping or ValidQuery
        The query (validated here unless already a :class:`ValidQuery`).
    schema : QuerySchema, optional
        The allow-list; default :meth:`QuerySchema.from_frame` of ``df``.

    Returns
    -------
    QueryResult

    Raises
    ------
    QueryError
        If the query is invalid, or a column the query reads is missing or
        does not fit its declared type.

    Notes
    -----
    Thread-safe: reads ``df`` and builds new arrays only.
    """
    if schema is None:
        schema = QuerySchema.from_frame(df)
    vq = query if isinstance(query, ValidQuery) else validate_query(query, schema)
    frame = prepare_frame(df, schema, vq.referenced(schema))
    idx = np.flatnonzero(filter_mask(vq.where, frame))
    return build_result(vq, _RUN[vq.operation](vq, frame, idx), "pandas")
