# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the hashing embedder (hashing.h); the public API is
rowvoi.index.embed.HashingEmbedder."""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint32_t, uint64_t

from rowvoi cimport *
from _check cimport check

cnp.import_array()

MAX_DIM = RV_HASHER_MAX_DIM
MAX_WORD_NGRAMS = RV_HASHER_MAX_WORD_NGRAMS
MAX_CHAR_NGRAM = RV_HASHER_MAX_CHAR_NGRAM


cdef class Hasher:
    """Owns one rv_hasher handle."""
    cdef rv_hasher *p

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        rv_hasher_free(self.p)

    @staticmethod
    def create(uint32_t dim, uint32_t word_ngrams, uint32_t char_min,
               uint32_t char_max, float char_weight, uint64_t seed):
        cdef rv_hasher_options opt
        rv_hasher_options_init(&opt)
        opt.dim = dim
        opt.word_ngrams = word_ngrams
        opt.char_min = char_min
        opt.char_max = char_max
        opt.char_weight = char_weight
        opt.seed = seed
        cdef Hasher self = Hasher.__new__(Hasher)
        check(rv_hasher_create(&opt, &self.p))
        return self

    @property
    def dim(self):
        return rv_hasher_dim(self.p)

    @property
    def id(self):
        return rv_hasher_id(self.p).decode("ascii")

    def embed(self, list encoded, uint32_t n_threads=0):
        """encoded: list of UTF-8 bytes.  Returns (n, dim) float32."""
        cdef size_t n = len(encoded), d = rv_hasher_dim(self.p)
        cdef bytes data = b"".join(encoded)
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] offsets = np.zeros(n + 1, dtype=np.uint64)
        if n:
            np.cumsum([len(b) for b in encoded], out=offsets[1:])
        cdef cnp.ndarray[float, ndim=2, mode="c"] out = np.zeros((max(<Py_ssize_t>n, 1), d), dtype=np.float32)
        cdef const char *dp = data
        cdef rv_status st
        with nogil:
            st = rv_hasher_embed_batch(self.p, dp, &offsets[0], n, n_threads, &out[0, 0])
        check(st)
        return out[:n]
