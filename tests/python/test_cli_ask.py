"""`rowvoi ask`: scripted answers on stdin reach the right row."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rowvoi.cli.main import build_parser, main

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
        data = json.loads(out)
        if data["stop_reason"] != "end of input":
            assert code == 0
            return data
        assert code == 1
        prompt = [line for line in err.splitlines() if "? [" in line][-1]
        answers.append(str(TABLE.at[row, prompt.split("? [")[0]]))
    raise AssertionError("the session did not end")


@pytest.mark.parametrize("row", ["C001", "C006", "C007", "C012"])
@pytest.mark.parametrize(
    "extra", [(), ("--costs", str(COSTS)), ("--policy", "coverage"), ("--policy", "model")]
)
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
    assert code == 1  # the input ended before a row was found
    assert "(skipping name)" in out
    assert "no remaining row has city = 'Narnia'" in out
    code, out, _ = ask(
        monkeypatch, capsys, ["?", "Narnia", "Porto"], "--costs", str(COSTS), "--json"
    )
    data = json.loads(out)
    kinds = [(s["column"], s["skipped"], s["accepted"]) for s in data["steps"]]
    assert kinds == [("name", True, True), ("city", False, False), ("city", False, True)]
    assert data["stop_reason"] == "end of input" and not data["unique"]
    assert set(data["rows"]) == set(TABLE.index[TABLE.city == "Porto"])


def test_case_insensitive_and_numeric_answers(monkeypatch, capsys):
    _code, out, _ = ask(monkeypatch, capsys, ["9012"], "--json")
    data = json.loads(out)
    assert data["steps"][0]["column"] == "card_last4" and data["rows"] == ["C007"]
    _code, out, _ = ask(
        monkeypatch, capsys, ["carla reis", "PRO"], "--costs", str(COSTS), "--json"
    )
    assert json.loads(out)["rows"] == ["C007"]


def test_rows_and_columns_restrict(monkeypatch, capsys):
    _code, out, _ = ask(
        monkeypatch,
        capsys,
        ["2024"],
        "--rows",
        "C006,C007",
        "--columns",
        "signup_year,card_last4",
        "--costs",
        str(COSTS),
        "--json",
    )
    data = json.loads(out)
    assert data["candidates"] == 2 and data["steps"][0]["column"] == "signup_year"
    assert data["rows"] == ["C007"] and data["total_cost"] == 2.0


def test_max_questions_and_noise_usage(monkeypatch, capsys):
    code, out, _ = ask(
        monkeypatch,
        capsys,
        ["Porto", "x"],
        "--max-questions",
        "1",
        "--columns",
        "city,plan",
        "--json",
    )
    assert json.loads(out)["stop_reason"] == "asked --max-questions (1)"
    assert ask(monkeypatch, capsys, [], "--noise", "0.1")[0] == 2
    assert ask(monkeypatch, capsys, [], "--policy", "model", "--noise", "1.5")[0] == 2
    code, out, _err = ask(
        monkeypatch,
        capsys,
        ["Carla Reis", "pro", "2024"],
        "--policy",
        "model",
        "--noise",
        "0.05",
        "--costs",
        str(COSTS),
        "--json",
    )
    data = json.loads(out)  # noisy answers never make one row certain; the input ends
    assert code == 1 and data["rows"][0] == "C007" and data["probabilities"][0] > 0.9


def test_help_reads_well():
    sub = build_parser()._subparsers._group_actions[0].choices["ask"]
    text = sub.format_help()
    for phrase in (
        "--policy {mi,coverage,model}",
        "'?'",
        "don't know",
        "stdin",
        "--json",
        "--rows",
    ):
        assert phrase in text


def test_console_script_with_piped_stdin():
    proc = subprocess.run(
        [sys.executable, "-m", "rowvoi", "ask", str(CSV), "--index-col", "customer_id"],
        input="9012\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT / "tests",
    )
    assert proc.returncode == 0, proc.stderr
    assert "identified: C007" in proc.stdout


def test_rejected_answers_do_not_count_toward_max_questions(monkeypatch, capsys):
    # "Narnia" and "Atlantis" are not cities of the table: both are rejected and
    # re-asked; the first real answer is still question 1 of 1.
    code, out, _err = ask(
        monkeypatch,
        capsys,
        ["Narnia", "Atlantis", "Porto", "team"],
        "--max-questions",
        "1",
        "--columns",
        "city,plan",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["stop_reason"] == "asked --max-questions (1)"
    assert data["questions"] == 1
    assert [(s["answer"], s["accepted"]) for s in data["steps"]] == [
        ("Narnia", False),
        ("Atlantis", False),
        ("Porto", True),
    ]
    assert set(data["rows"]) == set(TABLE.index[TABLE.city == "Porto"])
    # a "don't know" is an answer, and counts
    code, out, _ = ask(
        monkeypatch,
        capsys,
        ["?", "Porto"],
        "--max-questions",
        "1",
        "--columns",
        "city,plan",
        "--json",
    )
    data = json.loads(out)
    assert data["questions"] == 1 and [s["skipped"] for s in data["steps"]] == [True]


def test_input_ending_before_a_row_is_found_exits_1(monkeypatch, capsys):
    code, out, err = ask(monkeypatch, capsys, ["Porto"], "--columns", "city,plan")
    assert code == 1
    assert "stopped (end of input); 3 rows still match" in out
    assert err.splitlines()[-1] == (
        "rowvoi ask: error: input ended before one row was identified; 3 rows still match"
    )
    code, out, err = ask(monkeypatch, capsys, [], "--json")
    assert code == 1 and json.loads(out)["stop_reason"] == "end of input"
    # stopping for any other reason is a finished session
    code, out, _ = ask(monkeypatch, capsys, ["Porto", "?"], "--columns", "city,plan")
    assert code == 0 and "stopped (no columns left to ask)" in out


def test_help_example_runs_on_the_shipped_data():
    """The example at the end of `rowvoi ask --help`, run as printed."""
    help_text = subprocess.run(
        [str(Path(sys.executable).with_name("rowvoi")), "ask", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    paragraph = next(p for p in help_text.split("\n\n") if "Example, run" in p)
    flat = " ".join(paragraph.split())
    claim = flat[flat.index("Example, run in the source tree") :]
    command = claim[claim.index("printf ") :]
    assert command.endswith("customers_costs.json"), command
    identified = claim[claim.index("(it identifies customer ") + 24 :].split(")")[0]
    bindir = str(Path(sys.executable).parent)
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"},
    )
    assert proc.returncode == 0, proc.stderr
    assert f"identified: {identified}" in proc.stdout
