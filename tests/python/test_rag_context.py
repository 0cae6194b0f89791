"""rowvoi.rag.context: minimal sufficient context."""

import numpy as np
import pandas as pd
import pytest

from rowvoi.rag import (
    Chunk,
    ContextSelection,
    extract_and_select,
    plan_context_path,
    select_context,
)
from rowvoi.setcover import STRATEGIES

CHUNKS = [
    Chunk("doc1#p2", "The Pro plan costs $40/seat/mo.", tokens=180),
    Chunk("doc2#p1", "v4.2 shipped March 3rd, 2026.", tokens=150),
    Chunk("faq#p1", "Pricing, releases, and SSO.", tokens=1550),
]
CLAIMS = ["pro_plan_price", "v42_release_date"]
SUPPORT = {"pro_plan_price": {"doc1#p2", "faq#p1"}, "v42_release_date": {"doc2#p1", "faq#p1"}}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_picks_the_cheap_pair(strategy):
    sel = select_context(CHUNKS, CLAIMS, SUPPORT, strategy=strategy)
    assert sorted(sel.chunks) == ["doc1#p2", "doc2#p1"]
    assert sel.total_cost == 330.0 and sel.coverage == 1.0
    assert sel.covered_claims == set(CLAIMS) and sel.missing_claims == set()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_unsupported_claims_are_reported_not_fatal(strategy):
    sel = select_context(CHUNKS, [*CLAIMS, "refund_policy"], SUPPORT, strategy=strategy)
    assert sel.missing_claims == {"refund_policy"} == sel.unsupportable_claims
    assert sel.coverage == pytest.approx(2 / 3)


def test_dataframe_support_matches_mapping():
    frame = pd.DataFrame(
        {"doc1#p2": [True, False], "doc2#p1": [0, 1], "faq#p1": [1.0, np.nan]}, index=CLAIMS
    )
    sel = select_context(CHUNKS, CLAIMS, frame)
    assert sorted(sel.chunks) == ["doc1#p2", "doc2#p1"]
    # NaN means no support: faq#p1 only supports the price claim here
    path = plan_context_path(CHUNKS, CLAIMS, frame)
    assert path.names() == ["doc2#p1", "doc1#p2"]


def test_costs_override_tokens_and_bare_ids_count_chunks():
    sel = select_context(CHUNKS, CLAIMS, SUPPORT, costs={"faq#p1": 100})
    assert sel.chunks == ["faq#p1"] and sel.total_cost == 100.0
    bare = select_context(["doc1#p2", "doc2#p1", "faq#p1"], CLAIMS, SUPPORT)
    assert bare.chunks == ["faq#p1"] and bare.total_cost == 1.0


def test_epsilon_trades_claims_for_tokens():
    sel = select_context(CHUNKS, CLAIMS, SUPPORT, epsilon_claims=0.5)
    assert sel.chunks == ["doc2#p1"] and sel.missing_claims == {"pro_plan_price"}


def test_idf_weighting_prefers_scarce_evidence():
    chunks = [Chunk("common", tokens=10), Chunk("rare", tokens=10)]
    support = {"a": {"common"}, "b": {"common", "rare"}, "c": {"rare"}, "d": {"common"}}
    claims = ["a", "b", "c", "d"]
    assert plan_context_path(chunks, claims, support).names() == ["common", "rare"]
    path = plan_context_path(chunks, claims, support, weighting="idf")
    assert path.steps[0].newly_covered_weight == pytest.approx(2.5)


def test_bad_input():
    # a judge that names a chunk it was not shown does not break the cover
    sel = select_context(CHUNKS, CLAIMS, {"pro_plan_price": {"nope", "doc1#p2"}})
    assert sel.chunks == ["doc1#p2"] and sel.missing_claims == {"v42_release_date"}
    with pytest.raises(ValueError, match="not in `claims`"):
        select_context(CHUNKS, CLAIMS, {**SUPPORT, "refund_policy": {"faq#p1"}})
    with pytest.raises(ValueError, match="more than once"):
        select_context(CHUNKS, ["x", "x"], SUPPORT)
    with pytest.raises(ValueError, match="tokens must be >= 0"):
        Chunk("a", tokens=-5)
    with pytest.raises(TypeError, match="integer"):
        Chunk("a", tokens=1.5)
    with pytest.raises(ValueError, match="unique"):
        select_context([Chunk("a"), Chunk("a")], CLAIMS, {})
    sel = select_context(CHUNKS, CLAIMS, pd.DataFrame({"zz": [1, 0]}, index=CLAIMS))
    assert sel.chunks == [] and sel.coverage == 0.0
    with pytest.raises(ValueError, match="not in `claims`"):
        select_context(CHUNKS, CLAIMS[:1], pd.DataFrame({"faq#p1": [1, 1]}, index=CLAIMS))
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="'faq#p1'"):
            select_context(CHUNKS, CLAIMS, SUPPORT, costs={"faq#p1": bad})
    with pytest.raises(ValueError, match="not in chunks"):
        select_context(CHUNKS, CLAIMS, SUPPORT, costs={"zz": 1})
    with pytest.raises(TypeError, match="mapping"):
        select_context(CHUNKS, CLAIMS, [("a", "b")])
    with pytest.raises(ValueError, match="Unknown strategy"):
        select_context(CHUNKS, CLAIMS, SUPPORT, strategy="best")


def test_no_claims_and_no_chunks():
    sel = select_context(CHUNKS, [], {})
    assert sel.chunks == [] and sel.coverage == 1.0
    sel = select_context([], ["a"], {})
    assert sel.chunks == [] and sel.missing_claims == {"a"} and sel.coverage == 0.0


def test_extract_and_select_uses_protocols():
    class Extractor:
        def extract(self, query):
            return CLAIMS

    class Judge:
        def judge(self, chunks, claims):
            assert [cid for cid, _ in chunks] == ["doc1#p2", "doc2#p1", "faq#p1"]
            return SUPPORT

    sel = extract_and_select("q", CHUNKS, extractor=Extractor(), judge=Judge())
    assert isinstance(sel, ContextSelection) and sorted(sel.chunks) == ["doc1#p2", "doc2#p1"]
    with pytest.raises(TypeError, match="Chunk objects"):
        extract_and_select("q", ["a"], extractor=Extractor(), judge=Judge())


def test_large_random_instance_all_strategies_cover():
    rng = np.random.default_rng(1)
    ids = [f"c{i}" for i in range(200)]
    chunks = [Chunk(i, tokens=int(rng.integers(50, 500))) for i in ids]
    claims = [f"k{j}" for j in range(50)]
    frame = pd.DataFrame(rng.random((50, 200)) < 0.05, index=claims, columns=ids)
    coverable = {c for c in claims if frame.loc[c].any()}
    for strategy in ("greedy", "exact", "sa", "ga", "hybrid"):
        sel = select_context(chunks, claims, frame, strategy=strategy, time_limit=5)
        assert sel.covered_claims == coverable
