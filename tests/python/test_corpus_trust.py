"""Confined reads and private corpora (issue 28, items 3 and 4).

Each test reproduces an attack on a folder rowvoi indexes or a corpus it
receives, and asserts the fixed behaviour: a symbolic link out of the root is
neither indexed nor disclosed, a received corpus cannot widen what disclosure
reads, FIFOs and sockets never block a build, an undecodable file name does
not fail one, corpora are private whatever the umask, and a link planted at a
lock file leaves its target intact.
"""

import contextlib
import io
import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

from rowvoi.cli.main import main
from rowvoi.corpus import (
    CorpusStore,
    build,
    disclose,
    discover,
    from_files,
    from_mapping,
    open_corpus,
    registry,
    search,
    select,
)
from rowvoi.corpus.base import SearchHit
from rowvoi.corpus.indexing.sources import FileScope, SkippedFileWarning
from rowvoi.corpus.maintenance.runs import coverage, maintain
from rowvoi.corpus.retrieval.disclosure import allowed_roots
from rowvoi.corpus.storage.layout import check_index_name
from rowvoi.errors import IndexFormatError

SECRET = "zanzibar quokka passphrase"


def run_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


def child_env(home):
    return dict(os.environ, ROWVOI_HOME=str(home), SKBUILD_EDITABLE_VERBOSE="0")


@pytest.fixture
def land(tmp_path, monkeypatch):
    """root/ is the folder indexed; outside/ holds a secret next to it;
    root/leak.md links to the secret, root/outdir to its folder."""
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "wing.md").write_text("Lift of a thin wing at low speed.")
    (root / "sub" / "pipe.md").write_text("Heat transfer in a pipe.")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside, root / "outdir")
    os.symlink(root / "wing.md", root / "alias.md")  # stays inside: followed
    return root, outside


def ids_of(corpus):
    with corpus.store.snapshot() as snap:
        return sorted(snap.ledger())


# ------------------------------------------------------------ symlinks out
def test_symlink_out_of_root_is_not_indexed(land):
    root, _ = land
    c = build(from_files(root, embedder="hashing:32"), store=CorpusStore.memory())
    assert ids_of(c) == ["alias.md", "sub/pipe.md", "wing.md"]
    assert search(c, "zanzibar quokka", mode="lexical") == []
    assert c.last_build.skipped == {"symlink": 1}
    scan = FileScope(root).scan()
    assert scan.excluded["symlink"] == ["leak.md"] and scan.excluded_dirs == ["outdir"]
    # the explicit option follows them, file and folder alike
    c2 = build(
        from_files(root, embedder="hashing:32", follow_symlinks=True), store=CorpusStore.memory()
    )
    assert ids_of(c2) == ["alias.md", "leak.md", "outdir/secret.md", "sub/pipe.md", "wing.md"]
    assert c2.last_build.skipped == {}


def test_symlink_out_of_root_cli(land, tmp_path):
    root, _ = land
    rc, out, err = run_cli("build", "notes", "--files", str(root), "--embedder", "hashing")
    assert rc == 0 and "3 artifacts" in out, err
    assert "skipped 1 symlink (rowvoi coverage notes lists them)" in out
    rc, out, _ = run_cli("search", "notes", "zanzibar quokka", "--mode", "lexical")
    assert rc == 0 and SECRET not in out and "(no hits: no record contains a query term" in out
    rc, out, _ = run_cli("coverage", "notes", "--json")
    doc = json.loads(out)
    assert doc["excluded"]["symlink"] == ["leak.md"] and "outdir" in doc["excluded_dirs"]
    # --follow-symlinks is recorded with the source and indexes the link
    rc, out, _ = run_cli(
        "build", "notes", "--files", str(root), "--embedder", "hashing", "--follow-symlinks"
    )
    assert rc == 0 and registry.get("notes")["follow_symlinks"] is True
    rc, out, _ = run_cli("search", "notes", "zanzibar quokka", "--mode", "lexical")
    assert "leak.md" in out
    rc, _, err = run_cli("build", "notes", "--records", "x.jsonl", "--follow-symlinks")
    assert rc == 2 and "--follow-symlinks go with --files" in err


def test_outside_text_already_indexed_is_not_disclosed(land):
    """A corpus that holds text from outside its root (built with
    follow_symlinks, or by an older version): disclosure withholds the
    summary as well as the body, at every level, and through discover."""
    root, _ = land
    c = build(
        from_files(root, name="notes", embedder="hashing:32", follow_symlinks=True),
        store=CorpusStore.memory(),
    )
    sel = select(search(c, "zanzibar quokka", mode="lexical"), strategy="top_k", max_k=3)
    leaked = {h.artifact_id for h in sel.selected if SECRET in h.text}
    assert leaked == {"leak.md", "outdir/secret.md"}  # indexed: the caller asked
    for level in ("metadata", "body"):
        out = [d for d in disclose(sel, corpus=c, level=level) if d.artifact_id in leaked]
        assert len(out) == 2
        for d in out:
            assert d.summary == "" and d.body is None, level
            assert "outside the allowed roots" in d.metadata["disclosure"]
            assert SECRET not in json.dumps(d.to_dict())
    res = discover(c, "zanzibar quokka", mode="lexical", disclose_level="body")
    assert res.results and SECRET not in json.dumps(res.to_dict()["results"])
    # a pointer inside the roots still discloses both
    sel = select(search(c, "thin wing", mode="lexical"), strategy="top_k", max_k=1)
    (d,) = disclose(sel, corpus=c)
    assert d.summary and d.body == (root / "wing.md").read_text()


# --------------------------------------------------------- received corpora
def test_received_corpus_cannot_name_its_own_roots(tmp_path, monkeypatch):
    """A corpus whose docs.sqlite says its root is / and whose pointer is
    /etc/passwd: opened by name, nothing outside the caller's roots is read."""
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    target = "/etc/passwd" if os.path.isfile("/etc/passwd") else __file__
    hostile = from_mapping(
        {"p": "root account list"},
        name="received",
        embedder="hashing:16",
        metadata_of=lambda aid, raw: {"path": target},
        spec={"kind": "files", "root": "/"},
    )
    build(hostile)
    with CorpusStore.local("received").snapshot() as snap:
        assert snap.state["source"]["root"] == "/"  # what the sender wrote
    c = open_corpus("received")
    assert allowed_roots(c) == allowed_roots("received") == ()
    res = discover("received", "root account", mode="lexical", disclose_level="body")
    (d,) = res.results
    assert d.body is None and "no allowed roots" in d.metadata["disclosure"]
    # registered by its receiver with a folder of their own: that folder rules
    mine = tmp_path / "mine"
    mine.mkdir()
    registry.register("received", "files", root=str(mine), embedder="hashing:16")
    assert allowed_roots("received") == allowed_roots(open_corpus("received")) == (str(mine),)
    (d,) = discover("received", "root account", mode="lexical", disclose_level="body").results
    assert d.body is None and d.summary == ""
    assert "outside the allowed roots" in d.metadata["disclosure"]
    # a store elsewhere under the same name is not the registered corpus
    assert allowed_roots(CorpusStore(tmp_path / "copy", name="received")) == ()


def test_unregistered_named_corpus_reads_nothing_until_told(land):
    root, _ = land
    build(from_files(root, name="notes", embedder="hashing:32"))  # from Python: not registered
    res = discover("notes", "thin wing", mode="lexical", disclose_level="body")
    d = res.results[0]
    assert d.body is None and "register" in d.metadata["disclosure"]
    d = discover("notes", "thin wing", mode="lexical", disclose_level="body", roots=[root])
    assert d.results[0].body == (root / "wing.md").read_text()


@pytest.mark.parametrize(
    "kind, name",
    [
        ("lexical", "../../outside.rvx"),
        ("lexical", "ABSOLUTE"),
        ("lexical", "lexical.1.rvx/../../x"),
        ("dense", "dense.1.rvf\x00"),
        ("dense", "/dev/zero"),
        ("hnsw", ".."),
        ("hnsw", "hnsw.1/.."),
        ("lexical", 7),
    ],
)
def test_stored_index_names_are_checked(tmp_path, kind, name):
    """docs.sqlite naming an index file outside the corpus directory: refused
    before anything opens it (here a valid index file that would load)."""
    store = CorpusStore(tmp_path / "c")
    c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"), store=store)
    outside = tmp_path / "outside.rvx"
    outside.write_bytes((store.path / "lexical.1.rvx").read_bytes())
    if name == "ABSOLUTE":
        name = str(outside)
    store.close_writer()
    con = sqlite3.connect(store.db_path)
    base = json.loads(con.execute("SELECT value FROM state WHERE key = 'base'").fetchone()[0])
    base[kind] = name
    if kind == "hnsw":
        base["dense"] = None
    con.execute("UPDATE state SET value = ? WHERE key = 'base'", (json.dumps(base),))
    con.commit()
    con.close()
    fresh = open_corpus(store=CorpusStore(store.path))
    with pytest.raises(IndexFormatError, match=f"names the {kind} index file"):
        search(fresh, "lift", mode="lexical" if kind == "lexical" else "dense")
    with pytest.raises(IndexFormatError, match="rowvoi: delete it and build it again"):
        build(from_mapping({"a": "lift"}, embedder="hashing:8"), store=CorpusStore(store.path))
    assert c is not None


def test_check_index_name_accepts_only_builder_names():
    assert check_index_name("lexical", "lexical.0.rvx") == "lexical.0.rvx"
    assert check_index_name("hnsw", "hnsw.12") == "hnsw.12"
    for bad in ("lexical.1.rvx.tmp-h-1-abcdef01", "dense.1.rvf", "./lexical.1.rvx", ""):
        with pytest.raises(IndexFormatError):
            check_index_name("lexical", bad)


# ---------------------------------------------------------- impossible pointers
@pytest.mark.parametrize("pointer", ["a\x00b.md", "/etc/\x00passwd", "x\ud800.md", "a" * 5000])
def test_impossible_pointers_give_a_note_never_an_exception(tmp_path, pointer):
    (tmp_path / "a.md").write_text("alpha")
    hit = SearchHit("x", "document", 1.0, "matched", {"path": pointer})
    sel = select([hit], strategy="top_k", max_k=1)
    impossible = len(pointer) < 100  # the long one is a name no file system takes
    for kw in ({}, {"roots": [tmp_path]}, {"roots": ["/nonexistent\x00root"]}):
        for level in ("metadata", "body"):
            (d,) = disclose(sel, level=level, **kw)
            assert d.body is None
            if level == "body" or (impossible and kw.get("roots") == [tmp_path]):
                assert d.metadata["disclosure"].startswith("pointer"), (kw, level)
    (d,) = disclose(sel, roots=[tmp_path])
    if "\x00" in pointer:
        assert "NUL byte" in d.metadata["disclosure"] and d.summary == ""
    if not impossible:
        assert "could not be read" in d.metadata["disclosure"] and d.summary == "matched"


# ------------------------------------------------------ FIFOs, sockets, devices
_BUILD_SPECIALS = textwrap.dedent(
    """
    import os, socket, sys, json
    from rowvoi.cli.main import main
    root = sys.argv[1]
    os.mkfifo(os.path.join(root, "x.md"))
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(root, "sock.md"))
    try:
        os.mknod(os.path.join(root, "dev.md"), 0o600 | __import__("stat").S_IFCHR, os.makedev(1, 5))
    except OSError:
        pass  # not allowed here: the FIFO and the socket still count
    rc = main(["build", "notes", "--files", root, "--embedder", "hashing"])
    assert rc == 0
    rc = main(["coverage", "notes", "--json"])
    assert rc == 0
    """
)


def test_fifo_socket_device_are_skipped_and_counted(tmp_path):
    """A FIFO named x.md blocked the build forever while it held the lock;
    now FIFOs, sockets and devices are skipped, counted and reported, and
    the build finishes within seconds (a child process, under a timeout)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "wing.md").write_text("Lift of a wing.")
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _BUILD_SPECIALS, str(root)],
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    special = 3 if (root / "dev.md").exists() else 2
    assert f"skipped {special} special" in lines[0] and "1 artifacts" in lines[0]
    doc = json.loads(lines[-1])
    want = ["dev.md", "sock.md", "x.md"][3 - special :]
    assert doc["excluded"]["special"] == want and doc["indexed"] == ["wing.md"]
    assert took < 60


_SWAP_AFTER_SCAN = textwrap.dedent(
    """
    import os, sys
    from rowvoi.corpus import CorpusStore, build, from_files
    from rowvoi.corpus.indexing.sources import FileScope
    root, outside = sys.argv[1], sys.argv[2]
    real_scan = FileScope.scan

    def scan_then_swap(self):
        out = real_scan(self)
        os.unlink(os.path.join(root, "b.md"))
        os.mkfifo(os.path.join(root, "b.md"))          # a file became a FIFO
        os.unlink(os.path.join(root, "c.md"))
        os.symlink(os.path.join(outside, "secret.md"), os.path.join(root, "c.md"))
        os.rename(os.path.join(root, "sub"), os.path.join(root, "sub.old"))
        os.symlink(outside, os.path.join(root, "sub"))  # a folder became a link
        return out

    FileScope.scan = scan_then_swap
    c = build(from_files(root, embedder="hashing:16"), store=CorpusStore.memory())
    with c.store.snapshot() as snap:
        print(sorted(snap.ledger()), c.last_build.skipped)
    """
)


def test_files_swapped_after_the_walk_are_refused(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    (outside / "d.md").write_text(SECRET)
    for name in ("a.md", "b.md", "c.md", "sub/d.md"):
        (root / name).write_text(f"text of {name}")
    proc = subprocess.run(
        [sys.executable, "-c", _SWAP_AFTER_SCAN, str(root), str(outside)],
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['a.md'] {'symlink': 2, 'special': 1}"


def test_scope_never_opens_special_files_for_reading(tmp_path):
    (tmp_path / "a.md").write_text("alpha")
    os.mkfifo(tmp_path / "p.md")
    scope = FileScope(tmp_path)
    assert list(scope) == ["a.md"]
    assert "p.md" not in scope
    with pytest.raises(KeyError):
        scope["p.md"]


# ----------------------------------------------------------- undecodable names
def test_undecodable_name_is_skipped_with_a_warning(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "wing.md").write_text("Lift of a wing.")
    bad = os.path.join(os.fsencode(root), b"caf\xe9.md")
    with open(bad, "wb") as fh:
        fh.write(b"text behind an undecodable name")
    os.mkdir(os.path.join(os.fsencode(root), b"dir\xff"))
    with open(os.path.join(os.fsencode(root), b"dir\xff", b"x.md"), "wb") as fh:
        fh.write(b"inside an undecodable folder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = build(from_files(root, embedder="hashing:16"), store=CorpusStore.memory())
    assert ids_of(c) == ["wing.md"]
    assert c.last_build.skipped == {"undecodable_name": 2}
    msgs = [str(w.message) for w in caught if w.category is SkippedFileWarning]
    assert any("b'caf\\xe9.md'" in m for m in msgs) and any("b'dir\\xff'" in m for m in msgs)
    with pytest.warns(SkippedFileWarning) as rec:
        scan = FileScope(root).scan()
    assert sorted(str(w.message).split(": skipped ")[1].split(":")[0] for w in rec) == [
        "b'caf\\xe9.md'",
        "b'dir\\xff'",
    ]
    assert scan.excluded["undecodable_name"] == ["caf\\xe9.md", "dir\\xff"]


def test_undecodable_name_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "root"
    root.mkdir()
    (root / "wing.md").write_text("Lift of a wing.")
    with open(os.path.join(os.fsencode(root), b"caf\xe9.md"), "wb") as fh:
        fh.write(b"x")
    rc, out, err = run_cli("build", "notes", "--files", str(root), "--embedder", "hashing")
    assert rc == 0 and "skipped 1 undecodable_name" in out
    assert "rowvoi build: warning:" in err and "b'caf\\xe9.md'" in err
    rc, out, _ = run_cli("coverage", "notes")
    assert rc == 0 and "caf\\xe9.md" in out


# ------------------------------------------------------------------- privacy
_PRIVATE_BUILD = textwrap.dedent(
    """
    import json, os, stat, sys
    os.umask(0)
    from rowvoi.corpus import CorpusStore, build, calibrate_min_score, from_files, registry
    from rowvoi.corpus.indexing import build as ix
    from rowvoi.corpus.maintenance.runs import maintain
    root, home = sys.argv[1], os.environ["ROWVOI_HOME"]
    seen = {}

    def modes(top):
        out = {}
        for dirpath, dirs, files in os.walk(top):
            for n in [*dirs, *files]:
                p = os.path.join(dirpath, n)
                out[os.path.relpath(p, top)] = stat.S_IMODE(os.lstat(p).st_mode)
        return out

    def hook(stage):  # every file of the corpus, temporaries included, mid-build
        seen.update({f"{stage}:{k}": v for k, v in modes(os.path.join(home, "corpora")).items()})

    ix._stage_hook = hook
    registry.register("notes", "files", root=root, embedder="hashing:16")
    maintain(all=True)
    c = build(registry.source_for("notes"), hnsw=True)
    calibrate_min_score(c, ["lift of a wing"], ["banana bread"], mode="lexical")
    store = CorpusStore.local("notes")
    with store.snapshot() as snap:  # a reader's connection keeps -wal and -shm
        final = modes(home)
    print(json.dumps({"during": seen, "final": final}))
    """
)


def test_corpus_files_are_private_under_umask_000(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "wing.md").write_text("Lift of a wing.")
    (root / "pipe.md").write_text("Heat in a pipe.")
    proc = subprocess.run(
        [sys.executable, "-c", _PRIVATE_BUILD, str(root)],
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    final = doc["final"]
    for name in ("docs.sqlite", "docs.sqlite-wal", "docs.sqlite-shm", "manifest.json"):
        assert f"corpora/notes/{name}" in final, sorted(final)
    assert "corpora/notes/build.lock" in final and "corpora.json" in final
    assert any(k.startswith("corpora/notes/hnsw.") for k in final)
    assert any(k.startswith("corpora/.maintenance/") for k in final)
    loose = {k: oct(m) for k, m in {**final, **doc["during"]}.items() if m not in (0o600, 0o700)}
    assert not loose, loose
    # temporaries were seen mid-build (the index files being written)
    assert any(".rvx" in k or "hnsw." in k for k in doc["during"])


def test_older_corpus_is_tightened_by_its_next_write(tmp_path):
    store = CorpusStore(tmp_path / "old")
    src = from_mapping({"a": "lift"}, embedder="hashing:8")
    build(src, store=store)
    for p in [store.path, *store.path.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"), store=store)
    for p in [store.path, *store.path.rglob("*")]:
        assert stat.S_IMODE(p.stat().st_mode) == (0o700 if p.is_dir() else 0o600), p


def test_standalone_index_saves_keep_the_umask_rule(tmp_path):
    import numpy as np

    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.lexical import BM25Index

    old = os.umask(0o022)
    try:
        b = BM25Index()
        b.add(["a b"])
        b.save(tmp_path / "l.rvx")
        b.save(tmp_path / "p.rvx", mode=0o600)
        f = FlatIndex(2, metric="ip")
        f.add(np.eye(2))
        f.save(tmp_path / "f.rvf", mode=0o640)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "l.rvx").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "p.rvx").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "f.rvf").stat().st_mode) == 0o640
    with pytest.raises(ValueError, match="permission bits"):
        b.save(tmp_path / "x.rvx", mode=0o4755)


# --------------------------------------------------------------------- locks
def test_symlink_at_build_lock_leaves_its_target_intact(tmp_path):
    store = CorpusStore(tmp_path / "c")
    src = from_mapping({"a": "lift"}, embedder="hashing:8")
    build(src, store=store)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (store.path / "build.lock").unlink()
    os.symlink(victim, store.path / "build.lock")
    with pytest.raises(PermissionError, match="symbolic link where a lock file belongs"):
        build(src, store=CorpusStore(store.path))
    assert victim.read_text() == "precious"
    # a hard link to another file is refused the same way
    (store.path / "build.lock").unlink()
    os.link(victim, store.path / "build.lock")
    with pytest.raises(PermissionError, match="2 links"):
        build(src, store=CorpusStore(store.path))
    assert victim.read_text() == "precious"
    # a FIFO there: refused at once, never waited on
    (store.path / "build.lock").unlink()
    os.mkfifo(store.path / "build.lock")
    with pytest.raises(PermissionError, match="not a regular file"):
        build(src, store=CorpusStore(store.path))


def test_symlink_at_registry_and_maintenance_locks(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("ROWVOI_HOME", str(home))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    home.mkdir()
    os.symlink(victim, home / "corpora.json.lock")
    with pytest.raises(PermissionError, match="symbolic link"):
        registry.register("notes", "files", root=str(tmp_path))
    (home / "corpora.json.lock").unlink()
    registry.register("notes", "files", root=str(tmp_path), embedder="hashing:8")
    (home / "corpora" / ".maintenance").mkdir(parents=True)
    os.symlink(victim, home / "corpora" / ".maintenance" / "maintain.lock")
    with pytest.raises(PermissionError, match="symbolic link"):
        maintain(all=True)
    assert victim.read_text() == "precious"
    rc, _, err = run_cli("maintain", "--all")
    assert rc == 1 and "symbolic link where a lock file belongs" in err


def test_coverage_counts_match_the_walk(land):
    """coverage's categories come from the same walk as the build: every
    entry on disk is indexed, pending or excluded with one reason."""
    root, _ = land
    os.mkfifo(root / "pipe.md")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(root / "s.sock"))
        registry.register("notes", "files", root=str(root), embedder="hashing:8")
        r = coverage("notes")
    finally:
        s.close()
    assert r.excluded["special"] == ["pipe.md", "s.sock"]
    assert r.excluded["symlink"] == ["leak.md"]
    assert r.pending == ["alias.md", "sub/pipe.md", "wing.md"]
    listed = set(r.pending) | {p for v in r.excluded.values() for p in v}
    assert set(r.on_disk) == listed


_RECORDS_FIFO = textwrap.dedent(
    """
    import os, sys
    from rowvoi.corpus import registry
    from rowvoi.corpus.maintenance.runs import maintain
    from rowvoi.corpus.indexing.sources import read_records
    path = sys.argv[1]
    registry.register("feed", "records", path=path, embedder="hashing:8")
    assert [r.action for r in maintain(all=True)] == ["built"]
    os.unlink(path)
    os.mkfifo(path)   # the records file became a FIFO: nothing may wait on it
    try:
        read_records(path)
    except ValueError as exc:
        print("read_records:", exc)
    report = maintain(all=True)
    print("maintain:", [(r.action, r.error) for r in report])
    """
)


def test_records_file_swapped_for_a_fifo_never_blocks(tmp_path):
    path = tmp_path / "feed.jsonl"
    path.write_text('{"id": 1, "text": "lift"}\n')
    proc = subprocess.run(
        [sys.executable, "-c", _RECORDS_FIFO, str(path)],
        env=child_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == f"read_records: {path}: not a regular file; a records file is a plain file"
    assert out[1] == (
        f"maintain: [('error', '{path}: the records file of this corpus is not a regular file')]"
    )
