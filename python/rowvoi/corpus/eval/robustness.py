"""Retrieval accuracy as the catalog grows: the distractor curve.

For each catalog size ``N`` and each probe ``(query, gold id)``,
:func:`distractor_robustness_curve` builds in-memory corpora holding the
gold artifact and ``N - 1`` distractors drawn at random from a pool, and
counts how often the gold lands in the top ``k``. A flat curve is
retrieval that discriminates; a steep fall is retrieval that only worked
because the catalog was small.

Sizes are capped at the pool size and de-duplicated, so the keys of the
result are the catalog sizes actually built. ``N = 1`` (the gold alone) is
1.0 in dense and hybrid mode; a lexical probe that shares no term with its
gold finds nothing even then, and the anchor shows it. A size that uses the whole pool leaves nothing to sample, so it
runs one trial instead of ``trials``.

Draws come from :class:`random.Random` seeded by ``seed`` and ``N``: the
same inputs give the same curve on every run. The default embedder is the
hashing embedder (fast, no model); pass ``embedder="minilm"`` to measure
the production setting.

>>> scope = {"gold": "wing stall at high angle of attack",
...          "d1": "heat transfer in a pipe", "d2": "supersonic nozzle shock",
...          "d3": "boundary layer on a flat plate"}
>>> distractor_robustness_curve(scope, [("wing stall", "gold")], sizes=(1, 2, 4, 99),
...                             trials=3, mode="lexical")
{1: 1.0, 2: 1.0, 4: 1.0}
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rowvoi.corpus.eval.cases import DiscoveryCase

__all__ = [
    "DFLT_DISTRACTOR_SIZES",
    "DFLT_CURVE_MODE",
    "DFLT_CURVE_EMBEDDER",
    "distractor_robustness_curve",
    "distractor_curve_from_cases",
]

DFLT_DISTRACTOR_SIZES = (1, 4, 8, 16, 32, 64, 128)
DFLT_CURVE_MODE = "dense"
DFLT_CURVE_EMBEDDER = "hashing"


def distractor_robustness_curve(
    scope: Mapping[Any, Any],
    probes: Iterable[tuple[str, Any]],
    *,
    strategy: Any = None,
    embedder: Any = DFLT_CURVE_EMBEDDER,
    mode: str = DFLT_CURVE_MODE,
    sizes: Sequence[int] = DFLT_DISTRACTOR_SIZES,
    trials: int = 20,
    seed: int = 0,
    k: int = 1,
    **search_kw: Any,
) -> dict[int, float]:
    """``{N: share of (probe, trial) draws with the gold in the top k}``.

    Parameters
    ----------
    scope : mapping
        ``{artifact id: raw}``, the pool (keys compared as strings).
    probes : iterable of (str, id)
        ``(query, gold id)`` pairs; a probe whose gold is not in ``scope``
        raises ``ValueError``.
    strategy : IndexingStrategy or None
        How each raw item becomes text (default :class:`WholeText`).
    embedder : spec
        The sub-corpora's embedder (default ``"hashing"``).
    mode : str
        Search mode of the probes (default dense); ``search_kw`` go to
        :func:`rowvoi.corpus.search`.
    sizes : sequence of int
        Catalog sizes (>= 1), capped at ``len(scope)``.
    trials : int
        Distractor draws per probe and size (>= 1).
    seed : int
    k : int
        The cutoff the gold must reach (>= 1).

    Returns
    -------
    dict
        Sorted by ``N``.

    Raises
    ------
    ValueError
        No probes, an empty scope, a gold id not in scope, bad sizes,
        trials or k.
    """
    from rowvoi._validate import integer as _check_int
    from rowvoi.corpus.indexing.build import build
    from rowvoi.corpus.indexing.sources import from_mapping
    from rowvoi.corpus.retrieval.corpus import search
    from rowvoi.corpus.storage.store import CorpusStore

    pool = {str(a): raw for a, raw in scope.items()}
    if not pool:
        raise ValueError("scope is empty; the curve needs a pool of artifacts")
    probes = [(q, str(g)) for q, g in probes]
    if not probes:
        raise ValueError("no probes; give (query, gold id) pairs")
    absent = sorted({g for _, g in probes if g not in pool})
    if absent:
        raise ValueError(f"probe gold ids not in scope: {absent[:5]}")
    trials = _check_int("trials", trials, 1)
    k = _check_int("k", k, 1)
    seed = _check_int("seed", seed, -(1 << 62))
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError("sizes must be a sequence of integers")
    ns = sorted({min(_check_int("size", n, 1), len(pool)) for n in sizes})
    if not ns:
        raise ValueError("sizes is empty")
    ids = list(pool)
    curve: dict[int, float] = {}
    for n in ns:
        rng = random.Random(seed * 1_000_003 + n)
        hits = total = 0
        for query, gold in probes:
            others = [a for a in ids if a != gold]
            draw = n - 1
            for _ in range(1 if draw >= len(others) else trials):
                catalog = [gold, *rng.sample(others, draw)] if draw else [gold]
                src = from_mapping(
                    {a: pool[a] for a in catalog}, strategy=strategy, embedder=embedder
                )
                corpus = build(src, store=CorpusStore.memory(), progress=False)
                ranked = [
                    h.artifact_id for h in search(corpus, query, k=k, mode=mode, **search_kw)
                ]
                hits += gold in ranked[:k]
                total += 1
        curve[n] = hits / total
    return curve


def distractor_curve_from_cases(
    source: Any, cases: Sequence[DiscoveryCase], **kwargs: Any
) -> dict[int, float]:
    """The curve over a :class:`~rowvoi.corpus.CorpusSource`'s scope, probed
    with its single-gold cases (``(case.query, case.gold[0])``); the
    source's indexing strategy and embedder are used unless ``kwargs``
    name others. Raises ``ValueError`` when no case has exactly one gold id.
    """
    probes = [(c.query, c.gold[0]) for c in cases if len(c.gold) == 1]
    if not probes:
        raise ValueError("no case has exactly one gold id; the curve probes single-gold cases")
    kwargs.setdefault("strategy", source.indexing_strategy)
    if source.embedder is not None:
        kwargs.setdefault("embedder", source.embedder)
    return distractor_robustness_curve(dict(source.items()), probes, **kwargs)
