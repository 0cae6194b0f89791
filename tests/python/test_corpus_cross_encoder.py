"""rerank="cross-encoder": the ONNX cross-encoder loader, run for real.

No package ships a cross-encoder's weights, so each test builds one: an
ONNX graph with the I/O of an exported BERT sequence classifier
(``input_ids``, ``attention_mask``, optionally ``token_type_ids``, int64
``(batch, seq)`` -> one logit per pair) made with ``onnx.helper``, whose
logit is a sum anyone can compute by hand -- a weight per token id plus a
weight per segment, over the unmasked tokens, plus a bias -- beside a
``tokenizer.json`` made with ``tokenizers`` (a WordLevel vocabulary with
BERT's ``[CLS] A [SEP] B [SEP]`` pair template) or the MiniLM tokenizer
rowvoi already uses (BERT's 30,522-token vocabulary).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from rowvoi.cli.main import main as cli_main
from rowvoi.corpus import (
    CorpusStore,
    CrossEncoderReranker,
    RerankError,
    build,
    from_mapping,
    resolve_reranker,
    search,
)
from rowvoi.corpus.retrieval.rerank import CROSS_ENCODER_ENV
from rowvoi.index.embed import locate_minilm

WORDS = ["wing", "lift", "drag", "shock", "wave", "pipe", "heat", "flow", "at", "of", "the"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
VOCAB = {w: i for i, w in enumerate(SPECIAL + WORDS)}


def word_level_tokenizer() -> Tokenizer:
    """A tiny BERT-shaped tokenizer: lower-cased words, ``[UNK]`` for the
    rest, ``[CLS] A [SEP] B [SEP]`` with segment ids 0/1."""
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    return tok


def linear_model(
    token_w: np.ndarray,
    seg_w: np.ndarray | None,
    bias: float,
    *,
    flat_output: bool = False,
    n_labels: int = 1,
    inputs: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids"),
) -> bytes:
    """logit = sum over unmasked tokens of token_w[id] (+ seg_w[type]) + bias."""
    inits = [
        numpy_helper.from_array(np.tile(token_w.astype(np.float32)[:, None], n_labels), "tok_w"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.full(n_labels, bias, np.float32), "bias"),
    ]
    n = helper.make_node
    nodes = [n("Gather", ["tok_w", "input_ids"], ["tw"])]  # (batch, seq, labels)
    h = "tw"
    if seg_w is not None:
        inits.append(
            numpy_helper.from_array(np.tile(seg_w.astype(np.float32)[:, None], n_labels), "seg_w")
        )
        nodes += [n("Gather", ["seg_w", "token_type_ids"], ["sw"]), n("Add", ["tw", "sw"], ["h"])]
        h = "h"
    inits.append(numpy_helper.from_array(np.array([-1], np.int64), "axis_last"))
    nodes += [
        n("Cast", ["attention_mask"], ["mf"], to=TensorProto.FLOAT),
        n("Unsqueeze", ["mf", "axis_last"], ["m3"]),
        n("Mul", [h, "m3"], ["hm"]),
        n("ReduceSum", ["hm", "axis1"], ["s"], keepdims=0),  # (batch, labels)
        n("Add", ["s", "bias"], ["z"]),
    ]
    out_shape: list[Any] = ["batch", n_labels]
    if flat_output:
        nodes.append(n("Flatten", ["z"], ["z2"], axis=0))
        nodes.append(n("Squeeze", ["z2"], ["logits"]))
        out_shape = ["batch"]
    else:
        nodes.append(n("Identity", ["z"], ["logits"]))
    ins = [helper.make_tensor_value_info(x, TensorProto.INT64, ["batch", "seq"]) for x in inputs]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, out_shape)]
    graph = helper.make_graph(nodes, "toy_cross_encoder", ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # (an IR every onnxruntime >= 1.17 reads)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def word_weights() -> np.ndarray:
    w = np.zeros(len(VOCAB), np.float32)
    w[VOCAB["shock"]] = 2.0
    w[VOCAB["wave"]] = 1.0
    w[VOCAB["pipe"]] = -1.5
    w[VOCAB["[UNK]"]] = -0.25
    return w


SEG = np.array([0.0, 0.125], np.float32)  # each passage token adds 1/8
BIAS = -3.0


def make_folder(path: Path, model: bytes, tok: Tokenizer | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "model.onnx").write_bytes(model)
    (tok or word_level_tokenizer()).save(str(path / "tokenizer.json"))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "xenc", linear_model(word_weights(), SEG, BIAS))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def by_hand(query: str, text: str) -> float:
    """The toy model's score, from the tokenizer's rule alone: [CLS] q [SEP]
    (segment 0) then t [SEP] (segment 1)."""
    w = word_weights()

    def ids(s: str) -> list[int]:
        return [VOCAB.get(t, VOCAB["[UNK]"]) for t in s.lower().replace(".", " . ").split()]

    q, t = ids(query), ids(text)
    logit = BIAS + float(sum(w[i] for i in q) + w[VOCAB["[CLS]"]] + w[VOCAB["[SEP]"]])
    logit += float(sum(w[i] for i in t) + w[VOCAB["[SEP]"]]) + SEG[1] * (len(t) + 1)
    return sigmoid(logit)


# ------------------------------------------------------------------ scores
def test_scores_are_the_sigmoid_of_the_graphs_logit(folder: Path) -> None:
    rr = CrossEncoderReranker(folder)
    texts = ["Shock wave at the wing", "Pipe flow and heat", "lift of the wing", ""]
    got = rr("shock", texts)
    assert got == pytest.approx([by_hand("shock", t) for t in texts], abs=1e-6)
    # the same numbers from onnx's own reference runtime on the same feeds
    ref = ReferenceEvaluator(str(folder / "model.onnx"))
    tok = word_level_tokenizer()
    for t, score in zip(texts, got):
        e = tok.encode("shock", t)
        feeds = {
            "input_ids": np.array([e.ids], np.int64),
            "attention_mask": np.array([e.attention_mask], np.int64),
            "token_type_ids": np.array([e.type_ids], np.int64),
        }
        (logit,) = ref.run(None, feeds)
        assert score == pytest.approx(sigmoid(float(logit.reshape(-1)[0])), abs=1e-6)
    assert all(0.0 < s < 1.0 for s in got)
    assert rr("shock", []) == []


def test_order_follows_the_model_in_a_search(tmp_path: Path, folder: Path) -> None:
    docs = {
        "wing": "wing lift and drag",
        "shock": "shock wave on the wing",
        "pipe": "wing pipe flow of heat at the wing",
    }
    c = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory())
    plain = [h.artifact_id for h in search(c, "wing", mode="lexical")]
    got = search(c, "wing", mode="lexical", rerank=f"cross-encoder:{folder}")
    want = sorted(docs, key=lambda a: -by_hand("wing", docs[a]))
    assert want == ["shock", "wing", "pipe"] and plain != want
    assert [h.artifact_id for h in got] == want
    for h in got:
        assert h.score == pytest.approx(by_hand("wing", docs[h.artifact_id]), abs=1e-6)
        assert h.explain["rerank"]["id"].startswith("xenc-")


def test_a_score_does_not_depend_on_the_batch(folder: Path) -> None:
    rr = CrossEncoderReranker(folder)
    texts = ["shock", "shock wave at the wing " * 20, "pipe", "heat flow", "shock"]
    together = rr("wave", texts)
    alone = [rr("wave", [t])[0] for t in texts]
    assert together == alone  # exactly: no padding enters a pair's logit
    assert together[0] == together[4]
    assert rr("wave", texts[::-1]) == together[::-1]


def test_long_passages_are_truncated_to_max_length(tmp_path: Path) -> None:
    # every token weighs 1/64 and nothing else: the logit counts the tokens fed
    ones = np.full(len(VOCAB), 1 / 64, np.float32)
    f = make_folder(tmp_path / "count", linear_model(ones, None, 0.0))
    rr = CrossEncoderReranker(f, max_length=16)
    short, long = rr("wing", ["lift drag", "lift " * 500])
    assert short == pytest.approx(sigmoid(6 / 64), abs=1e-6)  # [CLS] wing [SEP] lift drag [SEP]
    assert long == pytest.approx(sigmoid(16 / 64), abs=1e-6)


def test_the_minilm_tokenizer_drives_it_as_a_real_export_would(tmp_path: Path) -> None:
    # BERT's vocabulary; the shipped file pads to a fixed length: the loader undoes it
    _, tok_path = locate_minilm()
    tok = Tokenizer.from_file(str(tok_path))
    w = np.zeros(tok.get_vocab_size(), np.float32)
    w[tok.token_to_id("shock")] = 3.0
    f = make_folder(tmp_path / "bert", linear_model(w, SEG, BIAS), tok)
    rr = CrossEncoderReranker(f)
    a, b = rr("what is a shock", ["Shock waves.", "Heat."])
    # [CLS] what is a shock [SEP] | shock waves . [SEP]  -> 2 shocks, 4 passage tokens
    assert a == pytest.approx(sigmoid(BIAS + 6.0 + 4 * 0.125), abs=1e-6)
    assert b == pytest.approx(sigmoid(BIAS + 3.0 + 3 * 0.125), abs=1e-6)


@pytest.mark.parametrize(
    "variant",
    [
        {"inputs": ("input_ids", "attention_mask")},  # an export without segment ids
        {"flat_output": True},  # logits of shape (batch,)
    ],
)
def test_export_variants_load_and_score(tmp_path: Path, variant: dict[str, Any]) -> None:
    seg = None if "inputs" in variant else SEG
    f = make_folder(tmp_path / "v", linear_model(word_weights(), seg, BIAS, **variant))
    got = CrossEncoderReranker(f)("shock", ["shock wave"])[0]
    seg_part = 0.0 if seg is None else 3 * 0.125
    assert got == pytest.approx(sigmoid(BIAS + 2.0 + 2.0 + 1.0 + seg_part), abs=1e-6)


# ------------------------------------------------------------------ specs
def test_specs_resolve_once_per_folder_and_name_the_model(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rr = resolve_reranker(f"cross-encoder:{folder}")
    assert isinstance(rr, CrossEncoderReranker)
    monkeypatch.setenv(CROSS_ENCODER_ENV, str(folder))
    assert resolve_reranker("cross-encoder") is rr
    other = make_folder(tmp_path / "other", linear_model(-word_weights(), SEG, BIAS))
    rr2 = resolve_reranker(f"cross-encoder:{other}")
    assert rr2 is not rr and rr2.rerank_id != rr.rerank_id  # type: ignore[union-attr]
    assert rr2("shock", ["shock"])[0] < 0.5 < rr("shock", ["shock"])[0]  # type: ignore[misc]
    monkeypatch.delenv(CROSS_ENCODER_ENV)
    with pytest.raises(RerankError, match=f"set {CROSS_ENCODER_ENV}=/path/to/folder"):
        resolve_reranker("cross-encoder")


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A registered corpus "notes" of two files, in a fresh rowvoi home."""
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("wing lift and drag")
    (docs / "b.txt").write_text("shock wave on the wing")
    assert cli_main(["build", "notes", "--files", str(docs), "--embedder", "hashing"]) == 0
    return "notes"


def test_the_cli_reranks_with_it(tmp_path: Path, folder: Path, notes: str, capsys: Any) -> None:
    import json

    capsys.readouterr()
    argv = ["search", "notes", "wing", "--mode", "lexical", "--json"]
    assert cli_main([*argv, "--rerank", f"cross-encoder:{folder}"]) == 0
    hits = json.loads(capsys.readouterr().out)
    hits = hits["hits"] if isinstance(hits, dict) else hits
    assert [h["artifact_id"] for h in hits] == ["b.txt", "a.txt"]
    assert hits[0]["score"] == pytest.approx(by_hand("wing", "shock wave on the wing"), abs=1e-6)
    assert cli_main([*argv, "--rerank", f"cross-encoder:{tmp_path / 'nowhere'}"]) == 1
    assert "no model.onnx in" in capsys.readouterr().err


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("missing", ["model.onnx", "tokenizer.json"])
def test_a_missing_file_is_named(folder: Path, missing: str) -> None:
    (folder / missing).unlink()
    with pytest.raises(
        RerankError, match=f"no {missing} in .*holds model.onnx and tokenizer.json"
    ):
        CrossEncoderReranker(folder)


def test_a_corrupt_model_is_a_clear_error(folder: Path) -> None:
    (folder / "model.onnx").write_bytes(b"\x08\x07not a protobuf at all" * 10)
    with pytest.raises(RerankError, match=r"model.onnx is not a loadable ONNX model .*export"):
        CrossEncoderReranker(folder)


def test_a_corrupt_tokenizer_is_a_clear_error(folder: Path) -> None:
    (folder / "tokenizer.json").write_text('{"version": "1.0", "model": ')
    with pytest.raises(RerankError, match=r"tokenizer.json is not a readable .*tokenizers file"):
        CrossEncoderReranker(folder)


def test_a_model_that_is_not_a_bert_cross_encoder_is_refused(tmp_path: Path) -> None:
    renamed = onnx.load_from_string(linear_model(word_weights(), SEG, 0.0))
    for node in renamed.graph.node:  # the mask input under another name
        node.input[:] = ["mask" if x == "attention_mask" else x for x in node.input]
    renamed.graph.input[1].name = "mask"
    no_mask = make_folder(tmp_path / "a", renamed.SerializeToString())
    with pytest.raises(RerankError, match=r"needs inputs input_ids and attention_mask .*mask"):
        CrossEncoderReranker(no_mask)
    two = make_folder(tmp_path / "b", linear_model(word_weights(), SEG, 0.0, n_labels=2))
    with pytest.raises(RerankError, match=r"one logit per pair, \(batch, 1\) or \(batch,\)"):
        CrossEncoderReranker(two)


def test_a_tokenizer_beyond_the_models_vocabulary_fails_clearly(tmp_path: Path) -> None:
    _, tok_path = locate_minilm()  # ids up to 30,521 against a 15-row embedding
    f = make_folder(
        tmp_path / "mixed",
        linear_model(word_weights(), SEG, 0.0),
        Tokenizer.from_file(str(tok_path)),
    )
    rr = CrossEncoderReranker(f)
    with pytest.raises(RerankError, match=r"failed on text 0 .*from the same export"):
        rr("shock", ["shock wave"])


def test_max_length_is_checked(folder: Path) -> None:
    with pytest.raises(ValueError, match="max_length must be an integer >= 4"):
        CrossEncoderReranker(folder, max_length=0)


def test_the_mcp_tools_rerank_with_the_servers_model_never_an_agents_folder(
    folder: Path, notes: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rowvoi.cli.main import build_parser
    from rowvoi.cli.mcp import ToolError, ToolServer, verb_parsers

    server = ToolServer(verb_parsers(build_parser()), ["notes"])
    ask = {"name": "notes", "query": "wing", "mode": "lexical"}
    plain = server.call("search", ask)
    plain = plain["hits"] if isinstance(plain, dict) else plain
    assert [h["artifact_id"] for h in plain] == ["a.txt", "b.txt"]
    for tool, args in (("search", ask), ("discover", {**ask, "names": ["notes"]})):
        args = {k: v for k, v in args.items() if not (tool == "discover" and k == "name")}
        with pytest.raises(ToolError, match="loads no model from a folder a tool call names"):
            server.call(tool, {**args, "rerank": f"cross-encoder:{folder}"})
        monkeypatch.delenv(CROSS_ENCODER_ENV, raising=False)
        with pytest.raises(ToolError, match=f"set {CROSS_ENCODER_ENV}="):
            server.call(tool, {**args, "rerank": "cross-encoder"})
        monkeypatch.setenv(CROSS_ENCODER_ENV, str(folder))
        got = server.call(tool, {**args, "rerank": "cross-encoder"})
        hits = got.get("hits") or got.get("results") if isinstance(got, dict) else got
        assert hits[0]["artifact_id"] == "b.txt", tool
    assert server.schema("search")["properties"]["rerank"]["pattern"].startswith("^(cross")
