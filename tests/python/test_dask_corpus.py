"""Sharded corpora (rowvoi.dask.corpus): built in shards, searched as one.

The central claim: a sharded corpus answers every search exactly as one
corpus built from the same records -- same artifacts, surfaces and order,
same scores -- in every mode and fusion, with and without filters, surface
restrictions and weights, whatever the shard count (1..7, some shards
empty). Hypothesis draws the records and the shard count; each example
runs a grid of searches on both.

Then: the build is incremental and idempotent (a second run publishes
nothing; an edited artifact touches only its shard), the manifest is the
one commit point (private, atomic, hostile content refused), a reader never
mixes generations, and the BM25 collection statistics the merge rests on
(``BM25Index.set_collection_stats``) are checked at their own level. The
cluster tests (a 2-worker process LocalCluster: an incremental rebuild, a
worker killed mid-search, a reader during a rebuild) are in the long tier.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

pytest.importorskip("dask.dataframe")

from rowvoi.corpus import (
    CorpusNotFound,
    CorpusSource,
    CorpusStore,
    Fields,
    WholeText,
    build,
    search,
)
from rowvoi.dask import (
    ShardedCorpusError,
    _manifest,
    _shard,
    build_sharded,
    corpus as sharded_mod,
    open_sharded,
    shard_of,
)
from rowvoi.index.lexical import BM25Index, merge_stats

WORDS = "wing lift drag pipe heat flow shock wave flutter speed thin fluid the of".split()
EMB = "hashing:32"
VENUES = ["JAS", "JFM", "AIAA"]


def _source(docs, strategy=None):
    """A source whose raw items are dicts: title, body, year, venue."""
    return CorpusSource(
        None,
        docs,
        strategy if strategy is not None else WholeText(text_key="body"),
        embedder=EMB,
        metadata_of=lambda aid, raw: {"year": raw["year"], "venue": raw["venue"]},
        filter_types={"year": "numeric", "venue": "text"},
    )


def _key(hits):
    return [
        (
            h.artifact_id,
            h.surface_kind,
            h.surface_index,
            h.text,
            h.metadata,
            h.score,
            h.explain.get("evidence"),
            None if h.explain["dense"] is None else h.explain["dense"]["rank"],
            None if h.explain["lexical"] is None else h.explain["lexical"]["rank"],
        )
        for h in hits
    ]


def _grid(strategy_fields: bool):
    """(query, search kwargs) pairs: every mode and fusion, filters,
    surfaces, weights, per_artifact on and off."""
    filters = [None, {"year": {"$gte": 1990}}, {"venue": "JFM"}, {"venue": "nowhere"}]
    for mode, fusion in [
        ("lexical", "rrf"),
        ("dense", "rrf"),
        ("hybrid", "rrf"),
        ("hybrid", "blend"),
    ]:
        for flt in filters:
            for per_artifact in (True, False):
                for q in ("wing lift", "heat flow shock wave", "speed", "the of", "zebra"):
                    kw = dict(mode=mode, fusion=fusion, filter=flt, per_artifact=per_artifact, k=4)
                    if not per_artifact:
                        kw["fetch_k"] = 50  # (no cut: see the module notes of _merge)
                    yield q, kw
    if strategy_fields:
        for mode in ("lexical", "hybrid"):
            yield "wing", dict(mode=mode, surfaces="title", k=3)
            yield "wing drag", dict(mode=mode, surface_weights={"title": 2.0, "body": 0.5}, k=3)


docs_st = st.dictionaries(
    st.text(alphabet="abcxyz019", min_size=1, max_size=4),
    st.fixed_dictionaries(
        {
            "title": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
            "body": st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join),
            "year": st.integers(1970, 2020),
            "venue": st.sampled_from(VENUES),
        }
    ),
    min_size=1,
    max_size=18,
)


@pytest.mark.slow  # (10 to 25 sharded builds: the long tier; the quick tier runs the cases below)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(docs=docs_st, shards=st.integers(1, 7), fields=st.booleans())
def test_sharded_search_equals_one_corpus(docs, shards, fields):
    strategy = Fields(("title", "body")) if fields else WholeText(text_key="body")
    one = build(_source(docs, strategy), store=CorpusStore.memory())
    with tempfile.TemporaryDirectory() as root:
        rep = build_sharded(_source(docs, strategy), None, shards=shards, root=root, client="sync")
        assert rep.n_artifacts == len(docs)
        assert sorted(rep.changed_shards) == list(range(shards))
        sc = open_sharded(root, client="local")
        for q, kw in _grid(fields):
            want = search(one, q, **kw)
            got = search(sc, q, **kw)
            assert _key(got) == _key(want), (q, kw)
            if not want:
                assert not got and got.reason == want.reason, (q, kw, got.reason, want.reason)
        # every shard was loaded once, with the collection's statistics
        held = [k for k in _shard.loaded_keys() if k[0] == root]
        assert len(held) == shards


@pytest.mark.parametrize("shards, fields", [(1, False), (4, True), (7, False)])
def test_sharded_search_equals_one_corpus_fixed_cases(shards, fields):
    """The hypothesis test's claim on fixed records (the quick tier): 1, 4
    and 7 shards (7 shards for 12 artifacts: some empty), both strategies."""
    rng = np.random.default_rng(shards)
    docs = {
        f"{c}{i}": {
            "title": " ".join(rng.choice(WORDS, 2)),
            "body": " ".join(rng.choice(WORDS, int(rng.integers(1, 9)))),
            "year": int(rng.integers(1970, 2021)),
            "venue": VENUES[i % 3],
        }
        for i, c in enumerate("abcxyz019abc")
    }
    test_sharded_search_equals_one_corpus.hypothesis.inner_test(docs, shards, fields)


def test_lexical_scores_and_explain_equal_one_index_with_many_shards():
    """BM25 of a sharded corpus uses the collection's statistics: idf and
    df in explain are the collection's, scores equal one index's."""
    rng = np.random.default_rng(3)
    docs = {
        f"d{i:03d}": {
            "title": "t",
            "body": " ".join(rng.choice(WORDS, rng.integers(1, 12))),
            "year": 2000,
            "venue": "JAS",
        }
        for i in range(200)
    }
    one = build(_source(docs), store=CorpusStore.memory())
    root = tempfile.mkdtemp()
    build_sharded(_source(docs), None, shards=5, root=root, client="threads")
    sc = open_sharded(root, client="local")
    for q in ("wing lift drag", "shock wave", "fluid"):
        want = search(one, q, mode="lexical", k=30, explain=True)
        got = search(sc, q, mode="lexical", k=30, explain=True)
        assert _key(got) == _key(want)
        for g, w in zip(got, want):
            # (terms come in the order of each index's term ids)
            def by_term(h):
                return sorted(h.explain["lexical"]["terms"], key=lambda t: t["term"])

            assert by_term(g) == by_term(w)
    # a shard's own statistics would give other scores: the equality is the merge's
    lone = BM25Index()
    lone.add([d["body"] for a, d in docs.items() if shard_of(a, 5) == 0])
    whole = BM25Index()
    whole.add([d["body"] for d in docs.values()])
    assert lone.search("shock wave", k=1).scores[0] != whole.search("shock wave", k=1).scores[0]


def test_dask_bag_and_dataframe_sources_equal_a_corpus_source():
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd

    recs = [
        {
            "id": f"r{i}",
            "text": " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(i % 6 + 1)),
            "year": 1980 + i,
        }
        for i in range(40)
    ]
    mapping = {r["id"]: r for r in recs}
    one = build(
        CorpusSource(
            None,
            mapping,
            WholeText(text_key="text"),
            embedder=EMB,
            metadata_of=lambda a, r: {"year": r["year"]},
            filter_types={"year": "numeric"},
        ),
        store=CorpusStore.memory(),
    )
    roots = []
    for source in (
        db.from_sequence(recs, npartitions=3),
        dd.from_pandas(pd.DataFrame(recs), npartitions=4),
    ):
        roots.append(tempfile.mkdtemp())
        build_sharded(
            source,
            None,
            shards=3,
            root=roots[-1],
            client="sync",
            embedder=EMB,
            metadata_keys=["year"],
            filter_types={"year": "numeric"},
        )
    for root in roots:
        sc = open_sharded(root, client="local")
        for mode in ("lexical", "dense", "hybrid"):
            for flt in (None, {"year": {"$lt": 2000}}):
                want = search(one, "wing lift heat", mode=mode, filter=flt, k=8)
                got = search(sc, "wing lift heat", mode=mode, filter=flt, k=8)
                assert [(h.artifact_id, h.score) for h in got] == [
                    (h.artifact_id, h.score) for h in want
                ]
    bad = db.from_sequence([{"text": "no id"}], npartitions=1)
    with pytest.raises(ValueError, match="'id' field"):
        build_sharded(bad, None, shards=2, root=tempfile.mkdtemp(), client="sync", embedder=EMB)


# ------------------------------------------------------------ incremental


def _docs(n=24):
    return {
        f"a{i}": {
            "title": "x",
            "body": f"{WORDS[i % 12]} {WORDS[(i * 5) % 12]} wing",
            "year": 1970 + i,
            "venue": VENUES[i % 3],
        }
        for i in range(n)
    }


def test_incremental_and_idempotent_build_touches_only_the_edited_shard():
    docs = _docs()
    root = tempfile.mkdtemp()
    first = build_sharded(_source(docs), None, shards=4, root=root, client="sync")
    assert first.generation == 1 and first.changed_shards == [0, 1, 2, 3]
    man = Path(root) / _manifest.MANIFEST
    before = man.read_bytes(), os.stat(man).st_mtime_ns
    again = build_sharded(_source(docs), None, shards=4, root=root, client="sync")
    assert again.changed_shards == [] and again.generation == 1
    assert (man.read_bytes(), os.stat(man).st_mtime_ns) == before  # nothing published
    assert all(r["n_unchanged"] == r["n_seen"] for r in again.shard_reports)
    edited = dict(docs)
    edited["a5"] = dict(docs["a5"], body="supersonic flutter of a panel")
    third = build_sharded(_source(edited), None, shards=4, root=root, client="sync")
    s = shard_of("a5", 4)
    assert third.changed_shards == [s] and third.generation == 2
    assert third.shard_generations == [g + (i == s) for i, g in enumerate(first.shard_generations)]
    sc = open_sharded(root, client="local")
    assert [h.artifact_id for h in search(sc, "supersonic panel", mode="lexical")] == ["a5"]
    del edited["a7"]
    fourth = build_sharded(_source(edited), None, shards=4, root=root, client="sync")
    assert fourth.changed_shards == [shard_of("a7", 4)] and fourth.n_artifacts == len(docs) - 1
    one = build(_source(edited), store=CorpusStore.memory())
    for mode in ("lexical", "dense", "hybrid"):
        assert _key(search(sc, "wing heat", mode=mode, k=30)) == _key(
            search(one, "wing heat", mode=mode, k=30)
        )
    # one stats file: the published generation's
    assert sorted(p.name for p in Path(root).glob("stats-*.json")) == ["stats-000003.json"]


def test_private_files_and_shard_count_fixed():
    root = Path(tempfile.mkdtemp()) / "sub" / "corpus"
    build_sharded(_source(_docs(6)), None, shards=3, root=root, client="sync")
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    for name in (_manifest.MANIFEST, "stats-000001.json"):
        assert stat.S_IMODE(os.stat(root / name).st_mode) == 0o600
    with pytest.raises(ShardedCorpusError, match="has 3 shards, not 4"):
        build_sharded(_source(_docs(6)), None, shards=4, root=root, client="sync")
    with pytest.raises(ValueError, match="shards=0"):
        build_sharded(_source(_docs(6)), None, shards=0, root=root, client="sync")
    with pytest.raises(TypeError, match="source must be"):
        build_sharded(["not", "a source"], None, shards=3, root=root, client="sync")


def test_named_corpus_lives_under_rowvoi_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    build_sharded(_source(_docs(5)), "papers", shards=2, client="sync")
    sc = open_sharded("papers", client="local")
    assert sc.name == "papers" and sc.shards == 2
    info = sc.info()
    assert [r["shard"] for r in info["shard_info"]] == [0, 1]
    assert sum(r["n_artifacts"] for r in info["shard_info"]) == 5 == info["n_artifacts"]
    with pytest.raises(CorpusNotFound, match="no sharded corpus"):
        open_sharded("nothing-here", client="local")


# ---------------------------------------------------------------- manifest


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(shards=0), "shards = 0"),
        (lambda d: d.update(extra=1), "unknown keys"),
        (lambda d: d.pop("route"), "missing keys"),
        (lambda d: d.update(shard_generations=[1, "x"]), "shard_generations"),
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(version=99), "manifest version 99"),
        (lambda d: d.update(stats="../../etc/passwd"), "stats"),
        (lambda d: d.update(generation=True), "'generation' is bool"),
    ],
)
def test_hostile_manifest_is_refused_with_a_clear_error(mutate, message):
    root = Path(tempfile.mkdtemp())
    build_sharded(_source(_docs(4)), None, shards=2, root=root, client="sync")
    doc = json.loads((root / _manifest.MANIFEST).read_text())
    mutate(doc)
    (root / _manifest.MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(ShardedCorpusError, match=message):
        open_sharded(root, client="local")


def test_manifest_not_json_symlink_or_huge_is_refused():
    root = Path(tempfile.mkdtemp())
    build_sharded(_source(_docs(4)), None, shards=2, root=root, client="sync")
    man = root / _manifest.MANIFEST
    good = man.read_bytes()
    man.write_bytes(b"{not json")
    with pytest.raises(ShardedCorpusError, match="is not JSON"):
        open_sharded(root, client="local")
    man.write_bytes(b" " * (_manifest.MAX_BYTES + 1))
    with pytest.raises(ShardedCorpusError, match="bytes"):
        open_sharded(root, client="local")
    other = root / "elsewhere.json"
    other.write_bytes(good)
    man.unlink()
    man.symlink_to(other)
    with pytest.raises(CorpusNotFound):
        open_sharded(root, client="local")  # a symlink is no manifest
    sc_root = Path(tempfile.mkdtemp())
    build_sharded(_source(_docs(4)), None, shards=2, root=sc_root, client="sync")
    sc = open_sharded(sc_root, client="local")
    (sc_root / _manifest.MANIFEST).unlink()
    (sc_root / _manifest.MANIFEST).symlink_to(other)
    with pytest.raises(ShardedCorpusError, match="symbolic link"):
        search(sc, "wing", mode="lexical")
    # a statistics file that does not belong to the manifest
    r3 = Path(tempfile.mkdtemp())
    build_sharded(_source(_docs(4)), None, shards=2, root=r3, client="sync")
    (r3 / "stats-000001.json").write_text(json.dumps({"generation": 7}))
    _shard._STATS.pop(str(r3), None)
    with pytest.raises(ShardedCorpusError, match="statistics of the manifest"):
        search(open_sharded(r3, client="local"), "wing", mode="lexical")


def test_shard_of_is_stable_and_spreads():
    # fixed values: the routing is part of the on-disk format
    assert [shard_of(f"doc-{i}", 7) for i in range(8)] == [
        shard_of(f"doc-{i}", 7) for i in range(8)
    ]
    assert shard_of("wing.md", 4) == 3 and shard_of(12, 5) == shard_of("12", 5)
    with pytest.raises(ValueError, match="empty"):
        shard_of("", 5)
    counts = np.bincount([shard_of(f"id{i}", 4) for i in range(4000)], minlength=4)
    assert counts.min() > 900


# ---------------------------------------------------- readers and rebuilds


def test_reader_never_mixes_generations_during_a_rebuild(monkeypatch):
    """A build that committed its shards but not its manifest: a reader
    keeps answering the published generation from the shards it holds;
    a search that needs a shard's rows (a filter) waits for the manifest,
    and says why when it never comes; the next build publishes."""
    docs = _docs()
    root = tempfile.mkdtemp()
    build_sharded(_source(docs), None, shards=3, root=root, client="sync")
    sc = open_sharded(root, client="local")
    before = _key(search(sc, "wing", mode="lexical", k=30))
    edited = {a: dict(d, body=d["body"] + " extra") for a, d in docs.items()}

    def crash(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(sharded_mod, "write_manifest", crash)
    with pytest.raises(OSError, match="disk full"):
        build_sharded(_source(edited), None, shards=3, root=root, client="sync")
    monkeypatch.undo()
    # every shard committed generation 2; the manifest still names 1
    assert sc.manifest["shard_generations"] == [1, 1, 1]
    assert _key(search(sc, "wing", mode="lexical", k=30)) == before  # from memory
    monkeypatch.setattr(sharded_mod, "PUBLISH_WAIT", 0.2)
    with pytest.raises(ShardedCorpusError, match="has not published its manifest"):
        search(sc, "wing", mode="lexical", filter={"year": {"$gt": 1900}})
    fresh = open_sharded(root, client="local")
    _shard._CACHE.clear()
    with pytest.raises(ShardedCorpusError, match="has not published"):
        search(fresh, "wing", mode="lexical")  # nothing held: cannot serve generation 1
    build_sharded(_source(edited), None, shards=3, root=root, client="sync")
    after = search(sc, "extra", mode="lexical", k=30)
    assert len(after) == len(docs) and sc.generation == 2


# ---------------------------------------------------- collection statistics


def test_collection_stats_checked_and_dropped_by_a_change():
    a, b = BM25Index(), BM25Index()
    a.add(["cats purr", "dogs bark"])
    b.add(["cats and dogs", "birds sing"])
    whole = BM25Index()
    whole.add(["cats purr", "dogs bark", "cats and dogs", "birds sing"])
    stats = merge_stats([a.own_stats(), b.own_stats()])
    assert stats == whole.own_stats() | {"df": stats["df"]}
    assert stats["df"] == whole.own_stats()["df"]
    own = a.search("cats", k=2).scores.tolist()
    a.set_collection_stats(stats)
    assert a.search("cats", k=2).scores.tolist() == whole.search("cats", k=1).scores.tolist()
    e = a.explain("cats", 0).terms[0]
    assert (e.df, e.idf) == (2, whole.explain("cats", 0).terms[0].idf)
    assert a.own_stats()["n_docs"] == 2  # its own statistics still
    a.set_collection_stats(None)
    assert a.search("cats", k=2).scores.tolist() == own
    a.set_collection_stats(stats)
    a.add(["cats again"])  # a change: back to its own statistics
    assert a.explain("cats", 0).terms[0].df == 2 == a.own_stats()["df"]["cat"]
    with pytest.raises(ValueError, match="lacks the term 'purr'"):
        a.set_collection_stats({"n_docs": 9, "total_len": 99, "df": {"cat": 3}})
    with pytest.raises(ValueError, match="n_docs"):
        a.set_collection_stats(dict(stats, n_docs=1))
    with pytest.raises(ValueError, match="total_len"):
        a.set_collection_stats(merge_stats([a.own_stats()]) | {"total_len": 1})
    with pytest.raises(ValueError, match=r"dfs\[\d+\]"):
        a.set_collection_stats(
            merge_stats([a.own_stats()]) | {"df": {"cat": 1, "purr": 1, "dog": 1, "bark": 1}}
        )
    with pytest.raises(ValueError, match="lacks n_docs"):
        a.set_collection_stats({"df": {}})
    with pytest.raises(TypeError, match="mapping"):
        a.set_collection_stats([1, 2])


def test_select_discover_expand_disclose_accept_a_sharded_corpus():
    from rowvoi.corpus import disclose, discover, expand, select

    docs = {
        f"d{i}": {
            "title": f"wing {i}",
            "body": "lift drag. heat flow. shock wave.",
            "year": 2000 + i,
            "venue": VENUES[i % 3],
        }
        for i in range(12)
    }
    strategy = Fields(("title", "body"))
    one = build(_source(docs, strategy), store=CorpusStore.memory())
    root = tempfile.mkdtemp()
    build_sharded(_source(docs, strategy), None, shards=3, root=root, client="sync")
    sc = open_sharded(root, client="local")
    for mode in ("lexical", "hybrid"):
        assert (
            discover(sc, "wing lift", mode=mode).to_dict()
            == discover(one, "wing lift", mode=mode).to_dict()
        )
        a, b = search(sc, "wing 3", mode=mode), search(one, "wing 3", mode=mode)
        assert [h.artifact_id for h in select(a).selected] == [
            h.artifact_id for h in select(b).selected
        ]
        pa, pb = expand(a[0], sc), expand(b[0], one)
        assert (pa.text, pa.artifact_id) == (pb.text, pb.artifact_id)
        assert disclose(select(a), corpus=sc, level="body") == disclose(
            select(b), corpus=one, level="body"
        )


# ----------------------------------------------------------------- cluster


def _big_docs(n, seed=5):
    rng = np.random.default_rng(seed)
    return {
        f"b{i:05d}": {
            "title": "t",
            "body": " ".join(rng.choice(WORDS, rng.integers(2, 10))),
            "year": int(rng.integers(1970, 2020)),
            "venue": VENUES[i % 3],
        }
        for i in range(n)
    }


@pytest.mark.xdist_group("dask-cluster")
@pytest.mark.stress
def test_cluster_build_serve_and_incremental_rebuild(cluster_client):
    c = cluster_client
    docs = _big_docs(400)
    root = tempfile.mkdtemp()
    rep = build_sharded(_source(docs), None, shards=4, root=root, client=c)
    assert rep.n_artifacts == 400 and rep.changed_shards == [0, 1, 2, 3]
    one = build(_source(docs), store=CorpusStore.memory())
    sc = open_sharded(root, client=c)
    queries = ["wing lift", "heat flow", "shock wave speed", "fluid", "thin pipe drag"]
    for mode, fusion in [
        ("lexical", "rrf"),
        ("dense", "rrf"),
        ("hybrid", "rrf"),
        ("hybrid", "blend"),
    ]:
        for flt in (None, {"venue": "JAS"}):
            got = sc.search_batch(queries, mode=mode, fusion=fusion, filter=flt, k=7)
            for q, g in zip(queries, got):
                assert _key(g) == _key(search(one, q, mode=mode, fusion=fusion, filter=flt, k=7))
    # the shards stay loaded where they are served: another batch loads nothing
    loads = sum(c.run(_shard.load_count).values())
    held = sorted(k[1] for v in c.run(_shard.loaded_keys).values() for k in v if k[0] == root)
    assert held == [0, 1, 2, 3]
    sc.search_batch(queries * 4, mode="hybrid", k=5)
    assert sum(c.run(_shard.load_count).values()) == loads
    # an edited artifact: one shard rebuilt, only it reloaded
    edited = dict(docs)
    edited["b00007"] = dict(docs["b00007"], body="supersonic panel flutter")
    rep2 = build_sharded(_source(edited), None, shards=4, root=root, client=c)
    assert rep2.changed_shards == [shard_of("b00007", 4)]
    hits = search(sc, "supersonic panel", mode="lexical")
    assert [h.artifact_id for h in hits] == ["b00007"]
    assert sum(c.run(_shard.load_count).values()) == loads + 1
    one2 = build(_source(edited), store=CorpusStore.memory())
    for q in queries:
        assert _key(search(sc, q, mode="hybrid", k=9)) == _key(search(one2, q, mode="hybrid", k=9))


@pytest.mark.xdist_group("dask-cluster")
@pytest.mark.stress
def test_cluster_worker_killed_mid_search_gives_whole_results(cluster_client):
    import signal
    import threading
    import time

    c = cluster_client
    docs = _big_docs(600, seed=9)
    root = tempfile.mkdtemp()
    build_sharded(_source(docs), None, shards=4, root=root, client=c)
    one = build(_source(docs), store=CorpusStore.memory())
    sc = open_sharded(root, client=c)
    rng = np.random.default_rng(1)
    queries = [" ".join(rng.choice(WORDS, 3)) for _ in range(300)]
    sc.search_batch(queries[:4], mode="lexical", k=5)  # shards loaded on both workers
    pids = c.run(os.getpid)
    victim = sorted(pids)[0]
    out: dict[str, object] = {}

    def run():
        try:
            out["hits"] = sc.search_batch(queries, mode="hybrid", k=5)
        except BaseException as exc:  # noqa: BLE001 - reported below
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.15)
    mid = t.is_alive()
    os.kill(pids[victim], signal.SIGKILL)
    t.join(120)
    assert mid, "the batch ended before the kill: make it larger"
    assert "error" not in out, out.get("error")
    got = out["hits"]
    for i in rng.choice(len(queries), 40, replace=False).tolist():
        assert _key(got[i]) == _key(search(one, queries[i], mode="hybrid", k=5))
    c.wait_for_workers(2, timeout=60)  # (the nanny restarts the killed worker)


@pytest.mark.xdist_group("dask-cluster")
@pytest.mark.stress
def test_cluster_reader_during_a_rebuild_sees_one_generation(cluster_client):
    import threading

    c = cluster_client
    docs = _big_docs(300, seed=4)
    edited = {a: dict(d, body=d["body"] + " extra wing") for a, d in docs.items()}
    root = tempfile.mkdtemp()
    build_sharded(_source(docs), None, shards=4, root=root, client=c)
    old = _key(
        search(
            build(_source(docs), store=CorpusStore.memory()), "extra wing", mode="lexical", k=20
        )
    )
    new = _key(
        search(
            build(_source(edited), store=CorpusStore.memory()), "extra wing", mode="lexical", k=20
        )
    )
    assert old != new
    sc = open_sharded(root, client=c)
    seen = [_key(search(sc, "extra wing", mode="lexical", k=20))]  # (shards loaded)
    stop = threading.Event()

    def read():
        while not stop.is_set():
            seen.append(_key(search(sc, "extra wing", mode="lexical", k=20)))

    t = threading.Thread(target=read)
    t.start()
    try:
        build_sharded(_source(edited), None, shards=4, root=root, client=c)
    finally:
        stop.set()
        t.join(60)
    seen.append(_key(search(sc, "extra wing", mode="lexical", k=20)))
    assert all(s in (old, new) for s in seen)  # never a mix of generations
    assert seen[0] == old and seen[-1] == new


def test_no_worker_left_is_a_clear_error(monkeypatch):
    from rowvoi.dask import corpus as dask_corpus

    asked = []
    monkeypatch.setattr(dask_corpus, "WORKER_WAIT", 0.3)

    class Empty:
        def submit(self, *a, **k):
            raise AssertionError("nothing may be submitted")

        def gather(self, *a, **k):
            raise AssertionError

        def scheduler_info(self, **kw):
            asked.append(1)
            return {"workers": {}}

    root = tempfile.mkdtemp()
    build_sharded(_source(_docs(5)), None, shards=2, root=root, client="sync")
    sc = open_sharded(root, client=Empty())
    with pytest.raises(ShardedCorpusError, match="no Dask worker is alive"):
        search(sc, "wing", mode="lexical")
    assert len(asked) > 1  # (it waited for workers that might be restarting, then gave up)


# --------------------------------------------------------------------- CLI


def test_cli_build_search_info_of_a_sharded_corpus(tmp_path, monkeypatch, capsys):
    from rowvoi.cli.main import main

    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    notes = tmp_path / "notes"
    notes.mkdir()
    texts = {
        "a.md": "Lift and drag of a wing",
        "b.md": "Heat transfer in pipes",
        "c.md": "Wing flutter at speed",
        "d.md": "Shock waves in nozzles",
    }
    for n, t in texts.items():
        (notes / n).write_text(t)
    assert (
        main(["build", "docs", "--files", str(notes), "--embedder", "hashing", "--shards", "3"])
        == 0
    )
    assert "built sharded corpus 'docs'" in capsys.readouterr().out
    assert main(["build", "docs"]) == 0  # registered; rebuilt as sharded; nothing changed
    assert "is up to date (generation 1, 3 shards)" in capsys.readouterr().out
    (notes / "b.md").write_text("Heat transfer in wing pipes")
    assert main(["build", "docs", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["changed_shards"] == [shard_of("b.md", 3)] and rep["generation"] == 2
    assert main(["search", "docs", "wing", "--mode", "lexical", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    one = build(
        CorpusSource(None, {n: (notes / n).read_text() for n in texts}, embedder="hashing"),
        store=CorpusStore.memory(),
    )
    assert [(h["artifact_id"], h["score"]) for h in got["hits"]] == [
        (h.artifact_id, h.score) for h in search(one, "wing", mode="lexical")
    ]
    assert main(["info", "docs"]) == 0
    out = capsys.readouterr().out
    assert "generation 2, 3 shards; 4 artifacts" in out
    assert out.count("  shard ") == 3
    assert main(["info", "docs", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["shard_info"]) == 3
    assert main(["ls", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out) if r["name"] == "docs")
    assert (row["shards"], row["generation"], row["n_artifacts"]) == (3, 2, 4)
    assert main(["discover", "docs", "wing drag", "--mode", "lexical", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    want = discover_of(one, "wing drag")
    assert [r["artifact_id"] for r in found["results"]] == want
    assert main(["build", "plain", "--files", str(notes), "--embedder", "hashing"]) == 0
    capsys.readouterr()
    assert main(["search", "plain", "wing", "--scheduler", "tcp://127.0.0.1:1"]) != 0
    assert "is not sharded" in capsys.readouterr().err
    root = tmp_path / "home" / "corpora" / "docs"
    assert main(["rm", "docs"]) == 0
    assert not root.exists()
    assert main(["search", "docs", "wing"]) != 0  # gone


def discover_of(corpus, query):
    from rowvoi.corpus import discover

    return [r["artifact_id"] for r in discover(corpus, query, mode="lexical").to_dict()["results"]]


def test_a_pass_of_a_replaced_generation_is_told_to_read_the_manifest_again():
    docs = _docs(30)
    root = tempfile.mkdtemp()
    build_sharded(_source(docs), None, shards=3, root=root, client="sync")
    sc = open_sharded(root, client="local")
    search(sc, "wing", mode="lexical")
    old = sc.manifest
    edited = dict(docs)
    edited["a1"] = dict(docs["a1"], body="brand new words")
    rep = build_sharded(_source(edited), None, shards=3, root=root, client="sync")
    search(sc, "wing", mode="lexical")  # the new generation, applied to every shard
    same = next(i for i in range(3) if i not in rep.changed_shards)
    p = sharded_mod.params(
        5, "lexical", "rrf", 60, 0.5, 8.0, None, True, None, None, "auto", False
    )
    with pytest.raises(_shard.ShardMoved, match="replaced by a newer generation"):
        _shard.run_pass(root, same, old, ["wing"], [None], p, None, [50])
    one = build(_source(edited), store=CorpusStore.memory())
    assert _key(search(sc, "brand new", mode="lexical")) == _key(
        search(one, "brand new", mode="lexical")
    )


def test_collapse_fetch_growth_equals_one_corpus():
    """Long chunked documents fill the first fetch with their own surfaces:
    the per-artifact collapse leaves fewer than k artifacts, and the search
    fetches more -- on the merged lists as on one corpus."""
    from rowvoi.corpus import Chunked

    rng = np.random.default_rng(17)
    docs = {}
    for i in range(40):
        n = 400 if i < 6 else 12  # six long documents: many chunks each
        docs[f"c{i:02d}"] = {
            "title": "t",
            "body": " ".join(rng.choice(WORDS[:12], n)),
            "year": 1990 + i,
            "venue": VENUES[i % 3],
        }
    strategy = Chunked(chunk_size=60, overlap=0, text_key="body")
    one = build(_source(docs, strategy), store=CorpusStore.memory())
    root = tempfile.mkdtemp()
    build_sharded(_source(docs, strategy), None, shards=4, root=root, client="sync")
    sc = open_sharded(root, client="local")
    for mode, fusion in [
        ("lexical", "rrf"),
        ("dense", "rrf"),
        ("hybrid", "rrf"),
        ("hybrid", "blend"),
    ]:
        for flt in (None, {"year": {"$lt": 2010}}):
            kw = dict(mode=mode, fusion=fusion, filter=flt, k=12)
            want = search(one, "wing lift shock", **kw)
            assert len(want) == 12
            assert _key(search(sc, "wing lift shock", **kw)) == _key(want), kw


def test_what_a_sharded_search_refuses_it_says_why():
    root = tempfile.mkdtemp()
    build_sharded(_source(_docs(6)), None, shards=2, root=root, client="sync")
    sc = open_sharded(root, client="local")
    with pytest.raises(ValueError, match="exact"):
        search(sc, "wing", index="hnsw")
    with pytest.raises(ValueError, match="rerank"):
        search(sc, "wing", rerank=lambda q, texts: [0.0] * len(texts))
    with pytest.raises(ValueError, match="k=0"):
        search(sc, "wing", k=0)
    with pytest.raises(TypeError, match="filter must be a mapping"):
        search(sc, "wing", filter="year > 3")
    from rowvoi.errors import QueryError

    with pytest.raises(QueryError):
        search(sc, "wing", mode="lexical", filter={"nope": 1})
    with pytest.raises(ValueError, match="client="):
        open_sharded(root, client="cluster")


def test_a_filter_field_some_shards_never_saw():
    """A filter field only some artifacts have: shards without any of them
    match nothing (as those artifacts match nothing on one corpus); a field
    no shard knows is the error one corpus gives; $exists on such a field
    stays an error (a shard without the field cannot tell its absence)."""
    from rowvoi.errors import QueryError

    docs = {f"d{i}": {"text": "wing lift", "year": 2000 + i} for i in range(8)}

    def src():
        return CorpusSource(
            None,
            docs,
            WholeText(text_key="text"),
            embedder=EMB,
            metadata_of=lambda a, r: {"year": r["year"]} if a in ("d3", "d5") else {},
        )

    one = build(src(), store=CorpusStore.memory())
    root = tempfile.mkdtemp()
    build_sharded(src(), None, shards=4, root=root, client="sync")
    assert len({shard_of(a, 4) for a in ("d3", "d5")}) < 4  # some shard lacks the field
    sc = open_sharded(root, client="local")
    for flt in ({"year": {"$gt": 1}}, {"year": 2005}):
        for mode in ("lexical", "hybrid"):
            assert _key(search(sc, "wing", mode=mode, filter=flt)) == _key(
                search(one, "wing", mode=mode, filter=flt)
            )
    with pytest.raises(QueryError, match="unknown column"):
        search(sc, "wing", mode="lexical", filter={"nope": 1})
    with pytest.raises(QueryError, match="unknown column"):
        search(sc, "wing", mode="lexical", filter={"year": {"$exists": False}})
