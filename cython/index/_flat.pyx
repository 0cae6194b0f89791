# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the flat vector index (flat.h).  Types in, types out;
validation with friendly messages and the public API live in rowvoi.dense."""

import os

import numpy as np
cimport numpy as cnp
from cpython.bytes cimport PyBytes_AsString, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t

from rowvoi cimport *
from _check cimport check, idset_pointer, owner_capsule, progress_check_signals

cnp.import_array()

METRICS = {"ip": RV_METRIC_INNER_PRODUCT, "cosine": RV_METRIC_COSINE, "l2": RV_METRIC_L2}
METRIC_NAMES = {v: k for k, v in METRICS.items()}
STORAGES = {"float32": RV_FLAT_F32, "float16": RV_FLAT_F16, "int8": RV_FLAT_I8}
STORAGE_NAMES = {v: k for k, v in STORAGES.items()}
MAX_DIM = RV_FLAT_MAX_DIM
MAX_ID = RV_FLAT_MAX_ID
FORMAT_VERSION = RV_FLAT_FORMAT_VERSION
HNSW_MAX_M = RV_HNSW_MAX_M
HNSW_HEADER_SIZE = RV_HNSW_HEADER_SIZE


def hnsw_check(const unsigned char[::1] data, size_t dim, size_t M, size_t ef_construction,
               size_t element_count, size_t max_elements):
    """rv_hnsw_check over a buffer (bytes, mmap, ...): the info as a dict."""
    cdef rv_hnsw_expect e
    cdef rv_hnsw_info info
    cdef rv_status st
    cdef const unsigned char *p = NULL
    cdef size_t n = data.shape[0]
    if n:
        p = &data[0]
    rv_hnsw_expect_init(&e)
    e.dim, e.M, e.ef_construction = dim, M, ef_construction
    e.element_count, e.max_elements = element_count, max_elements
    with nogil:
        st = rv_hnsw_check(p, n, &e, &info)
    check(st)
    return {
        "element_count": info.element_count,
        "n_deleted": info.n_deleted,
        "n_upper": info.n_upper,
        "max_level": info.max_level,
        "entry_point": info.entry_point,
        "label_offset": info.label_offset,
        "element_size": info.element_size,
    }


cdef class FlatHandle:
    """Owns one rv_flat handle."""
    cdef rv_flat *p

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        rv_flat_free(self.p)

    @staticmethod
    def create(uint32_t dim, str metric, str storage, uint32_t rescore_factor):
        cdef rv_flat_options opt
        rv_flat_options_init(&opt)
        opt.dim = dim
        opt.metric = METRICS[metric]
        opt.storage = STORAGES[storage]
        opt.rescore_factor = rescore_factor
        cdef FlatHandle self = FlatHandle.__new__(FlatHandle)
        check(rv_flat_create(&opt, &self.p))
        return self

    @staticmethod
    def load(path):
        cdef bytes b = os.fsencode(path)
        cdef const char *cp = b
        cdef FlatHandle self = FlatHandle.__new__(FlatHandle)
        cdef rv_status st
        with nogil:
            st = rv_flat_load(cp, &self.p)
        check(st)
        return self

    @staticmethod
    def load_fd(int fd, name):
        cdef bytes bname = os.fsencode(name)
        cdef const char *cp = bname
        cdef FlatHandle self = FlatHandle.__new__(FlatHandle)
        cdef rv_status st
        with nogil:
            st = rv_flat_load_fd(fd, cp, &self.p)
        check(st)
        return self

    @staticmethod
    def from_bytes(bytes data):
        cdef const char *p = PyBytes_AsString(data)
        cdef size_t n = len(data)
        cdef FlatHandle self = FlatHandle.__new__(FlatHandle)
        cdef rv_status st
        with nogil:
            st = rv_flat_load_buffer(p, n, &self.p)
        check(st)
        return self

    def to_bytes(self):
        cdef size_t need = 0, got = 0
        cdef rv_status st = rv_flat_save_buffer(self.p, NULL, 0, &need)
        if st != RV_OK and st != RV_E_SHAPE:
            check(st)
        out = PyBytes_FromStringAndSize(NULL, need)
        cdef char *buf = PyBytes_AsString(out)
        with nogil:
            st = rv_flat_save_buffer(self.p, buf, need, &got)
        check(st)
        return out

    def check_queries(self, cnp.ndarray[float, ndim=2, mode="c"] queries):
        """Raise what a search would raise for these queries."""
        cdef size_t nq = queries.shape[0]
        cdef const float *qp = &queries[0, 0] if nq else NULL
        cdef rv_status st
        with nogil:
            st = rv_flat_check_queries(self.p, nq, qp)
        check(st)

    def save(self, path, mode=None):
        """mode: None for 0666 & ~umask, else the exact permission bits."""
        cdef long cmode = -1 if mode is None else mode
        cdef bytes b = os.fsencode(path)
        cdef const char *cp = b
        cdef rv_status st
        with nogil:
            st = rv_flat_save_mode(self.p, cp, cmode)
        check(st)

    @property
    def dim(self):
        return rv_flat_dim(self.p)

    @property
    def metric(self):
        return METRIC_NAMES[rv_flat_metric(self.p)]

    @property
    def storage(self):
        return STORAGE_NAMES[rv_flat_storage_kind(self.p)]

    @property
    def rescore_factor(self):
        return rv_flat_rescore_factor(self.p)

    @property
    def size(self):
        return rv_flat_size(self.p)

    @property
    def n_deleted(self):
        return rv_flat_n_deleted(self.p)

    def add(self, cnp.ndarray[float, ndim=2, mode="c"] vectors, ids):
        """vectors: (n, dim) float32; ids: int64 array or None.  Returns the
        ids used."""
        cdef size_t n = vectors.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] idarr
        cdef const int64_t *ip = NULL
        cdef const float *vp = &vectors[0, 0] if n else NULL
        if ids is not None:
            idarr = ids
            ip = &idarr[0] if n else NULL
        cdef rv_status st
        with nogil:
            st = rv_flat_add(self.p, n, vp, ip, &out[0])
        check(st)
        return out[:n]

    def remove(self, cnp.ndarray[int64_t, ndim=1, mode="c"] ids):
        cdef size_t n = ids.shape[0], removed = 0
        check(rv_flat_delete(self.p, n, &ids[0] if n else NULL, &removed))
        return removed

    def compact(self):
        cdef rv_status st
        with nogil:
            st = rv_flat_compact(self.p)
        check(st)

    def contains(self, int64_t id):
        return bool(rv_flat_contains(self.p, id))

    def ids(self):
        cdef size_t n = rv_flat_size(self.p), got = 0
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        check(rv_flat_ids(self.p, &out[0], n, &got))
        return out[:got]

    def get(self, cnp.ndarray[int64_t, ndim=1, mode="c"] ids):
        cdef size_t n = ids.shape[0], d = rv_flat_dim(self.p)
        cdef cnp.ndarray[float, ndim=2, mode="c"] out = np.empty((max(<Py_ssize_t>n, 1), d), dtype=np.float32)
        check(rv_flat_get(self.p, n, &ids[0] if n else NULL, &out[0, 0]))
        return out[:n]

    def search(self, cnp.ndarray[float, ndim=2, mode="c"] queries, size_t k,
               uint32_t n_threads=0, uint32_t rescore_factor=0, bint exact=False,
               filt=None):
        """Returns (ids (nq, k) int64, scores (nq, k) float32, n_found).
        filt: an id-set capsule (rowvoi.index._idset) or None."""
        cdef size_t nq = queries.shape[0], found = 0
        cdef cnp.ndarray[int64_t, ndim=2, mode="c"] ids = np.empty((max(<Py_ssize_t>nq, 1), k), dtype=np.int64)
        cdef cnp.ndarray[float, ndim=2, mode="c"] scores = np.empty((max(<Py_ssize_t>nq, 1), k), dtype=np.float32)
        cdef rv_flat_search_params prm
        rv_flat_search_params_init(&prm)
        prm.k = k
        prm.n_threads = n_threads
        prm.rescore_factor = rescore_factor
        prm.exact = exact
        prm.progress = progress_check_signals
        prm.filter = <const rv_idset *>idset_pointer(filt)
        cdef const float *qp = &queries[0, 0] if nq else NULL
        cdef rv_status st
        with nogil:
            st = rv_flat_search(self.p, &prm, nq, qp, &ids[0, 0], &scores[0, 0], &found)
        check(st)
        return ids[:nq], scores[:nq], found

    def capsule(self):
        """A capsule of the rv_flat pointer, named "rowvoi.rv_flat", that
        keeps this object alive (rowvoi.index._hot.dense_search searches
        through it, rowvoi.index._hot.blend re-scores through it).  A call
        through the capsule takes no lock: only for an index no writer will
        change again (a frozen rowvoi.index.flat.FlatIndex), or while the
        caller holds its FlatIndex's read lock."""
        return owner_capsule(<void *>self.p, b"rowvoi.rv_flat", self)

    def search1(self, cnp.ndarray query not None, size_t k, uint32_t n_threads, bint exact):
        """One query (C-contiguous float32, shape (dim,)), unfiltered, the
        index's rescore factor.  Returns (ids (found,) int64, scores (found,)
        float32); result buffers hold min(k, size) slots (at least 1).
        ValueError for a query of another type or shape.  The query is
        checked and the results made through the NumPy C API (no buffer
        protocol, no Python-level calls): this is the corpus's hot path."""
        if (cnp.PyArray_TYPE(query) != cnp.NPY_FLOAT32 or cnp.PyArray_NDIM(query) != 1
                or not cnp.PyArray_IS_C_CONTIGUOUS(query)
                or <size_t>cnp.PyArray_DIM(query, 0) != rv_flat_dim(self.p)):
            raise ValueError(
                f"query must be a C-contiguous float32 vector of {rv_flat_dim(self.p)} "
                f"values, not {query.dtype} with shape {(<object>query).shape}: use "
                "np.ascontiguousarray(query, dtype=np.float32)")
        cdef size_t n = rv_flat_size(self.p), found = 0
        if k > n:
            k = n if n else 1
        cdef cnp.npy_intp dims = <cnp.npy_intp>k
        cdef cnp.ndarray ids = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_INT64, 0)
        cdef cnp.ndarray scores = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_FLOAT32, 0)
        cdef rv_flat_search_params prm
        rv_flat_search_params_init(&prm)
        prm.k = k
        prm.n_threads = n_threads
        prm.exact = exact
        prm.progress = progress_check_signals
        cdef const float *qp = <const float *>cnp.PyArray_DATA(query)
        cdef int64_t *ip = <int64_t *>cnp.PyArray_DATA(ids)
        cdef float *sp = <float *>cnp.PyArray_DATA(scores)
        cdef rv_status st
        with nogil:
            st = rv_flat_search(self.p, &prm, 1, qp, ip, sp, &found)
        check(st)
        if found == k:
            return ids, scores
        return ids[:found], scores[:found]

    def rescore(self, cnp.ndarray[float, ndim=2, mode="c"] queries,
                cnp.ndarray[int64_t, ndim=2, mode="c"] cand, size_t k,
                uint32_t n_threads=0):
        """Returns (ids (nq, k), scores (nq, k), n_found per query)."""
        cdef size_t nq = queries.shape[0], nc = cand.shape[1]
        cdef cnp.ndarray[int64_t, ndim=2, mode="c"] ids = np.empty((max(<Py_ssize_t>nq, 1), k), dtype=np.int64)
        cdef cnp.ndarray[float, ndim=2, mode="c"] scores = np.empty((max(<Py_ssize_t>nq, 1), k), dtype=np.float32)
        cdef cnp.ndarray[size_t, ndim=1, mode="c"] found = np.zeros(max(<Py_ssize_t>nq, 1), dtype=np.uintp)
        cdef const float *qp = &queries[0, 0] if nq else NULL
        cdef const int64_t *cp = &cand[0, 0] if nq and nc else NULL
        cdef rv_status st
        with nogil:
            st = rv_flat_rescore(self.p, nq, qp, nc, cp, k, n_threads,
                                 &ids[0, 0], &scores[0, 0], &found[0])
        check(st)
        return ids[:nq], scores[:nq], found[:nq].astype(np.int64)


def _raise_status(int code):
    """Test hook: produce an engine failure from the flat index."""
    cdef rv_flat *p = NULL
    cdef rv_flat_options opt
    rv_flat_options_init(&opt)
    if code == RV_E_RANGE:
        check(rv_flat_create(&opt, &p))
    raise ValueError(f"no trigger for status {code}")
