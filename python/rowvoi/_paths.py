"""Where the installed engine's C header and library live.

This is the import-time half of :mod:`rowvoi.config`: the package imports
these functions from here, so that ``python -m rowvoi.config`` finds
``rowvoi.config`` not yet imported when runpy executes it (importing it
from the package first made runpy warn on every run).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["get_include", "get_lib_dir"]


def _pkg_dir() -> Path:
    # files() is a real directory for regular installs; for editable installs
    # the compiled parts live where the extension module was installed.
    import rowvoi._setcover as _setcover

    return Path(_setcover.__file__).resolve().parent


def get_include() -> str:
    """Directory holding ``rowvoi.h`` (pass it to the compiler with -I).

    >>> import os
    >>> os.path.exists(os.path.join(get_include(), "rowvoi.h"))
    True
    """
    return str(_pkg_dir() / "include")


def get_lib_dir() -> str:
    """Directory holding ``librowvoi.so`` (pass it with -L and an rpath).

    >>> import os
    >>> os.path.exists(os.path.join(get_lib_dir(), "librowvoi.so"))
    True
    """
    return str(_pkg_dir() / "lib")
