"""The Cranfield collection as the suites read it: the SMART-format parser,
the documents (title + abstract), the 225 queries numbered by position, the
judgements, and the ranking metrics.

The data is the copy in ``tests/data/cranfield`` (``--data DIR`` or
``$ROWVOI_CRANFIELD`` name another).  Relevance convention (the collection's
README): read ``cranqrel``, drop the -1 rows; graded gain = 5 - grade for
nDCG (grade 1 is the most relevant, gain 4); grades 1..4 count as relevant
for MAP and recall.  Queries are numbered by their position in ``cran.qry``
(1..225), not by their ``.I`` field.

Standard library only at import time (the tests load this file by path).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "cranfield"


@dataclass
class Cranfield:
    doc_numbers: list[int]  # document number (.I) of each text
    texts: list[str]  # title + abstract
    queries: list[str]  # in file order; query id = position + 1
    qrels: dict[int, dict[int, int]]  # query id -> {document number: grade 1..4}


def find_data(explicit: str | None = None) -> str:
    """The folder holding ``cran.all.1400``: ``explicit``, else
    ``$ROWVOI_CRANFIELD``, else the repository's ``tests/data/cranfield``."""
    for c in (explicit, os.environ.get("ROWVOI_CRANFIELD"), str(DATA)):
        if c and os.path.exists(os.path.join(c, "cran.all.1400")):
            return os.path.abspath(c)
    raise SystemExit("Cranfield data not found: pass --data DIR or set ROWVOI_CRANFIELD")


def records(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Split a SMART-format file into records of {field letter: text}."""
    recs: list[dict[str, str]] = []
    field = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(".I"):
                recs.append({"I": line[2:].strip()})
                field = None
            elif len(line) == 2 and line[0] == "." and line[1] in "TABW":
                field = line[1]
                recs[-1].setdefault(field, "")
            elif field is not None:
                recs[-1][field] += line + "\n"
    return recs


def load_cranfield(data: str | None = None) -> Cranfield:
    """Documents, queries and judgements, document numbers as ints."""
    d = find_data(data)
    docs = records(os.path.join(d, "cran.all.1400"))
    numbers = [int(r["I"]) for r in docs]
    texts = [(r.get("T", "") + " " + r.get("W", "")).strip() for r in docs]
    queries = [r.get("W", "").strip() for r in records(os.path.join(d, "cran.qry"))]
    qrels: dict[int, dict[int, int]] = {}
    with open(os.path.join(d, "cranqrel")) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            q, doc, grade = int(parts[0]), int(parts[1]), int(parts[2])
            if grade == -1:  # marks a document of no relevance
                continue
            qrels.setdefault(q, {})[doc] = grade
    return Cranfield(numbers, texts, queries, qrels)


def corpus_data(data: str | None = None):
    """The corpus suites' view: ``(docs, edits, queries, qrels)`` with the
    documents keyed by their number as a string, ten edited documents (every
    100th from the 101st, a sentence added), and qrels keyed by query
    position then document number string."""
    d = find_data(data)
    docs = {
        r["I"]: (r.get("T", "") + " " + r.get("W", "")).strip()
        for r in records(os.path.join(d, "cran.all.1400"))
    }
    queries = [r.get("W", "").strip() for r in records(os.path.join(d, "cran.qry"))]
    qrels: dict[int, dict[str, int]] = {}
    with open(os.path.join(d, "cranqrel")) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and int(p[2]) != -1:
                qrels.setdefault(int(p[0]), {})[p[1]] = int(p[2])
    keys = sorted(docs, key=int)
    edits = {
        k: docs[k] + " Revised: the flow was re-measured in a larger tunnel."
        for k in keys[100:1100:100]
    }
    return docs, edits, queries, qrels


def sentences(docs: dict[str, str]) -> list[str]:
    """Every sentence of six words or more of the texts, in document order
    (repeats kept)."""
    return [
        s.strip()
        for t in docs.values()
        for s in re.split(r"(?<=[.])\s+", t)
        if len(s.split()) >= 6
    ]


def sentence_pairs(
    docs: dict[str, str], n: int, seed: int = 3
) -> tuple[list[str], list[list[int]], dict[str, str]]:
    """``n`` documents of two Cranfield sentences each, drawn at random
    (numpy's generator seeded with ``seed``): the sentences
    (:func:`sentences`), each document's two picks, and the documents as
    ``{"m<i>": "<sentence> <sentence>"}`` -- the large corpora of the
    suites that need one without a model."""
    import numpy as np  # (not at import time: see the module docstring)

    sents = sentences(docs)
    picks = np.random.default_rng(seed).integers(0, len(sents), size=(n, 2)).tolist()
    return sents, picks, {f"m{i}": f"{sents[a]} {sents[b]}" for i, (a, b) in enumerate(picks)}


# --------------------------------------------------------------- metrics


def ndcg_at(ranked: list, rel: dict, k: int = 10) -> float:
    """nDCG@k of one ranking, gain 5 - grade (0 when nothing is judged)."""
    gains = {d: 5 - g for d, g in rel.items()}
    dcg = sum(gains.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def average_precision(ranked: list, rel: dict) -> float:
    """Average precision of one ranking (every judged document relevant)."""
    hits, total = 0, 0.0
    for i, d in enumerate(ranked):
        if d in rel:
            hits += 1
            total += hits / (i + 1)
    return total / len(rel) if rel else 0.0


def recall_at(ranked: list, rel: dict, k: int = 100) -> float:
    """Share of the judged documents in the first ``k``."""
    return len(set(ranked[:k]) & set(rel)) / len(rel) if rel else 0.0


def evaluate(run: list[list[int]], qrels: dict[int, dict[int, int]]) -> dict[str, float]:
    """Mean nDCG@10, MAP and recall@100 over the queries with judgements."""
    import numpy as np

    qs = [q for q in range(1, len(run) + 1) if qrels.get(q)]
    return {
        "ndcg@10": float(np.mean([ndcg_at(run[q - 1], qrels[q]) for q in qs])),
        "map": float(np.mean([average_precision(run[q - 1], qrels[q]) for q in qs])),
        "recall@100": float(np.mean([recall_at(run[q - 1], qrels[q]) for q in qs])),
        "queries": len(qs),
    }
