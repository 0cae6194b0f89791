"""`rowvoi ask`: scripted answers on stdin reach the right row."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rowvoi.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "examples" / "data" / "customers.csv"
COSTS = ROOT / "examples" / "data" / "customers_costs.json"
TABLE = pd.read_csv(CSV).set_index("customer_id")


def ask(monkeypatch, capsys, answers, *extra):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(a + "\n" for a in answers)))
    code = main(["ask", str(CSV), "--index-col", "customer_id", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def drive(monkeypatch, capsys, row, *extra):
    """Answer each question with `row`'s value until the session ends.

    Runs the command with the answers so far; when it stops for lack of
    input, the last prompt (on stderr with --json) names the next column.
    """
    answers = []
    for _ in range(len(TABLE.columns) + 1):
        code, out, err = ask(monkeypatch, capsys, answers, *extra, "--json")
        assert code == 0
        data = json.loads(out)
        if data["stop_reason"] != "end of input":
            return data
        prompt = [line for line in err.splitlines() if "? [" in line][-1]
        answers.append(str(TABLE.at[row, prompt.split("? [")[0]]))
    raise AssertionError("the session did not end")


@pytest.mark.parametrize("row", ["C001", "C006", "C007", "C012"])
@pytest.mark.parametrize("extra", [(), ("--costs", str(COSTS)), ("--policy", "coverage"),
                                   ("--policy", "model")])
def test_scripted_session_reaches_the_right_row(monkeypatch, capsys, row, extra):
    data = drive(monkeypatch, capsys, row, *extra)
    assert data["unique"] is True and data["rows"] == [row]
    assert data["stop_reason"] == "identified"
    for step in data["steps"]:
        assert step["accepted"] and not step["skipped"]
        assert str(step["value"]) == str(TABLE.at[row, step["column"]])


def test_human_transcript_with_costs(monkeypatch, capsys):
    code, out, _ = ask(monkeypatch, capsys, ["Carla Reis", "pro"], "--costs", str(COSTS))
    assert code == 0
    assert "12 rows possible, 3.58 bits of uncertainty" in out
    assert "name? [Ana Silva / Bruno Costa / Carla Reis" in out
    assert "plan? [pro / team]" in out
    assert "identified: C007" in out
    assert out.rstrip().splitlines()[-1].startswith("C007")


def test_dont_know_skips_and_bad_answers_are_asked_again(monkeypatch, capsys):
    # "?" skips the first question; a value no row has is rejected and re-asked
    code, out, _ = ask(monkeypatch, capsys, ["?", "Narnia", "Porto", ""], "--costs", str(COSTS))
    assert code == 0
    assert "(skipping name)" in out
    assert "no remaining row has city = 'Narnia'" in out
    code, out, _ = ask(monkeypatch, capsys, ["?", "Narnia", "Porto"], "--costs", str(COSTS),
                       "--json")
    data = json.loads(out)
    kinds = [(s["column"], s["skipped"], s["accepted"]) for s in data["steps"]]
    assert kinds == [("name", True, True), ("city", False, False), ("city", False, True)]
    assert data["stop_reason"] == "end of input" and not data["unique"]
    assert set(data["rows"]) == set(TABLE.index[TABLE.city == "Porto"])


def test_case_insensitive_and_numeric_answers(monkeypatch, capsys):
    code, out, _ = ask(monkeypatch, capsys, ["9012"], "--json")
    data = json.loads(out)
    assert data["steps"][0]["column"] == "card_last4" and data["rows"] == ["C007"]
    code, out, _ = ask(monkeypatch, capsys, ["carla reis", "PRO"], "--costs", str(COSTS),
                       "--json")
    assert json.loads(out)["rows"] == ["C007"]


def test_rows_and_columns_restrict(monkeypatch, capsys):
    code, out, _ = ask(monkeypatch, capsys, ["2024"], "--rows", "C006,C007",
                       "--columns", "signup_year,card_last4", "--costs", str(COSTS),
                       "--json")
    data = json.loads(out)
    assert data["candidates"] == 2 and data["steps"][0]["column"] == "signup_year"
    assert data["rows"] == ["C007"] and data["total_cost"] == 2.0


def test_max_questions_and_noise_usage(monkeypatch, capsys):
    code, out, _ = ask(monkeypatch, capsys, ["Porto", "x"], "--max-questions", "1",
                       "--columns", "city,plan", "--json")
    assert json.loads(out)["stop_reason"] == "asked --max-questions (1)"
    with pytest.raises(SystemExit) as exc:
        ask(monkeypatch, capsys, [], "--noise", "0.1")
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        ask(monkeypatch, capsys, [], "--policy", "model", "--noise", "1.5")
    code, out, err = ask(monkeypatch, capsys, ["Carla Reis", "pro", "2024"], "--policy",
                         "model", "--noise", "0.05", "--costs", str(COSTS), "--json")
    data = json.loads(out)
    assert code == 0 and data["rows"][0] == "C007" and data["probabilities"][0] > 0.9


def test_help_reads_well():
    sub = build_parser()._subparsers._group_actions[0].choices["ask"]
    text = sub.format_help()
    for phrase in ("--policy {mi,coverage,model}", "'?'", "don't know", "stdin",
                   "--json", "--rows"):
        assert phrase in text


def test_console_script_with_piped_stdin():
    proc = subprocess.run(
        [sys.executable, "-m", "rowvoi", "ask", str(CSV), "--index-col", "customer_id"],
        input="9012\n", capture_output=True, text=True, timeout=120, cwd=ROOT / "tests")
    assert proc.returncode == 0, proc.stderr
    assert "identified: C007" in proc.stdout
