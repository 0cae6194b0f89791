"""Exceptions raised by rowvoi, and the one mapping from engine status codes.

Every error that comes out of the C engine is an :class:`RvError` carrying
the engine's status ``code`` and ``status_name``; it is also an instance of
the built-in exception a Python caller would expect (``ValueError`` for bad
arguments, ``OSError`` for I/O, ``RuntimeError`` for internal failures), so
``except ValueError`` keeps working.

>>> from rowvoi.errors import InvalidArgumentError
>>> err = InvalidArgumentError("costs[0] = -1: every cost must be > 0", 1, "RV_E_INVALID_ARG")
>>> isinstance(err, ValueError), err.code, err.status_name
(True, 1, 'RV_E_INVALID_ARG')
"""

from __future__ import annotations

import warnings

__all__ = [
    "RvError",
    "InvalidArgumentError",
    "ShapeError",
    "RangeError",
    "StateError",
    "IndexFormatError",
    "RvIOError",
    "InfeasibleError",
    "SolverTimeoutError",
    "InternalError",
    "SolverUnavailableError",
    "NotProvenOptimalWarning",
    "QueryError",
    "raise_for_status",
]


class RvError(Exception):
    """Base class of the errors raised by the rowvoi engine.

    Attributes
    ----------
    code : int
        The engine's status code (``rv_status`` in ``rowvoi.h``).
    status_name : str
        Its name, e.g. ``"RV_E_SHAPE"``.
    """

    def __init__(self, message: str, code: int = 0, status_name: str = ""):
        super().__init__(message)
        self.code = code
        self.status_name = status_name


class InvalidArgumentError(RvError, ValueError):
    """An argument was invalid (NaN, negative cost, NULL, ...)."""


class ShapeError(RvError, ValueError):
    """Array sizes disagree."""


class RangeError(RvError, ValueError):
    """An index or size is outside its allowed range (including size limits)."""


class StateError(RvError, RuntimeError):
    """The object is not in a state that allows the operation."""


class IndexFormatError(RvError, ValueError):
    """A stored index is truncated, corrupt, or from another format version."""


class RvIOError(RvError, OSError):
    """Reading or writing a file failed."""


class InfeasibleError(RvError, ValueError):
    """The problem has no solution (for example, elements no set covers)."""


class SolverTimeoutError(RvError, TimeoutError):
    """A solver reached its time limit without any usable answer."""


class InternalError(RvError, RuntimeError):
    """An engine invariant broke. This is a bug: please report it."""


class SolverUnavailableError(RuntimeError):
    """No linear programming solver is usable.

    Raised rather than quietly substituting an approximate strategy: greedy
    is an ln(m) approximation and ILP is exact, so returning one where the
    caller asked for the other is a silent correctness change.
    """


class QueryError(ValueError):
    """A structured query (or its schema) is invalid: every problem at once.

    Raised by :mod:`rowvoi.query` before anything runs. ``problems`` holds
    one message per problem, each naming the field at fault (``filters.age.$gt``)
    and what is allowed there; ``str(err)`` lists them all.

    >>> err = QueryError(["limit: must be a positive integer, got 'ten'"])
    >>> isinstance(err, ValueError), err.problems
    (True, ("limit: must be a positive integer, got 'ten'",))
    """

    def __init__(self, problems: str | list[str] | tuple[str, ...]):
        items = (problems,) if isinstance(problems, str) else tuple(problems)
        self.problems: tuple[str, ...] = items
        if len(items) == 1:
            text = items[0]
        else:
            text = f"{len(items)} problems:\n" + "\n".join(f"  - {p}" for p in items)
        super().__init__(text)


class NotProvenOptimalWarning(UserWarning):
    """An exact solver stopped at its time limit; the answer may not be optimal."""


_STATUS_CLASSES = {
    1: InvalidArgumentError,
    3: ShapeError,
    4: RangeError,
    5: StateError,
    6: IndexFormatError,
    7: IndexFormatError,
    8: RvIOError,
    10: InfeasibleError,
    11: SolverTimeoutError,
    99: InternalError,
}


def raise_for_status(code: int, status_name: str, message: str) -> None:
    """Raise the exception that corresponds to an engine status code.

    ``RV_E_NOMEM`` becomes the built-in :class:`MemoryError`;
    ``RV_E_INTERRUPTED`` becomes :class:`InterruptedError` (a pending Ctrl-C
    is raised as :class:`KeyboardInterrupt` before this is reached).

    >>> raise_for_status(3, "RV_E_SHAPE", "capacity 1 < n_sets 2")
    Traceback (most recent call last):
    ...
    rowvoi.errors.ShapeError: RV_E_SHAPE: capacity 1 < n_sets 2
    """
    text = f"{status_name}: {message}" if message else status_name
    if code in (2, 9):
        err: Exception = MemoryError(text) if code == 2 else InterruptedError(text)
        err.code = code  # type: ignore[attr-defined]
        err.status_name = status_name  # type: ignore[attr-defined]
        raise err
    cls = _STATUS_CLASSES.get(code, InternalError)
    raise cls(text, code, status_name)


def warn_not_optimal(message: str, stacklevel: int | None = None) -> None:
    """Emit a :class:`NotProvenOptimalWarning` attributed to the caller's code.

    The warning points at the first stack frame outside the rowvoi package,
    so it shows the user's own call whatever the depth of the call chain.
    """
    if stacklevel is None:
        import sys
        import types

        frame: types.FrameType | None = sys._getframe(1)
        stacklevel = 2
        while frame is not None and frame.f_globals.get("__name__", "").startswith("rowvoi"):
            frame = frame.f_back
            stacklevel += 1
    warnings.warn(message, NotProvenOptimalWarning, stacklevel=stacklevel)
