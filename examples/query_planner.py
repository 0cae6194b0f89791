"""Structured analytics without code: a planner writes JSON, rowvoi runs it safely.

A language model is asked a question about a table. Instead of writing
pandas code (which would have to be executed), it writes a query *object*;
rowvoi checks it against an allow-list schema and runs it on pandas, DuckDB
or SQLite with the same result. A refused query comes back with a message
naming every problem, which is fed to the planner for one more try.

The planner here is scripted (a dict of canned answers, with one deliberate
mistake), so the example is deterministic and needs no API key. Replace
``ScriptedPlanner.plan`` with a call to your model: put ``schema.to_dict()``
and the question in the prompt, ask for the JSON object, return it.

Run:  python examples/query_planner.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from rowvoi.query import QuerySchema, plan_and_run, run_query

DATA = Path(__file__).resolve().parent / "data" / "taxpayers.csv"

SCRIPT = {
    # The first plan for this question uses a column that does not exist
    # ("tax_rate"); the planner fixes it once it sees the refusal.
    "Average income of non-profits and corporations in 2022?": [
        {
            "operation": "filtered_aggregate",
            "filters": {"year": 2022, "entity_type": {"$in": ["non-profit", "corporation"]}},
            "group_by": "entity_type",
            "aggregations": {"income": "mean", "tax_rate": "mean"},
        },
        {
            "operation": "filtered_aggregate",
            "filters": {"year": 2022, "entity_type": {"$in": ["non-profit", "corporation"]}},
            "group_by": "entity_type",
            "aggregations": {"income": "mean", "tax_owed": "max"},
        },
    ],
    "Which taxpayers in New York owe the most?": [
        {
            "operation": "filter",
            "filters": {"state": "ny", "tax_owed": {"$gt": 0}},
            "columns": ["taxpayer_id", "entity_type", "tax_owed"],
            "order_by": {"column": "tax_owed", "direction": "desc"},
            "limit": 3,
        },
    ],
    "How many returns were filed, per state?": [
        {
            "operation": "aggregate",
            "group_by": "state",
            "aggregations": ["count", {"agg": "count", "column": "filed_on"}],
        },
    ],
}


class ScriptedPlanner:
    """A stand-in for a language model: canned query objects, in order."""

    def __init__(self, script: dict[str, list[dict]]):
        self.script = {q: list(plans) for q, plans in script.items()}

    def plan(self, question: str, schema: QuerySchema, feedback: str | None = None) -> dict:
        if feedback is not None:
            print(f"  refused, feedback to the planner:\n    {feedback}")
        return self.script[question].pop(0)


def main() -> None:
    df = pd.read_csv(DATA)
    schema = QuerySchema.from_frame(
        df,
        types={
            "entity_type": "categorical",
            "state": "categorical",
            "filed_on": "date",
            "taxpayer_id": "text",
        },
    )
    # Narrow the inferred schema: ids may be shown but not filtered on.
    schema = schema.with_column("taxpayer_id", operators=["$eq"], aggregations=["count"])
    planner = ScriptedPlanner(SCRIPT)
    for question in SCRIPT:
        print(f"Q: {question}")
        answer = plan_and_run(question, df, planner, schema)
        print(f"  query: {json.dumps(answer.query)}")
        for record in answer.result.records:
            print(f"  {record}")
        # The same query object gives the same records on DuckDB and SQLite.
        for engine in ("duckdb", "sqlite"):
            other = run_query(df, answer.query, schema, engine=engine)
            assert other.records == answer.result.records, engine
    print("pandas, DuckDB and SQLite agreed on every answer.")


if __name__ == "__main__":
    main()
