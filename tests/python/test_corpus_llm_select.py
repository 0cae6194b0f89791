"""make_llm_selector: a language model chooses among the top hits; any
failure (an exception, a malformed reply, an unknown id, too many ids)
gives the heuristic selection, deterministically. Recording fakes only."""

import json
import warnings

import pytest

from rowvoi.corpus import (
    CorpusStore,
    SearchHit,
    SelectorFallbackWarning,
    build,
    discover,
    from_mcp_tools,
    make_llm_selector,
    select,
)
from rowvoi.corpus.retrieval.selection import LLM_SELECT_PROMPT

HITS = [
    SearchHit("jira.create_issue", "capability", 0.71, "jira.create_issue: Create a Jira issue"),
    SearchHit("github.create_issue", "capability", 0.70, "github.create_issue: Open an issue"),
    SearchHit("gitlab.create_issue", "capability", 0.66, "gitlab.create_issue: New issue"),
    SearchHit("slack.send_message", "capability", 0.20, "slack.send_message: Post a message"),
]
QUERY = "file a bug on the GitHub repo"
HEURISTIC = ["jira.create_issue", "github.create_issue", "gitlab.create_issue"]


class Recorder:
    """A fake model: records each prompt, answers with ``reply`` (or raises it)."""

    def __init__(self, reply):
        self.reply = reply
        self.prompts = []

    def __call__(self, prompt):
        self.prompts.append(prompt)
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply


def _candidates(prompt):
    """The candidate objects shown in a prompt of the default template."""
    return [json.loads(line) for line in prompt.splitlines() if line.startswith('{"id"')]


def test_the_model_choice_changes_the_selection_and_sees_the_request():
    model = Recorder('{"ids": ["github.create_issue"]}')
    assert select(HITS, query=QUERY).selected_ids == HEURISTIC  # without it
    sel = select(HITS, strategy=make_llm_selector(model), query=QUERY)
    assert sel.selected_ids == ["github.create_issue"]
    assert sel.reason == "selector" and not sel.abstained
    (prompt,) = model.prompts
    assert QUERY in prompt and "at most 3" in prompt
    assert [c["id"] for c in _candidates(prompt)] == [h.artifact_id for h in HITS]


def test_replies_in_prose_or_fences_and_as_a_bare_list_are_read():
    for reply in (
        'Sure. ```json\n{"ids": ["gitlab.create_issue", "github.create_issue"]}\n```',
        '["github.create_issue", "gitlab.create_issue", "github.create_issue"]',
    ):
        sel = select(HITS, strategy=make_llm_selector(Recorder(reply)), query=QUERY)
        assert sel.selected_ids == ["github.create_issue", "gitlab.create_issue"]  # rank order


def test_an_empty_choice_abstains():
    sel = select(HITS, strategy=make_llm_selector(Recorder('{"ids": []}')), query="bake a cake")
    assert sel.abstained and sel.reason == "abstain:selector"


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (TimeoutError("the model timed out"), "TimeoutError: the model timed out"),
        (None, "returned a NoneType"),
        ("I would pick the GitHub one.", "no JSON list of ids"),
        ('{"choice": "github.create_issue"}', "no JSON list of ids"),
        ('{"ids": [1, 2]}', "not a list of strings"),
        ('{"ids": ["github.create_issue", "trello.add_card"]}', "'trello.add_card'"),
        (
            '{"ids": ["slack.send_message", "jira.create_issue", "github.create_issue", '
            '"gitlab.create_issue"]}',
            "more than max_k=3",
        ),
    ],
)
def test_each_failure_falls_back_to_the_heuristic(reply, why):
    model = Recorder(reply)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = select(HITS, strategy=make_llm_selector(model), query=QUERY)
    assert sel.selected_ids == HEURISTIC
    (w,) = [w for w in caught if issubclass(w.category, SelectorFallbackWarning)]
    assert why in str(w.message) and "'conservative'" in str(w.message)
    assert len(model.prompts) == 1


def test_fallback_strategy_and_cap_are_the_selectors():
    pick = make_llm_selector(Recorder(ValueError("down")), fallback="top_k", max_k=2)
    with pytest.warns(SelectorFallbackWarning):
        assert select(HITS, strategy=pick, query=QUERY).selected_ids == HEURISTIC[:2]


def test_only_the_top_candidates_are_shown_and_may_be_chosen():
    model = Recorder('{"ids": ["gitlab.create_issue"]}')
    pick = make_llm_selector(model, max_candidates=2, max_text_chars=10)
    with pytest.warns(SelectorFallbackWarning, match="not candidates"):
        assert select(HITS, strategy=pick, query=QUERY).selected_ids == HEURISTIC
    shown = _candidates(model.prompts[0])
    assert [c["id"] for c in shown] == ["jira.create_issue", "github.create_issue"]
    assert shown[0]["text"] == "jira.creat..."


def test_equal_ids_of_two_corpora_are_shown_with_their_source():
    a = SearchHit("search", "capability", 0.5, "notion search", source="notion")
    b = SearchHit("search", "capability", 0.4, "slack search", source="slack")
    model = Recorder('{"ids": ["slack:search"]}')
    sel = select([a, b], strategy=make_llm_selector(model), query="find the thread")
    assert [h.source for h in sel.selected] == ["slack"]
    assert [c["id"] for c in _candidates(model.prompts[0])] == ["notion:search", "slack:search"]


def test_the_floor_applies_before_the_model():
    model = Recorder('{"ids": ["slack.send_message"]}')
    with pytest.warns(SelectorFallbackWarning, match="not candidates"):
        sel = select(HITS, strategy=make_llm_selector(model), query=QUERY, min_score=0.5)
    assert "slack.send_message" not in [c["id"] for c in _candidates(model.prompts[0])]
    assert sel.selected_ids == HEURISTIC


def test_discover_passes_the_query():
    tools = [
        {"name": "fetch_url", "description": "Fetch a web page and return its text"},
        {"name": "fetch_feed", "description": "Fetch an RSS feed and return its items"},
        {"name": "send_email", "description": "Send an email to a recipient"},
    ]
    corpus = build(
        from_mcp_tools(tools, embedder="hashing"), store=CorpusStore.memory(), progress=False
    )
    query = "fetch the page text of the blog feed"
    heuristic = discover(corpus, query, mode="lexical")
    model = Recorder('{"ids": ["fetch_feed"]}')
    res = discover(corpus, query, mode="lexical", strategy=make_llm_selector(model))
    assert query in model.prompts[0]
    assert heuristic.ids == ["fetch_url"] and res.ids == ["fetch_feed"]
    assert res.strategy == "llm_selector"


def test_usage_errors_are_errors_not_fallbacks():
    pick = make_llm_selector(Recorder('{"ids": []}'))
    with pytest.raises(ValueError, match="pass query= to select"):
        select(HITS, strategy=pick)
    assert select([], strategy=pick).abstained  # nothing to ask about
    with pytest.raises(TypeError, match="callable"):
        make_llm_selector("claude")
    with pytest.raises(ValueError, match=r"\{candidates\}"):
        make_llm_selector(pick, prompt="choose for {query}")
    with pytest.raises(ValueError, match="needs no floor"):
        make_llm_selector(pick, fallback="abs_threshold")
    with pytest.raises(ValueError, match="max_k"):
        make_llm_selector(pick, max_k=0)
    with pytest.raises(TypeError, match="query must be a str"):
        select(HITS, strategy=pick, query=3)
    assert "{query}" in LLM_SELECT_PROMPT
