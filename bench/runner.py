"""``python -m bench``: list the suites, run one, build the C benches.

    python -m bench list
    python -m bench run NAME [--quick] [suite options ...]
    python -m bench build-c

``run`` passes every argument after ``NAME`` to the suite (``python -m
bench run NAME --help`` shows its options) and writes
``bench/results/NAME.md``; ``--quick`` (anywhere after ``NAME``) puts the
suite's small settings before the given options and writes under
``bench/results/quick/`` instead (ignored by git), so a quick look never
replaces a committed full run.  Run from the repository root, with rowvoi
installed in the interpreter (``list`` needs only the standard library).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ._common.results import QUICK, RESULTS, ROOT, Run
from .suites import SUITES, get, load

#: Where ``build-c`` configures the C benches (CMake option RV_BUILD_BENCH).
C_BUILD = ROOT / "build" / "bench"


def list_suites() -> str:
    """The table ``python -m bench list`` prints: per suite its name, group,
    rough durations (full, ``--quick``), what it measures and its peers."""
    head = ("suite", "group", "full", "--quick")
    rows = [(s.name, s.group, s.full, s.quick) for s in SUITES]
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    pad = " " * (sum(w) + 8)

    def line(cells: Sequence[str], text: str) -> str:
        return "  ".join(f"{c:{w[i]}}" for i, c in enumerate(cells)) + "  " + text

    out = [line(head, "measures / against")]
    for s, row in zip(SUITES, rows):
        out += [line(row, s.measures), f"{pad}against: {s.peers}"]
    return "\n".join(x.rstrip() for x in out) + "\n"


def build_c(targets: Sequence[str] = (), build_dir: Path = C_BUILD) -> dict[str, Path]:
    """Configure and build the C benches (``bench/c/*.c``, one CMake
    target each) with ``-DRV_BUILD_BENCH=ON`` in ``build_dir``; returns
    target -> executable.  ``targets`` empty: every bench."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise SystemExit("cmake not found: the C benches are built with CMake (>= 3.21)")
    # (re)configure every time: cheap once cached, and an older cache gets the option
    subprocess.run(
        [
            cmake,
            "-S",
            str(ROOT),
            "-B",
            str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DRV_BUILD_BENCH=ON",
            "-DRV_BUILD_TESTS=OFF",
            "-DRV_BUILD_PYTHON=OFF",
        ],
        check=True,
        stdout=sys.stderr,
    )
    names = list(targets) or sorted(p.stem for p in (ROOT / "bench" / "c").glob("*.c"))
    jobs = str(min(2, os.cpu_count() or 1))
    subprocess.run(
        [cmake, "--build", str(build_dir), "-j", jobs, "--target", *names],
        check=True,
        stdout=sys.stderr,
    )
    out = {n: build_dir / "bench" / n for n in names}
    for p in out.values():
        if not p.exists():
            raise SystemExit(f"the build did not make {p}")
    return out


def run_suite(name: str, args: Sequence[str]) -> int:
    """``run NAME [--quick] ARGS``: the suite's ``main`` with its arguments."""
    suite = get(name)
    quick = "--quick" in args
    shown = tuple(a for a in args if a != "--quick")
    argv = [*suite.quick_args, *shown] if quick else list(shown)
    built = {}
    if suite.c_benches and not any(a in ("-h", "--help") for a in argv):
        built = build_c(suite.c_benches)
    run = Run(suite.name, shown, quick, QUICK if quick else RESULTS, c_benches=built)
    if not any(a in ("-h", "--help") for a in argv):
        print(f"{run.command}: writing {run.out.relative_to(ROOT)}", file=sys.stderr)
    mod = load(suite.name)
    return int(mod.main(argv, run) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line of ``python -m bench``."""
    ap = argparse.ArgumentParser(
        prog="python -m bench",
        description="rowvoi's benchmark suites (bench/README.md).",
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="every suite: what it measures, peers, how long it takes")
    r = sub.add_parser(
        "run",
        help="run one suite: python -m bench run NAME [--quick] [its options]",
        add_help=False,
    )
    r.add_argument("name")
    r.add_argument("args", nargs=argparse.REMAINDER)
    b = sub.add_parser("build-c", help="build the C benches (CMake, -DRV_BUILD_BENCH=ON)")
    b.add_argument("targets", nargs="*", help="bench/c programs (default: all)")
    b.add_argument("--build-dir", type=Path, default=C_BUILD)
    ns = ap.parse_args(argv)
    if ns.cmd == "list":
        sys.stdout.write(list_suites())
        return 0
    if ns.cmd == "build-c":
        for n, p in build_c(ns.targets, ns.build_dir).items():
            print(f"{n}: {p}")
        return 0
    return run_suite(ns.name, ns.args)
