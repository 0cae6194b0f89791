"""One MiniLM model per process, and a query embedded once: corpora share the
loaded model (opened by name for each search, or several searched together),
it is loaded again when its files change, and a remembered query vector is
the vector a new call gives."""

import os
import shutil
import threading
import uuid

import numpy as np
import pytest
from hammer import hammer

import rowvoi.corpus.embedders as E
from rowvoi.corpus import (
    CorpusStore,
    build,
    discover,
    from_mapping,
    make_embedder,
    open_corpus,
    search,
)
from rowvoi.index.embed import _QUANT_RECIPE, locate_minilm

# one worker runs the module with test_embed: the int8 model is derived once
pytestmark = pytest.mark.xdist_group("minilm-embed")

DOCS = {
    "a": "lift of a wing at a high angle of attack",
    "b": "shock waves in a supersonic nozzle",
    "c": "transition of the boundary layer on a flat plate",
}


def _fresh_query(words):
    """A query no earlier test embedded (the memo is process-wide)."""
    return f"{words} {uuid.uuid4().hex}"


def _hits(hits):
    return [(h.artifact_id, h.score, h.text) for h in hits]


def test_corpora_opened_by_name_share_one_loaded_model(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    for name in ("one", "two"):
        build(from_mapping(DOCS, name=name, embedder="minilm"), progress=False)
    engines = set()
    for name in ("one", "two", "one"):
        c = open_corpus(name)
        hits = search(c, "wing lift", mode="hybrid")  # loads the query embedder
        assert hits[0].artifact_id == "a"
        engines.add(id(c._embedder.engine))
    assert len(engines) == 1
    # searching by name opens the corpus each time, and finds the model loaded
    before = E._minilm_engines[True, _QUANT_RECIPE][1]
    assert search("two", "nozzle shock", mode="dense")[0].artifact_id == "b"
    assert E._minilm_engines[True, _QUANT_RECIPE][1] is before


def test_the_model_is_loaded_again_when_its_files_change(tmp_path, monkeypatch):
    model, tok = locate_minilm()
    d = tmp_path / "model"
    d.mkdir()
    shutil.copyfile(model, d / "model.onnx")
    shutil.copyfile(tok, d / "tokenizer.json")
    monkeypatch.setenv("ROWVOI_MODEL_DIR", str(d))
    monkeypatch.setattr(E, "_minilm_engines", {})  # this test's engines end with it
    first = E._minilm(quantize=False)
    assert E._minilm(quantize=False).engine is first.engine
    st = os.stat(d / "model.onnx")
    os.utime(d / "model.onnx", ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    second = E._minilm(quantize=False)
    assert second.engine is not first.engine
    assert second.embedder_id == first.embedder_id  # the same bytes
    text = ["flow separation on an airfoil"]
    assert np.array_equal(first.embed(text), second.embed(text))
    # another directory is another model
    monkeypatch.delenv("ROWVOI_MODEL_DIR")
    assert E._minilm(quantize=False).engine is not second.engine


def test_a_corpus_of_the_previous_recipe_keeps_it_until_rebuilt(tmp_path, monkeypatch):
    # built when rowscale-v3 was the default int8 recipe: its queries embed
    # with v3 (as its documents did) until a build re-embeds it with v5
    import rowvoi.index.embed as embed

    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    monkeypatch.setattr(E, "_minilm_engines", {})
    monkeypatch.setattr(embed, "_QUANT_RECIPE", "rowscale-v3")
    build(from_mapping(DOCS, name="old", embedder="minilm"), progress=False)
    old_id = open_corpus("old").embedder_id
    assert ":int8-rowscale-v3:" in old_id
    monkeypatch.setattr(embed, "_QUANT_RECIPE", _QUANT_RECIPE)
    c = open_corpus("old")
    assert search(c, "shock nozzle", mode="dense")[0].artifact_id == "b"
    assert c._embedder.embedder_id == old_id
    assert c._embedder.engine.recipe == "rowscale-v3"
    v3 = c._embedder.embed(["shock nozzle"])
    build(from_mapping(DOCS, name="old", embedder="minilm"), progress=False)
    c = open_corpus("old")
    assert c.embedder_id == old_id.replace("rowscale-v3", _QUANT_RECIPE)
    assert search(c, "shock nozzle", mode="dense")[0].artifact_id == "b"
    assert not np.array_equal(c._embedder.embed(["shock nozzle"]), v3)


def test_a_missing_model_is_still_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_MODEL_DIR", str(tmp_path))
    monkeypatch.setattr(E, "_minilm_engines", {})
    with pytest.raises(E.EmbedderUnavailable, match=r"has no model\.onnx"):
        E._minilm()
    assert E._minilm_engines == {}


def test_threads_that_load_the_model_at_once_share_one(monkeypatch):
    monkeypatch.setattr(E, "_minilm_engines", {})
    n = 6
    barrier = threading.Barrier(n)
    got = [None] * n
    errors = []

    def load(i):
        try:
            barrier.wait()
            got[i] = E._minilm().engine
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({id(e) for e in got}) == 1 and got[0] is E._minilm_engines[True, _QUANT_RECIPE][1]


def test_federated_discovery_embeds_the_query_once():
    corpora = [
        build(
            from_mapping(DOCS, name=name, embedder="hashing:64"),
            store=CorpusStore.memory(),
            progress=False,
        )
        for name in ("x", "y", "z")
    ]
    embedders = {id(c._embedder) for c in corpora}
    assert len(embedders) == 3  # three wrappers, one embedder id
    query = _fresh_query("shock in a nozzle")
    calls = sum(c._embedder.calls for c in corpora)
    warm = discover(corpora, query, mode="hybrid")
    assert sum(c._embedder.calls for c in corpora) == calls + 1
    # the same result as with every vector computed anew
    with E._query_memo_lock:
        E._query_memo.clear()
    cold = discover(corpora, query, mode="hybrid")
    assert warm.to_dict() == cold.to_dict()
    assert warm.ids and warm.ids[0] == "b"


def test_a_remembered_query_vector_is_the_vector_a_new_call_gives():
    emb = make_embedder("minilm")
    query = _fresh_query("pressure distribution on a cone")
    got = emb.embed_query(query)
    calls = emb.calls
    again = emb.embed_query(query)
    assert emb.calls == calls  # remembered
    assert np.array_equal(got, emb.embed([query])[0]) and np.array_equal(again, got)
    # the caller owns what it gets: changing it changes nothing remembered
    again[:] = 0.0
    assert np.array_equal(emb.embed_query(query), got)
    # another wrapper of the same embedder finds it too
    other = make_embedder("minilm")
    assert np.array_equal(other.embed_query(query), got) and other.calls == 0


def test_the_memo_is_bounded_and_skips_long_texts_and_callables(monkeypatch):
    monkeypatch.setattr(E, "QUERY_MEMO_SIZE", 4)
    emb = make_embedder("hashing:32")
    for i in range(10):
        emb.embed_query(_fresh_query(f"wing {i}"))
    assert len(E._query_memo) <= 4
    long = "wing " * (E.QUERY_MEMO_MAX_CHARS // 5 + 1)
    calls = emb.calls
    emb.embed_query(long)
    emb.embed_query(long)
    assert emb.calls == calls + 2
    seen = []

    def fn(texts):
        seen.extend(texts)
        return [[1.0, float(len(t))] for t in texts]

    own = make_embedder((fn, "toy-memo-v1"))
    q = _fresh_query("drag")
    own.embed_query(q)
    own.embed_query(q)
    assert seen == [q, q]  # a callable may change its answers: asked each time


@pytest.mark.stress
def test_the_memo_under_many_threads(monkeypatch):
    """Eight threads for two seconds, a memo far smaller than the texts they
    ask for (so entries come and go all the time): every vector is the one
    the embedder gives."""
    monkeypatch.setattr(E, "QUERY_MEMO_SIZE", 8)
    emb = make_embedder("hashing:48")
    texts = [_fresh_query(f"boundary layer {i}") for i in range(40)]
    want = {t: emb.embed([t])[0] for t in texts}
    rngs = [np.random.default_rng(seed) for seed in range(8)]

    def ask(t):
        text = texts[int(rngs[t].integers(len(texts)))]
        return None if np.array_equal(emb.embed_query(text), want[text]) else text

    got = hammer(2.0, 8, ask)
    assert not got.problems and len(got.calls) == 8 and min(got.calls) > 100
    assert len(E._query_memo) <= 8
