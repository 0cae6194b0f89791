"""Indexes shared between threads, hammered for seconds: searches, sizes,
statistics, documents and saves in some threads while another adds and
deletes; and writers that must not starve behind back-to-back searches.

Before issue 8's fixes these crashed (segfaults in rv_flat_search,
rv_bm25_get_info and hnswlib's knn_query) or hung (a BM25 add waited behind
searchers forever)."""

import os
import pickle
import threading
import time

import numpy as np
import pytest

import rowvoi.errors
from rowvoi.index._rwlock import RWLock
from rowvoi.index.flat import FlatIndex
from rowvoi.index.hnsw import HNSWIndex
from rowvoi.index.lexical import BM25Index

SECONDS = 2.0  # wall-clock length of each hammering run
MIN_ROUNDS = 3  # every role must complete this many iterations ...
PATIENCE = 30.0  # ... within this many seconds (a starved role never does)
DIM = 16
WORDS = [f"w{i}" for i in range(300)]


def _docs(rng, n):
    return [" ".join(rng.choice(WORDS, size=rng.integers(3, 12))) for _ in range(n)]


class Hammer:
    """Runs a writer and some readers for SECONDS; collects exceptions and
    counts iterations per role.

    Every role must complete MIN_ROUNDS iterations.  A role that has not
    after SECONDS gets more time, up to PATIENCE, while all the others keep
    hammering: on a loaded two-core host CPython's GIL hand-offs alone can
    hold a thread that releases the GIL often (the writer: a C add, a lock
    wait, a C delete per round) behind a pure-Python reader for a second or
    more, which is slowness, not starvation.  A role that a lock really
    starves never completes its rounds and fails the test."""

    def __init__(self):
        self.stop = threading.Event()
        self.errors = []
        self.counts = {}
        self.lock = threading.Lock()

    def _run(self, name, fn):
        try:
            while not self.stop.is_set():
                fn()
                with self.lock:
                    self.counts[name] = self.counts.get(name, 0) + 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            self.errors.append((name, repr(exc)))
            self.stop.set()

    def _behind(self, roles):
        with self.lock:
            return [name for name, _ in roles if self.counts.get(name, 0) < MIN_ROUNDS]

    def go(self, roles):
        threads = [
            threading.Thread(target=self._run, args=(name, fn), daemon=True) for name, fn in roles
        ]
        for t in threads:
            t.start()
        start = time.monotonic()
        while not self.stop.is_set():
            elapsed = time.monotonic() - start
            if elapsed >= PATIENCE or (elapsed >= SECONDS and not self._behind(roles)):
                break
            time.sleep(0.05)
        self.stop.set()
        for t in threads:
            t.join(timeout=30)
            assert not t.is_alive(), "a thread is stuck"
        assert not self.errors, self.errors
        for name, _ in roles:
            assert self.counts.get(name, 0) >= MIN_ROUNDS, f"{name} barely ran: {self.counts}"


# ------------------------------------------------------------------- BM25


@pytest.mark.stress
def test_bm25_reads_and_saves_while_adding_and_deleting(tmp_path):
    rng = np.random.default_rng(0)
    ix = BM25Index()
    ix.add(_docs(rng, 2000))
    h = Hammer()
    planned = [ix.stats()["next_id"]]  # ids below this may exist
    wrng = np.random.default_rng(1)

    def writer():
        planned[0] += 50
        ids = ix.add(_docs(wrng, 50))
        assert ids[0] >= 0 and ids[-1] < planned[0]
        # deletes are strict (live ids only, no repeats); only this thread deletes
        ix.delete(wrng.choice(ix.ids(), size=5, replace=False))
        if wrng.random() < 0.05:
            ix.compact()

    def searcher(seed):
        r = np.random.default_rng(seed)

        def run():
            res = ix.search(" ".join(r.choice(WORDS, size=3)), k=10)
            ids = res.ids.tolist()
            assert len(set(ids)) == len(ids) and all(0 <= i < planned[0] for i in ids)
            assert np.all(np.diff(res.scores) <= 0)
            batch = ix.search_batch(
                [" ".join(r.choice(WORDS, size=2)) for _ in range(4)], k=5, n_threads=2
            )
            assert ((batch.ids == -1) | ((batch.ids >= 0) & (batch.ids < planned[0]))).all()

        return run

    last = {"n": 0}

    def inspector():
        st = ix.stats()  # one consistent snapshot
        assert st["next_id"] >= last["n"]  # ids are handed out monotonically
        last["n"] = st["next_id"]
        assert st["n_live"] > 0 and st["next_id"] <= planned[0]
        assert st["n_live"] + st["n_tombstoned"] <= st["n_docs"] <= st["next_id"]
        assert 0 < len(ix) <= ix.n_docs <= planned[0]
        live = ix.ids()
        assert len(set(live.tolist())) == len(live) and live.max() < planned[0]
        for doc_id in (int(live[0]), int(live[-1])):
            try:  # the writer may delete it (and compact) between the calls
                length, state = ix.doc(doc_id)
                assert state in ("live", "tombstoned", "purged") and length >= 0
                ix.explain("w1 w2", doc_id)
            except (rowvoi.errors.StateError, rowvoi.errors.RangeError):
                assert doc_id not in ix
        assert ix.doc_freq("w7") >= 0 and len(ix.vocabulary()) <= len(WORDS)
        repr(ix)

    def saver():
        path = tmp_path / "lexical.rvx"
        ix.save(path)
        back = BM25Index.load(path)
        ids = back.ids()
        assert len(back) == len(ids) > 0 and ids.max() < planned[0]
        copy = BM25Index.from_bytes(ix.to_bytes())
        assert len(copy) > 0 and copy.ids().max() < planned[0]

    h.go(
        [
            ("writer", writer),
            ("search-1", searcher(2)),
            ("search-2", searcher(3)),
            ("inspect", inspector),
            ("save", saver),
        ]
    )
    assert sorted(os.listdir(tmp_path)) == ["lexical.rvx"]


# ------------------------------------------------------------------ vectors


SEED_J = 10**6  # seed vectors have ids 7 j + 1 for j in SEED_J .. SEED_J + 499
SEEDS = 7 * np.arange(SEED_J, SEED_J + 500) + 1
SEED_VECTORS = np.random.default_rng(5).normal(size=(500, DIM)).astype(np.float32)


def _seeded(ix):
    ix.add(SEED_VECTORS, ids=SEEDS)
    return ix


def _vector_roles(ix, tmp_path, rng_seed, loader):
    """Writer, searchers, inspector and saver for a FlatIndex or HNSWIndex
    (cosine) holding the seed vectors. The writer adds ids 7 j + 1 for
    j = 0, 1, ... and removes some of them (never a seed)."""
    wrng = np.random.default_rng(rng_seed)
    state = {"next": 0, "planned": 0, "live": set()}
    unit = SEED_VECTORS / np.linalg.norm(SEED_VECTORS, axis=1, keepdims=True)

    def valid(i):
        j = (i - 1) // 7
        return i % 7 == 1 and (j < state["planned"] or SEED_J <= j < SEED_J + 500)

    def writer():
        j0 = state["next"]
        state["planned"] = j0 + 40
        ids = 7 * np.arange(j0, j0 + 40) + 1
        assert ix.add(wrng.normal(size=(40, DIM)), ids=ids).tolist() == ids.tolist()
        state["next"] = j0 + 40
        state["live"].update(ids.tolist())
        gone = wrng.choice(sorted(state["live"]), size=4, replace=False)
        assert ix.remove(gone) == 4
        state["live"].difference_update(gone.tolist())

    def searcher(seed):
        r = np.random.default_rng(seed)

        def run():
            res = ix.search(r.normal(size=(3, DIM)), k=8)
            for row_ids, row_scores in zip(res.ids, res.scores):
                ids = row_ids.tolist()
                assert len(set(ids)) == len(ids) and all(valid(i) for i in ids), ids
                assert np.all(np.diff(row_scores) <= 1e-6)  # cosine: best first
            one = ix.search(r.normal(size=DIM), k=3, filter=[1, 8, 15, 22])
            assert set(one.ids.tolist()) <= {1, 8, 15, 22}

        return run

    last = {"n": 0}

    def inspector():
        n = len(ix)
        assert 500 <= n <= 500 + 40 * state["planned"]
        ids = ix.ids()
        assert all(valid(i) for i in ids.tolist())
        np.testing.assert_allclose(ix.get(SEEDS[::50]), unit[::50], rtol=1e-5, atol=1e-6)
        assert int(SEEDS[7]) in ix and 3 not in ix
        assert state["next"] == 0 or 1 in ix or 1 not in state["live"]
        repr(ix)
        # adds outpace removes ten to one: the size grows over time
        assert n >= last["n"] - 40
        last["n"] = n

    def saver():
        path = tmp_path / "ix"
        ix.save(path)
        back = loader(path)
        back_ids = back.ids()
        assert all(valid(i) for i in back_ids.tolist())
        assert np.isin(SEEDS, back_ids).all()

    return [
        ("writer", writer),
        ("search-1", searcher(11)),
        ("search-2", searcher(12)),
        ("inspect", inspector),
        ("save", saver),
    ]


@pytest.mark.stress
def test_flat_reads_and_saves_while_adding_and_removing(tmp_path):
    ix = FlatIndex(DIM, storage="int8")
    _seeded(ix)
    roles = _vector_roles(ix, tmp_path, 21, FlatIndex.load)
    roles.append(("copy", lambda: FlatIndex.from_bytes(ix.to_bytes()).search(np.ones(DIM), k=2)))
    roles.append(("compact", lambda: (ix.compact(), ix.n_deleted)))
    h = Hammer()
    h.go(roles)


@pytest.mark.stress
def test_hnsw_reads_and_saves_while_adding_and_removing(tmp_path):
    ix = HNSWIndex(DIM, M=8, ef_construction=40, ef=20)
    _seeded(ix)
    roles = _vector_roles(ix, tmp_path, 31, HNSWIndex.load)
    r = np.random.default_rng(4)

    def other_ef():  # searches that need another ef take turns with the rest
        res = ix.search(
            r.normal(size=(2, DIM)),
            k=5,
            ef=int(r.integers(5, 80)),
            exact_rescore=bool(r.integers(0, 2)),
        )
        assert all(i % 7 == 1 for i in res.ids.ravel().tolist())

    roles.append(("other-ef", other_ef))
    roles.append(("pickle", lambda: pickle.loads(pickle.dumps(ix)).search(np.ones(DIM), k=3)))
    h = Hammer()
    h.go(roles)


def test_hnsw_concurrent_searches_are_deterministic():
    """hnswlib keeps one ef per graph: searches with different ef values in
    parallel must each get the result they would get alone."""
    rng = np.random.default_rng(9)
    ix = HNSWIndex(DIM, M=6, ef_construction=20, ef=10)
    ix.add(rng.normal(size=(3000, DIM)))
    q = rng.normal(size=(20, DIM))
    want = {ef: ix.search(q, k=10, ef=ef).ids for ef in (10, 200)}
    h = Hammer()

    def searcher(ef):
        def run():
            np.testing.assert_array_equal(ix.search(q, k=10, ef=ef).ids, want[ef])

        return run

    h.go(
        [
            ("ef10-a", searcher(10)),
            ("ef200-a", searcher(200)),
            ("ef10-b", searcher(10)),
            ("ef200-b", searcher(200)),
        ]
    )


# ------------------------------------------------------- sizes under add-only


@pytest.mark.stress
@pytest.mark.parametrize("kind", ["bm25", "flat", "hnsw"])
def test_sizes_grow_monotonically_while_adding(kind):
    """Readers of sizes, statistics and single entries against one thread
    that only adds: every reading succeeds and sizes never go back."""
    rng = np.random.default_rng(13)
    if kind == "bm25":
        # a large base and small adds of new terms: the engine reallocates
        # large arrays (dictionary, segments) all the time
        ix = BM25Index()
        ix.add([f"{d} u{i}" for i, d in enumerate(_docs(rng, 20000))])
        batches = [_docs(rng, 10) for _ in range(8)]

        def add(i):
            ix.add([f"{d} n{i}x{j}" for j, d in enumerate(batches[i % 8])])

        def read():
            st = ix.stats()
            assert st["n_live"] == st["n_docs"] == st["next_id"]  # nothing deleted
            n_docs = ix.n_docs
            ix.doc(n_docs - 1), ix.doc_freq("w3")
            return (len(ix), n_docs, st["n_postings"])
    else:
        ix = FlatIndex(DIM) if kind == "flat" else HNSWIndex(DIM, M=6, ef_construction=20)
        batches = [rng.normal(size=(50, DIM)) for _ in range(8)]

        def add(i):
            ix.add(batches[i % 8])

        def read():
            n = len(ix)
            ids = ix.ids()
            assert len(ids) >= n and np.all(np.diff(ids) > 0)  # insertion order
            assert 0 in ix
            ix.get([0])
            return (n, len(ids))

    add(0)
    h = Hammer()
    counter = [1]

    def writer():
        add(counter[0])
        counter[0] += 1

    def reader():
        last = (0,) * 3

        def run():
            nonlocal last
            now = read()
            assert all(a >= b for a, b in zip(now, last)), (now, last)
            last = now

        return run

    h.go([("writer", writer), *((f"read-{i}", reader()) for i in range(3))])
    assert h.counts["writer"] >= 10


# ---------------------------------------------------------------- starvation


def _starvation(ix, search, add, n_readers=8, bound=2.0):
    """An add must finish within `bound` seconds while n_readers threads
    search back to back."""
    stop = threading.Event()
    errors = []
    searches = [0] * n_readers

    def reader(t):
        try:
            while not stop.is_set():
                search()
                searches[t] += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(repr(exc))

    readers = [threading.Thread(target=reader, args=(t,), daemon=True) for t in range(n_readers)]
    for t in readers:
        t.start()
    try:
        time.sleep(0.3)  # the readers are in full swing
        waits = []
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            done = threading.Event()
            t0 = time.monotonic()
            # bind this round's event: a late writer must not set the next one's
            w = threading.Thread(target=lambda done=done: (add(), done.set()), daemon=True)
            w.start()
            finished = done.wait(bound)
            waits.append(time.monotonic() - t0)
            assert finished, f"an add waited more than {bound} s behind {n_readers} searchers"
            w.join()
    finally:
        stop.set()
        for t in readers:
            t.join(timeout=30)
    assert not errors, errors
    assert min(searches) > 0, "a searcher never got in"
    assert len(waits) >= 3 and max(waits) < bound


@pytest.mark.stress
def test_bm25_add_is_not_starved_by_searchers():
    rng = np.random.default_rng(7)
    ix = BM25Index()
    ix.add(_docs(rng, 20000))
    _starvation(
        ix,
        lambda: ix.search("w1 w2 w3 w4 w5 w6", k=50, exhaustive=True),
        lambda: ix.add(_docs(rng, 5)),
    )


@pytest.mark.stress
def test_flat_add_is_not_starved_by_searchers():
    rng = np.random.default_rng(8)
    ix = FlatIndex(64)
    ix.add(rng.normal(size=(20000, 64)))
    q = rng.normal(size=(4, 64))
    _starvation(
        ix, lambda: ix.search(q, k=10, n_threads=1), lambda: ix.add(rng.normal(size=(5, 64)))
    )


@pytest.mark.stress
def test_hnsw_add_is_not_starved_by_searchers():
    rng = np.random.default_rng(9)
    ix = HNSWIndex(32, M=8, ef_construction=40)
    ix.add(rng.normal(size=(5000, 32)))
    q = rng.normal(size=(64, 32))
    _starvation(
        ix, lambda: ix.search(q, k=10, n_threads=1), lambda: ix.add(rng.normal(size=(5, 32)))
    )


# ------------------------------------------------------------ the lock itself


def test_rwlock_is_phase_fair_and_reentrant():
    lock = RWLock()
    order = []
    lock.acquire_read()
    writer_in = threading.Event()

    def writer():
        with lock.write():
            order.append("w")
            writer_in.set()

    def late_reader():
        with lock.read():
            order.append("r")

    w = threading.Thread(target=writer)
    w.start()
    time.sleep(0.1)  # the writer is queued behind our read
    r = threading.Thread(target=late_reader)
    r.start()
    time.sleep(0.1)
    assert order == []  # the late reader queues behind the waiting writer
    with lock.read():  # but our own nested read never waits
        pass
    with pytest.raises(RuntimeError, match="write lock while holding the read lock"):
        lock.acquire_write()
    lock.release_read()
    w.join(5)
    r.join(5)
    assert order == ["w", "r"]
    with pytest.raises(RuntimeError):
        lock.release_read()
    with pytest.raises(RuntimeError):
        lock.release_write()


def test_rwlock_admits_waiting_readers_before_the_next_writer():
    lock = RWLock()
    order = []
    lock.acquire_write()
    readers = [
        threading.Thread(
            target=lambda i=i: (
                lock.acquire_read(),
                order.append(f"r{i}"),
                time.sleep(0.05),
                lock.release_read(),
            )
        )
        for i in range(3)
    ]
    for t in readers:
        t.start()
    time.sleep(0.1)
    second = threading.Thread(
        target=lambda: (lock.acquire_write(), order.append("w2"), lock.release_write())
    )
    second.start()
    time.sleep(0.1)
    lock.release_write()  # the three waiting readers go before w2
    for t in (*readers, second):
        t.join(5)
    assert sorted(order[:3]) == ["r0", "r1", "r2"] and order[3] == "w2"
