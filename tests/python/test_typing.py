"""The installed package carries its types: ``py.typed`` and a stub for
every compiled module (scripts/lint.sh checks the stubs' contents against
the modules with mypy.stubtest)."""

import importlib.machinery
import importlib.util
import pkgutil
from pathlib import Path

import rowvoi

PKG = Path(rowvoi.__file__).parent


def _compiled_modules() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(rowvoi.__path__):
        spec = importlib.util.find_spec(f"rowvoi.{info.name}")
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            names.append(info.name)
    return sorted(set(names))


def test_py_typed_marker_is_installed():
    assert (PKG / "py.typed").is_file()


def test_every_compiled_module_has_a_stub():
    compiled = _compiled_modules()
    # the eight engine bindings at least (cython/*.pyx)
    assert {
        "_belief",
        "_bm25",
        "_flat",
        "_graph",
        "_hashing",
        "_idset",
        "_setcover",
        "_text",
    } <= set(compiled)
    missing = [name for name in compiled if not (PKG / f"{name}.pyi").is_file()]
    assert missing == [], f"compiled modules without a .pyi stub: {missing}"
