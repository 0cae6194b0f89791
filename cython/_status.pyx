# cython: language_level=3
# cython: freethreading_compatible=True
"""The engine's status codes as Python integers, read from the ``rv_status``
enum of rowvoi.h (declared in rowvoi.pxd).

Python code never writes a status number: it names the status here
(``_status.E_RANGE``), so the numbers live in the C header alone.  This
module imports nothing from Python's rowvoi, so the ground floor
(``rowvoi.errors``) can build on it.
"""

from rowvoi cimport (
    rv_status, rv_status_name,
    RV_OK, RV_E_INVALID_ARG, RV_E_NOMEM, RV_E_SHAPE, RV_E_RANGE, RV_E_STATE,
    RV_E_CORRUPT, RV_E_VERSION, RV_E_IO, RV_E_INTERRUPTED, RV_E_INFEASIBLE,
    RV_E_TIMEOUT, RV_E_INTERNAL,
)

OK = <int>RV_OK
E_INVALID_ARG = <int>RV_E_INVALID_ARG
E_NOMEM = <int>RV_E_NOMEM
E_SHAPE = <int>RV_E_SHAPE
E_RANGE = <int>RV_E_RANGE
E_STATE = <int>RV_E_STATE
E_CORRUPT = <int>RV_E_CORRUPT
E_VERSION = <int>RV_E_VERSION
E_IO = <int>RV_E_IO
E_INTERRUPTED = <int>RV_E_INTERRUPTED
E_INFEASIBLE = <int>RV_E_INFEASIBLE
E_TIMEOUT = <int>RV_E_TIMEOUT
E_INTERNAL = <int>RV_E_INTERNAL


def status_name(int code):
    """The engine's name of a status code (``rv_status_name``), e.g.
    ``"RV_E_RANGE"``; an unknown code gets the engine's name for unknowns."""
    return rv_status_name(<rv_status>code).decode("ascii")
