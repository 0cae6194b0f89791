"""Checking a query against a schema, once, into an immutable typed tree.

:func:`validate_query` is the only way into the executors: it resolves every
name against the :class:`~rowvoi.query.QuerySchema`, checks every operator,
aggregation and value against the column's type, folds categorical values
onto their canonical spelling, applies the limits of :mod:`rowvoi.query.model`
and returns a :class:`ValidQuery`. Every executor walks that same tree, so
none of them ever sees a name that is not in the schema or a value of the
wrong type. Problems are collected, not raised one by one: the
:class:`~rowvoi.errors.QueryError` lists them all. A string value must be
Unicode text: one holding a lone surrogate (``"\\ud800"``, which JSON can
spell and no UTF-8 encoder accepts) is refused here, so pandas, DuckDB,
SQLite and a corpus's filter all answer it with the same ``QueryError``.

>>> from rowvoi.query import QuerySchema
>>> schema = QuerySchema({"age": "numeric", "sector": {"type": "categorical",
...                       "values": ["Non-Profit", "Corporate"]}})
>>> vq = validate_query({"operation": "filter", "filters": {"sector": "non profit"}}, schema)
>>> vq.where
Compare(column='sector', op='$eq', value='Non-Profit')
>>> validate_query({"operation": "filter", "filters": {"age": {"$gt": "old"},
...                 "__class__": 1}}, schema)
Traceback (most recent call last):
...
rowvoi.errors.QueryError: 2 problems:
  - filters.age.$gt: age is numeric: expected a number, got 'old'
  - filters.__class__: unknown column; allowed: age, sector
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rowvoi.errors import QueryError
from rowvoi.query.model import (
    AGGREGATIONS,
    MAX_FILTER_DEPTH,
    MAX_FILTER_VALUES,
    MAX_IN_VALUES,
    Aggregation,
    DFQuery,
    describe_value,
)
from rowvoi.query.schema import _COLUMN_OPERATORS, ColumnSpec, QuerySchema
from rowvoi.query.values import format_date, parse_date

__all__ = [
    "AllOf",
    "AnyOf",
    "Compare",
    "Contains",
    "Exists",
    "FilterNode",
    "Member",
    "Output",
    "ValidQuery",
    "filter_columns",
    "parse_filter",
    "validate_query",
]

_INT64 = (-(2**63), 2**63 - 1)


def _not_text(value: str) -> str | None:
    """Why ``value`` is not valid Unicode text (a lone surrogate, which no
    UTF-8 encoder -- SQLite's, DuckDB's, a file's -- accepts), or None.

    >>> _not_text("caf" + chr(0xE9)), _not_text("x" + chr(0xD800))
    (None, 'holds a lone surrogate (U+D800) at position 1, which is not valid Unicode text')
    """
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds a lone surrogate (U+{ord(value[exc.start]):04X}) at position "
            f"{exc.start}, which is not valid Unicode text"
        )
    return None


def _safe_name(key: str) -> str:
    """A name for an error message: ``key`` itself, or its escaped form
    when it is not valid Unicode text (a message must print anywhere)."""
    return key if _not_text(key) is None else repr(key)[1:-1]


def _doc_value(value: Any) -> Any:
    return format_date(value) if isinstance(value, _dt.datetime) else value


@dataclass(frozen=True)
class Compare:
    """``column <op> value`` for ``$eq $ne $lt $lte $gt $gte``.

    ``$ne`` also matches rows where the column is missing; the others never do.
    """

    column: str
    op: str
    value: Any

    def to_doc(self) -> dict[str, Any]:
        """This condition as a filter document."""
        return {self.column: {self.op: _doc_value(self.value)}}


@dataclass(frozen=True)
class Member:
    """``$in`` (``negate=False``) or ``$nin``; ``$nin`` matches missing values."""

    column: str
    values: tuple[Any, ...]
    negate: bool = False

    def to_doc(self) -> dict[str, Any]:
        """This condition as a filter document."""
        return {
            self.column: {"$nin" if self.negate else "$in": [_doc_value(v) for v in self.values]}
        }


@dataclass(frozen=True)
class Exists:
    """``$exists``: the column has a value (``present``) or is missing."""

    column: str
    present: bool

    def to_doc(self) -> dict[str, Any]:
        """This condition as a filter document."""
        return {self.column: {"$exists": self.present}}


@dataclass(frozen=True)
class Contains:
    """``$contains``: the column's text holds ``needle`` (case-sensitive)."""

    column: str
    needle: str

    def to_doc(self) -> dict[str, Any]:
        """This condition as a filter document."""
        return {self.column: {"$contains": self.needle}}


@dataclass(frozen=True)
class AllOf:
    """Every child matches (``$and``; no children matches every row)."""

    children: tuple[FilterNode, ...]

    def to_doc(self) -> dict[str, Any]:
        """This condition as a filter document."""
        return {"$and": [c.to_doc() for c in self.children]}


@dataclass(frozen=True)
class AnyOf:
    """At least one child matches (``$or``; never empty)."""

    children: tuple[FilterNode, ...]

    def to_doc(self) -> dict[str, Any]:
        """This condition as a filter document."""
        return {"$or": [c.to_doc() for c in self.children]}


FilterNode = Compare | Member | Exists | Contains | AllOf | AnyOf


def filter_columns(node: FilterNode | None) -> set[str]:
    """Every column a filter tree reads."""
    if node is None:
        return set()
    if isinstance(node, (AllOf, AnyOf)):
        out: set[str] = set()
        for child in node.children:
            out |= filter_columns(child)
        return out
    return {node.column}


@dataclass(frozen=True)
class Output:
    """One output column: its name and the kind of its values
    (``int``, ``float``, ``str`` or ``date``)."""

    name: str
    kind: str


def _kind(spec: ColumnSpec) -> str:
    if spec.type == "numeric":
        return "int" if spec.integer else "float"
    return "date" if spec.type == "date" else "str"


def _agg_kind(agg: Aggregation, schema: QuerySchema) -> str:
    if agg.func == "count":
        return "int"
    if agg.func == "mean":
        return "float"
    return _kind(schema[agg.column])  # type: ignore[index]


@dataclass(frozen=True)
class ValidQuery:
    """A query checked against a schema: what the executors run.

    Attributes
    ----------
    query : DFQuery
        The normalised query: canonical categorical values, ISO dates,
        the effective limit, explicit output columns.
    operation : str
    columns : tuple of str
        Output columns of ``select`` / ``filter`` (empty for aggregates).
    where : FilterNode or None
        The typed filter tree (``None``: every row).
    aggregations : tuple of Aggregation
    group_by : tuple of str
    order_by : tuple of (int, bool)
        Positions in ``outputs`` and whether descending.
    outputs : tuple of Output
        The result columns, in order.
    limit : int
        Rows returned at most (after clamping).
    requested_limit : int or None
        The limit the query asked for.
    clamped : bool
        True if ``requested_limit`` exceeded the schema's ``max_limit``.
    """

    query: DFQuery
    operation: str
    columns: tuple[str, ...]
    where: FilterNode | None
    aggregations: tuple[Aggregation, ...]
    group_by: tuple[str, ...]
    order_by: tuple[tuple[int, bool], ...]
    outputs: tuple[Output, ...]
    limit: int
    requested_limit: int | None
    clamped: bool

    @property
    def is_aggregate(self) -> bool:
        """``aggregate`` or ``filtered_aggregate``."""
        return self.operation in ("aggregate", "filtered_aggregate")

    @property
    def is_scalar(self) -> bool:
        """An ungrouped aggregate: exactly one result row."""
        return self.is_aggregate and not self.group_by

    def referenced(self, schema: QuerySchema) -> tuple[str, ...]:
        """Every source column the query reads, in schema order."""
        used = set(self.columns) | set(self.group_by) | filter_columns(self.where)
        used |= {a.column for a in self.aggregations if a.column is not None}
        return tuple(n for n in schema.names if n in used)


class _FilterParser:
    """Mongo-style document -> typed tree, collecting problems."""

    def __init__(self, schema: QuerySchema, problems: list[str]):
        self.schema = schema
        self.problems = problems
        self.bound = 0  # values bound so far (every leaf counts at least one)
        self.overflow = False

    def _count(self, n: int) -> bool:
        self.bound += max(n, 1)
        if self.bound > MAX_FILTER_VALUES:
            if not self.overflow:
                self.problems.append(
                    f"filters: more than {MAX_FILTER_VALUES} conditions and "
                    "values in one filter; split the query"
                )
                self.overflow = True
            return False
        return True

    def document(self, doc: Any, path: str, depth: int) -> FilterNode | None:
        if not isinstance(doc, Mapping):
            self.problems.append(
                f"{path}: expected an object of conditions, got {describe_value(doc)}"
            )
            return None
        parts: list[FilterNode] = []
        ok = True
        for key, value in doc.items():
            if self.overflow:
                return None
            kpath = f"{path}.{_safe_name(key)}" if isinstance(key, str) else path
            if not isinstance(key, str):
                self.problems.append(
                    f"{path}: keys must be column names or $and/$or, got {describe_value(key)}"
                )
                ok = False
            elif key in ("$and", "$or"):
                node = self._logical(key, value, kpath, depth + 1)
                ok = ok and node is not None
                if node is not None:
                    parts.append(node)
            elif key.startswith("$"):
                self.problems.append(
                    f"{kpath}: unknown operator here; a filter level holds "
                    "column names, $and or $or"
                )
                ok = False
            elif key not in self.schema:
                self.problems.append(
                    f"{kpath}: unknown column; allowed: {', '.join(self.schema.names)}"
                )
                ok = False
            else:
                got = self._field(self.schema[key], value, kpath)
                ok = ok and got is not None
                parts.extend(got or ())
        if not ok:
            return None
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def _logical(self, op: str, value: Any, path: str, depth: int) -> FilterNode | None:
        if depth > MAX_FILTER_DEPTH:
            self.problems.append(
                f"{path}: $and/$or nested more than {MAX_FILTER_DEPTH} deep; flatten the filter"
            )
            return None
        if not isinstance(value, (list, tuple)) or not value:
            self.problems.append(
                f"{path}: expected a non-empty list of conditions, got {describe_value(value)}"
            )
            return None
        children = []
        for i, item in enumerate(value):
            if not self._count(0):
                return None
            child = self.document(item, f"{path}[{i}]", depth)
            children.append(child)
        if any(c is None for c in children):
            return None
        return (AllOf if op == "$and" else AnyOf)(tuple(children))  # type: ignore[arg-type]

    def _field(self, spec: ColumnSpec, value: Any, path: str) -> list[FilterNode] | None:
        if isinstance(value, Mapping):
            if not value or not all(isinstance(k, str) and k.startswith("$") for k in value):
                self.problems.append(
                    f"{path}: a condition is a value or an object of "
                    f"operators ({', '.join(spec.operators or ())})"
                )
                return None
            nodes = [self._operator(spec, op, arg, f"{path}.{op}") for op, arg in value.items()]
            return None if any(n is None for n in nodes) else nodes  # type: ignore[return-value]
        node = self._operator(spec, "$eq", value, path)
        return None if node is None else [node]

    def _operator(self, spec: ColumnSpec, op: str, arg: Any, path: str) -> FilterNode | None:
        allowed = ", ".join(spec.operators or ())
        if op not in _COLUMN_OPERATORS:
            self.problems.append(f"{path}: unknown operator; allowed on {spec.name}: {allowed}")
            return None
        if op not in (spec.operators or ()):
            self.problems.append(
                f"{path}: {op} is not allowed on {spec.type} column "
                f"{spec.name}; allowed: {allowed}"
            )
            return None
        if op == "$exists":
            if not isinstance(arg, bool):
                self.problems.append(f"{path}: expected true or false, got {describe_value(arg)}")
                return None
            return Exists(spec.name, arg) if self._count(0) else None
        if op in ("$in", "$nin"):
            if not isinstance(arg, (list, tuple)):
                self.problems.append(
                    f"{path}: expected a list of values, got {describe_value(arg)}"
                )
                return None
            if len(arg) > MAX_IN_VALUES:
                self.problems.append(
                    f"{path}: {len(arg)} values; at most {MAX_IN_VALUES} are allowed in one list"
                )
                return None
            values = [self._value(spec, v, f"{path}[{i}]") for i, v in enumerate(arg)]
            if any(v is _BAD for v in values) or not self._count(len(values)):
                return None
            return Member(spec.name, tuple(dict.fromkeys(values)), op == "$nin")
        if op == "$contains":
            if not isinstance(arg, str):
                self.problems.append(f"{path}: expected a string, got {describe_value(arg)}")
                return None
            why = _not_text(arg)
            if why is not None:
                self.problems.append(f"{path}: {describe_value(arg)} {why}; send UTF-8 text")
                return None
            return Contains(spec.name, arg) if self._count(1) else None
        value = self._value(spec, arg, path)
        if value is _BAD or not self._count(1):
            return None
        return Compare(spec.name, op, value)

    def _value(self, spec: ColumnSpec, value: Any, path: str) -> Any:
        where = f"{path}: {spec.name} is {spec.type}"
        if value is None:
            self.problems.append(
                f'{path}: null is not a value; use {{"$exists": false}} to match missing values'
            )
            return _BAD
        if spec.type == "numeric":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.problems.append(f"{where}: expected a number, got {describe_value(value)}")
                return _BAD
            if isinstance(value, float) and not math.isfinite(value):
                self.problems.append(f"{where}: expected a finite number, got {value!r}")
                return _BAD
            if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
                self.problems.append(f"{where}: {value} is outside the 64-bit integer range")
                return _BAD
            return value
        if spec.type == "date":
            try:
                return parse_date(value)
            except ValueError as exc:
                self.problems.append(f"{where}: {exc}, got {describe_value(value)}")
                return _BAD
        if not isinstance(value, str):
            self.problems.append(f"{where}: expected a string, got {describe_value(value)}")
            return _BAD
        why = _not_text(value)
        if why is not None:
            self.problems.append(f"{path}: {describe_value(value)} {why}; send UTF-8 text")
            return _BAD
        if spec.type == "categorical":
            try:
                return spec.normalize(value)
            except ValueError as exc:
                self.problems.append(f"{path}: {exc}")
                return _BAD
        return value


_BAD = object()


def parse_filter(doc: Mapping[str, Any] | None, schema: QuerySchema) -> FilterNode | None:
    """Check a filter document against a schema; return its typed tree.

    The same rules as the ``filters`` of a query (the corpus layer filters
    search hits with it). ``None`` or ``{}`` means no filter.

    Raises
    ------
    QueryError
        Listing every problem (unknown columns or operators, wrong value
        types, limits exceeded).

    Examples
    --------
    >>> from rowvoi.query import QuerySchema
    >>> parse_filter({"$or": [{"n": {"$lt": 2}}, {"n": {"$exists": False}}]},
    ...              QuerySchema({"n": "numeric"}))
    AnyOf(children=(Compare(column='n', op='$lt', value=2), Exists(column='n', present=False)))
    """
    if not isinstance(schema, QuerySchema):
        raise TypeError(f"schema must be a QuerySchema, got {type(schema).__name__}")
    problems: list[str] = []
    node = _parse_filter(doc, schema, problems)
    if problems:
        raise QueryError(problems)
    return node


def _parse_filter(doc: Any, schema: QuerySchema, problems: list[str]) -> FilterNode | None:
    if doc is None or (isinstance(doc, Mapping) and not doc):
        return None
    return _FilterParser(schema, problems).document(doc, "filters", 0)


def _check_names(
    names: tuple[str, ...], what: str, schema: QuerySchema, problems: list[str]
) -> None:
    for i, name in enumerate(names):
        if name not in schema:
            problems.append(
                f"{what}[{i}]: unknown column {describe_value(name)}; allowed: "
                f"{', '.join(schema.names)}"
            )
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"{what}: {', '.join(map(repr, dupes))} given twice")


def _check_operation(q: DFQuery, problems: list[str]) -> None:
    op = q.operation
    has_filter = bool(q.filters)
    if op in ("select", "filter"):
        if q.aggregations or q.group_by:
            problems.append(
                f"operation {op!r} takes no aggregations or group_by; use "
                "'aggregate' or 'filtered_aggregate'"
            )
        if op == "select" and not q.columns:
            problems.append("columns: 'select' needs at least one column")
        if op == "filter" and not has_filter:
            problems.append("filters: 'filter' needs filters; use 'select' for all rows")
    else:
        if not q.aggregations:
            problems.append(
                f"aggregations: {op!r} needs at least one aggregation ({', '.join(AGGREGATIONS)})"
            )
        if q.columns:
            problems.append(
                f"columns: {op!r} takes no columns; its output is group_by and the aggregations"
            )
        if op == "aggregate" and has_filter:
            problems.append("filters: 'aggregate' takes no filters; use 'filtered_aggregate'")
        if op == "filtered_aggregate" and not has_filter:
            problems.append("filters: 'filtered_aggregate' needs filters; use 'aggregate'")


def _check_aggregations(q: DFQuery, schema: QuerySchema, problems: list[str]) -> bool:
    ok = True
    for i, agg in enumerate(q.aggregations):
        path = f"aggregations[{i}]"
        if agg.func not in AGGREGATIONS:
            problems.append(
                f"{path}: unknown aggregation {describe_value(agg.func)}; "
                f"allowed: {', '.join(AGGREGATIONS)}"
            )
            ok = False
        elif agg.column is None:
            if agg.func != "count":
                problems.append(f"{path}: {agg.func} needs a column; only count counts rows")
                ok = False
        elif agg.column not in schema:
            problems.append(
                f"{path}: unknown column {describe_value(agg.column)}; allowed: "
                f"{', '.join(schema.names)}"
            )
            ok = False
        elif agg.func not in (schema[agg.column].aggregations or ()):
            spec = schema[agg.column]
            problems.append(
                f"{path}: {agg.func} is not allowed on {spec.type} column "
                f"{spec.name}; allowed: {', '.join(spec.aggregations or ())}"
            )
            ok = False
    names = [a.name for a in q.aggregations] + list(q.group_by)
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(
            f"aggregations: output name(s) {', '.join(map(repr, dupes))} occur "
            "twice (aggregations are named <agg>_<column>; group_by columns "
            "keep their names)"
        )
        ok = False
    return ok


def validate_query(query: DFQuery | Mapping[str, Any], schema: QuerySchema) -> ValidQuery:
    """Check a query against a schema and return the tree the executors run.

    Parameters
    ----------
    query : DFQuery or mapping
        The query, or the JSON object a model emitted.
    schema : QuerySchema
        The allow-list.

    Returns
    -------
    ValidQuery

    Raises
    ------
    QueryError
        Listing every problem, each naming the field at fault and what is
        allowed there. Nothing else is raised for any JSON-like input.
    TypeError
        If ``schema`` is not a :class:`QuerySchema`.

    Notes
    -----
    Pure and thread-safe. Only reads ``query``; never calls methods of the
    values in it beyond ``isinstance`` checks, comparison of strings and
    numbers, and iteration of lists and mappings.

    Examples
    --------
    >>> from rowvoi.query import QuerySchema
    >>> schema = QuerySchema({"income": "numeric", "sector": "categorical"}, max_limit=10)
    >>> vq = validate_query({"operation": "aggregate", "group_by": "sector",
    ...                      "aggregations": {"income": "mean"}, "limit": 10**12}, schema)
    >>> [o.name for o in vq.outputs], vq.limit, vq.clamped
    (['sector', 'mean_income'], 10, True)
    """
    if not isinstance(schema, QuerySchema):
        raise TypeError(f"schema must be a QuerySchema, got {type(schema).__name__}")
    q = query if isinstance(query, DFQuery) else DFQuery.from_dict(query)
    problems: list[str] = []
    _check_operation(q, problems)
    _check_names(q.columns, "columns", schema, problems)
    _check_names(q.group_by, "group_by", schema, problems)
    aggs_ok = _check_aggregations(q, schema, problems)
    where = _parse_filter(q.filters, schema, problems)

    if q.operation in ("select", "filter"):
        columns = q.columns or (schema.names if q.operation == "filter" else ())
        outputs = tuple(Output(c, _kind(schema[c])) for c in columns if c in schema)
    else:
        columns = ()
        outputs = tuple(Output(c, _kind(schema[c])) for c in q.group_by if c in schema)
        if aggs_ok:
            outputs += tuple(Output(a.name, _agg_kind(a, schema)) for a in q.aggregations)
    names = [o.name for o in outputs]
    order: list[tuple[int, bool]] = []
    for i, key in enumerate(q.order_by):
        if key.column not in names:
            problems.append(
                f"order_by[{i}]: {describe_value(key.column)} is not an output "
                f"column; allowed: {', '.join(names) or '(none)'}"
            )
        elif any(names[j] == key.column for j, _ in order):
            problems.append(f"order_by[{i}]: {key.column!r} is given twice")
        else:
            order.append((names.index(key.column), key.descending))
    if problems:
        raise QueryError(problems)

    requested = q.limit
    limit = schema.max_limit if requested is None else min(requested, schema.max_limit)
    normalised = DFQuery(
        q.operation,
        columns=columns,
        filters=None if where is None else where.to_doc(),
        aggregations=q.aggregations,
        group_by=q.group_by,
        order_by=q.order_by,
        limit=limit,
    )
    return ValidQuery(
        query=normalised,
        operation=q.operation,
        columns=tuple(columns),
        where=where,
        aggregations=q.aggregations,
        group_by=q.group_by,
        order_by=tuple(order),
        outputs=outputs,
        limit=limit,
        requested_limit=requested,
        clamped=requested is not None and requested > schema.max_limit,
    )
