"""Every docstring example in the package runs as a doctest."""

import doctest
import importlib

import pytest

MODULES = [
    "rowvoi",
    "rowvoi.core",
    "rowvoi.errors",
    "rowvoi._validate",
    "rowvoi._suggest",
    "rowvoi.frame",
    "rowvoi.setcover",
    "rowvoi.keys",
    "rowvoi.config",
    "rowvoi._paths",
    "rowvoi.text",
    "rowvoi.lexical",
    "rowvoi.idset",
    "rowvoi.rag.context",
    "rowvoi.rag.protocols",
    "rowvoi.rag.questions",
    "rowvoi.rag.retrieval",
    "rowvoi.rag.claude",
    "rowvoi.policies",
    "rowvoi.session",
    "rowvoi.ml",
    "rowvoi.prob_keys",
    "rowvoi.eval",
    "rowvoi.dense",
    "rowvoi.embed",
    "rowvoi._rwlock",
    "rowvoi._atomic",
    "rowvoi.query",
    "rowvoi.query.model",
    "rowvoi.query.values",
    "rowvoi.query.schema",
    "rowvoi.query.validate",
    "rowvoi.query.result",
    "rowvoi.query.frames",
    "rowvoi.query.pandas_exec",
    "rowvoi.query.sql",
    "rowvoi.query.sqlite_exec",
    "rowvoi.query.duckdb_exec",
    "rowvoi.query.run",
    "rowvoi.query.planner",
    "rowvoi.dask.keys",
    "rowvoi.dask.belief",
    "rowvoi.corpus",
    "rowvoi.corpus.base",
    "rowvoi.corpus.paths",
    "rowvoi.corpus.embedders",
    "rowvoi.corpus.strategy",
    "rowvoi.corpus.sources",
    "rowvoi.corpus._confine",
    "rowvoi.corpus.store",
    "rowvoi.corpus.records",
    "rowvoi.corpus.index",
    "rowvoi.corpus.retrieve",
    "rowvoi.corpus.registry",
    "rowvoi.corpus.cli",
    "rowvoi.corpus.maintenance",
    "rowvoi.corpus.maintain_cli",
    # after the search (select, expand, disclose, discover, fusion, tools)
    "rowvoi.corpus.selection",
    "rowvoi.corpus.fusion",
    "rowvoi.corpus.expansion",
    "rowvoi.corpus.disclosure",
    "rowvoi.corpus.discovery",
    "rowvoi.corpus.tools",
    # retrieval evaluation
    "rowvoi.corpus.eval",
    "rowvoi.corpus.eval.cases",
    "rowvoi.corpus.eval.metrics",
    "rowvoi.corpus.eval.retrieval",
    "rowvoi.corpus.eval.selection",
    "rowvoi.corpus.eval.robustness",
    "rowvoi.corpus.eval.graded",
    "rowvoi.corpus.eval.generate",
    "rowvoi.corpus.eval.plots",
    "rowvoi.corpus.eval_cli",
    "rowvoi.corpus.edges",
    "rowvoi.rag.corpus",
    "rowvoi.graph",
    "rowvoi.graph._time",
    "rowvoi.graph.store",
    "rowvoi.graph.selection",
    "rowvoi.graph.text",
    "rowvoi.graph.walk",
    "rowvoi.graph.kuzu_store",
    # calibrated abstention
    "rowvoi.corpus.calibration",
    "rowvoi.corpus.calibrate_cli",
    "rowvoi.graph.corpus",
    "rowvoi.graph.cli",
    # what every verb of the command line shares
    "rowvoi._cli_common",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
