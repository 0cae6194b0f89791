"""Crash safety and concurrent readers of a corpus.

A child process building a corpus is SIGKILLed at each stage of a build
(and at random moments); the corpus must then open with either its previous
contents or the complete new ones -- never a mix -- and search correctly,
and the next build must take over the dead builder's lock. Readers in other
threads and another process must keep answering from one consistent
generation while builds commit.
"""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from rowvoi.corpus import CorpusStore, build, from_mapping, open_corpus, search

WORDS = (
    "wing lift drag shock flow pipe heat nozzle flutter wedge boundary layer supersonic "
    "subsonic turbulent laminar pressure cone plate jet wake vortex stall"
).split()
QUERIES = [
    "wing lift",
    "turbulent boundary layer",
    "shock wedge supersonic",
    "heat pipe",
    "vortex wake stall",
]
EMB = "hashing:32"


def make_docs(seed, n, base=None):
    rng = random.Random(seed)
    docs = dict(base or {})
    if base is None:
        for i in range(n):
            docs[f"d{i:04d}"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60)))
        return docs
    keys = sorted(docs)
    for k in rng.sample(keys, n):  # edits
        docs[k] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60)))
    for k in rng.sample(sorted(docs), n // 2):  # deletions
        del docs[k]
    for i in range(n // 2):  # additions
        docs[f"n{seed}-{i:04d}"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60)))
    return docs


DOCS_A = make_docs(1, 400)
DOCS_B = make_docs(2, 60, DOCS_A)


def signature(corpus):
    """Everything a reader can observe, history-independent."""
    out = []
    for q in QUERIES:
        for mode in ("lexical", "dense", "hybrid"):
            hits = search(corpus, q, mode=mode, k=10)
            out.append([(h.artifact_id, h.text, round(h.score, 4)) for h in hits])
    return out


@pytest.fixture(scope="module")
def expected():
    sig = {}
    for label, docs in (("A", DOCS_A), ("B", DOCS_B)):
        c = build(from_mapping(docs, embedder=EMB), store=CorpusStore.memory())
        sig[label] = signature(c)
    assert sig["A"] != sig["B"]
    return sig


def records(store):
    with store.snapshot() as snap:
        return sorted(
            snap.con.execute(
                "SELECT a.artifact_id, r.surface_index, r.text FROM records r JOIN artifacts a "
                "ON a.aid = r.aid"
            ).fetchall()
        )


CHILD = textwrap.dedent("""
    import json, os, random, signal, sys, threading, time
    sys.path.insert(0, {tests!r})
    from rowvoi.corpus import build, from_mapping
    import rowvoi.corpus.indexing.build as b
    docs = json.load(open({docs!r}))
    stage, when, compact = {stage!r}, {when!r}, {compact!r}
    seen = {{"embedded": 0}}
    def hook(name):
        if name == "embedded":
            seen["embedded"] += 1
            if stage == "embedded" and seen["embedded"] == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        elif name == stage:
            os.kill(os.getpid(), signal.SIGKILL)
    b._stage_hook = hook
    if when is not None:
        threading.Timer(when, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
    print("start", flush=True)
    build(from_mapping(docs, name="crash", embedder={emb!r}), batch_size=32, compact=compact)
    print("done", flush=True)
""")


def run_child(tmp_path, home, docs, *, stage=None, when=None, compact=None):
    path = tmp_path / "docs.json"
    path.write_text(json.dumps(docs))
    script = tmp_path / "child.py"
    script.write_text(
        CHILD.format(
            tests=os.path.dirname(__file__),
            docs=str(path),
            stage=stage,
            when=when,
            compact=compact,
            emb=EMB,
        )
    )
    env = dict(os.environ, ROWVOI_HOME=str(home))
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    return proc


STAGES = [
    ("scanned", None),
    ("embedded", None),
    ("embedded", True),
    ("lexical-written", True),
    ("dense-written", True),
    ("commit", None),
    ("commit", True),
    ("committed", True),
    ("cleaned", None),
]


@pytest.mark.parametrize("stage,compact", STAGES)
def test_sigkill_at_each_stage(tmp_path, monkeypatch, expected, stage, compact):
    home = tmp_path / "home"
    monkeypatch.setenv("ROWVOI_HOME", str(home))
    build(from_mapping(DOCS_A, name="crash", embedder=EMB))
    proc = run_child(tmp_path, home, DOCS_B, stage=stage, compact=compact)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    corpus = open_corpus("crash")
    sig = signature(corpus)
    committed = stage in ("committed", "cleaned")
    assert sig == expected["B" if committed else "A"], stage
    # the next build takes over the dead builder's lock and finishes the job
    c = build(from_mapping(DOCS_B, name="crash", embedder=EMB))
    if not committed:
        assert c.last_build.took_over_lock_of is not None
        assert c.last_build.n_changed > 0
    assert signature(c) == expected["B"]
    assert signature(open_corpus("crash")) == expected["B"]
    files = sorted(p.name for p in c.store.files())
    assert not [f for f in files if ".tmp-" in f], files
    base = c.info()
    assert all(n in files for n in ("manifest.json", "docs.sqlite"))
    assert len([f for f in files if f.startswith(("lexical.", "dense."))]) <= 2, (files, base)


@pytest.mark.stress
def test_sigkill_at_random_moments(tmp_path, monkeypatch, expected):
    home = tmp_path / "home"
    monkeypatch.setenv("ROWVOI_HOME", str(home))
    rng = random.Random(5)
    current = "A"
    build(from_mapping(DOCS_A, name="crash", embedder=EMB))
    outcomes = set()
    for i in range(6):
        target = "B" if current == "A" else "A"
        docs = DOCS_B if target == "B" else DOCS_A
        proc = run_child(
            tmp_path, home, docs, when=rng.uniform(0.25, 1.2), compact=rng.choice([None, True])
        )
        sig = signature(open_corpus("crash"))
        assert sig in (expected["A"], expected["B"]), i
        now = "A" if sig == expected["A"] else "B"
        if proc.returncode == 0:
            assert now == target
        outcomes.add((proc.returncode == 0, now == target))
        current = now
    c = build(from_mapping(DOCS_A, name="crash", embedder=EMB))
    assert signature(c) == expected["A"]


def test_readers_see_one_generation_while_builds_commit(tmp_path, monkeypatch, expected):
    home = tmp_path / "home"
    monkeypatch.setenv("ROWVOI_HOME", str(home))
    build(from_mapping(DOCS_A, name="live", embedder=EMB))
    reader = open_corpus("live")
    stop = threading.Event()
    seen: list[str] = []
    errors: list[BaseException] = []

    def read_loop():
        # each search reads one snapshot, so each result must be all A or all B
        while not stop.is_set():
            try:
                for i, got in enumerate(signature(reader)):
                    assert got in (expected["A"][i], expected["B"][i]), i
                    if expected["A"][i] != expected["B"][i]:
                        seen.append("A" if got == expected["A"][i] else "B")
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                return

    script = tmp_path / "reader.py"
    script.write_text(
        textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_corpus_safety import signature
        from rowvoi.corpus import open_corpus
        c = open_corpus("live")
        end = time.time() + 2.5
        while time.time() < end:
            print(json.dumps(signature(c)), flush=True)
    """)
    )
    other = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, ROWVOI_HOME=str(home)),
    )
    threads = [threading.Thread(target=read_loop) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        end = time.time() + 2.5
        i = 0
        while time.time() < end:
            docs = DOCS_B if i % 2 == 0 else DOCS_A
            build(from_mapping(docs, name="live", embedder=EMB), compact=(i % 3 == 0) or None)
            i += 1
    finally:
        stop.set()
        for t in threads:
            t.join()
    out, err = other.communicate(timeout=60)
    assert not errors, errors[0]
    assert other.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    exp = {k: json.loads(json.dumps(v)) for k, v in expected.items()}
    assert lines
    for sig in lines:
        for i, got in enumerate(sig):
            assert got in (exp["A"][i], exp["B"][i]), i
    assert i >= 2 and len(seen) > 3
    assert {"A", "B"} <= set(seen) or i < 3
