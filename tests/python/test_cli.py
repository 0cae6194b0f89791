"""The rowvoi command line."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rowvoi.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "examples" / "data" / "customers.csv"
COSTS = ROOT / "examples" / "data" / "customers_costs.json"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_key_human_and_json(capsys):
    code, out, _ = run(
        capsys, "key", str(CSV), "--index-col", "customer_id", "--costs", str(COSTS)
    )
    assert code == 0
    assert out.splitlines()[0].startswith("key: ")
    code, out, _ = run(
        capsys,
        "key",
        str(CSV),
        "--index-col",
        "customer_id",
        "--costs",
        str(COSTS),
        "--strategy",
        "exact",
        "--json",
    )
    data = json.loads(out)
    assert data["optimal"] is True and data["coverage"] == 1.0
    assert data["pairs"] == 66 and data["covered_pairs"] == 66
    df = pd.read_csv(CSV).set_index("customer_id")
    costs = json.loads(COSTS.read_text())
    assert data["cost"] == sum(costs[c] for c in data["key"])
    from rowvoi import KeyProblem

    assert KeyProblem(df, None).is_key(data["key"])


def test_rows_by_label_and_by_position(capsys):
    code, out, _ = run(
        capsys,
        "key",
        str(CSV),
        "--index-col",
        "customer_id",
        "--rows",
        "C001,C002,C003",
        "--json",
        "--strategy",
        "exact",
    )
    assert code == 0 and json.loads(out)["rows"] == 3
    code, out2, _ = run(
        capsys,
        "key",
        str(CSV),
        "--index-col",
        "customer_id",
        "--rows",
        "0:3",
        "--positions",
        "--json",
        "--strategy",
        "exact",
    )
    assert code == 0 and json.loads(out2)["key"] == json.loads(out)["key"]
    code, out3, _ = run(
        capsys,
        "key",
        str(CSV),
        "--rows",
        "0,1,2",
        "--json",
        "--strategy",
        "exact",
        "--columns",
        "name,city,plan,signup_year,card_last4,email_domain,phone_area",
    )
    assert json.loads(out3)["key"] == json.loads(out)["key"]


def test_inline_costs_change_the_key(capsys):
    _code, out, _ = run(
        capsys,
        "key",
        str(CSV),
        "--rows",
        "0,1",
        "--json",
        "--costs",
        "city=10,plan=10,signup_year=10,card_last4=10,email_domain=10,phone_area=0.5,name=10",
        "--strategy",
        "exact",
    )
    assert json.loads(out)["key"] == ["phone_area"]


def test_path_table_and_json(capsys):
    code, out, _ = run(capsys, "path", str(CSV), "--index-col", "customer_id")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "12 rows, 66 pairs to tell apart"
    assert lines[1].split()[:2] == ["step", "column"]
    assert lines[-1].split()[4] == "100.0%"
    code, out, _ = run(capsys, "path", str(CSV), "--index-col", "customer_id", "--json")
    data = json.loads(out)
    steps = data["steps"]
    assert steps[-1]["cumulative_covered_pairs"] == 66
    assert sum(s["newly_covered_pairs"] for s in steps) == 66
    code, out, _ = run(capsys, "path", str(CSV), "--budget", "1", "--json")
    assert len(json.loads(out)["steps"]) == 1


def test_parquet_input(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    pq = tmp_path / "t.parquet"
    pd.read_csv(CSV).to_parquet(pq)
    code, out, _ = run(capsys, "key", str(pq), "--json")
    assert code == 0 and json.loads(out)["coverage"] == 1.0


def test_errors_and_exit_codes(capsys, tmp_path):
    code, _, err = run(capsys, "key", str(CSV), "--columns", "name,plan")
    assert code == 1 and "no key exists" in err and err.startswith("rowvoi key: error:")
    code, _, err = run(capsys, "key", str(tmp_path / "missing.csv"))
    assert code == 1 and "no such file" in err
    code, _, err = run(capsys, "key", str(CSV), "--costs", "name=-1")
    assert code == 2 and "'name'" in err
    assert run(capsys, "key", str(CSV), "--strategy", "nope")[0] == 2
    assert run(capsys, "key", str(CSV), "--costs", "name")[0] == 2
    assert run(capsys, "key", str(CSV), "--rows", "0:99", "--positions")[0] == 1


def test_version_and_console_script():
    proc = subprocess.run(
        [sys.executable, "-m", "rowvoi", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.startswith("rowvoi ")
    proc = subprocess.run(
        [sys.executable, "-m", "rowvoi", "key", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "--strategy" in proc.stdout


def test_man_page_is_current():
    pytest.importorskip("argparse_manpage")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "manpage.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    text = (ROOT / "man" / "rowvoi.1").read_text()
    for verb in ("rowvoi key", "rowvoi path", "rowvoi ask", "rowvoi context", "rowvoi question"):
        assert verb in text


RAG = ROOT / "examples" / "rag"


def test_context_command(capsys, tmp_path):
    code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--json")
    data = json.loads(out)
    assert code == 0 and sorted(data["chunks"]) == ["doc1#p2", "doc2#p1"]
    assert data["cost"] == 330.0 and data["missing_claims"] == ["refund_policy"]
    code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--budget", "200", "--json")
    assert json.loads(out)["chunks"] == ["doc2#p1"]
    code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--epsilon", "0.7")
    assert code == 0 and out.startswith("chunks: doc2#p1\n")
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {"chunks": [{"id": "a", "tokens": 5}], "claims": ["c"], "support": {"d": ["a"]}}
        )
    )
    code, _, err = run(capsys, "context", str(bad))
    assert code == 1 and "not in `claims`" in err
    bad.write_text("{}")
    code, _, err = run(capsys, "context", str(bad))
    assert code == 2 and "expected an object" in err


def test_question_command(capsys):
    code, out, _ = run(capsys, "question", str(RAG / "answers.json"))
    lines = out.splitlines()
    assert code == 0 and lines[1].endswith("Which deployment?  <- ask this")
    assert lines[3].split()[0] == "0.00"
    code, out, _ = run(
        capsys, "question", str(RAG / "answers.json"), "--json", "--costs", "Which deployment?=5"
    )
    data = json.loads(out)
    assert data["best"] == "Which version?"
    assert next(q["question"] for q in data["questions"]) == "Which version?"
    code, out, _ = run(
        capsys, "question", str(RAG / "answers.json"), "--json", "--prior", "0,0,1,1"
    )
    assert json.loads(out)["best"] == "Which version?"
    code, _, err = run(capsys, "question", str(RAG / "answers.json"), "--prior", "1,2")
    assert code == 1 and "prior" in err


def test_rag_pipeline_example_runs():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "rag" / "rag_pipeline_demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "chunks: ['pricing#p1', 'pricing#p4', 'release#v42']  (290 tokens" in out
    assert "ask: 'Cloud or self-hosted?'" in out
    assert "best candidate 3 at 86% after cost 2" in out


# ------------------------------------------------- defects found by new users
def test_key_plain_output_says_whether_the_key_is_proven(capsys):
    table = (str(CSV), "--index-col", "customer_id", "--costs", str(COSTS))
    code, out, _ = run(capsys, "key", *table)
    assert code == 0 and "cost: 5\n" in out
    assert "strategy: greedy (not proven optimal)\n" in out
    code, out, _ = run(capsys, "key", *table, "--strategy", "exact")
    assert code == 0 and "key: name, city, signup_year\n" in out and "cost: 4\n" in out
    assert "strategy: exact (proven optimal)\n" in out
    code, out, _ = run(capsys, "key", *table, "--strategy", "sa")
    assert "strategy: sa (not proven optimal)\n" in out


def test_path_budget_cut_is_not_blamed_on_identical_rows(capsys):
    code, out, _ = run(
        capsys,
        "path",
        str(CSV),
        "--index-col",
        "customer_id",
        "--costs",
        str(COSTS),
        "--budget",
        "3",
    )
    assert code == 0
    last = out.splitlines()[-1]
    assert last.startswith(
        "budget 3 reached: the next column, signup_year (cost 2), would bring the total to 5"
    )
    assert last.endswith("; 1 pair(s) stay unresolved") and "identical" not in out
    code, out, _ = run(
        capsys,
        "path",
        str(CSV),
        "--index-col",
        "customer_id",
        "--costs",
        str(COSTS),
        "--budget",
        "3",
        "--json",
    )
    data = json.loads(out)
    assert data["stopped_by_budget"] is True and data["unresolved_pairs"] == 1
    assert data["indistinguishable_pairs"] == 0 and len(data["steps"]) == 3
    # a budget that fits the whole path cuts nothing
    code, out, _ = run(
        capsys,
        "path",
        str(CSV),
        "--index-col",
        "customer_id",
        "--costs",
        str(COSTS),
        "--budget",
        "5",
    )
    assert out.splitlines()[-1].split()[4] == "100.0%" and "budget" not in out


def test_path_names_identical_rows_when_they_are_the_reason(capsys, tmp_path):
    table = tmp_path / "twins.csv"
    table.write_text("id,x,y\na,1,1\nb,1,1\nc,2,1\nd,2,2\n")
    code, out, _ = run(capsys, "path", str(table), "--index-col", "id")
    assert code == 0 and out.splitlines()[-1] == (
        "1 pair(s) stay unresolved: some rows are identical on every column considered"
    )
    code, out, _ = run(capsys, "path", str(table), "--index-col", "id", "--budget", "1")
    assert out.splitlines()[-1] == (
        "budget 1 reached: the next column, y (cost 1), would bring the total to 2; "
        "2 pair(s) stay unresolved, 1 of them for good: some rows are identical on "
        "every column considered"
    )
    # two identical rows: no column helps, the path is empty, and says why
    table.write_text("id,x\na,1\nb,1\n")
    code, out, _ = run(capsys, "path", str(table), "--index-col", "id")
    assert code == 0 and "1 pair(s) stay unresolved: some rows are identical" in out


def test_context_json_has_one_shape_with_and_without_budget(capsys):
    _code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--json")
    full = json.loads(out)
    _code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--budget", "200", "--json")
    cut = json.loads(out)
    shared = {
        "chunks",
        "cost",
        "coverage",
        "optimal",
        "claims",
        "covered_claims",
        "missing_claims",
    }
    assert shared <= set(full) and shared <= set(cut) and {"budget", "steps"} <= set(cut)
    for data in (full, cut):
        assert isinstance(data["covered_claims"], list)
        assert isinstance(data["missing_claims"], list)
        assert data["claims"] == 3
        assert len(data["covered_claims"]) + len(data["missing_claims"]) == 3
        assert data["coverage"] == len(data["covered_claims"]) / 3
    assert full["covered_claims"] == ["pro_plan_price", "v42_release_date"]
    assert cut["covered_claims"] == ["v42_release_date"]
    assert cut["missing_claims"] == ["pro_plan_price", "refund_policy"]


# One exit-code rule for every verb: 2 for a malformed argument (wrong
# whatever the data), 1 for a well-formed request that fails. <name> stands
# for a file made by the `files` fixture.
SUPPORT = RAG / "support.json"
ANSWERS = RAG / "answers.json"
EXIT_CASES = [
    # key: numbers, specs and JSON that are malformed whatever the table says
    (["key", "<csv>", "--epsilon", "5"], 2, "argument --epsilon: must be a fraction in [0, 1]"),
    (["key", "<csv>", "--epsilon", "nan"], 2, "argument --epsilon: must be a fraction"),
    (["key", "<csv>", "--epsilon", "x"], 2, "argument --epsilon: must be a fraction"),
    (["key", "<csv>", "--time-limit", "0"], 2, "argument --time-limit: must be a number of"),
    (["key", "<csv>", "--time-limit", "inf"], 2, "argument --time-limit"),
    (["key", "<csv>", "--seed", "-1"], 2, "argument --seed: must be an integer >= 0"),
    (["key", "<csv>", "--strategy", "nope"], 2, "argument --strategy: invalid choice"),
    (["key", "<csv>", "--costs", "name"], 2, "--costs: 'name' is not column=cost"),
    (["key", "<csv>", "--costs", "=3"], 2, "--costs: '=3' is not column=cost"),
    (["key", "<csv>", "--costs", "name=abc"], 2, "which is not a number"),
    (["key", "<csv>", "--costs", "name=-1"], 2, "costs must be finite numbers >= 0"),
    (["key", "<csv>", "--costs", "name=nan"], 2, "costs must be finite numbers >= 0"),
    (["key", "<csv>", "--costs", '{"name": 1'], 2, "is not valid JSON"),
    (["key", "<csv>", "--costs", '{"name": "1"}'], 2, "which is not a number"),
    (["key", "<csv>", "--costs", "<badjson>"], 2, "is not valid JSON"),
    (["key", "<csv>", "--costs", "<list_json>"], 2, "must hold a JSON object"),
    (["key", "<csv>", "--columns", ","], 2, "--columns ',' names no columns"),
    (["key", "<csv>", "--rows", "0:x", "--positions"], 2, "is not a position range"),
    (["key", "<csv>", "--rows", ",", "--positions"], 2, "names no rows"),
    (["key", "<csv>", "--bogus"], 2, "unrecognized arguments: --bogus"),
    # key: well-formed, but the data (or the files) make it fail
    (["key", "<missing>.csv"], 1, "no such file"),
    (["key", "<csv>", "--costs", "<missing>.json"], 1, "no such file"),
    (["key", "<csv>", "--index-col", "nope"], 1, "--index-col 'nope' is not a column"),
    (["key", "<csv>", "--rows", "0:99", "--positions"], 1, "position 12 is outside 0..11"),
    (["key", "<csv>", "--columns", "nope"], 1, "nope"),
    (["key", "<csv>", "--costs", "nope=2"], 1, "nope"),
    (["key", "<csv>", "--columns", "name,plan"], 1, "no key exists"),
    # path
    (["path", "<csv>", "--budget", "-1"], 2, "argument --budget: must be a finite number >= 0"),
    (["path", "<csv>", "--budget", "nan"], 2, "argument --budget"),
    (["path", "<csv>", "--budget", "1e999"], 2, "argument --budget"),
    (["path", "<csv>", "--objective", "bits"], 2, "argument --objective: invalid choice"),
    (["path", "<missing>.csv"], 1, "no such file"),
    # ask (stdin holds one answer; usage errors never read it)
    (["ask", "<csv>", "--max-questions", "-1"], 2, "argument --max-questions"),
    (["ask", "<csv>", "--max-questions", "1.5"], 2, "argument --max-questions"),
    (["ask", "<csv>", "--noise", "0.1"], 2, "--noise applies to --policy model only"),
    (["ask", "<csv>", "--policy", "model", "--noise", "1"], 2, "argument --noise"),
    (["ask", "<csv>", "--costs", "city=-1"], 2, "costs must be finite numbers >= 0"),
    (["ask", "<missing>.csv"], 1, "no such file"),
    (["ask", "<csv>", "--columns", "nope"], 1, "nope"),
    # context
    (["context", "<support>", "--epsilon", "1.5"], 2, "argument --epsilon"),
    (["context", "<support>", "--budget", "-5"], 2, "argument --budget"),
    (["context", "<support>", "--time-limit", "-1"], 2, "argument --time-limit"),
    (["context", "<support>", "--costs", "doc1#p2=-1"], 2, "costs must be finite"),
    (["context", "<badjson>"], 2, "is not valid JSON"),
    (["context", "<list_json>"], 2, 'expected an object with "chunks"'),
    (["context", "<bad_tokens>"], 2, "chunks[0].tokens must be an integer >= 0"),
    (["context", "<missing>.json"], 1, "no such file"),
    (["context", "<dup_claims>"], 1, "dup_claim"),
    (["context", "<support>", "--costs", "nochunk=5"], 1, "nochunk"),
    # question
    (["question", "<answers>", "--prior", "1,x"], 2, "--prior: weight 2 is 'x'"),
    (["question", "<answers>", "--prior", "0,0,0,0"], 2, "not all zero"),
    (["question", "<answers>", "--prior", "1,nan,1,1"], 2, "finite"),
    (["question", "<answers>", "--prior", "[1, 2"], 2, "is not valid JSON"),
    (["question", "<answers>", "--prior", '{"a": 1}'], 2, "must hold a JSON list"),
    (["key", "<csv>", "--costs", "[1, 2]"], 2, "must hold a JSON object"),
    (["question", "<answers>", "--costs", "Which version?=inf"], 2, "finite numbers >= 0"),
    (["question", "<badjson>"], 2, "is not valid JSON"),
    (["question", "<list_json>"], 2, "expected an object mapping each question"),
    (["question", "<missing>.json"], 1, "no such file"),
    (["question", "<answers>", "--prior", "1,2"], 1, "prior"),
    (["question", "<answers>", "--costs", '{"Nope?": 2}'], 1, "Nope?"),
    # no verb at all
    (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "bad.json").write_text('{"chunks": [')
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "tokens.json").write_text(
        json.dumps(
            {"chunks": [{"id": "a", "tokens": -1}], "claims": ["c"], "support": {"c": ["a"]}}
        )
    )
    (tmp_path / "dup.json").write_text(
        json.dumps(
            {
                "chunks": ["a"],
                "claims": ["dup_claim", "dup_claim"],
                "support": {"dup_claim": ["a"]},
            }
        )
    )
    return {
        "csv": str(CSV),
        "support": str(SUPPORT),
        "answers": str(ANSWERS),
        "missing": str(tmp_path / "missing"),
        "badjson": str(tmp_path / "bad.json"),
        "list_json": str(tmp_path / "list.json"),
        "bad_tokens": str(tmp_path / "tokens.json"),
        "dup_claims": str(tmp_path / "dup.json"),
    }


@pytest.mark.parametrize(
    "argv,code,fragment", EXIT_CASES, ids=[" ".join(c[0]) for c in EXIT_CASES]
)
def test_one_exit_code_rule_for_every_verb(capsys, monkeypatch, files, argv, code, fragment):
    monkeypatch.setattr(sys, "stdin", io.StringIO("Porto\n"))
    for name, value in files.items():
        argv = [a.replace(f"<{name}>", value) for a in argv]
    got, out, err = run(capsys, *argv)
    assert got == code, err
    verb = argv[0] if argv[0] in ("key", "path", "ask", "context", "question") else None
    prefix = f"rowvoi {verb}: error: " if verb else "rowvoi: error: "
    lines = err.splitlines()
    assert lines[-1].startswith(prefix), err
    assert fragment in lines[-1], err
    # a usage error shows the verb's usage line first; a failure is one line
    assert lines[0].startswith("usage: rowvoi") if code == 2 else len(lines) == 1
    assert out == ""


def test_ctrl_c_exits_130(capsys, monkeypatch):
    class Interrupting(io.StringIO):
        def readline(self, *args):
            raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stdin", Interrupting())
    code, _, err = run(capsys, "ask", str(CSV))
    assert code == 130 and err.splitlines()[-1] == "rowvoi ask: interrupted"


def test_help_and_version_return_zero(capsys):
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("rowvoi ")
    assert main(["key", "--help"]) == 0
    assert "proves the optimum" in " ".join(capsys.readouterr().out.split())
