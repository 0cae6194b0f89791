"""Evaluation cases: a query and the artifacts that answer it.

A :class:`DiscoveryCase` is one query with its *gold* artifact ids (the
ones a good search should return) and, optionally, a graded gain per gold
id. A case with no gold is an *abstention* case: nothing in the corpus
answers it, and the right behaviour is to commit to nothing.

Cases live in JSONL files, one case per line, optionally preceded by one
``{"__meta__": {...}}`` line (who made the cases, against which corpus
snapshot; see :func:`~rowvoi.corpus.eval.generate.corpus_signature`).
:func:`save_cases` writes such a file atomically, :func:`load_cases` and
:func:`read_meta` read it back.

Corpora change; a committed case file can drift out of step with the
corpus it was written for. :func:`validate_cases` lists the gold ids the
corpus no longer has: run it before trusting a report.

Every function here is pure (files aside) and thread-safe.

>>> case = DiscoveryCase("wing stall", gold=["12", "51"], grades={"12": 3})
>>> case.gains
{'12': 3.0, '51': 1.0}
>>> DiscoveryCase.from_dict({"query": "cooking pasta", "gold": []}).gold_is_none
True
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DiscoveryCase",
    "save_cases",
    "load_cases",
    "read_meta",
    "validate_cases",
    "corpus_artifact_ids",
    "to_qrels",
    "case_id",
    "write_jsonl",
    "write_text_atomic",
    "read_jsonl",
]

META_KEY = "__meta__"


def _gain(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number > 0, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


@dataclass(frozen=True)
class DiscoveryCase:
    """One query and the artifacts that answer it.

    Parameters
    ----------
    query : str
        The query text, searched verbatim (not empty).
    gold : sequence of str
        The artifact ids that answer the query, in any order (duplicates
        dropped; ids are compared as strings). Empty: an abstention case.
    grades : mapping or None
        ``{gold id: gain}`` for graded metrics (nDCG); gains are finite and
        > 0, and gold ids not listed have gain 1.0. Every key must be a
        gold id.
    corpus : str or None
        The corpus the case was written for (informative).
    source_id : str or None
        Where the case came from (a query number, the artifact a generated
        query was written from).
    metadata : mapping
        Anything else, kept through :meth:`to_dict` / :meth:`from_dict`.

    Raises
    ------
    TypeError, ValueError
        An empty or non-string query, a gold id that is not a string or a
        number, a gain that is not a finite number > 0, a grade for an id
        that is not gold.

    Examples
    --------
    >>> c = DiscoveryCase("boundary layer", gold=("3", "3", "7"))
    >>> c.gold, c.gold_is_none, c.to_dict()
    (('3', '7'), False, {'query': 'boundary layer', 'gold': ['3', '7']})
    """

    query: str
    gold: tuple[str, ...] = ()
    grades: Mapping[str, float] | None = None
    corpus: str | None = None
    source_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise ValueError(f"a case needs a non-empty query string, got {self.query!r}")
        gold = self.gold
        if isinstance(gold, (str, int)):
            gold = (gold,)
        ids: list[str] = []
        for g in gold:
            if isinstance(g, bool) or not isinstance(g, (str, numbers.Integral)):
                raise TypeError(f"gold ids are strings (or integers), got {g!r}")
            s = str(g)
            if s not in ids:
                ids.append(s)
        object.__setattr__(self, "gold", tuple(ids))
        if self.grades is not None:
            if not isinstance(self.grades, Mapping):
                raise TypeError("grades must be a mapping {gold id: gain}")
            grades = {str(k): _gain(f"grades[{k!r}]", v) for k, v in self.grades.items()}
            stray = [k for k in grades if k not in ids]
            if stray:
                raise ValueError(
                    f"grades name ids that are not gold: {stray}; add them to "
                    "gold or drop their grades"
                )
            object.__setattr__(self, "grades", grades)
        object.__setattr__(self, "metadata", dict(self.metadata or {}))

    @property
    def gold_is_none(self) -> bool:
        """True for an abstention case (no gold)."""
        return not self.gold

    @property
    def gains(self) -> dict[str, float]:
        """``{gold id: gain}``: the grade of each gold id, 1.0 when ungraded."""
        grades = self.grades or {}
        return {g: float(grades.get(g, 1.0)) for g in self.gold}

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (empty optional fields omitted)."""
        out: dict[str, Any] = {"query": self.query, "gold": list(self.gold)}
        if self.grades:
            out["grades"] = dict(self.grades)
        for key in ("corpus", "source_id"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DiscoveryCase:
        """Inverse of :meth:`to_dict`; ``gold`` may be one id or a list
        (or missing, or null: an abstention case).

        >>> DiscoveryCase.from_dict({"query": "q", "gold": "a"}).gold
        ('a',)
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"a case is a JSON object, got {type(d).__name__}")
        unknown = set(d) - {"query", "gold", "grades", "corpus", "source_id", "metadata"}
        if unknown:
            raise ValueError(
                f"unknown case field(s) {sorted(unknown)}; a case has query, "
                "gold, grades, corpus, source_id, metadata"
            )
        if "query" not in d:
            raise ValueError("a case needs a 'query'")
        gold = d.get("gold")
        golds: tuple[Any, ...]
        if gold is None:
            golds = ()
        elif isinstance(gold, (str, int)):
            golds = (gold,)
        elif isinstance(gold, list):
            golds = tuple(gold)
        else:
            raise TypeError(f"gold is an id or a list of ids, got {type(gold).__name__}")
        source_id = d.get("source_id")
        return cls(
            d["query"],
            golds,
            d.get("grades"),
            d.get("corpus"),
            None if source_id is None else str(source_id),
            d.get("metadata") or {},
        )


# ------------------------------------------------------------------ files
def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through :mod:`rowvoi._atomic`: a
    crash leaves the old file or the new one, never half of one. Parent
    folders are created. Returns the path.
    """
    from rowvoi._atomic import atomic_write_bytes

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, text.encode("utf-8"))
    return path


def write_jsonl(
    path: str | os.PathLike[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``rows`` as JSONL with :func:`write_text_atomic`, with an
    optional ``{"__meta__": meta}`` first line. Returns the path.
    """
    lines = []
    if meta is not None:
        if not isinstance(meta, Mapping):
            raise TypeError("meta must be a mapping (a JSON object)")
        lines.append(json.dumps({META_KEY: dict(meta)}))
    lines.extend(json.dumps(dict(row)) for row in rows)
    return write_text_atomic(path, "".join(line + "\n" for line in lines))


def read_jsonl(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[tuple[int, Any]]]:
    """``(meta, [(line number, object), ...])`` of a JSONL file; ``meta``
    is the ``__meta__`` object of the first line, ``{}`` without one.
    Blank lines are skipped. Raises ``ValueError`` naming the line for
    text that is not JSON, and ``OSError`` for an unreadable file.
    """
    meta: dict[str, Any] = {}
    rows: list[tuple[int, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if isinstance(obj, dict) and META_KEY in obj:
                if rows or meta:
                    raise ValueError(f"{path}:{n}: a {META_KEY} line may only come first")
                if not isinstance(obj[META_KEY], dict):
                    raise ValueError(f"{path}:{n}: {META_KEY} must be a JSON object")
                meta = dict(obj[META_KEY])
                continue
            rows.append((n, obj))
    return meta, rows


def save_cases(
    cases: Iterable[DiscoveryCase],
    path: str | os.PathLike[str],
    *,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write cases to a JSONL file (atomically), ``meta`` first if given.

    Raises ``TypeError`` for an item that is not a :class:`DiscoveryCase`.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "cases.jsonl")
    >>> _ = save_cases([DiscoveryCase("q", ["a"])], p, meta={"by": "hand"})
    >>> read_meta(p), [c.gold for c in load_cases(p)]
    ({'by': 'hand'}, [('a',)])
    """
    rows = []
    for c in cases:
        if not isinstance(c, DiscoveryCase):
            raise TypeError(f"save_cases writes DiscoveryCase objects, got {type(c).__name__}")
        rows.append(c.to_dict())
    return write_jsonl(path, rows, meta=meta)


def load_cases(path: str | os.PathLike[str]) -> list[DiscoveryCase]:
    """The cases of a JSONL file (its ``__meta__`` line skipped).

    Raises ``ValueError`` naming the file and line of a malformed case, and
    ``OSError`` for a missing or unreadable file.
    """
    _, rows = read_jsonl(path)
    cases = []
    for n, obj in rows:
        try:
            cases.append(DiscoveryCase.from_dict(obj))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}:{n}: {exc}") from None
    return cases


def read_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``__meta__`` object of a JSONL case file (``{}`` without one)."""
    return read_jsonl(path)[0]


# ------------------------------------------------------------------ corpus
def corpus_artifact_ids(corpus: Any) -> set[str]:
    """The artifact ids of a built corpus (an open corpus or a name).

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "x", "b": "y"}, embedder="hashing"),
    ...           store=CorpusStore.memory(), progress=False)
    >>> sorted(corpus_artifact_ids(c))
    ['a', 'b']
    """
    from rowvoi.corpus.retrieval.corpus import open_corpus

    if isinstance(corpus, str):
        corpus = open_corpus(corpus)
    store = getattr(corpus, "store", None)
    if store is None:
        raise TypeError(f"expected a corpus or a corpus name, got {type(corpus).__name__}")
    with store.snapshot() as snap:
        return {r[0] for r in snap.con.execute("SELECT artifact_id FROM artifacts")}


def validate_cases(corpus: Any, cases: Sequence[DiscoveryCase]) -> dict[int, list[str]]:
    """Gold ids the corpus does not have: ``{case index: [missing ids]}``.

    An empty dict means every gold id is in the corpus.

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "x"}, embedder="hashing"), store=CorpusStore.memory(),
    ...           progress=False)
    >>> validate_cases(c, [DiscoveryCase("q", ["a"]), DiscoveryCase("r", ["a", "gone"])])
    {1: ['gone']}
    """
    present = corpus_artifact_ids(corpus)
    out: dict[int, list[str]] = {}
    for i, case in enumerate(cases):
        missing = [g for g in case.gold if g not in present]
        if missing:
            out[i] = missing
    return out


def case_id(index: int) -> str:
    """The query id of the case at ``index`` in qrels and run files
    (``q00001`` for index 0: 1-based, zero-padded, so ids sort in case
    order).

    >>> case_id(0), case_id(224)
    ('q00001', 'q00225')
    """
    return f"q{index + 1:05d}"


def to_qrels(
    cases: Sequence[DiscoveryCase], *, grade: float | None = None
) -> tuple[dict[str, str], dict[str, dict[str, float]]]:
    """``(queries, qrels)`` of the gold-bearing cases, keyed by
    :func:`case_id` (the position in ``cases``, so ids stay stable around
    skipped abstention cases).

    ``qrels[qid][artifact id]`` is the case's gain for that id, or ``grade``
    for every gold id when given (binary judgements).

    >>> q, r = to_qrels([DiscoveryCase("none", []), DiscoveryCase("x", ["a"], {"a": 2})])
    >>> q, r
    ({'q00002': 'x'}, {'q00002': {'a': 2.0}})
    >>> to_qrels([DiscoveryCase("x", ["a"], {"a": 2})], grade=1)[1]
    {'q00001': {'a': 1.0}}
    """
    if grade is not None:
        grade = _gain("grade", grade)
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, float]] = {}
    for i, case in enumerate(cases):
        if case.gold_is_none:
            continue
        qid = case_id(i)
        queries[qid] = case.query
        qrels[qid] = {g: grade for g in case.gold} if grade is not None else case.gains
    return queries, qrels
