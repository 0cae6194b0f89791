"""Times and windows of the graph layer (ground floor: numpy and the
standard library only).

Times are int64 in the caller's unit.  ISO-8601 strings, ``datetime`` and
``numpy.datetime64`` values become **milliseconds since the Unix epoch**
(UTC when the value carries no zone), the unit Raphtory uses, so a graph may
mix them with integer milliseconds.  ``None`` (or NaN / NaT) means "no time":
such an item belongs to every window.

A window is the half-open interval ``[start, end)``: ``start <= t < end``.

>>> from rowvoi._time import to_time, to_window
>>> to_time("1970-01-01T00:00:01Z"), to_time(5), to_time(None)
(1000, 5, None)
>>> to_window(("1970-01-01", "1970-01-02"))
(0, 86400000)
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
from typing import Any

import numpy as np

__all__ = ["NO_TIME", "to_time", "to_window", "times_array"]

NO_TIME = -(2**63)  # the engine's RV_GRAPH_NO_TIME
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _datetime_ms(value: _dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def to_time(value: Any, *, name: str = "time") -> int | None:
    """One time as an int (see the module notes), or None for "no time".

    Raises
    ------
    ValueError
        A string that is not ISO-8601, or an integer outside int64.
    TypeError
        Any other type.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: a time is an int, an ISO-8601 string or a datetime")
    if isinstance(value, numbers.Integral):
        v = int(value)
        if not -(2**63) < v < 2**63:
            raise ValueError(f"{name}={v}: times must fit in int64 (and not be -2**63)")
        return v
    if isinstance(value, numbers.Real):
        if math.isnan(value):
            return None
        if float(value).is_integer():
            return to_time(int(float(value)), name=name)
        raise ValueError(f"{name}={value!r}: times are integers (or ISO-8601 strings)")
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = _dt.datetime.fromisoformat(text)
        except ValueError:
            try:
                parsed = _dt.datetime.combine(_dt.date.fromisoformat(text), _dt.time())
            except ValueError:
                raise ValueError(
                    f"{name}={value!r} is not an ISO-8601 date or time "
                    "(e.g. '2024-05-01' or '2024-05-01T12:00:00Z')"
                ) from None
        return _datetime_ms(parsed)
    if isinstance(value, _dt.datetime):
        if value != value:  # pandas NaT
            return None
        return _datetime_ms(value)
    if isinstance(value, _dt.date):
        return _datetime_ms(_dt.datetime.combine(value, _dt.time()))
    if isinstance(value, np.datetime64):
        if np.isnat(value):
            return None
        return int(value.astype("datetime64[ms]").astype(np.int64))
    raise TypeError(
        f"{name}={value!r}: a time is an int, an ISO-8601 string or a datetime, "
        f"not {type(value).__name__}"
    )


def to_window(window: Any) -> tuple[int, int] | None:
    """A ``(start, end)`` pair as ints (half-open ``[start, end)``), or None.

    Raises
    ------
    TypeError
        Not a pair.
    ValueError
        A bound that is not a time, or ``end < start``.
    """
    if window is None:
        return None
    try:
        start, end = window
    except (TypeError, ValueError):
        raise TypeError(
            f"window must be a (start, end) pair of ints or ISO-8601 strings, got {window!r}"
        ) from None
    s = to_time(start, name="window start")
    e = to_time(end, name="window end")
    if s is None or e is None:
        raise ValueError(f"window {window!r}: both bounds are needed")
    if e < s:
        raise ValueError(f"window {window!r}: end is before start")
    return s, e


def times_array(values: Any, n: int, name: str) -> np.ndarray | None:
    """n times as an int64 array with NO_TIME for missing ones, or None when
    values is None or every one is missing."""
    if values is None:
        return None
    out = np.full(n, NO_TIME, dtype=np.int64)
    any_time = False
    for i, v in enumerate(values):
        t = to_time(v, name=f"{name}[{i}]")
        if t is not None:
            out[i] = t
            any_time = True
    return out if any_time else None
