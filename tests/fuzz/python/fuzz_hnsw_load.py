"""Fuzz target: loading a saved HNSW index whose files were altered.

A small real index (48 vectors of dimension 6, M 4, some removed, so the
graph has deleted elements and upper levels) is saved once into a
temporary directory.  Each input then alters a copy of it the way an
attacker who can write the directory would, and the first byte picks how:

* ``0``: 4-byte patches (3-byte offset, 1 byte value) over the graph file,
  with ``hnsw_sha256`` in ``hnsw.json`` rewritten to match, so every
  mutation reaches the structural check (the digest lives in the directory
  it protects, so it is no defence);
* ``1``: the rest is the whole graph file (digest rewritten to match);
* ``2``: pairs of bytes (field, value) set fields of ``hnsw.json`` to hostile
  values (wrong types, negatives, huge numbers, NaN, paths, other parts);
* ``3``: patches over the graph file, digest left as it was;
* ``4``: the exact twin is swapped for one of another index (other ids,
  fewer vectors, another dimension: the next byte picks it, three spare
  bytes follow), then patches as in mode 0.

The index is then loaded and, if that succeeds, used as a reader and a
writer would: searches (plain, filtered, re-scored, a k larger than the
index), an add (hnswlib repairs the links of the neighbours it touches),
a remove, a save and a load of what was saved.  A finding is any exception
other than the documented :class:`rowvoi.errors.IndexFormatError` and
:class:`rowvoi.errors.RvIOError` -- or, above all, a crash of the process
(hnswlib reading out of bounds), which is what the structural check
prevents.

Run it for real: under atheris (libFuzzer) when it gives coverage feedback,
else with the deterministic mutation runner ``mutate_fuzz.py`` beside this
file (see tests/fuzz/RESULTS.md)::

    python tests/fuzz/python/fuzz_hnsw_load.py -max_total_time=600 WORKDIR tests/fuzz/corpus/py_hnsw_load
    python tests/fuzz/python/mutate_fuzz.py hnsw_load 600

``tests/python/test_fuzz_python.py`` replays ``tests/fuzz/corpus/py_hnsw_load/``
on every CI run (atheris not needed).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

try:
    import atheris
except ImportError:  # replay only
    atheris = None
_instrument = (
    atheris.instrument_imports(include=["rowvoi"])
    if atheris is not None and __name__ == "__main__"
    else contextlib.nullcontext()
)
with _instrument:
    import numpy as np

    from rowvoi.errors import IndexFormatError, RvIOError
    from rowvoi.index.hnsw import HNSWIndex

EXPECTED = (IndexFormatError, RvIOError)
DIM = 6

_ROOT = Path(tempfile.mkdtemp(prefix="rowvoi-fuzz-hnsw-"))
atexit.register(shutil.rmtree, _ROOT, True)  # (the inputs live in the fuzz corpus)
_PRISTINE = _ROOT / "pristine"
_rng = np.random.default_rng(5)
_index = HNSWIndex(DIM, metric="l2", M=4, ef_construction=20, ef=10, seed=3)
_index.add(_rng.normal(size=(48, DIM)))
_index.remove([3, 17, 30])
_index.save(_PRISTINE)
META = json.loads((_PRISTINE / "hnsw.json").read_text())
GRAPH = (_PRISTINE / META["hnsw_file"]).read_bytes()
EXACT = (_PRISTINE / META["exact_file"]).read_bytes()
# exact twins of other indexes, for mode 4
_OTHERS = []
for k, (n, dim, first) in enumerate(((48, DIM, 100), (20, DIM, 0), (48, DIM + 1, 0))):
    other = HNSWIndex(dim, metric="l2", M=4, seed=k)
    other.add(_rng.normal(size=(n, dim)), ids=np.arange(first, first + n))
    if n == 48 and first == 0:
        other.remove([3, 17, 30])
    other.save(_ROOT / f"other{k}")
    meta = json.loads((_ROOT / f"other{k}" / "hnsw.json").read_text())
    _OTHERS.append((_ROOT / f"other{k}" / meta["exact_file"]).read_bytes())
_WORK = _ROOT / "work"
_QUERIES = _rng.normal(size=(3, DIM))
_NEW = _rng.normal(size=(4, DIM))

FIELDS = [
    "format", "format_version", "generation", "hnsw_file", "exact_file", "superseded",
    "dim", "metric", "M", "ef_construction", "ef", "seed", "max_elements",
    "element_count", "size", "hnsw_sha256",
]  # fmt: skip
VALUES = [
    "abc", "", -1, 0, 1, 2, 3, 7, 45, 48, 49, 1024, 1025, 2**31, 2**32, 2**63, 2**64,
    30_000_000, 1.5, float("nan"), True, None, [], {}, ["x"], "../escape", "/etc/passwd",
    "hnsw.json", "l2", "cosine", "ip", "rowvoi-hnsw", 10**100, -(2**63), "0" * 64,
]  # fmt: skip


def _patched(img: bytes, data: bytes) -> bytes:
    out = bytearray(img)
    for i in range(0, len(data) - 3, 4):
        off = int.from_bytes(data[i : i + 3], "little") % len(out)
        out[off] = data[i + 3]
    return bytes(out)


def altered(data: bytes) -> tuple[bytes, dict, bytes | None]:
    """The graph bytes, the manifest and the exact twin (None: as saved)
    an input stands for (see the module notes)."""
    meta = dict(META)
    mode, rest = (data[0] % 5, data[1:]) if data else (0, b"")
    exact = None
    if mode == 0:
        graph = _patched(GRAPH, rest)
    elif mode == 4:  # a twin selector and three spare bytes, then patches
        exact = _OTHERS[rest[0] % len(_OTHERS)] if rest else _OTHERS[0]
        graph = _patched(GRAPH, rest[4:])
    elif mode == 1:
        graph = rest
    elif mode == 3:
        return _patched(GRAPH, rest), meta, None
    else:
        graph = GRAPH
        for i in range(0, len(rest) - 1, 2):
            meta[FIELDS[rest[i] % len(FIELDS)]] = VALUES[rest[i + 1] % len(VALUES)]
        return graph, meta, None
    meta["hnsw_sha256"] = hashlib.sha256(graph).hexdigest()
    return graph, meta, exact


def _layout() -> tuple[list[tuple[int, int]], int]:
    """Where the pristine graph keeps what hnswlib follows: (offset, width)
    of every header field, link count, neighbour id and upper-level size or
    link, and the element count."""
    n, elem = int.from_bytes(GRAPH[16:24], "little"), int.from_bytes(GRAPH[24:32], "little")
    m0, m = int.from_bytes(GRAPH[64:72], "little"), int.from_bytes(GRAPH[56:64], "little")
    spots = [(o, 8) for o in range(0, 48, 8)] + [(48, 4), (52, 4)]
    spots += [(o, 8) for o in range(56, 96, 8)]
    for i in range(n):
        base = 96 + i * elem
        spots += [(base, 2), (base + 2, 1)] + [(base + 4 + 4 * j, 4) for j in range(m0)]
    pos = 96 + n * elem
    for _ in range(n):
        size = int.from_bytes(GRAPH[pos : pos + 4], "little")
        spots.append((pos, 4))
        for lv in range(size // (4 + 4 * m)):
            blk = pos + 4 + lv * (4 + 4 * m)
            spots += [(blk, 2)] + [(blk + 4 + 4 * j, 4) for j in range(m)]
        pos += 4 + size
    return spots, n


SPOTS, N_ELEMENTS = _layout()


def generate(rng: random.Random) -> bytes:
    """One structured input (for the mutation runner, mutate_fuzz.py): mostly
    mode-0 patches writing interesting values where hnswlib follows them,
    else the other modes with random content."""
    mode = rng.choice((0, 0, 0, 0, 1, 2, 3, 4))
    if mode == 2:
        return bytes([2]) + bytes(rng.randrange(256) for _ in range(2 * rng.randint(1, 4)))
    if mode == 1:
        cut = rng.randrange(len(GRAPH) + 64)
        graph = GRAPH[:cut] + bytes(rng.randrange(256) for _ in range(max(0, cut - len(GRAPH))))
        return bytes([1]) + graph
    out = bytearray([mode])
    if mode == 4:
        out.append(rng.randrange(256))
        out += b"\0\0\0"
    n = N_ELEMENTS
    interesting = (0, 1, 2, n - 1, n, n + 1, 0xFF, 0xFFFF, 0x7FFFFFFF, 2**32 - 1, 2**63, 2**64 - 1)
    for _ in range(rng.choice((1, 1, 2, 3, 8))):
        off, width = rng.choice(SPOTS)
        value = rng.choice(interesting) if rng.random() < 0.7 else rng.getrandbits(8 * width)
        for i, byte in enumerate((value % 2 ** (8 * width)).to_bytes(width, "little")):
            out += (off + i).to_bytes(3, "little") + bytes([byte])
    return bytes(out)


def test_one_input(data: bytes) -> None:
    """Run one input; raise on a finding."""
    graph, meta, exact = altered(data)
    _WORK.mkdir(exist_ok=True)
    (_WORK / META["hnsw_file"]).write_bytes(graph)
    (_WORK / META["exact_file"]).write_bytes(exact if exact is not None else EXACT)
    (_WORK / "hnsw.json").write_text(json.dumps(meta))
    try:
        index = HNSWIndex.load(_WORK)
    except EXPECTED:
        return
    n = len(index)
    for k in (1, 5, n + 3):
        res = index.search(_QUERIES, k=k)
        assert res.ids.shape == (3, min(k, n)), (res.ids.shape, k, n)
        assert np.isin(res.ids, index.ids()).all()
    if n:
        allowed = index.ids()[::2]
        res = index.search(_QUERIES[0], k=4, filter=allowed, exact_rescore=True)
        assert np.isin(res.ids, allowed).all()
    new = index.add(_NEW)
    index.remove(new[:1])
    index.search(_QUERIES, k=6)
    out = _ROOT / "saved"
    index.save(out)
    back = HNSWIndex.load(out)
    assert len(back) == len(index)
    shutil.rmtree(out)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
