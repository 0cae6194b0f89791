"""A synthetic Zipfian corpus and query set for BM25 benchmarks.

Documents are bags of made-up words drawn from a Zipf distribution
(p(rank r) proportional to 1 / r**s over a fixed vocabulary), with Poisson
lengths around a mean, so the posting-list lengths look like a real
collection's: a few terms in nearly every document, a long tail of rare
ones.  Queries draw distinct words from the same distribution.  Everything
comes from one seed, so every run (and every engine) sees the same corpus.

Words are lowercase ASCII letters built from the word's rank (base 26 with a
fixed prefix), so every engine's default tokenizer keeps them whole and
analysis without stemming or stopwords leaves them unchanged.

The suites cache a generated corpus in ``bench/.cache`` (:func:`load_or_generate`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

DEFAULTS = dict(
    n_docs=1_000_000,
    vocab=500_000,
    zipf_s=1.0,
    mean_len=45,
    n_queries=10_000,
    query_terms=5,
    seed=20240601,
)


def word(rank: int) -> str:
    """The word of a rank: 'q' + base-26 digits, at least 3 letters."""
    letters = []
    r = rank
    while True:
        letters.append(chr(ord("a") + r % 26))
        r //= 26
        if r == 0:
            break
    while len(letters) < 3:
        letters.append("a")
    return "q" + "".join(reversed(letters))


@dataclass
class Corpus:
    docs: list[str]
    queries: list[str]
    params: dict


def _zipf_sampler(vocab: int, s: float):
    ranks = np.arange(1, vocab + 1, dtype=np.float64)
    p = ranks**-s
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    return cdf


def generate(
    n_docs: int = DEFAULTS["n_docs"],
    vocab: int = DEFAULTS["vocab"],
    zipf_s: float = DEFAULTS["zipf_s"],
    mean_len: int = DEFAULTS["mean_len"],
    n_queries: int = DEFAULTS["n_queries"],
    query_terms: int = DEFAULTS["query_terms"],
    seed: int = DEFAULTS["seed"],
) -> Corpus:
    rng = np.random.default_rng(seed)
    cdf = _zipf_sampler(vocab, zipf_s)
    words = np.array([word(r) for r in range(vocab)], dtype=object)
    lengths = np.maximum(rng.poisson(mean_len, n_docs), 1)
    total = int(lengths.sum())
    toks = np.searchsorted(cdf, rng.random(total), side="right")
    toks = np.minimum(toks, vocab - 1)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    wl = words[toks]
    docs = [" ".join(wl[a:e]) for a, e in zip(starts.tolist(), ends.tolist())]
    queries = []
    qrng = np.random.default_rng(seed + 1)
    while len(queries) < n_queries:
        picked: list[int] = []
        while len(picked) < query_terms:
            t = int(min(np.searchsorted(cdf, qrng.random(), side="right"), vocab - 1))
            if t not in picked:
                picked.append(t)
        queries.append(" ".join(words[picked]))
    params = dict(
        n_docs=n_docs,
        vocab=vocab,
        zipf_s=zipf_s,
        mean_len=mean_len,
        n_queries=n_queries,
        query_terms=query_terms,
        seed=seed,
        total_tokens=total,
    )
    return Corpus(docs, queries, params)


def uniform_queries(
    n_queries: int = DEFAULTS["n_queries"],
    top: int = 10_000,
    query_terms: int = DEFAULTS["query_terms"],
    seed: int = DEFAULTS["seed"] + 2,
) -> list[str]:
    """Queries of distinct words drawn uniformly from the `top` most frequent
    ranks: mid-frequency terms (document frequency from about 330 to most
    documents at the default sizes) instead of the corpus distribution's
    heavy head."""
    rng = np.random.default_rng(seed)
    return [
        " ".join(word(int(r)) for r in rng.choice(top, query_terms, replace=False))
        for _ in range(n_queries)
    ]


def load_or_generate(cache_dir: str | None = None, **kw) -> Corpus:
    """Generate, or read the cached copy written by an earlier run."""
    p = dict(DEFAULTS)
    p.update(kw)
    if cache_dir is None:
        return generate(**p)
    key = "synth_{n_docs}_{vocab}_{zipf_s}_{mean_len}_{n_queries}_{query_terms}_{seed}".format(**p)
    path = os.path.join(cache_dir, key + ".txt")
    if os.path.exists(path):
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
        nd = p["n_docs"]
        docs, queries = lines[:nd], lines[nd : nd + p["n_queries"]]
        params = dict(p)
        params["total_tokens"] = sum(d.count(" ") + 1 for d in docs)
        return Corpus(docs, queries, params)
    c = generate(**p)
    os.makedirs(cache_dir, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write("\n".join(c.docs + c.queries))
    os.replace(tmp, path)
    return c
