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

from rowvoi import _setcover
from rowvoi.errors import InvalidArgumentError, RvError
from rowvoi.index import _bm25, _idset

CYTHON_DIR = Path(__file__).resolve().parents[2] / "cython"
# cython/[PACKAGE/]NAME.pyx is the module rowvoi.[PACKAGE.]NAME
PYX = {
    ".".join(p.relative_to(CYTHON_DIR).with_suffix("").parts): p for p in CYTHON_DIR.rglob("*.pyx")
}
MODULES = sorted(PYX)


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
    uses_engine = "from rowvoi cimport" in PYX[name].read_text()
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


def test_every_extension_finds_librowvoi_by_its_own_rpath():
    # a module in a subpackage (rowvoi.index._flat) reaches rowvoi/lib by
    # $ORIGIN/../lib, a root one by $ORIGIN/lib: each on its own, not only
    # because another module loaded the library first
    readelf = shutil.which("readelf")
    assert readelf, "binutils' readelf is needed to inspect the extensions"
    lib = (Path(_setcover.__file__).resolve().parent / "lib" / "librowvoi.so").resolve()
    for name in MODULES:
        path = Path(importlib.import_module(f"rowvoi.{name}").__file__).resolve()
        dyn = subprocess.run(
            [readelf, "-d", str(path)], capture_output=True, text=True, check=True
        ).stdout
        paths = [
            ln.split("[", 1)[1].rstrip("]")
            for ln in dyn.splitlines()
            if "(RUNPATH)" in ln or "(RPATH)" in ln
        ]
        assert len(paths) == 1, (name, paths)
        found = [
            Path(d.replace("$ORIGIN", str(path.parent))) / "librowvoi.so"
            for d in paths[0].split(":")
        ]
        assert any(f.exists() and f.resolve() == lib for f in found), (name, paths)


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
