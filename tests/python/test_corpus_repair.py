"""A way back from every failure (issue 28, item 6).

* A damaged or missing index file (BM25 ``.rvx``, flat ``.rvf``, HNSW
  directory) is reported by every search with the file and the repair
  command -- never as a corpus that "kept changing" -- and by ``info``,
  ``build`` and ``maintain``; ``repair`` / ``rowvoi build NAME --repair``
  rebuilds it from ``docs.sqlite`` and the embedding cache with zero embedder
  calls, after which searches answer exactly as before the damage.
* A first build that fails leaves no directory and no registration (so
  ``maintain --all`` stays green); a failed rebuild leaves the old corpus and
  its registration as they were.
* An interrupted build (an embedder raising KeyboardInterrupt, and a real
  SIGINT to a ``rowvoi build`` process) keeps the old corpus and the vectors
  it embedded: the next build takes them from the cache.
"""

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rowvoi.corpus.retrieval.corpus as kept
from rowvoi.cli.main import main
from rowvoi.corpus import (
    CorpusStore,
    EmbedderUnavailable,
    build,
    from_mapping,
    from_records,
    open_corpus,
    registry,
    search,
)
from rowvoi.corpus.embedders import make_embedder
from rowvoi.corpus.maintenance.repair import check, repair
from rowvoi.corpus.storage.vectors import CACHE_FILE, cache_info
from rowvoi.errors import IndexFormatError

WORDS = (
    "wing lift drag shock flow pipe heat nozzle flutter wedge boundary layer supersonic "
    "subsonic turbulent laminar pressure cone plate jet wake vortex stall"
).split()
QUERIES = ["wing lift", "turbulent boundary layer", "shock wedge", "heat pipe", "vortex stall"]


def make_docs(n, seed=0, prefix="d"):
    rng = random.Random(seed)
    return {
        f"{prefix}{i:04d}": f"{prefix}{i} " + " ".join(rng.choice(WORDS) for _ in range(12))
        for i in range(n)
    }


class Counting:
    """A callable embedder with an id (the hashing embedder inside) that
    counts its calls, and raises KeyboardInterrupt after ``stop_after``."""

    embedder_id = "counting-hash32-v1"

    def __init__(self, stop_after=None):
        self.inner = make_embedder("hashing:32")
        self.calls = 0
        self.texts = 0
        self.stop_after = stop_after

    def __call__(self, texts):
        if self.stop_after is not None and self.calls >= self.stop_after:
            raise KeyboardInterrupt
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


def signature(corpus, modes=("lexical", "dense", "hybrid")):
    return [
        [(h.artifact_id, round(h.score, 5)) for h in search(corpus, q, mode=m, k=8)]
        for q in QUERIES
        for m in modes
    ]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    monkeypatch.setenv("ROWVOI_HOME", str(h))
    return h


def flip(path, at=0.5):
    """Invert 8 bytes in the middle of a file (in place: same inode)."""
    size = path.stat().st_size
    pos = max(0, min(size - 8, int(size * at)))
    with open(path, "r+b") as fh:
        fh.seek(pos)
        data = fh.read(8)
        fh.seek(pos)
        fh.write(bytes(b ^ 0xFF for b in data))


def graph_file(d):
    return next(p for p in d.iterdir() if p.name.startswith("hnsw.") and p.suffix == ".bin")


# ----------------------------------------------------------- damaged files

CASES = [
    ("lexical", "corrupt"),
    ("lexical", "missing"),
    ("dense", "corrupt"),
    ("dense", "missing"),
    ("dense", "truncated"),
    ("hnsw", "corrupt"),
    ("hnsw", "missing"),
    ("hnsw", "part-missing"),
]


@pytest.mark.parametrize("kind,how", CASES)
def test_damaged_file_is_named_then_repaired_without_embedding(home, kind, how):
    emb = Counting()
    docs = make_docs(90)
    c = build(from_mapping(docs, name="c", embedder=emb), batch_size=16, hnsw=kind == "hnsw")
    assert emb.calls == 6 and emb.texts == 90
    # edits after the base: a delta of new and removed records
    docs.update(make_docs(12, seed=9, prefix="x"))
    for k in list(docs)[:5]:
        del docs[k]
    build(from_mapping(docs, name="c", embedder=emb), batch_size=16)
    expected = signature(open_corpus("c", embedder=emb))
    d = c.store.path
    target = {"lexical": "lexical.1.rvx", "dense": "dense.1.rvf", "hnsw": "hnsw.1"}[kind]
    path = d / target
    if how == "missing":
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    elif how == "truncated":
        with open(path, "r+b") as fh:
            fh.truncate(path.stat().st_size // 2)
    elif how == "part-missing":
        graph_file(path).unlink()
    else:
        flip(graph_file(path) if kind == "hnsw" else path)

    fresh = open_corpus("c", embedder=emb)  # nothing loaded yet
    mode = "lexical" if kind == "lexical" else "dense"
    with pytest.raises(IndexFormatError) as info:
        search(fresh, "wing lift", mode=mode)
    msg = str(info.value)
    assert str(path) in msg, msg
    assert "rowvoi build c --repair" in msg and "kept changing" not in msg, msg
    found = check("c")
    assert [x.file for x in found] == [target], found
    # the incremental build refuses to keep a damaged base, naming the repair
    with pytest.raises(IndexFormatError, match="rowvoi build c --repair"):
        build(from_mapping(docs, name="c", embedder=emb), batch_size=16)

    emb.calls = emb.texts = 0
    r = repair("c")
    assert r.repaired and r.generation == 3 and [x.file for x in r.damaged] == [target]
    assert r.texts_embedded == 0 and emb.calls == 0, r
    assert r.vectors_from_cache == r.n_records == len(docs)
    assert check("c") == []
    assert signature(open_corpus("c", embedder=emb)) == expected
    assert signature(fresh) == expected  # an open corpus loads the repaired generation
    files = sorted(p.name for p in d.iterdir())
    assert target not in files and not [f for f in files if ".tmp-" in f], files
    # nothing damaged: nothing written
    emb.calls = 0
    again = repair("c")
    assert not again.repaired and again.generation == 3 and again.damaged == []
    assert emb.calls == 0


def test_missing_dense_file_through_the_cli_says_which_file_and_how(home, tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    for i, text in enumerate(make_docs(30).values()):
        (notes / f"n{i}.md").write_text(text)
    code, _, _ = run(capsys, "build", "n", "--files", str(notes), "--embedder", "hashing:32")
    assert code == 0
    code, before, _ = run(capsys, "search", "n", "wing lift", "--json")
    dense = home / "corpora" / "n" / "dense.1.rvf"
    dense.unlink()
    # a new rowvoi process: no corpus kept open by the search before (in
    # one process, the kept corpus would serve its loaded generation)
    with kept._kept_lock:
        kept._kept.clear()

    code, out, err = run(capsys, "search", "n", "wing lift")
    assert code == 1 and str(dense) in err and "rowvoi build n --repair" in err, err
    assert "kept changing" not in err
    code, out, err = run(capsys, "info", "n")
    assert code == 0 and "DAMAGED" in out and "dense.1.rvf: missing" in out, out
    assert "rowvoi build n --repair" in out
    code, out, _ = run(capsys, "info", "n", "--check", "--json")
    info = json.loads(out)
    assert code == 1 and info["repair"] == "rowvoi build n --repair"
    assert info["damage"] == [{"file": "dense.1.rvf", "problem": "missing", "repairable": True}]
    code, _, err = run(capsys, "build", "n")  # no longer "up to date"
    assert code == 1 and "dense.1.rvf: missing" in err and "rowvoi build n --repair" in err
    code, _, err = run(capsys, "build", "n", "--repair", "--files", str(notes))
    assert code == 2 and "--repair" in err  # a usage error: it reads no source

    code, out, _ = run(capsys, "build", "n", "--repair", "--json")
    r = json.loads(out)
    assert code == 0 and r["repaired"] and r["texts_embedded"] == 0
    assert r["vectors_from_cache"] == 30 and r["damaged"][0]["file"] == "dense.1.rvf"
    code, after, _ = run(capsys, "search", "n", "wing lift", "--json")
    assert code == 0 and json.loads(after)["hits"] == json.loads(before)["hits"]
    code, out, _ = run(capsys, "info", "n", "--check")
    assert code == 0 and "DAMAGED" not in out and "checked:" in out
    code, out, _ = run(capsys, "build", "n")
    assert code == 0 and "up to date" in out
    code, out, _ = run(capsys, "build", "n", "--repair")
    assert code == 0 and "needs no repair" in out


def test_build_verifies_a_base_file_changed_since_it_was_written(home):
    docs = make_docs(40)
    c = build(from_mapping(docs, name="c", embedder="hashing:32"))
    lex = c.store.path / "lexical.1.rvx"
    flip(lex)  # in place: the file's mtime changes, so the build loads it
    with pytest.raises(IndexFormatError) as info:
        build(from_mapping(docs, name="c", embedder="hashing:32"))  # was: "up to date"
    assert str(lex) in str(info.value) and "rowvoi build c --repair" in str(info.value)
    assert repair("c").texts_embedded == 0
    assert build(from_mapping(docs, name="c", embedder="hashing:32")).last_build.changed is False


def test_a_file_of_another_corpus_is_refused(home):
    a = build(from_mapping(make_docs(30), name="a", embedder="hashing:32"))
    b = build(from_mapping(make_docs(45, seed=3), name="b", embedder="hashing:32"))
    for name in ("lexical.1.rvx", "dense.1.rvf"):
        shutil.copy(b.store.path / name, a.store.path / name)  # checksum-valid, wrong rows
    with pytest.raises(IndexFormatError, match="holds 45 documents where generation 1 has 30"):
        search(open_corpus("a"), "wing", mode="lexical")
    with pytest.raises(IndexFormatError, match="holds 45 vectors where generation 1 has 30"):
        search(open_corpus("a"), "wing", mode="dense")
    assert sorted(x.file for x in check("a")) == ["dense.1.rvf", "lexical.1.rvx"]
    assert repair("a").texts_embedded == 0 and check("a") == []


def test_maintain_reports_damage_and_force_repairs_it(home, tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    for i, text in enumerate(make_docs(20).values()):
        (notes / f"n{i}.md").write_text(text)
    registry.register("n", "files", root=str(notes), embedder="hashing:32")
    assert run(capsys, "maintain", "--all")[0] == 0
    dense = home / "corpora" / "n" / "dense.1.rvf"
    flip(dense)
    code, out, err = run(capsys, "maintain", "--all")
    assert code == 1 and "n: damaged (dense.1.rvf:" in out, out
    assert "rowvoi maintain n --force" in out and "rowvoi build n --repair" in out
    assert "1 corpus(es) failed: n" in err
    code, out, _ = run(capsys, "maintain", "--all", "--force", "--dry-run")
    assert code == 0 and "n: would repair" in out
    code, out, _ = run(capsys, "maintain", "--all", "--force", "--json")
    res = json.loads(out)["results"][0]
    assert code == 0 and res["damage"] and "repaired dense.1.rvf" in res["reason"]
    assert res["counts"]["texts_embedded"] == 0
    assert check("n") == []
    code, out, _ = run(capsys, "maintain", "--all")
    assert code == 0 and "n: nothing to do" in out
    log = [
        row["action"]
        for row in json.loads(run(capsys, "maintain", "n", "--log", "--json")[1])["log"]
    ]
    assert log[-3:] == ["damaged", "up to date", "nothing to do"], log


def test_damaged_docs_sqlite_says_how_to_rebuild(home, capsys, bad_fetcher):
    c = build(from_mapping(make_docs(10), name="c", embedder="hashing:32"))
    c.store.close()
    db = c.store.db_path
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(db) + suffix):
            os.unlink(str(db) + suffix)
    db.write_bytes(b"this is no database" * 300)
    advice = "rowvoi rm c --keep-registration, then rowvoi build c"
    with pytest.raises(IndexFormatError, match=advice):
        search(open_corpus("c"), "wing", mode="lexical")
    with pytest.raises(IndexFormatError, match=advice):
        repair("c")
    with pytest.raises(IndexFormatError, match=advice):
        build(from_mapping(make_docs(10), name="c", embedder="hashing:32"))
    code, out, _ = run(capsys, "ls", "--json")  # listed, not fatal to the listing
    (row,) = json.loads(out)
    assert code == 0 and row["name"] == "c" and advice in row["damaged"]
    code, out, _ = run(capsys, "ls")
    assert code == 0 and "DAMAGED (rowvoi info c)" in out
    code, _, err = run(capsys, "info", "c")
    assert code == 1 and advice in err
    # maintain --force says precisely why it cannot repair this one
    registry.register("c", "records", fetcher=f"{bad_fetcher}:good", embedder="hashing:32")
    code, out, err = run(capsys, "maintain", "--all", "--force")
    assert code == 1 and "c: error" in out and advice in out, out


# ------------------------------------------------------- vectors for repair


def test_repair_of_a_corpus_without_cache_uses_the_intact_index(home):
    emb = Counting()
    c = build(from_mapping(make_docs(50), name="c", embedder=emb), batch_size=16)
    expected = signature(c)
    os.unlink(c.store.path / CACHE_FILE)  # as built by an older rowvoi
    (c.store.path / "lexical.1.rvx").unlink()
    emb.calls = 0
    r = repair("c")
    assert r.vectors_from_index == 50 and r.vectors_from_cache == 0 and r.texts_embedded == 0
    assert emb.calls == 0 and signature(open_corpus("c", embedder=emb)) == expected
    assert cache_info(c.store.path / CACHE_FILE) == {Counting.embedder_id: 50}


def test_repair_takes_vectors_from_the_exact_twin_of_a_damaged_graph(home):
    emb = Counting()
    c = build(from_mapping(make_docs(40), name="g", embedder=emb), batch_size=16, hnsw=True)
    expected = signature(c)
    os.unlink(c.store.path / CACHE_FILE)
    flip(graph_file(c.store.path / "hnsw.1"))
    emb.calls = 0
    r = repair("g")
    assert (r.vectors_from_index, r.vectors_from_cache, r.texts_embedded) == (40, 0, 0)
    assert emb.calls == 0 and signature(open_corpus("g", embedder=emb)) == expected


def test_repair_embeds_only_what_no_file_holds(home):
    c = build(from_mapping(make_docs(50), name="h", embedder="hashing:32"))
    expected = signature(c)
    os.unlink(c.store.path / CACHE_FILE)
    (c.store.path / "dense.1.rvf").unlink()
    r = repair("h")  # the hashing embedder is recreated from its pinned id
    assert r.texts_embedded == 50 and signature(open_corpus("h")) == expected

    emb = Counting()
    c = build(from_mapping(make_docs(50), name="k", embedder=emb), batch_size=16)
    os.unlink(c.store.path / CACHE_FILE)
    (c.store.path / "dense.1.rvf").unlink()
    with pytest.raises(EmbedderUnavailable, match=r"repair\(\.\.\., embedder=\(function"):
        repair("k")
    emb.calls = emb.texts = 0
    r = repair("k", embedder=emb)
    assert r.texts_embedded == 50 and emb.texts == 50 and check("k") == []


def test_cache_is_private_and_holds_only_live_vectors(home):
    docs = make_docs(60)
    c = build(from_mapping(docs, name="c", embedder="hashing:32"))
    path = c.store.path / CACHE_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for k in list(docs)[:20]:
        del docs[k]
    build(from_mapping(docs, name="c", embedder="hashing:32"), compact=True)
    assert cache_info(path) == {make_embedder("hashing:32").embedder_id: 40}
    build(from_mapping(docs, name="c", embedder="hashing:16"))  # another embedder: rebuilt
    assert cache_info(path) == {make_embedder("hashing:16").embedder_id: 40}


def test_a_damaged_cache_costs_embedding_only(home):
    emb = Counting()
    docs = make_docs(30)
    c = build(from_mapping(docs, name="c", embedder=emb), batch_size=16)
    (c.store.path / CACHE_FILE).write_bytes(b"garbage" * 1000)
    docs.update(make_docs(10, seed=4, prefix="y"))
    emb.calls = emb.texts = 0
    r = build(from_mapping(docs, name="c", embedder=emb), batch_size=16).last_build
    assert r.texts_embedded == 10 and emb.texts == 10
    assert cache_info(c.store.path / CACHE_FILE) == {Counting.embedder_id: 10}


# ------------------------------------------------------------ failed builds


@pytest.fixture
def bad_fetcher(tmp_path, monkeypatch):
    mod = tmp_path / "wb_fetchers.py"
    mod.write_text(
        textwrap.dedent("""
        def broken():
            raise RuntimeError("the upstream API said no")

        def good():
            return [{"id": i, "text": f"record {i} about wings"} for i in range(5)]
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "wb_fetchers"


@pytest.mark.parametrize("failure", ["typo", "fetcher", "parquet"])
def test_failed_first_build_leaves_no_corpus_and_no_registration(
    home, tmp_path, capsys, monkeypatch, bad_fetcher, failure
):
    if failure == "typo":
        argv = ["--files", str(tmp_path / "no-such-folder")]
        why = "no-such-folder"
    elif failure == "fetcher":
        argv = ["--fetcher", f"{bad_fetcher}:broken"]
        why = "the upstream API said no"
    else:
        import pandas as pd

        def no_pyarrow(*a, **k):
            raise ImportError("Unable to find a usable engine; tried using: 'pyarrow'")

        monkeypatch.setattr(pd, "read_parquet", no_pyarrow)
        table = tmp_path / "r.parquet"
        table.write_bytes(b"PAR1 not really")
        argv = ["--records", str(table)]
        why = "pyarrow"
    code, _, err = run(capsys, "build", "t", *argv, "--embedder", "hashing:32")
    assert code == 1 and why in err, err
    assert not (home / "corpora" / "t").exists()
    assert registry.get("t") is None
    code, out, _ = run(capsys, "maintain", "--all")
    assert code == 0, out


def test_failed_first_build_in_python_leaves_no_directory(home, tmp_path, bad_fetcher):
    def quota(texts):  # an embedder failing after two batches
        quota.n += 1
        if quota.n > 2:
            raise RuntimeError("quota exceeded")
        return make_embedder("hashing:8").embed(texts)

    quota.n = 0
    with pytest.raises(RuntimeError, match="quota exceeded"):
        build(from_mapping(make_docs(50), name="p", embedder=(quota, "q-v1")), batch_size=10)
    assert not CorpusStore.local("p").path.exists()
    # a store folder the caller made stays, emptied of what the build made
    d = tmp_path / "mine"
    d.mkdir()
    source = from_records(name=None, fetcher=f"{bad_fetcher}:broken", embedder="hashing:8")
    with pytest.raises(RuntimeError, match="the upstream API said no"):
        build(source, store=CorpusStore(d))
    assert sorted(p.name for p in d.iterdir()) in ([], ["build.lock"])


def test_failed_rebuild_keeps_corpus_and_registration(home, tmp_path, capsys, bad_fetcher):
    notes = tmp_path / "notes"
    notes.mkdir()
    for i, text in enumerate(make_docs(25).values()):
        (notes / f"n{i}.md").write_text(text)
    assert run(capsys, "build", "n", "--files", str(notes), "--embedder", "hashing:32")[0] == 0
    before = signature(open_corpus("n"))
    entry = registry.get("n")
    code, _, err = run(capsys, "build", "n", "--files", str(tmp_path / "typo"))
    assert code == 1 and "typo" in err
    assert registry.get("n") == entry and signature(open_corpus("n")) == before
    code, _, err = run(capsys, "build", "n", "--fetcher", f"{bad_fetcher}:broken")
    assert code == 1 and registry.get("n") == entry and signature(open_corpus("n")) == before
    assert run(capsys, "maintain", "--all")[0] == 0

    # in Python: a strategy failing half-way through a rebuild
    docs = make_docs(40)
    c = build(from_mapping(docs, name="p", embedder="hashing:32"))
    sig = signature(c)
    docs.update(make_docs(300, seed=7, prefix="m"))
    docs["zz-bad"] = "unreadable"
    with pytest.raises(OSError, match="disk went away"):
        build(from_mapping(_Flaky(docs), name="p", embedder="hashing:32"), batch_size=16)
    assert signature(open_corpus("p")) == sig and check("p") == []


class _Flaky(dict):
    """Artifacts whose payload cannot be read (``zz-bad``, the last one):
    the build fails after embedding every other one."""

    def __getitem__(self, key):
        if key == "zz-bad":
            raise OSError("the disk went away")
        return super().__getitem__(key)


# --------------------------------------------------------- interrupted builds


def test_interrupted_build_keeps_the_old_corpus_and_its_embeddings(home):
    old = make_docs(20)
    emb = Counting()
    build(from_mapping(old, name="c", embedder=emb), batch_size=10)
    expected = signature(open_corpus("c", embedder=emb))
    docs = {**old, **make_docs(80, seed=5, prefix="n")}
    emb = Counting(stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        build(from_mapping(docs, name="c", embedder=emb), batch_size=10)
    assert emb.texts == 30
    assert signature(open_corpus("c", embedder=Counting())) == expected  # old corpus intact
    emb = Counting()
    r = build(from_mapping(docs, name="c", embedder=emb), batch_size=10).last_build
    assert (r.n_new, r.texts_embedded, r.cache_hits, emb.calls) == (80, 50, 30, 5)

    # an interrupted first build keeps its folder and cache too
    emb = Counting(stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        build(from_mapping(make_docs(50), name="f", embedder=emb), batch_size=10)
    assert (CorpusStore.local("f").path / CACHE_FILE).exists()
    r = build(from_mapping(make_docs(50), name="f", embedder=Counting()), batch_size=10)
    assert (r.last_build.texts_embedded, r.last_build.cache_hits) == (30, 20)


_CHILD = textwrap.dedent("""
    import sys, time
    import rowvoi.corpus.indexing.build as b
    from rowvoi.cli.main import main
    seen = [0]
    def hook(name):
        if name == "embedded":
            seen[0] += 1
            if seen[0] == 3:
                print("ready", flush=True)
                time.sleep(120)  # SIGINT arrives here, in the middle of the build
    b._stage_hook = hook
    sys.exit(main(sys.argv[1:]))
""")


def test_sigint_to_rowvoi_build_keeps_the_finished_embeddings(home, tmp_path, capsys):
    records = tmp_path / "r.jsonl"

    def write(n):
        rng = np.random.default_rng(0)
        with open(records, "w") as fh:
            for i in range(n):
                words = " ".join(WORDS[j] for j in rng.integers(0, len(WORDS), 8))
                fh.write(json.dumps({"id": f"r{i}", "text": f"record {i} {words}"}) + "\n")

    write(100)
    code, _, _ = run(capsys, "build", "s", "--records", str(records), "--embedder", "hashing:32")
    assert code == 0
    expected = signature(open_corpus("s"))
    write(1100)  # the same 100 records first, then 1000 new ones: 4 batches of 256
    env = dict(os.environ, ROWVOI_HOME=str(home), SKBUILD_EDITABLE_VERBOSE="0")
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, "build", "s", "--records", str(records)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err, err
    assert signature(open_corpus("s")) == expected  # the old generation
    code, out, _ = run(capsys, "build", "s", "--json")
    r = json.loads(out)
    assert code == 0 and r["n_new"] == 1000
    assert (r["cache_hits"], r["texts_embedded"]) == (768, 232), r


def test_readme_when_something_breaks(tmp_path):
    from readme_blocks import run_python, section

    text = section("### When something breaks")
    out = run_python(text, tmp_path / "home").splitlines()
    assert out == ["['dense.1.rvf: missing']", "True 0 6", "shock-waves.md"], out


def test_a_file_replaced_by_a_newer_commit_is_a_race_not_damage(home):
    from rowvoi.corpus.storage.index_files import load_lexical, read_delta
    from rowvoi.corpus.storage.store import BaseFileDamaged, BaseFileGone

    docs = make_docs(30)
    build(from_mapping(docs, name="c", embedder="hashing:32"))
    reader = open_corpus("c")
    with reader.store.snapshot() as snap:  # generation 1, still read
        docs.update(make_docs(5, seed=2, prefix="z"))
        build(from_mapping(docs, name="c", embedder="hashing:32"), compact=True)
        with pytest.raises(BaseFileGone) as gone:  # lexical.1.rvx: deleted by that commit
            load_lexical(reader.store, read_delta(snap))
    reader.store.confirm_damage(gone.value)  # returns: read the new generation
    reader.store.confirm_damage(BaseFileDamaged("...", name="lexical.1.rvx"))
    assert [h.artifact_id for h in search(reader, "z1", mode="lexical", k=1)] == ["z0001"]
    (reader.store.path / "lexical.2.rvx").unlink()
    with pytest.raises(BaseFileDamaged, match=r"lexical\.2\.rvx: missing"):
        reader.store.confirm_damage(BaseFileGone(reader.store.path / "lexical.2.rvx"))


def test_a_search_opens_its_generation_again_when_a_commit_replaced_its_files(home, monkeypatch):
    # the race is storage's to settle: Generations.read's first snapshot is
    # of generation 1, whose lexical file a compacting commit has deleted;
    # it tells the race from damage and opens generation 2 on a fresh one
    import contextlib

    from rowvoi.corpus.storage.generation import Generations, Wanted

    docs = make_docs(30)
    build(from_mapping(docs, name="c", embedder="hashing:32"))
    store = open_corpus("c").store
    old = store.snapshot()
    old_snap = old.__enter__()  # generation 1, still read
    docs.update(make_docs(5, seed=2, prefix="z"))
    build(from_mapping(docs, name="c", embedder="hashing:32"), compact=True)
    assert not (store.path / "lexical.1.rvx").exists()
    real = CorpusStore.snapshot
    taken = []

    @contextlib.contextmanager
    def snapshot(self):
        if not taken:
            taken.append(old_snap.generation)
            try:
                yield old_snap
            finally:
                old.__exit__(None, None, None)
        else:
            with real(self) as snap:
                taken.append(snap.generation)
                yield snap

    monkeypatch.setattr(CorpusStore, "snapshot", snapshot)
    want = Wanted(True, False, False, None, None, "c", "corpus 'c'")
    with Generations(store).read(want) as opened:
        assert (opened.gen.generation, len(opened.gen.lexical)) == (2, 35)
        assert opened.allowed is None and opened.none_allowed is None
    # the stale snapshot, confirm_damage's look at what is committed, the retry
    assert taken == [1, 2, 2]


def test_a_corpus_that_keeps_changing_is_refused_after_the_retries(monkeypatch):
    from rowvoi.corpus.storage.generation import RETRIES, Generations, Stale

    c = build(from_mapping(make_docs(5), embedder="hashing:16"), store=CorpusStore.memory())
    tries = []

    def always_stale(self, snap, *args, **kw):
        tries.append(snap.generation)
        raise Stale()

    monkeypatch.setattr(Generations, "_load", always_stale)
    with pytest.raises(
        RuntimeError, match=rf"kept changing during the search \({RETRIES} commits\)"
    ):
        search(c, "d1", mode="lexical")
    assert tries == [1] * RETRIES
