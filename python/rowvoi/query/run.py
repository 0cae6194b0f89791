"""One entry point: run a query (data only) against any supported source.

>>> import pandas as pd
>>> df = pd.DataFrame({"age": [25, 41, 37], "name": ["Ann", "Bo", "Cy"]})
>>> run_query(df, '{"operation": "filter", "filters": {"age": {"$gt": 30}}, '
...               '"columns": ["name"], "order_by": "name"}').records
[{'name': 'Bo'}, {'name': 'Cy'}]
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from rowvoi.errors import QueryError
from rowvoi.query.duckdb_exec import execute_duckdb, schema_from_file
from rowvoi.query.model import DFQuery
from rowvoi.query.pandas_exec import execute_pandas
from rowvoi.query.result import QueryResult
from rowvoi.query.schema import QuerySchema
from rowvoi.query.sqlite_exec import execute_sqlite

__all__ = ["ENGINES", "infer_schema", "parse_query", "run_query"]

#: The executors ``run_query`` can use.
ENGINES = ("pandas", "duckdb", "sqlite")


def parse_query(query: DFQuery | Mapping[str, Any] | str) -> DFQuery | Mapping[str, Any]:
    """A query as data: a :class:`DFQuery`, a mapping, or JSON text (parsed).

    Raises
    ------
    QueryError
        For JSON text that does not parse, or any other type.

    Examples
    --------
    >>> parse_query('{"operation": "select"')
    Traceback (most recent call last):
    ...
    rowvoi.errors.QueryError: the query is not valid JSON: Expecting ',' delimiter at line 1 column 23
    """
    if isinstance(query, (DFQuery, Mapping)):
        return query
    if isinstance(query, (str, bytes)):
        try:
            # validation (run_query) refuses JSON that is not an object
            parsed: Mapping[str, Any] = json.loads(query)
            return parsed
        except json.JSONDecodeError as exc:
            raise QueryError(
                f"the query is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
        except (ValueError, RecursionError) as exc:  # bad bytes; absurd nesting
            detail = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            raise QueryError(f"the query is not valid JSON: {detail}") from None
    raise QueryError(
        f"a query must be an object (mapping or JSON text), got {type(query).__name__}"
    )


def infer_schema(source: pd.DataFrame | str | Path, **kwargs: Any) -> QuerySchema:
    """The inferred schema of a DataFrame or a CSV/Parquet file.

    ``kwargs`` go to :meth:`QuerySchema.from_frame` or
    :func:`~rowvoi.query.schema_from_file` (``columns``, ``types``,
    ``max_categories``, ``max_limit``).

    Raises
    ------
    TypeError
        For a SQLite connection (declare its schema) or another type.
    """
    if isinstance(source, pd.DataFrame):
        return QuerySchema.from_frame(source, **kwargs)
    if isinstance(source, (str, Path)):
        return schema_from_file(source, **kwargs)
    raise TypeError(f"cannot infer a schema from {type(source).__name__}; pass schema=")


def run_query(
    source: pd.DataFrame | str | Path | sqlite3.Connection,
    query: DFQuery | Mapping[str, Any] | str,
    schema: QuerySchema | None = None,
    *,
    engine: str | None = None,
    table: str | None = None,
) -> QueryResult:
    """Validate a query and run it: the safe way in for model output.

    ``query`` is data only (a :class:`DFQuery`, a JSON-like mapping or JSON
    text); it is checked against ``schema`` before anything touches the
    source, and the executors never evaluate strings.

    Parameters
    ----------
    source : DataFrame, path or sqlite3.Connection
        A DataFrame (pandas by default), a ``.csv``/``.parquet`` path
        (DuckDB), or a SQLite connection (with ``table``).
    query : DFQuery, mapping or str
    schema : QuerySchema, optional
        The allow-list. Default: inferred from a DataFrame or file
        (:func:`infer_schema`); required for SQLite.
    engine : {"pandas", "duckdb", "sqlite"}, optional
        Override the default executor for a DataFrame; a file always uses
        DuckDB and a connection SQLite.
    table : str, optional
        The table of a SQLite connection.

    Returns
    -------
    QueryResult

    Raises
    ------
    QueryError
        The query is invalid (every problem listed) or the source does not
        fit the schema.
    ValueError
        An unknown ``engine``, or one that cannot read this source.
    """
    query = parse_query(query)
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if isinstance(source, pd.DataFrame):
        engine = engine or "pandas"
        if engine == "pandas":
            return execute_pandas(source, query, schema)
        if engine == "duckdb":
            return execute_duckdb(source, query, schema)
        return execute_sqlite(source, query, schema)
    if isinstance(source, sqlite3.Connection):
        if engine not in (None, "sqlite"):
            raise ValueError(f"a SQLite connection runs on engine 'sqlite', not {engine!r}")
        return execute_sqlite(source, query, schema, table=table)
    if isinstance(source, (str, Path)):
        if engine not in (None, "duckdb"):
            raise ValueError(
                f"a file runs on engine 'duckdb', not {engine!r}; load it into "
                "a DataFrame for pandas"
            )
        return execute_duckdb(source, query, schema)
    raise TypeError(
        f"source must be a DataFrame, a file path or a sqlite3.Connection, got "
        f"{type(source).__name__}"
    )
