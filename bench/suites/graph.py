#!/usr/bin/env python3
"""Benchmark rowvoi.graph: the CSR engine at a million nodes, and vector
selections side by side with Raphtory 0.15.1.

Parts (``--part``):

``big``
    A synthetic graph of ``--nodes`` nodes (default 1,000,000) and
    ``--edges`` edges (default 5,000,000; endpoints uniform at random,
    seed 0; four edge types; edge times).  Every node has a document and
    every ``--edge-doc-every``-th edge (default 5th) has one, each embedded
    with the hashing embedder (384-d): 1M node documents and 1M edge
    documents, 3 GB of float32 vectors (a document on each of the 5M edges
    would need 7.7 GB, too much for this shared machine).  After loading,
    over ``--rounds`` rounds with fresh random seeds: the engine's CSR
    build (``rv_graph_create`` on the arrays, read in place as
    ``MemoryGraph`` builds: ids 0 .. n-1, ends, types, times and document
    entities borrowed; with the vectors, borrowed and checked finite once
    when loaded, as ``MemoryGraph`` does -- that check is timed apart),
    ``expand(2)``
    from 10 seed nodes, ``expand_documents_by_similarity`` from 10 seed
    nodes to 1,000 documents, and a 3-hop ``graph_to_text`` with 25 edges
    from one node.  Goal: each under 50 ms.
``peer``
    A graph Raphtory can hold (``--peer-nodes`` 100,000 nodes, 500,000
    distinct edges without self-loops, one document per node and per edge,
    the same hashing vectors on both sides: Raphtory's embedding function
    looks our vectors up by text).  Raphtory runs in its own interpreter
    (``--raphtory-python``, a venv with ``raphtory==0.15.1``) behind a
    JSON-lines pipe (bench/peers/graph_raphtory.py); the two sides run
    each operation in turn, round by round, with the same seeds and
    queries.  Reported: medians and spread of the selection calls, ratios,
    and whether the selections agree (document by document, and scores to
    1e-5).  Raphtory 0.15.1 counts ``limit`` of
    ``expand_documents_by_similarity`` as *new* documents, where its
    docstring and seed 002 say the selection's *total*; rowvoi follows the
    docstring, so the comparison calls rowvoi with ``limit = len(selection)
    + L`` against Raphtory's ``L`` and reports the difference of one
    identical call as well.
``corpus``
    The graph inside a corpus (:class:`rowvoi.graph.CorpusGraph`): a corpus
    of ``--corpus-artifacts`` artifacts (default 100,000; hashing embedder,
    384-d; a ``summary`` and a ``body`` surface each) built with
    ``FieldEdges``: each artifact names a ``parent`` (a tree of fan-out 10)
    and three random ``links`` (one in ten dangling).  Reported: the build
    (with the links, once), an incremental build changing 1,000 artifacts
    (their links re-extracted), the CSR build from the committed links
    (one SQLite snapshot read + C build; what the first graph query of a
    generation pays), attaching the documents and vectors (the corpus's
    own, no embedding), neighbour and fan-in queries, a 2-hop BFS, and
    ``traverse`` with both shipped policies; medians over ``--rounds``.
``pages``
    What a build on fresh pages costs, by how long the memory it takes
    back has been free: the graph of ``big`` without documents or vectors,
    built ``--rounds`` times right after ``release_build_memory()`` and
    ``--rounds`` times after it plus ``--pause`` seconds idle (alternated),
    wall and system CPU time of each build.  On a virtual machine whose
    guest hands free memory back to its host (virtio-balloon free page
    reporting), pages free for a while come back through the host, and
    faulting them in costs more.
``windows``
    Windows, on a small graph with node and edge times (``--window-nodes``
    200 nodes, 600 edges, times 0-9): ``expand(2)`` and
    ``expand_documents_by_similarity`` under windows, rowvoi against
    Raphtory, twice: with the node times given to rowvoi, and with nodes
    left untimed.  Raphtory counts a node as inside a window when it has
    any activity there (its own or an edge's); rowvoi uses the node's own
    time (an untimed node is in every window).  The part reports how many
    selections agree in each case.

How to run (from the repository root, rowvoi installed in this
interpreter; the Raphtory venv made with ``python3 -m venv
bench/.raphtoryvenv && bench/.raphtoryvenv/bin/pip install
raphtory==0.15.1``, the default ``--raphtory-python``)::

    python -m bench run graph --part big
    python -m bench run graph --part peer
    python -m bench run graph --part windows
    python -m bench run graph --part corpus --rounds 5
    python -m bench run graph --part pages --rounds 8

Each part rewrites its own block of ``bench/results/graph.md``.  The machine
is a 2-core box shared with other jobs: medians over interleaved rounds,
with min and max.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rowvoi.graph import (
    MemoryGraph,
    documents_by_similarity,
    empty_selection,
    graph_to_text,
)
from rowvoi.index import _graph
from rowvoi.index.embed import HashingEmbedder

from .._common.results import ROOT, Run, update_blocks, versions
from .._common.timing import med

RAPHTORY_PEER = ROOT / "bench" / "peers" / "graph_raphtory.py"
RAPHTORY_PYTHON = ROOT / "bench" / ".raphtoryvenv" / "bin" / "python"
#: The results file's blocks, in the order a new file shows them.
PARTS = ("big", "peer", "windows", "corpus", "pages")
HEAD = (
    "# Graph benchmarks\n\nProduced by `python -m bench run graph --part PART` "
    "(bench/suites/graph.py); see its docstring for what each figure measures. Each part "
    "rewrites its own block, which names the run that made it.\n"
)
TYPES = ["CITES", "LINKS", "PART_OF", "MENTIONS"]


def node_text(i: int) -> str:
    return f"node {i} about topic {i % 1009} in area {i % 97} with tag {i % 13}"


def edge_text(e: int, t: int, s: int, d: int) -> str:
    return f"edge {e} {TYPES[t].lower()} from node {s} to node {d} topic {(s + d) % 1009}"


def ms(x: float) -> str:
    return f"{x * 1000:.2f}"


def timed_csr_build(
    nodes: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    etype: np.ndarray | None,
    etime: np.ndarray | None,
    doc_entity: np.ndarray,
) -> tuple[float, float]:
    """Wall and system CPU seconds of one CSR build without vectors, the
    arrays read in place as ``MemoryGraph`` builds (the graph is freed
    after: its arrays are kept for the next build)."""
    s0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    t0 = time.perf_counter()
    h = _graph.GraphHandle.create(
        nodes, None, src, dst, etype, etime, doc_entity, None, None, "ip", False, True, True, False
    )
    t = time.perf_counter() - t0
    sys_s = resource.getrusage(resource.RUSAGE_SELF).ru_stime - s0
    del h
    return t, sys_s


def write_block(args: argparse.Namespace, name: str, text: str) -> None:
    """Replace (or add) the block of one part in the results file."""
    update_blocks(args.run.out, "graph", {name: text}, head=HEAD, order=PARTS)


def table_rows(rows: list, timings: dict, sizes: dict, goal: float | None = None) -> list[str]:
    """Markdown rows ``| label | median | min | max | size [| goal] |``
    for ``(label, key, what)`` rows (times in seconds, printed in ms)."""
    out = []
    for label, key, what in rows:
        mid, lo, hi = med(timings[key])
        size = f"{int(med(sizes[key])[0])} {what}" if what else "-"
        met = "" if goal is None else f" {'met' if mid < goal else 'missed'} |"
        out.append(f"| {label} | {ms(mid)} | {ms(lo)} | {ms(hi)} | {size} |{met}")
    return out


def environment(args: argparse.Namespace, raphtory: str | None = None) -> str:
    """The provenance of a part's block (the run is ``args.run``)."""
    run: Run = args.run
    return (
        run.provenance(versions("numpy", peers={"raphtory": raphtory}))
        + f" Load average {os.getloadavg()[0]:.2f} at the end.\n"
    )


# ------------------------------------------------------------------ big


def in_source_order(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    etype: np.ndarray,
    etime: np.ndarray,
    doc_entity: np.ndarray,
    with_doc: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """The same edges in order of source (stable: ties keep input order), as
    a table read by id gives them, with their documents following the
    edges: ``(src, dst, etype, etime, doc_entity)``.  ``doc_entity`` holds
    the ``n`` node documents, then one per edge of ``with_doc`` (entity
    ``n + edge``)."""
    m = len(src)
    by_src = np.argsort(src, kind="stable")
    inv = np.empty(m, dtype=np.int64)
    inv[by_src] = np.arange(m, dtype=np.int64)
    s_doc = doc_entity.copy()
    s_doc[n:] = n + inv[with_doc]
    s_doc.sort()
    return (src[by_src], dst[by_src], etype[by_src], etime[by_src], s_doc)


def part_big(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    n, m = args.nodes, args.edges
    t0 = time.perf_counter()
    src = rng.integers(0, n, m, dtype=np.int64)
    dst = rng.integers(0, n, m, dtype=np.int64)
    etype = rng.integers(0, len(TYPES), m).astype(np.uint16)
    etime = rng.integers(0, 1_000_000, m, dtype=np.int64)
    with_doc = np.arange(0, m, args.edge_doc_every)
    texts = [node_text(i) for i in range(n)]
    texts += [edge_text(int(e), int(etype[e]), int(src[e]), int(dst[e])) for e in with_doc]
    doc_entity = np.concatenate([np.arange(n, dtype=np.int64), n + with_doc])
    gen_s = time.perf_counter() - t0
    emb = HashingEmbedder(dim=384)
    t0 = time.perf_counter()
    vectors = emb.embed(texts)
    embed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    g = MemoryGraph.from_arrays(
        src,
        dst,
        n_nodes=n,
        edge_type=etype,
        type_names=TYPES,
        edge_time=etime,
        doc_entity=doc_entity,
        doc_text=texts,
        vectors=vectors,
        embedder=emb,
        metric="ip",
    )
    load_s = time.perf_counter() - t0
    print(
        f"generated in {gen_s:.1f} s, embedded {len(texts)} texts in {embed_s:.1f} s, "
        f"loaded in {load_s:.1f} s",
        file=sys.stderr,
    )
    # inner product on the embedder's unit rows is the cosine, without norms
    query = emb.embed(["topic 17 in area 5 cites"])[0]
    timings: dict[str, list[float]] = {
        "csr_cold": [],
        "csr": [],
        "csr_sorted": [],
        "full": [],
        "finite": [],
        "expand2": [],
        "docs1000": [],
        "text": [],
    }
    sizes: dict[str, list[int]] = {"expand2": [], "docs1000": [], "text": []}
    nodes_arg = np.arange(n, dtype=np.int64)
    sorted_args = in_source_order(n, src, dst, etype, etime, doc_entity, with_doc)

    cold_sys: list[float] = []  # system CPU seconds of each fresh-page build

    def build_csr(a: tuple[np.ndarray, ...]) -> tuple[float, float]:
        return timed_csr_build(nodes_arg, *a)

    plain_args = (src, dst, etype, etime, doc_entity)
    for _r in range(args.rounds):
        seeds = [int(x) for x in rng.integers(0, n, 10)]
        _graph.trim()  # no arrays kept from earlier builds: fresh pages
        wall, sys_s = build_csr(plain_args)
        timings["csr_cold"].append(wall)
        cold_sys.append(sys_s)
        timings["csr"].append(build_csr(plain_args)[0])
        timings["csr_sorted"].append(build_csr(sorted_args)[0])
        t0 = time.perf_counter()
        h = _graph.GraphHandle.create(
            nodes_arg,
            None,
            src,
            dst,
            etype,
            etime,
            doc_entity,
            g._vectors,
            None,
            "ip",
            False,
            True,
            True,
            True,  # checked once when loaded (MemoryGraph): not per build
        )
        timings["full"].append(time.perf_counter() - t0)
        del h
        t0 = time.perf_counter()
        _graph.check_vectors(g._vectors)
        timings["finite"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sel = empty_selection(g)
        sel.add_nodes(seeds)
        sel.expand(2)
        timings["expand2"].append(time.perf_counter() - t0)
        sizes["expand2"].append(len(sel))
        t0 = time.perf_counter()
        sel = empty_selection(g)
        sel.add_nodes(seeds)
        sel.expand_documents_by_similarity(query, 1000)
        timings["docs1000"].append(time.perf_counter() - t0)
        sizes["docs1000"].append(len(sel))
        t0 = time.perf_counter()
        out = graph_to_text(g, [seeds[0]], depth=3, max_edges=25)
        timings["text"].append(time.perf_counter() - t0)
        sizes["text"].append(len(out.lines))
    rows = [
        (
            (
                "CSR build on fresh pages, as a first build (`rv_graph_create`: both "
                "directions, documents table; kept arrays released before each round)"
            ),
            "csr_cold",
            None,
        ),
        (
            (
                "CSR build (the same, reusing the arrays of the graph freed before, as a "
                "rebuild per generation does)"
            ),
            "csr",
            None,
        ),
        ("CSR build, edges in order of source (as read from a table by id)", "csr_sorted", None),
        (
            "the same plus the vectors (borrowed; checked finite once, when loaded)",
            "full",
            None,
        ),
        ("`expand(2)` from 10 seed nodes", "expand2", "documents selected"),
        (
            "`expand_documents_by_similarity` from 10 seed nodes to 1,000 documents",
            "docs1000",
            "documents selected",
        ),
        ("`graph_to_text(depth=3, max_edges=25)` from one node", "text", "lines"),
    ]
    lines = [
        f"### 1M nodes, 5M edges ({len(texts):,} documents, 384-d)\n",
        environment(args),
        f"Graph: {n:,} nodes, {m:,} edges, {n:,} node documents and {len(with_doc):,} "
        f"edge documents (every {args.edge_doc_every}th edge), hashing embedder, 384-d "
        f"({g._vectors.nbytes / 2**30:.1f} GiB of vectors). Generated in {gen_s:.1f} s, "
        f"embedded in {embed_s:.1f} s, loaded (`MemoryGraph.from_arrays`, Python side "
        f"included) in {load_s:.2f} s, of which the one check that the vectors are finite "
        f"(`check_vectors`, as the load hands them over; median of the rounds "
        f"{ms(med(timings['finite'])[0])} ms) is not repeated by the builds below.\n",
        f"{args.rounds} rounds, fresh random seeds each round.\n",
        "| operation | median ms | min ms | max ms | result size (median) | goal < 50 ms |",
        "|---|---:|---:|---:|---:|---|",
    ]
    lines += table_rows(rows, timings, sizes, goal=0.05)
    lines.append(
        f"\nFresh pages cost more the first time: round 1's fresh-page build "
        f"took {ms(timings['csr_cold'][0])} ms with {ms(cold_sys[0])} ms "
        "of system CPU time (the kernel faulting in and zeroing its arrays' pages, both "
        "threads), against a median of "
        f"{ms(med(cold_sys[1:] or cold_sys)[0])} ms of system time for the later rounds'. "
        "Round 1 takes pages the process has not held before (the graph loaded above "
        "keeps its own arrays); each later round takes back pages released a moment "
        "before by the round before it.\n"
    )
    write_block(args, "big", "\n".join(lines) + "\n")
    print("\n".join(lines))


# ----------------------------------------------------------------- peer


class Peer:
    """The Raphtory process behind a JSON-lines pipe."""

    def __init__(self, python: str, data: str) -> None:
        self.p = subprocess.Popen(
            [python, str(RAPHTORY_PEER), "--data", data],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.hello = json.loads(self.p.stdout.readline())

    def ask(self, **cmd) -> dict:
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self) -> None:
        self.p.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.p.stdin.flush()
        self.p.wait(timeout=60)


def ours_described(g: MemoryGraph, sel) -> list:
    out = []
    for doc, score in sel.get_documents_with_scores():
        ent = doc.entity
        if hasattr(ent, "src"):
            out.append(["e", ent.src, ent.dst, score])
        else:
            out.append(["n", ent.id, None, score])
    return out


def agree(a: list, b: list, ordered: bool) -> tuple[bool, str]:
    ka = [tuple(x[:3]) for x in a]
    kb = [tuple(x[:3]) for x in b]
    if not ordered:
        same = sorted(ka, key=str) == sorted(kb, key=str)
        return same, "same set" if same else f"sets differ ({len(ka)} vs {len(kb)})"
    if ka != kb and len(a) == len(b) and all(abs(x[3] - y[3]) <= 1e-6 for x, y in zip(a, b)):
        return True, (
            "same scores position by position; tied scores in another order "
            "(rowvoi breaks ties by the lower document number)"
        )
    if ka != kb:
        first = next((i for i, (x, y) in enumerate(zip(ka, kb)) if x != y), min(len(ka), len(kb)))
        detail = ""
        if first < min(len(a), len(b)):
            detail = (
                f"; there rowvoi has {a[first][:3]} at {a[first][3]:.7f}, Raphtory "
                f"{b[first][:3]} at {b[first][3]:.7f}"
            )
            ours = {tuple(x[:3]): x[3] for x in a}
            if tuple(b[first][:3]) in ours:
                detail += f" (rowvoi scores it {ours[tuple(b[first][:3])]:.7f})"
        return False, f"differ from position {first} ({len(ka)} vs {len(kb)} documents{detail})"
    worst = max((abs(x[3] - y[3]) for x, y in zip(a, b)), default=0.0)
    return worst <= 1e-5, f"identical, max score difference {worst:.1e}"


def part_peer(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(1)
    n, m = args.peer_nodes, args.peer_edges
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < m:
        s = rng.integers(0, n, m)
        d = rng.integers(0, n, m)
        for a, b in zip(s.tolist(), d.tolist()):
            if a != b and len(pairs) < m:
                pairs.add((a, b))
    edges = sorted(pairs)
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    ntext = [node_text(i) for i in range(n)]
    etext = [edge_text(e, e % 4, int(s), int(d)) for e, (s, d) in enumerate(edges)]
    emb = HashingEmbedder(dim=384)
    vectors = emb.embed(ntext + etext)
    g = MemoryGraph.from_arrays(
        src,
        dst,
        node_ids=[f"n{i}" for i in range(n)],
        doc_entity=np.arange(n + m),
        doc_text=ntext + etext,
        vectors=vectors,
        embedder=emb,
    )
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "graph.npz")
        np.savez(
            data,
            src=src,
            dst=dst,
            node_text=np.array(ntext),
            edge_text=np.array(etext),
            vectors=vectors,
        )
        t0 = time.perf_counter()
        peer = Peer(args.raphtory_python, data)
        print(f"raphtory ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        queries = [emb.embed([f"topic {k * 37 % 1009} area {k % 97} links"])[0] for k in range(8)]
        ops = {
            "expand(2) from 10 nodes": ("expand", False),
            "expand_documents_by_similarity, 200 new documents from 10 nodes": ("docs", True),
            "expand_entities_by_similarity, 50 new entities": ("entities", True),
            "expand_nodes_by_similarity, 50 new nodes": ("nodes", True),
            "expand_edges_by_similarity, 50 new edges": ("edges", True),
            "documents_by_similarity (search), top 100": ("search", True),
        }
        ours_t: dict[str, list[float]] = {k: [] for k in ops}
        peer_t: dict[str, list[float]] = {k: [] for k in ops}
        verdict: dict[str, list[str]] = {k: [] for k in ops}
        ok: dict[str, int] = {k: 0 for k in ops}
        literal: list[str] = []
        for r in range(args.rounds):
            seed_idx = rng.integers(0, n, 10)
            seeds = [f"n{i}" for i in seed_idx.tolist()]
            q = queries[r % len(queries)]
            for label, (op, ordered) in ops.items():
                t0 = time.perf_counter()
                if op == "search":
                    sel = documents_by_similarity(g, q, 100)
                    cmd = {"op": op, "q": q.tolist(), "k": 100}
                else:
                    sel = empty_selection(g)
                    sel.add_nodes(seeds)
                    base = len(sel)
                    if op == "expand":
                        sel.expand(2)
                        cmd = {"op": op, "seeds": seeds, "hops": 2}
                    elif op == "docs":
                        sel.expand_documents_by_similarity(q, base + 200)
                        cmd = {"op": op, "seeds": seeds, "q": q.tolist(), "limit": 200}
                    else:
                        getattr(sel, f"expand_{op}_by_similarity")(q, 50)
                        cmd = {
                            "op": "entities",
                            "kind": op,
                            "seeds": seeds,
                            "q": q.tolist(),
                            "limit": 50,
                        }
                ours_t[label].append(time.perf_counter() - t0)
                answer = peer.ask(**cmd)
                peer_t[label].append(answer["seconds"])
                same, why = agree(ours_described(g, sel), answer["docs"], ordered)
                ok[label] += same
                if not why.startswith(("same set", "identical")):
                    verdict[label].append(why)
            if r == 0:  # the literal call: same limit on both sides
                sel = empty_selection(g)
                sel.add_nodes(seeds)
                sel.expand_documents_by_similarity(q, 200)
                answer = peer.ask(op="docs", seeds=seeds, q=q.tolist(), limit=200)
                literal.append(
                    f"`expand_documents_by_similarity(q, limit=200)` after "
                    f"`add_nodes` of 10 seeds ({base} documents): rowvoi's selection "
                    f"holds {len(sel)} documents (limit = total), Raphtory's "
                    f"{len(answer['docs'])} (limit = new)."
                )
        peer.close()
    lines = [
        f"### Side by side with Raphtory {peer.hello['raphtory']}\n",
        environment(args, peer.hello["raphtory"]),
        f"Graph: {n:,} nodes, {m:,} distinct edges, one document per node and per edge "
        f"({n + m:,} documents), the same 384-d hashing vectors on both sides (Raphtory's "
        f"vectorise took {peer.hello['vectorise_seconds']:.1f} s). {args.rounds} "
        "interleaved rounds, 10 random seed nodes and one query per round; times cover "
        "the selection calls (creating the selection, `add_nodes`, the expansion), not "
        "reading the documents out.\n",
        "| operation | rowvoi median ms (min-max) | Raphtory median ms (min-max) | "
        "Raphtory / rowvoi | selections agree |",
        "|---|---:|---:|---:|---|",
    ]
    for label in ops:
        a, b = med(ours_t[label]), med(peer_t[label])
        agree_txt = f"{ok[label]}/{args.rounds}"
        if verdict[label]:
            agree_txt += "; " + "; ".join(sorted(set(verdict[label])))
        lines.append(
            f"| {label} | {ms(a[0])} ({ms(a[1])}-{ms(a[2])}) | {ms(b[0])} "
            f"({ms(b[1])}-{ms(b[2])}) | {b[0] / a[0]:.1f}x | {agree_txt} |"
        )
    lines.append("")
    lines.append(
        "`expand(2)` is compared as sets (score-0 documents come in discovery "
        "order, which the two engines define differently); the similarity calls are "
        "compared document by document in order, with scores. rowvoi is called with "
        "`limit = len(selection) + 200` for the documents variant (its limit is the "
        "total). The same call on both sides differs by design:"
    )
    lines += ["", *literal]
    write_block(args, "peer", "\n".join(lines) + "\n")
    print("\n".join(lines))


def part_windows(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(2)
    n, m = args.window_nodes, 3 * args.window_nodes
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < m:
        a, b = (int(x) for x in rng.integers(0, n, 2))
        if a != b:
            pairs.add((a, b))
    edges = sorted(pairs)
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    node_time = rng.integers(0, 10, n).astype(np.int64)
    edge_time = rng.integers(0, 10, m).astype(np.int64)
    ntext = [node_text(i) for i in range(n)]
    etext = [edge_text(e, e % 4, int(s), int(d)) for e, (s, d) in enumerate(edges)]
    emb = HashingEmbedder(dim=384)
    vectors = emb.embed(ntext + etext)
    common = dict(
        node_ids=[f"n{i}" for i in range(n)],
        doc_entity=np.arange(n + m),
        doc_text=ntext + etext,
        vectors=vectors,
        embedder=emb,
        edge_time=edge_time,
    )
    graphs = {
        "node times given to rowvoi": MemoryGraph.from_arrays(
            src, dst, node_time=node_time, **common
        ),
        "nodes untimed in rowvoi": MemoryGraph.from_arrays(src, dst, **common),
    }
    windows = [(0, 10), (2, 8), (4, 6), (5, 6)]
    q = emb.embed(["topic 5 area 7 links"])[0]
    counts = {name: {"expand": [0, 0], "docs": [0, 0]} for name in graphs}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "graph.npz")
        np.savez(
            data,
            src=src,
            dst=dst,
            node_text=np.array(ntext),
            edge_text=np.array(etext),
            vectors=vectors,
            node_time=node_time,
            edge_time=edge_time,
        )
        peer = Peer(args.raphtory_python, data)
        for w in windows:
            for seed in range(0, n, max(1, n // 25)):
                seeds = [f"n{seed}"]
                want_x = peer.ask(op="expand", seeds=seeds, hops=2, window=list(w))["docs"]
                want_d = peer.ask(op="docs", seeds=seeds, q=q.tolist(), limit=10, window=list(w))[
                    "docs"
                ]
                for name, g in graphs.items():
                    sel = empty_selection(g)
                    sel.add_nodes(seeds)
                    sel.expand(2, window=w)
                    same, _ = agree(ours_described(g, sel), want_x, False)
                    counts[name]["expand"][0] += same
                    counts[name]["expand"][1] += 1
                    sel = empty_selection(g)
                    sel.add_nodes(seeds)
                    sel.expand_documents_by_similarity(q, len(sel) + 10, window=w)
                    same, _ = agree(ours_described(g, sel), want_d, True)
                    counts[name]["docs"][0] += same
                    counts[name]["docs"][1] += 1
        peer.close()
    lines = [
        f"### Windows, side by side with Raphtory {peer.hello['raphtory']}\n",
        environment(args, peer.hello["raphtory"]),
        f"Graph: {n} nodes and {m} distinct edges with times 0-9, one document each; "
        f"windows {', '.join(f'[{a}, {b})' for a, b in windows)}; one seed node at a "
        "time.\n",
        "| rowvoi graph | `expand(2, window)` agree | "
        "`expand_documents_by_similarity(q, 10 new, window)` agree |",
        "|---|---:|---:|",
    ]
    for name, c in counts.items():
        lines.append(
            f"| {name} | {c['expand'][0]}/{c['expand'][1]} | {c['docs'][0]}/{c['docs'][1]} |"
        )
    lines += [
        "",
        "Raphtory counts a node as inside a window when it has any activity there "
        "(its own time or an edge's); rowvoi uses the node's own time, and an untimed "
        "node belongs to every window. Where the two differ is exactly the nodes whose "
        "own time is outside the window while an edge of theirs is inside: leave node "
        "times out of a rowvoi graph to get Raphtory's windows.",
    ]
    write_block(args, "windows", "\n".join(lines) + "\n")
    print("\n".join(lines))


# --------------------------------------------------------------- corpus


def part_corpus(args: argparse.Namespace) -> None:
    from rowvoi.corpus import CorpusStore, Fields, build, from_mapping
    from rowvoi.corpus.indexing.edges import FieldEdges
    from rowvoi.graph import (
        CorpusGraph,
        collapsed_tree_policy,
        reverse_dependency_policy,
        traverse,
    )
    from rowvoi.graph.corpus import _load

    n = args.corpus_artifacts
    rng = np.random.default_rng(0)
    links = rng.integers(0, n, size=(n, 3))

    def docs(version: dict[int, int]) -> dict:
        out = {}
        for i in range(n):
            v = version.get(i, 0)
            ln = [f"a{j}" if (i + k) % 10 else f"gone{j}" for k, j in enumerate(links[i])]
            out[f"a{i}"] = {
                "summary": node_text(i) + (f" v{v}" if v else ""),
                "body": f"body of artifact {i}: " + node_text(i * 7 + 3),
                "parent": f"a{i // 10}" if i else None,
                "links": ln,
            }
        return out

    strategy = Fields(("summary", "body"))
    edges = FieldEdges({"parent": "PARENT", "links": "REF"})
    store = CorpusStore.memory()
    d = docs({})
    t0 = time.perf_counter()
    corpus = build(
        from_mapping(d, embedder="hashing", strategy=strategy),
        store=store,
        edges=edges,
        progress=False,
    )
    build_s = time.perf_counter() - t0
    report = corpus.last_build
    changed = {int(i): 1 for i in rng.choice(n, 1000, replace=False)}
    d2 = docs(changed)
    t0 = time.perf_counter()
    r2 = build(
        from_mapping(d2, embedder="hashing", strategy=strategy),
        store=store,
        edges=edges,
        progress=False,
    ).last_build
    inc_s = time.perf_counter() - t0
    g = CorpusGraph(corpus)
    timings: dict[str, list[float]] = {
        k: [] for k in ("links", "csr", "vectors", "nbrs", "fanin", "bfs", "revdep", "tree")
    }
    sizes: dict[str, list[int]] = {k: [] for k in timings}
    for _r in range(args.rounds):
        with store.snapshot() as snap:
            t0 = time.perf_counter()
            rows = snap.links()
            timings["links"].append(time.perf_counter() - t0)
            sizes["links"].append(len(rows))
            t0 = time.perf_counter()
            _load(snap, None)
            timings["csr"].append(time.perf_counter() - t0)
        store._graph_cache = {}  # cold: the next query rebuilds the CSR
        g.topology()
        t0 = time.perf_counter()
        full = g.snapshot()
        timings["vectors"].append(time.perf_counter() - t0)
        sizes["vectors"].append(full.n_documents)
        seeds = [f"a{i}" for i in rng.integers(0, n // 10, 10)]
        t0 = time.perf_counter()
        k = sum(len(g.neighbors(s)) + len(g.reverse_neighbors(s)) for s in seeds)
        timings["nbrs"].append((time.perf_counter() - t0) / len(seeds))
        sizes["nbrs"].append(k // len(seeds))
        t0 = time.perf_counter()
        fi = sum(g.fan_in(s) for s in seeds)
        timings["fanin"].append((time.perf_counter() - t0) / len(seeds))
        sizes["fanin"].append(fi // len(seeds))
        t0 = time.perf_counter()
        out = g.bfs(seeds, max_depth=2, node_budget=10_000)
        timings["bfs"].append(time.perf_counter() - t0)
        sizes["bfs"].append(len(out))
        q = node_text(int(rng.integers(0, n)))
        t0 = time.perf_counter()
        hits = traverse(
            q,
            g,
            policy=reverse_dependency_policy(seeds=seeds[:1], edge_type="REF"),
            max_depth=2,
            node_budget=64,
            k=10,
        )
        timings["revdep"].append(time.perf_counter() - t0)
        sizes["revdep"].append(len(hits))
        t0 = time.perf_counter()
        hits = traverse(
            q,
            g,
            policy=collapsed_tree_policy(summary_kinds=["summary"], leaf_kinds=["body"], seed_k=5),
            max_depth=1,
            node_budget=64,
            k=10,
        )
        timings["tree"].append(time.perf_counter() - t0)
        sizes["tree"].append(len(hits))
    rows_ = [
        ("read the committed links (one snapshot, SQLite)", "links", "links"),
        (
            "CSR build from the links (read + id mapping + C build; per new generation)",
            "csr",
            None,
        ),
        (
            "attach documents and vectors (the corpus's own; per new generation)",
            "vectors",
            "documents",
        ),
        ("neighbours + reverse neighbours of one artifact", "nbrs", "ids"),
        ("fan-in of one artifact", "fanin", "sources"),
        ("BFS, 2 hops from 10 artifacts (budget 10,000)", "bfs", "nodes"),
        ("`traverse`, reverse dependencies (depth 2, budget 64)", "revdep", "hits"),
        ("`traverse`, collapsed tree via PARENT edges (seed_k 5, budget 64)", "tree", "hits"),
    ]
    lines = [
        f"### A corpus's own graph: {n:,} artifacts\n",
        environment(args),
        f"Corpus: {n:,} artifacts, {2 * n:,} records (summary and body), hashing "
        f"embedder (384-d), {report.n_links:,} links ({g.n_dangling:,} dangling). Build "
        f"with links: {build_s:.1f} s. Incremental build changing 1,000 artifacts "
        f"({r2.links_extracted:,} artifacts' links re-extracted, {r2.texts_embedded:,} "
        f"texts embedded): {inc_s:.2f} s.\n",
        f"{args.rounds} rounds, fresh random seeds and queries each round.\n",
        "| operation | median ms | min ms | max ms | result size (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += table_rows(rows_, timings, sizes)
    write_block(args, "corpus", "\n".join(lines) + "\n")
    print("\n".join(lines))


def part_pages(args: argparse.Namespace) -> None:
    if not args.pause > 0:
        raise SystemExit("--pause must be a positive number of seconds")
    rng = np.random.default_rng(0)
    n, m = args.nodes, args.edges
    src = rng.integers(0, n, m, dtype=np.int64)
    dst = rng.integers(0, n, m, dtype=np.int64)
    nodes = np.arange(n, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)

    def build() -> tuple[float, float]:
        return timed_csr_build(nodes, src, dst, None, None, none)

    build()  # code and threads warm
    out: dict[float, list[tuple[float, float]]] = {0.0: [], args.pause: []}
    for r in range(2 * args.rounds):
        pause = 0.0 if r % 2 == 0 else args.pause
        _graph.trim()
        time.sleep(pause)
        out[pause].append(build())
    # virtio-balloon devices offering free page reporting (feature bit 5;
    # the sysfs string lists bit 0 first)
    balloon = [
        f.parent.name
        for f in Path("/sys/bus/virtio/drivers/virtio_balloon").glob("virtio*/features")
        if f.read_text()[5:6] == "1"
    ]
    reporting = (
        f"reports free pages to its host (virtio-balloon free page reporting, {balloon[0]})"
        if balloon
        else "does not report free pages to a host (no virtio-balloon device with free page "
        "reporting)"
    )
    lines = [
        "### Fresh pages: right after they were freed, or after a pause\n",
        environment(args),
        f"Graph: {n:,} nodes, {m:,} random edges, no documents or vectors. Each build "
        "follows `release_build_memory()` (its arrays are fresh memory), alternately at "
        f"once and after {args.pause:g} s idle; {args.rounds} builds each. This machine "
        f"{reporting}.\n",
        "| fresh pages | wall median ms | wall min-max ms | system CPU median ms |",
        "|---|---:|---:|---:|",
    ]
    for pause, rows in out.items():
        wall = med([w for w, _ in rows])
        sys_t = med([x for _, x in rows])[0]
        what = "taken back at once" if pause == 0 else f"taken back after {pause:g} s idle"
        lines.append(f"| {what} | {ms(wall[0])} | {ms(wall[1])}-{ms(wall[2])} | {ms(sys_t)} |")
    write_block(args, "pages", "\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run graph", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--part", choices=["big", "peer", "windows", "corpus", "pages"], required=True)
    ap.add_argument("--corpus-artifacts", type=int, default=100_000)
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=5_000_000)
    ap.add_argument("--edge-doc-every", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--peer-nodes", type=int, default=100_000)
    ap.add_argument("--peer-edges", type=int, default=500_000)
    ap.add_argument("--window-nodes", type=int, default=200)
    ap.add_argument("--pause", type=float, default=3.0)
    ap.add_argument(
        "--raphtory-python",
        default=str(RAPHTORY_PYTHON),
        help="interpreter of a venv with raphtory==0.15.1 (default bench/.raphtoryvenv)",
    )
    args = ap.parse_args(argv)
    args.run = run
    parts = {
        "big": part_big,
        "peer": part_peer,
        "windows": part_windows,
        "corpus": part_corpus,
        "pages": part_pages,
    }
    parts[args.part](args)
    return 0
