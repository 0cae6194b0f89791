"""Corpora named in searches stay open: a search or ``discover`` naming a
corpus finds its indexes in memory, sees new builds, and a corpus deleted or
replaced since is opened afresh (``kept_corpus``)."""

import json
import shutil
import time

import pytest
from hammer import hammer

import rowvoi.corpus.retrieval.corpus as C
from rowvoi.corpus import CorpusNotFound, CorpusStore, build, discover, from_mapping, search
from rowvoi.corpus.retrieval.corpus import kept_corpus
from rowvoi.corpus.storage.store import BaseFileDamaged, remove_corpus

FIRST = {"a": "lift of a wing at a high angle of attack", "b": "shock waves in a nozzle"}
SECOND = {"c": "heat transfer to a blunt body in hypersonic flow", "d": "wing flutter"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    monkeypatch.setattr(C, "_kept", type(C._kept)())  # this test's corpora end with it
    return tmp_path


def _build(name, docs):
    return build(from_mapping(docs, name=name, embedder="hashing:64"), progress=False)


def _ids(hits):
    return [h.artifact_id for h in hits]


def test_a_named_corpus_is_opened_once_and_its_indexes_loaded_once(home):
    _build("notes", FIRST)
    assert _ids(search("notes", "wing lift", mode="hybrid"))[0] == "a"
    kept = kept_corpus("notes")
    loaded = kept._generations.loaded
    assert loaded is not None and loaded.has_lexical and loaded.has_dense
    assert _ids(search("notes", "nozzle", mode="lexical")) == ["b"]
    res = discover("notes", "shock waves", mode="hybrid")
    assert res.ids[0] == "b"
    assert kept_corpus("notes") is kept and kept._generations.loaded is loaded


def test_a_new_build_is_found_by_the_kept_corpus(home):
    _build("notes", FIRST)
    kept = kept_corpus("notes")
    assert _ids(search("notes", "wing", mode="lexical")) == ["a"]
    _build("notes", {**FIRST, **SECOND})
    assert set(_ids(search("notes", "wing", mode="lexical"))) == {"a", "d"}
    assert kept_corpus("notes") is kept  # same folder, same database: kept


def test_a_deleted_or_replaced_corpus_is_opened_afresh(home):
    _build("notes", FIRST)
    first = kept_corpus("notes")
    search("notes", "wing", mode="hybrid")
    remove_corpus(CorpusStore.local("notes"))
    with pytest.raises(CorpusNotFound, match="no corpus 'notes'"):
        search("notes", "wing", mode="lexical")
    _build("notes", SECOND)
    assert _ids(search("notes", "flutter of a wing", mode="lexical")) == ["d"]
    second = kept_corpus("notes")
    assert second is not first
    # the database replaced under the same folder (a restored copy)
    db = CorpusStore.local("notes").db_path
    shutil.copyfile(db, db.with_name("copy.sqlite"))
    db.with_name("copy.sqlite").replace(db)
    assert kept_corpus("notes") is not second


def test_a_kept_corpus_serves_its_loaded_generation_as_an_opened_one_does(home):
    """A file deleted under a kept corpus is found when the corpus is
    loaded again (a new process, a new build), as for any opened corpus:
    until then the generation in memory answers."""
    _build("notes", FIRST)
    before = _ids(search("notes", "wing lift", mode="hybrid"))
    (home / "corpora" / "notes" / "dense.1.rvf").unlink()
    assert _ids(search("notes", "wing lift", mode="hybrid")) == before
    with C._kept_lock:
        C._kept.clear()  # as a new process
    with pytest.raises(BaseFileDamaged, match=r"dense\.1\.rvf: missing"):
        search("notes", "wing lift", mode="hybrid")


def test_another_home_is_another_corpus(home, tmp_path_factory, monkeypatch):
    _build("notes", FIRST)
    assert _ids(search("notes", "wing", mode="lexical")) == ["a"]
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path_factory.mktemp("other-home")))
    with pytest.raises(CorpusNotFound):
        search("notes", "wing", mode="lexical")
    _build("notes", SECOND)
    assert _ids(search("notes", "wing", mode="lexical")) == ["d"]


def test_only_the_most_recently_named_corpora_stay_open(home):
    names = [f"c{i}" for i in range(C.KEPT_CORPORA + 2)]
    for name in names:
        _build(name, FIRST)
        search(name, "wing", mode="lexical")
    assert len(C._kept) == C.KEPT_CORPORA
    assert [k.rsplit("/", 1)[-1] for k in C._kept] == names[-C.KEPT_CORPORA :]
    early = kept_corpus(names[0])  # closed, so opened again
    assert early is kept_corpus(names[0]) and len(C._kept) == C.KEPT_CORPORA


def test_a_bad_name_is_refused_as_before(home):
    with pytest.raises(ValueError):
        search("../outside", "wing", mode="lexical")


@pytest.mark.stress
def test_searches_by_name_under_threads_while_the_corpus_is_rebuilt(home):
    """Six threads search a corpus by name for three seconds while it is
    rebuilt, alternating two document sets: every result is one of the two
    sets' answers, and no call fails."""
    _build("notes", FIRST)
    answers = {("a",), ("a", "d")}  # "wing" in FIRST, and in FIRST + SECOND

    def both_modes(_):
        # (hybrid also returns dense neighbours: its answer only must exist)
        if not search("notes", "wing", mode="hybrid", k=5):
            return "no hybrid hit"
        lex = tuple(sorted(_ids(search("notes", "wing", mode="lexical", k=5))))
        return None if lex in answers else lex

    got = hammer(
        3.0, 6, both_modes, lambda i: _build("notes", {**FIRST, **SECOND} if i % 2 == 0 else FIRST)
    )
    assert not got.problems, got.problems[:3]
    assert got.meanwhile >= 2 and len(got.calls) == 6 and min(got.calls) > 5


def test_mcp_tool_calls_find_the_corpus_open(home):
    pytest.importorskip("mcp")
    from rowvoi.cli.main import build_parser
    from rowvoi.cli.mcp import ToolServer, verb_parsers

    _build("notes", FIRST)
    server = ToolServer(verb_parsers(build_parser()))
    found = server.call("search", {"name": "notes", "query": "wing lift", "mode": "hybrid"})
    kept = kept_corpus("notes")
    loaded = kept._generations.loaded
    assert loaded is not None and "wing" in json.dumps(found, default=str)
    server.call("discover", {"names": ["notes"], "query": "shock in a nozzle"})
    server.call("search", {"name": "notes", "query": "nozzle", "mode": "lexical"})
    assert kept_corpus("notes") is kept and kept._generations.loaded is loaded


def _in_forked_child(fn, timeout=120.0):
    """Run ``fn`` in a forked child; its exit code (0: ``fn`` returned
    True), or -1 when it did not end within ``timeout`` seconds (killed)."""
    import os
    import signal
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (fork of a threaded process)
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            code = 0 if fn() else 3
        finally:
            os._exit(code)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return -1


def test_a_forked_child_opens_its_own_corpus_and_model(home):
    """The parent's kept corpus and loaded MiniLM model are not the child's:
    a child searching by name opens the corpus and loads the model itself
    (an inherited onnxruntime session could wait forever for threads that
    stayed in the parent), and finds what the parent finds."""
    import rowvoi.corpus.embedders as E

    build(from_mapping(FIRST, name="mini", embedder="minilm"), progress=False)
    want = _ids(search("mini", "wing lift", mode="hybrid"))
    parent = kept_corpus("mini")
    engine = E._minilm().engine

    def child():
        return (
            _ids(search("mini", "wing lift", mode="hybrid")) == want
            and kept_corpus("mini") is not parent
            and E._minilm().engine is not engine
        )

    assert _in_forked_child(child) == 0
    assert kept_corpus("mini") is parent and E._minilm().engine is engine
