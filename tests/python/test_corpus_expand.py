"""rowvoi.corpus.retrieval.expansion and .stitching: stitching with overlap removal, window and parent
policies, errors."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import (
    Chunked,
    CorpusStore,
    Fields,
    NoLedgerEntry,
    Record,
    SearchHit,
    build,
    from_mapping,
    search,
)
from rowvoi.corpus.retrieval.expansion import (
    Passage,
    SeedNotFound,
    expand,
    parent_policy,
    sentence_window_policy,
)
from rowvoi.corpus.retrieval.stitching import MIN_OVERLAP, stitch


def records_of(text, chunk_size, overlap, offsets=True):
    surfaces = Chunked(chunk_size=chunk_size, overlap=overlap).surfaces("doc", text)
    out = []
    for i, s in enumerate(surfaces):
        meta = dict(s.metadata) if offsets else {"chunk_index": i}
        out.append(Record(Record.make_id("doc", s.kind, i), "doc", s.kind, i, s.text, None, meta))
    return out


def squash(text):
    return " ".join(text.split())


words = st.lists(
    st.sampled_from(
        [
            "wing",
            "stall",
            "flow",
            "a",
            "the",
            "shock.",
            "lift,",
            "drag",
            "\n\n",
            "nozzle",
            "boundary-layer",
            "Mach",
            "x",
        ]
    ),
    min_size=1,
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(tokens=words, chunk_size=st.integers(10, 80), ratio=st.floats(0.0, 0.6))
def test_stitching_chunks_gives_the_text_back_once(tokens, chunk_size, ratio):
    text = " ".join(tokens)
    overlap = int(chunk_size * ratio)
    recs = records_of(text, chunk_size, overlap)
    if not recs:
        return
    stitched = stitch(recs)
    # overlap kept once: the text comes back, whitespace runs aside (the
    # chunker strips whitespace at chunk edges)
    assert squash(stitched) == squash(text)


@settings(max_examples=100, deadline=None)
@given(
    tokens=st.lists(
        st.text("abcdefgh", min_size=3, max_size=8), min_size=20, max_size=60, unique=True
    ),
    chunk_size=st.integers(60, 120),
)
def test_stitching_without_offsets_removes_long_overlaps(tokens, chunk_size):
    # without offsets the overlap is found by matching text, which is exact
    # when the text does not repeat itself (distinct words here): shared
    # text of MIN_OVERLAP characters or more is kept once, shorter shared
    # text may stay doubled
    text = " ".join(tokens)
    recs = records_of(text, chunk_size, 30, offsets=False)
    stitched = squash(stitch(recs))
    assert len(stitched) >= len(squash(text))
    assert len(stitched) - len(squash(text)) <= (len(recs) - 1) * MIN_OVERLAP
    for word in tokens:
        assert word in stitched


def test_stitch_examples():
    a = Record(
        "r0", "d", "chunk", 0, "The wing stalls at high angle", None, {"start": 0, "end": 29}
    )
    b = Record("r1", "d", "chunk", 1, "at high angle of attack", None, {"start": 16, "end": 39})
    assert stitch([a, b]) == "The wing stalls at high angle of attack"
    # touching chunks (a hard cut inside a word) join with nothing between
    c = Record("r0", "d", "chunk", 0, "super", None, {"start": 0, "end": 5})
    e = Record("r1", "d", "chunk", 1, "sonic", None, {"start": 5, "end": 10})
    assert stitch([c, e]) == "supersonic"
    # a gap (stripped whitespace) becomes one space; other kinds a blank line
    f = Record("r2", "d", "chunk", 2, "flow", None, {"start": 12, "end": 16})
    assert stitch([c, e, f]) == "supersonic flow"
    t = Record("t", "d", "title", 0, "Title", None)
    assert stitch([t, c]) == "Title\n\nsuper"
    # non-adjacent surfaces of one kind never merge
    g = Record("r9", "d", "chunk", 9, "sonic boom", None, {"start": 90, "end": 100})
    assert stitch([c, g]) == "super\n\nsonic boom"
    # a short coincidental match without offsets is not an overlap
    x = Record("x0", "d", "chunk", 0, "lift and the", None)
    y = Record("x1", "d", "chunk", 1, "the drag", None)
    assert stitch([x, y]) == "lift and the the drag"
    assert stitch([]) == ""


@pytest.fixture(scope="module")
def corpus():
    text = ". ".join(f"Sentence {i} says something about wing {i} and lift" for i in range(40))
    docs = {
        "long": text,
        "fields": {"title": "Nozzle flow", "body": "Shock waves form in the nozzle. " * 30},
        "short": "tiny note about drag",
    }
    src = from_mapping(
        {"long": docs["long"], "short": docs["short"]},
        name="exp",
        embedder="hashing",
        strategy=Chunked(chunk_size=120, overlap=40),
    )
    c = build(src, store=CorpusStore.memory(), progress=False)
    src2 = from_mapping(
        {"fields": docs["fields"]},
        name="exp2",
        embedder="hashing",
        strategy=Fields(("title", "body"), chunked=("body",), chunk_size=100, overlap=30),
    )
    c2 = build(src2, store=CorpusStore.memory(), progress=False)
    return c, c2, docs


def test_window_and_parent_on_a_built_corpus(corpus):
    c, _, docs = corpus
    hits = search(c, "wing 20", mode="lexical", per_artifact=False, k=50)
    seed = next(h for h in hits if h.artifact_id == "long" and h.surface_index >= 3)
    siblings = c.records_for_artifact("long")
    p = expand(seed, c)
    assert isinstance(p, Passage)
    assert (p.artifact_id, p.surface_kind, p.score, p.source, p.surface_index) == (
        seed.artifact_id,
        seed.surface_kind,
        seed.score,
        seed.source,
        seed.surface_index,
    )
    i = seed.surface_index
    assert [r.surface_index for r in siblings if r.id in p.record_ids] == [
        j for j in (i - 1, i, i + 1) if j < len(siblings)
    ]
    assert seed.text in p.text and squash(p.text) in squash(docs["long"])
    p0 = expand(seed, c, policy=sentence_window_policy(0))
    assert p0.text == seed.text and len(p0.record_ids) == 1
    whole = expand(seed, c, policy=parent_policy())
    assert whole.text == docs["long"]
    assert len(whole.record_ids) == len(siblings)
    assert json.loads(json.dumps(whole.to_dict()))["record_ids"] == list(whole.record_ids)


def test_window_stays_within_its_kind(corpus):
    _, c2, docs = corpus
    recs = c2.records_for_artifact("fields")
    assert recs[0].surface_kind == "title"
    first_body = recs[1]
    hit = SearchHit(
        "fields", "body", 1.0, first_body.text, surface_index=1, record_id=first_body.record_id
    )
    p = expand(hit, c2, policy=sentence_window_policy(3))
    assert "Nozzle flow" not in p.text
    assert all(r.surface_kind == "body" for r in recs if r.id in p.record_ids)
    whole = expand(hit, c2, policy=parent_policy())
    assert whole.text.startswith("Nozzle flow\n\nShock waves")
    assert squash(whole.text[len("Nozzle flow\n\n") :]) == squash(docs["fields"]["body"])


def test_errors(corpus):
    c, _, _ = corpus
    with pytest.raises(NoLedgerEntry):
        expand(SearchHit("nope", "chunk", 1.0, "", surface_index=0), c)
    with pytest.raises(KeyError):  # NoLedgerEntry is a KeyError
        expand(SearchHit("nope", "chunk", 1.0, "", surface_index=0), c)
    with pytest.raises(SeedNotFound, match="stale"):
        expand(SearchHit("long", "chunk", 1.0, "", surface_index=999), c)
    with pytest.raises(SeedNotFound):
        expand(SearchHit("long", "title", 1.0, "", surface_index=0), c)
    rec = c.records_for_artifact("long")[0]
    with pytest.raises(SeedNotFound):  # the record id changed: a stale hit
        expand(
            SearchHit("long", "chunk", 1.0, "", surface_index=0, record_id=rec.record_id + 10_000),
            c,
        )
    with pytest.raises(ValueError, match="parent_policy"):
        expand(SearchHit("long", "chunk", 1.0, "hand made"), c)
    # the parent policy needs no position
    assert (
        expand(SearchHit("short", "chunk", 1.0, "x"), c, policy=parent_policy()).text
        == "tiny note about drag"
    )
    other = Record("zz", "long", "chunk", 0, "forged", None)
    with pytest.raises(ValueError, match="not a stored surface"):
        expand(
            SearchHit("long", "chunk", 1.0, "", surface_index=0), c, policy=lambda h, sib: [other]
        )
    with pytest.raises(TypeError, match="sequence of records"):
        expand(SearchHit("long", "chunk", 1.0, "", surface_index=0), c, policy=lambda h, sib: None)
    with pytest.raises(TypeError, match="SearchHit"):
        expand({"artifact_id": "long"}, c)
    with pytest.raises(ValueError, match="k must be"):
        sentence_window_policy(-1)


def test_empty_policy_degrades_to_the_hit(corpus):
    c, _, _ = corpus
    hit = SearchHit("long", "chunk", 0.5, "the matched text", surface_index=2)
    p = expand(hit, c, policy=lambda h, sib: [])
    assert (p.text, p.record_ids) == ("the matched text", ())


def test_policy_answer_is_put_in_plan_order_and_deduplicated(corpus):
    c, _, _ = corpus
    sib = c.records_for_artifact("long")
    hit = SearchHit("long", "chunk", 0.5, "", surface_index=0)
    p = expand(hit, c, policy=lambda h, s: [s[2], s[0], s[2]])
    assert p.record_ids == (sib[0].id, sib[2].id)
    assert p.text == sib[0].text + "\n\n" + sib[2].text
