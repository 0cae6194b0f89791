"""Every docstring example in the package runs as a doctest."""

import doctest
import importlib

import pytest

MODULES = [
    "rowvoi",
    "rowvoi.core",
    "rowvoi.errors",
    "rowvoi.frame",
    "rowvoi.setcover",
    "rowvoi.keys",
    "rowvoi.config",
    "rowvoi.text",
    "rowvoi.lexical",
    "rowvoi.idset",
    "rowvoi.rag.context",
    "rowvoi.rag.protocols",
    "rowvoi.rag.questions",
    "rowvoi.rag.retrieval",
    "rowvoi.policies",
    "rowvoi.session",
    "rowvoi.ml",
    "rowvoi.prob_keys",
    "rowvoi.eval",
    "rowvoi.dense",
    "rowvoi.embed",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
