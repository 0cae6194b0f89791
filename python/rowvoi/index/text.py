"""Text analysis: normalisation, tokens, English stopwords and stemming.

The analysis runs in the C engine (``include/rowvoi/text.h``); the same
code analyses documents and queries of :class:`rowvoi.index.lexical.BM25Index`,
which records its analyzer's settings so that a query is always analysed
the way its index was.

Pipeline
--------
1. **Decode UTF-8.** ``str`` input is always valid. ``bytes`` input that is
   not valid UTF-8 raises :class:`ValueError` naming the byte offset
   (``on_invalid_utf8="error"``, the default), or reads each maximal invalid
   sequence as U+FFFD, which separates tokens (``on_invalid_utf8="replace"``).
2. **Split** into maximal runs of letters and digits (Unicode categories L*
   and N*); combining marks continue a token; anything else separates. Han
   ideographs and Hiragana are one token per character.
3. **Normalise**: simple Unicode lowercase; for Latin letters, strip accents
   (``"é"`` -> ``"e"``, ``"ß"`` -> ``"ss"``, ``"ø"`` -> ``"o"``). Other scripts
   keep their marks: Cyrillic ``"й"`` stays ``"й"``.
4. **Filter**: drop tokens shorter than ``min_token_len`` or longer than
   ``max_token_len`` code points (after normalisation), then English
   stopwords (:data:`STOPWORDS`).
5. **Stem** with the English Snowball stemmer (Porter2), identical to the
   ``PyStemmer`` package's ``english`` algorithm.

Examples
--------
>>> from rowvoi.index.text import Analyzer, stem
>>> Analyzer().tokenize("The Runners were running to the Café!")
['runner', 'run', 'cafe']
>>> Analyzer(stem=False, stopwords=False).tokenize("The Runners were running")
['the', 'runners', 'were', 'running']
>>> stem("generously"), stem("skies")
('generous', 'sky')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from rowvoi import _validate as _v
from rowvoi.index import _text

if TYPE_CHECKING:
    from rowvoi.index._text import _AnalyzerOptions

__all__ = [
    "Analyzer",
    "stem",
    "is_stopword",
    "STOPWORDS",
    "ANALYZER_VERSION",
    "UNICODE_VERSION",
    "MAX_TOKEN_LEN",
]

#: Version of the analysis pipeline; indexes record it and refuse to load
#: under another version (their terms would no longer match queries).
ANALYZER_VERSION: int = _text.ANALYZER_VERSION

#: Unicode version of the character tables.
UNICODE_VERSION: str = _text.unicode_version()

#: Largest allowed ``max_token_len``.
MAX_TOKEN_LEN: int = _text.MAX_TOKEN_LEN

#: The English stopword list (matched on normalised tokens, before stemming).
STOPWORDS: frozenset[str] = frozenset(_text.stopwords())

_POLICIES: dict[str, Literal["strict", "replace"]] = {"error": "strict", "replace": "replace"}


class Analyzer:
    """Turns text into index terms; the settings are recorded with every index.

    Parameters
    ----------
    lowercase : bool, default True
        Apply simple Unicode lowercasing.
    strip_accents : bool, default True
        Fold accented Latin letters to ASCII (``"é"`` -> ``"e"``).
    stopwords : bool, default True
        Drop English stopwords (:data:`STOPWORDS`).
    stem : bool, default True
        Stem with the English Snowball (Porter2) stemmer.
    min_token_len, max_token_len : int, default 1 and 64
        Keep tokens whose length in code points, after normalisation, is in
        this range (``1 <= min <= max <= 255``); longer tokens are dropped,
        not truncated.
    on_invalid_utf8 : {"error", "replace"}, default "error"
        What to do with ``bytes`` input that is not valid UTF-8: raise
        :class:`ValueError` naming the byte offset, or read each invalid
        sequence as U+FFFD (a separator).

    Examples
    --------
    >>> a = Analyzer(min_token_len=3)
    >>> a.tokenize("An ox and 42 cats: 東京")
    ['cat']
    >>> a.tokenize(b"caf\\xc3\\xa9 \\xff ok")
    Traceback (most recent call last):
    ...
    rowvoi.errors.InvalidArgumentError: RV_E_INVALID_ARG: invalid UTF-8 at byte offset 6 (byte 0xFF)
    >>> Analyzer(on_invalid_utf8="replace").tokenize(b"caf\\xc3\\xa9 \\xff ok")
    ['cafe', 'ok']
    >>> Analyzer.from_dict(a.to_dict()) == a
    True
    """

    __slots__ = ("_core", "_settings")

    def __init__(
        self,
        *,
        lowercase: bool = True,
        strip_accents: bool = True,
        stopwords: bool = True,
        stem: bool = True,
        min_token_len: int = 1,
        max_token_len: int = 64,
        on_invalid_utf8: str = "error",
    ) -> None:
        if on_invalid_utf8 not in _POLICIES:
            raise ValueError(
                f"on_invalid_utf8 = {on_invalid_utf8!r}: must be 'error' or 'replace'"
            )
        # the public settings, in signature order (to_dict, repr, equality)
        settings: dict[str, bool | int | str] = {
            "lowercase": _v.flag("lowercase", lowercase),
            "strip_accents": _v.flag("strip_accents", strip_accents),
            "stopwords": _v.flag("stopwords", stopwords),
            "stem": _v.flag("stem", stem),
            "min_token_len": _v.integer("min_token_len", min_token_len, 1, MAX_TOKEN_LEN),
            "max_token_len": _v.integer("max_token_len", max_token_len, 1, MAX_TOKEN_LEN),
            "on_invalid_utf8": on_invalid_utf8,
        }
        if int(settings["min_token_len"]) > int(settings["max_token_len"]):
            raise ValueError(
                f"min_token_len = {min_token_len} exceeds max_token_len = {max_token_len}"
            )
        self._settings = settings
        self._core = _text.AnalyzerCore(self._engine_options())

    def _engine_options(self) -> _AnalyzerOptions:
        s = self._settings
        return {
            "lowercase": bool(s["lowercase"]),
            "strip_accents": bool(s["strip_accents"]),
            "stopwords": bool(s["stopwords"]),
            "stem": bool(s["stem"]),
            "min_token_len": int(s["min_token_len"]),
            "max_token_len": int(s["max_token_len"]),
            "utf8": _POLICIES[str(s["on_invalid_utf8"])],
        }

    @classmethod
    def _from_engine(cls, options: Mapping[str, Any]) -> Analyzer:
        s = dict(options)
        s["on_invalid_utf8"] = "error" if s.pop("utf8") == "strict" else "replace"
        return cls(**s)

    def tokenize(self, text: str | bytes) -> list[str]:
        """Analyse one text into its terms, in order (repeats kept).

        >>> Analyzer().tokenize("Generalisations of generalised categories")
        ['generalis', 'generalis', 'categori']
        """
        return self._core.tokenize(text)

    __call__ = tokenize

    def tokenize_many(self, texts: Iterable[str | bytes]) -> list[list[str]]:
        """Analyse several texts; errors name the offending item.

        >>> Analyzer().tokenize_many(["Two dogs", "", "the"])
        [['two', 'dog'], [], []]
        """
        return self._core.tokenize_many(texts)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (JSON-ready), including the version.

        >>> Analyzer(stem=False).to_dict()["stem"]
        False
        """
        d: dict[str, Any] = dict(self._settings)
        d["version"] = ANALYZER_VERSION
        return d

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> Analyzer:
        """Rebuild an analyzer from :meth:`to_dict` output.

        Raises :class:`ValueError` when the recorded version differs from
        :data:`ANALYZER_VERSION` (the terms would not match).
        """
        s = dict(settings)
        version = s.pop("version", ANALYZER_VERSION)
        if version != ANALYZER_VERSION:
            raise ValueError(
                f"analyzer settings are from analyzer version {version}; this rowvoi "
                f"analyses text with version {ANALYZER_VERSION}"
            )
        unknown = set(s) - {
            "lowercase",
            "strip_accents",
            "stopwords",
            "stem",
            "min_token_len",
            "max_token_len",
            "on_invalid_utf8",
        }
        if unknown:
            raise ValueError(f"unknown analyzer settings: {sorted(unknown)}")
        return cls(**s)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Analyzer):
            return NotImplemented
        return self._settings == other._settings

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._settings.items())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._settings.items())
        return f"Analyzer({args})"


def stem(word: str | bytes) -> str:
    """The English Snowball (Porter2) stem of one word, taken as is.

    The word is not lowercased or split: the stemmer treats characters other
    than ``a``-``z`` and the apostrophe as consonants, exactly as Snowball
    does.

    >>> [stem(w) for w in ["caresses", "ponies", "hopping", "international"]]
    ['caress', 'poni', 'hop', 'internat']
    """
    return _text.stem(word)


def is_stopword(word: str | bytes) -> bool:
    """Whether a normalised (lowercase) word is in :data:`STOPWORDS`.

    >>> is_stopword("the"), is_stopword("The"), is_stopword("theory")
    (True, False, False)
    """
    return _text.is_stopword(word)
