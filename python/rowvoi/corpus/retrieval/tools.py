"""Tool surfaces: a corpus as a callable for agents, programs and servers.

:func:`search`
    ``search(query, corpus=..., k=8, mode="hybrid", filter=None) -> dict``:
    :func:`~rowvoi.corpus.discover` as plain JSON (lists, dicts, str,
    float, int, bool, None -- never numpy), for any corpus, several, or a
    name. What an MCP tool or an HTTP endpoint returns as is.
:func:`make_search`
    The same bound to one corpus, exposing only ``query`` and ``k``, with
    a tool name and description set (``__name__``, ``__doc__``).
:func:`as_retriever`
    One corpus bound to ``retrieve(query, **overrides) -> list[SearchHit]``
    with default search options: the uniform retriever shape an
    orchestration layer plugs sources in by.

The first two take the second stage of a search (see
:mod:`~rowvoi.corpus.retrieval.rerank`): ``rerank`` (a callable or a spec
such as ``"cross-encoder:FOLDER"``), ``rerank_text``, ``formulate`` and
``boost``; :func:`make_search` fixes them when the tool is made, so the
agent that calls it sees only ``query`` and ``k``.

``k`` here is how many candidates the search retrieves (per corpus when
several); how many results come back is the selection's (at most 3 by
default), so a tool answer stays short.

Nothing here depends on a tool host (no MCP or HTTP library). The callables
are thread-safe (see :func:`rowvoi.corpus.discover`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

from rowvoi._validate import integer as _check_int
from rowvoi.corpus.base import SearchHit
from rowvoi.corpus.retrieval.corpus import open_corpus, search as _search
from rowvoi.corpus.retrieval.discovery import discover
from rowvoi.corpus.retrieval.rerank import _check_text_choice, resolve_reranker

__all__ = ["search", "make_search", "as_retriever", "Retriever"]

#: ``(query, **overrides) -> list[SearchHit]``.
Retriever = Callable[..., "list[SearchHit]"]

_SEARCH_OPTIONS = frozenset(
    p for p in inspect.signature(_search).parameters if p not in ("corpus", "query")
)


def search(
    query: str,
    *,
    corpus: Any,
    k: int = 8,
    mode: str = "hybrid",
    filter: Mapping[str, Any] | None = None,
    rerank: Any = None,
    rerank_text: Any = "surface",
    formulate: Any = None,
    boost: Any = None,
) -> dict[str, Any]:
    """Search a corpus (or several) and return a JSON-ready result.

    Parameters
    ----------
    query : str
        The natural-language request.
    corpus : str, corpus, or list of them
        A corpus name, an open corpus, or a list of either (federated).
    k : int
        Candidates retrieved per corpus before selection (default 8).
    mode : {"hybrid", "dense", "lexical"}
    filter : Mapping or None
        A metadata filter (the filter language of :mod:`rowvoi.query`).
    rerank, rerank_text, formulate, boost
        The second stage, as :func:`rowvoi.corpus.search` takes it
        (absent: the plain search): a reranker ``(query, texts) -> scores``
        or a spec (``"cross-encoder[:FOLDER]"``), what it reads
        (``"surface"`` or ``"artifact"``), a formulator
        ``query -> str | list[str]`` and a score boost ``hit -> float``.

    Returns
    -------
    dict
        :meth:`rowvoi.corpus.DiscoveryResult.to_dict`: ``query``, ``mode``,
        ``strategy``, ``disclose_level``, ``results`` (one dict per
        committed result: ``artifact_id``, ``name``, ``score``,
        ``summary``, ``pointer``, ``metadata``, ``source``...),
        ``abstained``, ``reason``, ``n_retrieved``, ``signals``.

    Raises
    ------
    Whatever :func:`~rowvoi.corpus.discover` raises (an unknown corpus,
    mode or filter field, ``k`` < 1).

    Examples
    --------
    >>> import json
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> notes = build(from_mapping({"vpn": "Connect to the office VPN with WireGuard",
    ...                             "tax": "File the yearly tax return"},
    ...                            name="notes", embedder="hashing"),
    ...               store=CorpusStore.memory(), progress=False)
    >>> out = search("set up the vpn", corpus=notes, mode="lexical")
    >>> [r["artifact_id"] for r in out["results"]], out["abstained"]
    (['vpn'], False)
    >>> json.loads(json.dumps(out)) == out
    True
    >>> search("income paperwork", corpus=notes, mode="lexical")["results"]
    []
    >>> out = search("income paperwork", corpus=notes, mode="lexical",
    ...              formulate=lambda q: [q, "yearly tax"])
    >>> [r["artifact_id"] for r in out["results"]]
    ['tax']
    """
    return discover(
        corpus,
        query,
        k=k,
        mode=mode,
        filter=filter,
        **_stage(rerank, rerank_text, formulate, boost),
    ).to_dict()


def _stage(rerank: Any, rerank_text: Any, formulate: Any, boost: Any) -> dict[str, Any]:
    """The second-stage keywords of a search, only those given (so a tool
    without them runs exactly the plain search)."""
    out: dict[str, Any] = {}
    if rerank is not None:
        out["rerank"] = rerank
        out["rerank_text"] = rerank_text
    else:
        _check_text_choice(rerank_text)
    if formulate is not None:
        out["formulate"] = formulate
    if boost is not None:
        out["boost"] = boost
    return out


def _tool_name(text: str) -> str:
    name = re.sub(r"\W+", "_", text).strip("_").lower()
    if not name or name[0].isdigit():
        name = f"corpus_{name}"
    return name


def make_search(
    corpus: Any,
    *,
    name: str | None = None,
    description: str | None = None,
    k: int = 8,
    mode: str = "hybrid",
    rerank: Any = None,
    rerank_text: Any = "surface",
    formulate: Any = None,
    boost: Any = None,
) -> Callable[..., dict[str, Any]]:
    """A search tool bound to one corpus: ``tool(query, k=k) -> dict``.

    Parameters
    ----------
    corpus : str or corpus
        The corpus (a name is opened now, so a missing corpus fails here,
        not at the first call).
    name : str or None
        The tool's ``__name__`` (default ``search_<corpus name>``).
    description : str or None
        The tool's ``__doc__`` (default: one line naming the corpus).
    k : int
        Default candidates retrieved.
    mode : str
        The search mode of every call.
    rerank, rerank_text, formulate, boost
        The second stage of every call (see :func:`search`); a rerank spec
        is loaded now, so a missing cross-encoder fails here.

    Returns
    -------
    callable
        ``tool(query, k=k) -> dict``, the result of :func:`search`.

    Raises
    ------
    CorpusNotFound
        An unknown corpus name.
    ValueError
        ``k`` < 1, an unknown mode.
    rowvoi.corpus.retrieval.rerank.RerankError
        A rerank spec that cannot be loaded, an unknown ``rerank_text``.
    TypeError
        A ``formulate`` or ``boost`` that is not callable.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> notes = build(from_mapping({"vpn": "Connect to the office VPN with WireGuard"},
    ...                            name="notes", embedder="hashing"),
    ...               store=CorpusStore.memory(), progress=False)
    >>> tool = make_search(notes, mode="lexical")
    >>> tool.__name__, tool("vpn")["results"][0]["artifact_id"]
    ('search_notes', 'vpn')
    >>> def wireguard_first(query, texts):
    ...     return [float("WireGuard" in t) for t in texts]
    >>> make_search(notes, mode="lexical", rerank=wireguard_first)("vpn")["results"][0]["score"]
    1.0
    """
    bound = open_corpus(corpus) if isinstance(corpus, str) else corpus
    default_k = _check_int("k", k, 1)
    if mode not in ("hybrid", "dense", "lexical"):
        raise ValueError(f"unknown mode {mode!r}; use hybrid, dense or lexical")
    for what, fn in (("formulate", formulate), ("boost", boost)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{what} must be a callable, not {type(fn).__name__}")
    stage = _stage(resolve_reranker(rerank), rerank_text, formulate, boost)
    label = getattr(bound, "name", None) or "corpus"

    def tool(query: str, k: int = default_k) -> dict[str, Any]:
        return discover(bound, query, k=k, mode=mode, **stage).to_dict()

    tool.__name__ = tool.__qualname__ = name or _tool_name(f"search_{label}")
    tool.__doc__ = description or (
        f"Search the {label!r} corpus for `query` and return the few best results (or "
        f"none, when nothing fits) as JSON; `k` is how many candidates to consider."
    )
    return tool


def as_retriever(corpus_or_name: Any, **defaults: Any) -> Retriever:
    """Bind one corpus and default search options into a retriever.

    Parameters
    ----------
    corpus_or_name : str or corpus
        A name is opened once, now.
    **defaults
        :func:`rowvoi.corpus.search` keywords (``k``, ``mode``, ``filter``,
        ...); a keyword given at call time wins.

    Returns
    -------
    callable
        ``retrieve(query, **overrides) -> list[SearchHit]``, with the bound
        corpus on ``retrieve.corpus``.

    Raises
    ------
    TypeError
        A default that is not a search keyword.
    CorpusNotFound
        An unknown corpus name.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> notes = build(from_mapping({"vpn": "Connect to the VPN", "tax": "Tax return"},
    ...                            embedder="hashing"), store=CorpusStore.memory(),
    ...               progress=False)
    >>> retrieve = as_retriever(notes, mode="lexical", k=5)
    >>> [h.artifact_id for h in retrieve("vpn")], retrieve.corpus is notes
    (['vpn'], True)
    """
    unknown = sorted(set(defaults) - _SEARCH_OPTIONS)
    if unknown:
        raise TypeError(
            f"as_retriever got options search does not take: {unknown}; "
            f"it takes {sorted(_SEARCH_OPTIONS)}"
        )
    bound = open_corpus(corpus_or_name) if isinstance(corpus_or_name, str) else corpus_or_name

    def retrieve(query: str, **overrides: Any) -> list[SearchHit]:
        return _search(bound, query, **{**defaults, **overrides})

    retrieve.corpus = bound  # type: ignore[attr-defined]
    return retrieve
