"""Candidate rows -> engine inputs: row positions and int32 codes.

Private helper of :mod:`rowvoi.core`, :mod:`rowvoi.policies` and
:mod:`rowvoi.ml`. The belief kernels compare codes for equality only, so a
column may be coded however is fastest, as long as equal values get equal
codes and every missing value gets one shared code:

* integer and boolean columns use their values as codes (no hashing),
* categorical columns use their category codes (-1 is "missing"),
* everything else is factorised by :func:`rowvoi.frame.encode_series`'s rules
  (``pandas.factorize``, missing values as one code of their own).

:class:`Encoded` also maps an observed value to its code, with pandas
equality (``1 == 1.0``; a missing value matches missing cells), so a hard
filter or a likelihood can be computed on codes alone.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rowvoi.frame import UnknownLabelError, encode_series

__all__ = [
    "Encoded",
    "encode_values",
    "positions",
    "cache_positions",
    "encode_columns_at",
    "is_missing",
]

_I32_MIN = np.iinfo(np.int32).min
_I32_MAX = np.iinfo(np.int32).max
_POS_ATTR = "_rv_positions"


def is_missing(value: Any) -> bool:
    """True for NaN, None, pd.NA, NaT (scalars only)."""
    try:
        return bool(pd.isna(value)) if np.ndim(value) == 0 else False
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------------ rows
def positions(df: pd.DataFrame, state_or_rows: Any) -> np.ndarray:
    """Positions (int64) of candidate labels in ``df.index``.

    Accepts a :class:`rowvoi.core.CandidateState` (whose positions are cached
    on it, keyed by the identity of ``df.index`` -- pandas indexes are
    immutable, so the cache cannot go stale) or a sequence of labels.
    Raises UnknownLabelError for labels not in the index and ValueError for
    an index with duplicate labels or a label listed twice.
    """
    rows = getattr(state_or_rows, "candidate_rows", state_or_rows)
    cached = getattr(state_or_rows, "__dict__", {}).get(_POS_ATTR)
    index = df.index
    if cached is not None:
        idx_obj, rows_obj, n, pos = cached
        if idx_obj is index and rows_obj is rows and n == len(rows):
            hit: np.ndarray = pos
            return hit
    pos = _lookup(index, rows)
    if rows is not state_or_rows:
        cache_positions(state_or_rows, df, pos)
    return pos


def cache_positions(state: Any, df: pd.DataFrame, pos: np.ndarray) -> None:
    """Remember that ``state``'s candidates sit at ``pos`` in ``df.index``."""
    try:
        state.__dict__[_POS_ATTR] = (
            df.index,
            state.candidate_rows,
            len(state.candidate_rows),
            pos,
        )
    except AttributeError:  # pragma: no cover - states always have a __dict__
        pass


def _lookup(index: pd.Index, rows: Sequence[Hashable]) -> np.ndarray:
    n_rows = len(index)
    if not index.is_unique:
        dup = index[index.duplicated()][0]
        raise ValueError(
            f"df.index has duplicate labels (e.g. {dup!r}), so rows cannot be addressed "
            "by label; use df.reset_index(drop=True) first"
        )
    pos = None
    if isinstance(index, pd.RangeIndex) and len(rows):
        arr = np.asarray(rows)
        if arr.ndim == 1 and arr.dtype.kind in "iu":
            start, step = index.start, index.step
            off = arr.astype(np.int64) - start
            p, rem = np.divmod(off, step)
            ok = (rem == 0) & (p >= 0) & (p < n_rows)
            if ok.all():
                pos = p
            else:
                bad = arr[~ok][:5]
                raise UnknownLabelError(
                    "rows not in df.index: " + ", ".join(repr(b) for b in bad.tolist())
                )
    if pos is None:
        if len(rows) == 0:
            return np.zeros(0, dtype=np.int64)
        try:
            pos = index.get_indexer(pd.Index(list(rows), tupleize_cols=False))
        except TypeError:
            pos = np.array([index.get_loc(r) if r in index else -1 for r in rows], dtype=np.int64)
        pos = np.asarray(pos, dtype=np.int64)
        if (pos < 0).any():
            bad = [rows[i] for i in np.flatnonzero(pos < 0)[:5]]
            raise UnknownLabelError("rows not in df.index: " + ", ".join(repr(b) for b in bad))
    if len(pos) > 1:
        counts = np.bincount(pos, minlength=0)
        if counts.max() > 1:
            dup_pos = int(np.argmax(counts))
            raise ValueError(f"candidate rows list {index[dup_pos]!r} more than once")
    return pos


def is_identity(pos: np.ndarray, n_rows: int) -> bool:
    """Whether pos is exactly 0, 1, ..., n_rows - 1."""
    if len(pos) != n_rows:
        return False
    if n_rows == 0:
        return True
    return bool(pos[0] == 0 and pos[-1] == n_rows - 1 and (np.diff(pos) == 1).all())


# ---------------------------------------------------------------- values
class Encoded:
    """int32 codes of some cells of one column, and a value -> code lookup."""

    __slots__ = ("_kind", "_lookup", "_missing", "codes")

    def __init__(
        self, codes: np.ndarray, kind: str, lookup: Any = None, missing: int | None = None
    ):
        self.codes = codes
        self._kind = kind
        self._lookup = lookup
        self._missing = missing

    def code_of(self, value: Any) -> int | None:
        """The code a cell equal to ``value`` has, or None when no cell can."""
        if is_missing(value):
            return self._missing
        if self._kind in ("int", "bool"):
            if isinstance(value, (bool, np.bool_, int, np.integer)):
                v = int(value)
            elif isinstance(value, (float, np.floating)):
                if not np.isfinite(value) or value != int(value):
                    return None
                v = int(value)
            else:
                return None  # a string, a date, ...: never equal to an integer cell
            if self._kind == "bool" and v not in (0, 1):
                return None
            return v if _I32_MIN <= v <= _I32_MAX else None
        if self._kind == "bins":
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                return None
            return int(np.searchsorted(self._lookup, float(value), side="left"))
        try:
            loc = self._lookup.get_loc(value)
        except (KeyError, TypeError, ValueError, pd.errors.InvalidIndexError):
            return None
        return int(loc) if isinstance(loc, (int, np.integer)) else None

    def observed_code(self, value: Any) -> int:
        """The code of ``value``, or one that no cell has when no cell equals it.

        The likelihood kernel needs a code either way: an observed value
        that no candidate has is still an observation (surprising under a
        noisy model, impossible under an exact one), not an error.
        """
        code = self.code_of(value)
        if code is not None:
            return code
        codes = self.codes
        if codes.size == 0:
            return 0
        hi, lo = int(codes.max()), int(codes.min())
        if hi < _I32_MAX:
            return hi + 1
        if lo > _I32_MIN:
            return lo - 1
        present = np.unique(codes)  # both ends taken: the first gap
        gaps = np.flatnonzero(np.diff(present.astype(np.int64)) > 1)
        return int(present[gaps[0]]) + 1


def encode_values(values: Any, name: Hashable) -> Encoded:
    """Encode one column's cells (a Series or 1-D array) for the kernels."""
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(s.cat.codes, dtype=np.int32)
        return Encoded(codes, "cat", pd.Index(s.cat.categories), -1)
    if isinstance(dtype, np.dtype):
        if dtype.kind == "b":
            return Encoded(s.to_numpy().astype(np.int32), "bool")
        if dtype.kind in "iu":
            arr = s.to_numpy()
            if arr.size == 0:
                return Encoded(np.zeros(0, dtype=np.int32), "int")
            if arr.min() >= _I32_MIN and arr.max() <= _I32_MAX:
                return Encoded(arr.astype(np.int32), "int")
    try:
        raw, uniques = pd.factorize(s, use_na_sentinel=True)
    except TypeError:
        encode_series(s, name)  # raises the TypeError that names the column
        raise
    raw = np.asarray(raw, dtype=np.int64)
    missing = len(uniques)
    codes = np.where(raw < 0, missing, raw).astype(np.int32)
    return Encoded(codes, "factor", pd.Index(uniques, tupleize_cols=False), missing)


def encode_bins(values: Any, inner_edges: np.ndarray) -> Encoded:
    """Codes of numeric cells binned at the cut points ``inner_edges``.

    Bin k holds the values in (edge[k-1], edge[k]] (right-closed, as
    ``pandas.qcut``); values beyond the outer edges fall into the first or
    last bin; missing values get code -1.
    """
    arr = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    codes = np.searchsorted(inner_edges, arr, side="left").astype(np.int32)
    codes[np.isnan(arr)] = -1
    return Encoded(codes, "bins", np.asarray(inner_edges, dtype=np.float64), -1)


def column_at(df: pd.DataFrame, col: Hashable, pos: np.ndarray) -> pd.Series:
    """The cells of column ``col`` at row positions ``pos`` (no copy when pos is all rows)."""
    s = df[col]
    if isinstance(s, pd.DataFrame):
        raise ValueError(f"df has several columns named {col!r}")
    if is_identity(pos, len(df)):
        return s
    return s.iloc[pos]


def encode_columns_at(
    df: pd.DataFrame, columns: Sequence[Hashable], pos: np.ndarray, transform: Any = None
) -> np.ndarray:
    """(n_cols, len(pos)) int32 codes of ``columns`` at row positions ``pos``.

    ``transform(col, series) -> Encoded | None`` may replace the default
    encoding of a column (the model uses it for binned columns).
    """
    out = np.empty((len(columns), len(pos)), dtype=np.int32)
    identity = is_identity(pos, len(df))
    for j, col in enumerate(columns):
        s = df[col]
        if isinstance(s, pd.DataFrame):
            raise ValueError(f"df has several columns named {col!r}")
        if not identity:
            s = s.iloc[pos]
        enc = transform(col, s) if transform is not None else None
        if enc is None:
            enc = encode_values(s, col)
        out[j] = enc.codes
    return out
