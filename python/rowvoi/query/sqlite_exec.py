"""The SQLite executor, and the filter compiler the corpus metadata table uses.

Two entry points:

* :func:`execute_sqlite` runs a whole query over a SQLite table (a caller's
  connection and table) or over a DataFrame (loaded into a private
  in-memory database first).
* :func:`compile_filter` turns a filter document into one parameterised
  ``SELECT id FROM table WHERE ...`` for a metadata table: one row per
  record, an integer id column, one typed column per filter field. (For a
  join or extra conditions, :func:`~rowvoi.query.parse_filter` then
  :func:`~rowvoi.query.compile_where` give the ``WHERE`` expression alone.)

A table these read must store values as :func:`~rowvoi.query.values.sqlite_value`
writes them: ``numeric`` as INTEGER/REAL, ``categorical``/``text`` as TEXT
(default BINARY collation), ``date`` as TEXT in
:data:`~rowvoi.query.values.SQLITE_DATE_FORMAT`, missing values as NULL.

>>> import sqlite3
>>> from rowvoi.query import QuerySchema
>>> con = sqlite3.connect(":memory:")
>>> _ = con.execute('CREATE TABLE meta (id INTEGER PRIMARY KEY, lang TEXT, year INTEGER)')
>>> _ = con.executemany("INSERT INTO meta VALUES (?, ?, ?)",
...                     [(1, "en", 2020), (2, "fr", None), (3, "en", 2024)])
>>> schema = QuerySchema({"lang": {"type": "categorical", "values": ["en", "fr"]},
...                       "year": {"type": "numeric", "integer": True}})
>>> sql, params = compile_filter({"lang": "EN", "year": {"$gte": 2021}}, schema,
...                              table="meta", id_column="id")
>>> [row[0] for row in con.execute(sql, params)]
[3]
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

import pandas as pd

from rowvoi.errors import QueryError
from rowvoi.query.frames import prepare_frame
from rowvoi.query.model import DFQuery
from rowvoi.query.result import QueryResult, build_result
from rowvoi.query.schema import QuerySchema
from rowvoi.query.sql import SQLITE, compile_query, compile_where, quote_ident
from rowvoi.query.validate import ValidQuery, parse_filter, validate_query
from rowvoi.query.values import SQLITE_DATE_FORMAT

__all__ = ["compile_filter", "execute_sqlite", "load_frame"]

_TABLE = "__rowvoi_src"
_ROW = "__rowvoi_row"


def compile_filter(
    filter_doc: Mapping[str, Any] | None, schema: QuerySchema, *, table: str, id_column: str
) -> tuple[str, list[Any]]:
    """Compile a filter document into SQL selecting the matching ids.

    Parameters
    ----------
    filter_doc : mapping or None
        A Mongo-style filter (``$eq $ne $in $nin $lt $lte $gt $gte $exists
        $contains $and $or``); ``None`` or ``{}`` selects every id.
    schema : QuerySchema
        The filterable fields and their types; the only identifiers used.
    table : str
        The metadata table (quoted as one identifier).
    id_column : str
        Its integer id column.

    Returns
    -------
    (str, list)
        ``SELECT "id" FROM "table" WHERE ... ORDER BY "id"`` and its
        parameters, for ``connection.execute(sql, params)``.

    Raises
    ------
    QueryError
        Listing every problem with the filter, each naming the field and
        what is allowed (unknown field, operator not allowed on its type,
        value of the wrong type, limits exceeded).

    Notes
    -----
    Missing values (NULL) never match ``$eq $in $lt $lte $gt $gte
    $contains`` and always match ``$ne`` and ``$nin``; ``$exists: false``
    selects them. Pure function; thread-safe.
    """
    node = parse_filter(filter_doc, schema)
    where, params = compile_where(node, SQLITE)
    ident = quote_ident(id_column)
    sql = f"SELECT {ident} FROM {quote_ident(table)}"
    if node is not None:
        sql += f" WHERE {where}"
    return sql + f" ORDER BY {ident}", params


def _is_int(s: pd.Series) -> bool:
    return s.dtype.kind in "iu" or isinstance(s.dtype, pd.Int64Dtype)


def _sql_type(s: pd.Series, column_type: str) -> str:
    if column_type != "numeric":
        return "TEXT"
    return "INTEGER" if _is_int(s) else "REAL"


def _column_values(s: pd.Series, column_type: str) -> list[Any]:
    """A canonical column as Python values SQLite stores (NULL for missing)."""
    missing = s.isna().to_numpy()
    if column_type == "date":
        text = s.dt.strftime(SQLITE_DATE_FORMAT).astype(object).to_numpy(copy=True)
        text[missing] = None
        dates: list[Any] = text.tolist()
        return dates
    if column_type == "numeric":
        cast = int if _is_int(s) else float
        values = s.astype(object).to_numpy()
        return [None if m else cast(v) for v, m in zip(values, missing)]
    return s.tolist()


def load_frame(
    con: sqlite3.Connection,
    df: pd.DataFrame,
    schema: QuerySchema,
    names: list[str] | tuple[str, ...],
    *,
    table: str = _TABLE,
    row_column: str = _ROW,
) -> None:
    """Create ``table`` in ``con`` holding the columns ``names`` of ``df``.

    Values are stored as :func:`~rowvoi.query.values.sqlite_value` would;
    ``row_column`` (INTEGER PRIMARY KEY) holds each row's position in ``df``.

    Raises
    ------
    QueryError
        If a column is missing or does not fit its declared type.
    """
    frame = prepare_frame(df, schema, names)
    cols = [f"{quote_ident(row_column)} INTEGER PRIMARY KEY"]
    cols += [f"{quote_ident(n)} {_sql_type(frame[n], schema[n].type)}" for n in names]
    con.execute(f"CREATE TABLE {quote_ident(table)} ({', '.join(cols)})")
    data = [list(range(len(frame)))] + [_column_values(frame[n], schema[n].type) for n in names]
    marks = ", ".join("?" * len(data))
    con.executemany(f"INSERT INTO {quote_ident(table)} VALUES ({marks})", zip(*data))


def _check_columns(con: sqlite3.Connection, table: str, names: tuple[str, ...]) -> None:
    try:
        cur = con.execute(f"SELECT * FROM {quote_ident(table)} LIMIT 0")
    except sqlite3.Error as exc:
        raise QueryError(f"table {table!r}: {exc}") from None
    have = {d[0] for d in cur.description}
    missing = [n for n in names if n not in have]
    if missing:
        raise QueryError(
            f"table {table!r} has no column {', '.join(map(repr, missing))} that "
            f"the schema declares; its columns: {', '.join(sorted(have))}"
        )


def execute_sqlite(
    source: pd.DataFrame | sqlite3.Connection,
    query: DFQuery | Mapping[str, Any] | ValidQuery,
    schema: QuerySchema | None = None,
    *,
    table: str | None = None,
    row_column: str = "rowid",
) -> QueryResult:
    """Run a query with SQLite.

    Parameters
    ----------
    source : pandas.DataFrame or sqlite3.Connection
        A DataFrame (loaded into a private in-memory database, only the
        columns the query reads), or a connection holding ``table``.
    query : DFQuery, mapping or ValidQuery
    schema : QuerySchema, optional
        Required for a connection; default for a DataFrame is
        :meth:`QuerySchema.from_frame`.
    table : str, optional
        The table to query (connections only).
    row_column : str, default "rowid"
        For a connection: the column giving input order (``filter``'s
        default order and ties); ignored for DataFrames (their row order).

    Returns
    -------
    QueryResult

    Raises
    ------
    QueryError
        Invalid query, or the table lacks a schema column.
    OverflowError
        An integer ``sum`` beyond 64 bits (SQLite cannot hold it).

    Notes
    -----
    Issues one read-only ``SELECT`` on a caller's connection; use the
    connection from one thread at a time, as :mod:`sqlite3` requires. A
    DataFrame gets its own connection, so that path is thread-safe.
    """
    if isinstance(source, pd.DataFrame):
        if schema is None:
            schema = QuerySchema.from_frame(source)
        vq = query if isinstance(query, ValidQuery) else validate_query(query, schema)
        con = sqlite3.connect(":memory:")
        try:
            load_frame(con, source, schema, vq.referenced(schema))
            return _run(con, vq, _TABLE, _ROW)
        finally:
            con.close()
    if not isinstance(source, sqlite3.Connection):
        raise TypeError(
            f"source must be a DataFrame or a sqlite3.Connection, got {type(source).__name__}"
        )
    if schema is None or table is None:
        raise TypeError("a SQLite connection needs schema= and table=")
    vq = query if isinstance(query, ValidQuery) else validate_query(query, schema)
    _check_columns(source, table, vq.referenced(schema))
    return _run(source, vq, table, row_column)


def _run(con: sqlite3.Connection, vq: ValidQuery, table: str, row_column: str) -> QueryResult:
    sql, params = compile_query(vq, SQLITE, quote_ident(table), row_column=row_column)
    try:
        rows = con.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "integer overflow" in str(exc):
            raise OverflowError("an integer sum exceeds 64 bits; SQLite cannot hold it") from None
        raise
    return build_result(vq, rows, "sqlite")
