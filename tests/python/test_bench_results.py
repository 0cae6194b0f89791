"""bench/: results files carry no machine paths, and the shared timing module
(bench/_common/timing.py) computes what the results files say it does."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
#: Machine paths that must never appear in a committed results file: the
#: commands and versions say how a figure was made, not where.
FORBIDDEN = ("/work/", "/home/", "/tmp/")


def _text_files() -> list[Path]:
    out = []
    for p in sorted(RESULTS.rglob("*")):
        if not p.is_file():
            continue
        head = p.read_bytes()[:8192]
        if b"\0" in head:  # images and other binary files
            continue
        out.append(p)
    return out


def test_results_folder_has_text_files() -> None:
    assert any(p.suffix in (".md", ".json") for p in _text_files())


@pytest.mark.parametrize("path", _text_files(), ids=lambda p: p.name)
def test_no_machine_paths_in_results(path: Path) -> None:
    text = path.read_text(errors="replace")
    hits = [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {text[m.start() : m.start() + 60]!r}"
        for m in re.finditer("|".join(map(re.escape, FORBIDDEN)), text)
    ]
    assert not hits, (
        f"{path.relative_to(ROOT)} names machine paths ({', '.join(FORBIDDEN)}); write "
        f"versions and the command instead (bench/_common/results.py command()): {hits[:5]}"
    )


def _timing() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "_bench_timing", ROOT / "bench" / "_common" / "timing.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look the module up by name
    spec.loader.exec_module(mod)
    return mod


def test_spread_is_median_and_range() -> None:
    t = _timing()
    s = t.spread([3.0, 1.0, 2.0, 10.0])
    assert (s.median, s.lo, s.hi, s.n) == (2.5, 1.0, 10.0, 4)
    assert s.fmt(".1f", "x") == "2.5 (1.0-10.0)x"
    assert t.spread([4.0]).fmt(".1f") == "4.0"
    r = t.spread([0.5, 1.0, 2.0]).rate(10)  # seconds to per-second: range turns over
    assert (r.median, r.lo, r.hi) == (10.0, 5.0, 20.0)
    with pytest.raises(ValueError, match="at least one"):
        t.spread([])


def test_ratio_pairs_rounds() -> None:
    t = _timing()
    r = t.ratio([2.0, 4.0, 9.0], [1.0, 1.0, 3.0])
    assert (r.median, r.lo, r.hi) == (3.0, 2.0, 4.0)
    with pytest.raises(ValueError, match="paired"):
        t.ratio([1.0], [1.0, 2.0])


def test_interleaved_rotates_and_keeps_every_round() -> None:
    t = _timing()
    calls: list[str] = []
    cases = {name: (lambda name=name: calls.append(name) or name) for name in "abc"}
    got = t.interleaved(cases, 3, warmup=1, collect=False, only_first_round=["c"])
    assert calls[:3] == ["a", "b", "c"]  # warm-up
    # rounds start at a, b, c in turn; c (slow) runs in round 0 only
    assert calls[3:] == ["a", "b", "c", "b", "a", "a", "b"]
    assert [len(got[n].wall) for n in "abc"] == [3, 3, 1]
    assert got["b"].result == "b"
    assert all(w >= 0 for n in "abc" for w in got[n].wall)


def test_interleaved_uses_self_timed_seconds() -> None:
    t = _timing()
    got = t.interleaved({"child": lambda: t.SelfTimed(1.5, 0.5, "r")}, 2, warmup=0)
    assert got["child"].wall == [1.5, 1.5] and got["child"].cpu == [0.5, 0.5]
    assert got["child"].result == "r"
    with pytest.raises(ValueError, match="rounds"):
        t.interleaved({}, 0)


def test_command_drops_machine_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))  # the bench package, from the repository root
    t = importlib.import_module("bench._common.results")
    cmd = t.command(
        "bench/x.py",
        ["synth", "--json", str(ROOT / "bench" / "results" / "a.json"), "--py=/opt/v/bin/python"],
    )
    assert cmd == "python bench/x.py synth --json bench/results/a.json --py=<path>"
