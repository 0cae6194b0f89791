"""The RAG guide is the acceptance test: every testcode block, run in order in
one namespace (as Sphinx doctest does), must print exactly its testoutput."""

import contextlib
import io
import re
import textwrap
from pathlib import Path

GUIDE = Path(__file__).with_name("rag_guide.rst")


def blocks():
    """(code, expected output) pairs in document order."""
    text = GUIDE.read_text()
    pattern = re.compile(r"^\.\. (testcode|testoutput)::\n\n((?:(?:   .*)?\n)+)", re.M)
    out = []
    pending = None
    for m in pattern.finditer(text):
        body = textwrap.dedent(m.group(2)).strip("\n") + "\n"
        if m.group(1) == "testcode":
            pending = body
        else:
            assert pending is not None, "testoutput without testcode"
            out.append((pending, body))
            pending = None
    return out


def test_guide_has_seven_examples():
    assert len(blocks()) == 7


def test_guide_examples_print_exactly():
    namespace: dict = {"__name__": "rag_guide"}
    for i, (code, expected) in enumerate(blocks(), 1):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, f"<rag guide block {i}>", "exec"), namespace)  # noqa: S102
        assert buf.getvalue() == expected, f"block {i}:\n{code}"
