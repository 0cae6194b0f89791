"""Values at the edges: dates in and out, JSON-ready results, SQLite storage.

Every executor hands its raw values (numpy scalars, ``pandas.Timestamp``,
DuckDB's ``datetime``, SQLite's text) to :func:`json_value`, so results look
the same whichever engine produced them:

* numbers are Python ``int`` or ``float``; NaN and infinities become ``None``;
* an ``"int"`` output column turns integral floats into ``int``;
* dates are ISO-8601 strings: ``2024-01-31`` at midnight, else
  ``2024-01-31T12:30:00`` (with ``.ffffff`` when there are microseconds).

Dates are naive and have microsecond resolution; a timezone-aware value is
converted to UTC first.

>>> json_value(parse_date("2024-01-31T00:00:00Z"), "date")
'2024-01-31'
>>> json_value(float("nan"), "float"), json_value(3.0, "int")
(None, 3)
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from typing import Any

__all__ = ["SQLITE_DATE_FORMAT", "format_date", "json_value", "parse_date", "sqlite_value"]

#: How the SQLite executor stores a date: fixed-width ISO text, so that text
#: order is time order. A corpus metadata table must store dates this way
#: (:func:`sqlite_value` does it).
SQLITE_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def parse_date(value: Any) -> _dt.datetime:
    """A date value as a naive ``datetime`` (UTC if it carried a timezone).

    Accepts ``datetime.date``, ``datetime.datetime`` (and so
    ``pandas.Timestamp``), or an ISO-8601 string: ``2024-01-31``,
    ``2024-01-31T12:00``, ``2024-01-31 12:00:00.5``, with an optional ``Z``
    or ``+HH:MM`` offset.

    Raises
    ------
    ValueError
        For any other string or type; the message gives the accepted forms.

    Examples
    --------
    >>> parse_date("2024-01-31T12:00+02:00")
    datetime.datetime(2024, 1, 31, 10, 0)
    """
    if isinstance(value, _dt.datetime):
        out = value
    elif isinstance(value, _dt.date):
        out = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            out = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                "expected an ISO-8601 date such as 2024-01-31 or 2024-01-31T12:00:00"
            ) from None
    else:
        raise ValueError("expected an ISO-8601 date string such as 2024-01-31")
    if out.tzinfo is not None:
        out = out.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    if hasattr(out, "to_pydatetime"):  # pandas.Timestamp: drop nanoseconds
        out = out.to_pydatetime(warn=False)
    return out


def format_date(value: _dt.datetime) -> str:
    """ISO-8601 text: the date alone at midnight, else date and time.

    >>> format_date(parse_date("2024-01-31 08:05:00.25"))
    '2024-01-31T08:05:00.250000'
    """
    if (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0):
        return value.strftime("%Y-%m-%d")
    return value.isoformat()


def json_value(value: Any, kind: str) -> Any:
    """One result cell as a JSON-ready Python value.

    Parameters
    ----------
    value : Any
        What an executor produced (numpy scalar, ``Timestamp``, ``datetime``,
        ISO text from SQLite, ``None``, NaN, ``pandas.NA``).
    kind : {"int", "float", "str", "date"}
        The output column's kind, decided by the schema and the aggregation.

    Returns
    -------
    int, float, str or None
        ``None`` for every missing value and for non-finite floats.
    """
    value = _scalar(value)
    if value is None:
        return None
    if kind == "date":
        if isinstance(value, (str, _dt.date)):
            return format_date(parse_date(value))
        return None
    if kind == "str":
        return value if isinstance(value, str) else None
    if isinstance(value, decimal.Decimal):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if kind == "int" and value.is_integer():
            return int(value)
        return value
    return float(value) if kind == "float" else int(value)


#: Types whose values are never missing markers (pandas.NaT is a datetime
#: subclass, Decimal("NaN") a Decimal: those go through pandas.isna).
_PLAIN = (int, bool, _dt.datetime, _dt.date)


def _scalar(value: Any) -> Any:
    """A numpy scalar as a Python one, and every missing marker (NaN, NaT,
    ``pandas.NA``) as ``None``; a ``pandas.Timestamp`` stays a datetime."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if type(value) in _PLAIN:
        return value
    import pandas as pd  # here, for numpy, pandas and Decimal values only

    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        return value
    if hasattr(value, "item") and not isinstance(value, _dt.datetime):
        try:
            value = value.item()  # numpy scalar -> Python scalar
        except (TypeError, ValueError):
            pass
    return value


def sqlite_value(value: Any, column_type: str) -> Any:
    """How a value of a schema column type is stored in a SQLite table.

    Use this when writing a table that :func:`rowvoi.query.compile_filter`
    or :func:`rowvoi.query.execute_sqlite` will read: ``numeric`` as INTEGER
    or REAL (NaN as NULL), ``categorical`` and ``text`` as TEXT, ``date`` as
    TEXT in :data:`SQLITE_DATE_FORMAT`. Missing values are ``None`` (NULL).

    Raises
    ------
    ValueError
        If the value does not fit the type (a string in a numeric column,
        an unparseable date).

    Examples
    --------
    >>> sqlite_value("2024-01-31", "date"), sqlite_value(float("nan"), "numeric")
    ('2024-01-31T00:00:00.000000', None)
    """
    value = _scalar(value)
    if value is None:
        return None
    if column_type == "numeric":
        if isinstance(value, decimal.Decimal):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {type(value).__name__}")
        return value
    if column_type == "date":
        return parse_date(value).strftime(SQLITE_DATE_FORMAT)
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {type(value).__name__}")
