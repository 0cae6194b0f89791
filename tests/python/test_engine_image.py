"""One engine image per process: every extension links the shared librowvoi.

DESIGN §2: the Cython extensions carry no copy of the engine; they resolve
every ``rv_`` symbol from the one ``librowvoi`` installed in ``rowvoi/lib``,
so the thread-local last-error message (and all engine state) exists once.
"""

import importlib
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from rowvoi import _bm25, _idset, _setcover
from rowvoi.errors import InvalidArgumentError, RvError

CYTHON_DIR = Path(__file__).resolve().parents[2] / "cython"
MODULES = sorted(p.stem for p in CYTHON_DIR.glob("*.pyx"))


def _nm(path, *flags):
    nm = shutil.which("nm")
    assert nm, "binutils' nm is needed to inspect the extensions"
    out = subprocess.run(
        [nm, "-D", *flags, str(path)], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_every_extension_is_listed():
    assert len(MODULES) >= 8, MODULES
    for name in MODULES:
        importlib.import_module(f"rowvoi.{name}")


@pytest.mark.parametrize("name", MODULES)
def test_extension_defines_no_engine_symbol(name):
    path = Path(importlib.import_module(f"rowvoi.{name}").__file__)
    defined = _nm(path, "--defined-only")
    assert not [s for s in defined if s.startswith("rv_")], path
    # ... and takes every engine symbol it uses from librowvoi (a module
    # that declares no engine function -- no ``from rowvoi cimport`` -- uses
    # none).
    undefined = _nm(path, "--undefined-only")
    uses_engine = "from rowvoi cimport" in (CYTHON_DIR / f"{name}.pyx").read_text()
    assert any(s.startswith("rv_") for s in undefined) == uses_engine, path


def test_one_librowvoi_mapped_from_the_package():
    for name in MODULES:
        importlib.import_module(f"rowvoi.{name}")
    maps = Path("/proc/self/maps").read_text().splitlines()
    libs = {line.split()[-1] for line in maps if line.endswith("/librowvoi.so")}
    assert len(libs) == 1, libs
    lib = Path(libs.pop())
    assert lib.parent.name == "lib" and lib.parent.parent.name == "rowvoi", lib
    # it is the library next to the extensions (rpath $ORIGIN/lib)
    ext_dir = Path(_setcover.__file__).resolve().parent
    assert lib.resolve() == (ext_dir / "lib" / "librowvoi.so").resolve()
    exported = _nm(lib, "--defined-only")
    assert "rv_errmsg" in exported and "rv_bm25_load" in exported


def test_error_raised_in_one_module_is_read_through_another():
    with pytest.raises(InvalidArgumentError, match="offsets must not be NULL"):
        _setcover._raise_status(1)
    assert "offsets must not be NULL" in _idset._last_error()
    with pytest.raises(RvError) as info:
        _bm25.BM25Core.load("/nonexistent/rowvoi-engine-image.rvbm")
    msg = _idset._last_error()
    assert "/nonexistent/rowvoi-engine-image.rvbm" in msg
    assert msg in str(info.value)


def test_last_error_is_per_thread_in_the_one_image():
    with pytest.raises(InvalidArgumentError):
        _setcover._raise_status(1)
    seen = []

    def other():
        seen.append(_idset._last_error())
        try:
            _setcover._raise_status(4)
        except RvError:
            seen.append(_idset._last_error())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert "offsets must not be NULL" not in seen[0]
    assert "element 5 is out of range" in seen[1]
    # this thread's message is untouched by the other thread's failure
    assert "offsets must not be NULL" in _idset._last_error()
