"""Corpus builds: incremental, idempotent, identity changes, bad input."""

import datetime as dt
import os
import random

import numpy as np
import pytest

from rowvoi.corpus import (
    Chunked,
    CorpusEmpty,
    CorpusLocked,
    CorpusNotFound,
    CorpusStore,
    EmbedderError,
    EmbedderMismatch,
    EmbedderUnavailable,
    Fields,
    NoLedgerEntry,
    WholeText,
    build,
    from_files,
    from_mapping,
    open_corpus,
    records_for_artifact,
    search,
)
from rowvoi.errors import QueryError
from rowvoi.index.embed import HashingEmbedder


class Counting:
    """A hashing embedder with an id that counts the texts it embeds."""

    def __init__(self, dim=64, name="counting-v1"):
        self.inner = HashingEmbedder(dim=dim)
        self.embedder_id = f"{name}:{dim}"
        self.texts = []

    def __call__(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(list(texts))


DOCS = {
    "wing.md": "Lift and drag of a thin wing at low speed.",
    "pipe.md": "Heat transfer to a turbulent fluid in a heated pipe.",
    "shock.md": "Oblique shock waves on a wedge in supersonic flow.",
    "flutter.md": "Flutter of a cantilever wing: an aeroelastic instability.",
    "nozzle.md": "Flow through a convergent divergent nozzle, choked at the throat.",
}


def write_docs(root, docs):
    for name, text in docs.items():
        (root / name).write_text(text)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def lexical_ids(corpus, query, **kw):
    return [h.artifact_id for h in search(corpus, query, mode="lexical", k=20, **kw)]


def test_second_build_does_nothing(tmp_path, home):
    root = tmp_path / "docs"
    root.mkdir()
    write_docs(root, DOCS)
    emb = Counting()
    src = from_files(root, name="notes", embedder=emb)
    c1 = build(src)
    assert c1.last_build.n_new == 5 and len(emb.texts) == 5
    assert c1.last_build.generation == 1 and c1.last_build.compacted
    before = {p.name: p.stat().st_mtime_ns for p in c1.store.files()}
    c2 = build(src)
    r = c2.last_build
    assert len(emb.texts) == 5, "a no-op build embedded something"
    assert (r.texts_embedded, r.embed_calls, r.n_unchanged, r.generation) == (0, 0, 5, 1)
    assert not r.changed
    after = {p.name: p.stat().st_mtime_ns for p in c2.store.files() if p.name != "build.lock"}
    assert {k: v for k, v in before.items() if k in after and k != "build.lock"} == after
    assert [h.artifact_id for h in search(c2, "supersonic wedge", mode="lexical", k=1)] == [
        "shock.md"
    ]


def test_edit_reembeds_only_that_artifact(tmp_path, home):
    root = tmp_path / "docs"
    root.mkdir()
    write_docs(root, DOCS)
    emb = Counting()
    src = from_files(root, name="notes", embedder=emb)
    build(src)
    emb.texts.clear()
    (root / "pipe.md").write_text("Boundary layer suction on a swept wing.")
    c = build(src)
    assert emb.texts == ["Boundary layer suction on a swept wing."]
    r = c.last_build
    assert (r.n_changed, r.n_unchanged, r.records_added, r.records_removed) == (1, 4, 1, 1)
    assert not r.compacted  # a small change goes to the delta
    assert lexical_ids(c, "suction") == ["pipe.md"]
    assert lexical_ids(c, "turbulent heated") == []
    hits = search(c, "Boundary layer suction on a swept wing.", k=1)
    assert hits[0].artifact_id == "pipe.md" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    # a reader opening afresh sees the same generation (base files + delta rows)
    again = open_corpus("notes", embedder=emb)
    assert lexical_ids(again, "suction") == ["pipe.md"]


def test_delete_prunes_every_index(tmp_path, home):
    root = tmp_path / "docs"
    root.mkdir()
    write_docs(root, DOCS)
    emb = Counting()
    src = from_files(root, name="notes", embedder=emb)
    c = build(src)
    shock_vec = emb.inner.embed([DOCS["shock.md"]])[0]
    (root / "shock.md").unlink()
    c = build(src)
    assert c.last_build.n_deleted == 1 and c.last_build.records_removed == 1
    assert lexical_ids(c, "oblique shock wedge supersonic") == []
    dense = search(c, "x", k=10, query_vector=shock_vec)
    assert "shock.md" not in [h.artifact_id for h in dense] and len(dense) == 4
    assert search(c, "wedge", mode="hybrid", k=10, filter={"name": "shock.md"}) == []
    with pytest.raises(NoLedgerEntry):
        records_for_artifact(c, "shock.md")
    info = c.info()
    assert (info["n_artifacts"], info["n_records"], info["n_tombstones"]) == (4, 4, 1)
    # and after a compaction, from the index files alone
    c = build(src, compact=True)
    assert c.last_build.compacted and c.info()["n_tombstones"] == 0
    assert lexical_ids(c, "oblique shock wedge supersonic") == []
    # keep_missing: full=False keeps artifacts the source lost
    (root / "pipe.md").unlink()
    c = build(src, full=False)
    assert "pipe.md" in lexical_ids(c, "turbulent heated pipe")


def test_embedder_change_rebuilds_never_mixes(tmp_path, home):
    src = from_mapping(DOCS, name="notes", embedder=Counting(dim=64))
    build(src)
    other = Counting(dim=32, name="other")
    c = build(src, embedder=other)
    r = c.last_build
    assert r.rebuild == "embedder changed" and len(other.texts) == 5 and r.texts_embedded == 5
    assert c.info()["embedder"] == {"id": "other:32", "dim": 32, "spec": None}
    # the old embedder is refused when querying; the callable must be passed again
    with pytest.raises(EmbedderMismatch, match="built with embedder 'other:32'"):
        open_corpus("notes", embedder=Counting(dim=64))
    with pytest.raises(EmbedderUnavailable, match="pass it again"):
        search("notes", "wing", k=1)
    assert search("notes", "wing", mode="lexical", k=1)  # lexical needs no embedder
    hits = search(open_corpus("notes", embedder=other), "thin wing lift", k=1)
    assert hits[0].artifact_id == "wing.md"


def test_builtin_embedder_is_recreated_from_its_id(home):
    build(from_mapping(DOCS, name="notes", embedder="hashing:48"))
    c = open_corpus("notes")
    assert c.embedder.embedder_id == HashingEmbedder(dim=48).embedder_id
    assert search(c, "oblique shock", k=1)[0].artifact_id == "shock.md"
    with pytest.raises(EmbedderMismatch):
        open_corpus("notes", embedder="hashing:32")


def test_strategy_change_reuses_vectors_by_content(home):
    emb = Counting()
    build(from_mapping(DOCS, name="notes", embedder=emb, strategy=WholeText()))
    emb.texts.clear()
    # short texts: one chunk each, identical to the whole text -- all cache hits
    c = build(
        from_mapping(
            DOCS, name="notes", embedder=emb, strategy=Chunked(chunk_size=500, overlap=50)
        )
    )
    r = c.last_build
    assert r.rebuild == "strategy changed" and r.n_new == 5
    assert emb.texts == [] and r.cache_hits == 5 and r.texts_embedded == 0
    assert {h.surface_kind for h in search(c, "wing", mode="lexical")} == {"chunk"}
    # a real change of the texts embeds only the new texts
    c = build(
        from_mapping(DOCS, name="notes", embedder=emb, strategy=Chunked(chunk_size=30, overlap=0))
    )
    assert 0 < c.last_build.texts_embedded == len(emb.texts)
    assert all(h.surface_kind == "chunk" for h in search(c, "wing", mode="lexical"))


def fresh_results(docs, emb, queries, strategy):
    c = build(from_mapping(docs, embedder=emb, strategy=strategy), store=CorpusStore.memory())
    return results(c, queries)


def results(c, queries):
    out = []
    for q in queries:
        for mode in ("lexical", "dense", "hybrid"):
            for fusion in ("rrf", "blend"):
                # fetch_k above the corpus size: no kernel cut, so ties are
                # ordered by (artifact id, surface index) whatever the history
                hits = search(
                    c, q, mode=mode, fusion=fusion, k=8, per_artifact=False, fetch_k=5000
                )
                out.append([(h.artifact_id, h.surface_index, round(h.score, 5)) for h in hits])
    return out


@pytest.mark.parametrize("compact", [False, None, True])
def test_incremental_equals_fresh_build(home, compact):
    rng = random.Random(7)
    words = (
        "wing lift drag shock flow pipe heat nozzle flutter wedge boundary layer "
        "supersonic subsonic turbulent laminar pressure"
    ).split()
    docs = {
        f"d{i}": " ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) for i in range(40)
    }
    emb = Counting(dim=32)
    strategy = Chunked(chunk_size=60, overlap=10)
    queries = ["wing lift", "turbulent boundary layer", "shock wedge supersonic", "heat"]
    for step in range(6):
        c = build(from_mapping(docs, name="inc", embedder=emb, strategy=strategy), compact=compact)
        assert results(c, queries) == fresh_results(docs, emb, queries, strategy), step
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            key = rng.choice(sorted(docs))
            if op < 0.4:
                docs[key] = " ".join(rng.choice(words) for _ in range(rng.randint(3, 40)))
            elif op < 0.7 and len(docs) > 5:
                del docs[key]
            else:
                docs[f"n{step}-{rng.randint(0, 10**6)}"] = " ".join(
                    rng.choice(words) for _ in range(rng.randint(3, 40))
                )


def test_empty_and_unknown_corpora(tmp_path, home):
    with pytest.raises(CorpusNotFound, match="build it first"):
        open_corpus("ghost")
    with pytest.raises(CorpusNotFound):
        search("ghost", "x")
    with pytest.raises(CorpusNotFound):
        records_for_artifact("ghost", "x")
    assert not (home / "corpora" / "ghost").exists()
    c = build(from_mapping({}, name="void", embedder="hashing:16"))
    with pytest.raises(
        CorpusEmpty, match="corpus 'void' is empty; build it first: rowvoi build void"
    ):
        search(c, "anything")
    c = build(from_mapping({"a": "   "}, name="blank", embedder="hashing:16"))
    with pytest.raises(CorpusEmpty):
        search(c, "anything", mode="lexical")


def test_bad_search_arguments(home):
    c = build(from_mapping(DOCS, name="notes", embedder="hashing:16"))
    for kw, exc in [
        ({"k": 0}, ValueError),
        ({"k": -1}, ValueError),
        ({"k": 1.5}, TypeError),
        ({"mode": "semantic"}, ValueError),
        ({"fusion": "max"}, ValueError),
        ({"index": "ivf"}, ValueError),
        ({"alpha": 1.5}, ValueError),
        ({"rrf_k": 0}, ValueError),
        ({"rrf_k": 2**62 + 1}, ValueError),  # (rrf_k + rank must stay exact in int64)
        ({"bm25_sat_k": 0}, ValueError),
        ({"fetch_k": 3, "k": 5}, ValueError),
        ({"surface_weights": {"document": -1}}, ValueError),
        ({"surface_weights": {"document": float("nan")}}, ValueError),
        ({"filter": "year > 3"}, TypeError),
        ({"surfaces": 3}, TypeError),
    ]:
        with pytest.raises(exc):
            search(c, "wing", **kw)
    with pytest.raises(
        ValueError, match="mode='semantic': expected one of 'dense', 'lexical', 'hybrid'"
    ):
        search(c, "wing", mode="semantic")
    with pytest.raises(TypeError):
        search(c, None)


def test_callable_without_id_is_refused_for_stored_corpora(home):
    fn = HashingEmbedder(dim=8).embed
    with pytest.raises(EmbedderError, match="needs an id"):
        build(from_mapping(DOCS, name="notes", embedder=lambda t: fn(list(t))))
    assert not (home / "corpora" / "notes" / "docs.sqlite").exists()
    # in memory, an id-less callable gets an id of its own: two never share one
    c1 = build(from_mapping(DOCS, embedder=lambda t: fn(list(t))))
    c2 = build(from_mapping(DOCS, embedder=lambda t: fn(list(t))))
    assert c1.embedder_id != c2.embedder_id
    with pytest.raises(EmbedderError, match="unknown embedder spec"):
        build(from_mapping(DOCS, name="notes", embedder="bert"))
    with pytest.raises(EmbedderError, match="hashing:256"):
        build(from_mapping(DOCS, name="notes", embedder="hashing:zero"))


def test_embedder_returning_wrong_shapes(home):
    with pytest.raises(EmbedderMismatch, match="one row per text"):
        build(from_mapping(DOCS, embedder=(lambda t: np.ones((1, 4)), "bad-rows")))
    with pytest.raises(EmbedderMismatch, match="NaN"):
        build(from_mapping(DOCS, embedder=(lambda t: np.full((len(t), 4), np.nan), "nan")))


def test_locked_corpus_is_refused(home):
    c = build(from_mapping(DOCS, name="notes", embedder="hashing:16"))
    with c.store.lock():
        with pytest.raises(CorpusLocked, match=f"process {os.getpid()}"):
            build(from_mapping(DOCS, name="notes", embedder="hashing:16"))
        # readers are never refused
        assert lexical_ids(c, "nozzle throat") == ["nozzle.md"]
    build(from_mapping(DOCS, name="notes", embedder="hashing:16"))


FIELDS_DOCS = {
    "p1": {
        "text": "Lift of a swept wing",
        "year": 1958,
        "venue": "JAS",
        "published": dt.date(1958, 3, 1),
        "pages": 12.5,
        "open": True,
    },
    "p2": {
        "text": "Drag of a delta wing",
        "year": 1963,
        "venue": "jas",
        "published": dt.date(1963, 7, 9),
        "pages": 8,
        "open": False,
    },
    "p3": {
        "text": "Shock tube heat transfer",
        "year": 1970,
        "venue": "AIAA",
        "published": None,
        "pages": 20,
        "open": True,
    },
    "p4": {
        "text": "Wing flutter in a wind tunnel",
        "year": None,
        "venue": "NACA TN",
        "published": dt.date(1955, 1, 1),
        "pages": None,
        "open": False,
    },
}


def test_filters_are_typed_and_exact(home):
    keys = ["year", "venue", "published", "pages", "open"]
    src = from_mapping(
        FIELDS_DOCS,
        name="papers",
        embedder="hashing:32",
        strategy=WholeText(text_key="text"),
        metadata_of=lambda aid, raw: {k: raw[k] for k in keys},
        filter_types={"venue": "categorical"},
    )
    c = build(src)
    info = c.info()
    assert info["fields"] == {
        "open": "numeric",
        "pages": "numeric",
        "published": "date",
        "venue": "categorical",
        "year": "numeric",
    }

    def ids(flt, mode="lexical", q="wing"):
        return sorted(h.artifact_id for h in search(c, q, mode=mode, k=10, filter=flt))

    assert ids({"year": {"$gte": 1960}}) == ["p2"]
    assert ids({"year": {"$exists": False}}) == ["p4"]
    assert ids({"venue": "jas"}) == ["p2"]
    assert ids({"venue": {"$in": ["JAS", "NACA TN"]}}) == ["p1", "p4"]
    assert ids({"published": {"$lt": "1960-01-01"}}) == ["p1", "p4"]
    assert ids({"pages": {"$gt": 10}}, q="wing heat transfer") == ["p1", "p3"]
    assert ids({"open": 1}, mode="dense", q="wing") == ["p1", "p3"]
    assert ids({"$or": [{"year": 1958}, {"venue": "AIAA"}]}, mode="hybrid", q="wing heat") == [
        "p1",
        "p3",
    ]
    hit = search(c, "swept", mode="lexical", k=1)[0]
    assert hit.metadata["year"] == 1958 and hit.metadata["published"] == "1958-03-01"
    with pytest.raises(QueryError, match="unknown column; allowed"):
        search(c, "wing", filter={"yeer": 1960})
    with pytest.raises(QueryError, match="expected a number"):
        search(c, "wing", filter={"year": "1960"})
    with pytest.raises(QueryError, match="unknown operator"):
        search(c, "wing", filter={"year": {"$regex": "19"}})
    with pytest.raises(QueryError, match="'Nature' is not a value of venue; allowed"):
        search(c, "wing", filter={"venue": "Nature"})


def test_filter_types_widen_across_builds(home):
    docs = {"a": {"text": "wing", "n": 1}, "b": {"text": "wing wing", "n": 2}}
    meta = {
        "metadata_of": lambda aid, raw: {"n": raw["n"]},
        "strategy": WholeText(),
        "embedder": "hashing:16",
    }
    c = build(from_mapping(docs, name="w", **meta))
    assert c.info()["fields"] == {"n": "numeric"}
    docs["c"] = {"text": "wing again", "n": 2.5}
    c = build(from_mapping(docs, name="w", **meta))
    assert c.info()["fields"] == {"n": "numeric"}
    assert sorted(
        h.artifact_id for h in search(c, "wing", mode="lexical", filter={"n": {"$gt": 1.5}})
    ) == ["b", "c"]
    docs["d"] = {"text": "wing once more", "n": "many"}
    c = build(from_mapping(docs, name="w", **meta))
    assert c.info()["fields"] == {"n": "text"}
    assert sorted(
        h.artifact_id
        for h in search(c, "wing", mode="lexical", filter={"n": {"$in": ["2", "many"]}})
    ) == ["b", "d"]


def test_surfaces_weights_and_collapse(home):
    docs = {
        f"d{i}": {"title": t, "body": b}
        for i, (t, b) in enumerate(
            [
                ("Wing lift", "A study of the drag of a wing and of bodies of revolution."),
                ("Drag of bodies", "Lift of a wing near the ground, and wing tip vortices."),
                ("Heat transfer", "Nothing about the wing."),
            ]
        )
    }
    c = build(
        from_mapping(docs, name="f", embedder="hashing:32", strategy=Fields(("title", "body")))
    )
    hits = search(c, "wing", mode="lexical", per_artifact=False, k=10)
    assert {h.surface_kind for h in hits} == {"title", "body"}
    assert len({h.artifact_id for h in hits}) < len(hits)
    collapsed = search(c, "wing", mode="lexical", k=10)
    assert len({h.artifact_id for h in collapsed}) == len(collapsed) == 3
    assert all(
        h.surface_kind == "title"
        for h in search(c, "wing", mode="lexical", surfaces="title", k=10)
    )
    assert [h.surface_index for h in search(c, "heat", mode="lexical", surfaces=["title"])] == [0]
    heavy = search(c, "wing", mode="lexical", k=3, surface_weights={"body": 10.0})
    assert heavy[0].surface_kind == "body" and heavy[0].explain["surface_weight"] == 10.0
    plain = search(c, "wing", mode="lexical", k=3)
    assert heavy[0].score == pytest.approx(
        10.0
        * max(
            h.explain["lexical"]["bm25"]
            for h in search(c, "wing", mode="lexical", k=10, per_artifact=False, surfaces="body")
        ),
        rel=1e-6,
    )
    assert plain[0].explain["surface_weight"] == 1.0


def test_surface_restriction_from_the_record_table(home):
    """A surfaces-only restriction comes from the generation's record table
    (no SQL), kept per generation: the same ids as the SQL listing, every
    kind subset, and a new generation's records seen."""
    from rowvoi.corpus.storage.generation import _kinds_allowed

    docs = {
        f"d{i}": {"title": f"wing {i}", "body": f"lift and drag {i}", "note": f"n {i}"}
        for i in range(12)
    }
    meta = {
        "metadata_of": lambda aid, raw: {"n": int(aid[1:])},
        "strategy": Fields(("title", "body", "note")),
        "embedder": "hashing:32",
    }
    c = build(from_mapping(docs, name="k", **meta))
    subsets = [[], ["title"], ["body", "title"], ["note", "body", "title"], ["missing"]]
    subsets.append(["title", "missing"])
    with c.store.snapshot() as snap:
        loaded = c._generations.open(snap, lexical=True, dense=True, records=True)
        for kinds in subsets:
            got = _kinds_allowed(loaded, loaded.records, kinds)
            assert sorted(got) == snap.ids_where(None, [], kinds).tolist()
            assert _kinds_allowed(loaded, loaded.records, list(reversed(kinds))) is got  # kept
        n_title = len(_kinds_allowed(loaded, loaded.records, ["title"]))
    for mode in ("lexical", "dense", "hybrid"):
        hits = search(c, "wing lift", mode=mode, surfaces=["title", "note"], per_artifact=False)
        assert hits and {h.surface_kind for h in hits} <= {"title", "note"}
        # the SQL path (a filter that every artifact passes) agrees
        sql = search(
            c,
            "wing lift",
            mode=mode,
            surfaces=["title", "note"],
            per_artifact=False,
            filter={"n": {"$gte": 0}},
        )
        assert [(h.record_id, h.score) for h in hits] == [(h.record_id, h.score) for h in sql]
    docs["d99"] = {"title": "wing 99", "body": "b", "note": "n"}
    c = build(from_mapping(docs, name="k", **meta))
    with c.store.snapshot() as snap:
        loaded = c._generations.open(snap, lexical=True, dense=True, records=True)
        assert len(_kinds_allowed(loaded, loaded.records, ["title"])) == n_title + 1
    assert "d99" in {h.artifact_id for h in search(c, "wing 99", mode="lexical", surfaces="title")}


def test_fused_scores_never_mix_scales(home):
    c = build(from_mapping(DOCS, name="notes", embedder="hashing:32"))
    # lexical finds nothing (no known term): dense hits still get fused scores
    rrf = search(c, "zzqx", mode="hybrid", k=5)
    assert rrf and all(h.explain["lexical"] is None for h in rrf)
    assert [h.score for h in rrf] == pytest.approx([1 / (60 + r) for r in range(1, 6)])
    blend = search(c, "zzqx", mode="hybrid", fusion="blend", alpha=0.3, k=5)
    assert [h.score for h in blend] == pytest.approx(
        [0.3 * h.explain["dense"]["cosine"] for h in blend]
    )
    # dense finds nothing (a zero query vector): lexical hits get fused scores
    zero = np.zeros(32)
    rrf = search(c, "wing", mode="hybrid", k=5, query_vector=zero)
    assert rrf and [h.score for h in rrf] == pytest.approx(
        [1 / (60 + r) for r in range(1, len(rrf) + 1)]
    )
    blend = search(c, "wing", mode="hybrid", fusion="blend", k=5, query_vector=zero)
    assert [h.score for h in blend] == pytest.approx(
        [0.5 * b / (b + 8.0) for b in (h.explain["lexical"]["bm25"] for h in blend)]
    )
    assert all(0 <= h.score < 1 for h in blend)


def test_blend_scores_both_sides_exactly(home):
    c = build(from_mapping(DOCS, name="notes", embedder="hashing:32"))
    hits = search(
        c, "wing flow", mode="hybrid", fusion="blend", k=5, per_artifact=False, fetch_k=5
    )
    dense = {h.record_id: h.score for h in search(c, "wing flow", k=50, per_artifact=False)}
    lex = {
        h.record_id: h.score
        for h in search(c, "wing flow", mode="lexical", k=50, per_artifact=False)
    }
    for h in hits:
        b = lex.get(h.record_id, 0.0)
        assert h.score == pytest.approx(0.5 * dense[h.record_id] + 0.5 * b / (b + 8.0), rel=1e-5)


def test_rrf_ties_go_to_the_stronger_evidence(home):
    # "a" is ranked (1, 2) by (dense, lexical) and "b" (2, 1): equal RRF
    # scores; "b" matches better on the whole (a near-equal cosine, a much
    # higher BM25 score), so it ranks first although "a" sorts first by id
    docs = {
        "a": "wing lift",
        "b": "wing wing wing lift",
        "c": "heat pipe",
        "d": "shock wedge",
    }
    q = {"wing": (1.0, 0.0)}
    vec = {"a": (0.81, 0.0), "b": (0.80, 0.0), "c": (0.0, 1.0), "d": (0.1, -1.0)}

    def table(texts):
        out = []
        for t in texts:
            x, y = q[t] if t in q else vec[next(k for k, v in docs.items() if v == t)]
            out.append((x, y if y else (1 - x * x) ** 0.5))
        return np.array(out, dtype=np.float32)

    c = build(
        from_mapping(docs, name="ties", embedder=(table, "table-ties-v1")),
        store=CorpusStore.memory(),
    )
    rank = {
        mode: [h.artifact_id for h in search(c, "wing", mode=mode, k=2)]
        for mode in ("dense", "lexical")
    }
    assert rank == {"dense": ["a", "b"], "lexical": ["b", "a"]}
    hits = search(c, "wing", mode="hybrid", k=4)
    assert hits[0].score == hits[1].score
    assert [h.artifact_id for h in hits[:2]] == ["b", "a"]
    assert hits[0].explain["evidence"] > hits[1].explain["evidence"]
    # the same through surface weights (which re-rank before ties are broken)
    hits = search(c, "wing", mode="hybrid", k=4, surface_weights={"document": 2.0})
    assert [h.artifact_id for h in hits[:2]] == ["b", "a"]
    # blend is not rank-only: it orders by its own score
    blend = search(c, "wing", mode="hybrid", fusion="blend", k=2)
    assert blend[0].score >= blend[1].score


def test_explain(home):
    c = build(from_mapping(DOCS, name="notes", embedder="hashing:32"))
    h = search(c, "thin wing", mode="hybrid", k=1, explain=True)[0]
    e = h.explain
    assert e["mode"] == "hybrid" and e["fusion"] == "rrf" and e["fused"] == h.score
    assert e["answered_by"] == ["flat", "bm25"]
    assert {t["term"] for t in e["lexical"]["terms"]} == {"thin", "wing"}
    assert sum(t["contribution"] for t in e["lexical"]["terms"]) == pytest.approx(
        e["lexical"]["bm25"], rel=1e-5
    )
    assert e["dense"]["rank"] >= 1 and -1 <= e["dense"]["cosine"] <= 1
    d = h.to_dict()
    assert d["record_id"] == h.record_id and d["explain"]["answered_by"] == ["flat", "bm25"]


def test_records_for_artifact_in_plan_order(home):
    text = "First sentence here. " * 30
    c = build(
        from_mapping(
            {"d": {"title": "T", "body": text, "year": 1}},
            name="r",
            embedder="hashing:16",
            strategy=Fields(("title", "body"), chunked=("body",), chunk_size=100, overlap=20),
            metadata_of=lambda a, r: {"year": r["year"]},
        )
    )
    recs = records_for_artifact("r", "d")
    assert [r.surface_index for r in recs] == list(range(len(recs)))
    assert recs[0].surface_kind == "title" and all(r.surface_kind == "body" for r in recs[1:])
    assert [r.metadata["chunk_index"] for r in recs[1:]] == list(range(len(recs) - 1))
    assert all(r.metadata["year"] == 1 and r.vector is None for r in recs)
    assert [r.text for r in records_for_artifact(c.store, "d", surface_kind="title")] == ["T"]
    assert records_for_artifact(c, "d", surface_kind="nothing") == []
    hit = search(c, "sentence", mode="lexical", k=1, per_artifact=False)[0]
    assert recs[hit.surface_index].record_id == hit.record_id


def test_hnsw_corpus(home):
    rng = np.random.default_rng(3)
    words = np.array(
        "wing lift drag shock flow pipe heat nozzle flutter wedge boundary layer "
        "supersonic subsonic turbulent laminar pressure cone jet wake".split()
    )
    docs = {f"d{i}": " ".join(rng.choice(words, size=12)) for i in range(300)}
    c = build(from_mapping(docs, name="h", embedder="hashing:32"), hnsw=True)
    assert c.last_build.compacted
    files = [p.name for p in c.store.files()]
    assert not [f for f in files if f.startswith("dense.")]
    assert any(p.parent.name.startswith("hnsw.") for p in c.store.files())
    q = "turbulent boundary layer on a wing"
    exact = search(c, q, k=10, index="flat", per_artifact=False)
    approx = search(c, q, k=10, per_artifact=False)
    assert approx[0].explain["answered_by"] == ["hnsw"]
    assert exact[0].explain["answered_by"] == ["flat"]
    assert len({h.record_id for h in exact} & {h.record_id for h in approx}) >= 8
    assert [h.artifact_id for h in search(c, q, k=3, index="hnsw", mode="hybrid")]
    # incremental: a small change goes to the delta, added to the graph on load
    docs["d0"] = "hypersonic reentry capsule ablation"
    c = build(from_mapping(docs, name="h", embedder="hashing:32"))
    assert not c.last_build.compacted
    top = search(open_corpus("h"), "hypersonic reentry capsule ablation", k=1)[0]
    assert top.artifact_id == "d0" and top.explain["answered_by"] == ["hnsw"]
    # switching back to flat rewrites the index files
    c = build(from_mapping(docs, name="h", embedder="hashing:32"), hnsw=False)
    assert c.last_build.compacted
    assert not [p for p in c.store.files() if p.parent.name.startswith("hnsw.")]
    with pytest.raises(ValueError, match="has no HNSW index"):
        search(c, q, index="hnsw")
    assert search(c, q, k=1, index="flat")[0].artifact_id == exact[0].artifact_id


def test_analyzer_change_reindexes_text_without_embedding(home):
    emb = Counting()
    c = build(from_mapping(DOCS, name="notes", embedder=emb))
    # a corpus written by a rowvoi whose analyzer differed
    con = c.store.writer_connection()
    con.execute(
        "UPDATE state SET value = ? WHERE key = 'lexical'",
        ('{"analyzer": {"stem": false}, "bm25": {"variant": "lucene", "k1": 1.2, "b": 0.75}}',),
    )
    emb.texts.clear()
    c = build(from_mapping(DOCS, name="notes", embedder=emb))
    assert c.last_build.rebuild == "analyzer changed" and emb.texts == []
    assert c.last_build.cache_hits == 5
    assert lexical_ids(c, "oblique shocks") == ["shock.md"]


def test_lexical_search_and_info_never_load_the_model(home):
    build(from_mapping(DOCS, name="notes", embedder="hashing:16"))
    c = open_corpus("notes")
    search(c, "wing", mode="lexical")
    c.info()
    records_for_artifact(c, "wing.md")
    assert c._embedder is None
    search(c, "wing", mode="dense")
    assert c._embedder is not None


def test_progress_bar_on_request(home, capsys):
    build(from_mapping(DOCS, name="notes", embedder="hashing:16"), progress=True)
    err = capsys.readouterr().err
    assert "building notes" in err and "/5 [" in err
    build(from_mapping({**DOCS, "x.md": "new"}, name="notes", embedder="hashing:16"))
    assert capsys.readouterr().err == ""  # not a terminal: silent
