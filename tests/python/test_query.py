"""rowvoi.query: the query object, the schema, validation, three executors, the CLI."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rowvoi.cli.main import main
from rowvoi.errors import QueryError
from rowvoi.query import (
    MAX_FILTER_DEPTH,
    MAX_IN_VALUES,
    MAX_QUERY_LIMIT,
    ColumnSpec,
    DFQuery,
    QueryPlanner,
    QuerySchema,
    compile_filter,
    execute_duckdb,
    execute_pandas,
    execute_sqlite,
    parse_filter,
    plan_and_run,
    run_query,
    schema_from_file,
    sqlite_value,
    validate_query,
)

pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parents[2]
TAXPAYERS = ROOT / "examples" / "data" / "taxpayers.csv"
ENGINES = [execute_pandas, execute_duckdb, execute_sqlite]


def all_engines(df, query, schema):
    """Records from every executor; asserts they agree and returns them."""
    results = [run(df, query, schema) for run in ENGINES]
    for r in results[1:]:
        assert r.records == results[0].records, (r.engine, r.records, results[0].records)
        assert (r.truncated, r.clamped, r.limit) == (
            results[0].truncated,
            results[0].clamped,
            results[0].limit,
        )
    return results[0]


@pytest.fixture()
def people():
    return pd.DataFrame(
        {
            "name": ["Ann", "bob", "Cy", "Dee", "Ed", None],
            "age": pd.array([31, None, 45, 31, 22, 60], dtype="Int64"),
            "income": [50.5, 20.0, np.nan, 70.25, 20.0, 0.0],
            "sector": ["Non-Profit", "Corporate", "Non-Profit", None, "Corporate", "Gov"],
            "joined": pd.to_datetime(
                ["2024-01-31", "2023-06-01 08:30", None, "2024-01-31", "2022-12-25", "2020-02-29"],
                format="ISO8601",
            ),
        }
    )


@pytest.fixture()
def schema():
    return QuerySchema(
        {
            "name": "text",
            "age": {"type": "numeric", "integer": True},
            "income": "numeric",
            "sector": {"type": "categorical", "values": ["Non-Profit", "Corporate", "Gov"]},
            "joined": "date",
        },
        max_limit=100,
    )


# ------------------------------------------------------------------ the seed's example
def test_seed_grouped_mean_with_normalised_filter_value(people, schema):
    for spelling in ("non-profit", "Non Profit", "NON_PROFIT", "nonprofit"):
        r = all_engines(
            people,
            {
                "operation": "filtered_aggregate",
                "filters": {"sector": spelling},
                "group_by": "sector",
                "aggregations": {"income": "mean"},
            },
            schema,
        )
        assert r.records == [{"sector": "Non-Profit", "mean_income": 50.5}]
    r = all_engines(
        people,
        {
            "operation": "aggregate",
            "group_by": ["sector"],
            "aggregations": {"income": ["mean", "max"], "age": "sum"},
        },
        schema,
    )
    assert r.records == [
        {"sector": "Corporate", "mean_income": 20.0, "max_income": 20.0, "sum_age": 22},
        {"sector": "Gov", "mean_income": 0.0, "max_income": 0.0, "sum_age": 60},
        {"sector": "Non-Profit", "mean_income": 50.5, "max_income": 50.5, "sum_age": 76},
        {"sector": None, "mean_income": 70.25, "max_income": 70.25, "sum_age": 31},
    ]


def test_taxpayers_file_through_duckdb_matches_pandas():
    df = pd.read_csv(TAXPAYERS)
    schema = QuerySchema.from_frame(df, types={"filed_on": "date"})
    q = {
        "operation": "filtered_aggregate",
        "filters": {"entity_type": "non profit"},
        "group_by": "year",
        "aggregations": {"income": "mean", "*": "count"},
    }
    on_file = run_query(TAXPAYERS, q, schema)
    assert on_file.engine == "duckdb"
    assert on_file.records == execute_pandas(df, q, schema).records
    assert on_file.records == [
        {"year": 2021, "mean_income": 202500.0, "count": 2},
        {"year": 2022, "mean_income": 315000.0, "count": 2},
    ]


# ------------------------------------------------------------------ missing values
MISSING_RULES = [
    ({"age": 31}, ["Ann", "Dee"]),
    ({"age": {"$ne": 31}}, ["bob", "Cy", "Ed", None]),  # missing age matches $ne
    ({"age": {"$in": [22, 45]}}, ["Cy", "Ed"]),
    ({"age": {"$nin": [22, 45]}}, ["Ann", "bob", "Dee", None]),  # and $nin
    ({"age": {"$gt": 30}}, ["Ann", "Cy", "Dee", None]),
    ({"age": {"$exists": False}}, ["bob"]),
    ({"income": {"$exists": False}}, ["Cy"]),  # NaN is missing
    ({"income": {"$lte": 20}}, ["bob", "Ed", None]),
    ({"sector": {"$ne": "gov"}}, ["Ann", "bob", "Cy", "Dee", "Ed"]),
    ({"name": {"$contains": "b"}}, ["bob"]),  # case-sensitive
    ({"name": {"$contains": "B"}}, []),
    ({"name": {"$lt": "a"}}, ["Ann", "Cy", "Dee", "Ed"]),  # code point order
    ({"joined": {"$gte": "2024-01-31"}}, ["Ann", "Dee"]),
    ({"joined": {"$lt": "2023-06-01T08:30:00Z"}}, ["Ed", None]),
    ({"$or": [{"age": {"$exists": False}}, {"sector": {"$exists": False}}]}, ["bob", "Dee"]),
    (
        {"$and": [{"income": {"$gt": 10}}, {"$or": [{"age": 31}, {"name": "bob"}]}]},
        ["Ann", "bob", "Dee"],
    ),
]


@pytest.mark.parametrize("filters,names", MISSING_RULES)
def test_one_missing_value_rule_on_every_engine(people, schema, filters, names):
    r = all_engines(
        people, {"operation": "filter", "filters": filters, "columns": ["name"]}, schema
    )
    assert [rec["name"] for rec in r.records] == names


def test_nulls_sort_last_in_both_directions_and_ties_keep_input_order(people, schema):
    asc = all_engines(
        people,
        {
            "operation": "filter",
            "filters": {"name": {"$exists": True}},
            "columns": ["name", "age"],
            "order_by": "age",
        },
        schema,
    )
    assert [r["name"] for r in asc.records] == ["Ed", "Ann", "Dee", "Cy", "bob"]
    desc = all_engines(
        people,
        {
            "operation": "filter",
            "filters": {"name": {"$exists": True}},
            "columns": ["name", "age"],
            "order_by": {"column": "age", "direction": "desc"},
        },
        schema,
    )
    assert [r["name"] for r in desc.records] == ["Cy", "Ann", "Dee", "Ed", "bob"]
    sel = all_engines(people, {"operation": "select", "columns": ["sector"]}, schema)
    assert [r["sector"] for r in sel.records] == ["Non-Profit", "Corporate", None, "Gov"]
    sel = all_engines(
        people,
        {
            "operation": "select",
            "columns": ["sector"],
            "order_by": {"column": "sector", "direction": "desc"},
        },
        schema,
    )
    assert [r["sector"] for r in sel.records] == ["Non-Profit", "Gov", "Corporate", None]


# ------------------------------------------------------------------ result values
def test_results_are_json_ready_with_int_float_and_iso_dates(people, schema):
    r = all_engines(
        people, {"operation": "filter", "filters": {"age": {"$exists": True}}, "limit": 2}, schema
    )
    assert r.records[0] == {
        "name": "Ann",
        "age": 31,
        "income": 50.5,
        "sector": "Non-Profit",
        "joined": "2024-01-31",
    }
    assert type(r.records[0]["age"]) is int and type(r.records[0]["income"]) is float
    assert r.truncated and not r.clamped and r.limit == 2
    r = all_engines(people, {"operation": "filter", "filters": {"name": "bob"}}, schema)
    assert r.records[0]["joined"] == "2023-06-01T08:30:00" and r.records[0]["age"] is None
    agg = all_engines(
        people,
        {
            "operation": "aggregate",
            "aggregations": [
                "count",
                {"agg": "count", "column": "age"},
                {"agg": "sum", "column": "age"},
                {"agg": "mean", "column": "age"},
                {"agg": "min", "column": "joined"},
                {"agg": "max", "column": "name"},
                {"agg": "sum", "column": "income"},
            ],
        },
        schema,
    )
    rec = agg.records[0]
    assert rec == {
        "count": 6,
        "count_age": 5,
        "sum_age": 189,
        "mean_age": 37.8,
        "min_joined": "2020-02-29",
        "max_name": "bob",
        "sum_income": 160.75,
    }
    assert [type(rec[k]) for k in ("count", "sum_age", "mean_age", "sum_income")] == [
        int,
        int,
        float,
        float,
    ]
    text = json.dumps(agg.to_dict(), allow_nan=False)
    assert json.loads(text)["records"][0] == rec
    assert agg.scalar and "value" not in agg.to_dict()


def test_empty_aggregates_sum_to_zero_and_the_rest_is_null(people, schema):
    r = all_engines(
        people,
        {
            "operation": "filtered_aggregate",
            "filters": {"age": {"$gt": 99}},
            "aggregations": {"age": ["sum", "mean", "min"], "income": "sum", "*": "count"},
        },
        schema,
    )
    assert r.records == [
        {"sum_age": 0, "mean_age": None, "min_age": None, "sum_income": 0.0, "count": 0}
    ]
    one = all_engines(people, {"operation": "aggregate", "aggregations": "count"}, schema)
    assert one.value == 6 and one.to_dict()["value"] == 6


def test_infinities_compare_but_come_out_as_null():
    df = pd.DataFrame({"x": [1.0, np.inf, -np.inf, 2.0]})
    schema = QuerySchema({"x": "numeric"})
    r = all_engines(df, {"operation": "filter", "filters": {"x": {"$gt": 1.5}}}, schema)
    assert r.records == [{"x": None}, {"x": 2.0}]
    json.dumps(r.to_dict(), allow_nan=False)


def test_integer_sums_beyond_64_bits_are_exact_or_refused():
    big = 2**62
    df = pd.DataFrame({"n": np.array([big, big, big], dtype=np.int64)})
    schema = QuerySchema({"n": {"type": "numeric", "integer": True}})
    q = {"operation": "aggregate", "aggregations": {"n": "sum"}}
    assert execute_pandas(df, q, schema).value == 3 * big
    assert execute_duckdb(df, q, schema).value == 3 * big
    with pytest.raises(OverflowError):
        execute_sqlite(df, q, schema)


def test_timezone_aware_dates_are_compared_in_utc():
    df = pd.DataFrame(
        {
            "t": pd.to_datetime(
                ["2024-01-02T01:30:00", "2024-01-01T10:00:00"], utc=True
            ).tz_convert("America/Sao_Paulo")
        }
    )
    schema = QuerySchema({"t": "date"})
    r = all_engines(df, {"operation": "filter", "filters": {"t": {"$gte": "2024-01-02"}}}, schema)
    assert r.records == [{"t": "2024-01-02T01:30:00"}]


# ------------------------------------------------------------------ attacks
@pytest.mark.parametrize(
    "name", ["a; DROP TABLE x", "__class__", 'x"', "'; --", "__dict__", "income) OR 1=1 --"]
)
def test_foreign_column_names_are_refused_everywhere(people, schema, name):
    queries = [
        {"operation": "select", "columns": [name]},
        {"operation": "filter", "filters": {name: 1}},
        {"operation": "aggregate", "aggregations": {name: "sum"}},
        {"operation": "aggregate", "group_by": name, "aggregations": "count"},
        {"operation": "filter", "filters": {"age": 1}, "order_by": name},
    ]
    for q in queries:
        for run in ENGINES:
            with pytest.raises(QueryError) as info:
                run(people, q, schema)
            assert repr(name)[1:-1] in str(info.value) or name in str(info.value)
            assert "allowed" in str(info.value)


def test_a_real_column_named_like_sql_is_just_a_column(tmp_path):
    evil = 'a"; DROP TABLE meta; --'
    df = pd.DataFrame({evil: [1, 2, 3], "k": ["x", "y", "x"]})
    schema = QuerySchema({evil: {"type": "numeric", "integer": True}, "k": "categorical"})
    r = all_engines(
        df,
        {
            "operation": "filtered_aggregate",
            "filters": {evil: {"$gte": 2}},
            "group_by": "k",
            "aggregations": {evil: "sum"},
        },
        schema,
    )
    assert r.records == [{"k": "x", f"sum_{evil}": 3}, {"k": "y", f"sum_{evil}": 2}]
    con = sqlite3.connect(tmp_path / "m.db")
    con.execute(
        f'CREATE TABLE meta (id INTEGER PRIMARY KEY, "{evil.replace(chr(34), 2 * chr(34))}" '
        "INTEGER)"
    )
    con.executemany("INSERT INTO meta VALUES (?, ?)", [(1, 1), (2, 5)])
    sql, params = compile_filter(
        {evil: {"$gt": 2}}, schema.restrict([evil]), table="meta", id_column="id"
    )
    assert [r[0] for r in con.execute(sql, params)] == [2]
    assert con.execute("SELECT count(*) FROM meta").fetchone() == (2,)


@pytest.mark.parametrize(
    "op", ["$where", "$regex", "$function", "$expr", "$not", "$and", "$text", "eq", "$eval"]
)
def test_operators_outside_the_map_are_refused(people, schema, op):
    with pytest.raises(QueryError) as info:
        validate_query({"operation": "filter", "filters": {"name": {op: "x"}}}, schema)
    assert "name" in str(info.value) and "$contains" in str(info.value)
    with pytest.raises(QueryError, match="unknown operator"):
        validate_query({"operation": "filter", "filters": {"$where": "sleep(1)"}}, schema)


def test_operator_not_allowed_on_the_type_names_type_and_allowed_list(schema):
    with pytest.raises(QueryError) as info:
        validate_query({"operation": "filter", "filters": {"sector": {"$gt": "Gov"}}}, schema)
    assert str(info.value) == (
        "filters.sector.$gt: $gt is not allowed on categorical column "
        "sector; allowed: $eq, $ne, $in, $nin, $exists"
    )


def nested(depth):
    doc = {"age": 1}
    for _ in range(depth):
        doc = {"$and": [doc]}
    return doc


def test_nesting_deeper_than_the_limit_is_refused(people, schema):
    ok = all_engines(people, {"operation": "filter", "filters": nested(MAX_FILTER_DEPTH)}, schema)
    assert ok.records == []
    with pytest.raises(QueryError, match=f"nested more than {MAX_FILTER_DEPTH} deep"):
        validate_query({"operation": "filter", "filters": nested(MAX_FILTER_DEPTH + 1)}, schema)
    with pytest.raises(QueryError, match="nested more than"):  # no RecursionError
        validate_query({"operation": "filter", "filters": nested(50_000)}, schema)


def test_limit_of_ten_to_the_twelve_is_clamped_and_reported(people, schema):
    r = all_engines(people, {"operation": "select", "columns": ["age"], "limit": 10**12}, schema)
    assert r.clamped and r.limit == 100 and r.requested_limit == 10**12 and not r.truncated
    assert r.to_dict()["clamped"] is True
    default = QuerySchema({"a": "numeric"})
    assert default.max_limit == MAX_QUERY_LIMIT
    big = pd.DataFrame({"a": np.arange(MAX_QUERY_LIMIT + 5, dtype=float)})
    r = all_engines(big, {"operation": "select", "columns": ["a"]}, default)
    assert len(r.records) == MAX_QUERY_LIMIT and r.truncated and not r.clamped
    for bad in (0, -1, "10", True, 2.5):
        with pytest.raises(QueryError, match="limit: expected a positive integer"):
            validate_query({"operation": "select", "columns": ["age"], "limit": bad}, schema)


def test_in_lists_above_the_cap_are_refused_not_cut(people, schema):
    at_cap = list(range(MAX_IN_VALUES))
    r = all_engines(
        people,
        {"operation": "filter", "filters": {"age": {"$in": at_cap}}, "columns": ["name"]},
        schema,
    )
    assert [x["name"] for x in r.records] == ["Ann", "Cy", "Dee", "Ed", None]
    for size in (MAX_IN_VALUES + 1, 10**6):
        with pytest.raises(QueryError, match=f"{size} values; at most {MAX_IN_VALUES}"):
            validate_query(
                {"operation": "filter", "filters": {"age": {"$nin": list(range(size))}}}, schema
            )


@pytest.mark.parametrize(
    "filters,message",
    [
        ({"age": {"$gt": "old"}}, "filters.age.$gt: age is numeric: expected a number, got 'old'"),
        ({"age": True}, "filters.age: age is numeric: expected a number, got True"),
        ({"age": {"$gt": float("nan")}}, "expected a finite number"),
        ({"age": 10**30}, "outside the 64-bit integer range"),
        ({"joined": {"$lt": "last week"}}, "joined is date: expected an ISO-8601 date"),
        ({"name": 3}, "name is text: expected a string, got 3"),
        ({"name": None}, 'use {"$exists": false}'),
        ({"sector": "Charity"}, "'Charity' is not a value of sector; allowed: 'Non-Profit'"),
        ({"age": {"$exists": "yes"}}, "expected true or false"),
        ({"age": {"$in": 3}}, "expected a list of values"),
        ({"name": {"$contains": 3}}, "expected a string"),
        ({"$or": []}, "expected a non-empty list of conditions"),
        ({"age": {"x": 1}}, "a condition is a value or an object of operators"),
        ({"age": [1, 2]}, "expected a number, got a list of 2"),
    ],
)
def test_wrong_types_are_refused_with_a_message_naming_the_field(schema, filters, message):
    with pytest.raises(QueryError) as info:
        validate_query({"operation": "filter", "filters": filters}, schema)
    assert message in str(info.value)


def test_every_problem_is_listed_at_once(schema):
    with pytest.raises(QueryError) as info:
        validate_query(
            {
                "operation": "aggregate",
                "columns": ["age"],
                "filters": {"nope": 1, "age": {"$gt": "x"}},
                "aggregations": {"sector": "mean", "age": "median"},
                "order_by": "zzz",
            },
            schema,
        )
    problems = info.value.problems
    assert len(problems) == 7, problems
    assert str(info.value).startswith("7 problems:\n  - ")
    assert isinstance(info.value, ValueError)


def test_operation_rules(schema):
    cases = [
        ({"operation": "select"}, "'select' needs at least one column"),
        ({"operation": "filter"}, "'filter' needs filters"),
        (
            {"operation": "aggregate", "aggregations": "count", "filters": {"age": 1}},
            "use 'filtered_aggregate'",
        ),
        ({"operation": "filtered_aggregate", "aggregations": "count"}, "use 'aggregate'"),
        (
            {"operation": "filter", "filters": {"age": 1}, "group_by": "age"},
            "takes no aggregations or group_by",
        ),
        ({"operation": "delete"}, "operation: expected one of select, filter"),
        (
            {"operation": "aggregate", "aggregations": {"age": "sum"}, "group_by": "sum_age"},
            "unknown column 'sum_age'",
        ),
        ({"operation": "aggregate", "aggregations": ["sum"]}, "sum needs a column"),
        ({"operation": "aggregate", "aggregations": {"age": ["max", "max"]}}, "occur twice"),
        ({"operation": "select", "columns": ["age", "age"]}, "'age' given twice"),
        ({"operation": "select", "columns": ["age"], "where": {}}, "unknown key 'where'"),
    ]
    for query, message in cases:
        with pytest.raises(QueryError) as info:
            validate_query(query, schema)
        assert message in str(info.value), (query, str(info.value))


def test_dfquery_forms_normalise_to_one_shape():
    a = DFQuery.from_dict(
        {
            "operation": "aggregate",
            "group_by": "s",
            "aggregations": {"x": ["mean", "max"], "*": "count"},
            "order_by": "mean_x",
        }
    )
    b = DFQuery(
        "aggregate",
        group_by=["s"],
        aggregations=[{"agg": "mean", "column": "x"}, {"agg": "max", "column": "x"}, "count"],
        order_by=[{"column": "mean_x", "direction": "asc"}],
    )
    assert a == b
    assert [g.name for g in a.aggregations] == ["mean_x", "max_x", "count"]
    assert DFQuery.from_dict(a.to_dict()) == a
    with pytest.raises(QueryError, match="a query must be an object"):
        DFQuery.from_dict(["select"])


def test_validated_query_is_normalised(schema):
    vq = validate_query(
        {
            "operation": "filter",
            "filters": {"sector": {"$in": ["gov", "GOV"]}, "joined": {"$gt": "2024-01-31Z"}},
            "limit": 500,
        },
        schema,
    )
    assert vq.query.filters == {
        "$and": [{"sector": {"$in": ["Gov"]}}, {"joined": {"$gt": "2024-01-31"}}]
    }
    assert vq.query.limit == 100 and vq.clamped
    assert vq.query.columns == schema.names


# ------------------------------------------------------------------ schema
def test_categorical_normaliser_aliases_ambiguity_and_unknowns():
    spec = ColumnSpec(
        "s",
        "categorical",
        values=["Non-Profit", "non profit", "Corp"],
        aliases={"NGO": "Non-Profit"},
    )
    assert spec.normalize("Non-Profit") == "Non-Profit"
    assert spec.normalize("non profit") == "non profit"
    assert spec.normalize("ngo") == "Non-Profit"
    assert spec.normalize("CORP") == "Corp"
    with pytest.raises(ValueError, match="could mean 'Non-Profit', 'non profit'"):
        spec.normalize("NONPROFIT")
    with pytest.raises(ValueError, match="not a value of s"):
        spec.normalize("Gov")
    with pytest.raises(QueryError, match="not one of its values"):
        ColumnSpec("s", "categorical", values=["A"], aliases={"b": "B"})
    assert ColumnSpec("s", "categorical").normalize("anything") == "anything"


def test_schema_validation_and_reserved_names():
    with pytest.raises(QueryError) as info:
        QuerySchema(
            {
                "a": "number",
                "__rowvoi_row": "numeric",
                "b": {"type": "text", "operators": ["$regex"]},
                "c": {"kind": 1},
            },
            max_limit=0,
        )
    text = str(info.value)
    for fragment in (
        "type must be one of",
        "reserved",
        "unknown operators '$regex'",
        "unknown key 'kind'",
        "max_limit",
    ):
        assert fragment in text


def test_from_frame_infers_types_and_narrowing(people):
    inferred = QuerySchema.from_frame(people)
    assert inferred.to_dict()["columns"] == {
        "name": {"type": "text"},
        "age": {"type": "numeric", "integer": True},
        "income": {"type": "numeric"},
        "sector": {"type": "text"},  # 3 values in 5 cells: not repeated enough
        "joined": {"type": "date"},
    }
    forced = QuerySchema.from_frame(people, types={"sector": "categorical"})
    assert forced["sector"].values == ("Corporate", "Gov", "Non-Profit")
    narrow = forced.restrict(["sector", "income"]).with_column("income", aggregations=["sum"])
    assert narrow.names == ("sector", "income")
    with pytest.raises(QueryError, match="mean is not allowed on numeric column income"):
        validate_query({"operation": "aggregate", "aggregations": {"income": "mean"}}, narrow)
    assert QuerySchema.from_dict(json.loads(json.dumps(narrow.to_dict()))) == narrow
    with pytest.raises(QueryError, match="not a column of the frame"):
        QuerySchema.from_frame(people, columns=["nope"])
    flags = pd.DataFrame({"ok": [True, False]})
    assert QuerySchema.from_frame(flags).names == ()


def test_schema_from_file_agrees_with_from_frame(tmp_path):
    df = pd.read_csv(TAXPAYERS)
    for path in (tmp_path / "t.parquet", tmp_path / "t.csv"):
        if path.suffix == ".parquet":
            df.to_parquet(path)
        else:
            df.to_csv(path, index=False)
        got = schema_from_file(path)
        want = QuerySchema.from_frame(df)
        names = [n for n in want.names if n != "filed_on"]  # CSV sniffs dates, pandas not
        assert got.restrict(names) == want.restrict(names), path.suffix


def test_source_that_does_not_fit_the_schema(people, schema, tmp_path):
    bad = people.assign(age=["x", "1", "2", "3", "4", "5"])
    for run in (execute_pandas, execute_sqlite):
        with pytest.raises(QueryError, match="declared numeric but holds 'x'"):
            run(bad, {"operation": "select", "columns": ["age"]}, schema)
    with pytest.raises(QueryError, match="no column 'joined'"):
        execute_duckdb(
            people.drop(columns="joined"), {"operation": "select", "columns": ["joined"]}, schema
        )
    with pytest.raises(FileNotFoundError):
        run_query(
            tmp_path / "none.parquet",
            {"operation": "select", "columns": ["a"]},
            QuerySchema({"a": "numeric"}),
        )


# ------------------------------------------------------------------ files and SQLite
def test_parquet_and_csv_keep_file_row_order(tmp_path):
    rng = np.random.default_rng(7)
    n = 5000
    df = pd.DataFrame(
        {
            "k": rng.integers(0, 50, n),
            "v": rng.normal(size=n).round(3),
            "s": rng.choice(["a", "b", "c"], n),
        }
    )
    schema = QuerySchema.from_frame(df)
    q = {"operation": "filter", "filters": {"k": {"$lt": 5}}, "limit": 900}
    want = execute_pandas(df, q, schema).records
    df.to_parquet(tmp_path / "t.parquet", row_group_size=512)
    df.to_csv(tmp_path / "t.csv", index=False)
    for path in ("t.parquet", "t.csv"):
        assert run_query(tmp_path / path, q, schema).records == want, path
    sel = {"operation": "select", "columns": ["s", "k"], "limit": 1000}
    assert (
        run_query(tmp_path / "t.parquet", sel, schema).records
        == execute_pandas(df, sel, schema).records
    )


def test_sqlite_connection_table_and_row_column(people, schema):
    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE TABLE t (pos INTEGER, name TEXT, age INTEGER, income REAL, "
        "sector TEXT, joined TEXT)"
    )
    rows = people.iloc[::-1].reset_index(drop=True)
    for pos, rec in zip(range(len(rows) - 1, -1, -1), rows.itertuples(index=False)):
        con.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
            (
                pos,
                sqlite_value(rec.name, "text"),
                sqlite_value(rec.age, "numeric"),
                sqlite_value(rec.income, "numeric"),
                sqlite_value(rec.sector, "categorical"),
                sqlite_value(rec.joined, "date"),
            ),
        )
    q = {"operation": "filter", "filters": {"age": {"$ne": 45}}}
    got = execute_sqlite(con, q, schema, table="t", row_column="pos")
    assert got.records == execute_pandas(people, q, schema).records
    assert run_query(con, q, schema, table="t").records == got.records[::-1]  # rowid order
    with pytest.raises(QueryError, match="has no column 'extra'"):
        execute_sqlite(
            con,
            {"operation": "select", "columns": ["extra"]},
            schema.with_column("extra", type="text"),
            table="t",
        )


def test_compile_filter_for_a_metadata_table_matches_pandas(people, schema):
    con = sqlite3.connect(":memory:")
    cols = list(schema.names)
    con.execute(
        "CREATE TABLE meta (id INTEGER PRIMARY KEY, " + ", ".join(f'"{c}"' for c in cols) + ")"
    )
    for i, rec in enumerate(people.itertuples(index=False), start=100):
        con.execute(
            f"INSERT INTO meta VALUES (?{', ?' * len(cols)})",
            [i] + [sqlite_value(getattr(rec, c), schema[c].type) for c in cols],
        )
    actions = []

    def authorizer(action, *args):
        actions.append(action)
        return sqlite3.SQLITE_OK

    con.set_authorizer(authorizer)
    for filters, names in MISSING_RULES:
        sql, params = compile_filter(filters, schema, table="meta", id_column="id")
        assert "?" in sql or not params
        ids = [r[0] for r in con.execute(sql, params)]
        labels = people["name"].astype(object)
        assert [
            None if pd.isna(labels.iloc[i - 100]) else labels.iloc[i - 100] for i in ids
        ] == names, filters
    assert set(actions) <= {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
    sql, params = compile_filter(None, schema, table="meta", id_column="id")
    assert [r[0] for r in con.execute(sql, params)] == list(range(100, 106))
    with pytest.raises(QueryError) as info:
        compile_filter(
            {"lang": "en", "age": {"$contains": "3"}}, schema, table="meta", id_column="id"
        )
    assert info.value.problems == (
        "filters.lang: unknown column; allowed: name, age, income, sector, joined",
        "filters.age.$contains: $contains is not allowed on numeric column age; allowed: "
        "$eq, $ne, $in, $nin, $lt, $lte, $gt, $gte, $exists",
    )


def test_parse_filter_is_the_shared_entry(schema):
    assert parse_filter({}, schema) is None
    node = parse_filter({"age": {"$gte": 1, "$lt": 5}}, schema)
    assert node.to_doc() == {"$and": [{"age": {"$gte": 1}}, {"age": {"$lt": 5}}]}


# ------------------------------------------------------------------ threads
def test_engines_run_concurrently_from_many_threads(people, schema):
    q = {
        "operation": "filtered_aggregate",
        "filters": {"income": {"$exists": True}},
        "group_by": "sector",
        "aggregations": {"income": "mean", "age": "sum"},
    }
    want = execute_pandas(people, q, schema).records
    errors: list[BaseException] = []
    stop = threading.Event()

    def work(run):
        try:
            while not stop.is_set():
                assert run(people, q, schema).records == want
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(run,)) for run in ENGINES * 2]
    for t in threads:
        t.start()
    stop.wait(1.5)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors


# ------------------------------------------------------------------ planner
def test_plan_and_run_retries_with_the_refusal_as_feedback(people, schema):
    seen = []

    class Planner:
        def plan(self, question, schema, feedback=None):
            seen.append(feedback)
            if feedback is None:
                return '{"operation": "filter", "filters": {"agee": {"$gt": 40}}}'
            return {"operation": "filter", "filters": {"age": {"$gt": 40}}, "columns": ["name"]}

    assert isinstance(Planner(), QueryPlanner)
    answer = plan_and_run("who is over 40?", people, Planner(), schema)
    assert answer.result.records == [{"name": "Cy"}, {"name": None}]
    assert answer.attempts == 2 and "filters.agee: unknown column" in seen[1]
    assert answer.refusals == (seen[1],)

    class Stubborn:
        def plan(self, question, schema, feedback=None):
            return {"operation": "filter", "filters": {"agee": 1}}

    with pytest.raises(QueryError, match="agee"):
        plan_and_run("?", people, Stubborn(), schema, max_attempts=3)
    with pytest.raises(TypeError):
        plan_and_run("?", people, object(), schema)


def test_the_planner_example_runs():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "query_planner.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "refused, feedback to the planner" in proc.stdout
    assert (
        "{'entity_type': 'Non-Profit', 'mean_income': 315000.0, 'max_tax_owed': 0}" in proc.stdout
    )
    assert proc.stdout.rstrip().endswith("agreed on every answer.")


def test_run_query_engine_choice_and_json_text(people, schema, tmp_path):
    q = '{"operation": "select", "columns": ["sector"], "limit": 2}'
    for engine in ("pandas", "duckdb", "sqlite"):
        assert run_query(people, q, schema, engine=engine).engine == engine
    with pytest.raises(ValueError, match="engine must be one of"):
        run_query(people, q, schema, engine="spark")
    with pytest.raises(QueryError, match="not valid JSON"):
        run_query(people, "{'operation': 'select'}", schema)
    with pytest.raises(QueryError, match="not valid JSON"):
        run_query(people, "[" * 100_000, schema)


# ------------------------------------------------------------------ CLI
def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_query_text_and_json(capsys, tmp_path):
    query = tmp_path / "q.json"
    query.write_text(
        json.dumps(
            {
                "operation": "filtered_aggregate",
                "filters": {"entity_type": "non_profit"},
                "group_by": "year",
                "aggregations": {"income": "mean"},
            }
        )
    )
    code, out, _ = cli(capsys, "query", TAXPAYERS, query)
    assert code == 0
    assert out.splitlines() == [
        "year  mean_income",
        "2021     202500.0",
        "2022     315000.0",
        "(2 rows)",
    ]
    code, out, _ = cli(capsys, "query", TAXPAYERS, query, "--json")
    data = json.loads(out)
    assert data["records"] == [
        {"year": 2021, "mean_income": 202500.0},
        {"year": 2022, "mean_income": 315000.0},
    ]
    assert data["engine"] == "duckdb" and data["clamped"] is False
    parquet = tmp_path / "t.parquet"
    pd.read_csv(TAXPAYERS).to_parquet(parquet)
    code, out2, _ = cli(capsys, "query", parquet, query, "--json")
    assert json.loads(out2)["records"] == data["records"]
    query.write_text('{"operation": "aggregate", "aggregations": "count"}')
    code, out, _ = cli(capsys, "query", TAXPAYERS, query)
    assert out == "count: 16\n"


def test_cli_describe_and_schema_round_trip(capsys, tmp_path):
    code, out, _ = cli(capsys, "query", TAXPAYERS, "--describe")
    assert code == 0 and "entity_type" in out and "categorical" in out
    code, out, _ = cli(capsys, "query", TAXPAYERS, "--describe", "--json")
    schema = json.loads(out)
    assert schema["columns"]["entity_type"]["values"] == [
        "Corporation",
        "Individual",
        "Non-Profit",
        "Partnership",
    ]
    del schema["columns"]["income"]
    schema["max_limit"] = 2
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    query = tmp_path / "q.json"
    query.write_text('{"operation": "select", "columns": ["state"], "limit": 99}')
    code, out, _ = cli(capsys, "query", TAXPAYERS, query, "--schema", path, "--json")
    data = json.loads(out)
    assert data["records"] == [{"state": "CA"}, {"state": "NY"}]
    assert data["clamped"] and data["truncated"]
    query.write_text('{"operation": "aggregate", "aggregations": {"income": "sum"}}')
    code, _, err = cli(capsys, "query", TAXPAYERS, query, "--schema", path)
    assert code == 1 and "unknown column 'income'" in err


def test_cli_exit_codes(capsys, tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{nope")
    assert main(["query", str(TAXPAYERS), str(bad_json)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["query", str(TAXPAYERS)]) == 2
    capsys.readouterr()
    # a JSON file that cannot be read fails the request, as for every verb
    assert (
        main(["query", str(TAXPAYERS), str(bad_json), "--schema", str(tmp_path / "no.json")]) == 1
    )
    assert "no such file" in capsys.readouterr().err
    refused = tmp_path / "q.json"
    refused.write_text('{"operation": "filter", "filters": {"income": {"$gt": "lots"}}}')
    code, out, err = cli(capsys, "query", TAXPAYERS, refused)
    assert code == 1 and out == ""
    assert "filters.income.$gt: income is numeric: expected a number, got 'lots'" in err
    code, _, err = cli(capsys, "query", tmp_path / "none.csv", refused)
    assert code == 1 and "no such file" in err


def test_cli_reads_the_query_from_stdin(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rowvoi", "query", str(TAXPAYERS), "-", "--json"],
        input='{"operation": "select", "columns": ["state"]}',
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["records"] == [
        {"state": "CA"},
        {"state": "NY"},
        {"state": "TX"},
    ]


def test_dates_in_query_results_are_iso(people, schema):
    r = all_engines(
        people,
        {
            "operation": "aggregate",
            "group_by": "joined",
            "aggregations": "count",
            "order_by": "joined",
        },
        schema,
    )
    assert [x["joined"] for x in r.records] == [
        "2020-02-29",
        "2022-12-25",
        "2023-06-01T08:30:00",
        "2024-01-31",
        None,
    ]
    assert dt.date.fromisoformat(r.records[0]["joined"]) == dt.date(2020, 2, 29)


def test_parquet_nan_and_timezones_are_normalised_by_duckdb(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "x": pa.array([1.0, float("nan"), None, 3.0], from_pandas=False),
            "t": pa.array(
                [dt.datetime(2024, 1, 1, 23, 0, tzinfo=dt.timezone.utc)] * 4,
                type=pa.timestamp("us", tz="Europe/Berlin"),
            ),
        }
    )
    path = tmp_path / "nan.parquet"
    pq.write_table(table, path)
    schema = schema_from_file(path)
    assert schema.to_dict()["columns"] == {"x": {"type": "numeric"}, "t": {"type": "date"}}
    q = {"operation": "aggregate", "aggregations": {"x": ["mean", "count", "max"], "t": "min"}}
    assert run_query(path, q, schema).records == [
        {"mean_x": 2.0, "count_x": 2, "max_x": 3.0, "min_t": "2024-01-01T23:00:00"}
    ]
    missing = run_query(
        path, {"operation": "filter", "filters": {"x": {"$exists": False}}}, schema
    )
    assert [r["x"] for r in missing.records] == [None, None]


def test_sqlite_value_refuses_what_the_type_cannot_hold():
    assert sqlite_value(np.int64(3), "numeric") == 3 and sqlite_value(pd.NA, "text") is None
    assert (
        sqlite_value(pd.Timestamp("2024-05-06 07:08:09"), "date") == "2024-05-06T07:08:09.000000"
    )
    with pytest.raises(ValueError, match="expected a number"):
        sqlite_value("3", "numeric")
    with pytest.raises(ValueError, match="expected a string"):
        sqlite_value(3, "text")
    with pytest.raises(ValueError, match="ISO-8601"):
        sqlite_value("yesterday", "date")
