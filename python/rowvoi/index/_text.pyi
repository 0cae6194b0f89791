"""Type stubs of the compiled module ``rowvoi.index._text`` (cython/index/_text.pyx).

The public API is :mod:`rowvoi.index.text`.
"""

from collections.abc import Iterable
from typing import Final, Literal, TypedDict

from typing_extensions import disjoint_base

ANALYZER_VERSION: Final[int]
MAX_TOKEN_LEN: Final[int]

class _AnalyzerOptions(TypedDict):
    """The analyzer options as a dict (the form rowvoi.index.text.Analyzer keeps)."""

    lowercase: bool
    strip_accents: bool
    stopwords: bool
    stem: bool
    min_token_len: int
    max_token_len: int
    utf8: Literal["strict", "replace"]

def default_options() -> _AnalyzerOptions: ...

@disjoint_base
class AnalyzerCore:
    """Holds one rv_analyzer_options."""

    def __init__(self, options: _AnalyzerOptions) -> None: ...
    def tokenize(self, text: str | bytes) -> list[str]: ...
    def tokenize_many(self, texts: Iterable[str | bytes]) -> list[list[str]]: ...

def stem(word: str | bytes) -> str: ...
def is_stopword(word: str | bytes) -> bool: ...
def stopwords() -> tuple[str, ...]: ...
def unicode_version() -> str: ...
