"""Structured queries without code: one validated query tree, three executors.

A language model (or a person) writes a query as *data*: a :class:`DFQuery`
or its JSON. :func:`validate_query` checks it against a :class:`QuerySchema`
(the allow-list of columns, operators and aggregations) and builds an
immutable typed tree; the pandas, DuckDB and SQLite executors all run that
same tree and give the same records. :func:`run_query` does both steps.

The filter language (also used by the corpus metadata filters)
---------------------------------------------------------------
Mongo-style: ``{"age": {"$gte": 30}, "sector": "non-profit"}`` (keys at one
level are ANDed; a bare value means ``$eq``), ``{"$or": [{...}, {...}]}``,
``{"$and": [...]}``. Operators: ``$eq $ne $in $nin $lt $lte $gt $gte
$exists $contains``. Per type (defaults; a schema may narrow them):

* numeric, date: ``$eq $ne $in $nin $lt $lte $gt $gte $exists``;
* text: the same plus ``$contains``;
* categorical: ``$eq $ne $in $nin $exists`` -- values fold onto the
  canonical spelling (case, spaces, hyphens, underscores ignored); unknown
  values are refused with the allowed list.

Values must fit the column: numbers (finite, 64-bit integers) for numeric,
ISO-8601 strings for dates, strings for text and categorical. ``null`` is
not a value: use ``{"$exists": false}``.

Missing values (NaN, None, NaT, SQL NULL) -- one rule everywhere
-----------------------------------------------------------------
``$eq $in $lt $lte $gt $gte $contains`` never match a missing value;
``$ne`` and ``$nin`` always do (each is the exact complement of its positive
twin, as in MongoDB); ``$exists: true`` / ``false`` selects present /
missing values. Float NaN is missing, in every engine.

Results
-------
* ``$contains`` is case-sensitive; text compares and sorts by Unicode code
  point (binary collation) in every engine.
* Order: ``order_by`` keys first (missing values **last** in both
  directions), then the default order: input row order for ``filter``,
  first occurrence for ``select`` (which drops duplicate rows), group keys
  ascending (missing last) for grouped aggregates.
* Aggregations: ``count`` of a column counts its present values, ``count``
  alone counts rows; ``sum`` of no values is 0; ``mean``/``min``/``max`` of
  no values are ``null``. ``mean`` is a float; ``sum``/``min``/``max`` are
  ints for ``integer`` numeric columns, floats for other numeric columns.
  Outputs are named ``<agg>_<column>`` (``mean_income``) or ``count``.
* Values are JSON-ready: ``int``, ``float``, ``str``, ``None`` (NaN and
  infinities become ``None``); dates are ISO strings (``2024-01-31``, or
  ``2024-01-31T12:30:00`` when there is a time of day), microsecond
  resolution, timezone-aware values in UTC.
* ``limit`` is clamped to the schema's ``max_limit``
  (:data:`MAX_QUERY_LIMIT` by default); the result reports ``clamped`` and
  ``truncated``.

Limits
------
:data:`MAX_FILTER_DEPTH` levels of ``$and``/``$or`` nesting,
:data:`MAX_IN_VALUES` values per ``$in``/``$nin`` list (longer lists are
refused, not cut), :data:`MAX_FILTER_VALUES` values per filter.

Safety
------
No executor evaluates strings: pandas goes through an operator map (never
``eval``, ``exec`` or ``DataFrame.query``); SQL takes identifiers only from
the schema, always quoted, and every value as a bound parameter.

>>> import pandas as pd
>>> from rowvoi.query import QuerySchema, run_query
>>> df = pd.DataFrame({"sector": ["Non-Profit", "Corporate", "Non-Profit", "Corporate"],
...                    "income": [40.0, 90.0, 60.0, 110.0]})
>>> schema = QuerySchema.from_frame(df)
>>> run_query(df, {"operation": "filtered_aggregate", "filters": {"sector": "non_profit"},
...                "group_by": "sector", "aggregations": {"income": "mean"}},
...           schema).records
[{'sector': 'Non-Profit', 'mean_income': 50.0}]
"""

from typing import TYPE_CHECKING

from rowvoi import _lazy
from rowvoi.errors import QueryError
from rowvoi.query.model import (
    AGGREGATIONS,
    COLUMN_TYPES,
    MAX_FILTER_DEPTH,
    MAX_FILTER_VALUES,
    MAX_IN_VALUES,
    MAX_QUERY_LIMIT,
    OPERATIONS,
    OPERATORS,
    Aggregation,
    DFQuery,
    OrderKey,
)
from rowvoi.query.result import QueryResult
from rowvoi.query.schema import (
    DEFAULT_AGGREGATIONS,
    DEFAULT_OPERATORS,
    ColumnSpec,
    QuerySchema,
    fold_category,
)
from rowvoi.query.sql import compile_where, quote_ident
from rowvoi.query.validate import FilterNode, ValidQuery, parse_filter, validate_query
from rowvoi.query.values import SQLITE_DATE_FORMAT, sqlite_value

if TYPE_CHECKING:  # the names _LAZY loads on first use, for type checkers
    from rowvoi.query.duckdb_exec import execute_duckdb, schema_from_file
    from rowvoi.query.pandas_exec import execute_pandas
    from rowvoi.query.planner import PlannedAnswer, QueryPlanner, plan_and_run
    from rowvoi.query.run import ENGINES, infer_schema, parse_query, run_query
    from rowvoi.query.sqlite_exec import compile_filter, execute_sqlite

# The executors and the planner (pandas, DuckDB) load on first use of one of
# their names: a corpus search validates and compiles filters with the
# modules above and never needs them.
_LAZY, __getattr__, __dir__ = _lazy.exports(
    __name__,
    {
        "rowvoi.query.duckdb_exec": "execute_duckdb schema_from_file",
        "rowvoi.query.pandas_exec": "execute_pandas",
        "rowvoi.query.planner": "PlannedAnswer QueryPlanner plan_and_run",
        "rowvoi.query.run": "ENGINES infer_schema parse_query run_query",
        "rowvoi.query.sqlite_exec": "compile_filter execute_sqlite",
    },
)

__all__ = [
    "AGGREGATIONS",
    "COLUMN_TYPES",
    "DEFAULT_AGGREGATIONS",
    "DEFAULT_OPERATORS",
    "ENGINES",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_VALUES",
    "MAX_IN_VALUES",
    "MAX_QUERY_LIMIT",
    "OPERATIONS",
    "OPERATORS",
    "SQLITE_DATE_FORMAT",
    "Aggregation",
    "ColumnSpec",
    "DFQuery",
    "FilterNode",
    "OrderKey",
    "PlannedAnswer",
    "QueryError",
    "QueryPlanner",
    "QueryResult",
    "QuerySchema",
    "ValidQuery",
    "compile_filter",
    "compile_where",
    "execute_duckdb",
    "execute_pandas",
    "execute_sqlite",
    "fold_category",
    "infer_schema",
    "parse_filter",
    "parse_query",
    "plan_and_run",
    "quote_ident",
    "run_query",
    "schema_from_file",
    "sqlite_value",
    "validate_query",
]
