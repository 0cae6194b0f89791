"""pandas -> engine: integer codes for columns, and row/column label checks.

The engine only ever compares integers. Each column is factorised once:
equal values get equal codes, and **every missing value (NaN, None,
pd.NA, NaT) is one value, "missing", that equals itself** and gets a code
of its own. Cells that cannot be hashed (lists, dicts, sets) cannot be
compared as categories and raise ``TypeError`` naming the column.

>>> import pandas as pd
>>> df = pd.DataFrame({"a": ["x", None, "x", float("nan")], "b": [1, 2, 1, 2]})
>>> encode_columns(df).tolist()
[[0, 1, 0, 1], [0, 1, 0, 1]]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rowvoi import _validate as _v

__all__ = [
    "UnknownLabelError",
    "encode_columns",
    "resolve_rows",
    "resolve_columns",
    "resolve_costs",
    "check_frame",
]


class UnknownLabelError(KeyError, ValueError):
    """A row or column label is not in the DataFrame.

    Both a ``KeyError`` (as pandas raises) and a ``ValueError`` (an invalid
    argument), so either ``except`` clause catches it.
    """

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0]) if self.args else ""


def check_frame(df: Any) -> pd.DataFrame:
    """Return df if it is a DataFrame, else raise TypeError."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    return df


def _as_label_list(values: Any, what: str) -> list[Hashable]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{what} must be a sequence of labels, got {type(values).__name__}")
    return list(values)


def resolve_rows(df: pd.DataFrame, rows: Sequence[Hashable] | None) -> list[Hashable]:
    """Validate row labels (the DataFrame index); None means every row.

    Raises UnknownLabelError for labels not in df.index, ValueError for a
    label given twice or for an index with duplicate labels.
    """
    if rows is None:
        if not df.index.is_unique:
            dup = df.index[df.index.duplicated()][0]
            raise ValueError(
                f"df.index has duplicate labels (e.g. {dup!r}), so rows cannot be "
                "addressed by label; use df.reset_index(drop=True) first"
            )
        return list(df.index)
    out = _as_label_list(rows, "rows")
    if not df.index.is_unique:
        dup = df.index[df.index.duplicated()][0]
        raise ValueError(
            f"df.index has duplicate labels (e.g. {dup!r}), so rows cannot be addressed "
            "by label; use df.reset_index(drop=True) first"
        )
    seen: set[Hashable] = set()
    for r in out:
        if r in seen:
            raise ValueError(f"rows lists {r!r} more than once")
        seen.add(r)
    if out:
        missing = (
            pd.Index(out).difference(df.index)
            if len(out) > 64
            else [r for r in out if r not in df.index]
        )
        if len(missing):
            shown = ", ".join(repr(m) for m in list(missing)[:5])
            raise UnknownLabelError(f"rows not in df.index: {shown}")
    return out


def resolve_columns(
    df: pd.DataFrame, columns: Sequence[Hashable] | None, what: str = "columns"
) -> list[Hashable]:
    """Validate column labels; None means every column."""
    out: list[Hashable] = list(df.columns) if columns is None else _as_label_list(columns, what)
    missing = [c for c in out if c not in df.columns]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        raise UnknownLabelError(f"{what} not in df.columns: {shown}")
    if len(set(out)) != len(out):
        raise ValueError(f"{what} lists a column more than once")
    if not df.columns.is_unique:
        dup = [c for c in out if (df.columns == c).sum() > 1]
        if dup:
            raise ValueError(f"df has several columns named {dup[0]!r}")
    return out


def resolve_costs(
    df: pd.DataFrame,
    costs: Mapping[Hashable, float] | None,
    columns: Sequence[Hashable],
    what: str = "column",
) -> np.ndarray:
    """Costs of `columns` as float64 (1.0 when missing).

    Every cost given for a column in use must be finite and >= 0 (ValueError
    naming the column, which the message calls a ``what``); a cost for a
    label that is not a column of df is a ValueError (a typo would otherwise
    be silently ignored).
    """
    out = np.ones(len(columns), dtype=np.float64)
    if costs is None:
        return out
    _v.mapping("costs", costs, "column -> cost")
    unknown = [c for c in costs if c not in df.columns]
    if unknown:
        raise ValueError(f"costs name columns that are not in df: {unknown[:5]!r}")
    pos = {c: i for i, c in enumerate(columns)}
    for col, value in costs.items():
        v = _v.cost(col, value, what)
        if col in pos:
            out[pos[col]] = v
    return out


def encode_series(s: pd.Series, name: Hashable) -> np.ndarray:
    """Integer codes of one column (missing values share one code).

    Codes are dense (0 .. k-1, missing last). Plain integer and boolean
    columns with a compact range are coded by a lookup table instead of
    hashing, in value order rather than order of appearance.
    """
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iub" and len(s):
        values = s.to_numpy()
        lo, hi = int(values.min()), int(values.max())
        if hi - lo <= 4 * len(values) + 64:
            shifted = (values.astype(np.int64) - lo) if lo else values.astype(np.int64)
            present = np.zeros(hi - lo + 1, dtype=bool)
            present[shifted] = True
            remap = (np.cumsum(present) - 1).astype(np.int32)
            return remap[shifted]
    try:
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
    except TypeError as exc:
        bad = next((v for v in s if not _is_hashable(v)), None)
        raise TypeError(
            f"column {name!r} holds unhashable values ({type(bad).__name__}); "
            "convert them to tuples or strings first"
        ) from exc
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size and codes.min() < 0:
        codes = np.where(codes < 0, len(uniques), codes)
    return codes.astype(np.int32, copy=False)


def _is_hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def encode_columns(frame: pd.DataFrame) -> np.ndarray:
    """Codes of every column of frame as an (n_cols, n_rows) int32 array."""
    n_rows, n_cols = frame.shape
    out = np.empty((n_cols, n_rows), dtype=np.int32)
    for j in range(n_cols):
        out[j] = encode_series(frame.iloc[:, j], frame.columns[j])
    return out
