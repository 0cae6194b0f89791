"""Where the C header and library of the installed engine live.

A C program builds against the wheel with one line::

    cc prog.c $(python -m rowvoi.config --cflags --libs) -o prog

``--pkg-config-dir`` and ``--cmake-dir`` print the directories to add to
``PKG_CONFIG_PATH`` and ``CMAKE_PREFIX_PATH`` (``find_package(rowvoi)``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rowvoi._paths import get_include, get_lib_dir

__all__ = ["get_include", "get_lib_dir", "main"]


def main(argv: list[str] | None = None) -> int:
    """Print compiler and linker flags; the ``python -m rowvoi.config`` command.

    Returns the exit code: 0, or 2 (after printing the help) when no flag
    is asked for.

    >>> main(["--cflags"])  # doctest: +ELLIPSIS
    -I.../include
    0
    """
    parser = argparse.ArgumentParser(
        prog="python -m rowvoi.config",
        description="Print the flags a C or C++ program needs to use librowvoi.",
    )
    parser.add_argument("--cflags", action="store_true", help="print the include flag")
    parser.add_argument("--libs", action="store_true", help="print the linker flags")
    parser.add_argument(
        "--pkg-config-dir", action="store_true", help="print the directory holding rowvoi.pc"
    )
    parser.add_argument(
        "--cmake-dir", action="store_true", help="print the directory holding rowvoiConfig.cmake"
    )
    args = parser.parse_args(argv)
    out = []
    if args.cflags:
        out.append(f"-I{get_include()}")
    if args.libs:
        lib = get_lib_dir()
        out.append(f"-L{lib} -Wl,-rpath,{lib} -lrowvoi")
    if args.pkg_config_dir:
        out.append(str(Path(get_lib_dir()) / "pkgconfig"))
    if args.cmake_dir:
        out.append(str(Path(get_lib_dir()) / "cmake" / "rowvoi"))
    if not out:
        parser.print_help()
        return 2
    print(" ".join(out))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
