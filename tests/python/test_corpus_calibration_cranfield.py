"""Acceptance of calibrated abstention on Cranfield with MiniLM, held out.

In scope: the 225 Cranfield queries. Out of scope: the 50 far queries
(cooking, sport, ...) and the 50 near ones (circuits, metallurgy,
software, other engineering) of ``tests/data/abstention``. Every figure is
held out: the floor is calibrated on the even-numbered queries of both
sets and measured on the odd-numbered ones, and the other way round.

Target (issue 11): the calibrated floors of dense, blend and RRF searches
answer >= 95 % of the held-out in-scope queries and refuse >= 95 % of the
held-out far queries. The near set is harder (its queries share words and
meaning with aerodynamics); it is guarded, not targeted, here, and
reported by the ``calibration`` benchmark (``python -m bench run calibration``).
"""

import warnings
from pathlib import Path

import pytest
from test_corpus_cranfield import QUERIES

from rowvoi.corpus import calibrate_min_score, discover
from rowvoi.corpus.retrieval.calibration import (
    abstention_rates,
    best_floor,
    read_queries,
    top_scores,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "abstention"
FAR = read_queries(DATA / "far_out_of_scope.txt")
NEAR = read_queries(DATA / "near_out_of_scope.txt")
CONFIGS = [("dense", "rrf"), ("hybrid", "blend"), ("hybrid", "rrf")]
# one worker builds the Cranfield corpus (conftest.py) and runs every test that uses it
pytestmark = pytest.mark.xdist_group("cranfield-minilm")


def test_query_sets():
    assert len(FAR) == 50 and len(NEAR) == 50 and len(QUERIES) == 225
    assert len(set(FAR) | set(NEAR)) == 100


@pytest.fixture(scope="module")
def cran(cranfield_minilm):
    return cranfield_minilm  # conftest.py: built once per session, copied per module


_SCORES: dict = {}


def scores(corpus, mode, fusion):
    """Best floor scores of the in-scope, far and near queries, searched once."""
    if (mode, fusion) not in _SCORES:
        allq = top_scores(corpus, QUERIES + FAR + NEAR, mode=mode, fusion=fusion)
        n, f = len(QUERIES), len(FAR)
        _SCORES[mode, fusion] = {"in": allq[:n], "far": allq[n : n + f], "near": allq[n + f :]}
    return _SCORES[mode, fusion]


def held_out(corpus, which, mode, fusion):
    """Per fold: (floor, held-out sensitivity, held-out specificity)."""
    s = scores(corpus, mode, fusion)
    ins, outs = s["in"], s[which]
    folds = []
    for a, b in ((0, 1), (1, 0)):
        floor = best_floor(ins[a::2], outs[a::2])[0]
        r = abstention_rates(ins[b::2], outs[b::2], floor)
        folds.append((floor, r["sensitivity"], r["specificity"]))
    return folds


@pytest.mark.parametrize("mode,fusion", CONFIGS)
def test_calibrate_min_score_chooses_from_the_same_scores(cran, mode, fusion):
    negatives = FAR[0::2]
    cal = calibrate_min_score(cran, QUERIES[0::2], negatives, mode=mode, fusion=fusion, save=False)
    s = scores(cran, mode, fusion)
    assert list(cal.in_scores) == pytest.approx(s["in"][0::2], abs=1e-6)
    assert list(cal.out_scores) == pytest.approx(s["far"][0::2], abs=1e-6)
    assert cal.min_score == pytest.approx(best_floor(s["in"][0::2], s["far"][0::2])[0], abs=1e-6)


@pytest.mark.parametrize("mode,fusion", CONFIGS)
def test_far_set_refused_in_scope_answered_held_out(cran, mode, fusion):
    folds = held_out(cran, "far", mode, fusion)
    print(f"far {mode}/{fusion}:", [tuple(round(x, 3) for x in f) for f in folds])
    for _floor, sens, spec in folds:
        assert sens >= 0.95, (mode, fusion, folds)
        assert spec >= 0.95, (mode, fusion, folds)


@pytest.mark.parametrize("mode,fusion", CONFIGS)
def test_near_set_trade_off_held_out(cran, mode, fusion):
    folds = held_out(cran, "near", mode, fusion)
    print(f"near {mode}/{fusion}:", [tuple(round(x, 3) for x in f) for f in folds])
    for _floor, sens, spec in folds:
        # measured 0.92 .. 1.0 on both sides; a guard against regressions
        assert (sens + spec) / 2 >= 0.9, (mode, fusion, folds)


def test_discover_auto_applies_the_saved_rrf_floor_as_measured(cran):
    cal = calibrate_min_score(cran, QUERIES[0::2], FAR[0::2], mode="hybrid", fusion="rrf")
    assert cal.saved and cal.key == "hybrid"
    s = scores(cran, "hybrid", "rrf")
    queries = QUERIES[1::2][:40] + FAR[1::2]
    tops = s["in"][1::2][:40] + s["far"][1::2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for q, top in zip(queries, tops):
            res = discover(cran, q, min_score="auto")
            assert res.signals["floor_from"] == "calibration"
            assert res.abstained is (top < cal.min_score), q
