"""Calibrated abstention: calibrate_min_score, its storage and invalidation,
RRF evidence floors, discover(min_score="auto") and `rowvoi calibrate`.

The Cranfield acceptance with MiniLM is in test_corpus_calibration_cranfield.py.
"""

import contextlib
import io
import json
import math
import sqlite3
import sys
import threading
import time
import warnings

import pytest

from rowvoi.corpus import (
    Calibration,
    Chunked,
    CorpusError,
    CorpusLocked,
    CorpusStore,
    NoFloorWarning,
    WholeText,
    build,
    calibrate_min_score,
    discover,
    from_mapping,
    load_calibration,
    search,
    select,
)
from rowvoi.corpus.retrieval.calibration import (
    abstention_rates,
    best_floor,
    calibration_problem,
    read_queries,
    stored_calibration,
    top_scores,
)
from rowvoi.corpus.retrieval.selection import floor_score

DOCS = {
    "wing": "lift and drag of a thin swept wing at high angle of attack",
    "shock": "oblique shock waves on a wedge in supersonic flow",
    "layer": "boundary layer transition on a flat plate at low speed",
    "flutter": "flutter of a wing panel in a supersonic stream",
    "heat": "heat transfer to a blunt body in hypersonic flow",
    "nozzle": "flow in a convergent divergent nozzle with a normal shock",
}
IN = [
    "wing lift and drag",
    "shock waves on a wedge",
    "boundary layer transition",
    "panel flutter supersonic",
    "hypersonic heat transfer blunt body",
    "nozzle normal shock",
]
OUT = [
    "apple pie recipe with cinnamon",
    "football league results",
    "how to knit a scarf",
    "best pizza in naples",
    "heat the oven and bake",
]


def corpus(name="aero", docs=DOCS, embedder="hashing", strategy=None, store=None):
    return build(
        from_mapping(docs, name=name, embedder=embedder, strategy=strategy or WholeText()),
        store=store or CorpusStore.memory(),
        progress=False,
    )


# ------------------------------------------------------------------ choosing
def test_lexical_floor_separates_and_is_saved():
    c = corpus()
    cal = calibrate_min_score(c, IN, OUT, mode="lexical")
    assert isinstance(cal, Calibration) and cal.saved and cal.key == "lexical"
    assert cal.sensitivity == 1.0 and cal.specificity == 1.0 and cal.separable
    # the floor sits halfway between the lowest in-scope and highest out-of-scope score
    lo_in = min(cal.in_scores)
    hi_out = max(s for s in cal.out_scores if math.isfinite(s))
    assert hi_out < cal.min_score < lo_in
    assert cal.min_score == pytest.approx((lo_in + hi_out) / 2)
    assert cal.margin == pytest.approx((lo_in - hi_out) / 2)
    # the distributions are each query's best score, in input order
    assert list(cal.in_scores) == top_scores(c, IN, mode="lexical")
    assert len(cal.out_scores) == len(OUT)
    # stored and read back exactly
    back = load_calibration(c, "lexical")
    assert back == cal and back.to_dict() == cal.to_dict()
    rec = stored_calibration(c, "lexical")
    assert rec["min_score"] == cal.min_score and rec["embedder_id"] == c.embedder_id
    assert rec["n_in"] == len(IN) and rec["n_out"] == len(OUT)
    assert json.loads(json.dumps(rec)) == rec
    assert c.store.calibration_keys() == ["lexical"]
    text = str(cal)
    assert "answered 100.0%" in text and "refused  100.0%" in text


def test_weight_trades_sensitivity_for_specificity():
    pos, neg = [0.9, 0.8, 0.5, 0.45], [0.1, 0.2, 0.55, 0.6]
    balanced = best_floor(pos, neg, 0.5)
    assert abstention_rates(pos, neg, balanced[0]) == {
        "sensitivity": balanced[1],
        "specificity": balanced[2],
    }
    eager = best_floor(pos, neg, 0.95)  # answering matters most
    strict = best_floor(pos, neg, 0.05)  # refusing matters most
    assert eager[1] == 1.0 and eager[0] < 0.45
    assert strict[2] == 1.0 and strict[0] > 0.6
    assert eager[0] <= balanced[0] <= strict[0]
    # no hit at all is refused at any floor
    assert best_floor([0.5], [-math.inf], 0.5)[2] == 1.0


def test_input_errors():
    c = corpus()
    with pytest.raises(ValueError, match="in_scope is empty"):
        calibrate_min_score(c, [], OUT)
    with pytest.raises(ValueError, match="out_of_scope is empty"):
        calibrate_min_score(c, IN, [])
    with pytest.raises(TypeError, match="query string"):
        calibrate_min_score(c, [3], OUT)
    with pytest.raises(TypeError, match="list of query strings"):
        calibrate_min_score(c, "wing", OUT)
    with pytest.raises(ValueError, match="empty query"):
        calibrate_min_score(c, IN, ["  "])
    with pytest.raises(ValueError, match="weight"):
        calibrate_min_score(c, IN, OUT, weight=1.5)
    with pytest.raises(ValueError, match="mode"):
        calibrate_min_score(c, IN, OUT, mode="fuzzy")
    with pytest.raises(ValueError, match="fusion"):
        calibrate_min_score(c, IN, OUT, mode="hybrid", fusion="max")
    with pytest.raises(ValueError, match="surface_weights"):
        calibrate_min_score(c, IN, OUT, surface_weights={"document": 2.0})

    # objects with a .query work (evaluation cases)
    class Case:
        def __init__(self, q):
            self.query = q

    cal = calibrate_min_score(
        c, [Case(q) for q in IN], [Case(q) for q in OUT], mode="lexical", save=False
    )
    assert not cal.saved and load_calibration(c, "lexical") is None


def test_read_queries(tmp_path):
    (tmp_path / "q.txt").write_text("# comment\nwing lift\n\n  shock  \n")
    assert read_queries(tmp_path / "q.txt") == ["wing lift", "shock"]
    (tmp_path / "q.json").write_text(json.dumps(["a", {"query": "b", "gold": ["1"]}]))
    assert read_queries(tmp_path / "q.json") == ["a", "b"]
    (tmp_path / "q.jsonl").write_text('{"__meta__": {"v": 1}}\n{"query": "c"}\n"d"\n')
    assert read_queries(tmp_path / "q.jsonl") == ["c", "d"]
    (tmp_path / "bad.json").write_text(json.dumps([{"q": "x"}]))
    with pytest.raises(ValueError, match="entry 1"):
        read_queries(tmp_path / "bad.json")
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ValueError, match="no query"):
        read_queries(tmp_path / "empty.txt")


# ------------------------------------------------------------------ RRF evidence
def test_rrf_hits_carry_their_blend_score_as_evidence():
    c = corpus()
    for q in IN + OUT:
        rrf = search(c, q, k=6, mode="hybrid", fusion="rrf")
        blend = {h.artifact_id: h.score for h in search(c, q, k=6, mode="hybrid", fusion="blend")}
        for h in rrf:
            assert h.explain["evidence"] == pytest.approx(blend[h.artifact_id], abs=1e-6)
            assert floor_score(h) == h.explain["evidence"]
        # other modes carry none: their score is what floors compare
        for h in search(c, q, k=3, mode="hybrid", fusion="blend"):
            assert "evidence" not in h.explain and floor_score(h) == h.score


def test_raw_rrf_scores_cannot_be_floored_but_evidence_can():
    c = corpus()

    def top_rrf(q):
        hits = search(c, q, k=6, mode="hybrid", fusion="rrf")
        return hits[0].score if hits else 0.0

    # the raw RRF top score is about 2 / (60 + 1) for in-scope and off-topic
    # queries alike: no floor separates them
    raw_in = [top_rrf(q) for q in IN]
    raw_out = [top_rrf(q) for q in OUT]
    assert min(raw_in) == max(raw_in) == pytest.approx(2 / 61)
    assert top_rrf("heat the oven and bake") == pytest.approx(2 / 61)  # off topic, same score
    assert max(raw_out) >= min(raw_in)
    cal = calibrate_min_score(c, IN, OUT, mode="hybrid", fusion="rrf")
    assert cal.key == "hybrid" and cal.sensitivity == 1.0 and cal.specificity == 1.0
    for q in OUT:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = discover(c, q, min_score="auto")
        assert res.abstained and res.reason == "abstain:below_floor", q
    for q in IN:
        assert not discover(c, q, min_score="auto").abstained, q
    # select applies a numeric floor to the evidence too
    hits = search(c, IN[0], k=6, mode="hybrid")
    assert select(hits, min_score=cal.min_score).selected_ids
    assert select(hits, min_score=floor_score(hits[0]) + 1e-9).abstained is (
        max(floor_score(h) for h in hits) <= floor_score(hits[0])
    )


# ------------------------------------------------------------------ invalidation
def test_floor_is_ignored_after_the_embedder_changes_only_where_it_matters():
    store = CorpusStore.memory()
    c = corpus(store=store)
    for mode, fusion in (("lexical", "rrf"), ("dense", "rrf"), ("hybrid", "blend")):
        calibrate_min_score(c, IN, OUT, mode=mode, fusion=fusion)
    before = c.embedder_id
    c2 = corpus(store=store, embedder="hashing:64")  # rebuilt with another embedder
    assert c2.embedder_id != before
    with pytest.warns(NoFloorWarning, match="calibrated with embedder"):
        res = discover(c2, OUT[0], mode="dense", min_score="auto")
    assert res.signals["floor_from"] is None
    with pytest.warns(NoFloorWarning, match="calibrated with embedder"):
        discover(c2, OUT[0], mode="hybrid", fusion="blend", min_score="auto")
    # BM25 scores do not depend on the embedder: the lexical floor still applies
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = discover(c2, OUT[0], mode="lexical", min_score="auto")
    assert res.signals["floor_from"] == "calibration" and res.abstained


def test_floor_is_ignored_after_the_strategy_or_analyzer_changes():
    store = CorpusStore.memory()
    c = corpus(store=store)
    calibrate_min_score(c, IN, OUT, mode="lexical")
    calibrate_min_score(c, IN, OUT, mode="dense")
    c2 = corpus(store=store, strategy=Chunked(chunk_size=40, overlap=0))
    with pytest.warns(NoFloorWarning, match="calibrated with strategy"):
        discover(c2, OUT[0], mode="lexical", min_score="auto")
    # an analyzer change (as a new rowvoi default would make) on a fresh corpus
    c3 = corpus()
    calibrate_min_score(c3, IN, OUT, mode="lexical")
    calibrate_min_score(c3, IN, OUT, mode="dense")
    con = sqlite3.connect(c3.store.db_path, isolation_level=None)
    try:
        lex = json.loads(con.execute("SELECT value FROM state WHERE key='lexical'").fetchone()[0])
        lex["bm25"]["k1"] = 0.9
        con.execute("UPDATE state SET value=? WHERE key='lexical'", (json.dumps(lex),))
    finally:
        con.close()
    c3.store._states.clear()
    with pytest.warns(NoFloorWarning, match="analyzer and BM25 settings"):
        discover(c3, OUT[0], mode="lexical", min_score="auto")
    with warnings.catch_warnings():  # a dense floor does not read the analyzer
        warnings.simplefilter("error")
        discover(c3, OUT[0], mode="dense", min_score="auto")


def test_blend_parameters_must_match():
    c = corpus()
    calibrate_min_score(c, IN, OUT, mode="hybrid", fusion="blend", alpha=0.7)
    rec = stored_calibration(c, "hybrid+blend")
    assert rec["params"] == {"alpha": 0.7, "bm25_sat_k": 8.0}
    with pytest.warns(NoFloorWarning, match="alpha=0.7"):
        discover(c, OUT[0], fusion="blend", min_score="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = discover(c, OUT[0], fusion="blend", alpha=0.7, min_score="auto")
    assert res.signals["floor_from"] == "calibration"
    assert calibration_problem(c, rec, "hybrid", {"alpha": 0.7, "fusion": "blend"}) is None


def test_federated_discovery_gates_each_corpus_on_its_own_floor():
    aero = corpus("aero")
    food = corpus(
        "food",
        docs={
            "pie": "apple pie with cinnamon and butter pastry",
            "pizza": "neapolitan pizza dough with tomato and mozzarella",
            "soup": "miso soup with tofu and seaweed",
        },
    )
    calibrate_min_score(aero, IN, OUT, mode="lexical")
    calibrate_min_score(
        food,
        ["apple pie", "pizza dough", "miso soup"],
        ["wing lift", "shock wave"],
        mode="lexical",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = discover([aero, food], "apple pie with cinnamon", mode="lexical", min_score="auto")
    ps = res.signals["per_source"]
    assert ps["aero"]["abstained"] and not ps["food"]["abstained"]
    assert ps["aero"]["floor"] == load_calibration(aero, "lexical").min_score
    assert ps["food"]["floor"] == load_calibration(food, "lexical").min_score
    assert {r.source for r in res.results} == {"food"}


# ------------------------------------------------------------------ storage
def test_saving_takes_the_builder_lock_and_checks_the_corpus_did_not_change():
    c = corpus()
    with c.store.lock(), pytest.raises(CorpusLocked):
        calibrate_min_score(c, IN, OUT, mode="lexical")
    assert stored_calibration(c, "lexical") is None
    with pytest.raises(CorpusError, match="changed"):
        c.store.set_calibration(
            "lexical", {"min_score": 1.0}, expect={"embedder_id": "something-else"}
        )
    assert stored_calibration(c, "lexical") is None
    with pytest.raises(ValueError, match="key"):
        c.store.set_calibration("", {"min_score": 1.0})


@pytest.mark.stress
def test_recalibrating_while_discovering_from_threads():
    c = corpus()
    calibrate_min_score(c, IN, OUT, mode="lexical")
    errors: list[BaseException] = []
    stop = time.monotonic() + 2.0

    def reader(q, want_abstain):
        try:
            while time.monotonic() < stop:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    res = discover(c, q, mode="lexical", min_score="auto")
                assert res.abstained is want_abstain, q
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer():
        try:
            while time.monotonic() < stop:
                calibrate_min_score(c, IN, OUT, mode="lexical")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [
        threading.Thread(target=reader, args=(IN[0], False)),
        threading.Thread(target=reader, args=(OUT[0], True)),
        threading.Thread(target=writer),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# ------------------------------------------------------------------ CLI
from rowvoi.cli.main import main  # noqa: E402


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for k, v in DOCS.items():
        (docs / f"{k}.md").write_text(v)
    (tmp_path / "in.txt").write_text("\n".join(IN) + "\n")
    (tmp_path / "out.txt").write_text("# off topic\n" + "\n".join(OUT) + "\n")
    rc, _, err = run("build", "aero", "--files", str(docs), "--embedder", "hashing")
    assert rc == 0, err
    return tmp_path


def test_cli_calibrate_then_discover_auto(home):
    rc, out, err = run(
        "calibrate",
        "aero",
        "--in-scope",
        str(home / "in.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
        "--mode",
        "lexical",
    )
    assert rc == 0, err
    assert out.startswith("floor ") and "'lexical' searches of corpus 'aero'" in out
    assert "saved: discover" in out
    rc, out, err = run(
        "discover", "aero", OUT[1], "--mode", "lexical", "--min-score", "auto", "--json"
    )
    assert rc == 0 and json.loads(out)["abstained"] is True, err
    rc, out, err = run(
        "discover", "aero", IN[1], "--mode", "lexical", "--min-score", "auto", "--json"
    )
    assert rc == 0 and json.loads(out)["results"][0]["artifact_id"] == "shock.md"


def test_cli_json_no_save_and_plot(home):
    png = home / "floor.png"
    rc, out, err = run(
        "calibrate",
        "aero",
        "--in-scope",
        str(home / "in.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
        "--mode",
        "hybrid",
        "--fusion",
        "rrf",
        "--no-save",
        "--plot",
        str(png),
        "--json",
    )
    assert rc == 0, err
    d = json.loads(out)
    assert d["key"] == "hybrid" and d["saved"] is False and d["plot"] == str(png)
    assert d["n_in"] == len(IN) and d["n_out"] == len(OUT)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert not list(home.glob("floor.png.tmp*"))  # no temporary left behind
    rc, out, _ = run(
        "calibrate",
        "aero",
        "--in-scope",
        str(home / "in.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
        "--json",
    )
    assert rc == 0 and json.loads(out)["saved"] is True


def test_cli_errors(home, monkeypatch):
    args = ["--in-scope", str(home / "in.txt"), "--out-of-scope", str(home / "out.txt")]
    rc, _, err = run("calibrate", "nope", *args)
    assert rc == 1 and "no corpus 'nope'" in err
    rc, _, err = run("calibrate", "aero", *args, "--weight", "2")
    assert rc == 2 and "[0, 1]" in err
    rc, _, err = run(
        "calibrate",
        "aero",
        "--in-scope",
        str(home / "missing.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
    )
    assert rc == 1 and "missing.txt" in err
    for mod in [m for m in sys.modules if m.split(".")[0] == "matplotlib"] + ["matplotlib"]:
        monkeypatch.setitem(sys.modules, mod, None)  # matplotlib not installed
    rc, _, err = run("calibrate", "aero", *args, "--plot", str(home / "x.png"))
    assert rc == 1 and "pip install 'rowvoi[plot]'" in err
    assert not (home / "x.png").exists()
    with pytest.raises(ImportError, match=r"rowvoi\[plot\]"):
        Calibration(
            None, "dense", "dense", None, 0.5, 1.0, 1.0, 0.5, 0.1, (0.6,), (0.4,), 10
        ).plot(home / "y.png")


# ------------------------------------------------------------------ README
def test_readme_calibrated_abstention(tmp_path):
    """The README's "Calibrated abstention" commands run as written."""
    from readme_blocks import run_commands, run_python, section

    text = section("### Calibrated abstention")
    outputs = run_commands(text, tmp_path / "home")
    assert "refused  100.0%" in outputs[1] and "answered 100.0%" in outputs[1]
    assert "0 of 2 retrieved" in outputs[2] and "abstain:below_floor" in outputs[2]
    assert "top score 0.6127 is below the floor 1.312" in outputs[2]
    assert " 1. " in outputs[3] and "stall.md" in outputs[3].split(" 1. ")[1].splitlines()[0]
    d = json.loads(outputs[4].strip().splitlines()[-1])
    assert d["key"] == "hybrid" and d["saved"] and d["specificity"] == 1.0
    assert d["sensitivity"] == 1.0
    assert not (tmp_path / "home" / "corpora" / "notes").exists()
    out = run_python(text, tmp_path / "home").splitlines()
    floor, sens, spec = out[0].split()
    assert float(floor) > 0 and sens == "1.0" and spec == "1.0"
    assert out[1] == "True"


def test_discover_reports_the_evidence_it_floored(home):
    rc, _, err = run(
        "calibrate",
        "aero",
        "--in-scope",
        str(home / "in.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
    )  # hybrid RRF
    assert rc == 0, err
    rc, out, _ = run("discover", "aero", OUT[4], "--min-score", "auto", "--json")
    d = json.loads(out)
    assert d["abstained"] and d["signals"]["top_evidence"] < d["signals"]["min_score"]
    assert d["signals"]["top_score"] == pytest.approx(2 / 61)  # the RRF score, not floored
    rc, out, _ = run("discover", "aero", OUT[4], "--min-score", "auto")
    assert f"top evidence {d['signals']['top_evidence']:.4g} is below the floor" in out


def _number_after(text, label):
    """The number printed right after ``label`` in ``text``."""
    tail = text.split(label, 1)[1]
    return float(tail.split()[0].rstrip(",):"))


def test_discover_never_shows_a_score_below_the_floor_it_committed_on(home):
    """Issue 28: a hybrid RRF discover printed an RRF score of 0.0325
    under a floor of 0.158 and still committed (the floor compared the
    hit's evidence, shown only in --json). The human output now shows,
    labelled, the number compared with the floor: on the floor's line and
    on every committed hit's line; never a floor beside an unlabelled
    number below it."""
    rc, _, err = run(
        "calibrate",
        "aero",
        "--in-scope",
        str(home / "in.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
    )  # hybrid RRF
    assert rc == 0, err
    committed = 0
    for q in IN:
        rc, js, _ = run("discover", "aero", q, "--min-score", "auto", "--json")
        d = json.loads(js)
        rc, out, _ = run("discover", "aero", q, "--min-score", "auto")
        assert rc == 0
        floor = d["signals"]["min_score"]
        assert floor is not None and d["signals"]["floor_compares"] == "evidence"
        top = d["signals"]["top_floor_score"]
        assert top == d["signals"]["top_evidence"]
        if d["abstained"]:
            assert f"top evidence {top:.4g} is below the floor {floor:.4g}" in out
            continue
        committed += 1
        # the RRF score (what the result lines show first) is below the
        # floor: the contradiction the output used to print
        assert all(r["score"] < floor for r in d["results"])
        assert top >= floor
        assert (
            f"floor {floor:.4g} (calibration), compared with each hit's evidence "
            f"(its blend score; an RRF score depends on ranks only): top evidence {top:.4g}"
        ) in out
        lines = [ln for ln in out.splitlines() if ln[:4].strip().rstrip(".").isdigit()]
        assert len(lines) == len(d["results"]) > 0
        for line in lines:
            assert f", floor {floor:.4g})" in line
            assert _number_after(line, "(evidence ") >= float(f"{floor:.4g}")
    assert committed >= 3  # in-scope queries commit
    # several corpora: each source's line shows its floor with its evidence
    rc, _, err = run("build", "aero2", "--files", str(home / "docs"), "--embedder", "hashing")
    assert rc == 0, err
    rc, _, err = run(
        "calibrate",
        "aero2",
        "--in-scope",
        str(home / "in.txt"),
        "--out-of-scope",
        str(home / "out.txt"),
    )
    assert rc == 0, err
    rc, js, _ = run("discover", "aero,aero2", IN[0], "--min-score", "auto", "--json")
    per = json.loads(js)["signals"]["per_source"]
    rc, out, _ = run("discover", "aero,aero2", IN[0], "--min-score", "auto")
    for name, ps in per.items():
        line = next(ln for ln in out.splitlines() if ln.startswith(f"  {name}: "))
        assert (
            f"top {ps['top_score']:.4g}, floor {ps['floor']:.4g} on the evidence "
            f"(top evidence {ps['top_evidence']:.4g})"
        ) in line
        assert ps["top_score"] < ps["floor"] <= ps["top_evidence"] and "gated" not in line


def test_select_reports_what_its_floor_compared():
    """select(): top_floor_score is the number the floor compared (the
    evidence of an RRF hit), so a committed selection never reports a top
    below its floor; plain hits compare their scores."""
    from rowvoi.corpus.base import SearchHit

    rrf = [
        SearchHit("a", "document", 0.0325, "", explain={"evidence": 0.61}),
        SearchHit("b", "document", 0.0320, "", explain={"evidence": 0.70}),
    ]
    sel = select(rrf, min_score=0.158)
    assert not sel.abstained and sel.signals["top_score"] == 0.0325
    assert sel.signals["floor_compares"] == "evidence"
    assert sel.signals["top_floor_score"] == 0.70 >= sel.signals["min_score"]
    sel = select(rrf, min_score=0.8)
    assert sel.abstained and sel.signals["top_floor_score"] == 0.70
    plain = [SearchHit("a", "document", 2.0, ""), SearchHit("b", "document", 1.0, "")]
    sel = select(plain, min_score=1.5)
    assert sel.signals["floor_compares"] == "score" and sel.signals["top_floor_score"] == 2.0
    assert select([]).signals["top_floor_score"] is None
