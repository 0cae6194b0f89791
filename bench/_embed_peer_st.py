"""sentence-transformers peer of ``bench/dense.py --part embed``, in its own venv.

Run by dense.py as a child process (its interpreter is ``--st-python``, a venv
with torch and sentence-transformers; see dense.py's docstring).  Builds the
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
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dense import sentence_transformers_model


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
