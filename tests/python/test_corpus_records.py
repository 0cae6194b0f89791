"""The in-memory record table and the SQL-free search of an unchanged
generation: same hits as the rows in docs.sqlite, no SQL at all (the
commit check reads SQLite's WAL-index header; ``PRAGMA data_version`` where
it cannot), and a new commit is never missed."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rowvoi.corpus import (
    Chunked,
    CorpusStore,
    build,
    from_mapping,
    open_corpus,
    search,
)
from rowvoi.corpus.storage import records as records_mod, store as store_mod, wal as wal_mod
from rowvoi.corpus.storage.records import RecordTable
from rowvoi.errors import IndexFormatError

DOCS = {
    f"d{i:02d}": {
        "text": " ".join(
            ["Lift and drag of a thin wing.", "Heat transfer in pipes.", "Shock waves on cones."][
                i % 3 :
            ]
            + [f"Note {i} on flutter of panels."] * (1 + i % 2)
        ),
        "year": 1950 + i,
        "venue": ["JAS", "AIAA", "NACA"][i % 3],
    }
    for i in range(30)
}
# identical texts in several artifacts: equal scores, ordered by artifact id
DOCS.update({f"twin{i}": {"text": "Wing flutter at high speed.", "year": 1990} for i in range(4)})


def make_source(docs=DOCS):
    return from_mapping(
        docs,
        name="recs",
        embedder="hashing:32",
        strategy=Chunked(chunk_size=40, overlap=0, text_key="text"),
        metadata_of=lambda aid, raw: {k: raw[k] for k in ("year", "venue") if k in raw},
    )


@pytest.fixture
def corpus():
    return build(make_source(), store=CorpusStore.memory())


def test_table_matches_the_rows(corpus):
    with corpus.store.snapshot() as snap:
        table = RecordTable.load(snap)
        ids = [r[0] for r in snap.con.execute("SELECT id FROM records ORDER BY id")]
        rows = snap.rows(ids)
    assert table.has_text and table.ids.tolist() == ids
    assert table.generation == corpus.info()["generation"]
    got = table.hits_fields(table.positions(ids))
    for rid, (artifact_id, kind, surface_index, text, meta) in zip(ids, got):
        row = rows[rid]
        want = json.loads(row["metadata"])
        want.update(json.loads(row["filter_fields"]))
        assert (artifact_id, kind, surface_index, text, meta) == (
            row["artifact_id"],
            row["kind"],
            row["surface_index"],
            row["text"],
            want,
        )
    assert any(m for *_, m in got)  # filter fields reached the hits
    # the artifact rank orders as the artifact ids do
    order = sorted(range(len(ids)), key=lambda i: (got[i][0], got[i][2]))
    assert np.lexsort((table.surface, table.art)).tolist() == order
    with pytest.raises(IndexFormatError, match="not among its records"):
        table.positions([ids[-1] + 1000])
    assert table.nbytes > 0 and "records=" in repr(table)


@pytest.mark.parametrize("stride", [1, 3, 5000])
def test_positions_by_table_and_by_search_agree(stride):
    """Positions of dense ids come from a table indexed by id, of sparse
    ones (ids past 4 per record) from a binary search: the same
    positions either way, in any order, and the same refusal of an id
    that is no record (between two ids, past the last, negative)."""
    table = RecordTable(1)
    table.ids = np.arange(7, 7 + 200 * stride, stride, dtype=np.int64)
    rng = np.random.default_rng(stride)
    want = rng.permutation(200)[:150]
    got = table.positions(table.ids[want])
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    assert isinstance(table._pos_of, np.ndarray) == (stride < 5000)
    assert table.positions([]).tolist() == []
    bad = [int(table.ids[-1]) + 1, -1, 6]
    if stride > 1:
        bad.append(int(table.ids[3]) + 1)
    for b in bad:
        with pytest.raises(IndexFormatError, match=f"record id {b} is in the index files"):
            table.positions([int(table.ids[0]), b])


def test_table_over_budget_holds_no_texts(corpus):
    with corpus.store.snapshot() as snap:
        small = RecordTable.load(snap, text_budget=10)
        full = RecordTable.load(snap)
    assert not small.has_text and full.has_text
    assert small.nbytes < full.nbytes
    assert small.ids.tolist() == full.ids.tolist()
    assert small.art.tolist() == full.art.tolist()
    with pytest.raises(RuntimeError, match="no texts"):
        small.hit_fields(0)


def _table_state(table):
    strings = [table._artifact_ids, table._filter_fields, table._texts, table._metadata]
    return (
        [a.tolist() for a in (table.ids, table.art, table.surface, table.kind)],
        table.kinds,
        table.one_per_artifact,
        [(s.blob, s.offsets.tolist()) for s in strings],
    )


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_a_table_read_in_small_batches_is_the_same_table(monkeypatch, batch):
    # kinds first seen out of their sorted order ("zeta" first, then "body",
    # "alpha"), across batches: each record keeps its own kind
    from rowvoi.corpus import Fields

    docs = {
        f"a{i:02d}": {"zeta": f"zeta {i}", "body": f"body {i} wing", "alpha": f"alpha {i}"}
        for i in range(9)
    }
    c = build(
        from_mapping(docs, embedder="hashing:16", strategy=Fields(("zeta", "body", "alpha"))),
        store=CorpusStore.memory(),
    )
    with c.store.snapshot() as snap:
        whole = RecordTable.load(snap)
        monkeypatch.setattr(records_mod, "_BATCH", batch)
        small = RecordTable.load(snap)
        kinds = [r[0] for r in snap.con.execute("SELECT kind FROM records ORDER BY id")]
    assert whole.kinds == ["alpha", "body", "zeta"] and kinds[0] == "zeta"
    assert [small.kinds[k] for k in small.kind] == kinds
    assert _table_state(small) == _table_state(whole)


def _load_counting(snap, **kw):
    """The table, and whether the texts' character count was queried."""
    statements = []
    snap.con.set_trace_callback(statements.append)
    try:
        table = RecordTable.load(snap, **kw)
    finally:
        snap.con.set_trace_callback(None)
    return table, any("sum(length(text))" in s for s in statements)


def test_files_under_the_budget_skip_the_count_and_the_sizes_still_decide(corpus, monkeypatch):
    with corpus.store.snapshot() as snap:
        # docs.sqlite (and its log) under the budget: no count is needed
        full, counted = _load_counting(snap)
        assert full.has_text and not counted
        # over it: the count rules the texts out before any is decoded
        small, counted = _load_counting(snap, text_budget=10)
        assert not small.has_text and counted
        # files that look small (sized wrongly) skip the count, and the
        # texts' sizes as read still keep them out
        monkeypatch.setattr(records_mod, "_stored_bytes", lambda path: 0)
        fooled, counted = _load_counting(snap, text_budget=10)
        assert not fooled.has_text and not counted
    assert fooled.ids.tolist() == full.ids.tolist()


def test_stored_bytes_counts_the_log_and_gives_up_on_what_it_cannot_size(tmp_path):
    db = tmp_path / "docs.sqlite"
    db.write_bytes(b"x" * 100)
    assert records_mod._stored_bytes(db) == 100
    (tmp_path / "docs.sqlite-wal").write_bytes(b"y" * 30)
    assert records_mod._stored_bytes(db) == 130
    assert records_mod._stored_bytes(tmp_path / "missing.sqlite") == float("inf")


CASES = [
    {"mode": "dense"},
    {"mode": "lexical"},
    {"mode": "hybrid"},
    {"mode": "hybrid", "fusion": "blend"},
    {"mode": "hybrid", "per_artifact": False, "k": 25},
    {"mode": "lexical", "surface_weights": {"chunk": 0.5}, "explain": True},
    {"mode": "hybrid", "filter": {"year": {"$gte": 1960}}},
    {"mode": "dense", "surfaces": "chunk", "k": 3},
    {"mode": "hybrid", "fusion": "blend", "index": "flat", "fetch_k": 60},
]
QUERIES = ["wing flutter", "heat transfer pipes", "shock cone", "note 7 panels", "zzz"]


def signature(c, kw):
    return [search(c, q, **kw) for q in QUERIES]


@pytest.mark.parametrize("kw", CASES)
def test_hits_same_from_memory_and_from_sql(corpus, monkeypatch, kw):
    fast = signature(corpus, kw)
    again = signature(corpus, kw)  # the second time from memory
    monkeypatch.setattr(records_mod, "TEXT_BUDGET", 0)
    slow = signature(open_corpus(corpus.name, store=corpus.store), kw)
    assert fast == again == slow
    assert any(fast)


def test_an_unchanged_generation_reads_no_sql(corpus):
    search(corpus, "wing", mode="hybrid")  # loads the generation
    con = corpus.store.connection()
    statements = []
    con.set_trace_callback(statements.append)
    try:
        for mode in ("dense", "lexical", "hybrid"):
            assert search(corpus, "wing flutter", mode=mode)
        search(corpus, "wing", mode="hybrid", filter={"venue": "JAS"})  # filters: SQL
    finally:
        con.set_trace_callback(None)
    # the commit check reads the WAL-index header: no statement at all
    assert statements[0] == "BEGIN"
    assert any("filter_values" in s for s in statements)


def test_without_the_wal_header_the_check_is_data_version(corpus, monkeypatch):
    monkeypatch.setattr(store_mod, "wal_header", lambda key: None)
    store = CorpusStore(corpus.store.path, name=corpus.name)
    reader = open_corpus(corpus.name, store=store)
    search(reader, "wing", mode="hybrid")  # loads the generation
    con = store.connection()
    statements = []
    con.set_trace_callback(statements.append)
    try:
        for mode in ("dense", "lexical", "hybrid"):
            assert search(reader, "wing flutter", mode=mode) == search(
                corpus, "wing flutter", mode=mode
            )
    finally:
        con.set_trace_callback(None)
    assert statements == ["PRAGMA data_version"] * 3


@pytest.mark.parametrize("wal_header", [True, False])
def test_committed_generation_follows_other_connections(tmp_path, monkeypatch, wal_header):
    if not wal_header:
        monkeypatch.setattr(store_mod, "wal_header", lambda key: None)
    store = CorpusStore(tmp_path / "c")
    assert not store.exists()
    build(make_source(), store=store)
    assert store.committed_generation() is None  # no snapshot in this thread yet
    with store.snapshot() as snap:
        g = snap.generation
    assert store.committed_generation() == g
    # a build through another store object (another connection) commits
    other = CorpusStore(tmp_path / "c")
    build(make_source({**DOCS, "new": {"text": "Hypersonic inlet"}}), store=other)
    assert store.committed_generation() is None
    with store.snapshot() as snap:
        assert snap.generation == g + 1
    assert store.committed_generation() == g + 1
    store.close()
    assert store.committed_generation() is None  # the thread's connection is gone


def test_a_new_commit_is_never_missed(tmp_path):
    path = tmp_path / "c"
    build(make_source(), store=CorpusStore(path))
    reader = open_corpus(store=CorpusStore(path))
    for mode in ("dense", "lexical", "hybrid"):
        assert "new" not in [h.artifact_id for h in search(reader, "hypersonic inlet", mode=mode)]
    # another builder commits; the reader's next search sees it at once
    build(make_source({**DOCS, "new": {"text": "Hypersonic inlet"}}), store=CorpusStore(path))
    for mode in ("dense", "lexical", "hybrid"):
        top = search(reader, "hypersonic inlet", mode=mode, k=1)
        assert top[0].artifact_id == "new", mode
    # and a deletion
    build(make_source(), store=CorpusStore(path))
    assert "new" not in [h.artifact_id for h in search(reader, "hypersonic inlet", k=50)]


def test_the_commit_check_reads_the_wal_header_here(corpus):
    # on this platform (Linux, SQLite in WAL mode) the header is mapped: the
    # fallback is tested above by switching it off
    corpus.store.connection()
    assert isinstance(corpus.store._local.wal, wal_mod.WalHeader)


def _header(change: int, *, init: int = 1, version: int = wal_mod._WAL_VERSION) -> bytes:
    head = bytearray(wal_mod._WAL_HEADER)
    head[0:4] = version.to_bytes(4, sys.byteorder)
    head[8:12] = change.to_bytes(4, sys.byteorder)
    head[12] = init
    return bytes(head)


def test_wal_header_reader_accepts_only_a_whole_valid_header(tmp_path):
    shm = tmp_path / "x-shm"
    shm.write_bytes(_header(1)[:40])
    fd = os.open(shm, os.O_RDWR)
    try:
        reader = wal_mod.WalHeader(fd)
        assert reader.token() is None  # too short
        for bad in (_header(1, init=0), _header(1) + _header(2)):
            os.pwrite(fd, bad * (2 if len(bad) == 48 else 1), 0)
            assert reader.token() is None
        os.pwrite(fd, _header(1) * 2, 0)
        token = reader.token()
        assert token == _header(1) * 2 and reader.unchanged(token)
        # a commit mid-publication: the second copy first, then the first
        os.pwrite(fd, _header(2), wal_mod._WAL_HEADER)
        assert reader.token() is None and not reader.unchanged(token)
        os.pwrite(fd, _header(2), 0)
        assert reader.token() == _header(2) * 2 and not reader.unchanged(token)
        os.ftruncate(fd, 0)  # shrunk: "changed", never a fault
        assert reader.token() is None and not reader.unchanged(token)
    finally:
        os.close(fd)


def test_an_unknown_wal_index_layout_falls_back(tmp_path):
    db = tmp_path / "docs.sqlite"
    (tmp_path / "docs.sqlite-shm").write_bytes(_header(1, version=3007001) * 2 + bytes(40))
    key = wal_mod._pin(db)
    try:
        assert wal_mod.wal_header(key) is None
        (tmp_path / "docs.sqlite-shm").write_bytes(_header(1) * 2 + bytes(40))
        assert wal_mod.wal_header(key) is None  # the same file: decided once
    finally:
        wal_mod._unpin(key)
    assert key not in wal_mod._SHM_FILES


def test_a_wal_restart_is_a_change_but_not_a_new_generation(tmp_path):
    build(make_source(), store=CorpusStore(tmp_path / "c"))
    store = CorpusStore(tmp_path / "c")
    with store.snapshot() as snap:
        g = snap.generation
    assert store.committed_generation() == g
    builder = CorpusStore(tmp_path / "c")
    writer = builder.writer_connection()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # resets the WAL index header
    assert store.committed_generation() is None
    with store.snapshot() as snap:
        assert snap.generation == g
    assert store.committed_generation() == g
    builder.close_writer()


_COMMITTER = """
import sys
sys.path.insert(0, {tests!r})
from test_corpus_records import DOCS, make_source
from rowvoi.corpus import CorpusStore, build
store = CorpusStore({path!r})
for i in range({rounds}):
    docs = dict(DOCS)
    docs["new"] = {{"text": "Hypersonic inlet number %d" % i}}
    build(make_source(docs), store=store)
    print(i, flush=True)  # committed; wait until the reader has looked
    if sys.stdin.readline().strip() != "ok":
        sys.exit(3)
"""


def test_every_commit_of_another_process_is_seen_by_the_next_search(tmp_path):
    path = tmp_path / "c"
    build(make_source(), store=CorpusStore(path))
    reader = open_corpus(store=CorpusStore(path))
    assert search(reader, "wing flutter", mode="lexical")  # the generation is loaded
    rounds = 40
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _COMMITTER.format(tests=os.path.dirname(__file__), path=str(path), rounds=rounds),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for i in range(rounds):
            line = proc.stdout.readline()
            assert line.strip() == str(i), proc.stderr.read()
            # the commit is published: the very next search must read it
            for mode in ("lexical", "dense"):
                top = search(reader, f"hypersonic inlet number {i}", mode=mode, k=1)
                assert top[0].text == f"Hypersonic inlet number {i}", (i, mode)
            proc.stdin.write("ok\n")
            proc.stdin.flush()
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read()


# SQLite's unix VFS holds a shared lock on this byte of the -shm file while
# a connection of the process has it open (os_unix.c, UNIX_SHM_DMS): a
# process that can lock it exclusively takes itself for the only user and
# truncates the file -- under the other processes' maps of it
_DMS_BYTE = 128
_LOCK_PROBE = f"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, {_DMS_BYTE}, 0)
except OSError:
    print("held")
else:
    print("free")
"""


def _dms(shm):
    out = subprocess.run(
        [sys.executable, "-c", _LOCK_PROBE, str(shm)], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_the_header_check_never_drops_sqlites_locks(tmp_path):
    # closing any descriptor of a file drops every POSIX lock the process
    # holds on it: the header check's descriptors must stay open while any
    # connection of ours is
    import gc
    import threading

    path = tmp_path / "c"
    build(make_source(), store=CorpusStore(path))
    shm = path / "docs.sqlite-shm"
    a = CorpusStore(path)
    reader = open_corpus(store=a)
    assert search(reader, "wing flutter")
    assert isinstance(a._local.wal, wal_mod.WalHeader)
    assert _dms(shm) == "held"
    # another store object on the same corpus opens and closes its connection
    b = CorpusStore(path)
    assert search(open_corpus(store=b), "wing flutter")
    b.close()
    del b
    gc.collect()
    assert _dms(shm) == "held"
    # a thread's connection, closed when the thread ends
    t = threading.Thread(target=lambda: search(reader, "heat transfer", mode="hybrid"))
    t.start()
    t.join()
    gc.collect()
    assert _dms(shm) == "held"
    # a build through another store (its writer connection), then closed
    builder = CorpusStore(path)
    build(make_source({**DOCS, "new": {"text": "Hypersonic inlet"}}), store=builder)
    builder.close_writer()
    assert _dms(shm) == "held"
    assert search(reader, "hypersonic inlet", k=1)[0].artifact_id == "new"
    # all closed: the check's descriptors are closed too
    key = os.path.realpath(path / "docs.sqlite")
    assert wal_mod._SHM_FILES[key][0] >= 1
    a.close()
    del builder
    gc.collect()
    assert key not in wal_mod._SHM_FILES
    # (SQLite's last connection deletes the file; else nobody locks it now)
    assert not shm.exists() or _dms(shm) == "free"
