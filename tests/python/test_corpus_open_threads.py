"""A generation's large base files load in a thread of their own while the
record table is read (``index_files.load_bases``): the same indexes, hits
and errors as loading them in place, and no thread left behind."""

import random
import threading
import time

import pytest
from hammer import hammer

import rowvoi.corpus.storage.index_files as files
from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, open_corpus, search
from rowvoi.corpus.storage import records as records_mod
from rowvoi.corpus.storage.store import BaseFileDamaged
from rowvoi.errors import IndexFormatError

WORDS = (
    "wing lift drag shock flow pipe heat nozzle flutter wedge boundary layer supersonic "
    "subsonic turbulent laminar pressure cone plate jet wake vortex stall"
).split()
QUERIES = ["wing lift", "turbulent boundary layer", "shock wedge", "heat pipe", "vortex stall"]
MODES = [
    {"mode": "lexical"},
    {"mode": "dense"},
    {"mode": "hybrid"},
    {"mode": "hybrid", "fusion": "blend", "k": 25},
    {"mode": "dense", "filter": {"year": {"$gte": 1990}}},
]


def source(docs, name="c", embedder="hashing:64"):
    return from_mapping(
        docs,
        name=name,
        embedder=embedder,
        strategy=WholeText(text_key="text"),
        metadata_of=lambda aid, raw: {"year": raw["year"]},
    )


def make_docs(n, seed=0, prefix="d"):
    rng = random.Random(seed)
    return {
        f"{prefix}{i:04d}": {
            "text": " ".join(rng.choice(WORDS) for _ in range(12)),
            "year": 1950 + i % 60,
        }
        for i in range(n)
    }


def signature(corpus):
    return [
        [(h.artifact_id, h.score, h.text, dict(h.metadata)) for h in search(corpus, q, **kw)]
        for q in QUERIES
        for kw in MODES
    ]


def loader_threads():
    return [t for t in threading.enumerate() if t.name == "rowvoi-base-files"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def spied(monkeypatch):
    """Counts the loads that went to a thread."""
    started = []
    real = files.Bases.__init__

    def init(self, store, delta):
        started.append(delta.generation)
        real(self, store, delta)

    monkeypatch.setattr(files.Bases, "__init__", init)
    return started


@pytest.mark.parametrize("hnsw", [False, True])
def test_a_thread_loads_the_same_indexes_as_loading_in_place(home, monkeypatch, spied, hnsw):
    docs = make_docs(300)
    build(source(docs), hnsw=hnsw, progress=False)
    # a delta since the base: new records, removed ones
    docs.update(make_docs(40, seed=3, prefix="x"))
    for k in list(docs)[:25]:
        del docs[k]
    build(source(docs), progress=False)
    in_place = signature(open_corpus("c"))
    assert not spied  # base files of a few KB: no thread
    monkeypatch.setattr(files, "BACKGROUND_BYTES", 0)
    threaded = signature(open_corpus("c"))
    assert spied == [2]
    assert threaded == in_place and any(threaded)
    assert not loader_threads()


@pytest.mark.parametrize("target", ["lexical.1.rvx", "dense.1.rvf"])
def test_a_damaged_base_file_is_told_as_when_loaded_in_place(home, monkeypatch, target):
    build(source(make_docs(200)), progress=False)
    path = home / "corpora" / "c" / target
    with open(path, "r+b") as fh:  # 8 bytes inverted in the middle, same inode
        fh.seek(path.stat().st_size // 2)
        data = fh.read(8)
        fh.seek(path.stat().st_size // 2)
        fh.write(bytes(b ^ 0xFF for b in data))
    messages = []
    for threshold in (1 << 60, 0):
        monkeypatch.setattr(files, "BACKGROUND_BYTES", threshold)
        with pytest.raises(IndexFormatError) as info:
            search(open_corpus("c"), "wing", mode="hybrid")
        assert isinstance(info.value, BaseFileDamaged)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert str(path) in messages[1] and "rowvoi build c --repair" in messages[1]
    assert not loader_threads()


def test_problems_are_told_in_the_order_of_a_load_in_place(home, monkeypatch):
    # the lexical index's delta fails to apply, and the dense base file is
    # damaged: loaded in place, the lexical problem comes first; so it does
    # when the dense file was loading (and failing) in the thread meanwhile
    from rowvoi.index.lexical import BM25Index

    docs = make_docs(200)
    build(source(docs), progress=False)
    docs.update(make_docs(10, seed=4, prefix="x"))
    build(source(docs), progress=False)  # a delta since the base
    (home / "corpora" / "c" / "dense.1.rvf").write_bytes(b"not an index")

    def refuse(self, texts, ids=None):
        raise ValueError("the delta does not apply")

    monkeypatch.setattr(BM25Index, "add", refuse)
    for threshold in (1 << 60, 0):
        monkeypatch.setattr(files, "BACKGROUND_BYTES", threshold)
        with pytest.raises(ValueError, match="the delta does not apply"):
            search(open_corpus("c"), "wing", mode="hybrid")
    assert not loader_threads()


def test_the_record_tables_problem_is_told_and_the_thread_ends_first(home, monkeypatch):
    build(source(make_docs(200)), progress=False)
    monkeypatch.setattr(files, "BACKGROUND_BYTES", 0)
    # the base files are damaged too: the table's problem is the one told
    (home / "corpora" / "c" / "dense.1.rvf").write_bytes(b"not an index")
    seen = []
    reading = threading.Event()
    lexical_base = files._lexical_base

    def held_base(store, delta):
        reading.wait(10)  # (the files load while the table is being read)
        time.sleep(0.05)
        return lexical_base(store, delta)

    def broken(snap, text_budget=None):
        seen.append(len(loader_threads()))
        reading.set()
        raise IndexFormatError("RV_E_CORRUPT: the records are damaged", 6, "RV_E_CORRUPT")

    monkeypatch.setattr(files, "_lexical_base", held_base)
    monkeypatch.setattr(records_mod.RecordTable, "load", staticmethod(broken))
    with pytest.raises(IndexFormatError, match="the records are damaged"):
        search(open_corpus("c"), "wing", mode="hybrid")
    assert seen == [1]  # the files were loading meanwhile ...
    assert not loader_threads()  # ... and were waited for


def test_an_interrupt_while_the_table_is_read_waits_for_the_thread(home, monkeypatch):
    build(source(make_docs(200)), progress=False)
    monkeypatch.setattr(files, "BACKGROUND_BYTES", 0)

    def interrupted(snap, text_budget=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(records_mod.RecordTable, "load", staticmethod(interrupted))
    c = open_corpus("c")
    with pytest.raises(KeyboardInterrupt):
        search(c, "wing", mode="lexical")
    assert not loader_threads()
    monkeypatch.undo()
    assert search(c, "wing", mode="lexical")  # nothing half-loaded was kept


def test_a_corpus_in_memory_loads_in_place(monkeypatch, spied):
    monkeypatch.setattr(files, "BACKGROUND_BYTES", 0)
    c = build(source(make_docs(50), name=None, embedder="hashing:32"), store=CorpusStore.memory())
    assert search(c, "wing lift", mode="hybrid")
    # (a memory store's base files are files too: loaded in a thread alike)
    assert spied == [1]


@pytest.mark.stress
def test_threads_open_a_corpus_rebuilt_under_them(home, monkeypatch):
    """Six threads open the corpus afresh and search it for three seconds,
    every load through the loading thread, while it is rebuilt alternating
    two document sets: every answer is one of the two sets', no call fails,
    and no loading thread is left."""
    monkeypatch.setattr(files, "BACKGROUND_BYTES", 0)
    first, second = make_docs(150), make_docs(150, seed=5, prefix="y")
    build(source(first), progress=False)

    def one_search(_):
        hits = search(open_corpus("c"), "wing lift", mode="hybrid", k=5)
        prefixes = {h.artifact_id[0] for h in hits}
        return None if hits and len(prefixes) == 1 else f"mixed or empty: {prefixes}"

    def rebuild(i):
        build(source(second if i % 2 == 0 else first), compact=True, progress=False)

    got = hammer(3.0, 6, one_search, rebuild)
    assert not got.problems, got.problems[:3]
    assert got.meanwhile >= 2 and len(got.calls) == 6 and min(got.calls) > 3
    assert not loader_threads()
