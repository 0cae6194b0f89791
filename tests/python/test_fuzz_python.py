"""Replay of the Python fuzz targets' corpora (tests/fuzz/python/): every
seed and every saved reproducer runs through the target's
``test_one_input`` on each CI run, so a finding, once fixed, stays fixed.
The targets fuzz for real with hypothesis or the crash-surviving mutation
runner ``mutate_fuzz.py`` (see tests/fuzz/RESULTS.md); this replay needs
neither."""

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
TARGETS = {
    "fuzz_query": "py_query",
    "fuzz_corpus_load": "py_corpus_load",
    "fuzz_hnsw_load": "py_hnsw_load",
}


def _load(name):
    spec = importlib.util.spec_from_file_location(f"rowvoi_{name}", FUZZ / "python" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_corpus_replays_clean(target):
    mod = _load(target)
    files = sorted(p for p in (FUZZ / "corpus" / TARGETS[target]).iterdir() if p.is_file())
    assert len(files) >= 5, f"{target}: seed corpus missing"
    for path in files:
        mod.test_one_input(path.read_bytes())  # raises on a finding


def test_query_target_flags_a_disagreement():
    """The differential check can fail: a doctored executor result trips it."""
    mod = _load("fuzz_query")
    real = mod.run_query

    def skewed(source, text, schema, **kw):
        res = real(source, text, schema, **kw)
        if kw.get("table"):
            res.records[:] = res.records[:-1]
        return res

    mod.run_query = skewed
    seed = (FUZZ / "corpus" / "py_query" / "seed0").read_bytes()
    with pytest.raises(AssertionError, match="pandas and sqlite differ"):
        mod.test_one_input(seed)


def test_mutation_runner_survives_crashes_and_keeps_reproducers(tmp_path):
    """mutate_fuzz.py: an input that kills the interpreter (as a segfault in
    hnswlib would) is saved as a reproducer and the run goes on; an input
    that raises is saved too; the exit status says so."""
    (tmp_path / "corpus" / "py_toy").mkdir(parents=True)
    (tmp_path / "corpus" / "py_toy" / "seed").write_bytes(b"\x00\x01\x02")
    (tmp_path / "fuzz_toy.py").write_text(
        textwrap.dedent("""
            import os, signal

            def generate(rng):
                return bytes([rng.choice((0, 0xAA, 0xBB))])

            def test_one_input(data):
                if data[:1] == b"\\xaa":
                    os.kill(os.getpid(), signal.SIGSEGV)
                if data[:1] == b"\\xbb":
                    raise KeyError("a finding")
            """)
    )
    p = subprocess.run(
        [sys.executable, str(FUZZ / "python" / "mutate_fuzz.py"), "toy", "4", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ROWVOI_MUTATE_HOME": str(tmp_path)},
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert "CRASH (exit -11)" in p.stdout and "FINDING at input" in p.stdout
    saved = {f.read_bytes()[:1] for f in (tmp_path / "corpus" / "py_toy").glob("crash-*")}
    assert saved == {b"\xaa", b"\xbb"}
    summary = p.stdout.strip().splitlines()[-1]
    # (a count, not a substring: "20 crash(es)" holds "0 crash(es)")
    assert summary.startswith("toy: ") and int(re.search(r"(\d+) crash\(es\)", summary)[1]) > 0
