"""bench/ as a suite: ``python -m bench list`` works from the repository root
(without numpy or rowvoi importable), lists every suite module, and every
suite module imports and exposes the runner's interface; the run context
writes the provenance a results file needs and never a machine path."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE_FILES = sorted(
    p.stem for p in (ROOT / "bench" / "suites").glob("*.py") if p.stem != "__init__"
)


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The ``bench`` package of this checkout (imported from the repository root)."""
    monkeypatch.syspath_prepend(str(ROOT))
    return importlib.import_module("bench")


def _list(*, block: tuple[str, ...] = ()) -> str:
    """``python -m bench list`` run from the repository root, with the
    modules ``block`` made unimportable in that interpreter."""
    code = (
        "import runpy, sys\n"
        f"for m in {block!r}:\n"
        "    sys.modules[m] = None  # import m now raises ImportError\n"
        "sys.argv = ['bench', 'list']\n"
        "runpy.run_module('bench', run_name='__main__', alter_sys=True)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_there_are_suites() -> None:
    # the glob above must see the package: an empty list would make the tests below vacuous
    assert {"keys", "corpus", "dense", "bm25", "graph"} <= set(SUITE_FILES)


def test_list_names_every_suite_module_from_the_repository_root() -> None:
    out = _list()
    listed = {line.split()[0] for line in out.splitlines()[1:] if line[:1].strip()}
    assert listed == set(SUITE_FILES)
    for line in out.splitlines()[1:]:
        if line[:1].strip():  # a suite's first line: name, group, full, quick, measures
            group = line.split()[1]
            assert group in ("suite", "study", "c"), line
    assert out.count("against: ") == len(SUITE_FILES)


def test_list_needs_neither_numpy_nor_rowvoi() -> None:
    out = _list(block=("numpy", "pandas", "rowvoi"))
    assert set(SUITE_FILES) <= {line.split()[0] for line in out.splitlines() if line[:1].strip()}


def test_a_blocked_module_really_is_unimportable() -> None:
    # the check above would prove nothing if blocking did not work
    p = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['numpy'] = None; import numpy"],
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0 and "import of numpy halted" in p.stderr


def test_every_suite_is_in_the_table_with_durations_and_peers(bench: ModuleType) -> None:
    suites = importlib.import_module("bench.suites")
    assert [s.name for s in suites.SUITES] == list(suites.BY_NAME)
    assert set(suites.BY_NAME) == set(SUITE_FILES)
    for s in suites.SUITES:
        assert s.measures and s.peers and s.full and s.quick, s
        assert s.group in ("suite", "study", "c"), s
        assert all(c in {p.stem for p in (ROOT / "bench" / "c").glob("*.c")} for c in s.c_benches)
    with pytest.raises(SystemExit, match="known suites"):
        suites.get("no-such-suite")


@pytest.mark.parametrize("name", SUITE_FILES)
def test_suite_module_exposes_the_runner_interface(
    bench: ModuleType, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mod = importlib.import_module(f"bench.suites.{name}")
    assert mod.__doc__ and mod.__doc__.strip(), f"{name}: no docstring"
    params = list(inspect.signature(mod.main).parameters)
    assert params[:2] == ["argv", "run"], f"{name}.main{inspect.signature(mod.main)}"
    # the runner's call with --help: the suite's options, and nothing written
    run = importlib.import_module("bench._common.results").Run(name, results_dir=tmp_path)
    try:
        code = mod.main(["--help"], run)
    except SystemExit as exc:  # argparse's --help
        code = exc.code
    assert code in (0, None)
    out = capsys.readouterr().out
    assert f"python -m bench run {name}" in out
    assert not list(tmp_path.iterdir())


def test_no_sys_path_tricks_in_bench() -> None:
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in (ROOT / "bench").rglob("*.py")
        if not any(part.startswith(".") for part in p.relative_to(ROOT / "bench").parts)
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"sys\.path\.(insert|append)|PYTHONPATH=", line)
    ]
    assert not hits, hits


def test_run_context_provenance(bench: ModuleType, tmp_path: Path) -> None:
    results = importlib.import_module("bench._common.results")
    machine = importlib.import_module("bench._common.machine")
    run = results.Run(
        "x",
        ("--out", str(ROOT / "bench" / "results" / "a.md"), "--py=/opt/v/bin/python"),
        quick=True,
        results_dir=results.QUICK,
    )
    assert run.command == "python -m bench run x --quick --out bench/results/a.md --py=<path>"
    quick = ROOT / "bench" / "results" / "quick"
    tag = machine.host_tag()
    assert tag == ("_avx512" if "avx512f" in machine.vector_extensions() else "")
    assert run.host == tag and run.out == quick / f"x{tag}.md"
    assert run.path("x.json") == quick / f"x{tag}.json"
    # each host keeps its own files: an AVX-512 host's names carry its tag
    for host, md, js, bare in (
        ("", "x.md", "a.b.json", "out"),
        ("_avx512", "x_avx512.md", "a.b_avx512.json", "out_avx512"),
    ):
        other = results.Run("x", quick=True, results_dir=results.QUICK, host=host)
        assert other.out == quick / md
        assert other.path("a.b.json") == quick / js and other.path("out") == quick / bare
    head = run.header(results.versions("numpy", peers={"ir": "0.1.61", "none": None}))
    assert [h.split(":")[0] for h in head[:4]] == [
        "- command",
        "- machine",
        "- versions",
        "- date",
    ]
    assert machine.vector_extensions() in head[1] and machine.cpu_model() in head[1]
    assert re.search(r"rowvoi \S+ \(commit \S+\), Python 3\.\d+", head[2]), head[2]
    assert "numpy " in head[2] and "peers: ir 0.1.61" in head[2] and "none" not in head[2]
    assert re.fullmatch(r"- date: \d{4}-\d\d-\d\d \d\d:\d\d UTC", head[3])
    assert not any(s in "\n".join(head) for s in ("/work/", "/home/", "/tmp/", "/opt/"))
    assert run.command in run.provenance({"rowvoi": "1"})


def test_bm25_sections_name_their_host(bench: ModuleType) -> None:
    bm25 = importlib.import_module("bench.suites.bm25")
    line = "Produced by `x` on AMD EPYC (x86_64), 2 cores, vector extensions: {}; load 1"
    for flags, host in (("avx2, avx512f, avx512_vnni", ", AVX-512 host"), ("avx2", ", AVX2 host")):
        data = {"corpus": "synth", "k": 100, "provenance": line.format(flags)}
        assert bm25.section_title(data, "bm25_x.json") == (
            "Synthetic corpus, {n} documents, Zipf queries, top 100" + host
        )
    assert bm25.section_title({"corpus": "cranfield"}, "bm25_c.json") == "Cranfield speed, top 10"


def test_blocks_are_replaced_in_place_and_added_in_order(bench: ModuleType) -> None:
    results = importlib.import_module("bench._common.results")
    text = "# T\n\nnotes\n\n<!-- s:b:begin -->\nold b\n<!-- s:b:end -->\n\ntail notes\n"
    text = results.replace_block(text, "s", "b", "new b")
    assert "old b" not in text and "<!-- s:b:begin -->\nnew b\n<!-- s:b:end -->" in text
    text = results.replace_block(text, "s", "a", "A", order=("a", "b", "c"))
    text = results.replace_block(text, "s", "c", "C", order=("a", "b", "c"))
    assert list(results.blocks(text, "s")) == ["a", "b", "c"]
    assert text.index("notes") < text.index("<!-- s:a:begin") < text.index("tail notes")
    assert results.blocks(text, "s")["b"] == "new b"
