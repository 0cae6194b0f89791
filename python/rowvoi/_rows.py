"""Rows of a table the caller hands in: edges and nodes given as tuples,
dicts or a pandas DataFrame, read into plain tuples.

On the ground floor, so the graph store (:class:`rowvoi.graph.MemoryGraph`)
and the corpus's edge list (:class:`rowvoi.corpus.EdgeList`) read one
format one way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["frame_rows", "edge_rows", "node_rows"]


def frame_rows(obj: Any, columns: Sequence[str]) -> list[dict[str, Any]] | None:
    """Rows of a pandas DataFrame as dicts of the known columns, else None."""
    if not hasattr(obj, "columns") or not hasattr(obj, "to_dict"):
        return None
    present = [c for c in columns if c in obj.columns]
    rows: list[dict[str, Any]] = obj[present].to_dict("records")
    return rows


def edge_rows(edges: Any) -> list[tuple[Any, ...]]:
    """Edges as ``(src, dst, type, text, time)`` tuples (missing parts
    ``None``), from ``(src, dst[, type[, text[, time]]])`` sequences, dicts
    with ``src`` and ``dst``, or a DataFrame with those columns.

    Raises
    ------
    ValueError
        An edge without ``src`` or ``dst``, or of another shape; the message
        names the edge and the shapes accepted.

    >>> edge_rows([("a", "b"), {"src": "b", "dst": "c", "type": "REF"}])
    [('a', 'b', None, None, None), ('b', 'c', 'REF', None, None)]
    """
    rows = frame_rows(edges, ("src", "dst", "type", "text", "time"))
    if rows is not None:
        if rows and ("src" not in rows[0] or "dst" not in rows[0]):
            raise ValueError(
                "an edge DataFrame needs 'src' and 'dst' columns "
                "(optional: 'type', 'text', 'time')"
            )
        return [(r["src"], r["dst"], r.get("type"), r.get("text"), r.get("time")) for r in rows]
    out = []
    for i, e in enumerate(edges):
        if isinstance(e, Mapping):
            if "src" not in e or "dst" not in e:
                raise ValueError(f"edges[{i}] = {e!r}: an edge dict needs 'src' and 'dst'")
            out.append((e["src"], e["dst"], e.get("type"), e.get("text"), e.get("time")))
            continue
        if isinstance(e, (str, bytes)) or not isinstance(e, Sequence) or not 2 <= len(e) <= 5:
            raise ValueError(
                f"edges[{i}] = {e!r}: an edge is (src, dst[, type[, text[, "
                "time]]]) or a dict with 'src' and 'dst'"
            )
        e = tuple(e) + (None,) * (5 - len(e))
        out.append(e)
    return out


def node_rows(nodes: Any) -> list[tuple[Any, ...]]:
    """Nodes as ``(id, text, time)`` tuples, from bare ids, dicts with
    ``id``, or a DataFrame with an ``id`` column.

    Raises
    ------
    ValueError
        A dict or DataFrame without ``id``.

    >>> node_rows(["a", {"id": "b", "text": "bee"}])
    [('a', None, None), ('b', 'bee', None)]
    """
    rows = frame_rows(nodes, ("id", "text", "time"))
    if rows is not None:
        if rows and "id" not in rows[0]:
            raise ValueError("a node DataFrame needs an 'id' column (optional: 'text', 'time')")
        return [(r["id"], r.get("text"), r.get("time")) for r in rows]
    out = []
    for i, v in enumerate(nodes):
        if isinstance(v, Mapping):
            if "id" not in v:
                raise ValueError(f"nodes[{i}] = {v!r}: a node dict needs 'id'")
            out.append((v["id"], v.get("text"), v.get("time")))
        else:
            out.append((v, None, None))
    return out
