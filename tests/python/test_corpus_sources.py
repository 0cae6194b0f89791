"""Corpus sources, strategies, embedder specs and the registry."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import (
    Chunked,
    CorpusNotFound,
    CorpusStore,
    Fields,
    IndexPlan,
    Surface,
    WholeText,
    build,
    content_hash_signal,
    from_dataframe,
    from_files,
    from_mapping,
    from_records,
    from_records_file,
    make_embedder,
    registry,
    resolve_fetcher,
    search,
    strategy_from_spec,
    strategy_to_spec,
    text_of,
)
from rowvoi.corpus.embedders import embedder_for_id, spec_for_id
from rowvoi.corpus.indexing.strategy import strategy_id


def test_from_files_is_lazy_and_skips_noise(tmp_path):
    (tmp_path / "a.md").write_text("alpha")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("beta")
    (tmp_path / "c.py").write_text("print()")
    (tmp_path / "bin.md").write_bytes(b"\x00\x01binary")
    for noisy in (".git", "node_modules", ".hidden", "__pycache__"):
        (tmp_path / noisy).mkdir()
        (tmp_path / noisy / "x.md").write_text("noise")
    (tmp_path / ".dot.md").write_text("hidden file")
    src = from_files(tmp_path, name="docs")
    assert [a for a, _ in src.items()] == ["a.md", "sub/b.txt"]
    assert src.get("sub/b.txt") == "beta"
    meta = src.filter_fields("a.md", "alpha", {})
    assert meta == {"path": str(tmp_path / "a.md"), "name": "a.md", "suffix": ".md"}
    assert [a for a, _ in from_files(tmp_path, pattern=r"\.py$").items()] == ["c.py"]
    assert "__pycache__/x.md" in [a for a, _ in from_files(tmp_path, exclude=()).items()]
    (tmp_path / "late.md").write_text("added later")
    assert "late.md" in [a for a, _ in src.items()]  # rescanned per iteration
    with pytest.raises(ValueError, match="not a regular expression"):
        from_files(tmp_path, pattern="(")
    with pytest.raises(KeyError):
        src.get("../outside.md")


def test_from_files_pointer_rides_on_hits(tmp_path):
    (tmp_path / "wing.md").write_text("lift of a wing")
    c = build(from_files(tmp_path, embedder="hashing:16"), store=CorpusStore.memory())
    hit = search(c, "wing", mode="lexical")[0]
    assert hit.pointer == str(tmp_path / "wing.md")


def test_from_records_ids_and_metadata():
    src = from_records(
        name="r",
        fetcher=lambda: [{"id": 1, "text": "a", "year": 1999}, {"id": "x", "text": "b"}],
        metadata_keys=["year"],
    )
    assert [(a, src.metadata_of(a, r)) for a, r in src.items()] == [
        ("1", {"year": 1999}),
        ("x", {"year": None}),
    ]
    assert isinstance(src.indexing_strategy, Chunked)
    with pytest.raises(ValueError, match="no 'id'"):
        list(from_records(name="r", fetcher=lambda: [{"text": "a"}]).items())
    with pytest.raises(ValueError, match="repeated"):
        list(from_records(name="r", fetcher=lambda: [{"id": 1}, {"id": 1.0}]).items())
    with pytest.raises(TypeError, match="not a mapping"):
        list(from_records(name="r", fetcher=lambda: ["text"]).items())


def test_resolve_fetcher():
    assert resolve_fetcher("json:dumps") is json.dumps
    assert resolve_fetcher("json.dumps") is json.dumps
    assert resolve_fetcher("rowvoi.corpus.indexing.sources:CorpusSource.items") is not None
    with pytest.raises(ValueError, match="cannot import module"):
        resolve_fetcher("no_such_module_xyz:f")
    with pytest.raises(ValueError, match="has no attribute"):
        resolve_fetcher("json:nothing_here")
    with pytest.raises(TypeError):
        resolve_fetcher(3)
    with pytest.raises(ValueError):
        resolve_fetcher("nodots")


def test_records_files(tmp_path):
    rows = [{"id": 1, "text": "wing lift", "year": 1960}, {"id": 2, "text": "heat", "year": None}]
    jl = tmp_path / "r.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    csv = tmp_path / "r.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    pq = tmp_path / "r.parquet"
    pd.DataFrame(rows).to_parquet(pq)
    for f in (jl, csv, pq):
        src = from_records_file(f, name="r", metadata_keys=["year"])
        got = [(a, r["text"], src.metadata_of(a, r)["year"]) for a, r in src.items()]
        assert got[0] == ("1", "wing lift", 1960) and got[1][:2] == ("2", "heat"), f
        assert got[1][2] is None
        assert src.spec["kind"] == "records" and src.spec["path"] == str(f)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: not valid JSON"):
        list(from_records_file(bad, name="r").items())
    (tmp_path / "r.txt").write_text("id,text")
    with pytest.raises(ValueError, match="records files are"):
        list(from_records_file(tmp_path / "r.txt", name="r").items())


def test_from_dataframe_types_fields():
    df = pd.DataFrame(
        {
            "text": ["wing lift", "heat pipe", "shock wave"],
            "year": [1958, 1962, 1970],
            "venue": pd.Categorical(["JAS", "AIAA", "JAS"]),
            "when": pd.to_datetime(["1958-01-01", "1962-05-05", "1970-12-31"]),
        },
        index=["a", "b", "c"],
    )
    src = from_dataframe(df, name="p", metadata_columns=["year", "venue", "when"])
    assert src.filter_types == {"year": "numeric", "venue": "categorical", "when": "date"}
    c = build(src, embedder="hashing:16", store=CorpusStore.memory())
    assert c.info()["fields"] == {"year": "numeric", "venue": "categorical", "when": "date"}
    got = search(
        c,
        "wing heat shock",
        mode="lexical",
        filter={"when": {"$gte": "1960-01-01"}, "venue": "aiaa"},
    )
    assert [h.artifact_id for h in got] == ["b"]
    with pytest.raises(ValueError, match="no column 'nope'"):
        from_dataframe(df, name="p", metadata_columns=["nope"])


def test_content_hash_signal():
    assert content_hash_signal("a", "x") != content_hash_signal("a", b"x")
    assert content_hash_signal("a", {"b": [1, 2]}) != content_hash_signal("a", {"b": [2, 1]})
    assert content_hash_signal("a", {"b": 1, "c": 2}) == content_hash_signal("z", {"c": 2, "b": 1})


def test_text_of():
    assert text_of("x") == "x" and text_of(None) == "" and text_of(b"\xff") == "\ufffd"
    assert text_of({"title": "T", "n": 3, "body": "B"}) == "T\n\nB"
    assert text_of({"text": "t"}, "body") == ""
    assert text_of(42) == "42"


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab .\n!"), max_size=600),
    size=st.integers(1, 120),
    overlap_frac=st.floats(0, 0.95),
)
def test_chunk_spans_cover_the_text(text, size, overlap_frac):
    overlap = min(size - 1, int(size * overlap_frac))
    spans = Chunked(chunk_size=size, overlap=overlap).spans(text)
    if not text:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s0, e0), (s1, _e1) in itertools.pairwise(spans):
        assert s0 < s1 <= e0, (spans, text)  # progress, no gap
    assert all(0 < e - s <= size for s, e in spans)


def test_chunk_surfaces_metadata():
    text = "Sentence one is here. Sentence two follows it. " * 20
    surfaces = Chunked(chunk_size=120, overlap=30).surfaces("a", text)
    n = len(surfaces)
    assert n > 5
    for i, s in enumerate(surfaces):
        assert s.metadata["chunk_index"] == i and s.metadata["n_chunks"] == n
        assert text[s.metadata["start"] : s.metadata["end"]] == s.text
        assert s.granularity == "chunk" and s.kind == "chunk"
    with pytest.raises(ValueError):
        Chunked(chunk_size=10, overlap=10)
    with pytest.raises(ValueError):
        Chunked(chunk_size=0)
    with pytest.raises(ValueError):
        Chunked(max_tokens=0)


def test_token_chunks_fit_minilm():
    from tokenizers import Tokenizer

    from rowvoi.index.embed import locate_minilm

    tok = Tokenizer.from_file(str(locate_minilm()[1]))
    text = (
        "The boundary-layer thickness grows like x^(4/5) in turbulent flow; "
        "see Schlichting (1960), eq. 21.7. "
    ) * 60
    surfaces = Chunked(max_tokens=250).surfaces("a", text)
    assert len(surfaces) > 3
    for s in surfaces:
        assert len(tok.encode(s.text).ids) <= 256  # with [CLS] and [SEP]
    assert Chunked(max_tokens=250).surfaces("a", "") == []
    small = Chunked(max_tokens=5, overlap=0).surfaces("a", "one two three four five six seven")
    assert [s.text for s in small] == ["one two three four five", "six seven"]


def test_fields_strategy():
    f = Fields(("title", "abstract"), chunked=("abstract",), chunk_size=20, overlap=0)
    plan = f.decompose(
        "p", {"title": " Wings ", "abstract": "Lift. Drag. Stall. Spin.", "year": 1}
    )
    assert [(s.kind, s.granularity) for s in plan.surfaces] == [
        ("title", "field"),
        ("abstract", "chunk"),
        ("abstract", "chunk"),
    ]
    assert f.decompose("p", {"abstract": ""}).surfaces == []
    with pytest.raises(TypeError, match="needs a mapping"):
        f.decompose("p", "text")
    with pytest.raises(ValueError):
        Fields(("a", "a"))
    with pytest.raises(ValueError):
        Fields(("a",), chunked=("b",))
    with pytest.raises(TypeError):
        Fields("title")


def test_strategy_specs_and_ids():
    for s in (
        WholeText(),
        WholeText(text_key="body", kind="doc"),
        Chunked(max_tokens=100),
        Fields(("t", "w"), chunked=("w",), chunk_size=300, overlap=30),
    ):
        spec = strategy_to_spec(s)
        assert json.loads(json.dumps(spec)) == spec
        back = strategy_from_spec(spec)
        assert back == s and strategy_id(back) == strategy_id(s)
    assert strategy_id(Chunked(chunk_size=100)) != strategy_id(Chunked(chunk_size=101))
    assert strategy_from_spec(None) is None
    with pytest.raises(ValueError, match="unknown strategy"):
        strategy_from_spec({"name": "Nope"})
    with pytest.raises(ValueError):
        strategy_from_spec({"name": "Chunked", "params": {"size": 3}})

    class Custom:
        def decompose(self, artifact_id, raw):
            return IndexPlan({}, [Surface(artifact_id, "x", str(raw))])

    with pytest.raises(ValueError, match="not a shipped strategy"):
        strategy_to_spec(Custom())
    assert strategy_id(Custom()).startswith("custom:")
    with pytest.raises(TypeError):
        from_mapping({}, strategy=object())


def test_embedder_specs():
    h = make_embedder("hashing")
    assert h.dim == 384 and h.spec == "hashing" and spec_for_id(h.embedder_id) == "hashing"
    assert make_embedder("light").embedder_id == h.embedder_id
    h64 = make_embedder("Hashing:64")
    assert embedder_for_id(h64.embedder_id).embedder_id == h64.embedder_id
    v = h64.embed(["a b c", "..."])
    assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v[0]), 1) and not v[1].any()
    with pytest.raises(ValueError):
        make_embedder("hashing:0")
    m = make_embedder("minilm")
    assert m.dim == 384 and m.embedder_id.startswith("minilm-l6-v2:")
    assert spec_for_id(m.embedder_id) == "minilm"


def test_registry_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("wing")
    entry = registry.register(
        "notes",
        "files",
        root=str(root),
        pattern=r"\.md$",
        embedder="hashing:16",
        strategy=Chunked(chunk_size=300),
    )
    assert entry["strategy"]["name"] == "Chunked"
    doc = json.loads((tmp_path / "home" / "corpora.json").read_text())
    assert doc["version"] == 1 and doc["format"] == "rowvoi-corpora"
    # keys of later versions survive a re-registration
    doc["corpora"]["notes"]["maintenance"] = {"reindex": {"on": "manual"}}
    (tmp_path / "home" / "corpora.json").write_text(json.dumps(doc))
    registry.register("notes", "files", root=str(root), embedder="hashing:16")
    assert registry.get("notes")["maintenance"] == {"reindex": {"on": "manual"}}
    c = registry.build_corpus("notes")
    assert c.last_build.n_new == 1
    src = registry.source_for("notes")
    assert src.spec["root"] == str(root)
    registry.register("papers", "records", fetcher="json:loads", metadata_keys=["year"])
    assert sorted(registry.registered()) == ["notes", "papers"]
    for bad in (
        {"kind": "skills"},
        {"kind": "files"},
        {"kind": "records"},
        {"kind": "files", "root": "x", "fetcher": "a:b"},
        {"kind": "records", "path": "a", "fetcher": "a:b"},
    ):
        kind = bad.pop("kind")
        with pytest.raises(ValueError):
            registry.register("bad", kind, **bad)
    with pytest.raises(ValueError, match="embedder specs as strings"):
        registry.register("bad", "files", root=str(root), embedder=len)
    with pytest.raises(CorpusNotFound, match="not registered"):
        registry.source_for("ghost")
    registry.unregister("papers")
    registry.unregister("ghost")
    assert sorted(registry.registered()) == ["notes"]
