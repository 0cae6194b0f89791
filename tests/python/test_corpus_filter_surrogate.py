"""A lone surrogate in a corpus search's filter is a QueryError naming the
corpus (the corpus's SQLite filter path validates as the query executors
do), and ``rowvoi search --filter`` exits 1 with that message: issue 28,
item 5."""

import json

import pytest

from rowvoi.cli.main import main
from rowvoi.corpus import CorpusStore, build, from_mapping, search
from rowvoi.errors import QueryError

DOCS = {
    "a": {"text": "lift of a wing", "venue": "JAS", "title": "Wings"},
    "b": {"text": "heat in a pipe", "venue": "JFM", "title": "Pipes"},
}


def _corpus():
    src = from_mapping(
        DOCS,
        embedder="hashing:32",
        metadata_of=lambda aid, raw: {"venue": raw["venue"], "title": raw["title"]},
        filter_types={"venue": "categorical", "title": "text"},
    )
    return build(src, store=CorpusStore.memory())


@pytest.mark.parametrize(
    "flt",
    [
        {"title": "W\ud800"},
        {"title": {"$contains": "\udfff"}},
        {"title": {"$in": ["Wings", "\ud83d\ude00"[0]]}},
        {"venue": "\ud800"},
        {"$or": [{"venue": "JAS"}, {"title": {"$ne": "x\udc80"}}]},
    ],
)
@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_a_lone_surrogate_in_a_corpus_filter_is_a_query_error(flt, mode):
    corpus = _corpus()
    with pytest.raises(QueryError, match=r"lone surrogate .* not valid Unicode text") as err:
        search(corpus, "wing", mode=mode, filter=flt)
    assert str(err.value).startswith("the corpus at ")
    str(err.value).encode("utf-8")
    # valid text still filters
    assert [
        h.artifact_id for h in search(corpus, "wing", mode=mode, filter={"title": "Wings"})
    ] == ["a"]


def test_cli_search_with_a_lone_surrogate_filter_exits_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    recs = tmp_path / "r.jsonl"
    recs.write_text("\n".join(json.dumps({"id": k, **v}) for k, v in DOCS.items()))
    argv = ["build", "p", "--records", str(recs), "--embedder", "hashing"]
    assert main([*argv, "--metadata-keys", "venue,title"]) == 0
    capsys.readouterr()
    # JSON's \ud800 escape is how a lone surrogate arrives from a shell
    code = main(["search", "p", "wing", "--filter", '{"title": "\\ud800"}'])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "lone surrogate (U+D800)" in err and "Traceback" not in err
