"""The corpus data model: identities, hits, collapse and tagging."""

import json

import numpy as np
import pytest

from rowvoi.corpus import (
    POINTER_KEYS,
    Artifact,
    CorpusEmpty,
    CorpusLocked,
    CorpusNotFound,
    EmbedderError,
    EmbedderMismatch,
    EmbedderUnavailable,
    IndexPlan,
    NoLedgerEntry,
    Record,
    SearchHit,
    Surface,
    best_per_artifact,
    ledger_key,
    storage_key,
    tag_source,
)


def test_storage_key_is_stable_and_unambiguous():
    assert storage_key("a", "b") == storage_key("a", "b")
    assert storage_key("a", "bc") != storage_key("ab", "c")
    assert storage_key("x", 1) == storage_key("x", "1")
    k = storage_key("über/ä b")
    assert len(k) == 32 and all(c in "0123456789abcdef" for c in k)
    with pytest.raises(TypeError):
        storage_key()
    with pytest.raises(TypeError):
        storage_key(1.5)
    with pytest.raises(TypeError):
        storage_key(True)


def test_record_ids_are_deterministic_and_plan_global():
    a = Record.make_id("doc", "chunk", 1)
    assert a == Record.make_id("doc", "chunk", 1)
    assert a != Record.make_id("doc", "chunk", 2)
    assert a != Record.make_id("doc", "title", 1)
    assert a != Record.make_id("doc2", "chunk", 1)
    with pytest.raises(TypeError):
        Record.make_id("doc", "chunk", 1.0)


def test_ledger_key():
    assert ledger_key("a/b.md") == "a/b.md"
    assert ledger_key(7) == "7"
    with pytest.raises(ValueError):
        ledger_key("")
    with pytest.raises(ValueError):
        ledger_key("a\x00b")
    with pytest.raises(TypeError):
        ledger_key(None)
    with pytest.raises(TypeError):
        ledger_key(True)


def test_surface_validation():
    assert Surface("a", "body", "text").granularity == "document"
    with pytest.raises(ValueError):
        Surface("a", "body", "text", granularity="page")
    with pytest.raises(ValueError):
        Surface("a", "", "text")
    with pytest.raises(TypeError):
        Surface("a", "body", None)
    plan = IndexPlan()
    assert dict(plan.filter_fields) == {} and list(plan.surfaces) == []
    assert Artifact("x", {"text": "t"}).raw == {"text": "t"}


def test_pointer_order():
    assert POINTER_KEYS == ("skill_path", "path")
    assert SearchHit("a", "d", 1.0, "", {"path": "p"}).pointer == "p"
    assert SearchHit("a", "d", 1.0, "", {"path": "p", "skill_path": "s"}).pointer == "s"
    assert SearchHit("a", "d", 1.0, "", {"skill_path": "", "path": "p"}).pointer == "p"
    assert SearchHit("a", "d", 1.0, "", {"path": 3}).pointer is None


def test_to_dict_is_plain_json():
    hit = SearchHit(
        "a",
        "chunk",
        np.float32(0.25),
        "t",
        {"n": np.int64(2), "v": np.array([1.5]), "path": "x.md"},
        source="docs",
        surface_index=np.int64(3),
        record_id=np.int64(9),
        explain={"dense": {"rank": np.int64(1), "cosine": np.float32(0.5)}},
    )
    d = hit.to_dict()
    text = json.dumps(d)
    back = json.loads(text)
    assert back["score"] == 0.25 and type(d["score"]) is float
    assert back["metadata"] == {"n": 2, "v": [1.5], "path": "x.md"}
    assert back["surface_index"] == 3 and back["record_id"] == 9
    assert back["pointer"] == "x.md" and back["source"] == "docs"
    assert back["explain"]["dense"] == {"rank": 1, "cosine": 0.5}
    assert "explain" not in SearchHit("a", "d", 1.0, "").to_dict()


def test_best_per_artifact():
    hits = [
        SearchHit("a", "chunk", 0.3, "a0"),
        SearchHit("b", "chunk", 0.9, "b0"),
        SearchHit("a", "title", 0.8, "a1"),
        SearchHit("a", "chunk", 0.8, "a2"),  # tie with a1: first wins
        SearchHit("a", "chunk", 0.95, "a3", source="other"),  # other source
        SearchHit("c", "chunk", float("nan"), "c0"),
        SearchHit("d", "chunk", 0.8, "d0"),  # ties a1's score: input order
    ]
    out = best_per_artifact(hits)
    assert [(h.source, h.text) for h in out] == [
        ("other", "a3"),
        (None, "b0"),
        (None, "a1"),
        (None, "d0"),
        (None, "c0"),
    ]
    assert best_per_artifact([]) == []


def test_tag_source():
    hits = [SearchHit("a", "d", 1.0, ""), SearchHit("b", "d", 1.0, "", source="x")]
    out = tag_source(hits, "y")
    assert [h.source for h in out] == ["y", "x"]
    assert hits[0].source is None  # inputs are not mutated
    assert [h.source for h in tag_source(hits, None)] == [None, "x"]
    with pytest.raises(TypeError):
        tag_source(hits, 3)


def test_error_hierarchy():
    assert issubclass(CorpusNotFound, FileNotFoundError)
    assert issubclass(CorpusEmpty, ValueError)
    assert issubclass(CorpusLocked, RuntimeError)
    assert issubclass(NoLedgerEntry, KeyError)
    assert issubclass(EmbedderMismatch, EmbedderError) and issubclass(EmbedderError, ValueError)
    assert issubclass(EmbedderUnavailable, EmbedderError)
    assert str(NoLedgerEntry("no entry for 'x'")) == "no entry for 'x'"
