"""Expand: from the matched chunk to a readable passage around it.

The surface a query matched is rarely the unit worth reading: a chunk cuts
through a paragraph, and the whole document is usually too much.
:func:`expand` stitches a hit's *stored siblings* -- the other surfaces of
its artifact, fetched through the ledger -- into a :class:`Passage`, in plan
order, with the text that neighbouring chunks share (the chunker's overlap)
kept once. The hit's identity and score pass through untouched.

Which siblings make up the passage is a *policy*, ``(hit, siblings) ->
records``:

:func:`sentence_window_policy` (default, ``k=1``)
    The seed and ``k`` neighbours on each side, among the surfaces of the
    seed's own kind (a window over body chunks never takes in the title).
:func:`parent_policy`
    Every stored surface of the artifact (small-to-big retrieval without a
    pointer to the original file).
any callable
    Your own rule; it must return some of the siblings it is given.

The records are joined by :func:`~rowvoi.corpus.retrieval.stitching.stitch`
(overlap removal: see :mod:`~rowvoi.corpus.retrieval.stitching`).

Expansion reads the corpus's store and never loads the embedder. Functions
here are pure; they are as thread-safe as the store they read.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rowvoi.corpus.base import Record, SearchHit, plain
from rowvoi.corpus.retrieval.corpus import records_for_artifact
from rowvoi.corpus.retrieval.stitching import stitch

__all__ = [
    "Passage",
    "NeighborhoodPolicy",
    "SeedNotFound",
    "expand",
    "sentence_window_policy",
    "parent_policy",
    "DFLT_WINDOW",
]

#: Neighbours on each side taken by the default window policy.
DFLT_WINDOW = 1

#: ``(hit, siblings) -> records``: which of the artifact's stored records
#: (``siblings``, in plan order) make up the hit's passage.
NeighborhoodPolicy = Callable[[SearchHit, Sequence[Record]], Sequence[Record]]


class SeedNotFound(LookupError):
    """The window policy cannot find the hit's own surface among its
    artifact's stored records: the hit is stale (the artifact was rebuilt
    since the search) or came from another corpus."""


@dataclass(frozen=True)
class Passage:
    """An expanded hit: the seed hit's identity and score with the stitched
    text of its neighbourhood.

    Attributes
    ----------
    artifact_id, surface_kind, score, source, surface_index
        The seed hit's, unchanged.
    text : str
        The stitched neighbourhood (plan order, overlap kept once), or the
        hit's own text when the policy chose nothing.
    record_ids : tuple[str, ...]
        The string ids (:meth:`Record.make_id`) of the records stitched, in
        order; empty when the passage fell back to the hit's text.

    Examples
    --------
    >>> Passage("a", "chunk", 0.5, "some text", ("r1",)).to_dict()["record_ids"]
    ['r1']
    """

    artifact_id: str
    surface_kind: str
    score: float
    text: str
    record_ids: tuple[str, ...] = ()
    source: str | None = None
    surface_index: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form for JSON (``score`` a float, ids a list)."""
        return {
            "artifact_id": self.artifact_id,
            "surface_kind": self.surface_kind,
            "score": float(self.score),
            "text": self.text,
            "record_ids": list(self.record_ids),
            "source": self.source,
            "surface_index": plain(self.surface_index),
        }


# ---------------------------------------------------------------- policies
def sentence_window_policy(k: int = DFLT_WINDOW) -> NeighborhoodPolicy:
    """The seed surface and ``k`` neighbours on each side, of its kind only.

    The window runs over the artifact's surfaces of the seed's kind, in plan
    order; ``k=0`` keeps the seed alone.

    Parameters
    ----------
    k : int
        Neighbours on each side (>= 0).

    Returns
    -------
    NeighborhoodPolicy
        Raises :class:`SeedNotFound` when the seed is not among the
        siblings (a stale hit, or another corpus's), and ``ValueError`` for
        a hit without ``surface_index`` (a hand-built hit: use
        :func:`parent_policy`).

    Examples
    --------
    >>> from rowvoi.corpus.base import Record, SearchHit
    >>> recs = [Record(f"r{i}", "a", "chunk", i, f"part {i}", None) for i in range(5)]
    >>> window = sentence_window_policy(1)
    >>> [r.surface_index for r in window(SearchHit("a", "chunk", 1.0, "", surface_index=4), recs)]
    [3, 4]
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise ValueError(f"the window k must be an integer >= 0, got {k!r}")
    k = int(k)

    def window(hit: SearchHit, siblings: Sequence[Record]) -> list[Record]:
        if hit.surface_index is None:
            raise ValueError(
                f"hit {hit.artifact_id!r} has no surface_index (a hand-built hit), so the "
                "window policy cannot place it; pass policy=parent_policy() instead"
            )
        same = [r for r in siblings if r.surface_kind == hit.surface_kind]
        seed = next((i for i, r in enumerate(same) if r.surface_index == hit.surface_index), None)
        if seed is None or (
            hit.record_id is not None
            and same[seed].record_id is not None
            and int(same[seed].record_id) != int(hit.record_id)
        ):
            raise SeedNotFound(
                f"surface {hit.surface_kind!r} #{hit.surface_index} of artifact "
                f"{hit.artifact_id!r} is not stored as the hit describes: the hit is stale "
                "(search again) or comes from another corpus"
            )
        return same[max(0, seed - k) : seed + k + 1]

    window.__name__ = f"sentence_window_policy_{k}"
    return window


def parent_policy() -> NeighborhoodPolicy:
    """Every stored surface of the hit's artifact, in plan order.

    The passage is the artifact as the corpus indexed it; unlike
    disclosure at ``level="body"`` it needs no file behind a pointer.

    Examples
    --------
    >>> from rowvoi.corpus.base import Record, SearchHit
    >>> recs = [Record("r0", "a", "title", 0, "T", None), Record("r1", "a", "body", 1, "B", None)]
    >>> len(parent_policy()(SearchHit("a", "body", 1.0, "B"), recs))
    2
    """

    def whole(hit: SearchHit, siblings: Sequence[Record]) -> list[Record]:
        return list(siblings)

    whole.__name__ = "parent_policy"
    return whole


# ------------------------------------------------------------------ expand
def expand(hit: SearchHit, corpus: Any, *, policy: NeighborhoodPolicy | None = None) -> Passage:
    """Expand ``hit`` into a :class:`Passage` of its neighbourhood.

    Parameters
    ----------
    hit : SearchHit
        The seed; its identity and score pass through untouched.
    corpus : Corpus, store or str
        The corpus the hit came from (anything
        :func:`rowvoi.corpus.records_for_artifact` accepts: an open corpus,
        its store, or a corpus name).
    policy : NeighborhoodPolicy or None
        Which siblings form the passage; default
        ``sentence_window_policy(DFLT_WINDOW)``. A policy that selects
        nothing gives the hit's own text (``record_ids == ()``).

    Returns
    -------
    Passage

    Raises
    ------
    NoLedgerEntry
        The corpus has no ledger entry for the hit's artifact (a
        ``KeyError``); a plain ``KeyError`` when the ledger lists records
        the store lacks (a stale ledger).
    SeedNotFound
        The window policy cannot find the hit's surface (a stale hit).
    ValueError
        The policy returned a record that is not one of the siblings, or a
        hand-built hit without ``surface_index`` met the window policy.
    TypeError
        ``hit`` is not a :class:`SearchHit`.
    """
    if not isinstance(hit, SearchHit):
        raise TypeError(f"expand needs a SearchHit, got {type(hit).__name__}")
    chooser = policy if policy is not None else sentence_window_policy(DFLT_WINDOW)
    if not callable(chooser):
        raise TypeError(
            f"policy must be a callable (hit, siblings) -> records, got {type(chooser).__name__}"
        )
    siblings = list(records_for_artifact(corpus, hit.artifact_id))
    chosen = chooser(hit, siblings)
    if chosen is None or isinstance(chosen, (str, bytes)) or not hasattr(chosen, "__iter__"):
        raise TypeError(
            f"a neighbourhood policy must return a sequence of records, got "
            f"{type(chosen).__name__}"
        )
    index: dict[Any, int] = {r.id: pos for pos, r in enumerate(siblings)}
    picked: set[int] = set()
    for r in chosen:
        pos = index.get(getattr(r, "id", None))
        if pos is None:
            name = getattr(r, "id", r)
            raise ValueError(
                f"the policy returned record {name!r}, which is not a stored "
                f"surface of artifact {hit.artifact_id!r}; a policy may only "
                "choose among the siblings it is given"
            )
        picked.add(pos)
    records = [siblings[p] for p in sorted(picked)]
    ids: tuple[str, ...]
    if not records:
        text, ids = hit.text, ()
    else:
        text, ids = stitch(records), tuple(r.id for r in records)
    return Passage(
        hit.artifact_id, hit.surface_kind, hit.score, text, ids, hit.source, hit.surface_index
    )
