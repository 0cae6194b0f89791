"""rowvoi.corpus.eval: cases, metrics (checked against trec_eval), the
failure taxonomy, selection scoring and sweeps, distractor curves, graded
relevance and comparison, case generation, pictures."""

import itertools
import json
import math
import os
import random

import pytest

from rowvoi.corpus import CorpusStore, build, from_mapping
from rowvoi.corpus.base import SearchHit
from rowvoi.corpus.eval import (
    FAILURE_CLASSES,
    LEVEL_GAINS,
    METRICS,
    DiscoveryCase,
    GradedCase,
    HeldOut,
    NamedSets,
    PlotUnavailable,
    SelectionSweep,
    average_precision,
    build_eval_set,
    compare_indexings,
    corpus_signature,
    derive_named_sets,
    distractor_curve_from_cases,
    distractor_robustness_curve,
    evaluate_discovery,
    evaluate_named_sets,
    evaluate_selection,
    generate_cases,
    leaks_name,
    level_histogram,
    load_cases,
    load_graded_cases,
    mask_name,
    ndcg_at,
    plot_distractor_curve,
    plot_frontier,
    precision_at,
    rank_run,
    read_meta,
    recall_at,
    reciprocal_rank,
    retrieval_report,
    save_cases,
    save_graded_cases,
    selection as sel_mod,
    sweep_selector,
    to_qrels,
    to_run,
    validate_cases,
)

pytrec_eval = pytest.importorskip("pytrec_eval")  # in the test extra: CI runs it

DOCS = {
    "stall": "wing stall at high angle of attack and loss of lift",
    "flutter": "flutter of a wing: aeroelastic oscillation of the lifting surface",
    "shock": "shock waves in supersonic nozzles and diffusers",
    "layer": "boundary layer transition on a flat plate at low speed",
    "heat": "heat transfer to the wall in hypersonic flow",
    "pipe": "laminar flow of a fluid in a circular pipe",
}


@pytest.fixture(scope="module")
def aero():
    return build(
        from_mapping(DOCS, name="aero", embedder="hashing"),
        store=CorpusStore.memory(),
        progress=False,
    )


# ------------------------------------------------------------------ cases
def test_case_model_and_validation():
    c = DiscoveryCase("q", gold=["a", 3, "a"], grades={"3": 2})
    assert c.gold == ("a", "3") and c.gains == {"a": 1.0, "3": 2.0}
    assert DiscoveryCase.from_dict({"query": "q", "gold": None}).gold_is_none
    assert DiscoveryCase.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="non-empty query"):
        DiscoveryCase("  ")
    with pytest.raises(ValueError, match="not gold"):
        DiscoveryCase("q", ["a"], grades={"b": 1})
    with pytest.raises(ValueError, match="> 0"):
        DiscoveryCase("q", ["a"], grades={"a": 0})
    with pytest.raises(TypeError):
        DiscoveryCase("q", [1.5])
    with pytest.raises(ValueError, match="unknown case field"):
        DiscoveryCase.from_dict({"query": "q", "gold_ids": []})


def test_save_load_meta_and_bad_files(tmp_path):
    cases = [
        DiscoveryCase("a", ["x"], {"x": 3}, corpus="c", source_id="7", metadata={"k": 1}),
        DiscoveryCase("b"),
    ]
    p = save_cases(cases, tmp_path / "sub" / "cases.jsonl", meta={"signature": "abc"})
    assert load_cases(p) == cases and read_meta(p) == {"signature": "abc"}
    assert [f.name for f in p.parent.iterdir()] == ["cases.jsonl"]  # no temp file left
    assert read_meta(save_cases(cases, tmp_path / "plain.jsonl")) == {}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "ok", "gold": ["x"]}\n\n{"query": "q", "gold": 5.5}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:3"):
        load_cases(bad)
    bad.write_text('{"query": "ok"}\nnot json\n')
    with pytest.raises(ValueError, match=r":2: not JSON"):
        load_cases(bad)
    bad.write_text('{"query": "ok"}\n{"__meta__": {}}\n')
    with pytest.raises(ValueError, match="only come first"):
        load_cases(bad)
    with pytest.raises(OSError):
        load_cases(tmp_path / "missing.jsonl")
    with pytest.raises(TypeError):
        save_cases([{"query": "x"}], tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_validate_cases_and_qrels(aero):
    cases = [
        DiscoveryCase("a", ["stall"]),
        DiscoveryCase("b"),
        DiscoveryCase("c", ["gone", "pipe", "lost"]),
    ]
    assert validate_cases(aero, cases) == {2: ["gone", "lost"]}
    queries, qrels = to_qrels(cases)
    assert list(queries) == ["q00001", "q00003"]
    assert qrels["q00003"] == {"gone": 1.0, "pipe": 1.0, "lost": 1.0}


# ------------------------------------------------------------------ metrics
def _trec(qrels, run, measures):
    ev = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in v.items()} for q, v in qrels.items()}, set(measures)
    )
    return ev.evaluate(run)


def test_metrics_equal_trec_eval_on_random_runs():
    rng = random.Random(5)
    docs = [f"d{i:02d}" for i in range(40)]
    qrels, rankings = {}, {}
    for q in range(60):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[qid] = {d: rng.randint(1, 4) for d in judged}
        rankings[qid] = rng.sample(docs, rng.randint(0, 30))
    res = _trec(
        qrels,
        to_run(rankings),
        {
            "ndcg_cut.5,10,20",
            "P.5,10,20",
            "recall.5,10,20",
            "map_cut.5,10,20",
            "map",
            "recip_rank",
        },
    )
    for qid, gains in qrels.items():
        r = rankings[qid]
        got = res.get(qid, {})
        if not r:  # trec_eval leaves a query without a run out; we score it 0
            assert all(METRICS[m](r, gains, 10) == 0.0 for m in METRICS)
            continue
        for k in (5, 10, 20):
            assert ndcg_at(r, gains, k) == pytest.approx(got[f"ndcg_cut_{k}"], abs=1e-9)
            assert precision_at(r, gains, k) == pytest.approx(got[f"P_{k}"], abs=1e-9)
            assert recall_at(r, gains, k) == pytest.approx(got[f"recall_{k}"], abs=1e-9)
            assert average_precision(r, gains, k) == pytest.approx(got[f"map_cut_{k}"], abs=1e-9)
        assert average_precision(r, gains, 1000) == pytest.approx(got["map"], abs=1e-9)
        assert reciprocal_rank(r, gains, 1000) == pytest.approx(got["recip_rank"], abs=1e-9)


def test_trec_eval_tie_rule():
    # tied scores: trec_eval orders by docno descending; rank_run does the same,
    # so scoring rank_run's order equals trec_eval on the raw scores
    run = {"q": {"d1": 2.0, "d2": 2.0, "d3": 2.0, "d4": 1.0, "d5": 3.0}}
    qrels = {"q": {"d1": 1, "d4": 2}}
    order = rank_run(run["q"])
    assert order == ["d5", "d3", "d2", "d1", "d4"]
    res = _trec(qrels, run, {"ndcg_cut.3", "map", "recip_rank"})["q"]
    assert ndcg_at(order, qrels["q"], 3) == pytest.approx(res["ndcg_cut_3"], abs=1e-12)
    assert average_precision(order, qrels["q"], 1000) == pytest.approx(res["map"], abs=1e-12)
    assert reciprocal_rank(order, qrels["q"], 1000) == pytest.approx(res["recip_rank"])
    # input order (rowvoi's own tie rule) can differ: to_run pins it for trec_eval
    mine = ["d5", "d1", "d2", "d3", "d4"]
    pinned = _trec(qrels, to_run({"q": mine}), {"recip_rank"})["q"]
    assert pinned["recip_rank"] == reciprocal_rank(mine, qrels["q"], 10) == 0.5


# ------------------------------------------------------------------ discovery
def test_taxonomy_abstention_and_rows(aero):
    cases = [
        DiscoveryCase("wing stall angle of attack", ["stall"]),
        DiscoveryCase("lifting surface of a wing", ["flutter"]),
        DiscoveryCase("zzz unrelated words", ["pipe"]),
        DiscoveryCase("shock supersonic", [], source_id="x"),
        DiscoveryCase("pasta cooking", []),
    ]
    r = evaluate_discovery(
        aero, cases, mode="lexical", k_values=(1, 3), primary_k=3, abstain_threshold=1.0
    )
    assert set(r.failure_classes) <= set(FAILURE_CLASSES)
    classes = [row["failure_class"] for row in r.rows]
    assert classes[0] == "hit_rank_1" and classes[2] == "retrieval_miss"
    assert classes[1] in ("hit_rank_1", "surfaced_low_rank")
    assert classes[3] == "false_action" and classes[4] == "abstention_ok"
    assert r.abstention_accuracy == 0.5 and r.n_gold == 3 and r.n_abstention == 2
    assert r.rows[3]["metrics"] == {} and r.rows[3]["source_id"] == "x"
    assert r.rows[4]["top_score"] is None and r.rows[2]["gold_rank"] is None
    assert set(r.metrics) == {f"{m}@{k}" for m in METRICS for k in (1, 3)}
    assert r.metrics["ndcg@1"] == pytest.approx(
        sum(row["metrics"]["ndcg@1"] for row in r.rows[:3]) / 3
    )
    json.dumps(r.to_dict())
    unscored = evaluate_discovery(aero, cases[3:], mode="lexical")
    assert unscored.primary is None and unscored.metrics == {}
    assert unscored.failure_classes == {"abstention_unscored": 2}
    assert unscored.abstention_accuracy is None
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate_discovery(aero, cases, metrics=("ndcg", "bleu"))
    with pytest.raises(ValueError):
        evaluate_discovery(aero, cases, k_values=(0,))
    with pytest.raises(TypeError):
        evaluate_discovery(aero, [{"query": "q"}])
    assert "hit_rank_1" in str(r)


def test_retrieval_report_paths(aero):
    cases = [DiscoveryCase("wing stall", ["stall"]), DiscoveryCase("none at all")]
    rep = retrieval_report(aero, cases, mode="lexical", k_values=(1, 5))
    assert rep.n_queries == 1 and rep.metrics["ndcg@1"] == 1.0
    seen = []

    def retriever(query, *, limit):
        seen.append(limit)
        return ["pipe", "stall"]

    rep = retrieval_report(retriever, cases, k_values=(1, 2))
    assert seen == [2] and rep.metrics["mrr@2"] == 0.5 and rep.metrics["precision@1"] == 0
    with pytest.raises(ValueError, match="no case has gold"):
        retrieval_report(aero, cases[1:])
    with pytest.raises(ValueError, match="retriever function"):
        retrieval_report(retriever, cases, mode="dense")


# ------------------------------------------------------------------ selection
def _hits(*pairs):
    return [SearchHit(a, "document", s, a) for a, s in pairs]


def test_selection_metrics_by_hand(monkeypatch):
    scripted = {
        "q1": _hits(("a", 1.0), ("b", 0.95), ("c", 0.5)),  # gold a, c
        "q2": _hits(("x", 1.0), ("y", 0.2)),  # gold absent: retrieval miss
        "q3": _hits(("m", 1.0), ("n", 0.99)),  # gold n
        "q4": _hits(("p", 0.3)),  # abstention case
    }
    calls = []

    def fake(corpus, query, **kw):
        calls.append(query)
        return scripted[query]

    monkeypatch.setattr(sel_mod, "search_hits", fake)
    monkeypatch.setattr(sel_mod, "open_if_name", lambda c: c)
    cases = [
        DiscoveryCase("q1", ["a", "c"]),
        DiscoveryCase("q2", ["zz"]),
        DiscoveryCase("q3", ["n"]),
        DiscoveryCase("q4"),
    ]
    r = evaluate_selection("corpus", cases, max_k=3, rel=0.9)
    # q1 selects a,b: 1 of 2 gold retrieved; q3 selects m,n
    assert r.n_gold_retrieved == 2 and r.conditional_commit_rate == 1.0
    assert r.selection_precision == pytest.approx(0.5)
    assert r.selection_recall == pytest.approx((0.5 + 1.0) / 2)
    assert r.selection_f1 == pytest.approx((0.5 + 2 / 3) / 2)
    assert r.mean_selected_size == 2.0 and r.abstention_accuracy == 0.0
    assert r.commit_precision == pytest.approx(2 / 5)  # a, n of a,b,x,m,n
    assert r.results_per_query == pytest.approx(5 / 3)
    assert r.overall_f1 == pytest.approx((0.5 + 0.0 + 2 / 3) / 3)  # misses count 0
    assert [row["selected"] for row in r.rows] == [["a", "b"], ["x"], ["m", "n"], ["p"]]
    floor = evaluate_selection("corpus", cases, max_k=1, min_score=0.5)
    assert floor.abstention_accuracy == 1.0 and floor.selection_precision == 0.5
    # the sweep searches each case exactly once, whatever the grid
    calls.clear()
    sweep = sweep_selector(
        "corpus", cases, max_k_grid=(1, 2, 3), rel_grid=(0.4, 0.9, 1.0), min_score_grid=(None, 0.5)
    )
    assert calls == ["q1", "q2", "q3", "q4"] and len(sweep.points) == 18
    best = sweep.best()
    # max_k=1 gives F1 (2/3 + 0)/2 ... the grid's best is max_k=3, rel=0.4: q1 takes
    # a,b,c (F1 0.8), q3 m,n (F1 2/3)
    assert (best.max_k, best.rel) == (3, 0.4)
    assert best.report.selection_f1 == pytest.approx((0.8 + 2 / 3) / 2)
    # ties go to the smaller selection, then smaller max_k, larger rel
    smallest = sweep.best("mean_selected_size")
    assert smallest.report.mean_selected_size == 1.0 and smallest.max_k == 1
    assert smallest.rel == 1.0 and smallest.min_score == 0.5
    front = sweep.frontier()
    for p in front:
        px, py = p.report.selection_recall, p.report.selection_precision
        assert not any(
            q.report.selection_recall >= px
            and q.report.selection_precision >= py
            and (q.report.selection_recall > px or q.report.selection_precision > py)
            for q in sweep.points
        )
    assert [p.report.selection_recall for p in front] == sorted(
        p.report.selection_recall for p in front
    )
    d = json.loads(json.dumps(sweep.to_dict()))
    assert d["best"]["max_k"] == 3 and len(d["points"]) == 18 and d["frontier"]
    table = sweep.table().splitlines()
    assert len(table) == 19 and "min_score" in table[0]
    with pytest.raises(ValueError, match="unknown selection metric"):
        sweep.best("accuracy")
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        sweep_selector("corpus", cases, rel_grid=(0.0,))
    with pytest.raises(ValueError, match="empty"):
        sweep_selector("corpus", cases, max_k_grid=())
    assert len(calls) == 4  # bad grids fail before any search


def test_sweep_held_out(monkeypatch):
    """Tune on the other folds, score on this one: a setting that only fits
    the tuning cases is caught out, and no search runs again."""
    scripted = {
        # even positions (fold 0): one gold each, a clear top hit
        "e1": _hits(("a", 1.0), ("b", 0.95), ("c", 0.9)),
        "e2": _hits(("d", 1.0), ("e", 0.97), ("f", 0.2)),
        # odd positions (fold 1): every near-tie is gold
        "o1": _hits(("g", 1.0), ("h", 0.96), ("i", 0.93)),
        "o2": _hits(("j", 1.0), ("k", 0.99), ("l", 0.1)),
    }
    calls = []

    def fake(corpus, query, **kw):
        calls.append(query)
        return scripted[query]

    monkeypatch.setattr(sel_mod, "search_hits", fake)
    monkeypatch.setattr(sel_mod, "open_if_name", lambda c: c)
    cases = [
        DiscoveryCase("e1", ["a"]),
        DiscoveryCase("o1", ["g", "h", "i"]),
        DiscoveryCase("e2", ["d"]),
        DiscoveryCase("o2", ["j", "k"]),
    ]
    sweep = sweep_selector("corpus", cases, max_k_grid=(1, 3), rel_grid=(0.9,))
    calls.clear()
    ho = sweep.held_out()
    assert isinstance(ho, HeldOut) and calls == []  # the sweep's retrieval pass is reused
    f0, f1 = ho.folds
    # fold 0 is scored with the setting tuned on the odd cases (max_k 3):
    # e1 commits a,b,c (F1 0.5), e2 commits d,e (F1 2/3)
    assert (f0.fold, f0.point.max_k, f0.tuned_value) == (0, 3, 1.0)
    assert f0.report.n_cases == 2 and f0.report.selection_f1 == pytest.approx((0.5 + 2 / 3) / 2)
    # fold 1 with the setting tuned on the even cases (max_k 1): g (F1 0.5), j (2/3)
    assert (f1.fold, f1.point.max_k, f1.tuned_value) == (1, 1, 1.0)
    assert f1.report.selection_f1 == pytest.approx((0.5 + 2 / 3) / 2)
    assert ho.value == pytest.approx((0.5 + 2 / 3) / 2)
    assert ho.value < sweep.best().report.selection_f1  # in-sample is optimistic
    # another metric, more folds; the JSON form
    size = sweep.held_out(folds=4, metric="mean_selected_size")
    assert [f.point.max_k for f in size.folds] == [1, 1, 1, 1] and size.value == 1.0
    d = json.loads(json.dumps(ho.to_dict()))
    assert d["metric"] == "selection_f1" and [f["max_k"] for f in d["folds"]] == [3, 1]
    assert "held-out selection_f1" in str(ho)
    with pytest.raises(ValueError, match="folds"):
        sweep.held_out(folds=1)
    with pytest.raises(ValueError, match="folds"):
        sweep.held_out(folds=5)
    with pytest.raises(ValueError, match="unknown selection metric"):
        sweep.held_out(metric="accuracy")
    with pytest.raises(ValueError, match="retrieval pass"):
        SelectionSweep(sweep.points, "selection_f1").held_out()


def test_selection_on_a_real_corpus(aero):
    cases = [
        DiscoveryCase("wing stall lift", ["stall"]),
        DiscoveryCase("supersonic nozzle shock", ["shock"]),
        DiscoveryCase("pasta"),
    ]
    r = evaluate_selection(aero, cases, mode="lexical", max_k=1)
    assert r.conditional_commit_rate == 1.0 and r.selection_precision == 1.0
    assert r.abstention_accuracy == 1.0  # no word of "pasta" in the corpus: no hits
    s = sweep_selector(aero, cases, mode="lexical", max_k_grid=(1, 2), rel_grid=(0.5, 0.9))
    assert s.best().report.selection_f1 == 1.0 and s.config["n_cases"] == 3


# ------------------------------------------------------------------ robustness
def test_distractor_curve():
    scope = {f"d{i}": f"topic {i} words about item{i} and theme{i % 3}" for i in range(12)}
    scope["gold"] = "wing stall at high angle of attack"
    probes = [("wing stall", "gold"), ("item5 words", "d5")]
    kw = dict(sizes=(1, 4, 8, 100, 4), trials=3, mode="lexical", seed=3)
    curve = distractor_robustness_curve(scope, probes, **kw)
    assert list(curve) == [1, 4, 8, 13] and curve[1] == 1.0
    assert all(0.0 <= v <= 1.0 for v in curve.values())
    assert distractor_robustness_curve(scope, probes, **kw) == curve  # deterministic
    dense = distractor_robustness_curve(scope, probes, sizes=(1, 13), trials=2)
    assert dense[1] == 1.0 and set(dense) == {1, 13}
    with pytest.raises(ValueError, match="not in scope"):
        distractor_robustness_curve(scope, [("q", "nope")])
    with pytest.raises(ValueError, match="no probes"):
        distractor_robustness_curve(scope, [])
    src = from_mapping(scope, embedder="hashing")
    via_cases = distractor_curve_from_cases(
        src,
        [DiscoveryCase("wing stall", ["gold"]), DiscoveryCase("x", ["d1", "d2"])],
        sizes=(1, 4),
        trials=2,
        mode="lexical",
    )
    assert via_cases[1] == 1.0 and set(via_cases) == {1, 4}


# ------------------------------------------------------------------ graded
def test_graded_cases_named_sets_and_comparison(aero, tmp_path):
    cases = [
        GradedCase("stall", {"wing": "core"}),
        GradedCase("flutter", {"wing": "strong"}, hard=True),
        GradedCase("layer", {"wing": "uses-tools"}),  # the ir spelling of partial
        GradedCase("pipe", {"wing": "none"}, observed={"wing": 0.9}),
        GradedCase("heat", {"wing": "tangential"}, observed={"wing": 0.1}),
    ]
    assert cases[2].level("wing") == "partial" and cases[2].gain("wing") == 1.0
    p = save_graded_cases(cases, tmp_path / "g.jsonl", meta={"probes": {"wing": "wing lift"}})
    assert load_graded_cases(p) == cases and read_meta(p)["probes"] == {"wing": "wing lift"}
    assert level_histogram(cases, "wing") == {
        "none": 1,
        "tangential": 1,
        "partial": 1,
        "strong": 1,
        "core": 1,
    }
    with pytest.raises(ValueError, match="unknown relevance level"):
        GradedCase("x", {"t": "great"})
    sets = derive_named_sets(cases, "wing", observed_floor=0.5)
    assert sets == NamedSets("wing", ("pipe",), ("flutter",))
    rep = evaluate_named_sets(aero, sets, probe="wing flutter lift", mode="lexical", k=2)
    assert rep.hard_positive_recall == 1.0 and rep.fp_rate == 0.0

    def bad_ranker(probe, *, k):  # a regression: the distractor first, hard positive gone
        return _hits(("pipe", 3.0), ("stall", 2.0), ("layer", 1.0))[:k]

    report = compare_indexings(
        {"base": aero, "same": aero, "worse": bad_ranker},
        cases,
        themes=["wing"],
        probes={"wing": "wing lift flutter"},
        k=3,
        named_sets={"wing": sets},
        mode="lexical",
        rank_depth=10,
    )
    assert report.baseline == "base"
    assert report.metrics["base"]["wing"] == report.metrics["same"]["wing"]
    assert report.metrics["worse"]["wing"]["fp_rate"] == 1.0
    regs = report.regressions()
    assert {(r["label"], r["artifact_id"], r["role"]) for r in regs} == {
        ("worse", "pipe", "distractor"),
        ("worse", "flutter", "hard_positive"),
    }
    assert not [r for r in regs if r["label"] == "same"]
    assert report.regressions(baseline="worse") == [] or all(
        r["label"] != "worse" for r in report.regressions(baseline="worse")
    )
    json.dumps(report.to_dict())
    with pytest.raises(ValueError, match="no probe text"):
        compare_indexings({"a": aero}, cases, themes=["x"], probes={})
    with pytest.raises(ValueError, match="a ranker"):
        compare_indexings(
            {"w": bad_ranker},
            cases,
            themes=["wing"],
            probes={"wing": "x"},
            search_kw_by_label={"w": {"fusion": "blend"}},
        )


# ------------------------------------------------------------------ generation
def test_mask_name_and_leak_guard():
    assert (
        mask_name("Use ci-advisor or CI_Advisor or ciadvisor.", "ci advisor")
        == "Use this capability or this capability or this capability."
    )
    assert mask_name("specific ci tools", "ci") == "specific this capability tools"
    assert mask_name("x", "a") == "x"  # nothing of two letters: nothing masked
    assert mask_name("this tracker", "capability") == "this tracker"
    assert mask_name("capability list", "capability") == "the item list"
    assert leaks_name("the advisor of ci", "ci-advisor")
    assert not leaks_name("advisor only", "ci-advisor")
    assert leaks_name("I need Ci-Advisor", "ci_advisor")


def test_generate_and_build_eval_set():
    source = {
        "b-tool.md": "b-tool measures drag on a wing in a wind tunnel",
        "a-kit.md": {"name": "a kit", "description": "the a kit solves heat problems"},
        "short.md": "tiny",
    }
    seen = []

    def gen(text, *, n):
        seen.append(text)
        return ["drag on wings", "use b-tool please", "  ", "heat of a kit"][:n]

    out = generate_cases(source, query_generator=gen, k=4)
    assert out.skipped_short == 1 and out.leaks_dropped == 2
    assert "b-tool" not in seen[0] and "this capability" in seen[0]
    assert [(c.gold[0], c.query) for c in out] == [
        ("b-tool.md", "drag on wings"),
        ("b-tool.md", "heat of a kit"),
        ("a-kit.md", "drag on wings"),
        ("a-kit.md", "use b-tool please"),
    ]
    assert out[0].source_id == "b-tool.md" and out[0].metadata["masked"] is True
    capped = generate_cases(source, query_generator=gen, k=1, max_artifacts=1)
    assert [c.gold for c in capped] == [("a-kit.md",)]  # first by sorted id, k=1

    def abst(*, n, theme):
        return [f"{theme} question {i}" for i in range(n)]

    many = {f"doc{i}.md": f"a long enough description number {i}" for i in range(17)}
    for frac in (0.0, 0.15, 0.5):
        cases = build_eval_set(
            many,
            query_generator=lambda t, *, n: ["q"] * n,
            k=1,
            abstention_generator=abst,
            abstention_frac=frac,
            theme="aero",
        )
        n_abst = sum(c.gold_is_none for c in cases)
        assert n_abst == math.ceil(frac * 17 / (1 - frac))
        assert n_abst == 0 or n_abst / len(cases) >= frac
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        build_eval_set(many, query_generator=gen, abstention_frac=1.0)
    with pytest.raises(ValueError):
        build_eval_set(many, query_generator=gen, k=0)
    with pytest.raises(TypeError, match="bring your own"):
        generate_cases(many, query_generator=None)
    with pytest.raises(TypeError, match="abstention_generator"):
        build_eval_set(many, query_generator=lambda t, *, n: ["q"], abstention_frac=0.5)
    assert corpus_signature(many) == corpus_signature(dict(reversed(list(many.items()))))
    assert corpus_signature(many) != corpus_signature(source)
    src = from_mapping(source, embedder="hashing")
    built = build(src, store=CorpusStore.memory(), progress=False)
    assert corpus_signature(src) == corpus_signature(built) == corpus_signature(source)


# ------------------------------------------------------------------ pictures
def test_plots(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")  # in the test extra
    scripted = {"q1": _hits(("a", 1.0), ("b", 0.7)), "q2": _hits(("c", 1.0), ("d", 0.95))}
    monkeypatch.setattr(sel_mod, "search_hits", lambda c, q, **kw: scripted[q])
    monkeypatch.setattr(sel_mod, "open_if_name", lambda c: c)
    sweep = sweep_selector("c", [DiscoveryCase("q1", ["a", "b"]), DiscoveryCase("q2", ["c"])])
    png = plot_frontier(sweep, tmp_path / "f.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = plot_distractor_curve(
        {"lexical": {1: 1.0, 4: 0.5}, "dense": {1: 1.0, 4: 0.75}}, tmp_path / "c.svg"
    )
    assert b"<svg" in svg.read_bytes()[:400]
    assert plot_distractor_curve({1: 1.0, 8: 0.5}, tmp_path / "one.png").exists()
    with pytest.raises(ValueError, match=r"\.png"):
        plot_frontier(sweep, tmp_path / "f.gif")
    assert sorted(os.listdir(tmp_path)) == ["c.svg", "f.png", "one.png"]
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(PlotUnavailable, match=r"rowvoi\[plot\]"):
        plot_frontier(sweep, tmp_path / "g.png")


def test_selection_defaults_match_discover(aero):
    # evaluate_selection scores exactly what discover() commits to
    from rowvoi.corpus import discover

    cases = [DiscoveryCase(q, ["stall"]) for q in ("wing lift", "stall angle", "flow")]
    r = evaluate_selection(aero, cases, mode="lexical")
    for row, case in zip(r.rows, cases):
        assert row["selected"] == discover(aero, case.query, mode="lexical").ids


def test_levels_are_generic():
    assert tuple(LEVEL_GAINS) == ("none", "tangential", "partial", "strong", "core")
    assert list(itertools.accumulate(LEVEL_GAINS.values()))[-1] == 6.0
