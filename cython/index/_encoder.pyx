# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the int8 text encoder (encoder.h); the public API is
rowvoi.index.embed.MiniLMEmbedder (engine="native")."""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int32_t, uint32_t
from libc.stdlib cimport calloc, free

from rowvoi cimport *
from _check cimport check

cnp.import_array()


cdef const void *_data(list keep, object a, object dtype, Py_ssize_t size, str name) except NULL:
    """A C-contiguous array of dtype and size holding a's values (kept
    alive in keep); its data pointer."""
    cdef cnp.ndarray arr = np.ascontiguousarray(a, dtype=dtype)
    if arr.size != size:
        raise ValueError(f"{name}: {arr.size} values, expected {size}")
    keep.append(arr)
    return cnp.PyArray_DATA(arr)


cdef void _linear(rv_encoder_linear *dst, list keep, dict src, Py_ssize_t k, Py_ssize_t n,
                  str name) except *:
    dst.weight = <const int8_t *>_data(keep, src["weight"], np.int8, k * n, name + ".weight")
    dst.scale = <const float *>_data(keep, src["scale"], np.float32, n, name + ".scale")
    dst.bias = <const float *>_data(keep, src["bias"], np.float32, n, name + ".bias")
    outl = np.asarray(src.get("outliers", ()), dtype=np.uint32).reshape(-1)
    dst.n_outliers = outl.size
    dst.outliers = NULL
    dst.outlier_rows = NULL
    if outl.size:
        dst.outliers = <const uint32_t *>_data(keep, outl, np.uint32, outl.size, name + ".outliers")
        dst.outlier_rows = <const float *>_data(
            keep, src["outlier_rows"], np.float32, outl.size * n, name + ".outlier_rows")


# rv_encoder_spec.attention by name
_ATTENTION = {"float32": 0, "bfloat16": 1}


cdef class Encoder:
    """Owns one rv_encoder handle (immutable: encode from any thread)."""
    cdef rv_encoder *p

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        rv_encoder_free(self.p)

    @staticmethod
    def create(dict spec, kernel=None):
        """spec: the model's dimensions and arrays (rowvoi.index._native),
        and optionally "attention": "float32" (the default) or "bfloat16";
        kernel: None (the best this CPU has) or a kernel name."""
        cdef rv_encoder_spec c
        cdef list keep = []
        cdef Py_ssize_t h = spec["hidden"], f = spec["ffn"], nl = len(spec["layer"])
        cdef rv_encoder_layer *layers = <rv_encoder_layer *>calloc(max(nl, 1), sizeof(rv_encoder_layer))
        cdef Encoder self = Encoder.__new__(Encoder)
        cdef bytes kname = (kernel or "").encode("ascii")
        attention = spec.get("attention", "float32")
        if attention not in _ATTENTION:
            free(layers)
            raise ValueError(f"attention={attention!r}: expected 'float32' or 'bfloat16'")
        if layers == NULL:
            raise MemoryError("the encoder's layer table")
        try:
            c.hidden = h
            c.heads = spec["heads"]
            c.ffn = f
            c.layers = nl
            c.vocab = spec["vocab"]
            c.max_positions = spec["max_positions"]
            c.type_vocab = spec["type_vocab"]
            c.ln_eps = spec["ln_eps"]
            c.attn_scale = spec["attn_scale"]
            c.word = <const int8_t *>_data(keep, spec["word"], np.int8, c.vocab * h, "word")
            c.word_scale = <const float *>_data(keep, spec["word_scale"], np.float32, c.vocab, "word_scale")
            c.position = <const int8_t *>_data(keep, spec["position"], np.int8, c.max_positions * h, "position")
            c.position_scale = <const float *>_data(keep, spec["position_scale"], np.float32, c.max_positions, "position_scale")
            c.type = <const int8_t *>_data(keep, spec["type"], np.int8, c.type_vocab * h, "type")
            c.type_scale = <const float *>_data(keep, spec["type_scale"], np.float32, c.type_vocab, "type_scale")
            c.emb_gamma = <const float *>_data(keep, spec["emb_gamma"], np.float32, h, "emb_gamma")
            c.emb_beta = <const float *>_data(keep, spec["emb_beta"], np.float32, h, "emb_beta")
            for i, ly in enumerate(spec["layer"]):
                _linear(&layers[i].qkv, keep, ly["qkv"], h, 3 * h, f"layer[{i}].qkv")
                _linear(&layers[i].out, keep, ly["out"], h, h, f"layer[{i}].out")
                _linear(&layers[i].up, keep, ly["up"], h, f, f"layer[{i}].up")
                _linear(&layers[i].down, keep, ly["down"], f, h, f"layer[{i}].down")
                layers[i].ln1_gamma = <const float *>_data(keep, ly["ln1_gamma"], np.float32, h, "ln1_gamma")
                layers[i].ln1_beta = <const float *>_data(keep, ly["ln1_beta"], np.float32, h, "ln1_beta")
                layers[i].ln2_gamma = <const float *>_data(keep, ly["ln2_gamma"], np.float32, h, "ln2_gamma")
                layers[i].ln2_beta = <const float *>_data(keep, ly["ln2_beta"], np.float32, h, "ln2_beta")
            c.layer = layers
            c.kernel = kname
            c.attention = _ATTENTION[attention]
            with nogil:
                st = rv_encoder_create(&c, &self.p)
            check(st)
        finally:
            free(layers)
        return self

    @property
    def kernel(self):
        return rv_encoder_kernel(self.p).decode("ascii")

    @property
    def dim(self):
        return rv_encoder_dim(self.p)

    def encode(self, ids, offsets, types=None):
        """ids: int32 token ids of every text back to back; offsets: n + 1
        ascending uint64 (size_t) positions; types: None or int32 like
        ids.  Returns (n, dim) float32 unit vectors."""
        cdef cnp.ndarray[int32_t, ndim=1, mode="c"] a = np.ascontiguousarray(ids, dtype=np.int32)
        cdef cnp.ndarray off = np.ascontiguousarray(offsets, dtype=np.uintp)
        cdef cnp.ndarray tt = None
        cdef const int32_t *tp = NULL
        cdef size_t n = off.size - 1 if off.size else 0
        if off.ndim != 1 or off.size < 1:
            raise ValueError("offsets: one entry per text plus one")
        if off[n] != a.size:
            raise ValueError(f"offsets end at {off[n]}, but there are {a.size} ids")
        if types is not None:
            tt = np.ascontiguousarray(types, dtype=np.int32)
            if tt.size != a.size:
                raise ValueError(f"{tt.size} type ids for {a.size} ids")
            tp = <const int32_t *>cnp.PyArray_DATA(tt)
        cdef cnp.ndarray[float, ndim=2, mode="c"] out = np.zeros((max(<Py_ssize_t>n, 1), self.dim), dtype=np.float32)
        cdef const int32_t *ip = <const int32_t *>cnp.PyArray_DATA(a) if a.size else NULL
        cdef const size_t *op = <const size_t *>cnp.PyArray_DATA(off)
        cdef rv_status st
        with nogil:
            st = rv_encoder_encode(self.p, n, op, ip, tp, &out[0, 0])
        check(st)
        return out[:n]
