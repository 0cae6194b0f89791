"""rowvoi.corpus.retrieval.fusion, .disclosure, .discovery and .tools: rank fusion across
sources, federated discovery with per-source floors, tools."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import fuse_hits
from rowvoi.corpus.base import SearchHit


def hit(aid, score, source=None, **meta):
    return SearchHit(aid, "document", score, f"text of {aid}", meta, source=source)


# ------------------------------------------------------------------ fuse_hits
lists = st.dictionaries(
    st.sampled_from(["s1", "s2", "s3"]),
    st.lists(st.tuples(st.sampled_from("abcdef"), st.floats(0, 10, allow_nan=False)), max_size=8),
    min_size=2,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(
    data=lists,
    rrf_k=st.integers(0, 100),
    weights=st.dictionaries(
        st.sampled_from(["s1", "s2", "s3", "zz"]), st.floats(0, 5, allow_nan=False), max_size=4
    ),
)
def test_rrf_by_hand(data, rrf_k, weights):
    by_source = {name: [hit(a, s) for a, s in pairs] for name, pairs in data.items()}
    fused = fuse_hits(by_source, rrf_k=rrf_k, weights=weights)
    # the reference: dedupe each list to its best score, rank, sum w/(k+rank)
    expected = {}
    for name, pairs in data.items():
        best = {}
        for i, (a, s) in enumerate(pairs):
            if a not in best or s > best[a][0]:
                best[a] = (s, i)
        order = sorted(best, key=lambda a: (-best[a][0], best[a][1]))
        for rank, a in enumerate(order, 1):
            key = (name, a)
            expected[key] = expected.get(key, 0.0) + weights.get(name, 1.0) / (rrf_k + rank)
    got = {(h.source, h.artifact_id): h.score for h in fused}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15)
    # best first; provenance kept
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    for h in fused:
        assert h.metadata["fused_sources"] == [h.source]
        raw = max(s for a, s in data[h.source] if a == h.artifact_id)
        assert h.metadata["source_score"] == raw
        assert h.metadata["source_rank"] >= 1


def test_same_id_in_two_sources_stays_two_results():
    fused = fuse_hits({"a": [hit("x", 0.9)], "b": [hit("x", 12.0)]})
    assert [(h.source, h.artifact_id) for h in fused] == [("a", "x"), ("b", "x")]
    assert fused[0].score == fused[1].score == pytest.approx(1 / 61)


def test_per_list_dedupe_keeps_best_raw_score():
    fused = fuse_hits({"a": [hit("x", 0.2), hit("y", 0.5), hit("x", 0.9)], "b": []})
    assert [
        (h.artifact_id, h.metadata["source_rank"], h.metadata["source_score"]) for h in fused
    ] == [("x", 1, 0.9), ("y", 2, 0.5)]
    assert fused[0].score == pytest.approx(1 / 61) and fused[1].score == pytest.approx(1 / 62)


def test_single_source_passes_through_with_raw_scores():
    hits = [hit("y", 0.5), hit("x", 0.9), hit("y", 0.1)]
    out = fuse_hits({"docs": hits}, k=5)
    assert [(h.artifact_id, h.score, h.source) for h in out] == [
        ("x", 0.9, "docs"),
        ("y", 0.5, "docs"),
    ]
    assert "source_score" not in out[0].metadata
    # two lists, one empty: fused scale, never raw scores
    out = fuse_hits({"docs": hits, "other": []})
    assert out[0].score == pytest.approx(1 / 61)


def test_existing_source_tags_win_and_none_key_stays_untagged():
    fused = fuse_hits(
        {
            "k1": [hit("x", 1.0, source="corpus")],
            "k2": [hit("x", 5.0, source="corpus")],
            None: [hit("x", 3.0)],
        }
    )
    assert [(h.source, h.artifact_id) for h in fused] == [("corpus", "x"), (None, "x")]
    assert fused[0].score == pytest.approx(2 / 61)
    assert fused[0].metadata["fused_sources"] == ["corpus"]
    assert fused[1].score == pytest.approx(1 / 61)


def test_identity_pointer_and_callable():
    a = [hit("1", 0.8, path="/d/x.md"), hit("2", 0.7)]
    b = [hit("x.md", 7.0, path="/d/x.md"), hit("2", 6.0)]
    fused = fuse_hits({"a": a, "b": b}, identity="pointer")
    assert [(h.source, h.artifact_id) for h in fused] == [("a", "1"), ("a", "2"), ("b", "2")]
    assert fused[0].metadata["fused_sources"] == ["a", "b"]
    assert fused[0].score == pytest.approx(2 / 61)
    # a callable; a falsy key falls back to (source, artifact_id)
    fused = fuse_hits(
        {"a": a, "b": b}, identity=lambda h: h.artifact_id if h.artifact_id == "2" else None
    )
    got = [(h.source, h.artifact_id, round(h.score * 61 * 62, 6)) for h in fused]
    assert got == [("a", "2", 2 * 61.0), ("a", "1", 62.0), ("b", "x.md", 62.0)]
    # the representative is the best-ranked hit; "2" ranks 2nd in both lists,
    # so the earlier list's hit represents it
    assert fused[0].metadata["source_score"] == 0.7
    # identity-duplicates inside one list collapse before ranking
    fused = fuse_hits(
        {"a": [hit("p", 0.9, path="/f"), hit("q", 0.8, path="/f")], "b": [hit("r", 1.0)]},
        identity="pointer",
    )
    assert [h.artifact_id for h in fused] == ["p", "r"]


def test_weights_and_truncation():
    fused = fuse_hits({"a": [hit("x", 1.0)], "b": [hit("y", 1.0)]}, weights={"b": 2.0}, k=1)
    assert [(h.source, h.score) for h in fused] == [("b", pytest.approx(2 / 61))]
    fused = fuse_hits({"a": [hit("x", 1.0)], "b": [hit("y", 1.0)]}, weights={"b": 0.0})
    assert fused[1].score == 0.0


def test_fuse_does_not_mutate_inputs():
    h = hit("x", 1.0, path="/p")
    fuse_hits({"a": [h], "b": [hit("y", 1.0)]})
    assert h.source is None and dict(h.metadata) == {"path": "/p"}


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"rrf_k": -1}, ValueError, "rrf_k"),
        ({"weights": {"a": -1}}, ValueError, "weights"),
        ({"weights": [1]}, TypeError, "weights"),
        ({"k": 0}, ValueError, "k=0: must be >= 1"),
        ({"identity": "path"}, ValueError, "unknown identity"),
        ({"identity": 3}, TypeError, "identity"),
    ],
)
def test_fuse_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fuse_hits({"a": [hit("x", 1.0)], "b": []}, **kwargs)


def test_fuse_bad_input():
    with pytest.raises(TypeError, match="mapping"):
        fuse_hits([[hit("x", 1.0)]])
    with pytest.raises(TypeError, match="unhashable"):
        fuse_hits({"a": [hit("x", 1.0)], "b": []}, identity=lambda h: [1])
    assert json.dumps([h.to_dict() for h in fuse_hits({"a": [hit("x", 1)], "b": []})])


# ------------------------------------------------------------------ disclose
import os  # noqa: E402
import pathlib  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from rowvoi.corpus import (  # noqa: E402
    CorpusStore,
    NoFloorWarning,
    PointerRefused,
    build,
    disclose,
    discover,
    from_files,
    from_mapping,
    parent_policy,
    search,
    select,
    sentence_window_policy,
    tools,
)
from rowvoi.corpus.retrieval.disclosure import allowed_roots, read_pointer  # noqa: E402


def sel_of(*hits):
    return select(list(hits), strategy="top_k", max_k=10)


@pytest.fixture()
def tree(tmp_path):
    """root/ holds the corpus files; outside/ a secret next to it."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("alpha body")
    (root / "sub" / "b.md").write_text("beta body")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read")
    os.symlink(outside / "secret.txt", root / "link_out.md")
    os.symlink(root / "a.md", root / "link_in.md")
    os.symlink(outside, root / "dir_out")
    return root, outside


def test_root_guard_refuses_escapes(tree):
    root, outside = tree
    assert read_pointer("a.md", [root]) == ("alpha body", False)
    assert read_pointer(str(root / "sub" / "b.md"), [root])[0] == "beta body"
    assert read_pointer("sub/../a.md", [root])[0] == "alpha body"
    assert read_pointer("link_in.md", [root])[0] == "alpha body"  # a link inside is fine
    for bad in [
        "../outside/secret.txt",
        str(outside / "secret.txt"),
        "link_out.md",
        "dir_out/secret.txt",
        str(root / "sub" / ".." / ".." / "outside" / "secret.txt"),
        "/etc/passwd",
    ]:
        with pytest.raises(PointerRefused):
            read_pointer(bad, [root])
    with pytest.raises(PointerRefused, match="no allowed roots"):
        read_pointer("a.md", [])
    with pytest.raises(PointerRefused, match="regular file"):
        read_pointer("sub", [root])
    with pytest.raises(FileNotFoundError):
        read_pointer("missing.md", [root])
    os.mkfifo(root / "pipe.md")
    with pytest.raises(PointerRefused, match="regular file"):
        read_pointer("pipe.md", [root])  # never blocks on a FIFO


def test_root_guard_checks_again_after_opening(tree, monkeypatch):
    """An open that lands on another file than the one checked (simulated:
    the open is redirected to the secret outside) is refused: the opened
    descriptor is compared with the checked file by inode."""
    import rowvoi.corpus._confine as confine

    root, outside = tree
    real_open = os.open

    def swapped_open(path, flags, *args, **kw):
        if str(path).endswith("a.md"):
            path = str(outside / "secret.txt")
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(confine.os, "open", swapped_open)
    with pytest.raises(PointerRefused, match="while it was opened"):
        read_pointer("a.md", [root])
    assert read_pointer("sub/b.md", [root])[0] == "beta body"


@pytest.mark.parametrize("swap", ["file-to-link", "folder-to-link", "file-to-fifo"])
def test_root_guard_refuses_a_swap_after_the_check(tree, monkeypatch, swap):
    """A real swap on disk between the check (the path resolves inside the
    root) and the open: the file or a folder on its path replaced by a link
    leading out, or the file by a FIFO. Each is refused, none blocks."""
    import rowvoi.corpus._confine as confine

    root, outside = tree
    (outside / "b.md").write_text("do not read either")
    real_resolve = confine.resolve_inside

    def resolve_then_swap(path, r):
        rel = real_resolve(path, r)
        if swap == "file-to-link":
            (root / "sub" / "b.md").unlink()
            os.symlink(outside / "b.md", root / "sub" / "b.md")
        elif swap == "folder-to-link":
            (root / "sub").rename(root / "sub.old")
            os.symlink(outside, root / "sub")
        else:
            (root / "sub" / "b.md").unlink()
            os.mkfifo(root / "sub" / "b.md")
        return rel

    monkeypatch.setattr(confine, "resolve_inside", resolve_then_swap)
    match = "regular file" if swap == "file-to-fifo" else "while it was opened"
    with pytest.raises(PointerRefused, match=match):
        read_pointer("sub/b.md", [root])


def test_root_guard_through_a_symlinked_root(tree, tmp_path):
    root, _outside = tree
    alias = tmp_path / "alias"
    os.symlink(root, alias)
    assert read_pointer(str(alias / "a.md"), [alias])[0] == "alpha body"
    assert read_pointer(str(root / "a.md"), [alias])[0] == "alpha body"
    with pytest.raises(PointerRefused):
        read_pointer(str(alias / "link_out.md"), [alias])


def test_read_pointer_cuts_long_bodies(tree):
    root, _ = tree
    (root / "big.md").write_text("x" * 100)
    assert read_pointer("big.md", [root], max_bytes=10) == ("x" * 10, True)


def test_disclose_never_raises_and_notes_why(tree):
    root, outside = tree
    hits = [
        SearchHit("a", "document", 0.9, "alpha", {"path": str(root / "a.md"), "name": "Alpha"}),
        SearchHit("s", "document", 0.8, "secret", {"path": str(outside / "secret.txt")}),
        SearchHit("l", "document", 0.7, "link", {"path": str(root / "link_out.md")}),
        SearchHit("m", "document", 0.6, "gone", {"path": str(root / "missing.md")}),
        SearchHit("n", "document", 0.5, "no pointer"),
    ]
    sel = sel_of(*hits)
    before = [dict(h.metadata) for h in sel.selected]
    out = disclose(sel, roots=[root])
    assert [d.artifact_id for d in out] == ["a", "s", "l", "m", "n"]
    a, s, l_, m, n = out
    assert (a.body, a.name, a.pointer, a.summary, a.level) == (
        "alpha body",
        "Alpha",
        str(root / "a.md"),
        "alpha",
        "body",
    )
    assert "disclosure" not in a.metadata
    for d in (s, l_):
        assert d.body is None and "outside the allowed roots" in d.metadata["disclosure"]
    assert m.body is None and "could not be read" in m.metadata["disclosure"]
    assert n.body is None and "disclosure" not in n.metadata and n.name == "n"
    assert [dict(h.metadata) for h in sel.selected] == before  # pure
    # without roots nothing is read
    assert disclose(sel_of(hits[0]))[0].metadata["disclosure"].startswith("pointer")
    # the summaries of pointers outside the roots are withheld too
    assert (s.summary, l_.summary) == ("", "")
    assert "neither its body nor its summary" in s.metadata["disclosure"]
    # metadata level: nothing read, but pointers outside the roots withhold
    # their summaries as the body level does
    meta = disclose(sel, level="metadata", roots=[root])
    assert all(d.body is None for d in meta)
    assert [d.summary for d in meta] == ["alpha", "", "", "gone", "no pointer"]
    assert [("disclosure" in d.metadata) for d in meta] == [False, True, True, False, False]
    assert json.loads(json.dumps([d.to_dict() for d in out]))[0]["body"] == "alpha body"


def test_disclose_loader_and_store(tree):
    _root, _ = tree
    hits = [
        SearchHit("a", "document", 0.9, "alpha", {"path": "p/a"}),
        SearchHit("b", "document", 0.8, "beta", {"path": "p/b"}),
        SearchHit("c", "document", 0.7, "gamma", {"path": "p/c"}),
    ]
    store = {"p/a": "from store", "p/b": b"bytes \xff"}
    a, b, c = disclose(sel_of(*hits), store=store)
    assert (a.body, b.body, c.body) == ("from store", "bytes \ufffd", None)
    assert "not in the store" in c.metadata["disclosure"]

    def loader(meta):
        if meta["path"] == "p/c":
            raise RuntimeError("backend down")
        return meta["path"].upper()

    a, b, c = disclose(sel_of(*hits), loader=loader, level="bundled")
    assert (a.body, b.body, c.body, a.level) == ("P/A", "P/B", None, "bundled")
    assert "backend down" in c.metadata["disclosure"]
    with pytest.raises(ValueError, match="not both"):
        disclose(sel_of(*hits), loader=loader, store=store)
    with pytest.raises(ValueError, match="unknown disclosure level"):
        disclose(sel_of(*hits), level="full")
    with pytest.raises(ValueError, match="corpus="):
        disclose(sel_of(*hits), expand=parent_policy())
    with pytest.raises(TypeError, match="Selection"):
        disclose(hits)


@pytest.fixture(scope="module")
def files_corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("notes")
    (root / "wing.md").write_text("Wing stall at a high angle of attack. " * 20)
    (root / "pipe.md").write_text("Heat transfer to a fluid in a pipe.")
    (root / "tax.md").write_text("The yearly tax return form.")
    src = from_files(root, name="notes", embedder="hashing")
    return build(src, store=CorpusStore.memory(), progress=False), root


def test_files_corpus_roots_and_expansion(files_corpus):
    c, root = files_corpus
    assert allowed_roots(c) == (str(root.resolve()),)
    sel = select(search(c, "wing stall", mode="lexical"))
    (d,) = disclose(sel, corpus=c, expand=parent_policy())
    assert d.body == (root / "wing.md").read_text()
    assert d.passage == (root / "wing.md").read_text().strip()
    # federated form: corpora by source; a source without corpus gets a note
    hit = SearchHit(
        "wing.md",
        "document",
        1.0,
        "x",
        {"path": str(root / "wing.md")},
        source="elsewhere",
        surface_index=0,
    )
    (d,) = disclose(sel_of(hit), corpus={"notes": c}, expand=sentence_window_policy())
    assert d.passage is None and "no corpus given" in d.metadata["expansion"]
    assert d.body is None  # no corpus, so no roots for that source either
    # a stale or foreign hit: a note, never an exception
    ghost = SearchHit("ghost.md", "document", 1.0, "x", source="notes", surface_index=0)
    (d,) = disclose(sel_of(ghost), corpus={"notes": c}, expand=sentence_window_policy())
    assert d.passage is None and "ghost.md" in d.metadata["expansion"]


# ------------------------------------------------------------------ discover
def mem(docs, name, embedder="hashing", **kw):
    return build(
        from_mapping(docs, name=name, embedder=embedder, **kw),
        store=CorpusStore.memory(),
        progress=False,
    )


@pytest.fixture(scope="module")
def two():
    a = mem(
        {
            "x": "wing stall and lift",
            "y": "wing flutter at high speed",
            "z": "pipe flow heat transfer",
        },
        "a",
    )
    b = mem(
        {
            "x": "tax forms and wing nuts",
            "w": "wing design for gliders",
            "v": "nothing relevant here",
        },
        "b",
    )
    return a, b


def plain_types(obj):
    if isinstance(obj, dict):
        return all(isinstance(k, str) and plain_types(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(plain_types(v) for v in obj)
    return obj is None or type(obj) in (str, int, float, bool)


def test_discover_one_corpus(two):
    a, _ = two
    res = discover(a, "wing stall", mode="lexical")
    hits = search(a, "wing stall", mode="lexical", k=10)
    assert res.ids == select(hits).selected_ids
    assert res.n_retrieved == len(hits)
    assert res.results[0].source == "a"
    d = res.to_dict()
    assert plain_types(d)
    assert set(d) == {
        "query",
        "mode",
        "strategy",
        "disclose_level",
        "results",
        "abstained",
        "reason",
        "n_retrieved",
        "signals",
    }
    res = discover(a, "wing stall", mode="lexical", min_score=1e9)
    assert res.abstained and res.reason == "abstain:below_floor" and res.results == []
    assert res.signals["floor_from"] == "given"
    res = discover(a, "wing", mode="lexical", strategy="top_k", max_k=1)
    assert len(res.results) == 1 and res.strategy == "top_k"
    res = discover(a, "wing", mode="lexical", strategy=lambda hs: hs[-1:])
    assert res.strategy == "<lambda>" and len(res.results) == 1


def test_federated_floors_gate_each_source_before_fusion(two):
    a, b = two
    ha = search(a, "wing", mode="lexical")
    hb = search(b, "wing", mode="lexical")
    assert len(ha) >= 2 and len(hb) >= 2
    # a floor between a's first and second raw scores keeps a's first only;
    # b has no floor and keeps all. Applied after fusion (on ~1/61-scale
    # scores) the same floor would have removed every result.
    cut = (ha[0].score + ha[1].score) / 2
    res = discover(
        [a, b], "wing", mode="lexical", min_score={"a": cut}, strategy="top_k", max_k=10
    )
    fused = res.selection.selected
    from_a = [h for h in fused if h.source == "a"]
    assert [h.artifact_id for h in from_a] == [ha[0].artifact_id]
    assert [h.artifact_id for h in fused if h.source == "b"] == [h.artifact_id for h in hb]
    assert from_a[0].metadata["source_score"] == pytest.approx(ha[0].score)
    assert all(h.score < cut for h in fused)  # fused scores live on the RRF scale
    assert from_a[0].score == pytest.approx(1 / 61)
    ps = res.signals["per_source"]
    assert ps["a"] == {
        "n_retrieved": len(ha),
        "top_score": pytest.approx(ha[0].score),
        "floor": cut,
        "abstained": False,
    }
    assert ps["b"]["floor"] is None and ps["b"]["n_retrieved"] == len(hb)
    assert res.n_retrieved == len(ha) + len(hb)
    # the same artifact id in two corpora stays two results
    res = discover([a, b], "wing", mode="lexical", strategy="top_k", max_k=10)
    pairs = [(d.source, d.artifact_id) for d in res.results]
    assert ("a", "x") in pairs and ("b", "x") in pairs
    assert len(pairs) == len(set(pairs))
    # a source whose top is below its floor is gated entirely
    res = discover([a, b], "wing", mode="lexical", min_score={"a": 1e9})
    assert res.signals["per_source"]["a"]["abstained"] is True
    assert {d.source for d in res.results} == {"b"}
    res = discover([a, b], "wing", mode="lexical", min_score={"a": 1e9, "b": 1e9})
    assert res.abstained and res.reason == "abstain:below_floor"
    res = discover([a, b], "zzzz", mode="lexical")
    assert res.abstained and res.reason == "abstain:no_candidates"


def test_federated_merges(two):
    a, b = two
    res = discover([a, b], "wing", mode="lexical", merge="score", strategy="top_k", max_k=10)
    scores = [d.score for d in res.results]
    raw = sorted(
        [h.score for h in search(a, "wing", mode="lexical")]
        + [h.score for h in search(b, "wing", mode="lexical")],
        reverse=True,
    )
    assert scores == pytest.approx(raw[: len(scores)])
    c = mem({"q": "wing"}, "c", embedder="hashing:32")
    with pytest.raises(ValueError, match="one embedder"):
        discover([a, c], "wing", mode="lexical", merge="score")
    res = discover(
        [a, b], "wing", mode="lexical", merge=lambda by: by["b"], strategy="top_k", max_k=10
    )
    assert {d.source for d in res.results} == {"b"}
    res = discover([a, b], "wing", mode="lexical", merge_weights={"b": 3.0})
    assert res.results[0].source == "b"


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"min_score": 0.5}, ValueError, "cannot apply to several corpora"),
        ({"min_score": {"nope": 1.0}}, ValueError, "not searched"),
        ({"min_score": "high"}, ValueError, "min_score"),
        ({"merge_weights": {"zz": 1.0}}, ValueError, "not searched"),
        ({"merge": "max"}, ValueError, "unknown merge"),
        ({"strategy": "best"}, ValueError, "strategy"),
        ({"disclose_level": "all"}, ValueError, "disclosure level"),
        ({"k": 0}, ValueError, "k=0: must be >= 1"),
    ],
)
def test_discover_bad_arguments(two, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        discover(list(two), "wing", mode="lexical", **kwargs)


def test_discover_bad_corpora(two):
    a, _ = two
    with pytest.raises(ValueError, match="listed twice"):
        discover([a, a], "wing")
    with pytest.raises(ValueError, match="empty list"):
        discover([], "wing")
    anon = build(
        from_mapping({"x": "wing"}, embedder="hashing"), store=CorpusStore.memory(), progress=False
    )
    with pytest.raises(ValueError, match="by name"):
        discover([a, anon], "wing")
    with pytest.raises(TypeError, match="several corpora"):
        discover(a, "wing", min_score={"a": 1.0})


def write_calibration(corpus, key, record):
    """What the evaluation issue's calibration will store (no writer exists
    yet): one JSON record per key in the corpus's calibration table."""
    import sqlite3

    con = sqlite3.connect(corpus.store.db_path, isolation_level=None)
    try:
        con.execute("INSERT OR REPLACE INTO calibration VALUES (?, ?)", (key, json.dumps(record)))
    finally:
        con.close()


def test_auto_floor_reads_the_calibration_table():
    c = mem({"x": "wing stall and lift", "y": "wing flutter"}, "cal")
    with pytest.warns(NoFloorWarning, match="no floor is calibrated"):
        res = discover(c, "wing", mode="lexical", min_score="auto")
    assert not res.abstained and res.signals["floor_from"] is None
    write_calibration(c, "lexical", {"min_score": 1e6, "embedder_id": c.embedder_id})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = discover(c, "wing", mode="lexical", min_score="auto")
    assert res.abstained and res.reason == "abstain:below_floor"
    assert res.signals["min_score"] == 1e6 and res.signals["floor_from"] == "calibration"
    # hybrid searches use their own key; a blend fusion another one
    with pytest.warns(NoFloorWarning, match="'hybrid'"):
        discover(c, "wing", min_score="auto")
    write_calibration(c, "hybrid+blend", {"min_score": 0.0, "embedder_id": c.embedder_id})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = discover(c, "wing", min_score="auto", fusion="blend")
    assert res.signals["min_score"] == 0.0
    # a stale floor (another embedder) and reweighted scores are not used
    write_calibration(c, "dense", {"min_score": 0.1, "embedder_id": "other-embedder"})
    with pytest.warns(NoFloorWarning, match="other-embedder"):
        res = discover(c, "wing", mode="dense", min_score="auto")
    assert res.signals["min_score"] is None
    with pytest.warns(NoFloorWarning, match="surface_weights"):
        discover(c, "wing", mode="lexical", min_score="auto", surface_weights={"document": 2.0})
    # federated "auto": each source's own floor
    d = mem({"x": "wing"}, "other")
    with pytest.warns(NoFloorWarning):
        res = discover([c, d], "wing", mode="lexical", min_score="auto")
    assert res.signals["per_source"]["cal"]["floor"] == 1e6
    assert res.signals["per_source"]["other"]["floor"] is None
    assert {r.source for r in res.results} == {"other"}


def test_tools(two):
    a, b = two
    out = tools.search("wing stall", corpus=a, mode="lexical")
    assert plain_types(out) and json.loads(json.dumps(out)) == out
    assert out["results"][0]["artifact_id"] == "x"
    out = tools.search("wing", corpus=[a, b], k=2, mode="lexical")
    assert set(out["signals"]["per_source"]) == {"a", "b"}
    assert all(p["n_retrieved"] <= 2 for p in out["signals"]["per_source"].values())
    tool = tools.make_search(a, name="aero_search", description="Aero notes.", k=3, mode="lexical")
    assert tool.__name__ == "aero_search" and tool.__doc__ == "Aero notes."
    assert tool("wing")["n_retrieved"] <= 3
    assert tools.make_search(b).__name__ == "search_b"
    with pytest.raises(ValueError, match="mode"):
        tools.make_search(a, mode="fuzzy")
    retrieve = tools.as_retriever(a, mode="lexical", k=1)
    assert retrieve.corpus is a
    assert len(retrieve("wing")) == 1 and len(retrieve("wing", k=3)) == 2
    with pytest.raises(TypeError, match="search does not take"):
        tools.as_retriever(a, top=3)


def test_unknown_corpus_names_are_not_created(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    from rowvoi.corpus import CorpusNotFound

    with pytest.raises(CorpusNotFound):
        discover("nope", "wing")
    with pytest.raises(CorpusNotFound):
        tools.make_search("nope")
    with pytest.raises(CorpusNotFound):
        tools.as_retriever("nope")
    assert not (tmp_path / "corpora" / "nope").exists()


def test_numpy_free_json_through_hits_with_numpy_metadata():
    sel = sel_of(
        SearchHit("a", "d", np.float32(0.5), "t", {"n": np.int64(3), "v": np.array([1.5])})
    )
    d = disclose(sel, level="metadata")[0].to_dict()
    assert plain_types(d) and d["metadata"] == {"n": 3, "v": [1.5]}


# ---------------------------------------------------------------------- CLI
import contextlib  # noqa: E402
import io  # noqa: E402

from rowvoi.cli.main import main  # noqa: E402


def run_cli(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "wing.md").write_text(
        "# Wing stall\nLift and drag of a wing at high angle of attack.\n"
    )
    (notes / "pipe.md").write_text("Heat transfer in a pipe.\n")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "wing.md").write_text("Wing flutter and wing design.\n")
    for name, folder in (("notes", notes), ("wiki", wiki)):
        rc, _, err = run_cli(["build", name, "--files", str(folder), "--embedder", "hashing"])
        assert rc == 0, err
    return tmp_path


def test_cli_discover(home):
    rc, out, err = run_cli(["discover", "notes", "wing stall", "--json"])
    assert rc == 0 and err == ""
    d = json.loads(out)
    assert next(r["artifact_id"] for r in d["results"]) == "wing.md"
    assert d["disclose_level"] == "metadata" and d["results"][0]["body"] is None
    rc, out, _ = run_cli(["discover", "notes", "wing stall", "--disclose", "--mode", "lexical"])
    assert rc == 0
    assert out.splitlines()[0].startswith("1 of 1 retrieved (lexical, conservative)")
    assert "wing.md" in out and "Lift and drag of a wing" in out and "---" in out
    rc, out, _ = run_cli(
        [
            "discover",
            "notes,wiki",
            "wing",
            "--mode",
            "lexical",
            "--json",
            "--strategy",
            "top_k",
            "--max-k",
            "5",
        ]
    )
    d = json.loads(out)
    assert {(r["source"], r["artifact_id"]) for r in d["results"]} == {
        ("notes", "wing.md"),
        ("wiki", "wing.md"),
    }
    assert set(d["signals"]["per_source"]) == {"notes", "wiki"}
    rc, out, _ = run_cli(
        ["discover", "notes,wiki", "wing", "--mode", "lexical", "--min-score", "notes=1e9,wiki=0"]
    )
    assert rc == 0 and "notes: 1 retrieved" in out and "gated" in out
    assert "wiki/wing.md" in out
    rc, out, _ = run_cli(["discover", "notes", "wing", "--min-score", "1e9"])
    assert rc == 0 and "abstain:below_floor" in out and "below the floor" in out
    rc, out, err = run_cli(["discover", "notes", "wing", "--min-score", "auto"])
    assert rc == 0 and "warning: corpus 'notes': no floor is calibrated" in err
    # --root replaces the corpus's own root: the file is now outside it
    rc, out, _ = run_cli(
        [
            "discover",
            "notes",
            "wing stall",
            "--disclose",
            "--mode",
            "lexical",
            "--root",
            str(home / "wiki"),
        ]
    )
    assert rc == 0 and "(body not read: pointer" in out and "outside the allowed roots" in out


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["discover", "notes,wiki", "wing", "--min-score", "0.3"], 2, "several corpora"),
        (["discover", "notes", "wing", "--min-score", "high"], 2, "not a number"),
        (["discover", "notes", "wing", "--min-score", "inf"], 2, "finite"),
        (["discover", "notes,wiki", "wing", "--min-score", "zz=1"], 2, "not one of the corpora"),
        (["discover", "notes", "wing", "--rel", "0"], 2, "(0, 1]"),
        (["discover", "notes", "wing", "--k", "0"], 2, "argument --k: must be an integer in"),
        (["discover", "notes", "wing", "--k", "100001"], 2, "argument --k"),
        (["discover", "notes", "wing", "--k", "ten"], 2, "must be an integer"),
        (["discover", "notes", "wing", "--mode", "semantic"], 2, "invalid choice: 'semantic'"),
        (["discover", "notes", "wing", "--fusion", "sum"], 2, "invalid choice: 'sum'"),
        (["discover", "notes", "wing", "--max-k", "-1"], 2, "argument --max-k"),
        (["discover", "notes", "wing", "--strategy", "best"], 2, "invalid choice"),
        (["discover", ",", "wing"], 2, "expected a comma-separated list"),
        (["discover", "notes,bad name", "wing"], 2, "corpus name 'bad name'"),
        (["discover", "nope", "wing"], 1, "nope"),
        (["discover", "notes,nope", "wing"], 1, "nope"),
    ],
)
def test_cli_discover_errors(home, args, code, message):
    rc, out, err = run_cli(args)
    assert rc == code and out == ""
    assert message in err and err.startswith("usage:" if code == 2 else "rowvoi discover:")
    assert not (home / "home" / "corpora" / "nope").exists()


def test_readme_discover_section_holds(tmp_path, monkeypatch):
    import re
    import shlex

    root = pathlib.Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    start = readme.index("#### Discover: the few results worth acting on")
    section = readme[start : readme.index("\n## ", start)]
    commands = re.search(r"```sh\n(.*?)\n```", section, re.S).group(1).splitlines()
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    monkeypatch.chdir(root)
    outputs = []
    for line in commands:
        argv = shlex.split(line)
        assert argv[0] == "rowvoi"
        rc, out, err = run_cli(argv[1:])
        assert rc == 0 and err == "", (line, err)
        outputs.append(out)
    assert outputs[2].splitlines()[0].startswith("2 of 6 retrieved (hybrid, conservative)")
    assert "---" in outputs[2] and "A wing stalls when the angle of attack" in outputs[2]
    assert "notes/flutter.md" in outputs[3] and "wings/flutter.md" in outputs[3]
    gated = json.loads(outputs[4])
    notes_top = gated["signals"]["per_source"]["notes"]["top_score"]
    wings_top = gated["signals"]["per_source"]["wings"]["top_score"]
    assert f"top BM25 score {notes_top:.2f}" in flat_text(section)
    assert f"({wings_top:.2f})" in section
    assert gated["signals"]["per_source"]["wings"]["abstained"] is True
    assert gated["results"] and {r["source"] for r in gated["results"]} == {"notes"}
    python = re.search(r"```python\n(.*?)\n```", section, re.S).group(1)
    ns: dict = {}
    exec(python, ns)  # the snippet runs on the corpus the commands built
    assert ns["res"].ids and ns["tool"]("flutter")["results"]
    assert "rel` (0.9)" in section and "`--max-k` (3)" in section


def flat_text(text):
    return " ".join(text.split())


# ------------------------------------------------------------ Cranfield, end to end
def test_cranfield_discover_end_to_end():
    """The 225 Cranfield queries through discover: committing to the top 10
    loses nothing against search; the conservative commit is more precise
    than the top 10; and the collection split into two corpora, searched
    separately and fused by rank, keeps 95% of the whole's nDCG@10."""
    from test_corpus_cranfield import DOCS, QRELS, QUERIES, ndcg10

    whole = mem(DOCS, "cran")
    odd = mem({i: t for i, t in DOCS.items() if int(i) % 2}, "odd")
    even = mem({i: t for i, t in DOCS.items() if not int(i) % 2}, "even")
    whole_ndcg, fused_ndcg, p10, p_sel, n_abstain = [], [], [], [], 0
    for q, text in enumerate(QUERIES, 1):
        rel = QRELS[q]
        hits = search(whole, text, k=10, mode="lexical")
        top = discover(whole, text, k=10, mode="lexical", strategy="top_k", max_k=10)
        assert top.ids == [h.artifact_id for h in hits]
        whole_ndcg.append(ndcg10(top.ids, rel))
        fused = discover([odd, even], text, k=10, mode="lexical", strategy="top_k", max_k=10)
        assert {r.source for r in fused.results} <= {"odd", "even"}
        fused_ndcg.append(ndcg10(fused.ids, rel))
        committed = discover(whole, text, k=10, mode="lexical")
        assert committed.ids == top.ids[: len(committed.ids)]
        p10.append(np.mean([h.artifact_id in rel for h in hits]))
        if committed.abstained:
            n_abstain += 1
        else:
            p_sel.append(np.mean([a in rel for a in committed.ids]))
    assert n_abstain == 0  # no floor: never abstains
    assert np.mean(whole_ndcg) >= 0.37
    assert np.mean(fused_ndcg) >= 0.95 * np.mean(whole_ndcg)
    assert np.mean(p_sel) >= np.mean(p10) + 0.05
