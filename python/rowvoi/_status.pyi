# Stub of the compiled module rowvoi._status (cython/_status.pyx): the
# engine's status codes, read from the rv_status enum of rowvoi.h.
from typing import Final

OK: Final[int]
E_INVALID_ARG: Final[int]
E_NOMEM: Final[int]
E_SHAPE: Final[int]
E_RANGE: Final[int]
E_STATE: Final[int]
E_CORRUPT: Final[int]
E_VERSION: Final[int]
E_IO: Final[int]
E_INTERRUPTED: Final[int]
E_INFEASIBLE: Final[int]
E_TIMEOUT: Final[int]
E_INTERNAL: Final[int]

def status_name(code: int) -> str: ...
