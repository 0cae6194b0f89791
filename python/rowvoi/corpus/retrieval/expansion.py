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

Overlap removal: two consecutive surfaces of one kind share text when the
chunker overlapped them. When both carry their character offsets in the
artifact's text (``metadata["start"]``, ``metadata["end"]``, as
:class:`~rowvoi.corpus.indexing.strategy.Chunked` stamps them) the shared span is
known exactly, and so is a cut with nothing between the chunks; otherwise
the longest suffix of the text so far that is also a prefix of the next
surface, if it is at least :data:`MIN_OVERLAP` characters long (a shorter
match is more likely a coincidence than an overlap), is kept once.
Consecutive chunks of one kind that do not touch are joined by a space (the
whitespace between them was stripped); other surfaces by a blank line.

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

__all__ = [
    "Passage",
    "NeighborhoodPolicy",
    "SeedNotFound",
    "expand",
    "sentence_window_policy",
    "parent_policy",
    "stitch",
    "DFLT_WINDOW",
    "MIN_OVERLAP",
]

#: Neighbours on each side taken by the default window policy.
DFLT_WINDOW = 1
#: Shortest suffix/prefix match taken for chunker overlap without offsets.
MIN_OVERLAP = 12

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


# --------------------------------------------------------------- stitching
def _border(pattern: str) -> list[int]:
    """KMP failure function: ``f[i]`` is the length of the longest proper
    border of ``pattern[:i + 1]``."""
    f = [0] * len(pattern)
    j = 0
    for i in range(1, len(pattern)):
        while j and pattern[i] != pattern[j]:
            j = f[j - 1]
        if pattern[i] == pattern[j]:
            j += 1
        f[i] = j
    return f


def _suffix_prefix(left: str, right: str) -> int:
    """Length of the longest suffix of ``left`` that is a prefix of
    ``right`` (Knuth-Morris-Pratt over the tail of ``left``: linear time)."""
    n = min(len(left), len(right))
    if n == 0:
        return 0
    pattern = right[:n]
    f = _border(pattern)
    j = 0
    # the tail holds n characters, so j reaches n only at its last one
    for ch in left[len(left) - n :]:
        while j and ch != pattern[j]:
            j = f[j - 1]
        if ch == pattern[j]:
            j += 1
    return j


def _offset(record: Record, key: str) -> int | None:
    v = record.metadata.get(key)
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        return None
    return int(v)


def _join(prev: Record, out: str, nxt: Record) -> str:
    """``out`` (ending with ``prev``) continued by ``nxt``, a same-kind
    neighbour: at their shared text, or with a space when none."""
    text = nxt.text
    if not out or not text:
        return out + text
    p_end, n_start = _offset(prev, "end"), _offset(nxt, "start")
    if p_end is not None and n_start is not None:
        if n_start == p_end:  # a cut with nothing stripped between
            return out + text
        shared = p_end - n_start
        if 0 < shared <= len(text) and out.endswith(text[:shared]):
            return out + text[shared:]
        if shared < 0:  # whitespace between the chunks was stripped
            return out + " " + text
    found = _suffix_prefix(out, text)
    return out + text[found:] if found >= MIN_OVERLAP else out + " " + text


def stitch(records: Sequence[Record]) -> str:
    """Join records into one text, in the order given, keeping text that
    consecutive surfaces of one kind share only once.

    Parameters
    ----------
    records : Sequence[Record]
        Usually one artifact's records in plan order.

    Returns
    -------
    str
        Same-kind neighbours (consecutive ``surface_index``) are joined at
        their overlap, or by a space when they do not overlap; any other
        pair by a blank line.

    Examples
    --------
    >>> from rowvoi.corpus.base import Record
    >>> a = Record("r0", "d", "chunk", 0, "The wing stalls at high angle of attack", None)
    >>> b = Record("r1", "d", "chunk", 1, "at high angle of attack and the flow separates", None)
    >>> stitch([a, b])
    'The wing stalls at high angle of attack and the flow separates'
    >>> t = Record("r2", "d", "title", 0, "Stall", None)
    >>> stitch([t, a])
    'Stall\\n\\nThe wing stalls at high angle of attack'
    """
    out = ""
    prev: Record | None = None
    for r in records:
        text = r.text
        if prev is None:
            out = text
        elif r.surface_kind == prev.surface_kind and r.surface_index == prev.surface_index + 1:
            out = _join(prev, out, r)
        else:
            out = out + "\n\n" + text if out and text else out + text
        prev = r
    return out


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
