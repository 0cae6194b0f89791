"""One SQL compiler for the DuckDB and SQLite executors.

A :class:`~rowvoi.query.validate.ValidQuery` becomes one ``SELECT`` and a
list of parameters. Two rules make it safe by construction:

* identifiers come only from the schema (every name in a ``ValidQuery`` was
  checked against it) and are always double-quoted, with embedded quotes
  doubled, so a column called ``a"; DROP TABLE x`` is just a column;
* every value is a bound parameter (``?``); no value is ever part of the
  SQL text.

The semantics match the pandas executor exactly:

* ``$eq $in $lt $lte $gt $gte $contains`` never match a missing value
  (SQL's NULL comparison already gives that); ``$ne`` and ``$nin`` do match
  it (``col IS NULL OR col <> ?``), so each is the complement of its positive
  twin; ``$exists`` is ``IS [NOT] NULL``;
* ``$contains`` is ``instr(col, ?) > 0``: case-sensitive, by code point;
* text compares by code point (binary collation in both engines);
* ``ORDER BY`` puts missing values last in both directions through a
  leading ``(expr IS NULL)`` key, which every SQLite version understands;
  ties fall back to input order (``filter``), first occurrence (``select``)
  or the group keys (aggregates);
* ``sum`` over no values is 0 (``COALESCE``), ``mean``/``min``/``max`` are NULL.

>>> from rowvoi.query import QuerySchema, parse_filter
>>> schema = QuerySchema({"age": "numeric", "name": "text"})
>>> compile_where(parse_filter({"age": {"$ne": 3}, "name": {"$contains": "o"}}, schema),
...               SQLITE)
('(("age" IS NULL OR "age" <> ?) AND instr("name", ?) > 0)', [3, 'o'])
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rowvoi.query.validate import (
    AllOf,
    AnyOf,
    Compare,
    Contains,
    Exists,
    FilterNode,
    Member,
    ValidQuery,
)
from rowvoi.query.values import SQLITE_DATE_FORMAT

__all__ = ["DUCKDB", "SQLITE", "Dialect", "compile_query", "compile_where", "quote_ident"]

_SQL_OPS = {"$eq": "=", "$ne": "<>", "$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="}


def quote_ident(name: str) -> str:
    """A double-quoted SQL identifier (quotes inside doubled).

    >>> quote_ident('a"; DROP TABLE x; --')
    '"a""; DROP TABLE x; --"'
    """
    if not isinstance(name, str) or "\x00" in name:
        raise ValueError("an SQL identifier must be a string without NUL characters")
    return '"' + name.replace('"', '""') + '"'


def _duckdb_param(value: Any) -> tuple[str, Any]:
    # Explicit casts: DuckDB would otherwise infer a parameter's type from
    # the column and could cast 2.5 to an integer column's type.
    if isinstance(value, _dt.datetime):
        return "CAST(? AS TIMESTAMP)", value
    if isinstance(value, str):
        return "CAST(? AS VARCHAR)", value
    if isinstance(value, int):
        return "CAST(? AS BIGINT)", value
    return "CAST(? AS DOUBLE)", value


def _sqlite_param(value: Any) -> tuple[str, Any]:
    if isinstance(value, _dt.datetime):
        return "?", value.strftime(SQLITE_DATE_FORMAT)
    return "?", value


@dataclass(frozen=True)
class Dialect:
    """How one engine spells a bound value (placeholder and Python value)."""

    name: str
    param: Callable[[Any], tuple[str, Any]]


#: DuckDB: typed placeholders, datetimes bound as TIMESTAMP.
DUCKDB = Dialect("duckdb", _duckdb_param)
#: SQLite: plain ``?``; datetimes bound as text in ``SQLITE_DATE_FORMAT``.
SQLITE = Dialect("sqlite", _sqlite_param)


def compile_where(
    node: FilterNode | None,
    dialect: Dialect | None = None,
    column: Callable[[str], str] = quote_ident,
) -> tuple[str, list[Any]]:
    """A filter tree as an SQL boolean expression and its parameters.

    Parameters
    ----------
    node : FilterNode or None
        From :func:`~rowvoi.query.parse_filter` or a ``ValidQuery``.
        ``None`` compiles to an always-true expression.
    dialect : Dialect, optional
        :data:`SQLITE` (the default) or :data:`DUCKDB`.
    column : callable, default quote_ident
        Maps a schema column name to its SQL expression (e.g. a qualified
        ``"m"."age"``); it receives only schema names.

    Returns
    -------
    (str, list)
        The expression (parenthesised where needed) and its parameters, in
        placeholder order.

    Examples
    --------
    For a join, qualify the columns (names reach ``column`` only from the schema):

    >>> from rowvoi.query import QuerySchema, parse_filter
    >>> node = parse_filter({"year": {"$in": [2020, 2021]}}, QuerySchema({"year": "numeric"}))
    >>> compile_where(node, column=lambda name: "m." + quote_ident(name))
    ('m."year" IN (?, ?)', [2020, 2021])
    """
    params: list[Any] = []
    dialect = SQLITE if dialect is None else dialect
    sql = _where(node, dialect, column, params) if node is not None else "(1 = 1)"
    return sql, params


def _bind(value: Any, dialect: Dialect, params: list[Any]) -> str:
    placeholder, bound = dialect.param(value)
    params.append(bound)
    return placeholder


def _where(
    node: FilterNode, dialect: Dialect, column: Callable[[str], str], params: list[Any]
) -> str:
    if isinstance(node, (AllOf, AnyOf)):
        if not node.children:
            return "(1 = 1)"
        joiner = " AND " if isinstance(node, AllOf) else " OR "
        return "(" + joiner.join(_where(c, dialect, column, params) for c in node.children) + ")"
    col = column(node.column)
    if isinstance(node, Exists):
        return f"{col} IS NOT NULL" if node.present else f"{col} IS NULL"
    if isinstance(node, Contains):
        return f"instr({col}, {_bind(node.needle, dialect, params)}) > 0"
    if isinstance(node, Compare):
        placeholder = _bind(node.value, dialect, params)
        test = f"{col} {_SQL_OPS[node.op]} {placeholder}"
        return f"({col} IS NULL OR {test})" if node.op == "$ne" else test
    if isinstance(node, Member):
        if not node.values:
            return "(1 = 1)" if node.negate else "(1 = 0)"
        items = ", ".join(_bind(v, dialect, params) for v in node.values)
        if node.negate:
            return f"({col} IS NULL OR {col} NOT IN ({items}))"
        return f"{col} IN ({items})"
    raise TypeError(f"not a filter node: {type(node).__name__}")


_AGG_SQL = {
    "count": "COUNT({})",
    "sum": "COALESCE(SUM({}), 0)",
    "mean": "AVG({})",
    "min": "MIN({})",
    "max": "MAX({})",
}


def _order_term(expr: str, descending: bool) -> str:
    return f"({expr} IS NULL), {expr}{' DESC' if descending else ''}"


def _out(i: int) -> str:
    return quote_ident(f"__rowvoi_c{i}")


def compile_query(
    vq: ValidQuery,
    dialect: Dialect,
    source: str,
    source_params: list[Any] | None = None,
    row_column: str | None = None,
) -> tuple[str, list[Any]]:
    """A validated query as one ``SELECT`` over ``source``.

    The statement is an inner query that computes the output columns under
    reserved aliases (``__rowvoi_c0``, ...; schema names may not use the
    prefix) and an outer query that sorts and limits them, so no output
    name can ever shadow a source column in ``WHERE``, ``GROUP BY`` or
    ``ORDER BY``. Result rows hold the outputs in ``vq.outputs`` order.

    Parameters
    ----------
    vq : ValidQuery
    dialect : Dialect
    source : str
        SQL for the ``FROM`` clause: a quoted table name or a parenthesised
        subquery. Built by the executor, never from query data.
    source_params : list, optional
        Parameters of placeholders inside ``source`` (they come first).
    row_column : str, optional
        Name of a column holding each row's input position; needed by
        ``select`` and ``filter`` (default order and ties).

    Returns
    -------
    (str, list)
        The statement and its parameters. Non-scalar queries fetch at most
        ``vq.limit + 1`` rows, so the caller can tell a cut result.
    """
    params = list(source_params or [])
    where, where_params = compile_where(vq.where, dialect)
    group: list[str] = []
    if vq.is_aggregate:
        exprs = [quote_ident(c) for c in vq.group_by]
        for agg in vq.aggregations:
            arg = "*" if agg.column is None else quote_ident(agg.column)
            exprs.append(_AGG_SQL[agg.func].format(arg))
        group = [quote_ident(c) for c in vq.group_by]
        tiebreak = [_order_term(_out(i), False) for i in range(len(vq.group_by))]
    else:
        if row_column is None:
            raise ValueError("select and filter need a row-position column")
        exprs = [quote_ident(c) for c in vq.columns]
        rows = quote_ident(row_column)
        if vq.operation == "select":
            group = list(exprs)
            exprs.append(f"MIN({rows})")
        else:
            exprs.append(rows)
        tiebreak = [_out(len(exprs) - 1)]
    inner = [
        "SELECT " + ", ".join(f"{e} AS {_out(i)}" for i, e in enumerate(exprs)),
        f"FROM {source} AS rowvoi_src",
    ]
    if vq.where is not None:
        inner.append(f"WHERE {where}")
        params.extend(where_params)
    if group:
        inner.append("GROUP BY " + ", ".join(group))
    outputs = ", ".join(_out(i) for i in range(len(vq.outputs)))
    sql = [f"SELECT {outputs} FROM (", *("  " + line for line in inner), ") AS rowvoi_q"]
    order = [_order_term(_out(i), desc) for i, desc in vq.order_by] + tiebreak
    if order:
        sql.append("ORDER BY " + ", ".join(order))
    if not vq.is_scalar:
        sql.append("LIMIT ?")
        params.append(vq.limit + 1)
    return "\n".join(sql), params
