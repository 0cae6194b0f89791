"""Replay of the Python fuzz targets' corpora (tests/fuzz/python/): every
seed and every saved reproducer runs through the target's
``test_one_input`` on each CI run, so a finding, once fixed, stays fixed.
The targets fuzz for real under atheris (see tests/fuzz/RESULTS.md); this
replay needs no atheris."""

import importlib.util
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
