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
    """The compiled modules of the package and its subpackages, as dotted
    names below ``rowvoi`` (``_setcover``, ``index._flat``), found from the
    files on the packages' paths (no subpackage is imported)."""
    names = []

    def walk(paths: list[str], prefix: str) -> None:
        for info in pkgutil.iter_modules(paths):
            if info.ispkg:
                walk([str(Path(p) / info.name) for p in paths], f"{prefix}{info.name}.")
                continue
            where = Path(info.module_finder.path)
            if any(
                (where / f"{info.name}{suffix}").is_file()
                for suffix in importlib.machinery.EXTENSION_SUFFIXES
            ):
                names.append(f"{prefix}{info.name}")

    walk(list(rowvoi.__path__), "")
    return sorted(set(names))


def test_py_typed_marker_is_installed():
    assert (PKG / "py.typed").is_file()


def test_every_compiled_module_has_a_stub():
    compiled = _compiled_modules()
    # the engine bindings at least (cython/[PACKAGE/]NAME.pyx): the decision
    # tower's at the root, the retrieval kernels' in rowvoi.index
    assert {
        "_belief",
        "_setcover",
        "_status",
        "index._bm25",
        "index._flat",
        "index._graph",
        "index._hashing",
        "index._hot",
        "index._idset",
        "index._text",
    } <= set(compiled)
    missing = [name for name in compiled if not (PKG / f"{name.replace('.', '/')}.pyi").is_file()]
    assert missing == [], f"compiled modules without a .pyi stub: {missing}"
