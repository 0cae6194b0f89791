"""MiniLM vectors shared between the systems a suite compares: computed once
with rowvoi's MiniLM, cached in ``bench/.cache``, and looked up by the
SHA-256 of each text, so that both systems index identical vectors and the
embedder costs next to nothing in their timings."""

from __future__ import annotations

import hashlib
import os

from .results import CACHE


def key(text: str) -> str:
    """The lookup key of a text: its SHA-256, hex."""
    return hashlib.sha256(text.encode()).hexdigest()


def minilm_table(texts: list[str]) -> tuple[str, str]:
    """(path of an .npz of MiniLM vectors by text hash, embedder id)."""
    import numpy as np

    from rowvoi.index.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    eid = emb.embedder_id
    path = os.path.join(CACHE, f"cranfield_minilm_{key(eid)[:12]}.npz")
    uniq = sorted(set(texts))
    if os.path.exists(path):
        data = np.load(path)
        if set(data["keys"].tolist()) >= {key(t) for t in uniq}:
            return path, eid
    os.makedirs(CACHE, exist_ok=True)
    vecs = emb.embed(uniq)
    np.savez(path, keys=np.array([key(t) for t in uniq]), vectors=vecs)
    return path, eid


def table_embedder(path: str, eid: str) -> tuple:
    """An embedder ``(callable, id)`` that looks each text's vector up in
    the .npz at ``path`` (:func:`minilm_table`); its id is ``table:<eid>``."""
    import numpy as np

    data = np.load(path)
    lut = dict(zip(data["keys"].tolist(), data["vectors"]))

    def fn(texts):
        return np.stack([lut[key(t)] for t in texts])

    return fn, "table:" + eid
