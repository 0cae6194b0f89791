"""The DuckDB executor: CSV and Parquet files (larger than memory) and DataFrames.

DuckDB runs embedded (``pip install 'rowvoi[query]'``), streaming the file,
so a grouped aggregate over a 10M-row Parquet file needs memory for the
groups, not the table. The query is the same SQL the SQLite executor runs
(:mod:`rowvoi.query.sql`); the file path is a bound parameter too.

Before the query sees a column it is brought to its schema type in a
projection: floats' NaN become NULL (missing, as in pandas), dates become
naive ``TIMESTAMP`` (timezone-aware ones in UTC), categorical and text
columns ``VARCHAR``. Input order is the file's row order: Parquet's
``file_row_number``; for CSV ``row_number() OVER ()``, which DuckDB
documents as keeping the scan order (it buffers the file, so use Parquet
for very large ``filter`` / ``select`` queries).

>>> import pandas as pd
>>> df = pd.DataFrame({"sector": ["a", "b", "a", None], "income": [1.0, 2.0, None, 4.0]})
>>> execute_duckdb(df, {"operation": "aggregate", "group_by": "sector",
...                     "aggregations": {"income": "sum", "*": "count"}}).records
[{'sector': 'a', 'sum_income': 1.0, 'count': 2}, {'sector': 'b', 'sum_income': 2.0, 'count': 1}, {'sector': None, 'sum_income': 4.0, 'count': 1}]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rowvoi.errors import QueryError
from rowvoi.query.frames import prepare_frame
from rowvoi.query.model import MAX_QUERY_LIMIT, DFQuery
from rowvoi.query.result import QueryResult, build_result
from rowvoi.query.schema import ColumnSpec, QuerySchema, infer_string_spec
from rowvoi.query.sql import DUCKDB, compile_query, quote_ident
from rowvoi.query.validate import ValidQuery, validate_query

__all__ = ["execute_duckdb", "schema_from_file"]

_ROW = "__rowvoi_row"
_FLOATS = ("FLOAT", "DOUBLE", "REAL")
_INTS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")
_WIDE_INTS = ("UBIGINT", "HUGEINT", "UHUGEINT")
_STRINGS = ("VARCHAR",)
_DATES = ("DATE", "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS")
_TZ = ("TIMESTAMP WITH TIME ZONE",)
_names = itertools.count()


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise ImportError("the DuckDB executor needs duckdb: pip install 'rowvoi[query]'") from exc
    return duckdb


def _file_kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix in (".csv", ".tsv", ".txt") or path.name.lower().endswith((".csv.gz", ".csv.zst")):
        return "csv"
    raise ValueError(f"{path}: expected a .csv or .parquet (.pq) file")


def _raw_source(path: Path, need_rows: bool) -> tuple[str, list[Any], str | None]:
    """(FROM SQL, its params, the row-number expression or None)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if _file_kind(path) == "parquet":
        if need_rows:
            return "read_parquet(?, file_row_number = true)", [str(path)], "file_row_number"
        return "read_parquet(?)", [str(path)], None
    return "read_csv(?)", [str(path)], "row_number() OVER ()" if need_rows else None


def _type_key(sql_type: str) -> str:
    return sql_type.split("(")[0].strip().upper()


def _projection(spec: ColumnSpec, sql_type: str) -> str:
    """The column brought to its schema type (see the module docstring)."""
    col = quote_ident(spec.name)
    t = _type_key(sql_type)
    if spec.type == "numeric":
        if t in _FLOATS:
            return f"CASE WHEN isnan({col}) THEN NULL ELSE CAST({col} AS DOUBLE) END"
        if t in _INTS:
            return f"CAST({col} AS BIGINT)"
        if t == "BOOLEAN":
            raise QueryError(f"column {spec.name!r} is declared numeric but holds booleans")
        return f"CAST({col} AS DOUBLE)"  # DECIMAL, wide integers, numeric text
    if spec.type == "date":
        if t in _TZ:
            return f"CAST(timezone('UTC', {col}) AS TIMESTAMP)"
        return f"CAST({col} AS TIMESTAMP)"
    if t not in _STRINGS and not t.startswith("ENUM") and t != '"NULL"' and t != "NULL":
        raise QueryError(
            f"column {spec.name!r} is declared {spec.type} but holds {sql_type} values"
        )
    return f"CAST({col} AS VARCHAR)"


def _describe(con: Any, sql: str, params: list[Any]) -> dict[str, str]:
    return {
        row[0]: row[1] for row in con.execute(f"DESCRIBE SELECT * FROM {sql}", params).fetchall()
    }


def _source(
    con: Any,
    source: Any,
    schema: QuerySchema,
    names: tuple[str, ...],
    need_rows: bool,
    views: list[str],
) -> tuple[str, list[Any], str | None]:
    """A parenthesised subquery with the schema-typed columns (and row numbers).
    A DataFrame is registered as a view whose name is appended to ``views``."""
    if isinstance(source, pd.DataFrame):
        frame = prepare_frame(source, schema, names)
        # Always present: it also gives DuckDB a column when the query reads
        # none (a bare row count).
        frame[_ROW] = np.arange(len(frame), dtype=np.int64)
        view = f"__rowvoi_frame_{next(_names)}"
        con.register(view, frame)
        views.append(view)
        params: list[Any] = []
        raw, rows = quote_ident(view), (quote_ident(_ROW) if need_rows else None)
    else:
        raw, params, rows = _raw_source(Path(source), need_rows)
    types = _describe(con, raw, params)
    missing = [n for n in names if n not in types]
    if missing:
        raise QueryError(
            f"the table has no column {', '.join(map(repr, missing))} that the "
            f"schema declares; its columns: {', '.join(list(types)[:30])}"
        )
    cols = [f"{_projection(schema[n], types[n])} AS {quote_ident(n)}" for n in names]
    if rows is not None:
        cols.append(f"{rows} AS {quote_ident(_ROW)}")
    return (
        f"(SELECT {', '.join(cols) or '1 AS one'} FROM {raw})",
        params,
        (_ROW if rows is not None else None),
    )


def _translate(exc: Exception) -> Exception:
    """A DuckDB error as the exception a caller expects."""
    duckdb = _duckdb()
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, duckdb.IOException):
        return OSError(text)
    if isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException)):
        return QueryError(f"the table does not fit the schema: {text}")
    if isinstance(exc, duckdb.OutOfMemoryException):
        return MemoryError(text)
    return RuntimeError(f"DuckDB failed: {text}")


def execute_duckdb(
    source: pd.DataFrame | str | Path,
    query: DFQuery | Mapping[str, Any] | ValidQuery,
    schema: QuerySchema | None = None,
    *,
    connection: Any = None,
) -> QueryResult:
    """Run a query with DuckDB over a CSV/Parquet file or a DataFrame.

    Parameters
    ----------
    source : str, pathlib.Path or pandas.DataFrame
        A ``.csv`` or ``.parquet``/``.pq`` file (streamed, never loaded
        whole), or a DataFrame.
    query : DFQuery, mapping or ValidQuery
    schema : QuerySchema, optional
        Default: :func:`schema_from_file` for a file (one scan),
        :meth:`QuerySchema.from_frame` for a DataFrame.
    connection : duckdb.DuckDBPyConnection, optional
        Run on this connection (for its settings, e.g. ``memory_limit``).
        Default: a private in-memory connection, closed afterwards.

    Returns
    -------
    QueryResult

    Raises
    ------
    QueryError
        Invalid query, or the table lacks a schema column or holds values
        its declared type cannot.
    FileNotFoundError, OSError
        The file is missing or unreadable.
    ImportError
        duckdb is not installed.

    Notes
    -----
    With the default private connection, calls may run concurrently from
    many threads. A shared ``connection`` must be used by one thread at a
    time (a DuckDB connection is not thread-safe).
    """
    duckdb = _duckdb()
    if schema is None:
        schema = (
            QuerySchema.from_frame(source)
            if isinstance(source, pd.DataFrame)
            else schema_from_file(source, connection=connection)
        )
    vq = query if isinstance(query, ValidQuery) else validate_query(query, schema)
    con = connection if connection is not None else duckdb.connect(":memory:")
    views: list[str] = []
    try:
        src, params, row_column = _source(
            con, source, schema, vq.referenced(schema), not vq.is_aggregate, views
        )
        sql, params = compile_query(vq, DUCKDB, src, params, row_column=row_column)
        rows = con.execute(sql, params).fetchall()
    except duckdb.Error as exc:
        raise _translate(exc) from None
    finally:
        if connection is None:
            con.close()
        else:
            for view in views:
                con.unregister(view)
    return build_result(vq, rows, "duckdb")


def schema_from_file(
    path: str | Path,
    *,
    columns: Iterable[str] | None = None,
    types: Mapping[str, str] | None = None,
    max_categories: int = 50,
    max_limit: int = MAX_QUERY_LIMIT,
    connection: Any = None,
) -> QuerySchema:
    """Infer a schema from a CSV or Parquet file, by the rules of
    :meth:`QuerySchema.from_frame`.

    Integer SQL types become ``numeric`` with ``integer=True``; floating
    and decimal types ``numeric``; ``DATE``/``TIMESTAMP`` ``date``;
    ``VARCHAR`` categorical or text (one scan with a bounded-memory distinct
    estimate, then the exact distinct values of the few-valued columns).
    ``BOOLEAN`` and nested types are left out unless ``types`` names them.

    Raises
    ------
    FileNotFoundError, OSError
        The file is missing or unreadable.
    QueryError
        A requested column is missing or has no usable type.
    """
    duckdb = _duckdb()
    path = Path(path)
    con = connection if connection is not None else duckdb.connect(":memory:")
    types = dict(types or {})
    try:
        raw, params, _ = _raw_source(path, need_rows=False)
        described = _describe(con, raw, params)
        wanted = list(described) if columns is None else list(columns)
        problems = [
            f"schema_from_file: {c!r} is not a column of {path.name}"
            for c in wanted
            if c not in described
        ]
        strings = [
            c
            for c in wanted
            if c in described
            and types.get(c) in (None, "categorical")
            and _type_key(described[c]) in _STRINGS
        ]
        stats = _string_stats(con, raw, params, strings, max_categories)
        specs = []
        for name in wanted:
            if name not in described:
                continue
            spec = _infer_sql(
                name, described[name], types.get(name), stats.get(name), max_categories
            )
            if spec is None:
                if columns is not None:
                    problems.append(
                        f"schema_from_file: column {name!r} has type "
                        f"{described[name]}, which no query type fits; give it "
                        "a type in types="
                    )
                continue
            specs.append(spec)
    except duckdb.Error as exc:
        raise _translate(exc) from None
    finally:
        if connection is None:
            con.close()
    if problems:
        raise QueryError(problems)
    return QuerySchema(specs, max_limit=max_limit)


def _string_stats(
    con: Any, raw: str, params: list[Any], names: list[str], max_categories: int
) -> dict[str, tuple[int, list[str] | None]]:
    """Per string column: (non-missing count, sorted distinct values or None
    when there are more than max_categories)."""
    if not names:
        return {}
    parts = []
    for n in names:
        q = quote_ident(n)
        parts += [f"count({q})", f"approx_count_distinct({q})"]
    row = con.execute(f"SELECT {', '.join(parts)} FROM {raw}", params).fetchone()
    out: dict[str, tuple[int, list[str] | None]] = {}
    for i, n in enumerate(names):
        present, approx = int(row[2 * i]), int(row[2 * i + 1])
        values = None
        if approx <= 2 * max_categories + 10:
            got = con.execute(
                f"SELECT DISTINCT {quote_ident(n)} FROM {raw} WHERE "
                f"{quote_ident(n)} IS NOT NULL LIMIT ?",
                params + [max_categories + 1],
            ).fetchall()
            if len(got) <= max_categories:
                values = sorted(v[0] for v in got)
        out[n] = (present, values)
    return out


def _infer_sql(
    name: str,
    sql_type: str,
    forced: str | None,
    stats: tuple[int, list[str] | None] | None,
    max_categories: int,
) -> ColumnSpec | None:
    t = _type_key(sql_type)
    integer = t in _INTS or t in _WIDE_INTS
    numeric = integer or t in _FLOATS or t == "DECIMAL"
    if forced == "numeric" or (forced is None and numeric):
        return ColumnSpec(name, "numeric", integer=integer)
    if forced is None and (t in _DATES or t in _TZ):
        return ColumnSpec(name, "date")
    if t in _STRINGS and forced in (None, "categorical") and stats is not None:
        present, values = stats
        if forced == "categorical":
            return ColumnSpec(
                name, "categorical", values=None if values is None else tuple(values)
            )
        return infer_string_spec(name, present, values, max_categories)
    return None if forced is None else ColumnSpec(name, forced)
