"""Exceptions raised by rowvoi, and the one mapping from engine status codes.

Every error that comes out of the C engine is an :class:`RvError` carrying
the engine's status ``code`` and ``status_name``; it is also an instance of
the built-in exception a Python caller would expect (``ValueError`` for bad
arguments, ``OSError`` for I/O, ``RuntimeError`` for internal failures), so
``except ValueError`` keeps working.

Status numbers are never written in Python: they come from the engine's
``rv_status`` enum through the compiled :mod:`rowvoi._status`, and an
error raised in Python for an engine-like failure takes its class's status
by default.

>>> from rowvoi.errors import InvalidArgumentError
>>> err = InvalidArgumentError("costs[0] = -1: every cost must be > 0")
>>> isinstance(err, ValueError), err.code, err.status_name
(True, 1, 'RV_E_INVALID_ARG')
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import rowvoi._status as _status

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
    "ArgumentTypeError",
    "raise_for_status",
    "status_error",
]


class RvError(Exception):
    """Base class of the errors raised by the rowvoi engine.

    Attributes
    ----------
    code : int
        The engine's status code (``rv_status`` in ``rowvoi.h``).
    status_name : str
        Its name, e.g. ``"RV_E_SHAPE"``.

    Constructed in Python with the message alone, an error takes its class's
    status (``default_code``, from the engine's enum); the engine's own
    failures pass the status they returned.
    """

    default_code: ClassVar[int] = _status.E_INTERNAL

    def __init__(self, message: str, code: int | None = None, status_name: str | None = None):
        super().__init__(message)
        self.code: int = self.default_code if code is None else code
        self.status_name: str = (
            _status.status_name(self.code) if status_name is None else status_name
        )


class InvalidArgumentError(RvError, ValueError):
    """An argument was invalid (NaN, negative cost, NULL, ...)."""

    default_code = _status.E_INVALID_ARG


class ShapeError(RvError, ValueError):
    """Array sizes disagree."""

    default_code = _status.E_SHAPE


class RangeError(RvError, ValueError):
    """An index or size is outside its allowed range (including size limits)."""

    default_code = _status.E_RANGE


class StateError(RvError, RuntimeError):
    """The object is not in a state that allows the operation."""

    default_code = _status.E_STATE


class IndexFormatError(RvError, ValueError):
    """A stored index is truncated, corrupt, or from another format version."""

    default_code = _status.E_CORRUPT


class RvIOError(RvError, OSError):
    """Reading or writing a file failed."""

    default_code = _status.E_IO


class InfeasibleError(RvError, ValueError):
    """The problem has no solution (for example, elements no set covers)."""

    default_code = _status.E_INFEASIBLE


class SolverTimeoutError(RvError, TimeoutError):
    """A solver reached its time limit without any usable answer."""

    default_code = _status.E_TIMEOUT


class InternalError(RvError, RuntimeError):
    """An engine invariant broke. This is a bug: please report it."""

    default_code = _status.E_INTERNAL


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


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a string where a number belongs, ...).

    Both a ``TypeError`` (the type is wrong) and a ``ValueError`` (an invalid
    argument), so either ``except`` clause catches it. Raised by the shared
    argument checks of :mod:`rowvoi._validate`.

    >>> issubclass(ArgumentTypeError, TypeError), issubclass(ArgumentTypeError, ValueError)
    (True, True)
    """


_STATUS_CLASSES: dict[int, type[RvError]] = {
    _status.E_INVALID_ARG: InvalidArgumentError,
    _status.E_SHAPE: ShapeError,
    _status.E_RANGE: RangeError,
    _status.E_STATE: StateError,
    _status.E_CORRUPT: IndexFormatError,
    _status.E_VERSION: IndexFormatError,
    _status.E_IO: RvIOError,
    _status.E_INFEASIBLE: InfeasibleError,
    _status.E_TIMEOUT: SolverTimeoutError,
    _status.E_INTERNAL: InternalError,
}


def raise_for_status(code: int, status_name: str, message: str) -> None:
    """Raise the exception that corresponds to an engine status code.

    ``RV_E_NOMEM`` becomes the built-in :class:`MemoryError`;
    ``RV_E_INTERRUPTED`` becomes :class:`InterruptedError` (a pending Ctrl-C
    is raised as :class:`KeyboardInterrupt` before this is reached).

    The one mapping from statuses to exceptions: ``check()`` in
    ``cython/_check.pxd`` calls it for every failed engine call.

    >>> from rowvoi import _status
    >>> raise_for_status(_status.E_SHAPE, "RV_E_SHAPE", "capacity 1 < n_sets 2")
    Traceback (most recent call last):
    ...
    rowvoi.errors.ShapeError: RV_E_SHAPE: capacity 1 < n_sets 2
    """
    raise status_error(code, message, status_name)


def status_error(code: int, message: str, status_name: str | None = None) -> Exception:
    """The exception for an engine status, built but not raised.

    Its text is ``"<status name>: <message>"``, as the engine's own failures
    read. Use it where Python finds an engine-like failure itself (a file
    whose manifest is corrupt, a value that overflows float32), naming the
    status through :mod:`rowvoi._status`, never by number.

    >>> from rowvoi import _status
    >>> err = status_error(_status.E_CORRUPT, "x.rvf: bad magic")
    >>> type(err).__name__, str(err), err.code == _status.E_CORRUPT
    ('IndexFormatError', 'RV_E_CORRUPT: x.rvf: bad magic', True)
    """
    name = _status.status_name(code) if status_name is None else status_name
    text = f"{name}: {message}" if message else name
    if code in (_status.E_NOMEM, _status.E_INTERRUPTED):
        err: Exception = MemoryError(text) if code == _status.E_NOMEM else InterruptedError(text)
        err.code = code  # type: ignore[attr-defined]
        err.status_name = name  # type: ignore[attr-defined]
        return err
    cls = _STATUS_CLASSES.get(code, InternalError)
    return cls(text, code, name)


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
