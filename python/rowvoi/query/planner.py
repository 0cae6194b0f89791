"""Where the language model goes: natural language in, a query *dict* out.

A :class:`QueryPlanner` turns a question into the JSON object of a
:class:`~rowvoi.query.DFQuery`; rowvoi validates and runs it. The planner
never returns code and nothing it returns is evaluated, so a confused or
hostile model can at worst produce a query that is refused with a
:class:`~rowvoi.errors.QueryError` -- whose message goes back to the planner
as ``feedback`` for one more try. No LLM SDK is imported here; implement
``plan`` with any model (give it ``schema.to_dict()`` in the prompt).

>>> import pandas as pd
>>> class Scripted:
...     def plan(self, question, schema, feedback=None):
...         if feedback is None:   # first try: a column that does not exist
...             return {"operation": "aggregate", "aggregations": {"salary": "mean"}}
...         return {"operation": "aggregate", "aggregations": {"income": "mean"}}
>>> df = pd.DataFrame({"income": [10.0, 30.0]})
>>> answer = plan_and_run("What is the average income?", df, Scripted())
>>> answer.result.value, answer.attempts
(20.0, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd

from rowvoi.errors import QueryError
from rowvoi.query.model import DFQuery
from rowvoi.query.result import QueryResult
from rowvoi.query.run import infer_schema, parse_query, run_query
from rowvoi.query.schema import QuerySchema

__all__ = ["PlannedAnswer", "QueryPlanner", "plan_and_run"]


@runtime_checkable
class QueryPlanner(Protocol):
    """Turns a question about a table into a query object."""

    def plan(
        self, question: str, schema: QuerySchema, feedback: str | None = None
    ) -> Mapping[str, Any] | str:
        """Return the query for ``question`` as a JSON-like mapping (or JSON text).

        ``schema`` says which columns, operators and aggregations exist
        (``schema.to_dict()`` is a compact description for a prompt).
        ``feedback`` is ``None`` on the first try; after a refused query it
        holds the :class:`~rowvoi.errors.QueryError` message, naming every
        field at fault and what is allowed, so the planner can correct it.
        """
        ...


@dataclass(frozen=True)
class PlannedAnswer:
    """What :func:`plan_and_run` did.

    Attributes
    ----------
    question : str
    query : Mapping or DFQuery
        The accepted query as the planner emitted it.
    result : QueryResult
    attempts : int
        Plans requested (1 if the first was accepted).
    refusals : tuple of str
        The QueryError messages of the refused plans, in order.
    """

    question: str
    query: DFQuery | Mapping[str, Any]
    result: QueryResult
    attempts: int
    refusals: tuple[str, ...]


def plan_and_run(
    question: str,
    source: pd.DataFrame | str | Path,
    planner: QueryPlanner,
    schema: QuerySchema | None = None,
    *,
    max_attempts: int = 2,
    **run_kwargs: Any,
) -> PlannedAnswer:
    """Ask ``planner`` for a query, run it, and retry with the refusal as feedback.

    Parameters
    ----------
    question : str
    source : DataFrame, path or sqlite3.Connection
        As for :func:`~rowvoi.query.run_query`.
    planner : QueryPlanner
    schema : QuerySchema, optional
        Default: inferred from the source.
    max_attempts : int, default 2
        Plans to request at most.
    **run_kwargs
        ``engine`` / ``table`` for :func:`~rowvoi.query.run_query`.

    Returns
    -------
    PlannedAnswer

    Raises
    ------
    QueryError
        If every attempt was refused (the last refusal).
    TypeError
        If ``planner`` has no ``plan`` method.
    """
    if not isinstance(planner, QueryPlanner):
        raise TypeError(
            f"planner must have a plan(question, schema, feedback) method, got "
            f"{type(planner).__name__}"
        )
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")
    if schema is None:
        schema = infer_schema(source)
    refusals: list[str] = []
    feedback: str | None = None
    attempt = 0
    while True:
        attempt += 1
        proposed = planner.plan(question, schema, feedback)
        try:
            query = parse_query(proposed)
            result = run_query(source, query, schema, **run_kwargs)
        except QueryError as exc:
            refusals.append(str(exc))
            if attempt >= max_attempts:
                raise
            feedback = str(exc)
            continue
        return PlannedAnswer(question, query, result, attempt, tuple(refusals))
