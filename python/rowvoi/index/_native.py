"""The arrays of rowvoi's native int8 encoder, read from a derived int8
MiniLM graph (:func:`rowvoi.index.embed.derived_model`).

The derived graph already holds everything the recipe needs: the int8
weights and their column scales, the biases, the outlier channels and
their float32 weight rows, the int8 embedding tables with their row
scales, the LayerNorm weights and the attention's scale.  This module
finds them by the graph's structure (node order and the edges between
nodes), checks that the graph is the one the native encoder computes, and
returns them as NumPy arrays for :class:`rowvoi.index._encoder.Encoder`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class GraphLayoutError(ValueError):
    """The int8 graph is not the layout the native encoder computes."""


def encoder_spec(model_path: str | Path) -> dict[str, Any]:
    """The native encoder's spec (dimensions and arrays) from the int8
    graph at ``model_path``.

    Raises
    ------
    GraphLayoutError
        The graph is not a per-row int8 BERT encoder of this recipe (its
        message names what differs).
    """
    import onnx

    try:
        model = onnx.load(str(model_path))
    except Exception as exc:  # a truncated or foreign file: protobuf's own errors
        raise GraphLayoutError(
            f"{model_path}: not a readable ONNX graph ({exc}); if it is a cached derived "
            "model, delete it and it is derived again"
        ) from exc
    try:
        return _walk(model)
    except GraphLayoutError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
        raise GraphLayoutError(
            f"{model_path}: the graph is not the int8 recipe's layout ({exc!r}); if it is a "
            "cached derived model, delete it and it is derived again"
        ) from exc


def _walk(model: Any) -> dict[str, Any]:
    """:func:`encoder_spec` of a loaded graph."""
    from onnx import numpy_helper

    g = model.graph
    inits = {i.name: i for i in g.initializer}
    arrays: dict[str, np.ndarray] = {}

    def arr(name: str) -> np.ndarray:
        if name not in arrays:
            if name not in inits:
                raise GraphLayoutError(f"{name!r} is not a constant of the graph")
            arrays[name] = numpy_helper.to_array(inits[name])
        return arrays[name]

    users: dict[str, list[Any]] = {}
    for n in g.node:
        for i in n.input:
            users.setdefault(i, []).append(n)
    made = {o: n for n in g.node for o in n.output}

    def only_user(name: str, op: str) -> Any:
        us = users.get(name, [])
        if len(us) != 1 or us[0].op_type != op:
            raise GraphLayoutError(f"{name!r} feeds {[u.op_type for u in us]}, expected one {op}")
        return us[0]

    lns = [n for n in g.node if n.op_type == "LayerNormalization"]
    mms = [n for n in g.node if n.op_type == "MatMulIntegerToFloat"]
    if not mms or len(mms) % 4 or len(lns) != 1 + len(mms) // 2:
        raise GraphLayoutError(
            f"{len(mms)} int8 products and {len(lns)} LayerNorms: expected 4 and 2 per layer"
        )
    n_layers = len(mms) // 4
    # embeddings: Gather(table/q8, x) -> Cast -> Mul(Gather(table/q8_scale, x))
    tables: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for n in g.node:
        if n.op_type == "Gather" and n.input[0].endswith("/q8") and n.input[0] in inits:
            key = {"input_ids": "word", "token_type_ids": "type"}.get(n.input[1], "position")
            q = arr(n.input[0])
            s = arr(n.input[0] + "_scale").reshape(-1)
            tables[key] = (q, s)
    if set(tables) != {"word", "type", "position"}:
        raise GraphLayoutError(f"embedding tables {sorted(tables)}: expected word, type, position")

    def ln_arrays(n: Any) -> tuple[np.ndarray, np.ndarray, float]:
        eps = [a.f for a in n.attribute if a.name == "epsilon"]
        return arr(n.input[1]), arr(n.input[2]), eps[0] if eps else 1e-5

    def linear(mm: Any) -> dict[str, Any]:
        w = arr(mm.input[1])
        scale = arr(mm.input[3]).reshape(-1)
        if w.dtype != np.int8 or w.ndim != 2 or scale.size != w.shape[1]:
            raise GraphLayoutError(f"{mm.output[0]!r}: not an int8 product with column scales")
        mul = only_user(mm.output[0], "Mul")
        out: dict[str, Any] = {"weight": w, "scale": scale, "outliers": (), "outlier_rows": None}
        cur = mul.output[0]
        for _ in range(4):  # outlier Add, then the bias (Add or BiasGelu), past a residual Add
            us = users.get(cur, [])
            if len(us) != 1:
                raise GraphLayoutError(f"{cur!r} feeds {len(us)} nodes, expected one")
            nxt = us[0]
            other = [i for i in nxt.input if i != cur]
            const = [i for i in other if i in inits and arr(i).shape == (w.shape[1],)]
            if nxt.op_type in ("Add", "BiasGelu") and const:
                out["bias"] = arr(const[0])
                break
            src = made.get(other[0]) if len(other) == 1 else None
            if nxt.op_type == "Add" and src is not None and src.op_type == "MatMul":
                rows = arr(src.input[1])
                gather = made.get(src.input[0])
                if gather is None or gather.op_type != "Gather":
                    raise GraphLayoutError(f"{src.output[0]!r}: outliers not from a Gather")
                out["outliers"] = arr(gather.input[1]).astype(np.uint32)
                out["outlier_rows"] = rows
            elif nxt.op_type != "Add":
                raise GraphLayoutError(f"{cur!r} feeds {nxt.op_type}, expected Add or BiasGelu")
            cur = nxt.output[0]
        if "bias" not in out:
            raise GraphLayoutError(f"{mm.output[0]!r}: no bias found")
        return out

    # the attention's scale: Softmax(Add(MatMul(Mul(q, c), Mul(k, c)), mask))
    scales = set()
    for n in g.node:
        if n.op_type == "Softmax":
            add = made[n.input[0]]
            mm = made.get(add.input[0])
            if mm is None or mm.op_type != "MatMul":
                raise GraphLayoutError("a softmax not of a scaled product")
            for i in mm.input:
                mul = made.get(i)
                if mul is None or mul.op_type != "Mul":
                    raise GraphLayoutError("attention scores of unscaled queries or keys")
                scales |= {float(arr(x).reshape(-1)[0]) for x in mul.input if x in inits}
    if len(scales) != 1:
        raise GraphLayoutError(f"attention scales {sorted(scales)}: expected one")
    gamma, beta, eps = ln_arrays(lns[0])
    if len({ln_arrays(n)[2] for n in lns}) != 1:
        raise GraphLayoutError("the LayerNorms' epsilons differ: the encoder takes one")
    word, pos, typ = tables["word"], tables["position"], tables["type"]
    hidden = int(word[0].shape[1])
    layers: list[dict[str, Any]] = []
    for i in range(n_layers):
        qkv, out, up, down = (linear(m) for m in mms[4 * i : 4 * i + 4])
        g1, b1, _ = ln_arrays(lns[1 + 2 * i])
        g2, b2, _ = ln_arrays(lns[2 + 2 * i])
        layers.append(
            {"qkv": qkv, "out": out, "up": up, "down": down,
             "ln1_gamma": g1, "ln1_beta": b1, "ln2_gamma": g2, "ln2_beta": b2}
        )  # fmt: skip
    # the scale is head_dim ** -0.25 on queries and keys alike
    scale = scales.pop()
    head_dim = round(scale**-4)
    if head_dim < 1 or hidden % head_dim or abs(head_dim**-0.25 - scale) > 1e-6:
        raise GraphLayoutError(f"attention scale {scale}: not head_dim ** -0.25 of {hidden}")
    return {
        "hidden": hidden,
        "heads": hidden // head_dim,
        "ffn": int(layers[0]["up"]["weight"].shape[1]),
        "vocab": int(word[0].shape[0]),
        "max_positions": int(pos[0].shape[0]),
        "type_vocab": int(typ[0].shape[0]),
        "ln_eps": float(eps),
        "attn_scale": scale,
        "word": word[0],
        "word_scale": word[1],
        "position": pos[0],
        "position_scale": pos[1],
        "type": typ[0],
        "type_scale": typ[1],
        "emb_gamma": gamma,
        "emb_beta": beta,
        "layer": layers,
    }
