"""The README's "When the corpus outgrows one machine" runs as written and
prints what its prose says; the command line it names exists."""

import pytest
from readme_blocks import assert_quoted, run_python, section

pytest.importorskip("dask.dataframe")

from rowvoi.cli.main import build_parser
from rowvoi.cli.mcp import verb_parsers

TITLE = "### When the corpus outgrows one machine"


def test_sharded_corpus_section_runs_and_says_what_it_prints(tmp_path):
    text = section(TITLE)
    out = run_python(text, tmp_path / "home").splitlines()
    assert out == ["lexical True", "dense True", "hybrid True", "1 1 []"]
    assert_quoted(text, out)


def test_the_sharded_build_flags_the_readme_names_exist():
    verbs = verb_parsers(build_parser())
    flags = {o for a in verbs["build"]._actions for o in a.option_strings}
    assert {"--shards", "--scheduler", "--records"} <= flags
    assert "--scheduler" in {o for a in verbs["search"]._actions for o in a.option_strings}
    assert "rowvoi build NAME --records papers.jsonl --shards 8 --scheduler" in section(TITLE)
