# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the BM25 engine (bm25.h).  Types in, types out; the
public API, validation and docs live in rowvoi.index.lexical."""

import os

import numpy as np
cimport numpy as cnp
from cpython.bytes cimport PyBytes_AsString, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint32_t, uint64_t

from rowvoi cimport *
from _check cimport check, idset_pointer, owner_capsule, progress_check_signals
from _analyzer cimport fill_options, options_dict, text_ptr

cnp.import_array()

VARIANTS = {"lucene": RV_BM25_LUCENE, "robertson": RV_BM25_ROBERTSON,
            "atire": RV_BM25_ATIRE, "bm25l": RV_BM25_L, "bm25+": RV_BM25_PLUS}
VARIANT_NAMES = {v: k for k, v in VARIANTS.items()}
FORMAT_VERSION = RV_BM25_FORMAT_VERSION
NO_DOC = RV_BM25_NO_DOC
MAX_ID = RV_BM25_MAX_ID
STATES = {RV_BM25_DOC_LIVE: "live", RV_BM25_DOC_TOMBSTONED: "tombstoned",
          RV_BM25_DOC_PURGED: "purged"}


cdef class _Texts:
    """Pointers and lengths of a list of str/bytes, kept alive by `keep`."""
    cdef const char **p
    cdef size_t *n
    cdef Py_ssize_t count
    cdef list keep

    def __cinit__(self, texts, str what):
        self.p = NULL
        self.n = NULL
        self.keep = list(texts)
        self.count = len(self.keep)
        cdef Py_ssize_t i, m = 0
        cdef const char *q = NULL
        self.p = <const char **>PyMem_Malloc(max(self.count, 1) * sizeof(char *))
        self.n = <size_t *>PyMem_Malloc(max(self.count, 1) * sizeof(size_t))
        if self.p == NULL or self.n == NULL:
            raise MemoryError("out of memory collecting texts")
        for i in range(self.count):
            text_ptr(self.keep[i], &q, &m, f"{what}[{i}]")
            self.p[i] = q
            self.n[i] = <size_t>m

    def __dealloc__(self):
        PyMem_Free(self.p)
        PyMem_Free(self.n)


cdef int fill_params(rv_bm25_params *p, str variant, double k1, double b, double delta) except -1:
    rv_bm25_params_init(p)
    p.variant = VARIANTS[variant]
    p.k1 = k1
    p.b = b
    p.delta = delta
    check(rv_bm25_params_check(p))
    return 0


cdef class BM25Core:
    """Owns one rv_bm25 handle."""
    cdef rv_bm25 *ix

    def __cinit__(self):
        self.ix = NULL

    def __dealloc__(self):
        rv_bm25_free(self.ix)

    @staticmethod
    def create(dict analyzer, str variant, double k1, double b, double delta):
        cdef rv_analyzer_options o
        cdef rv_bm25_params p
        fill_options(&o, analyzer)
        fill_params(&p, variant, k1, b, delta)
        cdef BM25Core self = BM25Core.__new__(BM25Core)
        check(rv_bm25_create(&o, &p, &self.ix))
        return self

    @staticmethod
    def load(path):
        cdef bytes bpath = os.fsencode(path)
        cdef const char *cp = bpath
        cdef BM25Core self = BM25Core.__new__(BM25Core)
        cdef rv_status st
        with nogil:
            st = rv_bm25_load(cp, &self.ix)
        check(st)
        return self

    @staticmethod
    def load_fd(int fd, name):
        cdef bytes bname = os.fsencode(name)
        cdef const char *cp = bname
        cdef BM25Core self = BM25Core.__new__(BM25Core)
        cdef rv_status st
        with nogil:
            st = rv_bm25_load_fd(fd, cp, &self.ix)
        check(st)
        return self

    @staticmethod
    def from_bytes(bytes data):
        cdef const char *p = PyBytes_AsString(data)
        cdef size_t n = len(data)
        cdef BM25Core self = BM25Core.__new__(BM25Core)
        cdef rv_status st
        with nogil:
            st = rv_bm25_load_buffer(p, n, &self.ix)
        check(st)
        return self

    def save(self, path, mode=None):
        """mode: None for 0666 & ~umask, else the exact permission bits."""
        cdef long cmode = -1 if mode is None else mode
        cdef bytes bpath = os.fsencode(path)
        cdef const char *cp = bpath
        cdef rv_status st
        with nogil:
            st = rv_bm25_save_mode(self.ix, cp, cmode)
        check(st)

    def to_bytes(self):
        cdef size_t need = 0, got = 0
        cdef rv_status st = rv_bm25_save_buffer(self.ix, NULL, 0, &need)
        if st != RV_OK and st != RV_E_SHAPE:
            check(st)
        out = PyBytes_FromStringAndSize(NULL, need)
        cdef char *buf = PyBytes_AsString(out)
        with nogil:
            st = rv_bm25_save_buffer(self.ix, buf, need, &got)
        check(st)
        return out

    def add(self, texts, ids=None):
        """Returns the ids used (int64).  ids: int64 array or None."""
        cdef _Texts t = _Texts(texts, "documents")
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(t.count, 1), dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] idarr
        cdef const int64_t *ip = NULL
        if ids is not None:
            idarr = ids
            ip = &idarr[0] if t.count else NULL
        cdef rv_status st
        with nogil:
            st = rv_bm25_add(self.ix, <size_t>t.count, t.p, t.n, ip,
                             <rv_progress_fn>progress_check_signals, NULL, &out[0])
        check(st)
        return out[:t.count]

    def delete(self, cnp.ndarray[int64_t, ndim=1, mode="c"] ids):
        cdef size_t nd = 0
        cdef const int64_t *ap = &ids[0] if ids.shape[0] else NULL
        check(rv_bm25_delete(self.ix, ap, ids.shape[0], &nd))
        return nd

    def contains(self, int64_t id):
        return bool(rv_bm25_contains(self.ix, id))

    def ids(self):
        cdef rv_bm25_info i
        check(rv_bm25_get_info(self.ix, &i))
        cdef size_t n = i.n_live, got = 0
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        check(rv_bm25_ids(self.ix, &out[0], n, &got))
        return out[:got]

    def compact(self):
        cdef rv_status st
        with nogil:
            st = rv_bm25_compact(self.ix)
        check(st)

    def set_params(self, str variant, double k1, double b, double delta):
        cdef rv_bm25_params p
        fill_params(&p, variant, k1, b, delta)
        cdef rv_status st
        with nogil:
            st = rv_bm25_set_params(self.ix, &p)
        check(st)

    def params(self):
        cdef rv_bm25_params p
        check(rv_bm25_get_params(self.ix, &p))
        return {"variant": VARIANT_NAMES[p.variant], "k1": p.k1, "b": p.b, "delta": p.delta}

    def analyzer(self):
        cdef rv_analyzer_options o
        check(rv_bm25_get_analyzer(self.ix, &o))
        return options_dict(&o)

    def info(self):
        cdef rv_bm25_info i
        check(rv_bm25_get_info(self.ix, &i))
        return {"n_docs": i.n_docs, "n_live": i.n_live, "n_tombstoned": i.n_tombstoned,
                "n_stats_docs": i.n_stats_docs, "total_len": i.total_len, "avgdl": i.avgdl,
                "n_terms": i.n_terms, "n_postings": i.n_postings,
                "n_segments": i.n_segments, "memory_bytes": i.memory_bytes,
                "next_id": i.next_id}

    def capsule(self):
        """A capsule of the rv_bm25 pointer, named "rowvoi.rv_bm25", that
        keeps this object alive (rowvoi.index._hot.lexical_search searches
        through it; its caller holds the owning BM25Index's read lock)."""
        return owner_capsule(<void *>self.ix, b"rowvoi.rv_bm25", self)

    def n_live(self):
        """Live documents (info()'s "n_live", without the dict)."""
        cdef rv_bm25_info i
        check(rv_bm25_get_info(self.ix, &i))
        return i.n_live

    def search(self, query, size_t k, bint exhaustive=False, filt=None):
        """(ids int64, scores float32, info dict).  filt: an id-set capsule
        or None."""
        cdef const char *p = NULL
        cdef Py_ssize_t n = 0
        text_ptr(query, &p, &n, "query")
        cdef const rv_idset *fp = <const rv_idset *>idset_pointer(filt)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] ids = np.empty(k, dtype=np.int64)
        cdef cnp.ndarray[float, ndim=1, mode="c"] sc = np.empty(k, dtype=np.float32)
        cdef size_t nf = 0
        cdef rv_bm25_search_info info
        cdef unsigned flags = RV_BM25_EXHAUSTIVE if exhaustive else 0
        cdef rv_status st
        with nogil:
            st = rv_bm25_search(self.ix, p, <size_t>n, k, flags, fp, &ids[0], &sc[0], &nf, &info)
        check(st)
        if nf < k:  # (arrays of the length found)
            ids, sc = ids[:nf].copy(), sc[:nf].copy()
        return ids, sc, {
            "n_query_terms": info.n_query_terms, "docs_scored": info.docs_scored,
            "postings_scored": info.postings_scored, "postings_total": info.postings_total,
            "filter_docs": info.filter_docs, "filter_direct": bool(info.filter_direct)}

    def search_terms(self, term_ids, size_t k, bint exhaustive=False, filt=None):
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] t = np.ascontiguousarray(term_ids, dtype=np.uint32)
        cdef const rv_idset *fp = <const rv_idset *>idset_pointer(filt)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] ids = np.empty(k, dtype=np.int64)
        cdef cnp.ndarray[float, ndim=1, mode="c"] sc = np.empty(k, dtype=np.float32)
        cdef size_t nf = 0
        cdef const uint32_t *tp = &t[0] if t.shape[0] else NULL
        cdef unsigned flags = RV_BM25_EXHAUSTIVE if exhaustive else 0
        cdef rv_status st
        with nogil:
            st = rv_bm25_search_terms(self.ix, tp, t.shape[0], k, flags, fp, &ids[0], &sc[0],
                                      &nf, NULL)
        check(st)
        return ids[:nf].copy(), sc[:nf].copy()

    def search_batch(self, queries, size_t k, bint exhaustive=False, unsigned n_threads=0,
                     filt=None):
        """(ids (n, k) int64 padded with NO_DOC, scores (n, k) float32 padded
        with NaN, counts (n,) uint32)."""
        cdef _Texts t = _Texts(queries, "queries")
        cdef const rv_idset *fp = <const rv_idset *>idset_pointer(filt)
        cdef Py_ssize_t nq = t.count
        cdef cnp.ndarray[int64_t, ndim=2, mode="c"] ids = np.empty((nq, k), dtype=np.int64)
        cdef cnp.ndarray[float, ndim=2, mode="c"] sc = np.empty((nq, k), dtype=np.float32)
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] cnt = np.zeros(nq, dtype=np.uint32)
        if nq == 0:
            return ids, sc, cnt
        cdef unsigned flags = RV_BM25_EXHAUSTIVE if exhaustive else 0
        cdef rv_status st
        with nogil:
            st = rv_bm25_search_batch(self.ix, <size_t>nq, t.p, t.n, k, flags, fp, n_threads,
                                      <rv_progress_fn>progress_check_signals, NULL,
                                      &ids[0, 0], &sc[0, 0], &cnt[0])
        check(st)
        return ids, sc, cnt

    def explain(self, query, int64_t doc):
        """(rows as tuples (term_id, qtf, tf, df, idf, weight, contribution),
        score, doc_len)."""
        cdef const char *p = NULL
        cdef Py_ssize_t n = 0
        text_ptr(query, &p, &n, "query")
        cdef size_t nr = 0
        cdef float score = 0
        cdef uint32_t dl = 0
        cdef rv_status st = rv_bm25_explain(self.ix, p, <size_t>n, doc, NULL, 0, &nr, &score, &dl)
        if st != RV_OK and st != RV_E_SHAPE:
            check(st)
        cdef rv_bm25_explain_row *rows = <rv_bm25_explain_row *>PyMem_Malloc(max(nr, 1) * sizeof(rv_bm25_explain_row))
        if rows == NULL:
            raise MemoryError("out of memory explaining a score")
        cdef size_t cap = nr, i
        try:
            check(rv_bm25_explain(self.ix, p, <size_t>n, doc, rows, cap, &nr, &score, &dl))
            out = [(rows[i].term_id, rows[i].qtf, rows[i].tf, rows[i].df, rows[i].idf,
                    rows[i].weight, rows[i].contribution) for i in range(nr)]
        finally:
            PyMem_Free(rows)
        return out, score, dl

    def lookup(self, term):
        cdef const char *p = NULL
        cdef Py_ssize_t n = 0
        text_ptr(term, &p, &n, "term")
        cdef uint32_t tid = 0
        cdef int found = 0
        check(rv_bm25_lookup(self.ix, p, <size_t>n, &tid, &found))
        return <long long>tid if found else -1

    def term(self, uint32_t term_id):
        cdef const char *s = NULL
        cdef size_t n = 0
        check(rv_bm25_term(self.ix, term_id, &s, &n))
        return PyUnicode_DecodeUTF8(s, n, NULL)

    def vocabulary(self):
        cdef const char *s = NULL
        cdef size_t n = 0
        cdef rv_bm25_info i
        check(rv_bm25_get_info(self.ix, &i))
        cdef uint32_t t
        out = []
        for t in range(<uint32_t>i.n_terms):
            check(rv_bm25_term(self.ix, t, &s, &n))
            out.append(PyUnicode_DecodeUTF8(s, n, NULL))
        return out

    def doc_freq(self, uint32_t term_id):
        cdef uint64_t df = 0
        check(rv_bm25_doc_freq(self.ix, term_id, &df))
        return df

    def doc_freqs(self):
        """This index's own df of every term, by term id (uint64)."""
        cdef rv_bm25_info i
        check(rv_bm25_get_info(self.ix, &i))
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] out = np.zeros(i.n_terms, dtype=np.uint64)
        cdef uint32_t t
        for t in range(<uint32_t>i.n_terms):
            check(rv_bm25_doc_freq(self.ix, t, &out[t]))
        return out

    def set_collection_stats(self, uint64_t n_docs, uint64_t total_len, dfs):
        """dfs: None (with n_docs = 0: back to the index's own statistics)
        or a C-contiguous uint64 array, one per term id."""
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] arr
        cdef const uint64_t *p = NULL
        cdef size_t n = 0
        if dfs is not None:
            arr = dfs
            n = arr.shape[0]
            if n:
                p = &arr[0]
        cdef rv_status st
        with nogil:
            st = rv_bm25_set_collection_stats(self.ix, n_docs, total_len, p, n)
        check(st)

    def doc(self, int64_t doc):
        cdef uint32_t dl = 0
        cdef int state = 0
        check(rv_bm25_doc(self.ix, doc, &dl, &state))
        return dl, STATES[state]
