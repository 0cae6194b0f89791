#!/usr/bin/env python3
"""rowvoi.graph in one page: a small knowledge graph, a vector selection
grown by similarity, a neighbourhood as prompt text, and a safe walk.

Run: python examples/graph_demo.py
"""

from rowvoi.graph import (
    MemoryGraph,
    graph_to_text,
    nodes_by_similarity,
    reverse_dependency_policy,
    traverse,
)
from rowvoi.index.embed import HashingEmbedder

EDGES = [
    # (src, dst, type, text, time)
    ("chunk-1", "Ada Lovelace", "MENTIONED_IN", None, None),
    ("chunk-1", "Analytical Engine", "MENTIONED_IN", None, None),
    (
        "Ada Lovelace",
        "Analytical Engine",
        "WROTE_ABOUT",
        "Ada Lovelace wrote the first program for the Analytical Engine",
        "1843-01-01",
    ),
    (
        "Charles Babbage",
        "Analytical Engine",
        "DESIGNED",
        "Charles Babbage designed the Analytical Engine",
        "1837-01-01",
    ),
    (
        "Ada Lovelace",
        "Charles Babbage",
        "WORKED_WITH",
        "Ada Lovelace corresponded with Charles Babbage",
        "1833-06-05",
    ),
    (
        "Alan Turing",
        "Ada Lovelace",
        "CITED",
        "Turing discussed Lovelace's objection in 1950",
        "1950-10-01",
    ),
    (
        "Alan Turing",
        "Turing machine",
        "INVENTED",
        "Alan Turing described the Turing machine",
        "1936-11-12",
    ),
]
NODES = [
    {"id": "chunk-1", "text": "A passage about early computing pioneers."},
    {"id": "Ada Lovelace", "text": "Ada Lovelace, mathematician and writer"},
    {"id": "Charles Babbage", "text": "Charles Babbage, inventor of mechanical computers"},
    {"id": "Analytical Engine", "text": "The Analytical Engine, a general-purpose machine"},
    {"id": "Alan Turing", "text": "Alan Turing, founder of computer science"},
    {"id": "Turing machine", "text": "The Turing machine, a model of computation"},
]


def main() -> None:
    graph = MemoryGraph.from_edges(EDGES, NODES, embedder=HashingEmbedder(dim=256))
    print(graph)

    # 1. a selection: start from the best node, grow by similarity round by round
    sel = nodes_by_similarity(graph, "Ada Lovelace", 1)
    sel.expand_documents_by_similarity("a program for the Analytical Engine", limit=4)
    print("\nselection:")
    for doc, score in sel.get_documents_with_scores():
        print(f"  {score:.3f}  {doc.content}")

    # 2. the chunk's neighbourhood as prompt text; MENTIONED_IN is a bridge
    facts = graph_to_text(
        graph, ["chunk-1"], depth=2, max_edges=4, aliases=True, bridge_edge_types={"MENTIONED_IN"}
    )
    print("\nfacts:\n" + facts.text)
    print("aliases:\n" + facts.legend())

    # 3. a walk: who points at the Analytical Engine, and at them
    hits = traverse(
        "mechanical computers",
        graph,
        max_depth=2,
        policy=reverse_dependency_policy(seeds=["Analytical Engine"], edge_type=None),
    )
    print("\nwalk:")
    for hit in hits:
        print(f"  {hit.score:.3f}  {hit.artifact_id} (depth {hit.metadata['walk_depth']})")


if __name__ == "__main__":
    main()
