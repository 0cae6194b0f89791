#!/usr/bin/env python3
"""Raphtory side of the ``graph`` suite's ``--part peer`` and ``--part windows``
(run by path in a separate virtual environment holding ``raphtory==0.15.1``;
see bench/suites/graph.py).

Reads the graph that the suite wrote (``--data``: an ``.npz`` with
edge endpoints, node and edge texts, the document vectors and optionally
node and edge times, else all at time 1), builds a
Raphtory graph with one document per node and per edge, vectorises it with
an embedding function that returns *our* vector for each text (so both
sides score the same vectors), then answers JSON commands, one per line on
stdin, with one JSON line on stdout:

  {"op": "expand", "seeds": [...], "hops": 2, "window": [start, end] or null}
  {"op": "docs", "seeds": [...], "q": [...], "limit": L, "window": ...}
  {"op": "entities", "seeds": [...], "q": [...], "limit": L, "kind": "entities"}
  {"op": "search", "q": [...], "k": K}
  {"op": "quit"}

Each answer is {"docs": [[kind, a, b, score], ...], "seconds": t}, where
kind is "n" (a = node name) or "e" (a, b = source, target names) and t
covers the selection calls only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import raphtory
from raphtory import Graph


def load(path: str):
    data = np.load(path, allow_pickle=False)
    src, dst = data["src"], data["dst"]
    node_text = [str(t) for t in data["node_text"]]
    edge_text = [str(t) for t in data["edge_text"]]
    vectors = data["vectors"]
    # optional times (default: everything at time 1)
    node_time = data["node_time"].tolist() if "node_time" in data else [1] * len(node_text)
    edge_time = data["edge_time"].tolist() if "edge_time" in data else [1] * len(edge_text)
    g = Graph()
    for i, (text, t) in enumerate(zip(node_text, node_time)):
        g.add_node(t, f"n{i}", properties={"text": text})
    for s, d, text, t in zip(src.tolist(), dst.tolist(), edge_text, edge_time):
        g.add_edge(t, f"n{s}", f"n{d}", properties={"text": text})
    table = {t: vectors[i] for i, t in enumerate(node_text + edge_text)}

    def embed(texts):
        return [table[t].tolist() for t in texts]

    t0 = time.perf_counter()
    v = g.vectorise(
        embed, nodes="{{ properties.text }}", edges="{{ properties.text }}", graph=False
    )
    return v, time.perf_counter() - t0


def describe(selection) -> list:
    out = []
    for doc, score in selection.get_documents_with_scores():
        ent = doc.entity
        if hasattr(ent, "src"):
            out.append(["e", ent.src.name, ent.dst.name, float(score)])
        else:
            out.append(["n", ent.name, None, float(score)])
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    v, vec_seconds = load(args.data)
    print(
        json.dumps(
            {"ready": True, "raphtory": raphtory.__version__, "vectorise_seconds": vec_seconds}
        ),
        flush=True,
    )
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "quit":
            break
        w = tuple(cmd["window"]) if cmd.get("window") else None
        t0 = time.perf_counter()
        if op == "search":
            sel = v.documents_by_similarity(cmd["q"], cmd["k"])
        else:
            sel = v.empty_selection()
            sel.add_nodes(cmd["seeds"])
            if op == "expand":
                sel.expand(cmd["hops"], window=w)
            elif op == "docs":
                sel.expand_documents_by_similarity(cmd["q"], cmd["limit"], window=w)
            else:
                method = {
                    "entities": sel.expand_entities_by_similarity,
                    "nodes": sel.expand_nodes_by_similarity,
                    "edges": sel.expand_edges_by_similarity,
                }[cmd["kind"]]
                method(cmd["q"], cmd["limit"])
        seconds = time.perf_counter() - t0
        print(json.dumps({"docs": describe(sel), "seconds": seconds}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
