"""The README's "Synopses for thin descriptions, and a model that chooses"
runs as written and prints what its prose says."""

from readme_blocks import assert_quoted, run_python, section

TITLE = "#### Synopses for thin descriptions, and a model that chooses"


def test_synopses_and_the_llm_selector(tmp_path):
    text = section(TITLE)
    out = run_python(text, tmp_path / "home").splitlines()
    assert out == [
        "jira.get_project_versions synopsis ['jira.get_project_versions']",
        "1",
        "['github.create_issue', 'jira.create_issue']",
        "['jira.create_issue']",
    ]
    assert_quoted(text, out)
