"""Searches at large k: each hit's explain (ranks and raw scores on each
side, the RRF evidence) is what the two sides and the blend formula say,
at every k, and equal RRF scores go to the stronger evidence even when
their group reaches past ``fetch_k``."""

import itertools
import random

import numpy as np
import pytest

from rowvoi.corpus import Chunked, CorpusStore, WholeText, build, from_mapping, search

WORDS = (
    "wing lift drag shock wave flow boundary layer heat transfer pipe plate "
    "flutter panel buckling cylinder nozzle jet mach supersonic laminar"
).split()


@pytest.fixture(scope="module", params=["whole", "chunked"])
def corpus(request):
    rng = random.Random(7)
    docs = {
        f"d{i:03d}": " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 60)))
        for i in range(300)
    }
    strategy = WholeText() if request.param == "whole" else Chunked(max_tokens=12)
    return build(
        from_mapping(docs, name="k", strategy=strategy, embedder="hashing:64"),
        store=CorpusStore.memory(),
        progress=False,
    )


def side(c, query, mode, depth):
    """record id -> (1-based rank, raw score) of one side's own search."""
    hits = search(c, query, mode=mode, k=depth, per_artifact=False)
    return {h.record_id: (r, h.score) for r, h in enumerate(hits, start=1)}


@pytest.mark.parametrize("k", [1, 10, 100])
@pytest.mark.parametrize("fusion", ["rrf", "blend"])
def test_explain_matches_each_side_at_every_k(corpus, k, fusion):
    for query in ("wing lift", "shock wave flow", "heat pipe nozzle"):
        hits = search(corpus, query, mode="hybrid", fusion=fusion, k=k)
        assert hits and len({h.artifact_id for h in hits}) == len(hits)
        fetch = max(5 * k, 50)
        dense = side(corpus, query, "dense", fetch)
        lex = side(corpus, query, "lexical", fetch)
        every = dict(mode="hybrid", fusion="blend", k=2000, per_artifact=False)
        blend = {h.record_id: h.score for h in search(corpus, query, **every)}
        for h in hits:
            e = h.explain
            d, lx = dense.get(h.record_id), lex.get(h.record_id)
            assert e["answered_by"] == (["flat"] if d else []) + (["bm25"] if lx else [])
            if d:
                assert (e["dense"]["rank"], e["dense"]["cosine"]) == pytest.approx(d)
            else:
                assert e["dense"] is None
            if lx:
                assert (e["lexical"]["rank"], e["lexical"]["bm25"]) == pytest.approx(lx)
            else:
                assert e["lexical"] is None
            if fusion == "rrf":
                assert e["evidence"] == pytest.approx(blend[h.record_id], rel=1e-6)
            else:
                assert "evidence" not in e
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        if fusion == "rrf":  # equal scores: stronger evidence first
            for a, b in itertools.pairwise(hits):
                if a.score == b.score:
                    assert a.explain["evidence"] >= b.explain["evidence"]


def test_a_tie_reaching_past_fetch_k_goes_to_the_stronger_evidence():
    # dense ranks "a" first, BM25 ranks "b" first: equal RRF scores. With
    # k = 1 and no collapse each side fetches one candidate, so the group of
    # equal scores reaches past fetch_k; "b" has the stronger evidence and
    # wins although "a" sorts first by id (the ordering used to be skipped
    # when fetch_k was 1)
    others = ["heat pipe", "shock wave", "flat plate", "jet noise", "panel flutter", "laminar"]
    docs = {"a": "wing lift", "b": "wing wing wing lift", **dict(zip("cdefgh", others))}
    vec = {"wing": (1.0, 0.0), "wing lift": (0.81, 0.59), "wing wing wing lift": (0.8, 0.6)}
    vec.update((t, (0.0, 1.0)) for t in others)

    def table(texts):
        return np.array([vec[t] for t in texts], dtype=np.float32)

    c = build(
        from_mapping(docs, name="t", embedder=(table, "table-k1-v1")),
        store=CorpusStore.memory(),
        progress=False,
    )
    assert search(c, "wing", mode="dense", k=1)[0].artifact_id == "a"
    assert search(c, "wing", mode="lexical", k=1)[0].artifact_id == "b"
    for per_artifact in (False, True):
        hits = search(c, "wing", mode="hybrid", k=1, per_artifact=per_artifact)
        assert [h.artifact_id for h in hits] == ["b"], per_artifact
        both = search(c, "wing", mode="hybrid", k=2, per_artifact=per_artifact)
        assert both[0].score == both[1].score
        assert both[0].explain["evidence"] > both[1].explain["evidence"]


@pytest.mark.parametrize("fusion", ["rrf", "blend"])
def test_ordering_only_the_head_gives_the_whole_orders_first_k(corpus, fusion, monkeypatch):
    """A hybrid search without weights or a collapse puts in order only the
    fused candidates that can be among the first k (every tie at the
    edge); its hits are those of ordering every candidate, at every k,
    with many equal RRF scores (300 documents over 20 words)."""
    from rowvoi.corpus.retrieval import rank

    full = rank._fuse

    def whole(*args, **kw):
        return full(*args[:7], None)  # (head: None, every candidate in order)

    for query, k, per_artifact in itertools.product(
        ("wing lift", "shock wave flow", "heat pipe nozzle", "mach"), (1, 3, 10, 40), (True, False)
    ):
        kw = dict(mode="hybrid", fusion=fusion, k=k, per_artifact=per_artifact)
        fast = search(corpus, query, **kw)
        with monkeypatch.context() as m:
            m.setattr(rank, "_fuse", whole)
            want = search(corpus, query, **kw)
        assert [(h.record_id, h.score, h.explain) for h in fast] == [
            (h.record_id, h.score, h.explain) for h in want
        ]


@pytest.mark.parametrize("fusion", ["rrf", "blend"])
@pytest.mark.parametrize("hnsw", [False, True])
def test_compiled_evidence_is_the_numpy_evidence_bit_for_bit(fusion, hnsw, monkeypatch):
    """The blend evidence of a hybrid search's records -- RRF's head, or
    every fused candidate of a blend -- from the engine's one call
    (``rank._blend_c``) equals the NumPy reference
    (``rank._blend_scores_numpy``, each index asked through its methods)
    bit for bit: records that one side lacks asked of its index, at
    several k, restricted to a surface kind (a filter), with an all-zero
    query vector (the flat index asked nothing), and with the flat index of
    an HNSW graph, which is not frozen (its read lock taken). A blend's
    call computes only the candidates that can be among the first k: every
    other one is -inf there, and below the k-th best in NumPy's."""
    from rowvoi.corpus.retrieval import rank

    rng = random.Random(11)
    docs = {
        f"d{i:03d}": " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 60)))
        for i in range(250)
    }
    c = build(
        from_mapping(docs, name="ev", strategy=Chunked(max_tokens=12), embedder="hashing:64"),
        store=CorpusStore.memory(),
        hnsw=hnsw,
        progress=False,
    )
    compiled = rank._blend_c
    calls = []

    def both(loaded, query, qvec, flat, dense, lex, cids, p, sides, head=None, bounds=None):
        got = compiled(loaded, query, qvec, flat, dense, lex, cids, p, sides, head, bounds)
        want = rank._blend_scores_numpy(loaded, query, qvec, dense, lex, cids, p, sides)
        assert got.dtype == want.dtype == np.float64
        kept = got != -np.inf
        assert got[kept].tobytes() == want[kept].tobytes()
        if not kept.all():
            # only a blend's head is asked for; the others lie below it
            assert head and kept.sum() >= head
            edge = np.sort(want)[::-1][head - 1]
            assert (want[~kept] < edge).all()
        calls.append((int((~kept).sum()), int((sides[0] == 0).sum()), int((sides[1] == 0).sum())))
        return got

    monkeypatch.setattr(rank, "_blend_c", both)
    zero = np.zeros(64, dtype=np.float32)
    for query, k in itertools.product(
        ("wing lift", "shock wave flow", "heat pipe nozzle", "mach", "nothing matches"),
        (1, 10, 60),
    ):
        for kw in (
            {},
            {"per_artifact": False},
            {"per_artifact": False, "fetch_k": 5 * k},
            {"surfaces": ["chunk"], "per_artifact": False, "fetch_k": 3 * k},
            {"query_vector": zero},
        ):
            search(c, query, mode="hybrid", fusion=fusion, k=k, **kw)
    assert calls
    # records asked of each index, somewhere; a blend's head pruned
    assert any(d for _, d, _ in calls) and any(b for _, _, b in calls)
    assert any(pruned for pruned, _, _ in calls) == (fusion == "blend")
