"""Cells -> 64-bit value keys that mean the same in every partition.

In memory a column is factorised once, so equal values get equal codes. A
Dask frame is factorised piece by piece, and a code from one partition
means nothing in another, so the first pass over a table works on **value
keys** instead: a uint64 per cell that depends on the value alone.

* Plain numeric columns (numpy bool, integer, float, datetime64,
  timedelta64) use the value's own bits: integers as they are, floats with
  ``-0.0`` folded into ``0.0`` and every NaN into one NaN, datetimes as
  their int64 ticks (NaT is one tick value of its own). Distinct values get
  distinct keys by construction.
* Every other column (strings, categoricals, objects, pandas' nullable
  types) is hashed: each distinct value is written in a canonical text form
  that follows pandas' equality (``1``, ``1.0`` and ``True`` are one value;
  ``"1"`` is another; a missing value of any kind is "missing") and the text
  is hashed to 64 bits with a seed. Hashing can map two values to one key,
  so every hashed column is **checked**: the first pass collects each
  key's canonical texts from every partition and a key with two texts is a
  collision, after which the column is hashed again with the next seed
  (:func:`check_collisions`). No answer is ever computed from unchecked keys.

Values of types without a canonical form here are written as their type and
``repr``; two such values are one value exactly when those agree.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from rowvoi.frame import encode_series

__all__ = ["column_kind", "value_keys", "canonical", "merge_canon", "MISSING"]

#: Canonical text of a missing value (no other canonical text is empty-tagged).
MISSING = "\x00"

_NAN_BITS = np.float64(np.nan).view(np.uint64)


def column_kind(dtype: Any) -> str:
    """ "bits" for dtypes keyed by their own bits, "hash" for the rest."""
    if isinstance(dtype, np.dtype) and dtype.kind in "biufmM":
        return "bits"
    return "hash"


def _hash_texts(texts: np.ndarray, seed: int) -> np.ndarray:
    """64-bit keys of canonical texts (SipHash with a seed-derived key: the
    same on every machine and process)."""
    if not len(texts):
        return np.zeros(0, dtype=np.uint64)
    key = f"rowvoi-vk{seed % 10_000_000:07d}"
    return np.asarray(pd.util.hash_array(texts, hash_key=key, categorize=False), dtype=np.uint64)


def _bits(s: pd.Series, dtype: np.dtype) -> np.ndarray:
    if s.dtype != dtype:
        try:
            s = s.astype(dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"column {s.name!r} is {dtype} in the Dask frame's meta but a partition "
                f"holds {s.dtype} values that do not convert ({exc}); fix the column's "
                "dtype (ddf.astype) first"
            ) from exc
    v = s.to_numpy()
    kind = dtype.kind
    if kind in "bu":
        return v.astype(np.uint64)
    if kind == "i":
        return v.astype(np.int64).view(np.uint64)
    if kind in "mM":
        return np.ascontiguousarray(v).view(np.int64).view(np.uint64)
    f = v.astype(np.float64)
    f = np.where(f == 0.0, 0.0, f)  # -0.0 == 0.0
    out: np.ndarray = f.view(np.uint64).copy()
    out[np.isnan(f)] = _NAN_BITS  # every NaN is "missing"
    return out


def _len_prefixed(parts: list[str]) -> str:
    return "".join(f"{len(p)}:{p}" for p in parts)


def canonical(v: Any) -> str:
    """Canonical text of a non-missing value: equal under pandas' rules
    (Python ``==`` across numeric types) gives equal text."""
    if isinstance(v, str):
        return "s" + v
    if isinstance(v, (bool, np.bool_)):
        return "i1" if v else "i0"
    if isinstance(v, (int, np.integer)):
        return f"i{int(v)}"
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return f"i{int(f)}" if f.is_integer() else "f" + f.hex()
    if isinstance(v, decimal.Decimal):
        if v.is_finite():
            if v == v.to_integral_value():
                return f"i{int(v)}"
            f = float(v)
            if decimal.Decimal(f) == v:
                return "f" + f.hex()
        return "d" + str(v.normalize())
    if isinstance(v, fractions.Fraction):
        if v.denominator == 1:
            return f"i{v.numerator}"
        f = float(v)
        return "f" + f.hex() if fractions.Fraction(f) == v else f"q{v}"
    if isinstance(v, (complex, np.complexfloating)):
        c = complex(v)
        return canonical(c.real) if c.imag == 0 else "c" + repr(c)
    if isinstance(v, (pd.Timestamp, datetime.datetime, np.datetime64)):
        t = pd.Timestamp(v)
        stamp: str = t.isoformat() if t.tzinfo is None else t.tz_convert("UTC").isoformat()
        return ("t" if t.tzinfo is None else "z") + stamp
    if isinstance(v, datetime.date):
        return "D" + v.isoformat()
    if isinstance(v, (pd.Timedelta, datetime.timedelta, np.timedelta64)):
        return f"e{pd.Timedelta(v).value}"
    if isinstance(v, (bytes, bytearray)):
        return "b" + bytes(v).hex()
    if isinstance(v, tuple):
        return "(" + _len_prefixed([_canonical_or_missing(x) for x in v]) + ")"
    if isinstance(v, frozenset):
        return "{" + _len_prefixed(sorted(_canonical_or_missing(x) for x in v)) + "}"
    t = type(v)
    return f"o{t.__module__}.{t.__qualname__}:{v!r}"


def _canonical_or_missing(v: Any) -> str:
    try:
        if v is None or (np.ndim(v) == 0 and bool(pd.isna(v))):
            return MISSING
    except (TypeError, ValueError):
        pass
    return canonical(v)


def _factorize(s: pd.Series, name: Hashable) -> tuple[np.ndarray, Any]:
    try:
        return pd.factorize(s, use_na_sentinel=True)
    except TypeError:
        encode_series(s, name)  # raises the TypeError that names the column
        raise


def value_keys(
    s: pd.Series, dtype: Any, seed: int, name: Hashable
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Value keys of one partition's column, and what the collision check needs.

    Returns (keys, canon): keys is a uint64 per cell; canon is None for a
    "bits" column, else (distinct keys, their canonical texts as an object
    array) for :func:`merge_canon`.
    """
    if column_kind(dtype) == "bits":
        return _bits(s, dtype), None
    codes, uniques = _factorize(s, name)
    codes = np.asarray(codes, dtype=np.int64)
    if isinstance(s.dtype, pd.StringDtype) or (
        len(uniques) and isinstance(getattr(uniques, "dtype", None), pd.StringDtype)
    ):
        texts = ["s" + u for u in np.asarray(uniques, dtype=object)]
    else:
        texts = [canonical(u) for u in np.asarray(uniques, dtype=object)]
    has_missing = bool(codes.size and codes.min() < 0)
    if has_missing:
        texts.append(MISSING)
    text_arr = np.array(texts, dtype=object)
    ukeys = _hash_texts(text_arr, seed)
    if has_missing:
        codes = np.where(codes < 0, len(texts) - 1, codes)
    keys = ukeys[codes] if codes.size else np.zeros(0, dtype=np.uint64)
    return keys, (ukeys, text_arr)


def merge_canon(
    parts: list[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, tuple[str, str] | None]:
    """Merge (keys, texts) lists; return distinct (keys, texts) and the first
    collision found (two texts of one key), or None."""
    parts = [p for p in parts if p is not None and len(p[0])]
    if not parts:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=object), None
    keys = np.concatenate([p[0] for p in parts])
    texts = np.concatenate([p[1] for p in parts])
    order = np.argsort(keys, kind="stable")
    keys, texts = keys[order], texts[order]
    same_key = keys[1:] == keys[:-1]
    clash = None
    if same_key.any():
        idx = np.flatnonzero(same_key)
        differ = texts[idx + 1] != texts[idx]
        if np.any(differ):
            i = int(idx[np.flatnonzero(differ)[0]])
            clash = (str(texts[i]), str(texts[i + 1]))
    keep = np.ones(len(keys), dtype=bool)
    keep[1:] = ~same_key
    return keys[keep], texts[keep], clash
