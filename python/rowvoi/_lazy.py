"""Lazy exports for a package: public names whose modules load on first use.

A package whose ``__init__`` would otherwise import heavy dependencies
(pandas, the query executors) for every user lists those names with
:func:`exports` and installs the returned ``__getattr__`` and ``__dir__``
as its own (PEP 562), so that importing the package, or one of its light
subpackages, costs only what is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def exports(
    package: str, table: dict[str, str]
) -> tuple[dict[str, str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(names, __getattr__, __dir__)`` for ``package``.

    ``table`` maps each module (absolute name) to its lazily exported
    names, space-separated; ``names`` maps each name to its module. The
    returned ``__getattr__`` imports a name's module on first access and
    stores the value in the package's namespace (later lookups do not come
    back); the modules of ``table`` are reachable as attributes too
    (``package.module``). Any other name raises ``AttributeError``.
    Thread-safe: the import system holds a lock per module while one loads.
    """
    names = {name: module for module, listed in table.items() for name in listed.split()}
    modules = set(table)
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif f"{package}.{name}" in modules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return names, __getattr__, __dir__
