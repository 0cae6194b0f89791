"""Surface stores: an artifact's embeddable text units, searched by kind.

A :class:`SurfaceStore` is what a walk over summaries and leaves
(:func:`~rowvoi.graph.walk.collapsed_tree_policy`) reads: each artifact's
:class:`Surface` list, a search restricted to some surface kinds, and the
query's vector. :class:`MemorySurfaces` is one in memory;
:class:`~rowvoi.graph.CorpusGraph` serves a built corpus's surfaces the same
way.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rowvoi.corpus.base import SearchHit, SearchHits

__all__ = ["Surface", "SurfaceStore", "MemorySurfaces", "no_kinds"]


@dataclass(frozen=True)
class Surface:
    """One embeddable text unit of an artifact: ``kind`` (e.g. "summary",
    "chunk"), ``text``, its position ``index`` among the artifact's
    surfaces, and its ``vector`` (float32, or None)."""

    artifact_id: Hashable
    kind: str
    text: str
    index: int
    vector: Any = None


@runtime_checkable
class SurfaceStore(Protocol):
    """What :func:`collapsed_tree_policy` needs: ``search(query, k, kinds)``
    returns the best ``k`` surfaces of those kinds as hits (objects with
    ``artifact_id``, ``surface_kind``, ``score``, ``text``,
    ``surface_index``), ``surfaces(artifact_id)`` an artifact's
    :class:`Surface` list in order, and ``embed_query(query)`` the query's
    vector (cosine against surface vectors)."""

    def search(self, query: Any, k: int, kinds: Sequence[str]) -> list[Any]: ...

    def surfaces(self, artifact_id: Hashable) -> list[Surface]: ...

    def embed_query(self, query: Any) -> np.ndarray: ...


def no_kinds(kinds: Iterable[str], have: Iterable[str]) -> str:
    """Why a search restricted to ``kinds`` finds nothing in a store whose
    surfaces are of the kinds ``have``."""
    kinds = list(kinds)
    s = "s" if len(kinds) != 1 else ""
    return (
        f"the corpus has no surfaces of kind{s} {', '.join(map(repr, kinds))} "
        f"(its kinds: {', '.join(sorted(have)) or 'none'})"
    )


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


class MemorySurfaces:
    """An in-memory :class:`SurfaceStore`: artifacts with ``(kind, text)``
    surfaces, embedded once with ``embedder``; search is exact cosine
    (ties: earlier surface first).

    Parameters
    ----------
    artifacts : mapping
        ``artifact_id -> [(kind, text), ...]`` in plan order.
    embedder : object with ``embed(texts)``

    Thread-safety: immutable once built.

    Examples
    --------
    >>> from rowvoi.index.embed import HashingEmbedder
    >>> store = MemorySurfaces({"a": [("summary", "lift and drag"), ("chunk", "wing")],
    ...                         "b": [("summary", "heat in a pipe")]}, HashingEmbedder(64))
    >>> [s.kind for s in store.surfaces("a")], store.surfaces("z")
    (['summary', 'chunk'], [])
    >>> store.search("wing", 2, ["table"]).reason
    "the corpus has no surfaces of kind 'table' (its kinds: chunk, summary)"
    """

    def __init__(
        self, artifacts: Mapping[Hashable, Sequence[tuple[str, str]]], embedder: Any
    ) -> None:
        self.embedder = embedder
        self._surfaces: dict[Hashable, list[Surface]] = {}
        flat: list[Surface] = []
        texts: list[str] = []
        for aid, items in artifacts.items():
            for i, (kind, text) in enumerate(items):
                texts.append(text)
                flat.append(Surface(aid, str(kind), text, i))
        vecs = (
            np.asarray(embedder.embed(texts), dtype=np.float32)
            if texts
            else np.zeros((0, 1), np.float32)
        )
        self._flat = []
        for s, v in zip(flat, vecs):
            s = Surface(s.artifact_id, s.kind, s.text, s.index, _unit(v))
            self._flat.append(s)
            self._surfaces.setdefault(s.artifact_id, []).append(s)
        self._matrix = np.stack([s.vector for s in self._flat]) if self._flat else vecs

    def embed_query(self, query: Any) -> np.ndarray:
        """The query as a unit vector (text through the embedder)."""
        if isinstance(query, str):
            return _unit(np.asarray(self.embedder.embed([query]), dtype=np.float32)[0])
        return _unit(np.asarray(query, dtype=np.float32))

    def surfaces(self, artifact_id: Hashable) -> list[Surface]:
        """An artifact's surfaces in order (``[]`` when unknown)."""
        return list(self._surfaces.get(artifact_id, []))

    def search(self, query: Any, k: int, kinds: Sequence[str]) -> list[SearchHit]:
        """The best ``k`` surfaces of the given kinds by cosine (a
        :class:`~rowvoi.corpus.SearchHits` saying why when there are
        none)."""
        q = self.embed_query(query)
        keep = [i for i, s in enumerate(self._flat) if s.kind in set(kinds)]
        if not keep:
            return SearchHits.empty(no_kinds(kinds, {s.kind for s in self._flat}))
        scores = self._matrix[keep] @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            SearchHit(
                self._flat[keep[i]].artifact_id,
                self._flat[keep[i]].kind,
                float(scores[i]),
                self._flat[keep[i]].text,
                surface_index=self._flat[keep[i]].index,
            )
            for i in order
        ]
