"""Minimal sufficient context: cover the claims with the fewest/cheapest chunks.

The RAG analogue of :func:`rowvoi.find_key`. Where key-finding covers row
pairs with columns, this covers claims with chunks: same weighted set cover,
same solvers, cost measured in tokens instead of acquisition effort.

Top-k retrieval optimizes each chunk's relevance independently, so it happily
spends the budget on five chunks that all support the same claim while a
sixth claim goes unsupported. Set cover optimizes the selection jointly.

Cost of a chunk: an entry in ``costs`` if given, else ``Chunk.tokens``, else
1.0 (chunk-count minimization). Costs must be finite and >= 0 (a chunk
already in the prompt can cost 0: it is selected whenever it supports a
claim and never when it adds nothing).
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from rowvoi._validate import cost as check_cost
from rowvoi.setcover import CoverPath, SetCoverProblem

__all__ = [
    "Chunk",
    "ContextSelection",
    "select_context",
    "plan_context_path",
    "extract_and_select",
]


@dataclass
class Chunk:
    """A retrieved chunk.

    Attributes
    ----------
    id : Hashable
        Stable identifier, used everywhere else in this module.
    text : str
        The chunk body (a ``str``; anything else is a ``TypeError``, so a
        token count passed positionally as the text is caught).
    tokens : int or None
        Token count, used as the set-cover cost. When omitted, cost falls back
        to an explicit costs mapping and then to 1.0 (chunk-count
        minimization). An integer >= 0 when given (0: a chunk that costs
        nothing, e.g. one already in the prompt; it is selected whenever it
        supports a claim).

    Examples
    --------
    >>> Chunk("doc1#p2", "The Pro plan costs $40/seat/mo.", tokens=180)
    Chunk(id='doc1#p2', text='The Pro plan costs $40/seat/mo.', tokens=180)
    >>> Chunk("a", 5)
    Traceback (most recent call last):
    ...
    TypeError: Chunk 'a': text must be a str, got int 5 (a token count goes in tokens=5)
    """

    id: Hashable
    text: str = ""
    tokens: int | None = None

    def __post_init__(self) -> None:
        try:
            hash(self.id)
        except TypeError:
            raise TypeError(f"Chunk id {self.id!r} is unhashable; use a string or tuple") from None
        if not isinstance(self.text, str):
            hint = (
                f" (a token count goes in tokens={self.text!r})"
                if isinstance(self.text, numbers.Integral) and not isinstance(self.text, bool)
                else ""
            )
            raise TypeError(
                f"Chunk {self.id!r}: text must be a str, got "
                f"{type(self.text).__name__} {self.text!r}{hint}"
            )
        if self.tokens is not None:
            t = self.tokens
            if isinstance(t, bool) or not isinstance(t, numbers.Integral):
                raise TypeError(f"Chunk {self.id!r}: tokens must be an integer, got {t!r}")
            if t < 0:
                raise ValueError(f"Chunk {self.id!r}: tokens must be >= 0, got {t}")


@dataclass
class ContextSelection:
    """The chunks chosen to support a set of claims.

    Attributes
    ----------
    chunks : list[Hashable]
        Selected chunk ids (in the order the solver produced them).
    covered_claims : set[Hashable]
        Claims supported by the selection.
    missing_claims : set[Hashable]
        Claims left unsupported: either traded away via epsilon_claims, or
        unsupported by any retrieved chunk, which is a retrieval failure
        rather than a selection one.
    coverage : float
        Fraction of claims covered.
    total_cost : float
        Summed cost (tokens, when supplied) of the selection.
    optimal : bool
        True when the strategy proved the selection cheapest.
    """

    chunks: list[Hashable] = field(default_factory=list)
    covered_claims: set[Hashable] = field(default_factory=set)
    missing_claims: set[Hashable] = field(default_factory=set)
    coverage: float = 1.0
    total_cost: float = 0.0
    optimal: bool = False

    @property
    def unsupportable_claims(self) -> set[Hashable]:
        """Alias for missing_claims, read as "no chunk could have helped"."""
        return self.missing_claims


def _chunk_ids_and_costs(
    chunks: Sequence[Any], costs: Mapping[Any, float] | None
) -> tuple[list[Hashable], np.ndarray]:
    if isinstance(chunks, (str, bytes)) or not isinstance(chunks, Iterable):
        raise TypeError("chunks must be a sequence of Chunk objects or chunk ids")
    ids: list[Hashable] = []
    tokens: list[int | None] = []
    for c in chunks:
        if isinstance(c, Chunk):
            ids.append(c.id)
            tokens.append(c.tokens)
        else:
            try:
                hash(c)
            except TypeError:
                raise TypeError(f"chunk id {c!r} is unhashable") from None
            ids.append(c)
            tokens.append(None)
    pos: dict[Hashable, int] = {}
    for i, cid in enumerate(ids):
        if cid in pos:
            raise ValueError(f"chunk ids must be unique: {cid!r} appears more than once in chunks")
        pos[cid] = i
    out = np.array([float(t) if t is not None else 1.0 for t in tokens], dtype=np.float64)
    if costs is not None:
        if not isinstance(costs, Mapping):
            raise TypeError(
                f"costs must be a mapping of chunk id -> cost, got {type(costs).__name__}"
            )
        for cid, value in costs.items():
            if cid not in pos:
                raise ValueError(f"costs names chunk {cid!r}, which is not in chunks")
            out[pos[cid]] = check_cost(cid, value, "chunk")
    return ids, out


def _claim_list(claims: Sequence[Hashable]) -> list[Hashable]:
    if isinstance(claims, (str, bytes)) or not isinstance(claims, Iterable):
        raise TypeError("claims must be a sequence of claim labels")
    out = list(claims)
    seen: set[Hashable] = set()
    for c in out:
        try:
            hash(c)
        except TypeError:
            raise TypeError(f"claim {c!r} is unhashable") from None
        if c in seen:
            raise ValueError(f"claim {c!r} is given more than once")
        seen.add(c)
    return out


def _incidence(
    ids: list[Hashable],
    claims: list[Hashable],
    support: Mapping[Any, Iterable[Any]] | pd.DataFrame,
) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets over chunks, claim indices) of which chunk supports which claim.

    A claim in support that is not in ``claims`` is an error (a typo or a
    stale judgement would otherwise drop a requirement silently); a chunk id
    in support that is not in ``chunks`` is ignored (a judge that names a
    chunk it was not shown must not break the cover).
    """
    chunk_pos = {cid: i for i, cid in enumerate(ids)}
    claim_pos = {c: k for k, c in enumerate(claims)}
    if isinstance(support, pd.DataFrame):
        _check_claims(support.index, claim_pos)
        if not support.index.is_unique:
            dup = support.index[support.index.duplicated()][0]
            raise ValueError(f"support lists claim {dup!r} more than once")
        if not support.columns.is_unique:
            raise ValueError("support has a chunk id as more than one column")
        frame = support.reindex(index=[c for c in claims if c in support.index])
        frame = frame.loc[:, [c in chunk_pos for c in frame.columns]]
        mat = _truthy(frame)  # claims x chunks
        rows_claim = np.array([claim_pos[c] for c in frame.index], dtype=np.int64)
        cols_chunk = np.array([chunk_pos[c] for c in frame.columns], dtype=np.int64)
        ci, cj = np.nonzero(mat.T)  # (chunk column, claim row) pairs
        chunk_idx = cols_chunk[ci] if len(ci) else np.zeros(0, np.int64)
        claim_idx = rows_claim[cj] if len(cj) else np.zeros(0, np.int64)
    elif isinstance(support, Mapping):
        _check_claims(support.keys(), claim_pos)
        chunk_list: list[int] = []
        claim_list: list[int] = []
        for claim, supporters in support.items():
            if isinstance(supporters, (str, bytes)) or not isinstance(supporters, Iterable):
                raise TypeError(
                    f"support[{claim!r}] must be an iterable of chunk ids, got "
                    f"{type(supporters).__name__}"
                )
            k = claim_pos[claim]
            for cid in supporters:
                try:
                    i = chunk_pos.get(cid)
                except TypeError:  # an unhashable id cannot be one of the chunks
                    i = None
                if i is not None:
                    chunk_list.append(i)
                    claim_list.append(k)
        chunk_idx = np.asarray(chunk_list, dtype=np.int64)
        claim_idx = np.asarray(claim_list, dtype=np.int64)
    else:
        raise TypeError(
            "support must be a mapping claim -> chunk ids or a DataFrame "
            f"(claims x chunks), got {type(support).__name__}"
        )
    order = np.lexsort((claim_idx, chunk_idx))
    chunk_idx, claim_idx = chunk_idx[order], claim_idx[order]
    offsets = np.zeros(len(ids) + 1, dtype=np.uint64)
    np.cumsum(np.bincount(chunk_idx, minlength=len(ids)), out=offsets[1:])
    return offsets, claim_idx.astype(np.uint32)


def _check_claims(named: Iterable[Any], claim_pos: Mapping[Hashable, int]) -> None:
    """Every claim that support names must be one of ``claims``."""
    unknown = []
    for c in named:
        try:
            known = c in claim_pos
        except TypeError:
            known = False
        if not known:
            unknown.append(c)
    if unknown:
        raise ValueError(
            f"support names claims that are not in `claims`: {unknown[:5]!r}; "
            "add them to claims or drop them from support"
        )


def _truthy(frame: pd.DataFrame) -> np.ndarray:
    """Boolean matrix of truthy, non-missing cells (vectorised per dtype)."""
    missing = frame.isna().to_numpy(dtype=bool)
    values = frame.to_numpy()
    if values.dtype.kind in "biuf":
        nonzero: np.ndarray = (values != 0) & ~missing
        return nonzero
    truth: np.ndarray = (
        np.frompyfunc(bool, 1, 1)(values).astype(bool)
        if values.size
        else np.zeros(values.shape, dtype=bool)
    )
    present: np.ndarray = truth & ~missing
    return present


def _problem(
    chunks: Sequence[Any],
    claims: Sequence[Hashable],
    support: Mapping[Any, Iterable[Any]] | pd.DataFrame,
    costs: Mapping[Any, float] | None,
) -> tuple[SetCoverProblem, list[Hashable]]:
    ids, cost_arr = _chunk_ids_and_costs(chunks, costs)
    claim_list = _claim_list(claims)
    offsets, elements = _incidence(ids, claim_list, support)
    return SetCoverProblem.from_arrays(ids, claim_list, offsets, elements, cost_arr), claim_list


def select_context(
    chunks: Sequence[Chunk] | Sequence[Any],
    claims: Sequence[Hashable],
    support: Mapping[Any, Iterable[Any]] | pd.DataFrame,
    *,
    costs: Mapping[Any, float] | None = None,
    epsilon_claims: float = 0.0,
    strategy: Literal["greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"] = "greedy",
    time_limit: float | None = None,
) -> ContextSelection:
    """Select the cheapest set of chunks that supports the required claims.

    Parameters
    ----------
    chunks : Sequence[Chunk] or Sequence[Any]
        Retrieved chunks. Passing Chunk objects lets tokens act as the cost;
        passing bare ids minimizes chunk count unless costs is given. Ids must
        be unique.
    claims : Sequence[Hashable]
        Claims the answer must support. This is the universe: a claim absent
        from support counts as uncovered rather than being ignored. A claim
        given twice is a ``ValueError``.
    support : Mapping[Any, Iterable[Any]] or DataFrame
        Which chunks support which claims. As a DataFrame: claims on the
        index, chunk ids as columns, truthy cells meaning support (missing
        cells mean no support). A claim that is not in ``claims`` is a
        ``ValueError`` ("not in `claims`"); a chunk id that is not in
        ``chunks`` is ignored (a judge that invents an id must not break the
        cover).
    costs : Mapping[Any, float] or None
        Per-chunk cost, overriding Chunk.tokens. Defaults to 1.0.
    epsilon_claims : float
        Permit this fraction of claims to go unsupported. Trading 5% of
        claims often halves the context.
    strategy : {"greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"}
        Any strategy accepted by :meth:`rowvoi.setcover.SetCoverProblem.solve`.
    time_limit : float or None
        Maximum seconds for the solvers that respect one.

    Returns
    -------
    ContextSelection
        Selected chunks plus coverage accounting. Claims no chunk supports
        are reported in ``missing_claims``; they never make the solver fail.

    Raises
    ------
    ValueError
        For duplicate chunk ids ("unique") or claims, support naming a claim
        not in ``claims``, a bad cost, epsilon or strategy.
    TypeError
        For chunks, claims or support of the wrong type.

    Examples
    --------
    >>> from rowvoi.rag import Chunk, select_context
    >>> chunks = [Chunk("a", tokens=100), Chunk("b", tokens=100),
    ...           Chunk("c", tokens=400)]
    >>> claims = ["price", "release_date"]
    >>> support = {"price": {"a", "c"}, "release_date": {"b", "c"}}
    >>> selection = select_context(chunks, claims, support)
    >>> sorted(selection.chunks)
    ['a', 'b']
    >>> selection.total_cost
    200.0
    """
    problem, claim_list = _problem(chunks, claims, support, costs)
    solution = problem.solve(strategy, epsilon=epsilon_claims, time_limit=time_limit)
    covered = problem.covered(solution)
    missing = {c for c in claim_list if c not in covered}
    coverage = 1.0 if not claim_list else len(covered) / len(claim_list)
    return ContextSelection(
        list(solution), covered, missing, coverage, float(solution.cost), bool(solution.optimal)
    )


def plan_context_path(
    chunks: Sequence[Chunk] | Sequence[Any],
    claims: Sequence[Hashable],
    support: Mapping[Any, Iterable[Any]] | pd.DataFrame,
    *,
    costs: Mapping[Any, float] | None = None,
    weighting: str = "uniform",
) -> CoverPath:
    """Order chunks by marginal claim coverage per token.

    Use this instead of :func:`select_context` when the budget is the binding
    constraint rather than the coverage target: the returned path exposes
    ``prefix_for_budget()`` and ``coverage_curve()``, so you can fill a
    context window and see exactly what the last token bought.

    Parameters
    ----------
    chunks : Sequence[Chunk] or Sequence[Any]
        Retrieved chunks.
    claims : Sequence[Hashable]
        Claims the answer must support.
    support : Mapping[Any, Iterable[Any]] or DataFrame
        Which chunks support which claims, validated as in
        :func:`select_context`.
    costs : Mapping[Any, float] or None
        Per-chunk cost, overriding Chunk.tokens.
    weighting : str
        "uniform" weights all claims equally; "idf" upweights claims that few
        chunks support, so scarce evidence is acquired earlier.

    Returns
    -------
    CoverPath
        Ordered acquisition path with per-step coverage and cost.

    Examples
    --------
    >>> from rowvoi.rag import Chunk, plan_context_path
    >>> chunks = [Chunk("a", tokens=100), Chunk("b", tokens=100),
    ...           Chunk("c", tokens=400)]
    >>> claims = ["price", "release_date"]
    >>> support = {"price": {"a", "c"}, "release_date": {"b", "c"}}
    >>> path = plan_context_path(chunks, claims, support)
    >>> path.prefix_for_budget(150)
    ['a']
    """
    problem, _ = _problem(chunks, claims, support, costs)
    return problem.plan_path(weighting=weighting)  # type: ignore[arg-type]


def extract_and_select(
    query: str,
    chunks: Sequence[Chunk],
    *,
    extractor: Any,
    judge: Any,
    costs: Mapping[Any, float] | None = None,
    epsilon_claims: float = 0.0,
    strategy: Literal["greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"] = "greedy",
) -> ContextSelection:
    """End-to-end selection: extract claims, judge support, then cover.

    Convenience wrapper for when you have a
    :class:`~rowvoi.rag.protocols.ClaimExtractor` and a
    :class:`~rowvoi.rag.protocols.SupportJudge`. The two model calls happen
    here; the selection itself is deterministic.

    Parameters
    ----------
    query : str
        The user's question.
    chunks : Sequence[Chunk]
        Retrieved chunks, with text (the judge needs it).
    extractor : ClaimExtractor
        Turns the query into claims.
    judge : SupportJudge
        Decides which chunks support which claims.
    costs : Mapping[Any, float] or None
        Per-chunk cost, overriding Chunk.tokens.
    epsilon_claims : float
        Permit this fraction of claims to go unsupported.
    strategy : str
        Set cover strategy.

    Returns
    -------
    ContextSelection
        Selected chunks plus coverage accounting.

    Examples
    --------
    >>> class Extractor:
    ...     def extract(self, query):
    ...         return ["price", "date"]
    >>> class Judge:
    ...     def judge(self, chunks, claims):
    ...         return {c: {cid for cid, text in chunks if c in text} for c in claims}
    >>> chunks = [Chunk("a", "price list", 50), Chunk("b", "release date", 60),
    ...           Chunk("c", "price and date", 200)]
    >>> sel = extract_and_select("cost and date of v4?", chunks,
    ...                          extractor=Extractor(), judge=Judge())
    >>> sorted(sel.chunks), sel.coverage
    (['a', 'b'], 1.0)
    """
    chunk_list = list(chunks)
    for c in chunk_list:
        if not isinstance(c, Chunk):
            raise TypeError("extract_and_select needs Chunk objects (the judge reads their text)")
    claims = list(extractor.extract(query))
    support = judge.judge([(c.id, c.text) for c in chunk_list], claims)
    if not isinstance(support, Mapping):
        raise TypeError(
            f"judge.judge must return a mapping claim -> chunk ids, got {type(support).__name__}"
        )
    return select_context(
        chunk_list, claims, support, costs=costs, epsilon_claims=epsilon_claims, strategy=strategy
    )
