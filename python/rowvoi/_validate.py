"""Argument checks shared by every module: the ground floor of the package.

Each check lives here once and is imported wherever an argument of its kind
arrives (costs, fractions and probabilities, seeds, strategy and other choice
names, integer ranges, texts, flags). This module imports nothing of rowvoi
but :mod:`rowvoi.errors`, so any module may use it without an import cycle;
``tests/python/test_layers.py`` keeps it that way.

Conventions
-----------
* A value of the wrong type raises :class:`rowvoi.errors.ArgumentTypeError`,
  which is both a ``TypeError`` and a ``ValueError``: callers and docs that
  promise either keep their promise.
* A value of the right type outside its range raises ``ValueError``; the
  message names the argument, what is allowed, and the value given.
* ``bool`` is never a number here (``True`` is not a count of 1).
* Every check returns the value converted to the plain Python type
  (``int``, ``float``, ``str``), so numpy scalars come out as builtins.

Thread safety: every function is pure and may be called from any thread.

Examples
--------
>>> integer("k", 3, 1)
3
>>> fraction("epsilon", 0.25)
0.25
>>> real("noise", 1.0, low=0.0, high=1.0, high_open=True)
Traceback (most recent call last):
...
ValueError: noise must be in [0, 1), got 1.0
>>> cost("price", -1)
Traceback (most recent call last):
...
ValueError: cost of set 'price' is -1.0: set costs must be finite and >= 0
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, TypeVar

from rowvoi.errors import ArgumentTypeError

__all__ = [
    "STRATEGIES",
    "integer",
    "real",
    "fraction",
    "probability",
    "seed",
    "time_limit",
    "choice",
    "strategy",
    "cost",
    "per_cost",
    "ratio_better",
    "mapping",
    "text",
    "texts",
    "flag",
]

#: The set cover strategies, in the order the documentation lists them
#: (re-exported as :data:`rowvoi.setcover.STRATEGIES`).
STRATEGIES: tuple[str, ...] = ("greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid")

_S = TypeVar("_S", bound=str)


def _fmt(x: float) -> str:
    """A bound as the user wrote it: ``1`` not ``1.0``, ``1e+06`` for large."""
    return f"{x:g}"


def integer(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """An integer in ``low .. high`` (either bound may be None: open).

    Raises
    ------
    ArgumentTypeError
        If value is not an integer (``bool`` and floats are not).
    ValueError
        If it is outside the range ("k=0: must be >= 1").

    >>> integer("threads", 4, 0, 64), integer("size", 10**12)
    (4, 1000000000000)
    >>> integer("k", 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: k=0: must be >= 1
    >>> integer("k", 1.0, 1)
    Traceback (most recent call last):
    ...
    rowvoi.errors.ArgumentTypeError: k must be an integer, got 1.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        if high is None:
            bound = f">= {low}"
        elif low is None:
            bound = f"<= {high}"
        else:
            bound = f"in {low} .. {high}"
        raise ValueError(f"{name}={v}: must be {bound}")
    return v


def real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = False,
) -> float:
    """A real number, never NaN, optionally finite and within bounds.

    ``low``/``high`` are inclusive unless ``low_open``/``high_open``. An
    infinity passes only where the bounds allow it and ``finite`` is False.

    Raises
    ------
    ArgumentTypeError
        If value is not a real number (``bool`` is not).
    ValueError
        If it is NaN, infinite where ``finite``, or outside the bounds; the
        message shows the allowed interval ("noise must be in [0, 1), got
        1.0").

    >>> real("rrf_k", 60), real("weight", 0.0, low=0.0, finite=True)
    (60.0, 0.0)
    >>> real("scale", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: scale must not be NaN
    >>> real("k1", -1, low=0.0, finite=True)
    Traceback (most recent call last):
    ...
    ValueError: k1 must be finite and >= 0, got -1
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(
            f"{name} must be finite, got {value!r}" if finite else f"{name} must not be NaN"
        )
    ok = not (finite and math.isinf(v))
    if low is not None:
        ok = ok and (v > low if low_open else v >= low)
    if high is not None:
        ok = ok and (v < high if high_open else v <= high)
    if not ok:
        if low is not None and high is not None:
            allowed = (
                f"in {'(' if low_open else '['}{_fmt(low)}, "
                f"{_fmt(high)}{')' if high_open else ']'}"
            )
        elif low is not None:
            allowed = f"{'>' if low_open else '>='} {_fmt(low)}"
        elif high is not None:
            allowed = f"{'<' if high_open else '<='} {_fmt(high)}"
        else:
            allowed = ""
        if finite:
            allowed = f"finite and {allowed}" if allowed else "finite"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return v


def fraction(name: str, value: Any) -> float:
    """A fraction in [0, 1] (epsilon, a share of a universe).

    >>> fraction("epsilon", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be in [0, 1], got 1.5
    """
    return real(name, value, low=0.0, high=1.0)


def probability(name: str, value: Any) -> float:
    """A probability of error in [0, 1): a noise level (1 would mean that
    observations carry no information at all).

    >>> probability("noise", 0.1)
    0.1
    """
    return real(name, value, low=0.0, high=1.0, high_open=True)


def seed(name: str, value: Any) -> int:
    """A random seed: a non-negative integer (any size).

    >>> seed("seed", 2**70) == 2**70
    True
    >>> seed("seed", -1)
    Traceback (most recent call last):
    ...
    ValueError: seed=-1: must be >= 0
    """
    return integer(name, value, 0)


def time_limit(value: Any) -> float:
    """A solver's time limit in seconds: a positive finite number, or None
    (no limit, returned as 0.0).

    >>> time_limit(None), time_limit(2)
    (0.0, 2.0)
    """
    if value is None:
        return 0.0
    v = real("time_limit", value)
    if not v > 0 or math.isinf(v):
        raise ValueError(f"time_limit must be a positive number of seconds or None, got {v!r}")
    return v


def choice(name: str, value: Any, choices: Sequence[_S]) -> _S:
    """One of ``choices`` (names such as an objective or a metric).

    >>> choice("metric", "ip", ("cosine", "ip", "l2"))
    'ip'
    >>> choice("metric", "dot", ("cosine", "ip", "l2"))
    Traceback (most recent call last):
    ...
    ValueError: metric='dot': expected one of 'cosine', 'ip', 'l2'
    """
    for c in choices:
        if isinstance(value, str) and value == c:
            return c
    raise ValueError(f"{name}={value!r}: expected one of {', '.join(map(repr, choices))}")


def strategy(value: Any) -> str:
    """A set cover strategy, one of :data:`STRATEGIES`.

    The message starts "Unknown strategy", as the API reference promises.

    >>> strategy("exact")
    'exact'
    >>> strategy("fast")
    Traceback (most recent call last):
    ...
    ValueError: Unknown strategy 'fast'; choose one of greedy, exact, ilp, sa, ga, lp, hybrid
    """
    if not isinstance(value, str) or value not in STRATEGIES:
        raise ValueError(f"Unknown strategy {value!r}; choose one of {', '.join(STRATEGIES)}")
    return value


def cost(label: Hashable, value: Any, what: str = "set") -> float:
    """One cost: a finite real number >= 0 (a ``ValueError`` naming the
    ``what`` -- set, column, feature, chunk -- and its label).

    Zero is a free item, a meaningful cost (a column already at hand): gain
    per cost is then +infinity for an item that buys something, so solvers
    and policies take free items first (see :func:`per_cost`). Negative,
    NaN and infinite costs are refused. ``-0.0`` is returned as ``0.0``.

    >>> cost("a", 2), cost("first_name", 0, "column")
    (2.0, 0.0)
    >>> cost("a", float("nan"), "column")
    Traceback (most recent call last):
    ...
    ValueError: cost of column 'a' is nan: column costs must be finite and >= 0
    >>> cost("a", "2", "column")
    Traceback (most recent call last):
    ...
    ValueError: cost of column 'a' must be a number, got '2'
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"cost of {what} {label!r} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(
            f"cost of {what} {label!r} is {v!r}: {what} costs must be finite and >= 0"
        )
    return v + 0.0  # -0.0 -> 0.0


def per_cost(gain: float, cost: float) -> float:
    """Gain per unit cost, defined for a free item (cost 0).

    ``gain / cost`` when cost > 0; for a free item +infinity when it gains
    something and 0.0 when it gains nothing (a naive division gives ``inf``
    and a ``nan`` that loses every comparison). Rankings by this value put
    free items that help first; the engine breaks ties among them by the
    larger gain.

    >>> per_cost(3.0, 2.0), per_cost(1.0, 0.0), per_cost(0.0, 0.0)
    (1.5, inf, 0.0)
    """
    if cost > 0:
        return gain / cost
    return math.inf if gain > 0 else 0.0


def ratio_better(a: float, ca: float, b: float, cb: float) -> bool:
    """Is gain ``a`` at cost ``ca`` strictly better than ``b`` at ``cb``?

    The engine's rule (``rv__ratio_better``): ratios equal up to 1e-12
    relative tie (the earlier item keeps its place); a free item with a
    positive gain beats every priced one, and between two free items the
    larger gain wins; a free item that gains nothing counts as worth 0.

    >>> ratio_better(2.0, 1.0, 3.0, 2.0), ratio_better(1.0, 0.0, 9.0, 0.5)
    (True, True)
    >>> ratio_better(1.0, 0.0, 2.0, 0.0), ratio_better(0.0, 0.0, 1.0, 5.0)
    (False, False)
    """
    a_inf, b_inf = ca <= 0 and a > 0, cb <= 0 and b > 0
    if a_inf or b_inf:
        if a_inf != b_inf:
            return a_inf
        return a - b > 1e-12 * max(a, b)
    if ca <= 0:
        a, ca = 0.0, 1.0
    if cb <= 0:
        b, cb = 0.0, 1.0
    lhs, rhs = a * cb, b * ca
    return lhs - rhs > 1e-12 * max(abs(lhs), abs(rhs))


def mapping(name: str, value: Any, of: str) -> Mapping[Any, Any] | None:
    """None or a mapping; ``of`` says what it maps (``"column -> cost"``).

    >>> mapping("costs", {"a": 1.0}, "column -> cost")
    {'a': 1.0}
    >>> mapping("costs", [1.0], "column -> cost")
    Traceback (most recent call last):
    ...
    rowvoi.errors.ArgumentTypeError: costs must be a mapping of column -> cost, got list
    """
    if value is not None and not isinstance(value, Mapping):
        raise ArgumentTypeError(f"{name} must be a mapping of {of}, got {type(value).__name__}")
    return value


def text(name: str, value: Any) -> str | bytes:
    """One text: ``str``, or ``bytes`` holding UTF-8.

    >>> text("query", 3)
    Traceback (most recent call last):
    ...
    rowvoi.errors.ArgumentTypeError: query must be str or bytes, not int
    """
    if not isinstance(value, (str, bytes)):
        raise ArgumentTypeError(f"{name} must be str or bytes, not {type(value).__name__}")
    return value


def texts(name: str, values: Any) -> list[str | bytes]:
    """A sequence of texts (never a single ``str``/``bytes``), as a list.

    >>> texts("documents", ("a", b"b"))
    ['a', b'b']
    >>> texts("documents", "abc")
    Traceback (most recent call last):
    ...
    rowvoi.errors.ArgumentTypeError: documents must be a sequence of texts, not a single str
    """
    if isinstance(values, (str, bytes)):
        raise ArgumentTypeError(
            f"{name} must be a sequence of texts, not a single {type(values).__name__}"
        )
    try:
        out = list(values)
    except TypeError:
        raise ArgumentTypeError(
            f"{name} must be a sequence of texts, not {type(values).__name__}"
        ) from None
    for i, v in enumerate(out):
        text(f"{name}[{i}]", v)
    return out


def flag(name: str, value: Any) -> bool:
    """A ``bool`` (numpy's ``bool_`` too); anything else is refused, since
    ``0``/``"no"`` as a switch is usually a mistake.

    >>> flag("lowercase", False)
    False
    >>> flag("lowercase", "no")
    Traceback (most recent call last):
    ...
    rowvoi.errors.ArgumentTypeError: lowercase must be True or False, not 'no'
    """
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_" and type(value).__module__ == "numpy":
        return bool(value)
    raise ArgumentTypeError(f"{name} must be True or False, not {value!r}")
