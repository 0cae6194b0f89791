"""Run the README's examples as written: its sections, their ``sh`` blocks
(one ``rowvoi`` command per line, through the installed console script) and
their ``python`` blocks (in a fresh interpreter), with ``ROWVOI_HOME`` in a
test's temporary folder."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ROWVOI = Path(sys.executable).with_name("rowvoi")


def section(title: str) -> str:
    """The README from ``title`` (a heading, with its ``#`` marks) to the next
    heading of the same level or higher."""
    start = README.index(title)
    level = len(title) - len(title.lstrip("#"))
    nxt = re.compile(rf"^#{{1,{level}}} ", re.M).search(README, start + len(title))
    return README[start : nxt.start() if nxt else len(README)]


def block(text: str, lang: str = "sh") -> str:
    """The first fenced ``lang`` block of ``text``."""
    found = re.search(rf"```{lang}\n(.*?)\n```", text, re.S)
    assert found, f"no {lang} block"
    return found.group(1)


def env_for(home: Path) -> dict[str, str]:
    """The environment of a child: its own rowvoi home, and an editable
    install's rebuild notes kept off its stdout."""
    return dict(os.environ, ROWVOI_HOME=str(home), SKBUILD_EDITABLE_VERBOSE="0")


def run_commands(text: str, home: Path, argv_map: Callable[[str], str] | None = None) -> list[str]:
    """Run each line of the first ``sh`` block of ``text`` (``# comments``
    dropped) and return their stdouts; every command must exit 0."""
    outputs = []
    for line in block(text).splitlines():
        argv = shlex.split(line, comments=True)
        assert argv[0] == "rowvoi", line
        args = [argv_map(a) for a in argv[1:]] if argv_map else argv[1:]
        proc = subprocess.run(
            [str(ROWVOI), *args],
            cwd=ROOT,
            env=env_for(home),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, (line, proc.stderr)
        outputs.append(proc.stdout)
    return outputs


def run_python(text: str, home: Path) -> str:
    """Run the first ``python`` block of ``text``; return its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", block(text, "python")],
        cwd=ROOT,
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def assert_quoted(text: str, lines: list[str]) -> None:
    """Each of ``lines`` (a block's output) is quoted in ``text``'s prose
    as `` `line` ``, whatever the line wrapping."""
    prose = " ".join(text.split())
    for line in dict.fromkeys(lines):
        assert f"`{line}`" in prose, line
