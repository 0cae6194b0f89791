"""Edges between artifacts, found at build time: the corpus's link graph.

An :class:`EdgeExtractor` turns one artifact into its outgoing
:class:`Link` objects; :func:`rowvoi.corpus.build` runs it on the
artifacts it (re-)indexes and writes the links into ``docs.sqlite``'s
``links`` table in the same transaction as the generation, so the graph a
reader sees always belongs to the generation it reads.

Two kinds ship here:

* :class:`FieldEdges` -- metadata fields that name other artifacts
  (``parent``, ``links``, ``deps``, or any you configure), each mapped to
  an edge type; a field may hold one id or a list of ids (or
  ``[source, id]`` pairs, naming an artifact of another corpus).
* :class:`EdgeList` -- explicit edges: ``(src, dst[, type[, text[,
  time]]])`` tuples, dicts, or a DataFrame with ``src``, ``dst`` and
  optional ``type``, ``text`` and ``time`` columns.

Several extractors combine by passing a list (:func:`as_extractor`).

Incremental builds
------------------
A link belongs to its *source* artifact. An unchanged artifact keeps its
links without re-extraction (its raw item is never decomposed); a new or
changed artifact's links are replaced by what the extractor says now; a
pruned artifact's links are deleted with it. The extractor's
:attr:`~EdgeExtractor.extractor_id` is pinned in the corpus: a build under
another id (other fields, another edge list) re-extracts the links of
every artifact -- cheap: no embedding, no index work. ``build(...,
edges=None)`` (the default) re-uses the pinned extractor when it can be
recreated from its spec (:class:`FieldEdges`), and otherwise keeps every
stored link as it is (an :class:`EdgeList`'s links do not depend on the
artifacts' content); ``edges=False`` removes every link.

Dangling links
--------------
A link whose target is not an artifact of the corpus (not yet built, a
typo, another corpus) is *kept* -- it becomes live as soon as its target
is built -- but :class:`~rowvoi.graph.CorpusGraph` leaves it out of the
graph, so traversal never lands on it; it counts them
(:attr:`~rowvoi.graph.CorpusGraph.n_dangling`) and lists them
(:meth:`~rowvoi.graph.CorpusGraph.dangling`). Self-links are dropped at
extraction.

Times
-----
Link times and node times (a metadata field named by
``CorpusGraph(time_field=...)``) are ints in your unit, or ISO-8601
strings / datetimes, stored as milliseconds since the Unix epoch (UTC when
no zone), as in :mod:`rowvoi.graph`.

Examples
--------
>>> ex = FieldEdges({"parent": "PARENT", "deps": "REF"})
>>> [(l.type, l.target) for l in ex.extract("b", {"parent": "a", "deps": ["a", "c", "b", ""]}, {})]
[('PARENT', 'a'), ('REF', 'a'), ('REF', 'c')]
>>> el = EdgeList([("a", "b", "CITES"), ("a", "c", "CITES", "a cites c", "2024-01-02")])
>>> [(l.target, l.text, l.time) for l in el.extract("a", None, {})]
[('b', None, None), ('c', 'a cites c', 1704153600000)]
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rowvoi._rows import edge_rows
from rowvoi._time import to_time

__all__ = [
    "Link",
    "EdgeExtractor",
    "FieldEdges",
    "EdgeList",
    "CombinedEdges",
    "DEFAULT_EDGE_FIELDS",
    "default_edge_extractor",
    "as_extractor",
    "extractor_from_spec",
    "canonical_node_id",
    "EDGE_VOCABULARY",
]

#: The edge types the shipped extractors use (documented, not enforced):
#: ``PARENT`` (child -> parent), ``CHILD`` (parent -> child), ``REF``
#: (a reference or dependency). ``NEXT``/``PREV`` (surface order) are never
#: stored: an artifact's surfaces are its records, in plan order.
EDGE_VOCABULARY = ("PARENT", "CHILD", "REF", "NEXT", "PREV")

#: The fields :func:`default_edge_extractor` reads, and their edge types.
DEFAULT_EDGE_FIELDS = {"parent": "PARENT", "links": "REF", "deps": "REF"}


@dataclass(frozen=True)
class Link:
    """One outgoing edge of an artifact.

    Attributes
    ----------
    type : str
        The edge type (non-empty).
    target : str
        The target artifact id.
    text : str or None
        An edge document (its text), or None.
    time : int or None
        Milliseconds since the epoch for ISO strings and datetimes, else
        the int given; None when the edge has no time.
    target_source : str or None
        The corpus of the target when it is another one (such a link is
        kept, and dangling here).

    Examples
    --------
    >>> Link("REF", "numpy")
    Link(type='REF', target='numpy', text=None, time=None, target_source=None)
    """

    type: str
    target: str
    text: str | None = None
    time: int | None = None
    target_source: str | None = None


def canonical_node_id(target: Any, *, source: str | None) -> tuple[str | None, str]:
    """``(source, artifact_id)`` of a link target: a bare id belongs to
    ``source``; a ``[source, id]`` pair names its own.

    >>> canonical_node_id("dol", source="packages")
    ('packages', 'dol')
    >>> canonical_node_id(["wiki", "Lift"], source="packages")
    ('wiki', 'Lift')
    """
    if isinstance(target, (list, tuple)):
        if len(target) != 2 or not all(isinstance(t, str) for t in target):
            raise ValueError(
                f"link target {target!r}: a pair is [source, artifact_id], both strings"
            )
        return target[0], target[1]
    if not isinstance(target, str):
        raise TypeError(
            f"link target {target!r}: an artifact id (str) or a [source, artifact_id] pair"
        )
    return source, target


@runtime_checkable
class EdgeExtractor(Protocol):
    """What :func:`rowvoi.corpus.build` needs to find an artifact's links.

    ``extractor_id`` is a string that changes whenever the extractor would
    give other links for the same artifact (a corpus pins it: another id
    re-extracts every artifact's links). ``extract(artifact_id, raw,
    fields)`` returns the artifact's outgoing :class:`Link` objects, given
    its raw item and its filter fields (metadata); it must be
    deterministic. ``uses_content`` says whether the links depend on the
    artifact (True for fields, False for an explicit list: a build then
    never reads the artifact to re-extract).
    """

    uses_content: bool

    @property
    def extractor_id(self) -> str: ...

    def extract(self, artifact_id: str, raw: Any, fields: Mapping[str, Any]) -> list[Link]: ...


def _time(value: Any, where: str) -> int | None:
    try:
        return to_time(value, name=where)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


class FieldEdges:
    """Links from metadata fields that name other artifacts.

    Parameters
    ----------
    fields : mapping or sequence of str
        ``{field: edge type}``, or field names (type: the upper-cased field
        name, e.g. ``links`` -> ``LINKS``). Default
        :data:`DEFAULT_EDGE_FIELDS`.
    casefold : bool
        Lower-case every target id (for ids such as package names that
        are case-insensitive); default False.
    time_field : str, optional
        A field whose value (an int, or an ISO-8601 string or date) is the
        time of every link of the artifact (e.g. when it was written).

    Notes
    -----
    A field is read from the artifact's filter fields first, then from
    the raw item when it is a mapping (a record's fields). A value is one
    id or a list whose items are ids or ``[source, id]`` pairs (targets in
    another corpus; kept, and dangling here) -- so ``["a", "b"]`` is two
    ids; blank ids and the artifact itself
    are dropped, repeats kept once. Anything else raises ``ValueError``
    naming the artifact and field. Thread-safe (immutable).

    >>> FieldEdges(["links"]).extract("a", {"links": "b"}, {})
    [Link(type='LINKS', target='b', text=None, time=None, target_source=None)]
    >>> FieldEdges({"deps": "REF"}, casefold=True).extract("x", {}, {"deps": ["NumPy"]})[0].target
    'numpy'
    """

    uses_content = True

    def __init__(
        self,
        fields: Mapping[str, str] | Sequence[str] | None = None,
        *,
        casefold: bool = False,
        time_field: str | None = None,
    ) -> None:
        if fields is None:
            fields = DEFAULT_EDGE_FIELDS
        if isinstance(fields, str):
            raise TypeError(
                "fields must be a list of field names or a {field: edge type} "
                "mapping, not a string"
            )
        if not isinstance(fields, Mapping):
            fields = {f: str(f).upper() for f in fields}
        out: dict[str, str] = {}
        for f, t in fields.items():
            if not isinstance(f, str) or not f or not isinstance(t, str) or not t:
                raise ValueError(
                    f"edge field {f!r} -> {t!r}: field names and edge types are non-empty strings"
                )
            out[f] = t
        if not out:
            raise ValueError("FieldEdges needs at least one field")
        if time_field is not None and (not isinstance(time_field, str) or not time_field):
            raise TypeError("time_field must be a field name (a non-empty str) or None")
        self.fields = out
        self.casefold = bool(casefold)
        self.time_field = time_field

    def __repr__(self) -> str:
        extra = f", time_field={self.time_field!r}" if self.time_field else ""
        return f"FieldEdges({self.fields!r}, casefold={self.casefold}{extra})"

    @property
    def extractor_id(self) -> str:
        """``fields:`` plus the sorted field map (``casefold``,
        ``time_field``)."""
        doc: dict[str, Any] = {"fields": self.fields, "casefold": self.casefold}
        if self.time_field:
            doc["time_field"] = self.time_field
        return "fields:" + json.dumps(doc, sort_keys=True, separators=(",", ":"))

    def spec(self) -> dict[str, Any]:
        """The JSON spec :func:`extractor_from_spec` recreates it from."""
        out = {"kind": "fields", "fields": dict(self.fields), "casefold": self.casefold}
        if self.time_field:
            out["time_field"] = self.time_field
        return out

    def _value(self, name: str, raw: Any, fields: Mapping[str, Any]) -> Any:
        return (
            fields.get(name)
            if name in fields
            else (raw.get(name) if isinstance(raw, Mapping) else None)
        )

    def extract(self, artifact_id: str, raw: Any, fields: Mapping[str, Any]) -> list[Link]:
        """The artifact's links, field by field in the order configured."""
        out: list[Link] = []
        seen: set[tuple[str, str | None, str]] = set()
        when = None
        if self.time_field:
            t = self._value(self.time_field, raw, fields)
            when = (
                None
                if _missing(t)
                else _time(t, f"artifact {artifact_id!r}, field {self.time_field!r}")
            )
        for name, etype in self.fields.items():
            value = self._value(name, raw, fields)
            if _missing(value):
                continue
            if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
                items = [value]
            else:
                items = list(value)
            for item in items:
                if _missing(item):
                    continue
                if isinstance(item, numbers.Integral) and not isinstance(item, bool):
                    item = str(item)
                try:
                    src, target = canonical_node_id(item, source=None)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"artifact {artifact_id!r}, field {name!r}: {exc}") from None
                target = target.strip()
                if self.casefold:
                    target = target.casefold()
                if not target or (
                    src is None
                    and target == (artifact_id.casefold() if self.casefold else artifact_id)
                ):
                    continue
                key = (etype, src, target)
                if key not in seen:
                    seen.add(key)
                    out.append(Link(etype, target, time=when, target_source=src))
        return out


class EdgeList:
    """Explicit edges, grouped by source artifact.

    Parameters
    ----------
    edges : iterable or pandas.DataFrame
        Tuples ``(src, dst[, type[, text[, time]]])``, dicts with ``src``,
        ``dst`` and optional ``type``, ``text``, ``time``, or a DataFrame
        with those columns. Missing type: ``"REF"``. Ids are converted
        with ``str``. Repeats of ``(src, type, dst)`` keep the last row.

    Notes
    -----
    ``extractor_id`` is a digest of the whole list, so a changed list
    re-extracts (only rewrites rows: no embedding). Edges from ids that
    are not artifacts of the corpus are ignored (they have no source to
    belong to). Thread-safe (immutable).

    >>> import pandas as pd
    >>> el = EdgeList(pd.DataFrame({"src": ["a", "a"], "dst": ["b", "c"],
    ...                             "type": ["CITES", None]}))
    >>> [(l.type, l.target) for l in el.extract("a", None, {})], el.extract("z", None, {})
    ([('CITES', 'b'), ('REF', 'c')], [])
    """

    uses_content = False

    def __init__(self, edges: Any) -> None:
        by_src: dict[str, dict[tuple[str, str], Link]] = {}
        for i, (s, d, typ, text, t) in enumerate(edge_rows(edges)):
            where = f"edges[{i}]"
            if _missing(s) or _missing(d):
                raise ValueError(f"{where}: src and dst must not be missing")
            etype = "REF" if _missing(typ) or typ == "" else str(typ)
            if not _missing(text) and not isinstance(text, str):
                raise TypeError(f"{where}: text must be a string, not {type(text).__name__}")
            link = Link(
                etype,
                str(d),
                None if _missing(text) or not text else text,
                None if _missing(t) else _time(t, f"{where} time"),
            )
            if str(s) == link.target:
                continue
            by_src.setdefault(str(s), {})[(etype, link.target)] = link
        self._by_src = {s: list(v.values()) for s, v in by_src.items()}
        h = hashlib.sha256()
        for s in sorted(self._by_src):
            for ln in self._by_src[s]:
                h.update(json.dumps([s, ln.type, ln.target, ln.text, ln.time]).encode())
        self._id = "list:" + h.hexdigest()[:32]

    def __repr__(self) -> str:
        return f"<EdgeList {sum(map(len, self._by_src.values()))} edges>"

    def __len__(self) -> int:
        return sum(map(len, self._by_src.values()))

    @property
    def extractor_id(self) -> str:
        """``list:`` plus a digest of the edges."""
        return self._id

    def spec(self) -> None:
        """None: an edge list is data, not a recipe (see the module notes)."""
        return None

    def extract(self, artifact_id: str, raw: Any, fields: Mapping[str, Any]) -> list[Link]:
        """The listed edges leaving ``artifact_id``, in list order."""
        return list(self._by_src.get(artifact_id, ()))


class CombinedEdges:
    """Several extractors as one: links of each, in order (a repeated
    ``(type, target)`` keeps the first).

    >>> c = CombinedEdges([FieldEdges(["links"]), EdgeList([("a", "c")])])
    >>> [(l.type, l.target) for l in c.extract("a", {"links": ["b"]}, {})]
    [('LINKS', 'b'), ('REF', 'c')]
    """

    def __init__(self, extractors: Sequence[EdgeExtractor | None]) -> None:
        parts = [as_extractor(e) for e in extractors]
        self.parts: list[EdgeExtractor] = [p for p in parts if p is not None]
        self.uses_content = any(getattr(p, "uses_content", True) for p in self.parts)

    @property
    def extractor_id(self) -> str:
        """The parts' ids joined."""
        return "all:" + json.dumps([p.extractor_id for p in self.parts])

    def spec(self) -> dict[str, Any] | None:
        """The parts' specs, or None when one has none."""
        specs = [_spec_of(p) for p in self.parts]
        return None if any(s is None for s in specs) else {"kind": "all", "parts": specs}

    def extract(self, artifact_id: str, raw: Any, fields: Mapping[str, Any]) -> list[Link]:
        """Every part's links, first occurrence kept."""
        out: dict[tuple[str, str | None, str], Link] = {}
        for p in self.parts:
            for ln in p.extract(artifact_id, raw, fields):
                out.setdefault((ln.type, ln.target_source, ln.target), ln)
        return list(out.values())


def default_edge_extractor() -> FieldEdges:
    """``parent`` -> ``PARENT``, ``links`` and ``deps`` -> ``REF``.

    >>> default_edge_extractor().fields
    {'parent': 'PARENT', 'links': 'REF', 'deps': 'REF'}
    """
    return FieldEdges(DEFAULT_EDGE_FIELDS)


def _spec_of(ex: Any) -> dict[str, Any] | None:
    spec = getattr(ex, "spec", None)
    return spec() if callable(spec) else None


def as_extractor(edges: Any) -> EdgeExtractor | None:
    """What ``build(..., edges=...)`` accepts, as one extractor: an
    extractor; a list of extractors (:class:`CombinedEdges`); a DataFrame
    or a list of edge tuples/dicts (:class:`EdgeList`); a spec dict
    (:func:`extractor_from_spec`); ``False`` or ``[]`` for none (None).

    Raises
    ------
    TypeError
        Anything else.

    Examples
    --------
    >>> as_extractor([("a", "b")]).extractor_id[:5], as_extractor(False)
    ('list:', None)
    """
    if edges is False or edges is None:
        return None
    if isinstance(edges, Mapping) and "kind" in edges:
        return extractor_from_spec(edges)
    if hasattr(edges, "extract") and hasattr(edges, "extractor_id"):
        if not isinstance(edges.extractor_id, str) or not edges.extractor_id:
            raise TypeError("an edge extractor's extractor_id must be a non-empty string")
        extractor: EdgeExtractor = edges
        return extractor
    if hasattr(edges, "columns") and hasattr(edges, "to_dict"):
        return EdgeList(edges)
    if isinstance(edges, (list, tuple)):
        if not edges:
            return None
        if all(hasattr(e, "extract") for e in edges):
            return CombinedEdges(edges)
        return EdgeList(edges)
    raise TypeError(
        f"edges must be an EdgeExtractor, a list of them, edge rows or a "
        f"DataFrame, or False; not {type(edges).__name__}"
    )


def extractor_from_spec(spec: Mapping[str, Any] | None) -> EdgeExtractor | None:
    """Recreate a shipped extractor from its spec (None for None).

    Raises
    ------
    ValueError
        An unknown kind or malformed spec.

    Examples
    --------
    >>> extractor_from_spec({"kind": "fields", "fields": {"parent": "PARENT"}})
    FieldEdges({'parent': 'PARENT'}, casefold=False)
    """
    if spec is None:
        return None
    kind = spec.get("kind")
    if kind == "fields":
        return FieldEdges(
            spec.get("fields"),
            casefold=bool(spec.get("casefold", False)),
            time_field=spec.get("time_field"),
        )
    if kind == "all":
        return CombinedEdges([extractor_from_spec(p) for p in spec.get("parts", [])])
    raise ValueError(f"edge extractor spec {dict(spec)!r}: kinds are 'fields' and 'all'")


def links_key(link: Link) -> tuple[str, str, str]:
    """The primary key of a stored link (type, target source, target)."""
    return (link.type, link.target_source or "", link.target)


def check_links(artifact_id: str, links: Any) -> list[Link]:
    """An extractor's output, checked (a list of :class:`Link`)."""
    out = list(links)
    for ln in out:
        if not isinstance(ln, Link):
            raise TypeError(
                f"artifact {artifact_id!r}: an edge extractor returned "
                f"{type(ln).__name__}, not rowvoi.corpus.Link"
            )
        if not isinstance(ln.type, str) or not ln.type or not isinstance(ln.target, str):
            raise ValueError(
                f"artifact {artifact_id!r}: link {ln!r} needs a non-empty type and a str target"
            )
    return out
