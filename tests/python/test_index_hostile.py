"""Index files from elsewhere (issue 28, "Index files are validated, not
trusted"): each attack reproduced, then the fixed behaviour asserted.

* HNSW graphs edited by someone who also rewrote ``hnsw.json``'s SHA-256
  loaded and then crashed the process on search (entry point, a neighbour
  id, a link count), also through ``rowvoi search --mode dense`` (exit 139);
  now :class:`IndexFormatError` naming the file and the defect.  Crash-prone
  loads run in a child process, so a regression fails a test instead of
  killing pytest.
* ``hnsw.json`` fields were not checked: ``ef="abc"`` loaded and then broke
  every search, ``max_elements=30000000`` allocated gigabytes for 50
  vectors; every field is now checked at load.
* A FIFO in place of an index file blocked ``BM25Index.load``,
  ``FlatIndex.load`` and ``rowvoi search`` forever; every loader now
  refuses non-regular files at once (children with a timeout, so a
  regression fails instead of hanging).
* Symbolic links: a path the caller names may be a link (``follow_symlinks``,
  default true); the files inside a saved HNSW directory or a corpus are
  never followed.
"""

import hashlib
import json
import os
import sqlite3
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from rowvoi.corpus import CorpusStore, build, from_mapping, open_corpus, search
from rowvoi.errors import IndexFormatError, RvIOError
from rowvoi.index.flat import FlatIndex
from rowvoi.index.hnsw import HNSW_MAX_ELEMENTS, HNSWIndex
from rowvoi.index.lexical import BM25Index

RNG = np.random.default_rng(28)
HEADER = 96


def _saved(d: Path, n=50, dim=8, M=8, remove=()):
    h = HNSWIndex(dim, metric="l2", M=M, seed=1)
    h.add(np.random.default_rng(0).normal(size=(n, dim)))
    if remove:
        h.remove(list(remove))
    h.save(d)
    return h


def _graph(d: Path):
    meta = json.loads((d / "hnsw.json").read_text())
    return meta, d / meta["hnsw_file"]


def _layout(b: bytes):
    """(n, bytes per element, M, offsets of each element's upper-level block)."""
    n, elem = struct.unpack_from("<QQ", b, 16)
    m = struct.unpack_from("<Q", b, 56)[0]
    pos, upper = HEADER + n * elem, []
    for _ in range(n):
        size = struct.unpack_from("<I", b, pos)[0]
        upper.append((pos, size // (4 + 4 * m)))
        pos += 4 + size
    return n, elem, m, upper


def _edit(d: Path, change):
    """Apply change(bytearray) to the graph and rewrite the digest to match,
    as an attacker who can write the directory would."""
    meta, graph = _graph(d)
    b = bytearray(graph.read_bytes())
    change(b)
    graph.write_bytes(bytes(b))
    meta["hnsw_sha256"] = hashlib.sha256(bytes(b)).hexdigest()
    (d / "hnsw.json").write_text(json.dumps(meta))


def _upper_element(b):
    """(element, offset of its block, level) of the first element above level 0
    that is not the entry point."""
    _, _, _, upper = _layout(b)
    ep = struct.unpack_from("<I", b, 52)[0]
    return next((i, pos, lv) for i, (pos, lv) in enumerate(upper) if lv and i != ep)


def _attack_entry(b):
    struct.pack_into("<I", b, 52, 4_000_000_000)


def _attack_neighbour(b):
    elem = struct.unpack_from("<Q", b, 24)[0]
    struct.pack_into("<I", b, HEADER + 3 * elem + 4, 10**7)


def _attack_link_count(b):
    elem = struct.unpack_from("<Q", b, 24)[0]
    struct.pack_into("<H", b, HEADER + 3 * elem, 60000)


def _attack_top_level(b):
    struct.pack_into("<i", b, 48, 7)


def _attack_upper_neighbour(b):
    _, pos, _ = _upper_element(b)
    struct.pack_into("<H", b, pos + 4, 1)
    struct.pack_into("<I", b, pos + 8, 2**31)


def _attack_upper_count(b):
    _, pos, _ = _upper_element(b)
    struct.pack_into("<H", b, pos + 4, 500)


def _attack_lower_neighbour(b):
    """Link an upper level to an element that has no such level: hnswlib reads
    that element's level-l list without asking whether it has one."""
    _, _, _, upper = _layout(b)
    low = next(i for i, (_, lv) in enumerate(upper) if lv == 0)
    _, pos, _ = _upper_element(b)
    struct.pack_into("<H", b, pos + 4, 1)
    struct.pack_into("<I", b, pos + 8, low)


def _attack_element_level(b):
    """An element claims one more level: its block grows past the file's
    structure (the sizes that follow no longer line up)."""
    _, pos, lv = _upper_element(b)
    m = struct.unpack_from("<Q", b, 56)[0]
    struct.pack_into("<I", b, pos, (lv + 1) * (4 + 4 * m))


def _attack_trailing(b):
    b.extend(b"\0" * 44)


def _attack_duplicate_label(b):
    """Two elements with one id: hnswlib's id lookup keeps one, so removing
    that id would leave the other one found by searches."""
    elem, label_at = struct.unpack_from("<QQ", b, 24)
    b[HEADER + 5 * elem + label_at : HEADER + 5 * elem + label_at + 8] = b[
        HEADER + 6 * elem + label_at : HEADER + 6 * elem + label_at + 8
    ]


ATTACKS = {
    "entry_point": (_attack_entry, r"entry point 4000000000, top level 2 \(the graph has 50 elements"),
    "neighbour_id": (_attack_neighbour, r"element 3, level 0: neighbour id 10000000 is not an element"),
    "link_count": (_attack_link_count, r"element 3, level 0: 60000 links, at most 16"),
    "top_level": (_attack_top_level, r"top level 7, but the entry point"),
    "upper_neighbour_id": (_attack_upper_neighbour, r"level 1: neighbour id 2147483648 is not an element"),
    "upper_link_count": (_attack_upper_count, r"level 1: 500 links, at most 8"),
    "neighbour_below_its_level": (_attack_lower_neighbour, r"level 1: neighbour \d+ has level 0 only"),
    "element_level": (_attack_element_level, r"links|truncated|bytes after"),
    "trailing_bytes": (_attack_trailing, r"44 bytes after the last element's links"),
    "duplicate_label": (_attack_duplicate_label, r"two elements share a label"),
}  # fmt: skip

_LOAD_ALL = textwrap.dedent("""
    import json, sys
    import numpy as np
    from rowvoi.index.hnsw import HNSWIndex
    out = {}
    for d in sys.argv[1:]:
        try:
            ix = HNSWIndex.load(d)
            ix.search(np.ones(8), k=5)
            ix.add(np.ones((3, 8)))
            out[d] = "loaded"
        except Exception as e:
            out[d] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))
""")


def _child(code, *args, timeout=120, env=None):
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_edited_hnsw_graphs_are_refused_before_hnswlib_sees_them(tmp_path):
    pristine = tmp_path / "pristine"
    _saved(pristine)
    dirs = {}
    for name, (change, _) in ATTACKS.items():
        d = tmp_path / name
        _saved(d)
        _edit(d, change)
        dirs[name] = d
    # in a child: a regression crashes it, not pytest
    p = _child(_LOAD_ALL, pristine, *dirs.values())
    assert p.returncode == 0, f"the loader crashed (exit {p.returncode}): {p.stderr[-2000:]}"
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got[str(pristine)] == "loaded"
    for name, (_, message) in ATTACKS.items():
        d = dirs[name]
        _, graph = _graph(d)
        assert got[str(d)].startswith("IndexFormatError: RV_E_CORRUPT: " + str(graph)), name
        assert "rebuild the index" in got[str(d)], name
        assert __import__("re").search(message, got[str(d)]), (name, got[str(d)])


_BYPASS = textwrap.dedent("""
    import sys
    import numpy as np
    import rowvoi.index._flat as flat
    from rowvoi.index.hnsw import HNSWIndex
    real = flat.hnsw_check
    pristine = sys.argv[1]
    HNSWIndex.load(pristine)  # learn the info of the unedited graph
    info = {}
    def spy(*args):
        info.update(real(*args))
        return dict(info)
    flat.hnsw_check = spy
    HNSWIndex.load(pristine)
    flat.hnsw_check = lambda *args: dict(info)  # the check, switched off
    ix = HNSWIndex.load(sys.argv[2])
    print("loaded", flush=True)
    ix.search(np.ones(8), k=5)
    print("searched", flush=True)
""")


@pytest.mark.parametrize("name", ["entry_point", "neighbour_id"])
def test_the_same_edits_crash_hnswlib_without_the_check(tmp_path, name):
    """The attack is real: with the structural check switched off, the
    edited graph loads and the first search kills the process."""
    pristine, d = tmp_path / "pristine", tmp_path / name
    _saved(pristine)
    _saved(d)
    _edit(d, ATTACKS[name][0])
    p = _child(_BYPASS, pristine, d)
    assert "loaded" in p.stdout and "searched" not in p.stdout
    assert p.returncode < 0, (p.returncode, p.stderr[-1000:])  # killed by a signal


def test_untouched_graphs_with_deletions_and_levels_still_load(tmp_path):
    for n, M in ((0, 4), (1, 2), (300, 4), (200, 16)):
        d = tmp_path / f"g{n}-{M}"
        h = _saved(d, n=n, M=M, remove=range(0, n, 7))
        back = HNSWIndex.load(d)
        assert len(back) == len(h) and back.M == M
        if len(h):
            q = RNG.normal(size=(4, 8))
            np.testing.assert_array_equal(back.search(q, k=3).ids, h.search(q, k=3).ids)
        back.add(RNG.normal(size=(5, 8)))  # grows past the capacity it was loaded with
        assert len(back) == len(h) + 5


# ------------------------------------------------------------- hnsw.json

MANIFEST_ATTACKS = [
    ("ef", "abc", r"ef = 'abc' is not an integer in 1 \.\."),
    ("ef", 0, r"ef = 0 is not an integer"),
    ("ef", 2.5, r"ef = 2\.5 is not an integer"),
    ("ef", True, r"ef = True is not an integer"),
    ("M", 1, r"M = 1 is not an integer in 2 \.\. 1024"),
    ("M", 4096, r"M = 4096 is not an integer in 2 \.\. 1024"),
    ("M", 4, r"header: M = 8, maxM = 8, maxM0 = 16; the index description says M = 4"),
    ("M", 9, r"6056 bytes, truncated \(50 elements of dim 8, M 9 need at least 6096\)"),
    ("ef_construction", -5, r"ef_construction = -5 is not an integer"),
    ("ef_construction", 13, r"ef_construction 200, the index description says 13"),
    ("seed", -1, r"seed = -1 is not an integer in 0 \.\."),
    ("seed", "7", r"seed = '7' is not an integer"),
    ("dim", 0, r"dim = 0 is not an integer in 1 \.\. 65536"),
    ("dim", 9, r"does not match hnsw\.json \(dim 9"),
    ("metric", "euclid", r"metric = 'euclid' is not one of cosine, ip, l2"),
    ("metric", "ip", r"does not match hnsw\.json"),
    ("max_elements", 30_000_000, r"capacity 1024, the index description says 30000000"),
    ("max_elements", 10, r"max_elements = 10 is not an integer in 50 \.\."),
    (
        "max_elements",
        2**40,
        r"max_elements = 1099511627776 is not an integer in 50 \.\. 4294967294",
    ),
    ("element_count", "50", r"element_count = '50' is not an integer"),
    ("element_count", 51, r"header: 50 elements, the index description says 51"),
    ("size", -1, r"size = -1 is not an integer in 0 \.\. 50"),
    ("size", 60, r"size = 60 is not an integer in 0 \.\. 50"),
    ("hnsw_sha256", "zz", r"hnsw_sha256 is not a SHA-256 digest"),
    (
        "hnsw_file",
        "../../etc/passwd",
        r"hnsw_file = '\.\./\.\./etc/passwd' is not a part file name",
    ),
    ("hnsw_file", "/etc/passwd", r"is not a part file name"),
    (
        "exact_file",
        "exact.1.h-1-0a1b2c3d.rvf.tmp-x/../../y",
        r"exact_file = .* is not a part file name",
    ),
    ("exact_file", "exact.9.h-1-0a1b2c3d.rvf", r"is not a part of generation 1"),
    ("generation", 0, r"generation = 0 is not an integer in 1 \.\."),
    ("superseded", "hnsw.bin", r"superseded is not a list of part file names"),
    ("superseded", ["../x"], r"superseded is not a list of part file names"),
    ("format_version", "2", r"format_version = '2' is not an integer"),
    ("format_version", True, r"format_version = True is not an integer"),
]


@pytest.mark.parametrize(("field", "value", "message"), MANIFEST_ATTACKS)
def test_every_manifest_field_is_checked_at_load(tmp_path, field, value, message):
    d = tmp_path / "ix"
    _saved(d)
    meta = json.loads((d / "hnsw.json").read_text())
    meta[field] = value
    (d / "hnsw.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=message) as err:
        HNSWIndex.load(d)
    assert str(d) in str(err.value)


def test_a_huge_manifest_is_refused_before_it_is_read(tmp_path):
    d = tmp_path / "ix"
    _saved(d)
    meta = json.loads((d / "hnsw.json").read_text())
    meta["padding"] = "x" * (2 << 20)
    (d / "hnsw.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=r"hnsw\.json: \d+ bytes, more than the 1048576"):
        HNSWIndex.load(d)


# The child's own peak resident set (VmHWM, KiB): its ru_maxrss would also
# count the parent's peak, which Linux carries across fork and exec.
_RSS = textwrap.dedent("""
    import sys
    from rowvoi.index.hnsw import HNSWIndex
    ix = HNSWIndex.load(sys.argv[1])
    hwm = next(ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    print(len(ix), ix._g.get_max_elements(), hwm.split()[1])
""")


def test_a_huge_capacity_allocates_nothing(tmp_path):
    """max_elements = 30,000,000 for 50 vectors (manifest *and* graph header
    edited to agree, digest rewritten): loads, reserving room for 50."""
    d = tmp_path / "ix"
    _saved(d)
    _edit(d, lambda b: struct.pack_into("<Q", b, 8, 30_000_000))
    meta = json.loads((d / "hnsw.json").read_text())
    meta["max_elements"] = 30_000_000
    (d / "hnsw.json").write_text(json.dumps(meta))
    p = _child(_RSS, d)
    assert p.returncode == 0, p.stderr[-2000:]
    size, capacity, rss_kib = map(int, p.stdout.split()[-3:])
    assert (size, capacity) == (50, 50)
    # hnswlib honouring 30M would touch > 1.5 GB (locks, levels, visited lists)
    assert rss_kib < 600 * 1024, rss_kib
    with pytest.raises(ValueError, match="max_elements"):
        HNSWIndex(4, max_elements=HNSW_MAX_ELEMENTS + 1)


def test_a_graph_from_another_index_is_refused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _saved(a)
    h = HNSWIndex(8, metric="l2", M=8, seed=1)
    h.add(np.random.default_rng(0).normal(size=(50, 8)), ids=np.arange(100, 150))
    h.save(b)
    meta_a, graph_a = _graph(a)
    meta_b, graph_b = _graph(b)
    graph_a.write_bytes(graph_b.read_bytes())  # same shape, other ids
    meta_a["hnsw_sha256"] = meta_b["hnsw_sha256"]
    (a / "hnsw.json").write_text(json.dumps(meta_a))
    with pytest.raises(IndexFormatError, match="are not the exact twin's"):
        HNSWIndex.load(a)


# -------------------------------------------------- FIFOs and other files

_FIFO_CHILD = textwrap.dedent("""
    import json, sys, time
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.lexical import BM25Index
    loaders = {"bm25": BM25Index.load, "flat": FlatIndex.load, "hnsw": HNSWIndex.load}
    out = []
    for kind, path in zip(sys.argv[1::2], sys.argv[2::2]):
        t = time.monotonic()
        try:
            loaders[kind](path)
            out.append([kind, "loaded", time.monotonic() - t])
        except Exception as e:
            out.append([kind, f"{type(e).__name__}: {e}", time.monotonic() - t])
    print(json.dumps(out))
""")


def test_a_fifo_in_place_of_any_index_file_is_refused_at_once(tmp_path):
    bm, fl = BM25Index(), FlatIndex(4)
    bm.add(["alpha beta"])
    fl.add(RNG.normal(size=(3, 4)))
    cases = []
    for kind in ("bm25", "flat"):
        os.mkfifo(tmp_path / f"{kind}.idx")
        cases.append(
            (kind, tmp_path / f"{kind}.idx", "is a FIFO (named pipe), not a regular file")
        )
    for part in ("hnsw.json", "hnsw_file", "exact_file"):
        d = tmp_path / f"h-{part}"
        _saved(d)
        name = part if part == "hnsw.json" else _graph(d)[0][part]
        (d / name).unlink()
        os.mkfifo(d / name)
        cases.append(("hnsw", d, f"{d / name} is a FIFO (named pipe), not a regular file"))
    os.mkfifo(tmp_path / "hnsw-dir")  # a FIFO where the directory belongs
    cases.append(("hnsw", tmp_path / "hnsw-dir", "is not a directory, not a saved HNSWIndex"))
    args = [str(a) for kind, path, _ in cases for a in (kind, path)]
    p = _child(_FIFO_CHILD, *args, timeout=60)  # blocked forever before
    assert p.returncode == 0, p.stderr[-2000:]
    results = json.loads(p.stdout.strip().splitlines()[-1])
    for (kind, path, message), (_, text, took) in zip(cases, results):
        assert message in text, (kind, path, text)
        assert took < 5, (kind, path, took)
    # a character device: refused the same way, nothing read
    with pytest.raises(RvIOError, match="/dev/zero is a character device"):
        FlatIndex.load("/dev/zero")
    with pytest.raises(RvIOError, match="is a directory"):
        BM25Index.load(tmp_path)


def test_symlinks_follow_the_callers_choice_never_inside_a_directory(tmp_path):
    bm, fl = BM25Index(), FlatIndex(4)
    bm.add(["alpha beta"])
    fl.add(RNG.normal(size=(3, 4)))
    bm.save(tmp_path / "real.rvx")
    fl.save(tmp_path / "real.rvf")
    h = _saved(tmp_path / "real-hnsw")
    for real, link, load in (
        ("real.rvx", "link.rvx", BM25Index.load),
        ("real.rvf", "link.rvf", FlatIndex.load),
        ("real-hnsw", "link-hnsw", HNSWIndex.load),
    ):
        os.symlink(tmp_path / real, tmp_path / link)
        assert len(load(tmp_path / link)) == len(load(tmp_path / real))  # the caller's path
        with pytest.raises(RvIOError, match=f"{link} is a symbolic link; rowvoi does not follow"):
            load(tmp_path / link, follow_symlinks=False)
    # a part of a saved HNSW directory that is a link: never followed
    d = tmp_path / "linked-part"
    _saved(d)
    _, graph = _graph(d)
    outside = tmp_path / "outside.bin"
    graph.rename(outside)
    os.symlink(outside, graph)
    with pytest.raises(RvIOError, match=f"{graph} is a symbolic link"):
        HNSWIndex.load(d)
    assert len(h) == 50


# ------------------------------------------------------------------ corpora


def _hnsw_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    words = "wing lift drag shock flow pipe heat nozzle wake jet cone layer".split()
    rng = np.random.default_rng(4)
    docs = {f"d{i}.md": " ".join(rng.choice(words, size=8)) for i in range(60)}
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in docs.items():
        (notes / name).write_text(text)
    from rowvoi.cli.main import main

    assert main(["build", "h", "--files", str(notes), "--embedder", "hashing:16", "--hnsw"]) == 0
    return open_corpus("h")


def _state(store_path: Path, key: str, value=None):
    con = sqlite3.connect(store_path / "docs.sqlite")
    try:
        if value is None:
            row = con.execute("SELECT value FROM state WHERE key=?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        with con:
            con.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, json.dumps(value)))
    finally:
        con.close()


def test_rowvoi_search_refuses_an_edited_corpus_graph(tmp_path, monkeypatch):
    corpus = _hnsw_corpus(tmp_path, monkeypatch)
    graph_dir = next(p for p in corpus.store.path.iterdir() if p.name.startswith("hnsw."))
    _edit(graph_dir, _attack_neighbour)
    env = {**os.environ, "ROWVOI_HOME": str(tmp_path / "home")}
    p = subprocess.run(
        [sys.executable, "-m", "rowvoi", "search", "h", "wing lift", "--mode", "dense"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert p.returncode == 1, (p.returncode, p.stderr[-2000:])  # was 139 (SIGSEGV)
    assert "neighbour id 10000000 is not an element" in p.stderr
    assert str(graph_dir) in p.stderr


def test_rowvoi_search_refuses_a_fifo_in_place_of_a_corpus_index(tmp_path, monkeypatch):
    corpus = _hnsw_corpus(tmp_path, monkeypatch)
    lexical = next(p for p in corpus.store.path.iterdir() if p.name.startswith("lexical."))
    lexical.unlink()
    os.mkfifo(lexical)
    env = {**os.environ, "ROWVOI_HOME": str(tmp_path / "home")}
    p = subprocess.run(
        [sys.executable, "-m", "rowvoi", "search", "h", "wing lift", "--mode", "lexical"],
        capture_output=True,
        text=True,
        timeout=60,  # blocked forever before
        env=env,
    )
    assert p.returncode == 1, (p.returncode, p.stderr[-2000:])
    assert f"{lexical} is a FIFO (named pipe), not a regular file" in p.stderr


def test_corpus_index_files_are_never_followed(tmp_path, monkeypatch):
    corpus = _hnsw_corpus(tmp_path, monkeypatch)
    for prefix in ("lexical.", "hnsw."):
        f = next(p for p in corpus.store.path.iterdir() if p.name.startswith(prefix))
        moved = tmp_path / f"moved-{f.name}"
        f.rename(moved)
        os.symlink(moved, f)
        with pytest.raises(RvIOError, match=f"{f} is a symbolic link"):
            search(open_corpus("h"), "wing", mode="lexical" if prefix == "lexical." else "dense")
        f.unlink()
        moved.rename(f)
    assert search(open_corpus("h"), "wing", k=1)


@pytest.mark.parametrize(
    ("key", "edit", "message"),
    [
        (
            "base",
            {"lexical": "../../outside.rvx"},
            r"names the lexical index file '\.\./\.\./outside",
        ),
        ("base", {"lexical": "/etc/passwd"}, r"names the lexical index file '/etc/passwd'"),
        ("base", {"hnsw": "hnsw.1/../.."}, r"names the hnsw index file 'hnsw.1/\.\./\.\.'"),
        ("hnsw", {"max_elements": 4_000_000_000}, r"HNSW settings .* are not a subset"),
        ("hnsw", {"M": "many"}, r"bad HNSW settings"),
    ],
)
def test_corpus_state_cannot_point_loaders_elsewhere(tmp_path, key, edit, message):
    store = CorpusStore(tmp_path / "c")
    build(
        from_mapping({"a": "lift and drag", "b": "heat flow"}, embedder="hashing:8"), store=store
    )
    state = _state(store.path, key) or {}
    if key == "hnsw":  # settings of a corpus with a graph still to be built
        state = {"M": 8, "ef_construction": 50, "ef": 20, "seed": 1}
        base = _state(store.path, "base")
        base["dense"] = None
        _state(store.path, "base", base)
    state.update(edit)
    _state(store.path, key, state)
    with pytest.raises(IndexFormatError, match=message):
        search(open_corpus(store=CorpusStore(store.path)), "lift", mode="hybrid")


def test_hnswlib_reads_a_private_copy_also_without_memfd(tmp_path, monkeypatch):
    """Where Linux's memfd is missing, the checked bytes go to a file in a
    fresh 0700 directory, removed once hnswlib has read it."""
    import tempfile

    from rowvoi.index import _file as _indexfile

    d = tmp_path / "ix"
    h = _saved(d, remove=[4])
    made = []
    real_mkdtemp = tempfile.mkdtemp

    def spy(*args, **kw):
        made.append(Path(real_mkdtemp(*args, **kw)))
        assert made[-1].stat().st_mode & 0o777 == 0o700
        return str(made[-1])

    monkeypatch.delattr(os, "memfd_create")
    monkeypatch.setattr(_indexfile.tempfile, "mkdtemp", spy)
    back = HNSWIndex.load(d)
    assert len(made) == 1 and not made[0].exists()
    q = RNG.normal(size=(3, 8))
    np.testing.assert_array_equal(back.search(q, k=4).ids, h.search(q, k=4).ids)
