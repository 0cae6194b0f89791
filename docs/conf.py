"""Sphinx configuration of the rowvoi documentation.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest

The API pages are autodoc over the installed package's numpydoc docstrings;
the C reference is read from ``include/`` by ``_ext/rowvoi_cheader.py``; the
CLI page comes from the argparse parser that also renders the man page.
"""

from __future__ import annotations

import doctest
import sys
import warnings
from pathlib import Path

import rowvoi

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "rowvoi"
author = "the rowvoi authors"
copyright = "the rowvoi authors"
release = rowvoi.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "numpydoc",
    "rowvoi_cheader",
    "rowvoi_cli",
    "rowvoi_docstring_tests",
]

exclude_patterns = ["_build"]
templates_path: list[str] = []
html_static_path: list[str] = []
html_theme = "alabaster"
html_title = f"rowvoi {release}"
html_theme_options = {"description": "value of information over candidate rows"}

# Autodoc: members in source order, signatures with their annotations.
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
# numpydoc renders Parameters/Returns/Raises; members are listed by autodoc.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# The doctest builder runs every example of every rendered docstring (see
# _ext/rowvoi_docstring_tests.py) with the flags the pytest suite uses.
doctest_default_flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
doctest_test_doctest_blocks = "default"

# Where the C header and the man page live (the repository root).
rowvoi_project_root = str(HERE.parent)

# numpydoc reports a section it does not know (and so drops) as a Python
# UserWarning, which Sphinx's -W does not see: make it fail the build too.
warnings.filterwarnings("error", category=UserWarning, module=r"numpydoc(\..*)?$")
