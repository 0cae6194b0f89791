"""Retrieval indexes as a new user meets them: bad inputs, huge k, file
modes, crash-safe saves (SIGKILLed children), stale temporaries, HNSW
directories that are not what they should be, pickling and multiprocessing.

Each test here failed on the code before issue 8's fixes (see the commit
message of the change that added this file)."""

import copy
import json
import multiprocessing
import operator
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

from rowvoi._atomic import _host
from rowvoi.errors import IndexFormatError, InvalidArgumentError, RangeError
from rowvoi.index.embed import HashingEmbedder, MiniLMEmbedder
from rowvoi.index.flat import FlatIndex
from rowvoi.index.hnsw import HNSWIndex
from rowvoi.index.lexical import BM25Index

RNG = np.random.default_rng(8)


def _dead_pid():
    """A pid that no process has: a child that ran and was reaped."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# ------------------------------------------------------------------ inputs


@pytest.mark.parametrize("query", [[np.nan, 1.0], [1.0, np.inf], [-np.inf, 0.0], [0.0, 0.0]])
def test_hnsw_rejects_bad_queries_as_flat_does(query):
    flat, hnsw = FlatIndex(2), HNSWIndex(2)
    for ix in (flat, hnsw):
        ix.add([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(InvalidArgumentError) as from_flat:
        flat.search(query, k=2)
    with pytest.raises(InvalidArgumentError) as from_hnsw:
        hnsw.search(query, k=2)
    assert str(from_hnsw.value) == str(from_flat.value)
    # batches name the query at fault
    with pytest.raises(InvalidArgumentError, match=r"queries\[1\]"):
        hnsw.search([[1.0, 0.0], query], k=2, exact_rescore=True)


def test_hnsw_zero_query_is_fine_without_cosine():
    for metric in ("l2", "ip"):
        h = HNSWIndex(2, metric=metric)
        h.add([[1.0, 0.0], [0.0, 2.0]])
        ids, scores = h.search([0.0, 0.0], k=2)
        assert sorted(ids.tolist()) == [0, 1] and np.isfinite(scores).all()


def test_huge_k_is_capped_before_allocating():
    flat = FlatIndex(2, metric="ip")
    flat.add([[1.0, 0.0], [0.0, 1.0]], ids=[5, 6])
    hnsw = HNSWIndex(2, metric="ip")
    hnsw.add([[1.0, 0.0], [0.0, 1.0]], ids=[5, 6])
    tracemalloc.start()
    try:
        for k in (10**8, 10**12):
            ids, scores = flat.search([1.0, 0.5], k=k)
            assert ids.tolist() == [5, 6] and scores.tolist() == [1.0, 0.5]
            ids, _ = flat.search([[1.0, 0.5]] * 3, k=k, filter=[6])
            assert ids.tolist() == [[6]] * 3
            ids, _ = flat.rescore([1.0, 0.5], [6, 5, -1], k=k)
            assert ids.tolist() == [5, 6, -1]
            assert hnsw.search([1.0, 0.5], k=k).ids.tolist() == [5, 6]
            assert hnsw.search([1.0, 0.5], k=k, exact_rescore=True).ids.tolist() == [5, 6]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"searching 2 vectors with a huge k allocated {peak} bytes"


def test_float32_overflow_is_named():
    ix = FlatIndex(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy "overflow in cast" either
        with pytest.raises(RangeError, match=r"vectors\[0\]\[0\] = 1e\+300 overflows float32"):
            ix.add([[1e300, 1.0]])
        with pytest.raises(RangeError, match=r"vectors\[1\]\[1\] = -4e\+38 overflows float32"):
            ix.add(np.array([[1.0, 1.0], [2.0, -4e38]]))
        assert len(ix) == 0
        ix.add([[1.0, 1.0]])
        with pytest.raises(RangeError, match=r"queries\[0\]\[1\] = 1e\+39 overflows float32"):
            ix.search([1.0, 1e39])
        h = HNSWIndex(2)
        with pytest.raises(RangeError, match="overflows float32"):
            h.add([[1e300, 1.0]])
        # the first bad component decides: NaN is still "must be finite"
        with pytest.raises(InvalidArgumentError, match=r"vectors\[0\]\[0\] = nan"):
            ix.add(np.array([[np.nan, 1e300]]))
        # large float64 values that fit float32 go in
        ix.add(np.array([[1e18, -3.0]]))
        assert len(ix) == 2


def test_unencodable_text_is_named_by_both_embedders():
    texts = ["fine", "abc \ud800"]
    with pytest.raises(ValueError) as hashing:
        HashingEmbedder(dim=16).embed(texts)
    with pytest.raises(ValueError) as minilm:
        MiniLMEmbedder(quantize=False, threads=1).embed(texts)
    assert str(minilm.value) == str(hashing.value)
    assert "texts[1]" in str(minilm.value) and "position 4" in str(minilm.value)


# ------------------------------------------------------------------- files


def _all_three(d: Path):
    bm = BM25Index()
    bm.add(["alpha beta", "beta gamma"])
    bm.save(d / "lexical.rvx")
    fl = FlatIndex(4)
    fl.add(RNG.normal(size=(10, 4)))
    fl.save(d / "dense.rvf")
    hn = HNSWIndex(4)
    hn.add(RNG.normal(size=(10, 4)))
    hn.save(d / "hnsw")
    return [d / "lexical.rvx", d / "dense.rvf", *sorted((d / "hnsw").iterdir())]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_files_honour_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        files = _all_three(tmp_path)
    finally:
        os.umask(old)
    assert len(files) == 5
    for f in files:
        assert (f.stat().st_mode & 0o777) == 0o666 & ~mask, f.name
    assert (tmp_path / "hnsw").stat().st_mode & 0o777 == 0o777 & ~mask


def test_hnsw_load_of_wrong_things_is_index_format_error(tmp_path):
    plain = tmp_path / "plain"
    plain.write_bytes(b"not a directory")
    with pytest.raises(IndexFormatError, match="is a file"):
        HNSWIndex.load(plain)
    with pytest.raises(IndexFormatError, match="does not exist"):
        HNSWIndex.load(tmp_path / "missing")
    h = HNSWIndex(3)
    h.add(RNG.normal(size=(20, 3)))
    with pytest.raises(NotADirectoryError, match="is a file"):
        h.save(plain)
    for part in ("exact_file", "hnsw_file"):
        d = tmp_path / part
        h.save(d)
        meta = json.loads((d / "hnsw.json").read_text())
        (d / meta[part]).unlink()
        with pytest.raises(IndexFormatError, match="missing"):
            HNSWIndex.load(d)
    # a manifest naming a file outside the directory is refused
    d = tmp_path / "escape"
    h.save(d)
    meta = json.loads((d / "hnsw.json").read_text())
    meta["exact_file"] = "../plain"
    (d / "hnsw.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="not a part file name"):
        HNSWIndex.load(d)


def test_hnsw_directories_of_the_first_layout_still_load(tmp_path):
    h = HNSWIndex(4, metric="l2", M=8, seed=2)
    h.add(RNG.normal(size=(50, 4)))
    d = tmp_path / "v1"
    d.mkdir()
    # the layout rowvoi wrote before generations: fixed names, version 1
    h._g.save_index(str(d / "hnsw.bin"))
    h.exact.save(d / "exact.rvf")
    import hashlib

    meta = {
        "format": "rowvoi-hnsw",
        "format_version": 1,
        "dim": 4,
        "metric": "l2",
        "M": 8,
        "ef_construction": 200,
        "ef": 64,
        "seed": 2,
        "max_elements": h._g.get_max_elements(),
        "element_count": 50,
        "size": 50,
        "hnsw_sha256": hashlib.sha256((d / "hnsw.bin").read_bytes()).hexdigest(),
    }
    (d / "hnsw.json").write_text(json.dumps(meta))
    q = RNG.normal(size=(5, 4))
    back = HNSWIndex.load(d)
    np.testing.assert_array_equal(back.search(q, k=5).ids, h.search(q, k=5).ids)
    back.save(d)  # converts: the old fixed-name files go
    names = sorted(os.listdir(d))
    assert "hnsw.bin" not in names and "exact.rvf" not in names and len(names) == 3
    np.testing.assert_array_equal(HNSWIndex.load(d).search(q, k=5).ids, h.search(q, k=5).ids)
    meta["format_version"] = 99
    (d / "hnsw.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="version 99"):
        HNSWIndex.load(d)


def test_saves_remove_stale_temporaries_only(tmp_path):
    dead, host = _dead_pid(), _host()
    bm = BM25Index()
    bm.add(["some words"])
    fl = FlatIndex(2)
    fl.add([[1.0, 2.0]])
    for name, save in (("lexical.rvx", bm.save), ("dense.rvf", fl.save)):
        target = tmp_path / name
        stale = tmp_path / f"{name}.tmp-{host}-{dead}-0a1b2c3d"
        live = tmp_path / f"{name}.tmp-{host}-{os.getpid()}-0a1b2c3d"
        foreign = tmp_path / f"{name}.tmp-otherhost-{dead}-0a1b2c3d"
        unrelated = tmp_path / f"{name}.tmp-mine"
        for f in (stale, live, foreign, unrelated):
            f.write_bytes(b"partial")
        save(target)
        assert not stale.exists()
        assert live.exists() and foreign.exists() and unrelated.exists()
        old = time.time() - 2 * 24 * 3600
        os.utime(foreign, (old, old))
        save(target)
        assert not foreign.exists() and live.exists()
    # HNSW: parts of a generation whose process is gone
    h = HNSWIndex(2)
    h.add([[1.0, 0.0], [0.0, 1.0]])
    d = tmp_path / "hnsw"
    h.save(d)
    ghost = [
        d / f"hnsw.7.{host}-{dead}-0a1b2c3d.bin",
        d / f"exact.7.{host}-{dead}-0a1b2c3d.rvf",
        d / f"exact.7.{host}-{dead}-0a1b2c3d.rvf.tmp-{host}-{dead}-99aa88bb",
        d / f"hnsw.json.tmp-{host}-{dead}-0a1b2c3d",
    ]
    mine = d / f"hnsw.9.{host}-{os.getpid()}-0a1b2c3d.bin"  # a save in progress here
    for f in (*ghost, mine):
        f.write_bytes(b"partial")
    h.save(d)
    assert not any(f.exists() for f in ghost)
    assert mine.exists()
    assert len(os.listdir(d)) == 4  # manifest, two parts, and the live one


_CHILD = textwrap.dedent("""
    import os, signal, sys, time
    import rowvoi.index.hnsw as dense
    from rowvoi.index.hnsw import HNSWIndex
    mode, arg, target = sys.argv[1], sys.argv[2], sys.argv[3]
    sources = [HNSWIndex.load(p) for p in sys.argv[4:]]
    if mode == "stage":
        def hook(stage):
            if stage == arg:
                os.kill(os.getpid(), signal.SIGKILL)
        dense._save_hook = hook
        sources[0].save(target)
        sys.exit(3)  # the hook did not fire
    print("ready", flush=True)
    i = 0
    while True:  # save back and forth until killed
        sources[i % len(sources)].save(target)
        i += 1
""")


def _wait_ready(p):
    """Read the child's stdout up to its "ready" line (an editable install
    may print its rebuild log first)."""
    for line in p.stdout:
        if line.strip() == "ready":
            return
    raise AssertionError(f"the child exited ({p.wait()}) before it was ready")


def _child(tmp_path, *args):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    return subprocess.Popen(
        [sys.executable, str(script), *map(str, args)], stdout=subprocess.PIPE, text=True
    )


@pytest.mark.stress
def test_killed_hnsw_saves_leave_a_loadable_index(tmp_path):
    rng = np.random.default_rng(3)
    a = HNSWIndex(48, M=12, ef_construction=40, seed=1)
    a.add(rng.normal(size=(2000, 48)))
    b = HNSWIndex(48, M=12, ef_construction=40, seed=1)
    b.add(rng.normal(size=(2000, 48)), ids=np.arange(10_000, 12_000))
    a.save(tmp_path / "a")
    b.save(tmp_path / "b")
    q = rng.normal(size=(20, 48))
    want = {"a": a.search(q, k=10), "b": b.search(q, k=10)}
    ix = tmp_path / "ix"
    a.save(ix)

    def which():
        got = HNSWIndex.load(ix).search(q, k=10)
        for name, res in want.items():
            if np.array_equal(got.ids, res.ids) and np.array_equal(got.scores, res.scores):
                return name
        raise AssertionError("the loaded index is neither the old nor the new one")

    # killed between the steps of a save: before the commit the old index
    # loads, after it the new one
    # ("exact" is a stage too, but nothing happens between it and "manifest")
    for stage, expect in (("graph", "a"), ("manifest", "a"), ("committed", "b")):
        p = _child(tmp_path, "stage", stage, ix, tmp_path / "b")
        p.communicate(timeout=120)
        assert p.returncode == -signal.SIGKILL, stage
        assert which() == expect, stage
        if expect == "b":
            a.save(ix)
        assert len(os.listdir(ix)) > 3 or stage == "committed"  # it left files behind
    # killed at arbitrary moments of back-to-back saves
    for delay in (0.0, 0.04, 0.15):
        p = _child(tmp_path, "loop", "-", ix, tmp_path / "a", tmp_path / "b")
        _wait_ready(p)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        which()
    # the next save removes what the killed ones left
    a.save(ix)
    assert len(os.listdir(ix)) == 3
    assert which() == "a"


_FILE_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.lexical import BM25Index
    kind, target = sys.argv[1], sys.argv[2]
    if kind == "flat":
        ix = FlatIndex(64)
        ix.add(np.random.default_rng(0).normal(size=(40000, 64)))
    else:
        ix = BM25Index()
        ix.add([f"word{i % 997} term{i % 13} doc{i}" for i in range(30000)])
    print("ready", flush=True)
    while True:
        ix.save(target)
""")


@pytest.mark.stress
@pytest.mark.parametrize("kind", ["flat", "bm25"])
def test_killed_single_file_saves_leave_the_old_file(tmp_path, kind):
    target = tmp_path / "index.bin"
    if kind == "flat":
        old = FlatIndex(64)
        old.add(np.ones((3, 64)))
    else:
        old = BM25Index()
        old.add(["old", "index"])
    old.save(target)
    script = tmp_path / "child.py"
    script.write_text(_FILE_CHILD)
    loader = FlatIndex.load if kind == "flat" else BM25Index.load
    sizes = set()
    for delay in (0.0, 0.1):
        p = subprocess.Popen(
            [sys.executable, str(script), kind, str(target)], stdout=subprocess.PIPE, text=True
        )
        _wait_ready(p)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        sizes.add(len(loader(target)))  # whole, never a mix
    assert sizes <= {len(old), 40000 if kind == "flat" else 30000}
    old.save(target)  # cleans what the killed children left
    assert sorted(os.listdir(tmp_path)) == ["child.py", "index.bin"]


# ----------------------------------------------------------------- copies


def _indexes():
    bm = BM25Index(variant="bm25+")
    bm.add(["red apples", "green apples and pears", "red cars", "blue sky"])
    bm.delete([2])
    fl = FlatIndex(8, metric="l2", storage="float16", n_threads=2)
    fl.add(RNG.normal(size=(50, 8)), ids=np.arange(100, 150))
    fl.remove([101])
    hn = HNSWIndex(8, M=8, ef=20, seed=5)
    hn.add(RNG.normal(size=(200, 8)))
    hn.remove([3])
    return bm, fl, hn


def _query(ix):
    return "red apples" if isinstance(ix, BM25Index) else np.ones(8)


@pytest.mark.parametrize(
    "copier", [lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy, copy.copy]
)
def test_pickle_and_copies_search_identically_and_are_independent(copier):
    for ix in _indexes():
        twin = copier(ix)
        assert type(twin) is type(ix) and twin is not ix
        a, b = ix.search(_query(ix), k=10), twin.search(_query(ix), k=10)
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_array_equal(a.scores, b.scores)
        assert len(twin) == len(ix)
        if isinstance(ix, BM25Index):
            assert twin.params == ix.params
            twin.add(["red red red"])
        else:
            assert twin.n_threads == ix.n_threads
            twin.add(np.full((1, 8), 0.5), ids=[999])
            assert 999 in twin and 999 not in ix
        assert len(twin) == len(ix) + 1


def test_pickled_indexes_work_in_a_spawned_process():
    ctx = multiprocessing.get_context("spawn")
    indexes = _indexes()
    with ctx.Pool(1) as pool:
        for ix in indexes:
            got = pool.apply(operator.methodcaller("search", _query(ix), 5), (ix,))
            want = ix.search(_query(ix), k=5)
            np.testing.assert_array_equal(got.ids, want.ids)
            np.testing.assert_array_equal(got.scores, want.scores)


def test_atomic_write_failure_keeps_the_old_file(tmp_path):
    from rowvoi._atomic import atomic_path, atomic_write, atomic_write_bytes, clean_stale

    target = tmp_path / "meta.json"
    atomic_write_bytes(target, b"old")

    def broken(fh):
        fh.write(b"half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        atomic_write(target, broken)
    with pytest.raises(KeyError), atomic_path(target) as tmp:
        Path(tmp).write_bytes(b"half")
        raise KeyError("stop")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["meta.json"]
    stale = tmp_path / f"meta.json.tmp-{_host()}-{_dead_pid()}-0a1b2c3d"
    stale.write_bytes(b"x")
    assert clean_stale(target) == [stale.name]
