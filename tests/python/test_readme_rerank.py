"""The README's "Sharpen a search: rerank, rewrite the request, boost" runs
as written and prints what its prose says; its CLI claims hold."""

from readme_blocks import README, assert_quoted, run_python, section

from rowvoi.cli.main import build_parser
from rowvoi.cli.mcp import ToolServer, verb_parsers

TITLE = "#### Sharpen a search: rerank, rewrite the request, boost"


def test_rerank_boost_and_formulate_change_the_results_as_the_readme_says(tmp_path):
    text = section(TITLE)
    out = run_python(text, tmp_path / "home").splitlines()
    assert out == [
        "['github.create_issue', 'jira.create_issue']",
        "['jira.create_issue', 'github.create_issue']",
        "['jira.create_issue', 'github.create_issue']",
        "0",
        "['github.list_pulls']",
    ]
    assert_quoted(text, out)


def test_the_rerank_flags_the_readme_names_exist_on_search_discover_and_mcp():
    verbs = verb_parsers(build_parser())
    for verb in ("search", "discover"):
        flags = {o for a in verbs[verb]._actions for o in a.option_strings}
        assert {"--rerank", "--rerank-text"} <= flags, verb
    server = ToolServer(verbs)
    for tool in ("search", "discover"):
        props = server.schema(tool)["properties"]
        assert "rerank" in props and props["rerank_text"]["enum"] == ["surface", "artifact"]
    assert "[--rerank SPEC" in section("## Command line")
    assert README.index(TITLE) < README.index("## Keep corpora fresh")
