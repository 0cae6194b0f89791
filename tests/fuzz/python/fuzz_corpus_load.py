"""Fuzz target: opening a corpus whose ``docs.sqlite`` was damaged.

A small real corpus (three documents, hashing embedder, lexical and flat
indexes) is built once into a temporary directory.  Each input then
replaces its ``docs.sqlite``: the first byte picks the mode -- even: the
rest is a list of 4-byte patches (3-byte offset, 1 byte value) applied to
the real file, so damage lands inside a well-formed database; odd: the rest
is the whole file.  The corpus is then opened and used the way a reader
does (``info``, two lexical searches, the records of an artifact).  A finding is any exception other than the documented ones --
:class:`rowvoi.corpus.CorpusError` and :class:`rowvoi.errors.RvError`
(``IndexFormatError`` names the corrupt file) -- such as a raw
``sqlite3.DatabaseError``, a ``KeyError`` or a ``TypeError`` leaking out.
``manifest.json`` is not fuzzed: it is a description that rowvoi writes and
never reads back.

Run it for real (libFuzzer through atheris)::

    python tests/fuzz/python/fuzz_corpus_load.py -max_total_time=600 WORKDIR tests/fuzz/corpus/py_corpus_load

``tests/python/test_fuzz_python.py`` replays ``tests/fuzz/corpus/py_corpus_load/``
on every CI run (atheris not needed).
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

# Under atheris (run as a script), rowvoi's own modules are instrumented
# for coverage feedback; imported by the replay test, nothing is.
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
    import rowvoi.errors
    from rowvoi.corpus import CorpusError, CorpusStore, build, from_mapping, open_corpus


DOCS = {
    "wing.md": "Lift and drag of a thin wing at low speed",
    "pipe.md": "Heat transfer to a fluid in a pipe, with drag on the wall",
    "notes/boundary.md": "Boundary layers: laminar, transitional and turbulent flow",
}
EXPECTED = (CorpusError, rowvoi.errors.RvError)

_ROOT = Path(tempfile.mkdtemp(prefix="rowvoi-fuzz-corpus-"))
atexit.register(shutil.rmtree, _ROOT, True)  # (the inputs live in the fuzz corpus)
_PRISTINE = _ROOT / "pristine"
build(from_mapping(DOCS, embedder="hashing"), store=CorpusStore(_PRISTINE))
IMAGE = (_PRISTINE / "docs.sqlite").read_bytes()
_WORK = _ROOT / "work"


def damaged(data: bytes) -> bytes:
    """The ``docs.sqlite`` bytes an input stands for (see the module notes)."""
    if not data:
        return IMAGE
    if data[0] % 2:
        return data[1:]
    img = bytearray(IMAGE)
    for i in range(1, len(data) - 3, 4):
        off = int.from_bytes(data[i : i + 3], "little") % len(img)
        img[off] = data[i + 3]
    return bytes(img)


def test_one_input(data: bytes) -> None:
    """Run one input; raise on a finding."""
    if _WORK.exists():
        shutil.rmtree(_WORK)
    shutil.copytree(_PRISTINE, _WORK)
    for extra in ("docs.sqlite-wal", "docs.sqlite-shm"):
        (_WORK / extra).unlink(missing_ok=True)
    (_WORK / "docs.sqlite").write_bytes(damaged(data))
    store = CorpusStore(_WORK)
    try:
        corpus = open_corpus(store=store)
        corpus.info()
        corpus.search("drag wing", mode="lexical", k=3)
        corpus.search("flow", mode="lexical", k=2, per_artifact=False)
        corpus.records_for_artifact("wing.md")
    except EXPECTED:
        pass
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
