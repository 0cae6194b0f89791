"""The corpus data model: artifacts, surfaces, plans, records, hits.

Retrieval over a corpus flows through five small types (the names of the
``ir`` package, so its users find their way):

:class:`Artifact`
    A logical item of a corpus (a file, a record, a paper): an id, an
    opaque ``raw`` payload and ``metadata``.
:class:`Surface`
    One embeddable unit of text derived from an artifact. An artifact may
    have several, of different *kinds* (a title and a body, a description
    and chunks), so a query can match the right part of it.
:class:`IndexPlan`
    What an indexing strategy makes of one artifact: its ``filter_fields``
    (metadata a search may filter on -- never embedded, never searched as
    text) and its ``surfaces`` (embedded and indexed). The split is the
    point: good retrieval is hard filtering *and* ranking.
:class:`Record`
    A stored surface: one row of the corpus's indexes.
:class:`SearchHit`
    A scored record returned by a search (higher score = better), with a
    disclosure :attr:`~SearchHit.pointer` and a JSON-ready
    :meth:`~SearchHit.to_dict`.

Identities
----------
* An artifact is identified by ``(source, artifact_id)``: the same id in
  two corpora names two artifacts (:func:`best_per_artifact` never merges
  them).
* ``surface_index`` is **plan-global**: the position of a surface among
  *all* non-empty surfaces of its artifact's plan, whatever their kind. It
  is not the per-kind ``metadata["chunk_index"]`` a chunking strategy
  stamps: with a title surface at position 0, chunk ``j`` of the body has
  ``surface_index == j + 1``. Address an artifact's records through the
  ledger (``records_for_artifact``), never by re-deriving ids.
* :meth:`Record.make_id` is the record's **string id**, a pure function of
  ``(artifact_id, surface_kind, surface_index)``: stable across builds as
  long as the plan gives that surface the same position.
* ``record_id`` (on :class:`Record` and :class:`SearchHit`) is the
  corpus's **int64 record id**, the id every engine index files the record
  under (BM25, flat, HNSW take caller ids). The corpus assigns them from a
  counter that never goes back, so an id names one surface text for the
  life of the corpus; a surface whose text changes is stored under a new
  id. The string id is the stable public name; the int id is what the
  kernels speak and what :class:`rowvoi.index.idset.IdSet` filters hold.

Thread-safety: every type here is an immutable value (frozen dataclasses;
do not mutate the dictionaries they hold) and every function is pure, so
all may be shared between threads.

Examples
--------
>>> from rowvoi.corpus.base import SearchHit, best_per_artifact
>>> hits = [SearchHit("a", "chunk", 0.5, "x", surface_index=2),
...         SearchHit("b", "title", 0.9, "y", {"path": "/docs/b.md"}),
...         SearchHit("a", "title", 0.7, "z", surface_index=0)]
>>> [(h.artifact_id, h.score) for h in best_per_artifact(hits)]
[('b', 0.9), ('a', 0.7)]
>>> hits[1].pointer
'/docs/b.md'
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rowvoi.index import _hot

__all__ = [
    "Artifact",
    "Surface",
    "IndexPlan",
    "Record",
    "SearchHit",
    "SearchHits",
    "FilterFields",
    "POINTER_KEYS",
    "GRANULARITIES",
    "best_per_artifact",
    "tag_source",
    "storage_key",
    "ledger_key",
    "plain",
    "CorpusError",
    "CorpusNotFound",
    "CorpusExists",
    "CorpusEmpty",
    "CorpusLocked",
    "NoLedgerEntry",
    "EmbedderError",
    "EmbedderMismatch",
    "EmbedderUnavailable",
]

#: Non-embedded, hard-filterable metadata of an artifact (``{name: value}``).
FilterFields = Mapping[str, Any]

#: Metadata keys checked, in order, for a hit's disclosure *pointer*: the
#: file (or directory) whose contents are the artifact's body.
#: :func:`rowvoi.corpus.indexing.sources.from_files` stamps ``path``.
POINTER_KEYS: tuple[str, ...] = ("skill_path", "path")

#: The coarse granularities a surface declares.
GRANULARITIES: tuple[str, ...] = ("document", "chunk", "field")

#: Hex digits kept by :func:`storage_key` (128 bits of SHA-256).
_KEY_HEX = 32


# ------------------------------------------------------------------ errors


class CorpusError(Exception):
    """Base class of the corpus layer's errors. Each concrete error also
    derives from the built-in exception a caller would expect
    (``ValueError``, ``KeyError``, ``FileNotFoundError``, ``RuntimeError``),
    and its message says what to do.

    >>> issubclass(CorpusEmpty, CorpusError) and issubclass(CorpusEmpty, ValueError)
    True
    """


class CorpusNotFound(CorpusError, FileNotFoundError):
    """No corpus of that name (or at that path) has been built. Nothing is
    created for it.

    >>> str(CorpusNotFound("no corpus 'x'; build it first: rowvoi build x"))
    "no corpus 'x'; build it first: rowvoi build x"
    """


class CorpusExists(CorpusError, FileExistsError):
    """A directory that is not a corpus is in the way of a new one.

    >>> issubclass(CorpusExists, FileExistsError)
    True
    """


class CorpusEmpty(CorpusError, ValueError):
    """The corpus has no records yet (``corpus 'X' is empty; build it
    first: rowvoi build X``).

    >>> isinstance(CorpusEmpty("corpus 'x' is empty; build it first: rowvoi build x"), ValueError)
    True
    """


class CorpusLocked(CorpusError, RuntimeError):
    """Another live process is building this corpus (its pid is named);
    one builder at a time. Readers are never refused.

    >>> issubclass(CorpusLocked, RuntimeError)
    True
    """


class NoLedgerEntry(CorpusError, KeyError):
    """The corpus has no ledger entry for the artifact asked for (an
    unknown artifact). A ``KeyError`` subclass; a *stale* ledger (an entry
    whose records are missing) is a plain ``KeyError`` instead.

    >>> str(NoLedgerEntry("artifact 'x' is not in corpus 'c'"))
    "artifact 'x' is not in corpus 'c'"
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class EmbedderError(CorpusError, ValueError):
    """A corpus cannot be built or queried with the embedder at hand. The
    message says what is wrong and the command or argument that fixes it.

    >>> issubclass(EmbedderError, ValueError)
    True
    """


class EmbedderMismatch(EmbedderError):
    """The embedder at hand is not the one the corpus was built with (its
    id or dimension differs).

    >>> issubclass(EmbedderMismatch, EmbedderError)
    True
    """


class EmbedderUnavailable(EmbedderError):
    """The embedder a corpus was built with cannot be recreated here (a
    missing model, or a callable that must be passed again).

    >>> issubclass(EmbedderUnavailable, EmbedderError)
    True
    """


# ---------------------------------------------------------------- helpers


def plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays turned into Python ones,
    recursively through dicts, lists and tuples (tuples become lists): what
    ``to_dict()`` methods return, ready for :func:`json.dumps`.

    >>> import numpy as np
    >>> plain({"a": np.float32(0.5), "b": (np.int64(2), [np.bool_(True)])})
    {'a': 0.5, 'b': [2, [True]]}
    """
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def _check_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def storage_key(*parts: Any) -> str:
    """A stable, file-system-safe id for string parts: the first 32 hex
    digits (128 bits) of the SHA-256 of the parts, each length-prefixed, so
    ``("ab", "c")`` and ``("a", "bc")`` differ.

    Parameters
    ----------
    *parts : str or int
        At least one part; ints are written in decimal.

    Raises
    ------
    TypeError
        A part is neither a str nor an int (nor a bool), or no part is given.

    Examples
    --------
    >>> storage_key("a", "bc") != storage_key("ab", "c")
    True
    >>> storage_key("report.md")
    '129b6fe98ffd7e91aca747fc649b8255'
    """
    if not parts:
        raise TypeError("storage_key needs at least one part")
    h = hashlib.sha256()
    for i, p in enumerate(parts):
        if isinstance(p, bool) or not isinstance(p, (str, numbers.Integral)):
            raise TypeError(
                f"storage_key part {i} must be a str or an int, not {type(p).__name__}"
            )
        data = str(p).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:_KEY_HEX]


def ledger_key(artifact_id: Any) -> str:
    """The key an artifact's ledger entry is filed under: the one place the
    build (which writes entries) and the readers (sibling lookup,
    expansion) turn an artifact id into that key, so they never drift.

    Artifact ids are strings; an ``int`` id (from a table's integer id
    column) is filed under its decimal text.

    Raises
    ------
    TypeError
        ``artifact_id`` is neither a str nor an int.
    ValueError
        ``artifact_id`` is empty or holds a NUL character.

    Examples
    --------
    >>> ledger_key("docs/a.md"), ledger_key(42)
    ('docs/a.md', '42')
    """
    if isinstance(artifact_id, bool) or not isinstance(artifact_id, (str, numbers.Integral)):
        raise TypeError(f"artifact id must be a str (or an int), not {type(artifact_id).__name__}")
    key = str(artifact_id)
    if not key:
        raise ValueError("artifact id must not be empty")
    if "\x00" in key:
        raise ValueError(f"artifact id {key!r} holds a NUL character")
    return key


# ------------------------------------------------------------------ types


@dataclass(frozen=True)
class Artifact:
    """A logical corpus item before decomposition into surfaces.

    Parameters
    ----------
    id : str
        The artifact id, unique within its corpus (see :func:`ledger_key`).
    raw : Any
        The payload a strategy decomposes (a str, a mapping, ...); opaque
        to the corpus.
    metadata : mapping
        Free metadata carried alongside.

    Examples
    --------
    >>> Artifact("a.md", "Some text").metadata
    {}
    """

    id: str
    raw: Any
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Surface:
    """One embeddable unit of text derived from an artifact.

    Parameters
    ----------
    artifact_id : str
        The artifact it comes from.
    kind : str
        The surface type (``"document"``, ``"chunk"``, ``"title"``,
        ``"body"``, ...): searches may restrict to kinds and weigh them.
    text : str
        What is embedded and indexed.
    granularity : {"document", "chunk", "field"}
        A coarse hint of what the text is.
    metadata : mapping
        Surface-local metadata (``chunk_index``, ``n_chunks``, character
        offsets ``start``/``end``); it rides on hits but is not filterable.

    Raises
    ------
    TypeError, ValueError
        A non-str kind or text, an empty kind, an unknown granularity.

    Examples
    --------
    >>> Surface("a.md", "chunk", "first part", "chunk", {"chunk_index": 0}).granularity
    'chunk'
    """

    artifact_id: str
    kind: str
    text: str
    granularity: str = "document"
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_str("Surface.kind", self.kind)
        _check_str("Surface.text", self.text)
        if not self.kind:
            raise ValueError("Surface.kind must not be empty")
        if self.granularity not in GRANULARITIES:
            raise ValueError(
                f"Surface.granularity={self.granularity!r}: expected one of "
                f"{', '.join(GRANULARITIES)}"
            )


@dataclass(frozen=True)
class IndexPlan:
    """An indexing strategy's output for one artifact.

    Parameters
    ----------
    filter_fields : mapping
        Hard-filterable metadata (``{"year": 1962, "venue": "JAS"}``):
        stored in a typed table that search filters run against, carried on
        every hit's ``metadata``, never embedded. Values are numbers,
        strings, dates (``datetime.date``/``datetime``) or ``None``.
    surfaces : list of Surface
        The embeddable units, in plan order. Empty surfaces (no text after
        stripping) are dropped by the build and take no ``surface_index``.

    Examples
    --------
    >>> plan = IndexPlan({"year": 1962}, [Surface("d1", "title", "Flow over wings", "field")])
    >>> [s.kind for s in plan.surfaces], dict(plan.filter_fields)
    (['title'], {'year': 1962})
    """

    filter_fields: Mapping[str, Any] = field(default_factory=dict)
    surfaces: Sequence[Surface] = field(default_factory=list)


@dataclass(frozen=True)
class Record:
    """A stored, indexed surface: one row of the corpus.

    Parameters
    ----------
    id : str
        The record's string id, :meth:`make_id` of its artifact, kind and
        plan-global surface index.
    artifact_id : str
    surface_kind : str
    surface_index : int
        Plan-global position (see the module notes).
    text : str
    vector : numpy.ndarray or None
        The embedding (unit length), or ``None`` when it was not loaded
        (sibling lookups do not load vectors unless asked).
    metadata : mapping
        The artifact's filter fields and the surface's metadata.
    record_id : int or None
        The corpus's int64 id for the engines (see the module notes).
    granularity : str
        The surface's granularity.

    Examples
    --------
    >>> r = Record(Record.make_id("d1", "title", 0), "d1", "title", 0, "Flow", None)
    >>> r.id == Record.make_id("d1", "title", 0), len(r.id)
    (True, 32)
    """

    id: str
    artifact_id: str
    surface_kind: str
    surface_index: int
    text: str
    vector: Any
    metadata: Mapping[str, Any] = field(default_factory=dict)
    record_id: int | None = None
    granularity: str = "document"

    @staticmethod
    def make_id(artifact_id: str, surface_kind: str, surface_index: int) -> str:
        """Deterministic string id of a surface of an artifact.

        ``surface_index`` is the plan-global position (see the module
        notes); never derive a sibling's id from a per-kind counter such as
        ``metadata["chunk_index"]`` -- ask the ledger instead.

        >>> Record.make_id("d1", "body", 1) == Record.make_id("d1", "body", 1)
        True
        >>> Record.make_id("d1", "body", 1) == Record.make_id("d1", "body", 2)
        False
        """
        if isinstance(surface_index, bool) or not isinstance(surface_index, numbers.Integral):
            raise TypeError(f"surface_index must be an int, not {type(surface_index).__name__}")
        return storage_key(
            "record",
            ledger_key(artifact_id),
            _check_str("surface_kind", surface_kind),
            int(surface_index),
        )


class _HitSlots:
    """The slots of :class:`SearchHit` that every hit fills when it is
    made: its ``artifact_id`` and ``score``, and the private
    :data:`DEFERRED` of a hit whose other fields are built later. Slots
    rather than ``__dict__`` entries because a search makes ``k`` hits and
    the compiled builders (:mod:`rowvoi.index._hot`) write a slot in place,
    where an attribute store looks the name up in the class and the
    instance's keys: the compiled lexical search of Cranfield at k = 100,
    hits made, 30.8 -> 28.0 us. ``__weakref__`` keeps hits weakly
    referable, as before."""

    __slots__ = ("__weakref__", "_rv_deferred", "artifact_id", "score")


@dataclass(frozen=True)
class SearchHit(_HitSlots):
    """A scored record returned by a search (higher score = better).

    Parameters
    ----------
    artifact_id : str
    surface_kind : str
    score : float
        On the search's scale: cosine (dense), BM25 (lexical), the fused
        score (hybrid), times the surface weight when one applies. Scores
        of different modes, corpora or embedders are not comparable.
    text : str
        The matched surface's text (the snippet).
    metadata : mapping
        The artifact's filter fields and the surface's metadata
        (``chunk_index``, ...).
    source : str or None
        The corpus the hit came from (``None`` for an unnamed corpus). A
        field, not a metadata key: metadata is the strategy's namespace.
    surface_index : int or None
        The plan-global position of the surface (``None`` for a hand-built
        hit).
    record_id : int or None
        The corpus's int64 record id (``None`` for a hand-built hit).
    explain : dict or None
        How the score came about: ``mode``, ``answered_by`` (the indexes
        that returned this record: ``"bm25"``, ``"flat"`` (exact),
        ``"hnsw"``),
        ``dense`` (``{"rank", "cosine"}``) and ``lexical`` (``{"rank",
        "bm25"}``, plus ``"terms"`` -- each query term's contribution --
        when the search was asked to ``explain``), ``fusion`` and
        ``fused`` for hybrid searches, ``evidence`` for hybrid RRF searches
        (the hit's absolute blend score, what floors compare: see
        :mod:`rowvoi.corpus.retrieval.corpus`), ``surface_weight``. Ranks are
        1-based within each index's candidate list; a side that did not
        return the record is ``None``.

    Notes
    -----
    A search's hits build their ``text``, ``metadata`` and ``explain``
    when one of them is first read: most callers read a few of ``k``
    hits, and those fields are most of what a hit costs (a text decoded,
    a JSON parse, three containers for the cyclic garbage collector).
    Reading gives the values of the search's snapshot of the corpus, the
    same objects on every read and from every thread; equality,
    ``repr``, pickling, copies, :func:`dataclasses.asdict` and
    :meth:`to_dict` read them. Until then a hit keeps the record table of
    the generation it came from alive, and reads its ``surface_kind``,
    ``surface_index``, ``record_id`` and ``source`` from it (stored with
    the others). ``artifact_id`` and ``score`` live in slots, not in the
    instance ``__dict__``, and so does a private reference to the
    record table: ``vars(hit)`` lacks those two fields on every hit, and
    the seven above on an unread one. Use :func:`dataclasses.asdict` or
    :meth:`to_dict` to see every field.

    Examples
    --------
    >>> hit = SearchHit("d1", "body", 0.25, "text", {"path": "d1.txt", "year": 1962},
    ...                 source="cran", surface_index=1, record_id=7)
    >>> hit.pointer
    'd1.txt'
    >>> hit.to_dict()["score"], hit.to_dict()["source"]
    (0.25, 'cran')
    """

    artifact_id: str
    surface_kind: str
    score: float
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None
    surface_index: int | None = None
    record_id: int | None = None
    explain: Mapping[str, Any] | None = None

    @property
    def pointer(self) -> str | None:
        """The disclosure pointer of this hit: the first of
        :data:`POINTER_KEYS` present in ``metadata`` with a non-empty
        string value, else ``None``.

        >>> SearchHit("a", "doc", 1.0, "", {"skill_path": "s/SKILL.md", "path": "p"}).pointer
        's/SKILL.md'
        >>> SearchHit("a", "doc", 1.0, "").pointer is None
        True
        """
        for key in POINTER_KEYS:
            value = self.metadata.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: plain Python types only (``score`` a ``float``,
        no numpy scalars), with ``pointer`` added; ``explain`` is included
        when present.

        >>> import json
        >>> import numpy as np
        >>> d = SearchHit("a", "doc", np.float32(0.5), "t", {"n": np.int64(3)}).to_dict()
        >>> json.dumps(d, sort_keys=True)[:60]
        '{"artifact_id": "a", "metadata": {"n": 3}, "pointer": null, '
        """
        out = {
            "artifact_id": self.artifact_id,
            "surface_kind": self.surface_kind,
            "score": float(self.score),
            "text": self.text,
            "metadata": plain(dict(self.metadata)),
            "source": self.source,
            "surface_index": None if self.surface_index is None else int(self.surface_index),
            "record_id": None if self.record_id is None else int(self.record_id),
            "pointer": self.pointer,
        }
        if self.explain is not None:
            out["explain"] = plain(dict(self.explain))
        return out

    def __getstate__(self) -> dict[str, Any]:
        """The fields, every one read (see Notes): what pickling and
        :mod:`copy` take, so a copy never refers to a record table."""
        return {name: getattr(self, name) for name in _HIT_FIELDS}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        """Set the fields of ``state`` (:meth:`__getstate__`'s mapping of
        field names to values), as ``__init__`` sets them: into the slots
        for ``artifact_id`` and ``score``, the instance dict for the
        rest."""
        for name, value in state.items():
            object.__setattr__(self, name, value)


#: the attribute (a slot, :class:`_HitSlots`) holding a hit's deferred
#: fields: an object with a method per field (``text()``, ``metadata()``,
#: ``explain()``) that builds it (:class:`rowvoi.index._hot.Deferred`)
DEFERRED = _hot.DEFERRED
_HIT_FIELDS = tuple(f.name for f in dataclasses.fields(SearchHit))
for _name in _hot.DEFERRED_FIELDS:
    # the descriptors that build a deferred field on its first read (or
    # read a plain one from the Deferred); set after the dataclass is made
    # (its __init__ keeps the defaults, None, which the class attributes
    # still give)
    if hasattr(SearchHit, _name):
        setattr(SearchHit, _name, _hot.DeferredField(_name, getattr(SearchHit, _name)))
    else:
        setattr(SearchHit, _name, _hot.DeferredField(_name))
del _name


# the slots' own setters (member descriptors' __set__), for new_hit
_set_artifact_id = _HitSlots.__dict__["artifact_id"].__set__
_set_score = _HitSlots.__dict__["score"].__set__


def new_hit(
    artifact_id: str,
    surface_kind: str,
    score: float,
    text: str,
    metadata: Mapping[str, Any],
    source: str | None,
    surface_index: int | None,
    record_id: int | None,
    explain: Mapping[str, Any] | None,
) -> SearchHit:
    """A :class:`SearchHit` of these fields, equal to ``SearchHit(...)``
    with them, built without the frozen dataclass's per-field
    ``object.__setattr__`` (about three times faster: a search builds ``k``
    of them per query). For trusted fields: nothing is checked.

    >>> new_hit("a", "doc", 1.0, "t", {}, None, 0, 7, None) == SearchHit(
    ...     "a", "doc", 1.0, "t", {}, surface_index=0, record_id=7)
    True
    """
    hit = object.__new__(SearchHit)
    _set_artifact_id(hit, artifact_id)
    _set_score(hit, score)
    hit.__dict__.update(
        surface_kind=surface_kind,
        text=text,
        metadata=metadata,
        source=source,
        surface_index=surface_index,
        record_id=record_id,
        explain=explain,
    )
    return hit


class SearchHits(list[SearchHit]):
    """The hits of a search or a walk, best first: a ``list`` of
    :class:`SearchHit`, plus why it is empty.

    :func:`rowvoi.corpus.search` and :func:`rowvoi.graph.traverse` return
    one. It is an ordinary list (``hits == []``, slicing, ``json.dumps``
    of ``[h.to_dict() for h in hits]``, pickling); slices and copies are
    plain lists. ``SearchHits(hits)`` makes one without a reason,
    :meth:`empty` an empty one with its reason.

    Attributes
    ----------
    reason : str or None
        ``None`` when the list holds hits; for an empty one, why nothing
        was found, in words for a person: e.g. ``"no record matches the
        filter"``, ``"the corpus has no surfaces of kind 'summary' (its
        kinds: chunk)"``, ``"the query has no searchable terms"``. (A
        corpus with no records raises
        :class:`~rowvoi.corpus.CorpusEmpty` instead.)

    Examples
    --------
    >>> hits = SearchHits.empty("no record matches the filter")
    >>> hits == [], hits.reason
    (True, 'no record matches the filter')
    >>> SearchHits([SearchHit("a", "doc", 1.0, "t")]).reason is None
    True
    """

    # (a class default, not an __init__: a search wraps its hits in list's
    # own constructor, five times cheaper than a Python-level __init__)
    reason: str | None = None

    @classmethod
    def empty(cls, reason: str | None) -> SearchHits:
        """An empty result that says why (``reason``)."""
        out = cls()
        out.reason = reason
        return out


# -------------------------------------------------------------- functions


def best_per_artifact(hits: Iterable[SearchHit]) -> list[SearchHit]:
    """Collapse hits to the highest-scoring surface per artifact.

    Identity is ``(source, artifact_id)``: the same id from two corpora
    stays two artifacts. Returns the survivors by score, descending; ties
    (equal scores) keep input order (the position of each survivor), and
    among surfaces of one artifact with equal scores the first one given
    wins. NaN scores sort last.

    The comparison assumes one score scale, which holds within one search;
    to merge hits of several corpora, fuse by rank instead (``fuse_hits``).

    >>> hits = [SearchHit("a", "t", 1.0, ""), SearchHit("a", "t", 1.0, "second"),
    ...         SearchHit("a", "t", 2.0, "", source="other")]
    >>> [(h.source, h.text) for h in best_per_artifact(hits)]
    [('other', ''), (None, '')]
    """
    best: dict[tuple[str | None, str], tuple[int, SearchHit]] = {}
    for i, h in enumerate(hits):
        key = (h.source, h.artifact_id)
        cur = best.get(key)
        if cur is None or _score_key(h.score) > _score_key(cur[1].score):
            best[key] = (i, h)
    ordered = sorted(best.values(), key=lambda t: (-_score_key(t[1].score), t[0]))
    return [h for _, h in ordered]


def _score_key(score: Any) -> float:
    s = float(score)
    return -math.inf if math.isnan(s) else s


def tag_source(hits: Iterable[SearchHit], source: str | None) -> list[SearchHit]:
    """Stamp ``source`` on every hit that has none; hits that already name
    a source keep it (so one corpus bound under two names still counts as
    one source). ``source=None`` is the untagged pseudo-source: hits pass
    through unchanged.

    >>> hits = tag_source([SearchHit("a", "t", 1.0, ""),
    ...                    SearchHit("b", "t", 0.5, "", source="docs")], "notes")
    >>> [h.source for h in hits]
    ['notes', 'docs']
    """
    if source is not None:
        _check_str("source", source)
    return [
        h if h.source is not None or source is None else dataclasses.replace(h, source=source)
        for h in hits
    ]
