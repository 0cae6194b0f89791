"""Text analysis: the Analyzer, the stemmer against PyStemmer, bad input."""

import pytest

from rowvoi.errors import InvalidArgumentError
from rowvoi.index.text import (
    ANALYZER_VERSION,
    STOPWORDS,
    UNICODE_VERSION,
    Analyzer,
    is_stopword,
    stem,
)


def test_default_pipeline():
    a = Analyzer()
    assert a.tokenize("The Running dogs were HAPPILY jumping!") == [
        "run",
        "dog",
        "happili",
        "jump",
    ]
    assert a("Caf\u00e9s na\u00efvely") == ["cafe", "naiv"]
    assert a.tokenize("") == []
    assert a.tokenize("the and of it") == []


def test_options_change_the_terms():
    text = "The Runners RAN"
    assert Analyzer(stem=False).tokenize(text) == ["runners", "ran"]
    assert Analyzer(stopwords=False, stem=False).tokenize(text) == ["the", "runners", "ran"]
    assert Analyzer(lowercase=False, stem=False, stopwords=False).tokenize(text) == [
        "The",
        "Runners",
        "RAN",
    ]
    assert Analyzer(strip_accents=False, stem=False).tokenize("caf\u00e9") == ["caf\u00e9"]
    assert Analyzer(min_token_len=4, stem=False).tokenize("an ox runs far away") == [
        "runs",
        "away",
    ]
    assert Analyzer(max_token_len=3, stem=False, stopwords=False).tokenize("an ox runs") == [
        "an",
        "ox",
    ]


def test_unicode_normalisation():
    a = Analyzer(stem=False, stopwords=False)
    assert a.tokenize("STRA\u00dfE \u00c6ther \u00d8resund") == ["strasse", "aether", "oresund"]
    assert a.tokenize("cafe\u0301") == ["cafe"]  # decomposed accent
    assert a.tokenize("\u0419\u043e\u0433\u0443\u0440\u0442") == [
        "\u0439\u043e\u0433\u0443\u0440\u0442"
    ]
    assert a.tokenize("\u6771\u4eac\u306f") == ["\u6771", "\u4eac", "\u306f"]
    assert a.tokenize("x\u2014y\U0001f600z") == ["x", "y", "z"]
    assert UNICODE_VERSION.count(".") == 2


def test_invalid_utf8_policy():
    with pytest.raises(InvalidArgumentError, match="byte offset 3") as info:
        Analyzer().tokenize(b"ok \xff")
    assert isinstance(info.value, ValueError)
    assert Analyzer(on_invalid_utf8="replace").tokenize(b"ab\xffcd") == ["ab", "cd"]
    with pytest.raises(ValueError, match="lone surrogate"):
        Analyzer().tokenize("bad \ud800 text")
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        Analyzer().tokenize_many(["fine", b"\xc3"])


def test_settings_validation_and_round_trip():
    for kwargs, err in [
        (dict(stem="yes"), TypeError),
        (dict(min_token_len=0), ValueError),
        (dict(max_token_len=300), ValueError),
        (dict(min_token_len=5, max_token_len=4), ValueError),
        (dict(on_invalid_utf8="ignore"), ValueError),
        (dict(min_token_len=1.5), TypeError),
    ]:
        with pytest.raises(err):
            Analyzer(**kwargs)
    a = Analyzer(stem=False, min_token_len=2, on_invalid_utf8="replace")
    d = a.to_dict()
    assert d["version"] == ANALYZER_VERSION
    assert Analyzer.from_dict(d) == a
    assert hash(Analyzer.from_dict(d)) == hash(a)
    assert a != Analyzer()
    with pytest.raises(ValueError, match="analyzer version"):
        Analyzer.from_dict({**d, "version": ANALYZER_VERSION + 1})
    with pytest.raises(ValueError, match="unknown"):
        Analyzer.from_dict({**d, "colour": 1})
    with pytest.raises(TypeError):
        Analyzer().tokenize(42)
    assert "stem=False" in repr(a)


def test_stopwords():
    assert "the" in STOPWORDS and "theory" not in STOPWORDS
    assert all(is_stopword(w) for w in STOPWORDS)
    assert not is_stopword("The")
    assert len(STOPWORDS) > 100


def test_stem_known_words():
    pairs = {
        "caresses": "caress",
        "ponies": "poni",
        "ties": "tie",
        "hopping": "hop",
        "hoping": "hope",
        "generously": "generous",
        "skies": "sky",
        "dying": "die",
        "news": "news",
        "proceed": "proceed",
        "exceeding": "exceed",
        "inning": "inning",
    }
    assert {w: stem(w) for w in pairs} == pairs
    assert stem("") == ""
    with pytest.raises(ValueError, match="byte offset"):
        stem(b"ab\xff")


def _word_list():
    english_words = pytest.importorskip("english_words")
    words = sorted(english_words.get_english_words_set(["web2", "gcide"], lower=True, alpha=True))
    # inflected forms exercise the suffix rules the dictionary forms miss
    extra = []
    for w in words[::9]:
        extra += [w + "s", w + "ed", w + "ing", w + "ly", w + "ness", w + "'s", w + "ational"]
    return words + extra


@pytest.mark.stress
def test_stemmer_matches_pystemmer_on_a_large_word_list():
    Stemmer = pytest.importorskip("Stemmer")
    ref = Stemmer.Stemmer("english")
    words = _word_list()
    assert len(words) > 300_000
    got = [stem(w) for w in words]
    want = ref.stemWords(words)
    diff = [(w, g, r) for w, g, r in zip(words, got, want) if g != r]
    assert diff == []


def test_stemmer_matches_pystemmer_on_non_ascii():
    Stemmer = pytest.importorskip("Stemmer")
    ref = Stemmer.Stemmer("english")
    words = [
        "na\u00efvely",
        "fa\u00e7ades",
        "r\u00e9sum\u00e9s",
        "\u00fcberly",
        "caf\u00e9ing",
        "\u0437\u0434\u0440\u0430\u0432\u0441\u0442\u0432\u0443\u0439",
        "ni\u00f1os",
        "it's",
        "'quoted'",
        "YELLING",
        "Mixed-Case",
        "x" * 300,
    ]
    assert [stem(w) for w in words] == ref.stemWords(words)
