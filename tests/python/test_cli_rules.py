"""The rules every verb of the ``rowvoi`` command keeps (issue 28).

* One exit-code rule (``rowvoi.cli._common.EXIT_RULE``): every verb and
  subverb, enumerated from the argparse parser itself, exits 2 for a usage
  error (an unknown flag, every bad value of every typed option, an unknown
  choice of every option with choices), 1 for a well-formed request that
  fails, and 130 when a KeyboardInterrupt lands anywhere in its run.
* Human output escapes control characters; ``--json`` stays exact.
* Files named on the command line that are not regular files (a FIFO,
  ``/dev/zero``, a directory) are refused at once, never read forever.
* The man page renders every line, the exit-code rule included.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

import rowvoi.cli._common as common
from rowvoi.cli._common import EXIT_RULE, printable
from rowvoi.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(sys.modules["rowvoi"].__file__).parent  # the imported package, installed or not
CSV = ROOT / "examples" / "data" / "customers.csv"
SUPPORT = ROOT / "examples" / "rag" / "support.json"
ANSWERS = ROOT / "examples" / "rag" / "answers.json"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ verbs
def verbs(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every verb and subverb of the parser, found by
    walking its subparsers: a verb added later is swept with the others."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from verbs(sub, (*path, name))


VERBS = dict(verbs(build_parser()))
assert len(VERBS) >= 23, sorted(VERBS)  # 20 verbs, graph and its 3 actions


@pytest.fixture
def home(tmp_path, monkeypatch, capsys):
    """ROWVOI_HOME with corpus 'notes' (records with PARENT links), a
    cases file and a query file."""
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    recs = tmp_path / "notes.jsonl"
    recs.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "wings", "text": "lift and drag of wings"},
                {"id": "flaps", "text": "flaps raise lift", "parent": "wings"},
            ]
        )
    )
    argv = ["build", "notes", "--records", recs, "--embedder", "hashing"]
    assert main([str(a) for a in [*argv, "--edge-fields", "parent", "--json"]]) == 0
    (tmp_path / "cases.jsonl").write_text('{"query": "wing lift", "gold": ["wings"]}\n')
    (tmp_path / "queries.txt").write_text("wing lift\n")
    capsys.readouterr()
    return tmp_path


# Values of positionals (and required options) by dest: a valid request
# around the one bad value each usage case injects.
POSITIONAL = {
    "file": str(CSV),
    "table": str(CSV),
    "name": "notes",
    "names": "notes",
    "query": "wing",
    "cases": "cases.jsonl",
    "id": "wings",
    "ids": "wings",
    "in_scope": "queries.txt",
    "out_of_scope": "queries.txt",
}
POSITIONAL_OF = {("context",): {"file": str(SUPPORT)}, ("question",): {"file": str(ANSWERS)}}


def base_argv(path: tuple[str, ...], bad: tuple[str, str] | None = None) -> list[str]:
    """Tokens of a well-formed call of verb ``path``; with ``bad`` =
    (dest, value), the verb's own positional ``dest`` holds the value."""
    parser, argv = build_parser(), []
    for depth, name in enumerate(path):
        values = {**POSITIONAL, **POSITIONAL_OF.get(path[: depth + 1], {})}
        if bad is not None and depth == len(path) - 1:
            values[bad[0]] = bad[1]
        sub = next(
            a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
        ).choices[name]
        argv.append(name)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                break
            if action.option_strings:
                if action.required:
                    argv += [action.option_strings[0], values[action.dest]]
                continue
            if action.nargs == "?" and (bad is None or bad[0] != action.dest):
                continue
            argv.append(values[action.dest])
        parser = sub
    return argv


def _prog(path: tuple[str, ...]) -> str:
    """The name a verb's messages start with."""
    if path[0] == "graph" and len(path) > 1:
        return "rowvoi graph NAME " + " ".join(path[1:])
    return "rowvoi " + " ".join(path)


def usage_cases():
    """(verb, argv, option) for every usage error the parser itself can
    name: an unknown flag; every value each typed option or positional
    must refuse (its type's ``rejects``); an unknown choice."""
    for path, parser in VERBS.items():
        yield path, [*base_argv(path), "--no-such-flag"], "unrecognized arguments"
        for action in parser._actions:
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
                continue
            if action.nargs == 0:
                continue
            label = "/".join(action.option_strings) or action.metavar or action.dest
            bad_values = []
            if action.choices is not None:
                bad_values.append("no-such-choice")
            if action.type is not None:
                rejects = getattr(action.type, "rejects", None)
                assert rejects, (
                    f"rowvoi {' '.join(path)} {label}: its type has no `rejects`; use a "
                    "type of rowvoi.cli._common (bounded numbers, names, lists) or list "
                    "the inputs it refuses"
                )
                bad_values += list(rejects)
            name = action.option_strings[0] if action.option_strings else action.metavar
            for value in bad_values:
                if action.option_strings:
                    argv = [*base_argv(path), action.option_strings[0], value]
                else:
                    argv = base_argv(path, (action.dest, value))
                yield path, argv, f"argument {name}"


USAGE = list(usage_cases())


def test_the_sweep_covers_every_verb_and_typed_option():
    swept = {path for path, _, _ in USAGE}
    assert swept == set(VERBS)
    assert len(USAGE) > 200  # each typed option with several bad values
    # the cases the issue names are among them
    names = {" ".join(argv) for _, argv, _ in USAGE}
    for case in ("--k 0", "--k 100001", "--mode no-such-choice", "--fusion no-such-choice"):
        assert any(n.startswith("search notes wing " + case) for n in names), case
    assert any(n.startswith("discover notes wing --max-k 0") for n in names)


@pytest.mark.parametrize(
    "path,argv,fragment", USAGE, ids=[" ".join(argv)[:90] for _, argv, _ in USAGE]
)
def test_usage_errors_exit_2(capsys, tmp_path, monkeypatch, path, argv, fragment):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))  # nothing is ever built
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    lines = err.splitlines()
    assert code == 2, err
    assert out == ""
    assert lines[0].startswith("usage: " + _prog(path)), err
    assert lines[-1].startswith(_prog(path) + ": error: ") and fragment in lines[-1], err
    assert not (tmp_path / "home" / "corpora").exists()  # refused before any work


# A well-formed request that fails, per verb (None: the verb has none of
# its own). ``setup(home)`` prepares the failure when the arguments alone
# cannot (a registry that is not JSON).
def _corrupt_registry(home: Path) -> None:
    (home / "home" / "corpora.json").write_text("not json")


FAILING = {
    ("key",): (["key", CSV, "--columns", "name,plan"], "no key exists", None),
    ("path",): (["path", "missing.csv"], "no such file", None),
    ("ask",): (["ask", CSV, "--columns", "nope"], "nope", None),
    ("context",): (["context", "missing.json"], "no such file", None),
    ("question",): (["question", ANSWERS, "--prior", "1,2"], "prior", None),
    ("query",): (["query", "missing.csv", "--describe"], "no such file", None),
    ("build",): (["build", "ghost"], "not registered", None),
    ("register",): (["register", "x", "--files", "."], "not valid JSON", _corrupt_registry),
    ("search",): (["search", "ghost", "wing"], "no corpus 'ghost'", None),
    ("ls",): (["ls"], "not valid JSON", _corrupt_registry),
    ("info",): (["info", "ghost"], "ghost", None),
    ("rm",): (["rm", "ghost"], "no corpus 'ghost'", None),
    ("maintain",): (["maintain", "ghost"], "ghost", None),
    ("coverage",): (["coverage", "notes"], "files corpus", None),
    ("eval",): (["eval", "ghost", "cases.jsonl"], "ghost", None),
    ("eval-select",): (["eval-select", "notes", "missing.jsonl"], "no such file", None),
    ("sweep-select",): (["sweep-select", "ghost", "cases.jsonl"], "ghost", None),
    ("graph",): None,  # needs an action: a call without one is a usage error
    ("graph", "neighbours"): (["graph", "notes", "neighbours", "ghost"], "'ghost'", None),
    ("graph", "walk"): (["graph", "ghost", "walk", "lift"], "no corpus 'ghost'", None),
    ("graph", "text"): (["graph", "notes", "text", "ghost"], "'ghost'", None),
    ("discover",): (["discover", "notes,ghost", "wing"], "ghost", None),
    ("calibrate",): (
        ["calibrate", "ghost", "--in-scope", "queries.txt", "--out-of-scope", "queries.txt"],
        "ghost",
        None,
    ),
    ("mcp",): (["mcp", "--corpus", "ghost"], "no corpus 'ghost'", None),
}


def test_every_verb_has_a_failing_request_or_says_why_not():
    assert set(FAILING) == set(VERBS)


@pytest.mark.parametrize("path", [p for p in FAILING if FAILING[p]], ids=" ".join)
def test_failing_requests_exit_1(capsys, home, monkeypatch, path):
    argv, fragment, setup = FAILING[path]
    monkeypatch.chdir(home)
    if setup is not None:
        setup(home)
    code, out, err = run(capsys, *argv)
    assert code == 1, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(_prog(path) + ": error: "), err
    assert fragment in lines[0], err


def test_no_verb_or_an_unknown_verb_is_a_usage_error(capsys):
    code, _, err = run(capsys)
    assert code == 2 and err.splitlines()[-1].startswith("rowvoi: error: ")
    code, _, err = run(capsys, "frobnicate", "--k", "3")
    assert code == 2 and "invalid choice: 'frobnicate'" in err


def test_graph_without_an_action_is_a_usage_error(capsys, home):
    code, _, err = run(capsys, "graph", "notes")
    assert code == 2 and "give an action" in err


# ---------------------------------------------------------------- interrupt
_SKIP = {"__del__", "__exit__", "close", "release", "_release", "unlock"}


def _ours(frame) -> bool:
    """A frame of rowvoi's Python code (not a cleanup method, not ``main``
    itself, whose first instruction is its ``try``): where a simulated
    Ctrl-C may land."""
    code = frame.f_code
    if not code.co_filename.startswith(str(PACKAGE)) or code is main.__code__:
        return False
    while frame is not None:  # Python swallows exceptions in finalisers
        if frame.f_code.co_name in _SKIP:
            return False
        frame = frame.f_back
    return True


def _calls(argv) -> int:
    n = 0

    def count(frame, event, arg):
        nonlocal n
        if event == "call" and _ours(frame):
            n += 1

    sys.settrace(count)
    try:
        main(argv)
    finally:
        sys.settrace(None)
    return n


def _interrupted(argv, at: int) -> int:
    """Run ``main(argv)`` raising KeyboardInterrupt as rowvoi's ``at``-th
    function call starts (a Ctrl-C landing there)."""
    n = 0

    def trace(frame, event, arg):
        nonlocal n
        if event == "call" and _ours(frame):
            n += 1
            if n == at:
                sys.settrace(None)
                raise KeyboardInterrupt

    stdout = sys.stdout
    sys.settrace(trace)
    try:
        code = main(argv)
    finally:
        sys.settrace(None)
    assert sys.stdout is stdout  # the escaping writer is always taken down
    return code


@pytest.mark.parametrize("path", list(VERBS), ids=" ".join)
def test_ctrl_c_anywhere_exits_130(capsys, home, monkeypatch, path):
    monkeypatch.chdir(home)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    spec = FAILING[path]
    argv = [str(a) for a in (spec[0] if spec else [*base_argv(path), "--no-such-flag"])]
    main(argv)  # warm: every module the run needs is imported
    total = _calls(argv)
    capsys.readouterr()
    assert total > 5
    for at in sorted({1, 2, total // 4, total // 2, 3 * total // 4, total - 1, total}):
        code = _interrupted(argv, at)
        _, err = capsys.readouterr()
        assert code == 130, (at, total, err)
        assert "Traceback" not in err
        assert re.fullmatch(r"rowvoi( [\w -]+)?: interrupted", err.splitlines()[-1]), err


def test_ctrl_c_while_ask_waits_for_an_answer_exits_130(tmp_path):
    """A real SIGINT to a real process, blocked reading stdin."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rowvoi", "ask", str(CSV)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        seen = b""
        deadline = time.monotonic() + 120
        while b"> " not in seen and time.monotonic() < deadline:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
        assert b"> " in seen
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.decode().splitlines()[-1] == "rowvoi ask: interrupted"


# ------------------------------------------------------------------- rule
def _flat(text: str) -> str:
    return " ".join(text.replace("`", "'").split())


def test_the_rule_is_stated_once_in_the_readme_and_in_help(capsys):
    readme = (ROOT / "README.md").read_text()
    start = readme.index("Exit codes, the same for every verb")
    paragraph = readme[start : readme.index("\n\n", start)]
    assert _flat(paragraph) == _flat(EXIT_RULE)
    assert main(["--help"]) == 0
    assert _flat(EXIT_RULE) in _flat(capsys.readouterr().out)
    assert readme.count("Exit codes, the same for every verb") == 1


# ------------------------------------------------------------ escaping
def test_printable_escapes_what_a_terminal_would_act_on():
    assert printable("plain text, ünïcode and 表") == "plain text, ünïcode and 表"
    assert printable("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert printable("\x9b2J C1 CSI, \x7f DEL, \x00 NUL") == "\\x9b2J C1 CSI, \\x7f DEL, \\x00 NUL"
    assert printable("a\tb\r\nc") == "a\\tb\\r\\nc"
    assert printable("a\nb", keep="\n") == "a\nb"
    assert printable("abc\u202edcba \u2028") == "abc\\u202edcba \\u2028"  # bidi, line sep
    assert printable("caf\udce9.md") == "caf\\udce9.md"  # an undecodable file name byte
    assert printable("\U000e0041 tag") == "\\U000e0041 tag"
    assert printable("a\u00a0b\u3000c") == "a\u00a0b\u3000c"  # spaces stay
    assert printable(12) == "12"


def raw_controls(text: str) -> list[str]:
    """Characters a terminal would act on (anything not printable but a
    line break or a space)."""
    return [
        c for c in text if c != "\n" and not c.isprintable() and unicodedata.category(c) != "Zs"
    ]


EVIL_NAME = "evil\x1b[31m\u202e.md"
EVIL_TEXT = "wing lift \x1b]0;owned\x07 drag \x9b2J alert\x1b[5m"


@pytest.fixture
def hostile(tmp_path, monkeypatch, capsys):
    """A files corpus whose file name and text hold escape sequences, and
    a records corpus whose ids do, with links between them."""
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / EVIL_NAME).write_text(EVIL_TEXT)
    (folder / "plain.md").write_text("nothing to see")
    assert main(["build", "files", "--files", str(folder), "--embedder", "hashing"]) == 0
    recs = tmp_path / "recs.jsonl"
    recs.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "root\x1b[2J", "text": EVIL_TEXT},
                {"id": "leaf\x1b[1m", "text": "flaps " + EVIL_TEXT, "parent": "root\x1b[2J"},
            ]
        )
    )
    argv = ["build", "recs", "--records", str(recs), "--embedder", "hashing"]
    assert main([*argv, "--edge-fields", "parent"]) == 0
    (folder / "late\x1b[1m.md").write_text("not indexed yet")  # coverage: pending
    assert main(["register", "elsewhere", "--files", str(tmp_path / "x\x1b[2J")]) == 0
    capsys.readouterr()
    table = tmp_path / "t.csv"
    table.write_text("id,col\x1b[2J,plan\na,x\x1b[31m,1\nb,y\x07,2\nc,z,2\n")
    return tmp_path


def test_search_output_is_escaped_and_json_is_exact(capsys, hostile):
    code, out, _ = run(capsys, "search", "files", "alert", "--mode", "lexical")
    assert code == 0 and not raw_controls(out)
    assert "evil\\x1b[31m\\u202e.md" in out and "\\x1b]0;owned\\x07" in out
    code, out, _ = run(capsys, "search", "files", "alert", "--mode", "lexical", "--json")
    hit = json.loads(out)["hits"][0]
    assert hit["artifact_id"] == EVIL_NAME and hit["text"] == EVIL_TEXT
    assert "\\u001b" in out and not raw_controls(out)  # JSON's own escapes


HUMAN = [  # (argv, whether its output shows an escape)
    (["search", "files", "alert", "--mode", "hybrid"], True),
    (["search", "recs", "alert", "--mode", "dense"], True),
    (["discover", "files", "alert", "--mode", "lexical", "--disclose"], True),
    (["discover", "files,recs", "alert", "--mode", "lexical"], True),
    (["info", "files"], False),
    (["info", "recs"], False),
    (["ls"], True),
    (["coverage", "files"], True),
    (["graph", "recs", "neighbours", "root\x1b[2J"], True),
    (["graph", "recs", "text", "leaf\x1b[1m", "--aliases"], True),
    (
        ["graph", "recs", "walk", "alert", "--summary-kinds", "chunk", "--leaf-kinds", "chunk"],
        True,
    ),
    (["key", "<t.csv>", "--index-col", "id"], True),
    (["path", "<t.csv>", "--index-col", "id"], True),
    (["query", "<t.csv>", "--describe"], True),
    (["search", "files\x1b[2J", "q"], True),  # an error quoting the bad value
    (["key", "<missing\x1b[2J.csv>"], True),
]


@pytest.mark.parametrize("argv,shows", HUMAN, ids=[" ".join(a)[:60] for a, _ in HUMAN])
def test_no_human_output_path_prints_raw_control_characters(capsys, hostile, argv, shows):
    argv = [str(hostile / a[1:-1]) if a.startswith("<") else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code in (0, 1, 2), err
    assert not raw_controls(out), out
    assert not raw_controls(err), err
    assert ("\\x1b" in out + err) == shows, out + err  # the escape is shown, not dropped


def test_ask_prompts_and_outcome_are_escaped(capsys, hostile, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\x1b[31m\n"))
    code, out, err = run(capsys, "ask", hostile / "t.csv", "--index-col", "id")
    assert code == 0 and not raw_controls(out + err)
    assert "col\\x1b[2J? [" in out and "identified: a" in out
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\x1b[31m\n"))
    code, out, err = run(capsys, "ask", hostile / "t.csv", "--index-col", "id", "--json")
    assert code == 0 and not raw_controls(err)
    assert json.loads(out)["steps"][0]["value"] == "x\x1b[31m"


WARNER = """
import sys, warnings
import rowvoi.cli.corpus as corpus_cli
from rowvoi.cli.main import main
real = corpus_cli._cmd_ls
def noisy(args):
    warnings.warn("odd file \\x1b[2Jname", UserWarning)
    return real(args)
corpus_cli._cmd_ls = noisy
sys.exit(main(["ls"]))
"""


def test_warnings_are_shown_escaped(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", WARNER],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ROWVOI_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "UserWarning: odd file \\x1b[2Jname" in proc.stderr
    assert not raw_controls(proc.stderr)


# ------------------------------------------------------- non-regular files
RUNNER = """
import contextlib, io, json, sys, time
from rowvoi.cli.main import main
for argv in json.loads(sys.argv[1]):
    err, t = io.StringIO(), time.monotonic()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    print(json.dumps([rc, err.getvalue().strip(), time.monotonic() - t]), flush=True)
"""


def test_non_regular_inputs_are_refused_within_seconds(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    fifo_json = tmp_path / "pipe.json"
    os.mkfifo(fifo_json)
    query = tmp_path / "q.json"
    query.write_text('{"operation": "select", "columns": ["plan"]}')
    cases = [
        (["key", "/dev/zero"], "is a character device"),
        (["key", str(fifo)], "is a FIFO"),
        (["key", str(tmp_path)], "is a directory"),
        (["path", "/dev/zero"], "is a character device"),
        (["path", str(fifo)], "is a FIFO"),
        (["ask", "/dev/zero"], "is a character device"),
        (["ask", str(fifo)], "is a FIFO"),
        (["key", str(CSV), "--costs", str(fifo_json)], "is a FIFO"),
        (["key", str(CSV), "--costs", str(fifo)], "is a FIFO"),  # a name without .json
        (["question", str(ANSWERS), "--prior", str(fifo_json)], "is a FIFO"),
        (["context", str(fifo_json)], "is a FIFO"),
        (["question", "/dev/zero"], "is a character device"),
        (["query", str(fifo), str(query)], "is a FIFO"),
        (["query", str(CSV), str(fifo_json)], "is a FIFO"),
        (["query", str(CSV), str(query), "--schema", str(fifo_json)], "is a FIFO"),
        (["eval", "notes", str(fifo)], "is a FIFO"),
        (["calibrate", "notes", "--in-scope", str(fifo), "--out-of-scope", str(fifo)], "FIFO"),
        (["build", "notes", "--records", str(fifo_json)], "is a FIFO"),
    ]
    env = {**os.environ, "ROWVOI_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps([argv for argv, _ in cases])],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(cases)
    for (argv, fragment), (rc, err, seconds) in zip(cases, results):
        assert rc == 1, (argv, err)
        assert fragment in err and "give a regular file" in err, (argv, err)
        assert seconds < 5, (argv, seconds)
    assert not (tmp_path / "home" / "corpora").exists()  # the build never started


def test_stdin_and_json_files_stop_at_the_size_limit(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(common, "MAX_JSON_BYTES", 64)
    big = tmp_path / "costs.json"
    big.write_text(json.dumps({f"col{i}": 1 for i in range(40)}))
    code, _, err = run(capsys, "key", CSV, "--costs", big)
    assert code == 1 and "more than the 64 bytes" in err
    query = '{"operation": "select", "columns": ["plan"], "limit": 2}'
    monkeypatch.setattr(sys, "stdin", io.StringIO(query + " " * 100))
    code, _, err = run(capsys, "query", CSV, "-")
    assert code == 1 and "standard input holds more than 64 bytes" in err
    monkeypatch.setattr(sys, "stdin", io.StringIO(query))
    code, out, err = run(capsys, "query", CSV, "-", "--json")  # '-' still reads stdin
    assert code == 0 and len(json.loads(out)["records"]) == 2, err


def test_ask_stops_on_an_answer_line_without_end(tmp_path):
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [sys.executable, "-m", "rowvoi", "ask", str(CSV)],
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 1
    assert "an answer longer than 65,536 characters" in proc.stderr.splitlines()[-1]


def test_compressed_csv_still_reads(capsys, tmp_path):
    import gzip

    gz = tmp_path / "customers.csv.gz"
    gz.write_bytes(gzip.compress(CSV.read_bytes()))
    code, out, err = run(capsys, "key", gz, "--index-col", "customer_id", "--json")
    assert code == 0 and json.loads(out)["coverage"] == 1.0, err


# ---------------------------------------------------------------- man page
MAN = ROOT / "man" / "rowvoi.1"
#: The requests scripts/manpage.py lets through (argparse-manpage's own).
MACROS = {"TH", "SH", "SS", "TP", "RS", "RE", "B", "UR", "UE", "nf", "fi"}


def _roff_text(line: str) -> str:
    """A text line of the page as it reads once rendered (escapes undone)."""
    for esc, plain in (("\\&", ""), ("\\-", "-"), ("\\,", ""), ("\\/", ""), ("\\e", "\\")):
        line = line.replace(esc, plain)
    line = re.sub(r"\\f[BIRP]", "", line)
    return line.replace("\\\\", "\\")


def test_every_man_page_line_is_text_or_a_known_macro():
    for n, line in enumerate(MAN.read_text().splitlines(), 1):
        if line[:1] in (".", "'"):
            assert line[:1] == "." and line[1:].split(" ")[0] in MACROS, (n, line)


def test_manpage_script_escapes_lines_roff_would_eat():
    pytest.importorskip("argparse_manpage")
    import importlib.util

    spec = importlib.util.spec_from_file_location("manpage", ROOT / "scripts" / "manpage.py")
    manpage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(manpage)
    page = ".TP\n'ask' finds a row\n.json file\n.TH X\n\\fBok\\fR"
    assert manpage.escape_text_lines(page) == (
        ".TP\n\\&'ask' finds a row\n\\&.json file\n.TH X\n\\fBok\\fR"
    )


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_man_page_renders_every_line_and_the_exit_rule():
    proc = subprocess.run(
        ["groff", "-man", "-Tascii", "-P-cbou", "-rLL=4000n", "-rHY=0", str(MAN)],
        capture_output=True,
        text=True,
        env={**os.environ, "GROFF_NO_SGR": "1"},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    rendered = " ".join(proc.stdout.split())
    assert " ".join(EXIT_RULE.split()) in rendered
    missing = [
        line
        for line in MAN.read_text().splitlines()
        if line.strip()
        and not line.startswith(".")
        and " ".join(_roff_text(line).split()) not in rendered
    ]
    assert not missing, missing[:5]
