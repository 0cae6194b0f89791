"""Long texts and MiniLM: only the head a vector can use is tokenised, and
the vector is identical, bit for bit, to the one of the whole text
tokenised and then truncated (``MiniLMEmbedder._encode``)."""

import json
import random
import shutil

import numpy as np
import pytest

import rowvoi.index.embed as embed
from rowvoi.index.embed import MiniLMEmbedder, locate_minilm

pytestmark = pytest.mark.xdist_group("minilm-embed")

# pieces the BERT normaliser and pre-tokenizer treat specially: combining
# marks (alone and after a space), removed controls (VT, FF, NUL, soft
# hyphen, zero-width space), non-ASCII spaces, CJK (each ideograph a word;
# a compatibility ideograph NFD maps to another), punctuation, added tokens
# written in the text, case mappings that grow (İ), a word past WordPiece's
# 100 characters ([UNK]), whitespace runs
PIECES = [
    "lift", "wing", "x" * 150, "été", "e\u0301", "\u0301", "\u0301\u0327", "  ", "\t", "\n",
    "\r\n", "\x0b", "\x0c", "\x00", "\u00ad", "\u200b", "中文", "。", "[CLS]", "[MASK]", "...",
    "a.b", "ΣΟΣ", "\ufffd", "\u00a0", "\u3000", "\uf900", "가", "https://x.org/a?b=c", "ǅ",
    "İ", "ﬁ", "1234567890" * 3, " " * 50, "\u2028",
]  # fmt: skip


def adversarial(rng, n):
    return "".join(rng.choice(PIECES) + rng.choice(["", "", " ", "\n"]) for _ in range(n))


@pytest.fixture(scope="module")
def emb():
    return MiniLMEmbedder(quantize=False, threads=1)


def whole(emb, texts):
    """What the embedder tokenised before the cut: every text in full."""
    return emb._tok.encode_batch(texts)


def same(a, b):
    return (a.ids, a.attention_mask, a.type_ids) == (b.ids, b.attention_mask, b.type_ids)


@pytest.mark.parametrize("head", [1, 7, 64, 300, None])
def test_heads_encode_like_the_whole_text(emb, monkeypatch, head):
    rng = random.Random(head or 0)
    texts = [adversarial(rng, rng.choice([5, 80, 400, 1500, 6000])) for _ in range(200)]
    texts += ["word " * 2000, "中" * 5000, " " * 9000 + "tail", "\x0b" * 9000 + "tail"]
    texts += ["e" + "\u0301" * 9000 + " end", "x" * 5000 + " y" * 400, "a\x0bb " * 3000]
    if head is not None:
        monkeypatch.setattr(emb, "_head_chars", head)
    assert emb._head_chars > 0
    got = emb._encode(texts)
    for i, (a, b) in enumerate(zip(got, whole(emb, texts))):
        assert same(a, b), (i, texts[i][:80])


def test_boundary_exactly_at_the_budget(emb, monkeypatch):
    budget = emb.max_length - 2  # [CLS] and [SEP]
    for n_first in (budget - 1, budget, budget + 1):
        text = "a " * n_first + "b " * 2000
        # the first head ends just after the n_first-th "a"
        monkeypatch.setattr(emb, "_head_chars", 2 * n_first - 1)
        assert embed._head(text, emb._head_chars) == " ".join(["a"] * n_first)
        (got,), (want,) = emb._encode([text]), whole(emb, [text])
        assert same(got, want)
        assert len(got.ids) == emb.max_length
        # a full first head (>= budget tokens) is kept; a short one grows
        assert ("b" in got.tokens) == (n_first < budget)


def test_a_cut_anywhere_else_would_change_tokens(emb):
    # why the cut is only at a space, tab, LF or CR: the normaliser removes
    # a vertical tab (joining "ab" and "cd") and marks attach to a cut word
    for text, wrong_cut in (("ab\x0bcd", 2), ("abc\u0301de", 4), ("x" * 99 + "yy", 99)):
        (a,), (b,) = whole(emb, [text[:wrong_cut]]), whole(emb, [text])
        assert a.ids != b.ids
        assert embed._head(text, wrong_cut) == text  # never cut there


def test_a_long_file_is_not_tokenised_past_its_head(emb, monkeypatch):
    text = ("The lift of a wing at low speed. " * 30_000)[:800_000]  # ~800 KB
    seen = []
    real = emb._tok

    class Spy:
        def encode_batch(self, texts):
            seen.extend(len(t) for t in texts)
            return real.encode_batch(texts)

        def encode(self, text):
            seen.append(len(text))
            return real.encode(text)

    monkeypatch.setattr(emb, "_tok", Spy())
    v = emb.embed([text])
    assert max(seen) < 2100 and sum(seen) < 2100, seen  # one head of ~2,048 chars
    monkeypatch.setattr(emb, "_tok", real)
    monkeypatch.setattr(emb, "_head_chars", 0)  # the whole text
    assert np.array_equal(v, emb.embed([text]))


def test_vectors_identical_to_whole_text_tokenisation(emb, monkeypatch):
    rng = random.Random(5)
    texts = [adversarial(rng, 3000) for _ in range(6)] + ["word " * 3000, "中文。" * 3000]
    cut = emb.embed(texts)
    monkeypatch.setattr(emb, "_head_chars", 0)
    assert np.array_equal(cut, emb.embed(texts))


def test_other_tokenizers_are_tokenised_whole(tmp_path, monkeypatch):
    model, tok = locate_minilm()
    spec = json.loads(tok.read_text(encoding="utf-8"))
    spec["pre_tokenizer"] = {"type": "Whitespace"}
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(model, d / "model.onnx")
    (d / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    assert MiniLMEmbedder(d, quantize=False, threads=1)._head_chars == 0
    spec["pre_tokenizer"] = {"type": "BertPreTokenizer"}
    spec["added_tokens"].append({**spec["added_tokens"][0], "id": 1, "content": "new york"})
    (d / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    assert MiniLMEmbedder(d, quantize=False, threads=1)._head_chars == 0
    assert MiniLMEmbedder(quantize=False, threads=1, max_length=2)._head_chars == 0
    assert MiniLMEmbedder(quantize=False, threads=1, max_length=3)._head_chars == 24
