"""Synopses (``with_synopsis``): a written surface per gated artifact that
changes what a search finds, identity when the gate admits nothing, and
staleness -- a changed synthesizer id or gate re-synthesizes only what it
affects on the next build, counted on a fake synthesizer."""

import copy
import json
import re
import sqlite3
import warnings
from pathlib import Path

import pytest

from rowvoi.corpus import (
    Artifact,
    Capability,
    CorpusStore,
    SynopsisWarning,
    WholeText,
    build,
    discover,
    from_mapping,
    from_mcp_tools,
    make_thin_description_predicate,
    search,
    thin_description_predicate,
    with_synopsis,
)
from rowvoi.corpus.indexing.synopsis import synopsis_input_digest

DATA = Path(__file__).resolve().parents[1] / "data" / "mcp"
TOOLS = json.loads((DATA / "mcp_tools.json").read_text(encoding="utf-8"))
REQUESTS = json.loads((DATA / "mcp_requests.json").read_text(encoding="utf-8"))
#: the catalogue's thin descriptions (tests/data/mcp/README.md lists them)
THIN_IDS = {
    "gitlab.list_project_members",
    "jira.get_project_versions",
    "linear.list_cycles",
    "sentry.list_releases",
    "datadog.get_dashboard",
    "postgres.list_indexes",
    "docker.remove_container",
    "kubernetes.port_forward",
    "teams.list_teams",
    "google_sheets.append_rows",
    "notion.update_page_properties",
    "hubspot.get_record",
    "figma.get_components",
    "stripe.create_price",
    "shopify.update_product",
    "home_assistant.call_service",
}
#: the requests whose intended tool has a thin description
THIN_REQUESTS = [r for r in REQUESTS if r["tool"] in THIN_IDS]
#: a gate for the stubs: under 19 characters of description (whitespace
#: removed) admits the thin tools and one terse real description
GATE = make_thin_description_predicate(min_chars=19)
GATED = THIN_IDS | {"confluence.add_label"}


class ParamWords:
    """A deterministic stand-in for a language model: the synopsis of a tool
    is its description plus the words of its name, server and parameter
    names (``project_key`` -> ``project key``). Counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, artifact: Artifact) -> str:
        self.calls.append(artifact.id)
        raw = artifact.raw
        params = list((raw.get("parameters") or {}).get("properties") or {})
        words = [*re.split(r"[._]", artifact.id), *(w for p in params for w in p.split("_"))]
        return f"{raw.get('description') or ''} {' '.join(words)}".strip()


def _catalogue(tools=TOOLS):
    return from_mcp_tools(copy.deepcopy(tools), embedder="hashing")


def _corpus(strategy=None, store=None, tools=TOOLS):
    src = _catalogue(tools)
    if strategy is not None:
        src.indexing_strategy = strategy
    return build(src, store=store or CorpusStore.memory(), progress=False)


def _top1(corpus, requests, **kw):
    return [discover(corpus, r["request"], k=10, **kw).ids[:1] for r in requests]


def _acceptable(r):
    return {r["tool"], *r.get("also", ())}


def _synopses(corpus):
    """{artifact id: (text, metadata, surface index)} of the stored synopses."""
    con = sqlite3.connect(corpus.store.db_path)
    try:
        rows = con.execute(
            "SELECT a.artifact_id, r.text, r.metadata, r.surface_index FROM records r "
            "JOIN artifacts a ON a.aid = r.aid WHERE r.kind = 'synopsis'"
        ).fetchall()
    finally:
        con.close()
    return {a: (t, json.loads(m), i) for a, t, m, i in rows}


# ----------------------------------------------------------- the predicate
def test_thin_predicate_reads_the_field_of_a_mapping_or_the_whole_text():
    thin = make_thin_description_predicate(min_chars=10)
    assert thin(Artifact("a", {"name": "a"}))  # no field: empty
    assert thin(Artifact("a", {"description": "  a  b  c  "}))  # 3 chars once unspaced
    assert not thin(Artifact("a", {"description": "Tools to parse dates"}))
    assert thin(Artifact("a", "short"))
    assert not thin(Artifact("a", "a text long enough"))
    other = make_thin_description_predicate(min_chars=10, field="summary")
    assert other(Artifact("a", {"description": "Tools to parse dates"}))
    assert other.when_id != thin.when_id != thin_description_predicate.when_id
    with pytest.raises(ValueError, match="min_chars"):
        make_thin_description_predicate(min_chars=0)
    with pytest.raises(TypeError, match="field"):
        make_thin_description_predicate(field="")
    catalogue = _catalogue()
    assert {tid for tid, raw in catalogue.items() if GATE(Artifact(tid, raw))} == GATED
    by_default = {
        tid for tid, raw in catalogue.items() if thin_description_predicate(Artifact(tid, raw))
    }
    assert by_default > GATED and len(by_default) < len(TOOLS) / 4


# ------------------------------------------------ synopsis changes results
#: Synopses as a language model might write them for five thin tools (the
#: other gated tools get ParamWords' text). Hand-written so that what a
#: synopsis adds is far above what separates near-tied MiniLM scores: int8
#: vectors differ a little between CPUs (onnxruntime's AVX2 kernel adds
#: products in a saturating int16, VNNI's does not), and a test that rests
#: on a near tie holds on one host only.
WRITTEN = {
    "figma.get_components": "Figma: list the reusable components published in a design "
    "file or a design system library.",
    "google_sheets.append_rows": "Google Sheets: append rows at the end of a sheet, such as a "
    "new entry line in a spreadsheet log.",
    "shopify.update_product": "Shopify: change a product's title, description, price or tags, "
    "for example to rename a product listing.",
    "jira.get_project_versions": "Jira: list a project's versions (releases), with their "
    "release dates and whether they are released.",
    "kubernetes.port_forward": "Kubernetes: forward a local port to a port of a pod, "
    "tunnelling a connection into the cluster.",
}


class Written(ParamWords):
    """ParamWords, but the five thin tools of :data:`WRITTEN` get their
    hand-written synopsis."""

    def __call__(self, artifact: Artifact) -> str:
        text = super().__call__(artifact)
        return WRITTEN.get(artifact.id, text)


@pytest.fixture(scope="module")
def minilm_pair():
    """The catalogue with MiniLM, without and with written synopses."""
    plain = build(
        from_mcp_tools(copy.deepcopy(TOOLS), embedder="minilm"),
        store=CorpusStore.memory(),
        progress=False,
    )
    fake = Written()
    src = from_mcp_tools(copy.deepcopy(TOOLS), embedder="minilm")
    src.indexing_strategy = with_synopsis(
        Capability(), synthesize=fake, synthesizer_id="written", when=GATE
    )
    rich = build(src, store=CorpusStore.memory(), progress=False)
    return plain, rich, fake


def _right(corpus, requests, **kw):
    return sum(
        bool(set(t) & _acceptable(r)) for t, r in zip(_top1(corpus, requests, **kw), requests)
    )


def test_synopsis_makes_discover_find_a_thin_tool(minilm_pair):
    """A thin tool missed without a synopsis is found first with one (dense
    MiniLM): shopify.update_product, whose description is two words.
    Measured: without, shopify.list_products leads it by 0.11 in cosine;
    with, its synopsis leads shopify.list_products by 0.15."""
    plain, rich, fake = minilm_pair
    assert sorted(fake.calls) == sorted(GATED)  # only the gated tools
    request = "rename the hoodie listing to 'Classic Hoodie' in the shop"
    assert request in [r["request"] for r in THIN_REQUESTS]
    assert discover(plain, request, mode="dense").ids[:1] != ["shopify.update_product"]
    hit = search(rich, request, mode="dense")[0]
    assert (hit.artifact_id, hit.surface_kind) == ("shopify.update_product", "synopsis")
    found = discover(rich, request, mode="dense").results[0]
    assert found.artifact_id == "shopify.update_product"
    tool = next(t for t in TOOLS if (t["server"], t["name"]) == ("shopify", "update_product"))
    # still says how to call it
    assert found.metadata["param_names"] == list(tool["inputSchema"]["properties"])
    # over the requests for thin tools: at least 4 of 5 first with synopses
    # (3 without on a VNNI host, 2 on an AVX2 one), more than without; no
    # request of the whole set is lost
    with_ = _right(rich, THIN_REQUESTS, mode="dense")
    assert with_ >= 4 and with_ > _right(plain, THIN_REQUESTS, mode="dense")
    assert _right(rich, REQUESTS, mode="dense") >= _right(plain, REQUESTS, mode="dense")


def test_synopsis_surface_comes_first_and_records_its_maker():
    fake = ParamWords()
    strat = with_synopsis(Capability(), synthesize=fake, synthesizer_id="pw", when=GATE)
    corpus = _corpus(strat)
    stored = _synopses(corpus)
    assert set(stored) == GATED
    text, meta, index = stored["postgres.list_indexes"]
    assert index == 0 and text == "postgres list indexes table"
    raw = _catalogue().get("postgres.list_indexes")
    assert meta == {
        "synthesizer_id": "pw",
        "synopsis_input": synopsis_input_digest("postgres.list_indexes", raw),
    }
    assert corpus.last_build.records_added == len(TOOLS) + len(GATED)


def test_a_gate_that_admits_nothing_leaves_results_identical():
    fake = ParamWords()
    strat = with_synopsis(
        Capability(), synthesize=fake, synthesizer_id="pw", when=lambda a: False, when_id="never"
    )
    plain, gated = _corpus(), _corpus(strat)
    assert fake.calls == []
    for mode in ("lexical", "dense", "hybrid"):
        for r in REQUESTS[:40]:
            a = search(plain, r["request"], k=10, mode=mode)
            b = search(gated, r["request"], k=10, mode=mode)
            assert [(h.artifact_id, h.surface_kind, h.score) for h in a] == [
                (h.artifact_id, h.surface_kind, h.score) for h in b
            ]


# ----------------------------------------------------------- staleness
def test_rebuilds_resynthesize_only_what_a_change_affects(tmp_path):
    store = CorpusStore(tmp_path / "c", name="c")
    first = ParamWords()
    gate = GATE
    corpus = _corpus(
        with_synopsis(Capability(), synthesize=first, synthesizer_id="v1", when=gate), store=store
    )
    assert len(first.calls) == len(GATED)

    # nothing changed: no decomposition, no call
    again = ParamWords()
    r = _corpus(
        with_synopsis(Capability(), synthesize=again, synthesizer_id="v1", when=gate), store=store
    ).last_build
    assert again.calls == [] and r.texts_embedded == 0 and r.rebuild is None

    # a wider gate (same synthesizer): only the newly admitted are synthesized
    wide = make_thin_description_predicate()  # 40 characters
    newly = {tid for tid, raw in _catalogue().items() if wide(Artifact(tid, raw))} - GATED
    assert newly  # descriptions of 19 to 39 characters
    calls = ParamWords()
    r = _corpus(
        with_synopsis(Capability(), synthesize=calls, synthesizer_id="v1", when=wide), store=store
    ).last_build
    assert r.rebuild == "strategy changed"
    assert sorted(calls.calls) == sorted(newly)
    assert set(_synopses(corpus)) == GATED | newly

    # back to the narrow gate: nothing synthesized, the others' synopses gone
    calls = ParamWords()
    _corpus(
        with_synopsis(Capability(), synthesize=calls, synthesizer_id="v1", when=gate), store=store
    )
    assert calls.calls == []
    assert set(_synopses(corpus)) == GATED

    # a new synthesizer id: every gated artifact again
    calls = ParamWords()
    _corpus(
        with_synopsis(Capability(), synthesize=calls, synthesizer_id="v2", when=gate), store=store
    )
    assert sorted(calls.calls) == sorted(GATED)
    assert {m["synthesizer_id"] for _, m, _ in _synopses(corpus).values()} == {"v2"}

    # one thin tool edited: that one alone, on an incremental build
    tools = copy.deepcopy(TOOLS)
    edited = next(t for t in tools if (t["server"], t["name"]) == ("linear", "list_cycles"))
    edited["description"] = "Lists sprints."
    untouched = next(t for t in tools if (t["server"], t["name"]) == ("jira", "get_issue"))
    untouched["description"] += " Also subtasks."
    calls = ParamWords()
    r = _corpus(
        with_synopsis(Capability(), synthesize=calls, synthesizer_id="v2", when=gate),
        store=store,
        tools=tools,
    ).last_build
    assert r.rebuild is None and r.n_changed == 2
    assert calls.calls == ["linear.list_cycles"]
    assert _synopses(corpus)["linear.list_cycles"][0].startswith("Lists sprints.")


def test_inner_strategy_change_keeps_the_synopses(tmp_path):
    store = CorpusStore(tmp_path / "c", name="c")
    docs = {"a": "Lift on a thin wing.", "b": "Heat in a pipe."}
    calls = []

    def synth(artifact):
        calls.append(artifact.id)
        return f"about {artifact.id}"

    src = from_mapping(
        docs,
        strategy=with_synopsis(WholeText(), synthesize=synth, synthesizer_id="s"),
        embedder="hashing",
    )
    build(src, store=store, progress=False)
    src.indexing_strategy = with_synopsis(
        WholeText(kind="body"), synthesize=synth, synthesizer_id="s"
    )
    corpus = build(src, store=store, progress=False)
    assert corpus.last_build.rebuild == "strategy changed"
    assert sorted(calls) == ["a", "b"]  # once each, in the first build only
    hits = search(corpus, "wing", mode="lexical")
    assert [(h.artifact_id, h.surface_kind) for h in hits] == [("a", "body")]
    assert _synopses(corpus)["a"][0] == "about a"


# -------------------------------------------------------------- failures
def test_a_failing_synthesizer_skips_that_artifact_with_a_warning():
    def synth(artifact):
        if artifact.id == "b":
            raise RuntimeError("model overloaded")
        if artifact.id == "c":
            return ["not", "text"]
        if artifact.id == "d":
            return "   "
        return f"summary of {artifact.id}"

    docs = {x: f"text {x}" for x in "abcde"}
    src = from_mapping(
        docs,
        strategy=with_synopsis(WholeText(), synthesize=synth, synthesizer_id="s"),
        embedder="hashing",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = build(src, store=CorpusStore.memory(), progress=False)
    messages = [str(w.message) for w in caught if issubclass(w.category, SynopsisWarning)]
    assert len(messages) == 2
    assert "'b'" in messages[0] and "model overloaded" in messages[0]
    assert "'c'" in messages[1] and "list" in messages[1]
    stored = _synopses(corpus)
    assert set(stored) == {"a", "e"}  # no synopsis for b, c, d; none empty
    assert corpus.last_build.n_new == 5


def test_a_gate_that_raises_fails_the_build():
    def gate(artifact):
        raise KeyError("boom")

    src = from_mapping(
        {"a": "x"},
        strategy=with_synopsis(
            WholeText(), synthesize=lambda a: "s", synthesizer_id="s", when=gate, when_id="g"
        ),
        embedder="hashing",
    )
    with pytest.raises(KeyError, match="indexing artifact 'a' failed"):
        build(src, store=CorpusStore.memory(), progress=False)


def test_identities_are_required_and_checked():
    with pytest.raises(ValueError, match="synthesizer_id="):
        with_synopsis(WholeText(), synthesize=lambda a: "s")
    with pytest.raises(ValueError, match="when_id="):
        with_synopsis(
            WholeText(), synthesize=lambda a: "s", synthesizer_id="s", when=lambda a: True
        )
    with pytest.raises(ValueError, match="'always' or a predicate"):
        with_synopsis(WholeText(), synthesize=lambda a: "s", synthesizer_id="s", when="thin")
    with pytest.raises(TypeError, match="synthesizer_id must be a non-empty str"):
        with_synopsis(WholeText(), synthesize=lambda a: "s", synthesizer_id="")
    with pytest.raises(TypeError, match="indexing strategy"):
        with_synopsis(object(), synthesize=lambda a: "s", synthesizer_id="s")
    with pytest.raises(TypeError, match="callable"):
        with_synopsis(WholeText(), synthesize="summarize", synthesizer_id="s")

    def named(artifact):
        return "s"

    named.synthesizer_id = "named-v3"
    strat = with_synopsis(WholeText(), synthesize=named, when=thin_description_predicate)
    assert '"named-v3"' in strat.strategy_id
    assert thin_description_predicate.when_id in strat.strategy_id
