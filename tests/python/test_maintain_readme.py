"""The README's "Keep corpora fresh" commands run as written."""

import re
import shlex

from readme_blocks import run_commands, run_python, section

from rowvoi.cli.main import build_parser


def test_keep_corpora_fresh(tmp_path):
    text = section("## Keep corpora fresh")
    outputs = run_commands(text, tmp_path / "home")
    assert outputs[1].strip() == "corpus 'notes': maintenance policy on_source_change"
    assert outputs[2].splitlines()[0] == "notes: would build (never built)"
    assert outputs[3].startswith("notes: built (never built) -- 6 new, 0 changed")
    assert outputs[4].splitlines() == [
        "notes: nothing to do (source unchanged)",
        "nothing to do: every corpus is up to date",
    ]
    assert "indexed            6  (coverage 100.0%)" in outputs[5]
    log = outputs[6].splitlines()
    assert len(log) == 2 and "built  (never built)" in log[0] and "nothing to do" in log[1]
    assert not (tmp_path / "home" / "corpora" / "notes").exists()

    # the crontab line: five schedule fields, then a command the CLI parses
    cron = re.search(r"```\n(\d.*?)\n```", text, re.S).group(1)
    fields = cron.split()
    assert len(cron.splitlines()) == 1 and fields[:5] == ["17", "*", "*", "*", "*"]
    argv = shlex.split(cron.split(None, 5)[5].split(">>")[0])
    assert argv[0].endswith("/rowvoi")
    args = build_parser().parse_args(argv[1:])
    assert args.all and not args.dry_run and args.func.__name__ == "_cmd_maintain"

    # the Python snippet, run twice: the second run has nothing to do
    for expect in ("notes built never built", "notes nothing to do every 6h: next run due in"):
        lines = run_python(text, tmp_path / "home").splitlines()
        assert lines[0].startswith(expect), lines
        assert "'indexed': 6" in lines[1] and "'missing': 0" in lines[1]
