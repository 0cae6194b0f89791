"""The query object: what a model emits, as data, and the limits it lives under.

A :class:`DFQuery` is plain data (strings, numbers, lists, mappings): build it
from keyword arguments or from the JSON object a language model wrote with
:meth:`DFQuery.from_dict`. This module checks only its *shape* (known keys,
the right kinds of values); :func:`rowvoi.query.validate_query` checks it
against a :class:`~rowvoi.query.QuerySchema` and turns it into the typed tree
the executors run.

>>> q = DFQuery.from_dict({"operation": "aggregate", "group_by": "sector",
...                        "aggregations": {"income": "mean"}})
>>> q.group_by, q.aggregations[0].name
(('sector',), 'mean_income')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rowvoi.errors import QueryError

__all__ = [
    "AGGREGATIONS",
    "COLUMN_TYPES",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_VALUES",
    "MAX_IN_VALUES",
    "MAX_QUERY_LIMIT",
    "OPERATIONS",
    "OPERATORS",
    "Aggregation",
    "DFQuery",
    "OrderKey",
    "describe_value",
]

#: The four operations (seed 003): distinct projection, matching rows,
#: aggregates over the whole table, aggregates over the matching rows.
OPERATIONS = ("select", "filter", "aggregate", "filtered_aggregate")
#: Filter operators, Mongo-style, plus ``$contains`` (case-sensitive substring).
OPERATORS = (
    "$eq",
    "$ne",
    "$in",
    "$nin",
    "$lt",
    "$lte",
    "$gt",
    "$gte",
    "$exists",
    "$contains",
    "$and",
    "$or",
)
#: Aggregation functions.
AGGREGATIONS = ("count", "sum", "mean", "min", "max")
#: Column types a schema may declare.
COLUMN_TYPES = ("numeric", "categorical", "text", "date")

#: Default ``max_limit`` of a schema (the seed's ``MAX_QUERY_LIMIT``): a
#: larger ``limit`` is clamped to it and the clamp is reported.
MAX_QUERY_LIMIT = 1000
#: Deepest nesting of ``$and`` / ``$or`` a filter may use; deeper is refused.
MAX_FILTER_DEPTH = 8
#: Longest ``$in`` / ``$nin`` list; a longer list is refused, not truncated.
MAX_IN_VALUES = 1000
#: Most values one filter may bind in total (all conditions together).
MAX_FILTER_VALUES = 10_000

_QUERY_KEYS = ("operation", "columns", "filters", "aggregations", "group_by", "order_by", "limit")


def describe_value(value: Any) -> str:
    """A short, safe description of a value for an error message.

    JSON-like values are shown with ``repr`` (cut at 60 characters); any
    other object only by its type name, so no method of a foreign object
    runs while a message is built.

    >>> describe_value("old"), describe_value(object())
    ("'old'", 'a object')
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


@dataclass(frozen=True)
class Aggregation:
    """One aggregation: ``func`` over ``column`` (``None``: count rows).

    Its output column is ``<func>_<column>`` (``mean_income``), or ``count``
    for the row count.
    """

    func: str
    column: str | None = None

    @property
    def name(self) -> str:
        """The output column name."""
        return self.func if self.column is None else f"{self.func}_{self.column}"

    def to_dict(self) -> dict[str, Any]:
        """``{"agg": func, "column": column}`` (no column for a row count)."""
        out: dict[str, Any] = {"agg": self.func}
        if self.column is not None:
            out["column"] = self.column
        return out


@dataclass(frozen=True)
class OrderKey:
    """Sort by output column ``column``, descending if ``descending``.

    Missing values sort last in both directions.
    """

    column: str
    descending: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"column": ..., "direction": "asc" | "desc"}``."""
        return {"column": self.column, "direction": "desc" if self.descending else "asc"}


def _unknown_keys(
    item: Mapping[Any, Any], allowed: tuple[str, ...], path: str, problems: list[str]
) -> bool:
    """Report the first key of ``item`` outside ``allowed``; True if there was one."""
    unknown = [k for k in item if not (isinstance(k, str) and k in allowed)]
    if unknown:
        problems.append(
            f"{path}: unknown key {describe_value(unknown[0])}; allowed: {', '.join(allowed)}"
        )
    return bool(unknown)


def _names(value: Any, path: str, problems: list[str]) -> tuple[str, ...]:
    """A column name or a list of names, as a tuple."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        problems.append(
            f"{path}: expected a column name or a list of names, got {describe_value(value)}"
        )
        return ()
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            problems.append(f"{path}[{i}]: expected a column name, got {describe_value(item)}")
        else:
            out.append(item)
    return tuple(out)


def _aggregations(value: Any, problems: list[str]) -> tuple[Aggregation, ...]:
    """Normalise the accepted forms into a tuple of :class:`Aggregation`.

    Forms: ``{"income": "mean"}``, ``{"income": ["mean", "max"], "*": "count"}``,
    ``"count"``, or a list of ``"count"`` / ``{"agg": "mean", "column": "income"}``.
    """
    if value is None:
        return ()
    if isinstance(value, Aggregation):
        return (value,)
    if isinstance(value, str):
        return (Aggregation(value),)
    out: list[Aggregation] = []
    if isinstance(value, Mapping):
        for column, funcs in value.items():
            if not isinstance(column, str):
                problems.append(
                    f"aggregations: keys must be column names, got {describe_value(column)}"
                )
                continue
            path = f"aggregations.{column}"
            funcs = [funcs] if isinstance(funcs, str) else funcs
            if not isinstance(funcs, (list, tuple)) or not funcs:
                problems.append(
                    f"{path}: expected an aggregation name or a non-empty "
                    f"list of them ({', '.join(AGGREGATIONS)})"
                )
                continue
            for j, func in enumerate(funcs):
                if not isinstance(func, str):
                    problems.append(
                        f"{path}[{j}]: expected an aggregation name, got {describe_value(func)}"
                    )
                    continue
                out.append(Aggregation(func, None if column == "*" else column))
        return tuple(out)
    if not isinstance(value, (list, tuple)):
        problems.append(
            f'aggregations: expected an object such as {{"income": "mean"}} '
            f"or a list, got {describe_value(value)}"
        )
        return ()
    for i, item in enumerate(value):
        path = f"aggregations[{i}]"
        if isinstance(item, Aggregation):
            out.append(item)
        elif isinstance(item, str):
            out.append(Aggregation(item))
        elif isinstance(item, Mapping):
            unknown = _unknown_keys(item, ("agg", "column"), path, problems)
            func, column = item.get("agg"), item.get("column")
            if not isinstance(func, str):
                problems.append(
                    f"{path}.agg: expected an aggregation name "
                    f"({', '.join(AGGREGATIONS)}), got {describe_value(func)}"
                )
            elif column is not None and not isinstance(column, str):
                problems.append(
                    f"{path}.column: expected a column name, got {describe_value(column)}"
                )
            elif not unknown:
                out.append(Aggregation(func, column))
        else:
            problems.append(
                f'{path}: expected "count" or {{"agg": ..., "column": ...}}, '
                f"got {describe_value(item)}"
            )
    return tuple(out)


def _order_by(value: Any, problems: list[str]) -> tuple[OrderKey, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, (str, Mapping, OrderKey)) else value
    if not isinstance(items, (list, tuple)):
        problems.append(
            f"order_by: expected a column name, an object or a list, got {describe_value(value)}"
        )
        return ()
    out = []
    for i, item in enumerate(items):
        path = f"order_by[{i}]"
        if isinstance(item, OrderKey):
            out.append(item)
        elif isinstance(item, str):
            out.append(OrderKey(item))
        elif isinstance(item, Mapping):
            if _unknown_keys(item, ("column", "direction"), path, problems):
                continue
            column, direction = item.get("column"), item.get("direction", "asc")
            if not isinstance(column, str):
                problems.append(
                    f"{path}.column: expected a column name, got {describe_value(column)}"
                )
            elif not isinstance(direction, str) or direction not in ("asc", "desc"):
                problems.append(
                    f'{path}.direction: expected "asc" or "desc", got {describe_value(direction)}'
                )
            else:
                out.append(OrderKey(column, direction == "desc"))
        else:
            problems.append(
                f'{path}: expected a column name or {{"column": ..., '
                f'"direction": "asc"|"desc"}}, got {describe_value(item)}'
            )
    return tuple(out)


@dataclass(frozen=True)
class DFQuery:
    """A structured query over one table, as a language model would emit it.

    Parameters
    ----------
    operation : str
        ``"select"`` (distinct values of ``columns``, optionally among rows
        matching ``filters``), ``"filter"`` (matching rows; needs
        ``filters``), ``"aggregate"`` (aggregations over every row) or
        ``"filtered_aggregate"`` (aggregations over matching rows; needs
        ``filters``).
    columns : str or list of str, optional
        Output columns of ``select`` (required) and ``filter`` (default:
        every schema column). Not allowed with the aggregate operations.
    filters : mapping, optional
        A Mongo-style filter document: ``{"age": {"$gte": 30}}``,
        ``{"sector": "non-profit"}`` (shorthand for ``$eq``), ``{"$or": [...]}``.
        See :mod:`rowvoi.query` for the operators and missing-value rules.
    aggregations : mapping or list, optional
        ``{"income": "mean"}``, ``{"income": ["mean", "max"], "*": "count"}``
        or ``["count", {"agg": "max", "column": "tax_owed"}]``. Output
        columns are ``<agg>_<column>``; a row count is ``count``.
    group_by : str or list of str, optional
        Group the aggregations by these columns (missing values form a group).
    order_by : str, mapping or list, optional
        Output columns to sort by: ``"income"`` or
        ``{"column": "mean_income", "direction": "desc"}``. Missing values sort
        last in both directions; ties keep the default order.
    limit : int, optional
        Most rows to return; clamped to the schema's ``max_limit`` (the
        result reports the clamp). ``None`` means ``max_limit``.

    Raises
    ------
    QueryError
        If the shape is wrong (unknown keys, wrong kinds of values), listing
        every problem. Names, operators and values are checked against a
        schema later, by :func:`~rowvoi.query.validate_query`.

    Notes
    -----
    Immutable once built; safe to share between threads.

    Examples
    --------
    >>> q = DFQuery("filter", columns=["name", "age"], filters={"age": {"$gt": 30}},
    ...             order_by={"column": "age", "direction": "desc"}, limit=5)
    >>> q.to_dict()["order_by"]
    [{'column': 'age', 'direction': 'desc'}]
    """

    operation: str
    columns: tuple[str, ...] = ()
    filters: Mapping[str, Any] | None = None
    aggregations: tuple[Aggregation, ...] = ()
    group_by: tuple[str, ...] = ()
    order_by: tuple[OrderKey, ...] = ()
    limit: int | None = None

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not isinstance(self.operation, str) or self.operation not in OPERATIONS:
            problems.append(
                f"operation: expected one of {', '.join(OPERATIONS)}, got "
                f"{describe_value(self.operation)}"
            )
        set_ = object.__setattr__
        set_(self, "columns", _names(self.columns, "columns", problems))
        set_(self, "group_by", _names(self.group_by, "group_by", problems))
        set_(self, "aggregations", _aggregations(self.aggregations, problems))
        set_(self, "order_by", _order_by(self.order_by, problems))
        if self.filters is not None and not isinstance(self.filters, Mapping):
            problems.append(
                f'filters: expected an object such as {{"age": {{"$gt": 30}}}}, '
                f"got {describe_value(self.filters)}"
            )
        limit = self.limit
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 1
        ):
            problems.append(f"limit: expected a positive integer, got {describe_value(limit)}")
        if problems:
            raise QueryError(problems)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DFQuery:
        """Build a query from a JSON-like object (what a model emits).

        Raises
        ------
        QueryError
            For an object that is not a mapping, unknown keys, a missing
            ``operation`` or badly shaped fields -- all listed at once.

        Examples
        --------
        >>> DFQuery.from_dict({"operation": "select", "columns": "sector"}).columns
        ('sector',)
        >>> DFQuery.from_dict({"operation": "select", "where": {}})
        Traceback (most recent call last):
        ...
        rowvoi.errors.QueryError: unknown key 'where'; allowed: operation, columns, filters, aggregations, group_by, order_by, limit
        """
        if isinstance(data, DFQuery):
            return data
        if not isinstance(data, Mapping):
            raise QueryError(
                f'a query must be an object with an "operation", got {describe_value(data)}'
            )
        problems = [
            f"unknown key {describe_value(k)}; allowed: {', '.join(_QUERY_KEYS)}"
            for k in data
            if not (isinstance(k, str) and k in _QUERY_KEYS)
        ]
        given = {k for k in data if isinstance(k, str)}
        kwargs = {k: data[k] for k in _QUERY_KEYS if k in given}
        if "operation" not in given:
            problems.append(f"operation: missing; expected one of {', '.join(OPERATIONS)}")
            kwargs["operation"] = OPERATIONS[0]  # placeholder: still check the rest
        try:
            query = cls(**kwargs)
        except QueryError as exc:
            raise QueryError(problems + list(exc.problems)) from None
        if problems:
            raise QueryError(problems)
        return query

    def to_dict(self) -> dict[str, Any]:
        """The query as a JSON-ready object, in the normalised forms."""
        out: dict[str, Any] = {"operation": self.operation}
        if self.columns:
            out["columns"] = list(self.columns)
        if self.filters:
            out["filters"] = self.filters
        if self.aggregations:
            out["aggregations"] = [a.to_dict() for a in self.aggregations]
        if self.group_by:
            out["group_by"] = list(self.group_by)
        if self.order_by:
            out["order_by"] = [k.to_dict() for k in self.order_by]
        if self.limit is not None:
            out["limit"] = self.limit
        return out
