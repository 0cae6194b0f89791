"""The rowvoi command line."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rowvoi.cli import main

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "examples" / "data" / "customers.csv"
COSTS = ROOT / "examples" / "data" / "customers_costs.json"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_key_human_and_json(capsys):
    code, out, _ = run(capsys, "key", str(CSV), "--index-col", "customer_id",
                       "--costs", str(COSTS))
    assert code == 0
    assert out.splitlines()[0].startswith("key: ")
    code, out, _ = run(capsys, "key", str(CSV), "--index-col", "customer_id",
                       "--costs", str(COSTS), "--strategy", "exact", "--json")
    data = json.loads(out)
    assert data["optimal"] is True and data["coverage"] == 1.0
    assert data["pairs"] == 66 and data["covered_pairs"] == 66
    df = pd.read_csv(CSV).set_index("customer_id")
    costs = json.loads(COSTS.read_text())
    assert data["cost"] == sum(costs[c] for c in data["key"])
    from rowvoi import KeyProblem

    assert KeyProblem(df, None).is_key(data["key"])


def test_rows_by_label_and_by_position(capsys):
    code, out, _ = run(capsys, "key", str(CSV), "--index-col", "customer_id",
                       "--rows", "C001,C002,C003", "--json", "--strategy", "exact")
    assert code == 0 and json.loads(out)["rows"] == 3
    code, out2, _ = run(capsys, "key", str(CSV), "--index-col", "customer_id", "--rows",
                        "0:3", "--positions", "--json", "--strategy", "exact")
    assert code == 0 and json.loads(out2)["key"] == json.loads(out)["key"]
    code, out3, _ = run(capsys, "key", str(CSV), "--rows", "0,1,2", "--json",
                        "--strategy", "exact", "--columns",
                        "name,city,plan,signup_year,card_last4,email_domain,phone_area")
    assert json.loads(out3)["key"] == json.loads(out)["key"]


def test_inline_costs_change_the_key(capsys):
    code, out, _ = run(capsys, "key", str(CSV), "--rows", "0,1", "--json",
                       "--costs", "city=10,plan=10,signup_year=10,card_last4=10,"
                       "email_domain=10,phone_area=0.5,name=10", "--strategy", "exact")
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
    assert code == 1 and "no key exists" in err and err.startswith("rowvoi: error:")
    code, _, err = run(capsys, "key", str(tmp_path / "missing.csv"))
    assert code == 1 and "no such file" in err
    code, _, err = run(capsys, "key", str(CSV), "--costs", "name=-1")
    assert code == 1 and "'name'" in err
    with pytest.raises(SystemExit) as exc:
        main(["key", str(CSV), "--strategy", "nope"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["key", str(CSV), "--costs", "name"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["key", str(CSV), "--rows", "0:99", "--positions"])
    assert exc.value.code == 2
    capsys.readouterr()


def test_version_and_console_script():
    proc = subprocess.run([sys.executable, "-m", "rowvoi", "--version"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("rowvoi ")
    proc = subprocess.run([sys.executable, "-m", "rowvoi", "key", "--help"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "--strategy" in proc.stdout


def test_man_page_is_current():
    pytest.importorskip("argparse_manpage")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "manpage.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = (ROOT / "man" / "rowvoi.1").read_text()
    for verb in ("rowvoi key", "rowvoi path", "rowvoi ask", "rowvoi context",
                 "rowvoi question"):
        assert verb in text


RAG = ROOT / "examples" / "rag"


def test_context_command(capsys, tmp_path):
    code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--json")
    data = json.loads(out)
    assert code == 0 and sorted(data["chunks"]) == ["doc1#p2", "doc2#p1"]
    assert data["cost"] == 330.0 and data["missing_claims"] == ["refund_policy"]
    code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--budget", "200",
                       "--json")
    assert json.loads(out)["chunks"] == ["doc2#p1"]
    code, out, _ = run(capsys, "context", str(RAG / "support.json"), "--epsilon", "0.7")
    assert code == 0 and out.startswith("chunks: doc2#p1\n")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"chunks": [{"id": "a", "tokens": 5}], "claims": ["c"],
                               "support": {"d": ["a"]}}))
    code, _, err = run(capsys, "context", str(bad))
    assert code == 1 and "not in `claims`" in err
    bad.write_text("{}")
    code, _, err = run(capsys, "context", str(bad))
    assert code == 1 and "expected an object" in err


def test_question_command(capsys):
    code, out, _ = run(capsys, "question", str(RAG / "answers.json"))
    lines = out.splitlines()
    assert code == 0 and lines[1].endswith("Which deployment?  <- ask this")
    assert lines[3].split()[0] == "0.00"
    code, out, _ = run(capsys, "question", str(RAG / "answers.json"), "--json",
                       "--costs", "Which deployment?=5")
    data = json.loads(out)
    assert data["best"] == "Which version?"
    assert [q["question"] for q in data["questions"]][0] == "Which version?"
    code, out, _ = run(capsys, "question", str(RAG / "answers.json"), "--json",
                       "--prior", "0,0,1,1")
    assert json.loads(out)["best"] == "Which version?"
    code, _, err = run(capsys, "question", str(RAG / "answers.json"), "--prior", "1,2")
    assert code == 1 and "prior" in err


def test_rag_pipeline_example_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "rag" / "rag_pipeline_demo.py")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "chunks: ['pricing#p1', 'pricing#p4', 'release#v42']  (290 tokens" in out
    assert "ask: 'Cloud or self-hosted?'" in out
    assert "best candidate 3 at 86% after cost 2" in out
