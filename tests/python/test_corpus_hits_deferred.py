"""A search's hits build their text, metadata and explain when one is first read,
and read their surface kind, surface index, record id and source from the
record table and the search until then (SearchHit's Notes; rowvoi.index._hot.Deferred): what a
caller can see of that -- the values, their identity across reads and
threads, the snapshot they come from, and every way a hit is copied or
compared."""

from __future__ import annotations

import copy
import dataclasses
import gc
import itertools
import pickle
import sys
import weakref

import numpy as np
import pytest
from hammer import hammer

from rowvoi.corpus import Chunked, CorpusStore, build, from_mapping, search
from rowvoi.corpus.base import DEFERRED, SearchHit, new_hit
from rowvoi.index import _hot

LAZY = ("text", "metadata", "explain")
PLAIN = ("surface_kind", "surface_index", "record_id", "source")
FIELDS = [f.name for f in dataclasses.fields(SearchHit)]
DOCS = {
    f"d{i}": f"note {i}: the {w} pump {'valve ' * (i % 3)}failed at shift {i % 4}. " * 3
    for i, w in enumerate(["fuel", "water", "oil", "air", "steam", "coolant", "brake"] * 4)
}
META = {aid: {"year": 1990 + i, "path": f"notes/{aid}.md"} for i, aid in enumerate(DOCS)}


def _corpus(tmp_path, docs=DOCS, compact=None):
    """28 notes of three chunks or so, with metadata (a year and a path)."""
    return build(
        from_mapping(
            {aid: {"text": text, **META[aid]} for aid, text in docs.items()},
            name="notes",
            embedder="hashing:64",
            strategy=Chunked(chunk_size=12, overlap=0, text_key="text"),
            metadata_of=lambda aid, raw: {"year": raw["year"], "path": raw["path"]},
        ),
        store=CorpusStore(str(tmp_path / "notes"), name="notes"),
        progress=False,
        compact=compact,
    )


#: the attributes a hit keeps in slots (rowvoi.corpus.base._HitSlots), not in vars(hit)
SLOTS = ("artifact_id", "score", DEFERRED)


def _stored(hit):
    """What a hit holds now: its instance dict, and its filled slots."""
    assert not set(SLOTS) & set(vars(hit))
    d = dict(vars(hit))
    for name in SLOTS:
        try:
            d[name] = getattr(hit, name)
        except AttributeError:
            pass  # (an empty slot)
    return d


def _read(hit):
    """Every field, read through the attribute (as a caller does)."""
    return [getattr(hit, name) for name in FIELDS]


SEARCHES = [
    {"mode": "lexical"},
    {"mode": "dense"},
    {"mode": "hybrid", "fusion": "rrf"},
    {"mode": "hybrid", "fusion": "blend"},
]


@pytest.mark.parametrize("kw", SEARCHES, ids=lambda kw: "-".join(kw.values()))
def test_reading_one_deferred_field_stores_the_seven(tmp_path, kw):
    corpus = _corpus(tmp_path)
    want = [_read(h) for h in search(corpus, "pump valve failed", k=8, **kw)]
    assert want and all(isinstance(w[3], str) and w[3] for w in want)
    for first in LAZY:
        hits = search(corpus, "pump valve failed", k=8, **kw)
        assert len(hits) == len(want)
        for h in hits:
            d = _stored(h)
            deferred = [name for name in _hot.DEFERRED_FIELDS if name not in d]
            assert deferred == [*LAZY, *PLAIN]  # (a fused search's explain too)
            assert not gc.is_tracked(d[DEFERRED])
            # the two fields every hit is made with: in their slots
            assert vars(h) == {} and d["artifact_id"] in DOCS and type(d["score"]) is float
            # the plain fields are read from the table: nothing is stored
            plain = [getattr(h, name) for name in PLAIN]
            assert plain == [getattr(h, name) for name in PLAIN]
            assert DEFERRED in _stored(h) and not set(PLAIN) & set(_stored(h))
            assert isinstance(plain[0], str) and type(plain[1]) is type(plain[2]) is int
            assert plain[3] == "notes"
            value = getattr(h, first)
            d = _stored(h)
            assert DEFERRED not in d  # the table let go
            assert all(name in d for name in _hot.DEFERRED_FIELDS)
            assert [d[name] for name in PLAIN] == plain
            assert d[first] is value is getattr(h, first)
        assert [_read(h) for h in hits] == want


def test_the_fields_are_the_searchs_snapshot(tmp_path):
    corpus = _corpus(tmp_path)
    before = search(corpus, "pump failed", k=5, mode="lexical")
    want = [_read(h) for h in search(corpus, "pump failed", k=5, mode="lexical")]
    # rebuild with every text changed, then compact: the old generation's
    # files are gone, its hits still read their own values
    changed = {aid: text.upper() for aid, text in DOCS.items()}
    corpus = _corpus(tmp_path, changed, compact=True)
    after = search(corpus, "pump failed", k=5, mode="lexical")
    assert all(h.text in changed[h.artifact_id] for h in after)
    assert all(h.text == h.text.upper() for h in after)
    assert [_read(h) for h in before] == want
    assert all(h.text in DOCS[h.artifact_id] and h.text != h.text.upper() for h in before)


def test_copies_and_comparisons_read_the_fields(tmp_path):
    corpus = _corpus(tmp_path)

    def fresh():
        return search(corpus, "water pump", k=3, mode="dense")[0]

    want = fresh()
    full = _read(want)
    for make in (
        lambda h: pickle.loads(pickle.dumps(h)),
        lambda h: pickle.loads(pickle.dumps(h, protocol=2)),
        copy.copy,
        copy.deepcopy,
        lambda h: dataclasses.replace(h),
        lambda h: SearchHit(**dataclasses.asdict(h)),
    ):
        h = fresh()
        got = make(h)
        assert got == h == want and _read(got) == full
        assert DEFERRED not in _stored(got) and set(FIELDS) == set(_stored(got))
    h = fresh()
    assert repr(h) == repr(want)
    assert h.to_dict() == want.to_dict()
    assert dataclasses.asdict(fresh()) == dataclasses.asdict(want)
    assert fresh() == fresh()  # (two unread hits: == reads both)
    # a hit's state is its fields, read: nothing that holds a record table
    assert set(fresh().__getstate__()) == set(FIELDS)


def test_the_deferred_object_stays_inside(tmp_path):
    corpus = _corpus(tmp_path)
    h = search(corpus, "oil pump", k=1, mode="dense")[0]
    later = getattr(h, DEFERRED)
    assert type(later) is _hot.Deferred and _hot.DEFERRED == DEFERRED
    with pytest.raises(TypeError):
        pickle.dumps(later)
    with pytest.raises(TypeError, match="made by the hit builders only"):
        _hot.Deferred()
    assert copy.copy(later) is later and copy.deepcopy(later) is later
    assert later.text() == h.text and later.text() is not later.text()
    assert later.metadata() == h.metadata and later.explain() == h.explain
    fused = search(corpus, "oil pump", k=1, mode="hybrid")[0]
    later = getattr(fused, DEFERRED)
    assert later.explain() == fused.explain and later.explain() is not later.explain()
    assert fused.explain["fusion"] == "rrf" and "evidence" in fused.explain


def test_hand_built_hits_and_the_class_are_unchanged():
    h = SearchHit("a", "doc", 1.0, "t")
    assert (h.artifact_id, h.score) == ("a", 1.0)
    with pytest.raises(AttributeError):
        getattr(h, DEFERRED)  # (its slot empty)
    assert weakref.ref(h)() is h
    # the two fields every hit has in slots, the rest in its dict
    assert vars(h) == {
        "surface_kind": "doc",
        "text": "t",
        "metadata": {},
        "source": None,
        "surface_index": None,
        "record_id": None,
        "explain": None,
    }
    assert SearchHit.explain is None  # the defaults, as the class attributes
    assert SearchHit.surface_index is None and SearchHit.record_id is None
    assert SearchHit.source is None
    assert SearchHit("a", "doc", 1.0, "t").explain is None
    bare = object.__new__(SearchHit)
    for name in ("text", "surface_kind", "artifact_id", "score"):
        with pytest.raises(AttributeError, match=f"'{name}'"):
            getattr(bare, name)
    for name in ("text", "score", "artifact_id"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(h, name, "u")
    # every protocol and copy gives the fields back, slots included
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(h, proto))
        assert back == h and vars(back) == vars(h) and back.score == 1.0
    assert copy.copy(h) == h == copy.deepcopy(h) == dataclasses.replace(h)
    made = new_hit("a", "doc", 1.0, "t", {}, None, None, None, None)
    assert made == h and vars(made) == vars(h) and made.artifact_id == "a"


@pytest.mark.stress
def test_threads_reading_the_same_unread_hits_see_one_object(tmp_path):
    """For 3 s, this thread publishes a fresh search's unread hits over and
    over, and six threads read the fields of whatever list is current,
    each in its own order: every thread sees one object per field, and
    the values a search read at once gives."""
    corpus = _corpus(tmp_path)
    want = [[_read(h) for h in search(corpus, "pump", k=10, **kw)] for kw in SEARCHES]
    orders = list(itertools.permutations(LAZY))
    now = {"hits": (0, search(corpus, "pump", k=10, **SEARCHES[0]))}

    def publish(i: int) -> None:
        case = i % len(SEARCHES)
        now["hits"] = (case, search(corpus, "pump", k=10, **SEARCHES[case]))

    def one(t: int):
        case, hits = now["hits"]
        order = orders[t % len(orders)]
        seen = [[getattr(h, name) for name in order] for h in hits]
        for h, got in zip(hits, seen):
            if any(getattr(h, name) is not value for name, value in zip(order, got)):
                return f"thread {t}: two objects for one field"
        if [_read(h) for h in hits] != want[case]:
            return f"thread {t}: values differ from a search read at once"
        return None

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside a hit's first read too
    try:
        got = hammer(3.0, 6, one, publish)
    finally:
        sys.setswitchinterval(old)
    assert not got.problems, got.problems[:3]
    assert min(got.calls) > 5 and got.meanwhile > 5


def test_a_search_at_k_100_reads_like_one_at_k_10(tmp_path):
    """The deferred fields of a long result list are those of a short
    one, hit for hit (the first 10 of k=100 are k=10's)."""
    corpus = _corpus(tmp_path)
    for kw in SEARCHES:
        short = [_read(h) for h in search(corpus, "pump valve", k=10, **kw)]
        long = search(corpus, "pump valve", k=100, **kw)
        assert len(long) > 10
        assert [_read(h) for h in long[:10]] == short
        assert all(isinstance(h.text, str) and isinstance(h.metadata, dict) for h in long)
        texts = {h.artifact_id: [] for h in long}
        for h in long:
            texts[h.artifact_id].append(h.text)
        assert all(any(t in DOCS[aid] for t in ts) for aid, ts in texts.items())
        np.testing.assert_array_equal(
            [h.metadata["year"] for h in long], [META[h.artifact_id]["year"] for h in long]
        )
