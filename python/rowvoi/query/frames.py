"""A DataFrame's columns in the one canonical form every executor starts from.

The pandas executor computes on it, the DuckDB executor registers it, the
SQLite executor loads it: so a DataFrame means the same thing to all three.

* ``numeric``: ``int64`` (no missing values), pandas ``Int64`` (integers with
  missing values) or ``float64`` (NaN is missing);
* ``categorical`` / ``text``: ``object`` holding ``str`` or ``None``;
* ``date``: ``datetime64[us]``, naive (timezone-aware columns converted to
  UTC), ``NaT`` missing; ISO strings and ``datetime.date`` objects are parsed.

A column that does not fit its declared type raises
:class:`~rowvoi.errors.QueryError` naming the column and the first bad value.

>>> import pandas as pd
>>> from rowvoi.query import QuerySchema
>>> schema = QuerySchema({"n": "numeric", "s": "text", "d": "date"})
>>> df = pd.DataFrame({"n": [1, None], "s": ["a", float("nan")], "d": ["2024-01-31", None]})
>>> out = prepare_frame(df, schema, ["n", "s", "d"])
>>> [str(t) for t in out.dtypes], out["s"].tolist()
(['float64', 'object', 'datetime64[us]'], ['a', None])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rowvoi.errors import QueryError
from rowvoi.query.model import describe_value
from rowvoi.query.schema import ColumnSpec, QuerySchema

__all__ = ["prepare_frame"]

_INT64_MAX = np.iinfo(np.int64).max


def _first_bad(s: pd.Series, ok: np.ndarray) -> str:
    bad = s[~ok & s.notna().to_numpy()]
    return describe_value(bad.iloc[0]) if len(bad) else "a value"


def _numeric(s: pd.Series, spec: ColumnSpec) -> pd.Series:
    dtype = s.dtype
    api = pd.api.types
    if api.is_bool_dtype(dtype):
        raise QueryError(f"column {spec.name!r} is declared numeric but holds booleans")
    if api.is_integer_dtype(dtype):
        if (
            isinstance(dtype, np.dtype)
            and dtype.kind == "u"
            and len(s)
            and int(s.max()) > _INT64_MAX
        ):
            return s.astype("float64")
        if s.isna().any():
            return s.astype("Int64")
        return s.astype("int64")
    if api.is_float_dtype(dtype):
        return s.astype("float64")
    out = pd.to_numeric(s, errors="coerce")
    ok = out.notna().to_numpy() | s.isna().to_numpy()
    if not ok.all():
        raise QueryError(f"column {spec.name!r} is declared numeric but holds {_first_bad(s, ok)}")
    if not (api.is_integer_dtype(out.dtype) or api.is_float_dtype(out.dtype)):
        return out.astype("float64")
    return _numeric(out, spec)


def _all_strings(s: pd.Series) -> bool:
    """Every non-missing cell is a ``str`` (checked in C where the dtype allows)."""
    dtype = s.dtype
    if isinstance(dtype, pd.StringDtype):
        return True
    if isinstance(dtype, pd.CategoricalDtype):
        return all(isinstance(c, str) for c in dtype.categories)
    return pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty")


def _strings(s: pd.Series, spec: ColumnSpec) -> pd.Series:
    missing = s.isna().to_numpy()
    values = s.astype(object).to_numpy(copy=True)
    values[missing] = None
    if not _all_strings(s):
        bad = next(v for v in values[~missing] if not isinstance(v, str))
        raise QueryError(
            f"column {spec.name!r} is declared {spec.type} but holds {describe_value(bad)}"
        )
    out: pd.Series = pd.Series(values, index=s.index, dtype=object)
    return out


def _dates(s: pd.Series, spec: ColumnSpec) -> pd.Series:
    if not pd.api.types.is_datetime64_any_dtype(s.dtype):
        try:
            s = pd.to_datetime(s, format="ISO8601", utc=True)
        except (ValueError, TypeError, OverflowError) as exc:
            raise QueryError(
                f"column {spec.name!r} is declared date but holds values that "
                f"are not ISO-8601 dates ({exc})"
            ) from None
    if getattr(s.dtype, "tz", None) is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return s.astype("datetime64[us]")


_CONVERT = {"numeric": _numeric, "categorical": _strings, "text": _strings, "date": _dates}


def prepare_frame(df: pd.DataFrame, schema: QuerySchema, names: Sequence[str]) -> pd.DataFrame:
    """The columns ``names`` of ``df`` in canonical form, positions kept.

    Parameters
    ----------
    df : pandas.DataFrame
        The source table; not modified.
    schema : QuerySchema
        Declares each column's type.
    names : sequence of str
        Columns to convert (the ones a query reads).

    Returns
    -------
    pandas.DataFrame
        A new frame with a ``RangeIndex`` (row ``i`` is ``df``'s ``i``-th row).

    Raises
    ------
    QueryError
        If a column is missing from ``df`` or holds values its type cannot.
    TypeError
        If ``df`` is not a DataFrame.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"the source must be a pandas DataFrame, got {type(df).__name__}")
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise QueryError(
            f"the table has no column {', '.join(map(repr, missing))} that the "
            f"schema declares; its columns: "
            f"{', '.join(map(str, list(df.columns)[:30]))}"
        )
    if not df.columns.is_unique:
        dupes = [n for n in names if (df.columns == n).sum() > 1]
        if dupes:
            raise QueryError(f"the table has column {dupes[0]!r} more than once")
    out = {}
    for name in names:
        spec = schema[name]
        s = df[name].reset_index(drop=True)
        out[name] = _CONVERT[spec.type](s, spec)
    frame: pd.DataFrame = pd.DataFrame(out, index=pd.RangeIndex(len(df)))
    return frame
