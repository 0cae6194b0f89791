"""Engine status codes map to the documented exception classes."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rowvoi import _setcover, _status
from rowvoi.errors import (
    ArgumentTypeError,
    IndexFormatError,
    InfeasibleError,
    InternalError,
    InvalidArgumentError,
    RangeError,
    RvError,
    RvIOError,
    ShapeError,
    SolverTimeoutError,
    StateError,
    raise_for_status,
    status_error,
)

CASES = [
    (1, "RV_E_INVALID_ARG", InvalidArgumentError, ValueError),
    (2, "RV_E_NOMEM", MemoryError, MemoryError),
    (3, "RV_E_SHAPE", ShapeError, ValueError),
    (4, "RV_E_RANGE", RangeError, ValueError),
    (5, "RV_E_STATE", StateError, RuntimeError),
    (6, "RV_E_CORRUPT", IndexFormatError, ValueError),
    (7, "RV_E_VERSION", IndexFormatError, ValueError),
    (8, "RV_E_IO", RvIOError, OSError),
    (9, "RV_E_INTERRUPTED", InterruptedError, InterruptedError),
    (10, "RV_E_INFEASIBLE", InfeasibleError, ValueError),
    (11, "RV_E_TIMEOUT", SolverTimeoutError, TimeoutError),
    (99, "RV_E_INTERNAL", InternalError, RuntimeError),
]


@pytest.mark.parametrize("code,name,cls,base", CASES)
def test_mapping(code, name, cls, base):
    with pytest.raises(cls) as info:
        raise_for_status(code, name, "detail")
    err = info.value
    assert isinstance(err, base)
    assert err.code == code and err.status_name == name
    assert "detail" in str(err) and name in str(err)
    if cls not in (MemoryError, InterruptedError):
        assert isinstance(err, RvError)


def test_engine_errors_come_through_the_boundary():
    with pytest.raises(InvalidArgumentError, match="offsets must not be NULL") as info:
        _setcover._raise_status(1)
    assert info.value.code == 1
    with pytest.raises(RangeError, match="element 5 is out of range"):
        _setcover._raise_status(4)
    with pytest.raises(InvalidArgumentError, match="costs\\[1\\]"):
        _setcover.CoverProblem.from_csr(2, [0, 1, 2], [0, 1], [1.0, -1.0])
    with pytest.raises(InvalidArgumentError, match="negative"):
        _setcover.CoverProblem.from_codes(np.array([[0, -1]]))
    with pytest.raises(RangeError, match="above the limit"):
        _setcover.CoverProblem.from_codes(np.zeros((2, 3000), dtype=np.int32), max_bytes=1000)
    p = _setcover.CoverProblem.from_csr(3, [0, 1, 2], [0, 1])
    with pytest.raises(InfeasibleError, match="only 2 of 3"):
        p.solve("exact", n_required=3)


def test_out_of_memory_becomes_memoryerror():
    # A real allocation failure (the failure-injection hook exists only in
    # C test builds): under an address-space limit, a cover over the largest
    # universe needs 16 GiB of bitsets, so the engine's calloc fails.
    script = textwrap.dedent("""
        import resource
        import numpy as np
        from rowvoi import _setcover
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[0])
        cap = pages * resource.getpagesize() + (512 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        offsets = np.arange(65, dtype=np.uint64)
        try:
            _setcover.CoverProblem.from_csr(2**31 - 1, offsets, np.zeros(64, np.uint32))
        except MemoryError as e:
            assert "RV_E_NOMEM" in str(e), str(e)
        else:
            raise SystemExit("no MemoryError")
        # and the engine works again afterwards
        assert _setcover.CoverProblem.from_csr(2, [0, 1, 2], [0, 1]).n_coverable == 2
        print("ok")
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "ok"  # (editable installs log a rebuild first)


@pytest.mark.parametrize("code,name,cls,base", CASES)
def test_status_numbers_come_from_the_engine_enum(code, name, cls, base):
    # rowvoi._status reads the rv_status enum; its names and numbers are the
    # header's, and the engine names each one the same way
    assert getattr(_status, name.removeprefix("RV_")) == code
    assert _status.status_name(code) == name
    err = status_error(code, "detail")
    assert type(err) is cls and err.code == code and err.status_name == name
    assert str(err) == f"{name}: detail"


@pytest.mark.parametrize(
    "cls,name",
    [
        (InvalidArgumentError, "RV_E_INVALID_ARG"),
        (ShapeError, "RV_E_SHAPE"),
        (RangeError, "RV_E_RANGE"),
        (StateError, "RV_E_STATE"),
        (IndexFormatError, "RV_E_CORRUPT"),
        (RvIOError, "RV_E_IO"),
        (InfeasibleError, "RV_E_INFEASIBLE"),
        (SolverTimeoutError, "RV_E_TIMEOUT"),
        (InternalError, "RV_E_INTERNAL"),
    ],
)
def test_errors_raised_in_python_carry_their_class_status(cls, name):
    err = cls("found in Python")
    assert err.status_name == name and _status.status_name(err.code) == name
    assert str(err) == "found in Python"
    version = IndexFormatError("old file", _status.E_VERSION)
    assert version.status_name == "RV_E_VERSION"


def test_argument_type_error_is_both_type_and_value_error():
    from rowvoi._validate import integer, real

    for call in (lambda: integer("k", "3", 1), lambda: real("alpha", None)):
        with pytest.raises(TypeError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, ArgumentTypeError)
