"""The README tells the truth: its commands run and print what it says they
print, its C snippet works after its own install, and what it says about the
retrieval kernels and the C header holds."""

import inspect
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ROWVOI = Path(sys.executable).with_name("rowvoi")  # the installed console script


def section(title: str) -> str:
    """The README text under a heading, up to the next heading of any level."""
    start = README.index(title)
    match = re.compile(r"^#{1,6} ", re.M).search(README, start + len(title))
    return README[start : match.start() if match else len(README)]


def flat(text: str) -> str:
    return " ".join(text.split())


def main_job() -> list[list[str]]:
    """The `rowvoi` commands of the README's main command (after install)."""
    block = re.search(r"```sh\n(.*?)\n```", section("## The two commands"), re.S).group(1)
    parts = [shlex.split(p) for p in block.split("&&")]
    return [p for p in parts if p[0] == ".venv/bin/rowvoi"]


def rowvoi(args: list[str]) -> str:
    proc = subprocess.run(
        [str(ROWVOI), *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def test_main_command_key_matches_the_readme():
    key_cmd, path_cmd = main_job()
    assert key_cmd[1] == "key" and path_cmd[1] == "path"
    text = flat(section("## The two commands"))
    columns, cost = re.search(r"The key is `([^`]+)` at cost (\d+)", text).groups()
    out = rowvoi(key_cmd[1:]).splitlines()
    assert out[0] == f"key: {columns}"
    assert out[1] == f"cost: {cost}"
    assert out[2] == "strategy: exact (proven optimal)"
    assert "strategy: exact (proven optimal)" in text
    # what the README says the default (greedy) does on the same table
    greedy_cost, greedy_says = re.search(
        r"finds a key of cost (\d+) and says `([^`]+)`", text
    ).groups()
    greedy = [a for a in key_cmd[1:] if a not in ("--strategy", "exact")]
    out = rowvoi(greedy).splitlines()
    assert out[1] == f"cost: {greedy_cost}" and out[2] == f"strategy: {greedy_says}"
    assert int(greedy_cost) > int(cost)


def test_main_command_path_matches_the_readme():
    _, path_cmd = main_job()
    text = flat(section("## The two commands"))
    asks, pairs, cost = re.search(
        r"The path asks for (.*?) and tells all (\d+) pairs of rows apart at cost (\d+)", text
    ).groups()
    out = rowvoi(path_cmd[1:]).splitlines()
    assert out[0].endswith(f"{pairs} pairs to tell apart")
    steps = [line.split() for line in out[2:]]
    assert [s[1] for s in steps] == re.findall(r"`(\w+)`", asks)
    assert steps[-1][3] == pairs and steps[-1][4] == "100.0%" and steps[-1][6] == cost
    budget, last, left = re.search(
        r"`--budget (\d+)` stops it after `(\w+)` and says that (\d+) pair", text
    ).groups()
    out = rowvoi([*path_cmd[1:], "--budget", budget]).splitlines()
    assert out[-2].split()[1] == last
    assert out[-1].startswith(f"budget {budget} reached")
    assert out[-1].endswith(f"{left} pair(s) stay unresolved")


def test_c_snippet_runs_with_the_venv_python_the_readme_installs(tmp_path):
    c = section("## C and C++")
    uses = re.findall(r"(\S*)python -m rowvoi\.config", c)
    assert uses and all(u.endswith("$(.venv/bin/") for u in uses), uses
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    line = next(ln for ln in c.splitlines() if ln.startswith("cc examples/c/key.c"))
    line = line.replace(".venv/bin/python", shlex.quote(sys.executable))
    line = line.replace("examples/c/key.c", shlex.quote(str(ROOT / "examples/c/key.c")))
    proc = subprocess.run(
        ["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "key of cost 2.0 (optimal): city plan" in proc.stdout


def test_python_m_rowvoi_config_prints_no_warning():
    # runpy warned when the package had imported rowvoi.config before running it
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rowvoi.config",
            "--cflags",
            "--libs",
            "--pkg-config-dir",
            "--cmake-dir",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT / "tests",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.startswith("-I") and proc.stdout.rstrip().endswith("rowvoi")


def test_retrieval_section_says_what_it_should_and_it_holds(tmp_path, monkeypatch):
    text = flat(section("### Retrieval kernels"))
    for topic in ("**Ids.**", "**Save and load.**", "**Threads.**", "**MiniLM.**"):
        assert topic in text
    from rowvoi.index.embed import cache_dir
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.lexical import BM25Index

    # every index: the caller's ids, else numbering one past the largest
    assert "files entries under int64 ids you choose" in text
    assert "one past the largest id ever added (0, 1, 2, … for a" in text
    index = BM25Index()
    assert index.add(["red apples", "green pears"]).tolist() == [0, 1]
    assert index.add(["red cars"]).tolist() == [2]
    assert index.search("red", k=2).ids.tolist() == [0, 2]
    keyed = BM25Index()
    assert keyed.add(["red apples", "red cars"], ids=[70, 9]).tolist() == [70, 9]
    assert keyed.search("red", k=2).ids.tolist() == [9, 70]
    keyed.delete([70])
    assert keyed.add(["blue apples"], ids=[70]).tolist() == [70]  # a deleted id comes back
    flat_index = FlatIndex(2, "l2")
    assert flat_index.add(np.eye(2), ids=[10, 42]).tolist() == [10, 42]
    assert flat_index.add([[3.0, 4.0]]).tolist() == [43]
    # save/load as named
    for cls in (BM25Index, FlatIndex, HNSWIndex):
        assert callable(cls.save) and callable(cls.load)
    index.save(tmp_path / "x.rvx")
    assert BM25Index.load(tmp_path / "x.rvx").search("red", k=2).ids.tolist() == [0, 2]
    # where the derived MiniLM model is cached
    assert "`$XDG_CACHE_HOME/rowvoi/models`" in text
    monkeypatch.delenv("ROWVOI_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "rowvoi"
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / "cache"
    assert "`$ROWVOI_HOME/cache/models`" in text


def test_text_header_states_the_real_token_length_limits():
    from rowvoi.index.text import MAX_TOKEN_LEN, Analyzer

    header = (ROOT / "include" / "rowvoi" / "text.h").read_text()
    macro = int(re.search(r"#define RV_ANALYZER_MAX_TOKEN_LEN (\d+)", header).group(1))
    assert macro == MAX_TOKEN_LEN
    mentions = [int(n) for n in re.findall(r"RV_ANALYZER_MAX_TOKEN_LEN \((\d+)\)", header)]
    assert mentions and all(n == macro for n in mentions)
    default = inspect.signature(Analyzer).parameters["max_token_len"].default
    assert f"default {default}," in header
    assert f"lengths 1..{default}," in header
    assert Analyzer(max_token_len=macro).tokenize("a" * macro) == ["a" * macro]
    with pytest.raises(ValueError):
        Analyzer(max_token_len=macro + 1)


def test_readme_exit_codes_match_the_cli(capsys):
    from rowvoi.cli.main import main

    text = flat(section("## Command line"))
    assert "2 a malformed request" in text and "1 a well-formed request that fails" in text
    csv = str(ROOT / "examples" / "data" / "customers.csv")
    assert main(["path", csv, "--budget", "-1"]) == 2  # "a negative --budget"
    assert main(["key", csv, "--epsilon", "5"]) == 2  # "--epsilon 5"
    assert main(["key", csv, "--columns", "nope"]) == 1  # "a column ... the data do not have"
    errors = [ln for ln in capsys.readouterr().err.splitlines() if "error:" in ln]
    assert [ln.split(":")[0] for ln in errors] == ["rowvoi path", "rowvoi key", "rowvoi key"]
