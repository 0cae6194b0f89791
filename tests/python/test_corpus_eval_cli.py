"""rowvoi eval / eval-select / sweep-select: the acceptance run on
Cranfield (trec_eval's nDCG@10 and MAP per mode, within 1e-4) and the
verbs' flags, JSON and exit codes.

Cranfield is built once for the module through the CLI with the hashing
embedder (under a second; MiniLM would take tens of seconds and the
acceptance is about the metrics, not the model: the figures with MiniLM
are in bench/results/eval.md). Queries are numbered by position, -1
judgements dropped, gain = 5 - grade.
"""

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rowvoi.cli.main import main
from rowvoi.corpus import CorpusStore, open_corpus, search
from rowvoi.corpus.eval import DiscoveryCase, save_cases, to_qrels

pytrec_eval = pytest.importorskip("pytrec_eval")  # in the test extra: CI runs it

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "cranfield"


def _records(path):
    """The records of a SMART-format file (the benchmarks' parser,
    bench/_common/cranfield.py, loaded by path: it needs only the standard
    library)."""
    spec = importlib.util.spec_from_file_location(
        "_bench_cranfield", ROOT / "bench" / "_common" / "cranfield.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look the module up by name
    spec.loader.exec_module(mod)
    return mod.records(str(path))


def cranfield_cases():
    queries = [r.get("W", "").strip() for r in _records(DATA / "cran.qry")]
    gains = {}
    for line in (DATA / "cranqrel").read_text().splitlines():
        q, doc, grade = (int(x) for x in line.split()[:3])
        if grade != -1:
            gains.setdefault(q, {})[str(doc)] = 5 - grade
    return [
        DiscoveryCase(text, list(gains[i]), gains[i], source_id=str(i))
        for i, text in enumerate(queries, 1)
    ]


@pytest.fixture(scope="module")
def cran(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cran")
    home = tmp / "home"
    records = tmp / "cran.jsonl"
    with open(records, "w") as fh:
        for r in _records(DATA / "cran.all.1400"):
            fh.write(
                json.dumps({"id": r["I"], "text": (r.get("T", "") + " " + r.get("W", "")).strip()})
                + "\n"
            )
    cases = save_cases(
        cranfield_cases(),
        tmp / "cases.jsonl",
        meta={"collection": "cranfield", "gain": "5 - grade"},
    )
    env = dict(os.environ, ROWVOI_HOME=str(home))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "rowvoi",
            "build",
            "cran",
            "--records",
            str(records),
            "--strategy",
            "whole",
            "--embedder",
            "hashing",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return {"tmp": tmp, "home": home, "cases": cases, "env": env}


def cli(env, *argv):
    return subprocess.run(
        [sys.executable, "-m", "rowvoi", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "mode,fusion", [("lexical", "rrf"), ("dense", "rrf"), ("hybrid", "rrf"), ("hybrid", "blend")]
)
def test_rowvoi_eval_equals_trec_eval_on_cranfield(cran, mode, fusion):
    run_file = cran["tmp"] / f"{mode}-{fusion}.run"
    p = cli(
        cran["env"],
        "eval",
        "cran",
        str(cran["cases"]),
        "--mode",
        mode,
        "--fusion",
        fusion,
        "--k",
        "5,10,100",
        "--run",
        str(run_file),
        "--json",
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["n_gold"] == 225 and report["n_cases"] == 225
    assert sum(report["failure_classes"].values()) == 225
    # trec_eval on the run file rowvoi wrote, with the collection's qrels
    run: dict = {}
    for line in run_file.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    _, qrels = to_qrels(
        load := [
            DiscoveryCase(c["query"], c["gold"], c.get("grades"))
            for c in map(json.loads, cran["cases"].read_text().splitlines()[1:])
        ]
    )
    assert len(load) == 225
    ev = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in v.items()} for q, v in qrels.items()},
        {"ndcg_cut.10", "map", "P.5", "recall.100"},
    )
    res = ev.evaluate(run)
    assert len(res) == 225

    def mean(m):
        return sum(v[m] for v in res.values()) / len(res)

    got = report["metrics"]
    assert abs(got["ndcg@10"] - mean("ndcg_cut_10")) < 1e-4
    assert abs(got["map@100"] - mean("map")) < 1e-4  # the run is 100 deep
    assert abs(got["precision@5"] - mean("P_5")) < 1e-4
    assert abs(got["recall@100"] - mean("recall_100")) < 1e-4
    # and the run is the search itself: query 1 as the API ranks it, 100 deep (a
    # hybrid ranking's candidates depend on k, so compare at the same depth)
    corpus = open_corpus("cran", store=CorpusStore(cran["home"] / "corpora" / "cran", name="cran"))
    kw = {"fusion": fusion} if mode == "hybrid" else {}
    api = [h.artifact_id for h in search(corpus, load[0].query, k=100, mode=mode, **kw)]
    assert [d for d, _ in sorted(run["q00001"].items(), key=lambda t: -t[1])] == api
    floor = {"lexical": 0.37, "dense": 0.15, "hybrid": 0.3}[mode]  # hashing embedder
    assert got["ndcg@10"] >= floor


def test_eval_select_and_sweep_on_cranfield(cran):
    p = cli(
        cran["env"],
        "eval-select",
        "cran",
        str(cran["cases"]),
        "--mode",
        "hybrid",
        "--fusion",
        "blend",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["n_gold"] == 225 and 0 < r["selection_precision"] <= 1
    assert r["config"]["max_k"] == 3 and 1 <= r["results_per_query"] <= 3
    plot = cran["tmp"] / "frontier.png"
    p = cli(
        cran["env"],
        "sweep-select",
        "cran",
        str(cran["cases"]),
        "--mode",
        "hybrid",
        "--fusion",
        "blend",
        "--max-k-grid",
        "1,2,3",
        "--rel-grid",
        "0.5,0.9",
        "--held-out",
        "2",
        "--plot",
        str(plot),
    )
    assert p.returncode == 0, p.stderr
    assert "best selection_f1" in p.stdout and "frontier" in p.stdout
    assert "held-out selection_f1" in p.stdout and "fold 1: max_k=" in p.stdout
    assert plot.read_bytes()[:4] == b"\x89PNG"


# ------------------------------------------------------------- small corpus
@pytest.fixture
def notes(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    d = tmp_path / "notes"
    d.mkdir()
    (d / "stall.md").write_text("Wing stall at high angle of attack")
    (d / "shock.md").write_text("Shock waves in supersonic nozzles")
    (d / "pipe.md").write_text("Laminar flow in a pipe")
    assert run("build", "notes", "--files", str(d), "--embedder", "hashing")[0] == 0
    cases = tmp_path / "cases.jsonl"
    save_cases(
        [
            DiscoveryCase("stall of a wing", ["stall.md"]),
            DiscoveryCase("supersonic shock", ["shock.md", "gone.md"]),
            DiscoveryCase("pasta recipes"),
        ],
        cases,
    )
    return tmp_path, cases


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_verbs_text_json_and_warnings(notes):
    _tmp, cases = notes
    rc, out, err = run(
        "eval", "notes", str(cases), "--mode", "lexical", "--rows", "--abstain-threshold", "0.5"
    )
    assert rc == 0 and "nDCG@10" in out and "hit_rank_1" in out and "pasta recipes" in out
    assert "1 gold id(s) in 1 case(s) are not in corpus 'notes'" in err
    rc, out, _ = run(
        "eval",
        "notes",
        str(cases),
        "--mode",
        "lexical",
        "--json",
        "--k",
        "1,3",
        "--metrics",
        "ndcg,map",
    )
    d = json.loads(out)
    assert set(d["metrics"]) == {"ndcg@1", "ndcg@3", "ndcg@10", "map@1", "map@3", "map@10"}
    assert "rows" not in d and d["config"]["mode"] == "lexical"
    rc, out, _ = run(
        "eval-select", "notes", str(cases), "--mode", "lexical", "--max-k", "1", "--json", "--rows"
    )
    d = json.loads(out)
    assert rc == 0 and d["conditional_commit_rate"] == 1.0 and len(d["rows"]) == 3
    rc, out, _ = run("eval-select", "notes", str(cases), "--mode", "lexical")
    assert rc == 0 and "conditional commit rate" in out
    rc, out, _ = run(
        "sweep-select",
        "notes",
        str(cases),
        "--mode",
        "lexical",
        "--json",
        "--min-score-grid",
        "none,0.1",
        "--objective",
        "commit_precision",
    )
    d = json.loads(out)
    assert rc == 0 and d["objective"] == "commit_precision" and len(d["points"]) == 60


@pytest.mark.parametrize(
    "argv,code,message",
    [
        (["eval", "nope", "CASES"], 1, "nope"),
        (["eval", "notes", "MISSING"], 1, "no such file"),
        (["eval", "notes", "BAD"], 2, "CASES:"),
        (["eval", "notes", "EMPTY"], 1, "holds no cases"),
        # out-of-range numbers and unknown choices are usage errors (issue 28)
        (["eval", "notes", "CASES", "--k", "ten"], 2, "argument --k"),
        (["eval", "notes", "CASES", "--k", "0"], 2, "argument --k"),
        (["eval", "notes", "CASES", "--mode", "fuzzy"], 2, "invalid choice: 'fuzzy'"),
        (["eval", "notes", "CASES", "--metrics", "bleu"], 2, "unknown metric"),
        (["eval-select", "notes", "CASES", "--rel", "2"], 2, "argument --rel"),
        (["eval-select", "notes", "CASES", "--max-k", "x"], 2, "integer"),
        (["sweep-select", "notes", "CASES", "--rel-grid", "0.5,abc"], 2, "'abc'"),
        (["sweep-select", "notes", "CASES", "--rel-grid", "0"], 2, "(0, 1]"),
        (["sweep-select", "notes", "CASES", "--objective", "speed"], 2, "invalid choice"),
        (["sweep-select", "notes", "CASES", "--held-out", "1"], 2, "argument --held-out"),
        # more folds than cases: the data decide, a failure
        (["sweep-select", "notes", "CASES", "--held-out", "99"], 1, "number of folds"),
        (["sweep-select", "notes", "CASES", "--plot", "out.gif"], 1, ".png"),
    ],
)
def test_exit_codes(notes, argv, code, message):
    tmp, cases = notes
    (tmp / "bad.jsonl").write_text('{"query": "q", "gold": {"a": 1}}\n')
    (tmp / "empty.jsonl").write_text("\n")
    files = {
        "CASES": str(cases),
        "MISSING": str(tmp / "missing.jsonl"),
        "BAD": str(tmp / "bad.jsonl"),
        "EMPTY": str(tmp / "empty.jsonl"),
        "out.gif": str(tmp / "out.gif"),
    }
    rc, _, err = run(*[files.get(a, a) for a in argv])
    assert rc == code and message in err, err


def test_plot_needs_the_extra(notes, monkeypatch):
    tmp, cases = notes
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rc, _, err = run("sweep-select", "notes", str(cases), "--plot", str(tmp / "f.png"))
    assert rc == 1 and "pip install 'rowvoi[plot]'" in err
    assert not (tmp / "f.png").exists()


def test_help(capsys):
    for verb in ("eval", "eval-select", "sweep-select"):
        assert main([verb, "--help"]) == 0
        assert "CASES.jsonl" in capsys.readouterr().out


def test_readme_measure_your_retrieval(tmp_path):
    from readme_blocks import run_commands, run_python, section

    text = section("### Measure your retrieval")
    outs = run_commands(
        text, tmp_path / "home", lambda a: str(tmp_path / a) if a.endswith(".png") else a
    )
    assert "nDCG@10: 0.9600" in outs[1] and "failures: hit_rank_1 6, abstention_ok 2" in outs[1]
    assert "selection F1:            0.7778" in outs[2]
    assert "best selection_f1: 0.9444 at max_k=1 rel=0.9 min_score=1.0" in outs[3]
    assert (tmp_path / "frontier.png").read_bytes()[:4] == b"\x89PNG"
    lines = run_python(text, tmp_path / "home").splitlines()
    assert lines[0].startswith("0.96") and "'hit_rank_1': 6" in lines[0]
    assert lines[2].startswith("{'max_k': 1, 'rel': 0.9, 'min_score': None}")
