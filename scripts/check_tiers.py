"""Check that the quick test tier still covers the whole project.

Usage: python scripts/check_tiers.py COVERAGE_DATA JUNIT_XML
(``bash scripts/test.sh --coverage`` runs the quick tier under coverage and
then this; CI runs it.)

Fails, naming them, when

* a module of ``python/rowvoi`` ran none of its functions' code in the tier
  (for a module without functions: was never imported), or
* a test file of ``tests/python`` or ``tests/acceptance`` ran no test in the
  tier (every one was marked slow or stress, skipped or deselected).

Coverage follows no subprocess: a module that only a subprocess runs
(``python -m rowvoi``) is named in ``SUBPROCESS_ONLY`` with the test that
runs it, and that test must have run and passed in the tier.  A function
whose body is only ``...`` (a Protocol's method) has no code to run.

Prints each module's share of statements the tier ran, lowest first, so a
module that the tier only brushes is seen.
"""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "rowvoi"
TEST_DIRS = (ROOT / "tests" / "python", ROOT / "tests" / "acceptance")
SUBPROCESS_ONLY = {
    "rowvoi/__main__.py": "tests/python/test_cli.py::test_version_and_console_script",
}


def function_lines(source: str) -> set[int]:
    """Line numbers inside the bodies of the functions and methods of a module."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                body = node.body[1:]  # the docstring is no code that runs
            else:
                body = node.body
            if all(
                isinstance(b, ast.Expr)
                and isinstance(b.value, ast.Constant)
                and b.value.value is Ellipsis
                for b in body
            ):
                continue  # a stub (a Protocol's method): nothing to run
            for stmt in body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def measured_files(data: coverage.CoverageData) -> dict[str, str]:
    """The measured files of the package, by path relative to it (``rowvoi/x.py``)."""
    out = {}
    for f in data.measured_files():
        parts = Path(f).parts
        if "rowvoi" in parts:
            i = len(parts) - 1 - parts[::-1].index("rowvoi")
            out["/".join(parts[i:])] = f
    return out


def tests_run(junit: Path) -> tuple[dict[str, int], set[str]]:
    """Test file (relative to the root) -> number of tests that ran and were
    not skipped; and the tests that passed (``file.py::name``)."""
    ran: dict[str, int] = {}
    passed: set[str] = set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("skipped") is not None:
            continue
        parts = case.get("classname", "").split(".")
        i = next((k for k, p in enumerate(parts) if p.startswith("test_")), None)
        if i is None:
            continue
        name = "/".join(parts[: i + 1]) + ".py"
        ran[name] = ran.get(name, 0) + 1
        if case.find("failure") is None and case.find("error") is None:
            passed.add(f"{name}::{case.get('name', '').split('@')[0]}")
    return ran, passed


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cov = coverage.Coverage(data_file=argv[0])
    cov.load()
    data = cov.get_data()
    files = measured_files(data)
    ran, passed = tests_run(Path(argv[1]))
    problems = []
    rows = []
    for src in sorted(PACKAGE.rglob("*.py")):
        rel = "rowvoi/" + src.relative_to(PACKAGE).as_posix()
        source = src.read_text()
        body = function_lines(source)
        measured = files.get(rel)
        executed = set(data.lines(measured) or []) if measured else set()
        if measured:
            _, statements, _, missing, _ = cov.analysis2(measured)
            share = 1 - len(missing) / len(statements) if statements else 1.0
        else:
            statements, share = [], 0.0
        rows.append((share, rel, len(statements)))
        if rel in SUBPROCESS_ONLY:
            if SUBPROCESS_ONLY[rel] not in passed:
                problems.append(f"{rel}: {SUBPROCESS_ONLY[rel]}, which runs it, did not pass")
        elif body and not executed & body:
            problems.append(f"{rel}: none of its functions ran in the quick tier")
        elif not executed:
            problems.append(f"{rel}: never imported in the quick tier")

    n_files = 0
    for d in TEST_DIRS:
        for test_file in sorted(d.glob("test_*.py")):
            n_files += 1
            rel = test_file.relative_to(ROOT).as_posix()
            if not ran.get(rel):
                problems.append(f"{rel}: no test of this file ran in the quick tier")

    rows.sort()
    print("quick-tier statement coverage per module (lowest first):")
    for share, rel, n in rows[:15]:
        print(f"  {share:6.1%}  {rel}  ({n} statements)")
    total = sum(n for _, _, n in rows)
    run = sum(share * n for share, _, n in rows)
    print(
        f"  ... {len(rows)} modules, {run / total:.1%} of {total} statements; "
        f"{sum(ran.values())} tests from {n_files} test files"
    )
    if problems:
        print("the quick tier misses:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    print("tiers: every module runs code and every test file runs a test in the quick tier")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
