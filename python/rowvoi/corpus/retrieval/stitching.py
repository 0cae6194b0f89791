"""Stitch: one artifact's records joined into one readable text.

Two consecutive surfaces of one kind share text when the chunker
overlapped them; :func:`stitch` keeps that text once. When both carry
their character offsets in the artifact's text (``metadata["start"]``,
``metadata["end"]``, as :class:`~rowvoi.corpus.indexing.strategy.Chunked`
stamps them) the shared span is known exactly, and so is a cut with
nothing between the chunks; otherwise the longest suffix of the text so far
that is also a prefix of the next surface, if it is at least
:data:`MIN_OVERLAP` characters long (a shorter match is more likely a
coincidence than an overlap), is kept once. Consecutive chunks of one kind
that do not touch are joined by a space (the whitespace between them was
stripped); other surfaces by a blank line.

Used by :func:`~rowvoi.corpus.retrieval.expansion.expand` (a hit's
passage) and by :func:`~rowvoi.corpus.retrieval.rerank.passage_texts` (the
whole artifact a reranker reads). It imports nothing of the retrieval
tower, so both can. Pure functions: thread-safe.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from rowvoi.corpus.base import Record

__all__ = ["stitch", "MIN_OVERLAP"]

#: Shortest suffix/prefix match taken for chunker overlap without offsets.
MIN_OVERLAP = 12


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
