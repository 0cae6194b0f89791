"""sentence-transformers peer of the ``dense`` suite's ``--part embed``, in its own venv.

Run by bench/suites/dense.py as a child process, by path (its interpreter is
``--st-python``, a venv with torch, sentence-transformers and onnx, without
rowvoi; see that suite's docstring).  The ``embed_invariance`` study imports
:func:`sentence_transformers_model` from here (torch in its interpreter).  Builds the
model from the fp32 ONNX file and tokenizer given on the command line, reads
the texts from a JSON file, then answers one command per line on stdin:

``time PART THREADS``
    encode the texts of PART ("short" or "passages") with THREADS torch
    threads; replies ``{"seconds": wall seconds}``.
``vectors PART OUT``
    encode PART once and save the vectors to the ``.npy`` file OUT.

The first line it prints is ``{"ready": true, "note": versions}`` (or
``{"error": ...}``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def sentence_transformers_model(fp32_model: Path, tokenizer_json: Path, work: Path):
    """The sentence-transformers peer on the same fp32 weights (torch, CPU,
    mean pooling, normalised): ``(model, "sentence-transformers X, torch Y")``.
    Raises whatever the import or the conversion raises, for the caller to
    report."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    bert_dir = onnx_to_bert_dir(fp32_model, tokenizer_json, work)
    model = SentenceTransformer(
        modules=[
            models.Transformer(str(bert_dir), max_seq_length=256),
            models.Pooling(384, pooling_mode="mean"),
            models.Normalize(),
        ],
        device="cpu",
    )
    return model, (
        f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"
    )


def onnx_to_bert_dir(fp32_model: Path, tokenizer_json: Path, out: Path) -> Path:
    """Write a transformers BERT directory with the weights of an ONNX export
    of all-MiniLM-L6-v2 (MatMul weights mapped through the bias they feed)."""
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import BertConfig, BertModel, BertTokenizerFast

    m = onnx.load(str(fp32_model))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    consumers = {}
    for node in m.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state = {}
    for name, arr in inits.items():
        if name.startswith("inner.") and not name.endswith("position_ids"):
            state[name[len("inner.") :]] = torch.from_numpy(arr.copy())
    for node in m.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in inits:
            continue
        adds = [c for c in consumers.get(node.output[0], []) if c.op_type == "Add"]
        bias = [i for a in adds for i in a.input if i.endswith(".bias") and i in inits]
        if len(bias) != 1:
            raise RuntimeError(f"cannot map MatMul {node.name}")
        key = bias[0][len("inner.") : -len(".bias")] + ".weight"
        state[key] = torch.from_numpy(inits[node.input[1]].T.copy())
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
        hidden_act="gelu",
        layer_norm_eps=1e-12,
    )
    model = BertModel(cfg, add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "position_ids" not in k]
    if missing or unexpected:
        raise RuntimeError(f"weights do not fit: missing {missing}, unexpected {unexpected}")
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok = BertTokenizerFast(
        tokenizer_file=str(tokenizer_json), do_lower_case=True, model_max_length=256
    )
    tok.save_pretrained(out)
    return out


def main() -> int:
    fp32, tokenizer, work, texts_json = (Path(a) for a in sys.argv[1:5])
    try:
        model, note = sentence_transformers_model(fp32, tokenizer, work / "bert")
    except Exception as exc:
        print(json.dumps({"error": repr(exc)}), flush=True)
        return 1
    import torch

    texts: dict[str, list[str]] = json.loads(texts_json.read_text())

    def encode(part: str) -> Any:
        return model.encode(
            texts[part], batch_size=32, convert_to_numpy=True, normalize_embeddings=True
        )

    print(json.dumps({"ready": True, "note": note}), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "time":
            torch.set_num_threads(int(cmd[2]))
            t = time.perf_counter()
            encode(cmd[1])
            print(json.dumps({"seconds": time.perf_counter() - t}), flush=True)
        elif cmd[0] == "vectors":
            np.save(cmd[2], encode(cmd[1]))
            print(json.dumps({"saved": cmd[2]}), flush=True)
        else:
            print(json.dumps({"error": f"unknown command {cmd[0]!r}"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
