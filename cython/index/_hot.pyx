# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private: the per-query hot path of a corpus search, compiled.

The algorithms are the engine's (``include/rowvoi/records.h``): the query
vector's unit form (``rv_unit_vector``), the nonzero test
(``rv_any_nonzero``), a record table's check (``rv_records_check``), the
hits among a vector index's candidates (``rv_records_hits``: each
candidate's record, the collapse to one per artifact, the best k) and the
whole exact search of a flat index (``rv_records_search``).  This module
translates: NumPy arrays and bytes to the engine's pointers, statuses to
exceptions, and the hits' positions to ``SearchHit`` objects without a
Python-level call per hit.  A hit's text, metadata and ``explain`` are
built when one of them is first read
(``Deferred``, ``DeferredField``): most callers read a few of ``k`` hits,
and those three are most of a hit's cost (a text's decoding, a JSON
parse, two dicts and a list the cyclic garbage collector then walks).

``unit_query``, ``any_nonzero``: as their engine functions.  ``HitTable``
and ``dense_hits``: a dense search's last step, done once per query for
``k`` hits.  The reference, and the meaning of every field, is
``rowvoi.corpus.retrieval.rank._dense_hits_reference``; validation, the
result order of equal scores and errors stay in Python
(``rowvoi.corpus.retrieval.rank._dense_hits``).  ``dense_search``: an
unfiltered dense search of one query vector in one call, handing the cases
it does not decide back to the Python path.  ``fused_hits``: the last step
of a hybrid or weighted search (``rank._fetch``), the hits of its final
candidates with both sides' ranks and scores in their ``explain``; its
reference is ``rank._fused_hits_reference``.  ``order``: the result order
of candidates with equal scores (``rank._order``), ``np.lexsort`` of their
keys in one sort.  ``union``: a hybrid search's two candidate lists
merged, with each record's rank on each side (``rv_records_union``);
``rrf``: their reciprocal rank fusion (``rv_records_rrf``); ``blend``:
the blend evidence of records, each index asked for the scores its list
lacks (``rv_records_blend``).
Everything here reads objects
that never change once built, so any number of threads may call it at
once; a ``Deferred``'s one change, storing its hit's fields, holds its
critical section.
"""

cimport cython
cimport numpy as cnp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.list cimport PyList_GET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject, PyTypeObject
from cpython.object cimport PyObject_GenericSetAttr
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.math cimport INFINITY, isnan
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint32_t

from rowvoi cimport (RV_E_INVALID_ARG, RV_OK, RV_REAL_F32, RV_REAL_F64, RV_RECORDS_HITS,
                     RV_RECORDS_TIE,
                     rv_any_nonzero, rv_bm25, rv_bm25_search, rv_flat, rv_flat_dim,
                     rv_records_blend, rv_records_blend_params, rv_records_blend_params_init,
                     rv_flat_size, rv_idset, rv_progress_fn,
                     rv_real, rv_records, rv_records_check, rv_records_hits, rv_records_search,
                     rv_records_search_params, rv_records_search_params_init,
                     rv_records_rrf, rv_records_union, rv_records_verdict, rv_status,
                     rv_unit_vector)
from _analyzer cimport text_ptr
from _check cimport bm25_pointer, check, flat_pointer, idset_pointer, progress_check_signals

cnp.import_array()


cdef int _vector_type(cnp.ndarray x) noexcept:
    """The engine's element type of ``x``, or -1 unless it is float32 or
    float64, 1-D, in native byte order."""
    cdef int typ = cnp.PyArray_TYPE(x)
    if cnp.PyArray_NDIM(x) != 1 or not cnp.PyArray_ISNOTSWAPPED(x):
        return -1
    if typ == cnp.NPY_FLOAT32:
        return RV_REAL_F32
    if typ == cnp.NPY_FLOAT64:
        return RV_REAL_F64
    return -1


cdef int _vector_type_of(cnp.ndarray x, str fn) except -1:
    """_vector_type, or ValueError (naming ``fn``) for another array."""
    cdef int typ = _vector_type(x)
    if typ < 0:
        raise ValueError(f"{fn}: x must be a 1-D float32 or float64 array "
                         "in native byte order")
    return typ


def unit_query(cnp.ndarray x not None):
    """The query vector ``x`` as float32 of unit length, in one call and
    one allocation: the corpus's dense search calls this for every query
    given as a vector, and NumPy's conversion and BLAS calls that it
    replaces cost tens of microseconds when their code is out of cache.

    ``x``: float32 or float64 in native byte order, 1-D, any stride.  The
    arithmetic is the engine's ``rv_unit_vector``, bit for bit: the norm
    ``n`` is the square root of the float64 sum of the components' squares
    (each component converted to double), added in index order; each
    component is then divided by ``n`` in double and rounded once to
    float32.  A zero vector stays zero (``n`` is 0: no division).  Squares
    whose sum overflows double give ``n = inf``, so finite components
    become zeros, as NumPy's ``x / np.linalg.norm(x)`` does.  ValueError
    for a NaN or infinite component (rowvoi.errors.InvalidArgumentError),
    or for another dtype, byte order or number of dimensions.  Returns a
    new C-contiguous array; ``x`` is not changed."""
    cdef rv_real typ = <rv_real>_vector_type_of(x, "unit_query")
    cdef cnp.npy_intp d = cnp.PyArray_DIM(x, 0)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, &d, cnp.NPY_FLOAT32, 0)
    check(rv_unit_vector(cnp.PyArray_DATA(x), typ, <size_t>d, cnp.PyArray_STRIDE(x, 0),
                         <float *>cnp.PyArray_DATA(out)))
    return out


def any_nonzero(cnp.ndarray x not None):
    """Whether a component of ``x`` (float32 or float64 in native byte
    order, 1-D, any stride) is not zero: ``np.count_nonzero(x) > 0`` (NaN
    counts as nonzero), without NumPy's dispatch -- the dense search asks
    it of every query vector (the engine's ``rv_any_nonzero``).  ValueError
    for another array."""
    cdef rv_real typ = <rv_real>_vector_type_of(x, "any_nonzero")
    cdef bint r = rv_any_nonzero(cnp.PyArray_DATA(x), typ, <size_t>cnp.PyArray_DIM(x, 0),
                                 cnp.PyArray_STRIDE(x, 0)) != 0
    return r


#: the attribute of a hit holding its ``Deferred`` (rowvoi.corpus.base.DEFERRED:
#: a slot of SearchHit's, or a ``__dict__`` key of a hit class without one)
DEFERRED = "_rv_deferred"

cdef object _MISSING = object()  # (no evidence for a record)


cdef enum:
    # up to this many hits keep their positions and ranks on the stack
    STACK_HITS = 256


cdef class HitTable:
    """A read-only view of one record table (``RecordTable._hit_table``):
    record ids (int64, ascending), per record its artifact rank and kind
    code (int32) and surface index (int64), the kind names, and four
    string columns as a UTF-8 ``bytes`` blob with int64 offsets (``n + 1``
    each): texts and surface metadata per record, filter fields and ids
    per artifact (an empty metadata or filter-field string means ``{}``).
    The engine checks every offset and code here, once
    (``rv_records_check``): the per-query functions then index without
    checks.  It keeps references to all of them (they never change) and to
    the hit class and the JSON parser it uses, and the str of each artifact
    id a hit has used (one list slot per artifact: every later hit of the
    artifact shares it instead of decoding its own)."""

    cdef const int64_t[::1] ids
    cdef const int32_t[::1] art
    cdef const int32_t[::1] kind
    cdef const int64_t[::1] surface
    cdef list kinds
    cdef bytes t_blob, m_blob, f_blob, a_blob
    cdef const int64_t[::1] t_off, m_off, f_off, a_off
    cdef Py_ssize_t n, n_art
    cdef rv_records t
    cdef type hit_type
    # the byte offsets of the hit class's slots for the artifact id, the
    # score and the Deferred (_slot_offset), or -1 each where it has none
    cdef Py_ssize_t off_art, off_score, off_later
    cdef object loads
    cdef list a_str  # per artifact: its id as a str once a hit used it, else None

    def __init__(self, ids, art, kind, surface, list kinds not None,
                 bytes texts not None, t_off, bytes metadata not None, m_off,
                 bytes filter_fields not None, f_off, bytes artifact_ids not None, a_off,
                 hit_type not None, loads not None):
        self.ids = ids
        self.art = art
        self.kind = kind
        self.surface = surface
        self.kinds = list(kinds)
        self.t_blob, self.m_blob = texts, metadata
        self.f_blob, self.a_blob = filter_fields, artifact_ids
        self.t_off, self.m_off, self.f_off, self.a_off = t_off, m_off, f_off, a_off
        self.n = self.ids.shape[0]
        self.n_art = self.a_off.shape[0] - 1
        self.a_str = [None] * max(self.n_art, 0)
        if not isinstance(hit_type, type):
            raise TypeError(f"HitTable: hit_type must be a class, not {type(hit_type).__name__}")
        self.hit_type = hit_type
        self.off_art = _slot_offset(hit_type, "artifact_id")
        self.off_score = _slot_offset(hit_type, "score")
        self.off_later = _slot_offset(hit_type, "_rv_deferred")
        self.loads = loads
        if (self.art.shape[0] != self.n or self.kind.shape[0] != self.n
                or self.surface.shape[0] != self.n or self.t_off.shape[0] != self.n + 1
                or self.m_off.shape[0] != self.n + 1 or self.n_art < 0
                or self.f_off.shape[0] != self.n_art + 1):
            raise ValueError("HitTable: columns of different lengths")
        self.t.n_records = <size_t>self.n
        self.t.ids = &self.ids[0] if self.n else NULL
        self.t.artifact = &self.art[0] if self.n else NULL
        self.t.kind = &self.kind[0] if self.n else NULL
        self.t.n_kinds = <size_t>len(self.kinds)
        self.t.n_artifacts = <size_t>self.n_art
        _strings(&self.t.texts.bytes, &self.t.texts.size, &self.t.texts.offsets,
                 self.t_blob, self.t_off)
        _strings(&self.t.metadata.bytes, &self.t.metadata.size, &self.t.metadata.offsets,
                 self.m_blob, self.m_off)
        _strings(&self.t.filter_fields.bytes, &self.t.filter_fields.size,
                 &self.t.filter_fields.offsets, self.f_blob, self.f_off)
        _strings(&self.t.artifact_ids.bytes, &self.t.artifact_ids.size,
                 &self.t.artifact_ids.offsets, self.a_blob, self.a_off)
        check(rv_records_check(&self.t))

    def __len__(self):
        return self.n


cdef void _strings(const char **data, size_t *size, const int64_t **offsets, bytes blob,
                   const int64_t[::1] off) noexcept:
    """A string column as the engine's rv_strings (the blob and the offsets
    stay referenced by the HitTable)."""
    data[0] = PyBytes_AS_STRING(blob)
    size[0] = <size_t>len(blob)
    offsets[0] = &off[0]


cdef inline double _score(const char *sp, int typ, Py_ssize_t i) noexcept:
    if typ == cnp.NPY_FLOAT32:
        return (<const float *>sp)[i]
    return (<const double *>sp)[i]


def dense_hits(HitTable t not None, cnp.ndarray ids not None, cnp.ndarray scores not None,
               cnp.ndarray pos, Py_ssize_t k, bint collapse, source, str answered not None,
               str mode not None):
    """The hits of a dense search's candidates, best first (or of a
    lexical search's, with ``answered`` "bm25").

    ``ids`` (int64) and ``scores`` (float32 or float64), both 1-D and
    C-contiguous and of one length, are the candidates in result order
    when ``pos`` (int64, their positions in ``t``) is given; with ``pos``
    ``None`` they are in the vector index's order, and ``None`` is
    returned -- nothing built -- when a score is not strictly below the
    one before it (equal scores: the caller orders them and passes
    ``pos``), when an id is not in ``t`` (the caller reports it), or when
    an array is of another type or layout.  Keeps the first ``k``
    candidates, or with ``collapse`` the first of each artifact until
    ``k`` are kept (the engine's ``rv_records_hits``).  ValueError for a
    ``pos`` out of range or of another length; k must be >= 1.
    """
    cdef Py_ssize_t n = cnp.PyArray_DIM(ids, 0) if cnp.PyArray_NDIM(ids) == 1 else -1
    cdef int styp = cnp.PyArray_TYPE(scores)
    if (n < 0 or cnp.PyArray_TYPE(ids) != cnp.NPY_INT64
            or not cnp.PyArray_IS_C_CONTIGUOUS(ids)
            or cnp.PyArray_NDIM(scores) != 1 or cnp.PyArray_DIM(scores, 0) != n
            or (styp != cnp.NPY_FLOAT32 and styp != cnp.NPY_FLOAT64)
            or not cnp.PyArray_IS_C_CONTIGUOUS(scores)):
        if pos is not None:
            raise ValueError("dense_hits: ids must be int64 and scores float32 or float64, "
                             "1-D, C-contiguous, of one length")
        return None
    if k < 1:
        raise ValueError(f"dense_hits: k={k}, must be >= 1")
    if n == 0:
        return []
    cdef const int64_t *pp = NULL
    if pos is not None:
        if (cnp.PyArray_TYPE(pos) != cnp.NPY_INT64 or cnp.PyArray_NDIM(pos) != 1
                or cnp.PyArray_DIM(pos, 0) != n or not cnp.PyArray_IS_C_CONTIGUOUS(pos)):
            raise ValueError("dense_hits: pos must be int64, 1-D, C-contiguous, one per id")
        pp = <const int64_t *>cnp.PyArray_DATA(pos)
    cdef const int64_t *ip = <const int64_t *>cnp.PyArray_DATA(ids)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(scores)
    cdef Py_ssize_t m = k if k < n else n
    cdef int64_t stack[2 * STACK_HITS]
    cdef int64_t *at = stack
    if m > STACK_HITS:
        at = <int64_t *>PyMem_Malloc(2 * m * sizeof(int64_t))
        if at == NULL:
            raise MemoryError()
    cdef size_t kept = 0
    cdef rv_records_verdict verdict
    try:
        check(rv_records_hits(&t.t, <size_t>n, ip, sp,
                              RV_REAL_F32 if styp == cnp.NPY_FLOAT32 else RV_REAL_F64, pp,
                              <size_t>k, collapse, at, at + m, &kept, &verdict))
        if verdict != RV_RECORDS_HITS:
            return None
        return _build(t, at, at + m, <Py_ssize_t>kept, ip, sp, styp, source, answered, mode)
    finally:
        if at != stack:
            PyMem_Free(at)


def dense_search(HitTable t not None, flat not None, cnp.ndarray x not None, Py_ssize_t k,
                 Py_ssize_t fetch_k, bint collapse, bint kplus1, uint32_t n_threads, source,
                 str answered not None, str mode not None):
    """A whole unfiltered dense search of one query vector, in one call:
    ``unit_query(x)``, then the engine's ``rv_records_search`` (the exact
    search of the flat index behind ``flat`` -- a capsule from
    ``FlatHandle.capsule``: an index no writer changes again, searched
    without a lock, the GIL released -- and ``dense_hits`` of its
    candidates) -- the corpus's hot path
    (``rowvoi.corpus.retrieve.search``), without the NumPy arrays and the
    Python-level calls between those steps, whose code is out of cache
    whenever queries are sparse.

    The candidates are the best ``fetch_k`` records, or with ``kplus1``
    (the caller knows no collapse can drop a candidate) the best
    ``k + 1``, which tell the best ``k`` when no two of them score the
    same.  The hits are those of ``dense_hits(t, ids, scores, None, k,
    collapse, ...)`` on them.  An all-zero unit query has no candidates
    (``[]``).

    Returns None -- nothing built -- where the caller's general path must
    decide: ``x`` not a 1-D float32 or float64 vector in native byte order
    with the index's dimension, a NaN or infinite component, two
    candidates with equal scores (their order, and with ``kplus1`` which
    of them make the hits, then depends on candidates further down), a
    candidate id not in ``t``.  The engine's errors raise
    (rowvoi.errors).  ``1 <= k <= fetch_k``.
    """
    cdef const rv_flat *ix = <const rv_flat *>flat_pointer(flat)
    if k < 1 or fetch_k < k:
        raise ValueError(f"dense_search: k={k}, fetch_k={fetch_k}: need 1 <= k <= fetch_k")
    cdef int typ = _vector_type(x)
    cdef size_t dim = rv_flat_dim(ix)
    if typ < 0 or <size_t>cnp.PyArray_DIM(x, 0) != dim:
        return None
    # one block: per hit (at most k, at most the index's size) its position,
    # rank and score, then the unit query
    cdef size_t m = rv_flat_size(ix)
    if <size_t>k < m:
        m = <size_t>k
    cdef char *block = <char *>PyMem_Malloc((m + 1) * (2 * sizeof(int64_t) + sizeof(float))
                                            + dim * sizeof(float))
    if block == NULL:
        raise MemoryError()
    cdef int64_t *at = <int64_t *>block
    cdef int64_t *rank = at + m + 1
    cdef float *sc = <float *>(rank + m + 1)
    cdef float *q = sc + m + 1
    cdef rv_records_search_params prm
    cdef rv_records_verdict verdict
    cdef rv_status st
    cdef size_t kept = 0
    try:
        st = rv_unit_vector(cnp.PyArray_DATA(x), <rv_real>typ, dim, cnp.PyArray_STRIDE(x, 0), q)
        if st == RV_E_INVALID_ARG:
            return None  # a NaN or infinite component: the caller says so
        check(st)
        rv_records_search_params_init(&prm)
        prm.k = <size_t>k
        prm.fetch_k = <size_t>k + 1 if kplus1 else <size_t>fetch_k
        prm.collapse = collapse
        prm.n_threads = n_threads
        prm.progress = <rv_progress_fn>progress_check_signals
        with nogil:
            st = rv_records_search(&t.t, ix, &prm, q, at, rank, sc, &kept, &verdict)
        check(st)
        if verdict != RV_RECORDS_HITS:
            return None
        return _build(t, at, rank, <Py_ssize_t>kept, NULL, <const char *>sc, cnp.NPY_FLOAT32,
                      source, answered, mode)
    finally:
        PyMem_Free(block)


def lexical_search(HitTable t not None, bm25 not None, query, Py_ssize_t k, Py_ssize_t fetch_k,
                   bint kplus1, bint collapse, source, str answered not None,
                   str mode not None, filt=None):
    """A whole lexical search of one query, in one call: the engine's BM25
    search (``rv_bm25_search``, the GIL released) of the index behind
    ``bm25`` -- a capsule from ``BM25Core.capsule``; the caller holds its
    BM25Index's read lock -- among the records of ``filt`` (an id-set
    capsule, or None: all), then ``dense_hits`` of its candidates, with
    nothing between: the corpus's lexical path
    (``rowvoi.corpus.retrieval.rank._lexical_hits``) without the NumPy
    arrays, the result object and the Python-level calls of
    ``BM25Index.search``.

    The candidates are the best ``fetch_k`` documents, or with ``kplus1``
    (the caller knows no collapse can drop a candidate) the best ``k + 1``,
    which tell the best ``k`` unless the ``k``-th and ``(k + 1)``-th score
    the same -- then the best ``fetch_k`` are asked for.  Candidates that
    score the same are put in result order here (``_tied_hits``: the
    general path's ``order``).  Returns ``(hits, n, None)``: the hits
    (empty when no document matched) and the number of candidates ``n``;
    or ``(None, ids, scores)`` -- nothing built -- when an id is not in
    ``t``: the candidates, for the caller's general path (which reports
    the id).  TypeError for a
    query that is neither str nor bytes, ValueError for one that is not
    UTF-8, for k outside ``1 .. fetch_k`` or a capsule of another kind; the
    engine's errors raise (rowvoi.errors)."""
    cdef const rv_bm25 *ix = <const rv_bm25 *>bm25_pointer(bm25)
    cdef const rv_idset *fp = <const rv_idset *>idset_pointer(filt)
    if k < 1 or fetch_k < k:
        raise ValueError(f"lexical_search: k={k}, fetch_k={fetch_k}: need 1 <= k <= fetch_k")
    cdef const char *qp = NULL
    cdef Py_ssize_t qn = 0
    text_ptr(query, &qp, &qn, "query")
    cdef size_t ask = <size_t>k + 1 if kplus1 and k < fetch_k else <size_t>fetch_k
    # one block: the candidates' ids and scores (room for fetch_k), then per
    # hit its position and rank
    cdef size_t cap = <size_t>fetch_k
    cdef size_t m = <size_t>k
    cdef char *block = <char *>PyMem_Malloc(cap * (sizeof(int64_t) + sizeof(float))
                                            + 2 * m * sizeof(int64_t))
    if block == NULL:
        raise MemoryError()
    cdef int64_t *ids = <int64_t *>block
    cdef int64_t *at = ids + cap
    cdef float *sc = <float *>(at + 2 * m)
    cdef size_t nf = 0, kept = 0
    cdef rv_status st
    cdef rv_records_verdict verdict
    cdef cnp.npy_intp dims
    try:
        with nogil:
            st = rv_bm25_search(ix, qp, <size_t>qn, ask, 0, fp, ids, sc, &nf, NULL)
            if (st == RV_OK and ask < cap and nf == ask
                    and sc[<size_t>k - 1] == sc[<size_t>k]):
                # a tie at the k-th place: the order takes candidates further down
                st = rv_bm25_search(ix, qp, <size_t>qn, cap, 0, fp, ids, sc, &nf, NULL)
        check(st)
        if nf == 0:
            return [], 0, None
        check(rv_records_hits(&t.t, nf, ids, <const char *>sc, RV_REAL_F32, NULL,
                              <size_t>k, collapse, at, at + m, &kept, &verdict))
        if verdict == RV_RECORDS_HITS:
            return (_build(t, at, at + m, <Py_ssize_t>kept, ids, <const char *>sc,
                           cnp.NPY_FLOAT32, source, answered, mode), nf, None)
        if verdict == RV_RECORDS_TIE:
            hits = _tied_hits(t, nf, ids, sc, k, collapse, source, answered, mode)
            if hits is not None:
                return hits, nf, None
        dims = <cnp.npy_intp>nf
        out_ids = cnp.PyArray_SimpleNew(1, &dims, cnp.NPY_INT64)
        out_sc = cnp.PyArray_SimpleNew(1, &dims, cnp.NPY_FLOAT32)
        memcpy(cnp.PyArray_DATA(out_ids), ids, nf * sizeof(int64_t))
        memcpy(cnp.PyArray_DATA(out_sc), sc, nf * sizeof(float))
        return None, out_ids, out_sc
    finally:
        PyMem_Free(block)


cdef object _tied_hits(HitTable t, size_t n, const int64_t *ids, const float *sc,
                       Py_ssize_t k, bint collapse, source, str answered, str mode):
    """The hits of ``n`` lexical candidates (``ids`` best first, their
    float32 scores ``sc`` falling, some equal) when two score the same:
    put in result order -- score descending, then artifact rank, then
    surface index, the order ``order`` gives the general path
    (``rank._order``), by the same sort -- and kept and built as
    ``dense_hits`` with their positions builds them.  None, nothing
    built, when an id is not a record of ``t`` (the caller's general path
    reports it)."""
    cdef size_t m = <size_t>k if <size_t>k < n else n
    # one block: places and the merge's scratch, then per candidate its
    # position, its id and score in result order, then per hit its
    # position and rank
    cdef char *block = <char *>PyMem_Malloc(2 * n * sizeof(_Place)
                                            + n * (3 * sizeof(int64_t) + sizeof(float))
                                            + 2 * m * sizeof(int64_t))
    if block == NULL:
        raise MemoryError()
    cdef _Place *pl = <_Place *>block
    cdef int64_t *pos = <int64_t *>(pl + 2 * n)
    cdef int64_t *opos = pos + n
    cdef int64_t *oid = opos + n
    cdef int64_t *at = oid + n
    cdef float *osc = <float *>(at + 2 * m)
    cdef const int64_t *tid = t.t.ids
    cdef size_t h, lo, hi, mid, i, nrec = t.t.n_records
    cdef int64_t x
    cdef size_t kept = 0
    cdef rv_records_verdict verdict
    cdef bint unknown = False
    try:
        with nogil:
            for h in range(n):
                # the record's position: a binary search of the ascending ids
                x = ids[h]
                lo, hi = 0, nrec
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if tid[mid] < x:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo == nrec or tid[lo] != x:
                    unknown = True
                    break
                pos[h] = <int64_t>lo
                pl[h].s = sc[h]
                pl[h].t = 0.0
                pl[h].a = t.t.artifact[lo]
                pl[h].u = t.surface[lo]
                pl[h].i = <int64_t>h
            if not unknown:
                _sort_runs(pl, pl + n, <Py_ssize_t>n)
                for h in range(n):
                    i = <size_t>pl[h].i
                    opos[h] = pos[i]
                    oid[h] = ids[i]
                    osc[h] = sc[i]
        if unknown:
            return None
        check(rv_records_hits(&t.t, n, oid, NULL, RV_REAL_F32, opos, <size_t>k, collapse,
                              at, at + m, &kept, &verdict))
        return _build(t, at, at + m, <Py_ssize_t>kept, oid, <const char *>osc,
                      cnp.NPY_FLOAT32, source, answered, mode)
    finally:
        PyMem_Free(block)


@cython.final
@cython.no_gc
@cython.auto_pickle(False)
@cython.freelist(256)
cdef class Deferred:
    """The fields of a hit built here that are built when one of them is
    first read: the record's ``text``, its ``metadata`` and its
    ``explain`` (``DeferredField``, through ``field``, stores them on the
    hit once, with the plain fields below).  The plain fields
    ``surface_kind``, ``surface_index``, ``record_id`` and ``source`` are
    read from it until then (``plain``: a table lookup, nothing built or
    stored): most callers read none of them, and an attribute store is
    about a tenth of what a hit costs to make and free.  A hit of one side
    (``dense_hits``, ``dense_search``) has the other side's rank 0, weight
    1.0, no fusion and no evidence, and its explain is the one a fused
    hit's would be (``fused_hits``).
    The methods ``text``, ``metadata`` and ``explain`` build new objects
    on each call, equal to the reference's (``rank._dense_hits_reference``,
    ``rank._fused_hits_reference``).

    It keeps the record table it reads alive (a snapshot: a hit read
    after the corpus changed still gives its search's values) and refers
    to nothing that can refer back to a hit, so the cyclic garbage
    collector does not track it.  Its one state is whether it stored the
    fields (``done``, under its critical section); copies are itself;
    it is not pickled (a hit pickles its fields, read)."""

    cdef HitTable t
    cdef Py_ssize_t j          # the record's position in t
    cdef int64_t rid           # the record's id
    cdef object score          # the hit's score (explain's "fused" when fusion is set)
    cdef str mode, answered    # the search's mode; the dense side's name
    cdef int64_t d_rank, l_rank  # each side's 1-based rank, 0 where it did not return the hit
    cdef double d_score, l_score  # each side's raw score
    cdef object weight, fusion, evidence  # surface weight, fusion or None, evidence or _MISSING
    cdef object source         # the hit's source (the corpus's name, or None)
    cdef bint done             # whether the fields are stored on the hit

    def __init__(self):
        raise TypeError("Deferred: made by the hit builders only")

    def text(self):
        """The record's text (a new str)."""
        return self._text()

    def metadata(self):
        """The surface's metadata updated with the artifact's filter
        fields (a new dict)."""
        return self._metadata()

    def explain(self):
        """The hit's ``explain`` (a new dict)."""
        return self._explain()

    cdef object _text(self):
        cdef HitTable t = self.t
        cdef const char *tb = PyBytes_AS_STRING(t.t_blob)
        return PyUnicode_DecodeUTF8(tb + t.t_off[self.j], t.t_off[self.j + 1] - t.t_off[self.j],
                                    NULL)

    cdef object _metadata(self):
        cdef HitTable t = self.t
        cdef Py_ssize_t j = self.j
        cdef int32_t a = t.art[j]
        cdef int64_t s0 = t.m_off[j], s1 = t.m_off[j + 1]
        cdef object meta
        if s1 > s0:
            meta = t.loads(PyBytes_FromStringAndSize(PyBytes_AS_STRING(t.m_blob) + s0, s1 - s0))
        else:
            meta = {}
        s0, s1 = t.f_off[a], t.f_off[a + 1]
        if s1 > s0:
            meta.update(t.loads(PyBytes_FromStringAndSize(PyBytes_AS_STRING(t.f_blob) + s0,
                                                          s1 - s0)))
        return meta

    cdef object _explain(self):
        cdef bint d = self.d_rank != 0, l = self.l_rank != 0
        cdef dict why = {
            "mode": self.mode,
            "answered_by": ([self.answered, "bm25"] if l else [self.answered]) if d
                           else (["bm25"] if l else []),
            "dense": {"rank": self.d_rank, "cosine": self.d_score} if d else None,
            "lexical": {"rank": self.l_rank, "bm25": self.l_score} if l else None,
            "surface_weight": self.weight,
        }
        if self.fusion is not None:
            why["fusion"] = self.fusion
            why["fused"] = self.score
        if self.evidence is not _MISSING:
            why["evidence"] = self.evidence
        return why

    cdef object plain(self, int which):
        """The plain field ``_PLAIN_NAMES[which]`` (a new object for an
        int, the table's for the kind)."""
        if which == 0:
            return <object>PyList_GET_ITEM(self.t.kinds, self.t.kind[self.j])
        if which == 1:
            return self.t.surface[self.j]
        if which == 2:
            return self.rid
        return self.source

    cdef object field(self, hit, str name):
        """The field ``name`` of ``hit`` (whose Deferred this is), after
        storing on the hit every deferred field, built here (unless
        another thread stored them first: the first stored stand), and
        the plain ones, then letting the Deferred go: a caller who reads
        one of a hit's deferred fields mostly reads the others, and one
        descriptor call per hit costs less than three."""
        if self.done:
            return PyObject_GenericGetAttr(hit, name)  # (stored: no descriptor call)
        text = self._text()
        meta = self._metadata()  # (may let other threads run)
        why = self._explain()
        with cython.critical_section(self):
            if self.done:
                return PyObject_GenericGetAttr(hit, name)  # another thread's, first
            # object.__setattr__: the hit is a frozen dataclass
            PyObject_GenericSetAttr(hit, "text", text)
            PyObject_GenericSetAttr(hit, "metadata", meta)
            PyObject_GenericSetAttr(hit, "explain", why)
            PyObject_GenericSetAttr(hit, "surface_kind", self.plain(0))
            PyObject_GenericSetAttr(hit, "surface_index", self.plain(1))
            PyObject_GenericSetAttr(hit, "record_id", self.plain(2))
            PyObject_GenericSetAttr(hit, "source", self.plain(3))
            self.done = True
            try:
                _set_or_delete(hit, "_rv_deferred", NULL)
            except AttributeError:
                pass
        return text if name == "text" else meta if name == "metadata" else why

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


cdef extern from "Python.h":
    object PyObject_GenericGetDict(object o, void *context)
    object PyObject_GenericGetAttr(object o, object name)
    int _set_or_delete "PyObject_GenericSetAttr" (object o, object name, PyObject *v) except -1

cdef object _ABSENT = object()  # (a descriptor's default: none)
cdef tuple _DEFERRED_NAMES = ("text", "metadata", "explain")
cdef tuple _PLAIN_NAMES = ("surface_kind", "surface_index", "record_id", "source")
#: the fields of ``SearchHit`` that a hit built here leaves to its
#: ``Deferred`` (``DeferredField``): the built ones, then the plain ones
DEFERRED_FIELDS = _DEFERRED_NAMES + _PLAIN_NAMES


@cython.final
cdef class DeferredField:
    """A field of ``SearchHit`` (``text``, ``metadata`` or ``explain``)
    that a hit built here leaves to be built when first read, or one it
    leaves to be read from its ``Deferred`` (``surface_kind``,
    ``surface_index``, ``record_id``: ``DEFERRED_FIELDS``): a non-data
    descriptor, so a hit that holds the field (every hand-built hit, and
    a built one once a built field is read) never reaches it.

    On the first read of one of them, the hit's ``Deferred`` (its
    attribute ``DEFERRED``) builds the three and the hit stores them
    (``Deferred.field``); the first values stored are the ones every read
    gives, in every thread (the stores and their check hold the
    ``Deferred``'s critical section); the plain fields are stored with
    them, equal to what was read before.  Then the ``Deferred``, and the
    record table it keeps alive, is let go.  ``default``: what the class
    attribute gives (explain's default), or the descriptor itself when
    not given.  AttributeError for a hit with neither the field nor a
    ``Deferred``."""

    cdef readonly str name
    cdef object default
    cdef int plain  # the plain field's index in _PLAIN_NAMES, or -1

    def __init__(self, str name not None, default=_ABSENT):
        if name not in DEFERRED_FIELDS:
            raise ValueError(f"DeferredField: {name!r} is not a deferred field")
        self.name = name
        self.default = default
        self.plain = _PLAIN_NAMES.index(name) if name in _PLAIN_NAMES else -1

    def __get__(self, hit, owner):
        if hit is None:
            return self if self.default is _ABSENT else self.default
        try:
            later = PyObject_GenericGetAttr(hit, "_rv_deferred")  # (DEFERRED)
        except AttributeError:
            later = None
        if type(later) is not Deferred:
            # another thread stored the last deferred field meanwhile (the
            # Deferred goes only after the three are stored), or a hit
            # made without the field: its dict says which
            d = PyObject_GenericGetDict(hit, NULL)
            if self.name in d:
                return d[self.name]
            raise AttributeError(f"{type(hit).__name__!r} object has no attribute {self.name!r}")
        if self.plain >= 0:
            return (<Deferred>later).plain(self.plain)
        return (<Deferred>later).field(hit, self.name)


cdef tuple _NO_ARGS = ()


cdef inline object _new_object(type cls):
    """``cls.__new__(cls)`` through the class's own slot (the hit class
    inherits object's), without a Python-level call: a sixth of a hit's
    cost (100 hits: 31.6 -> 26.2 us)."""
    return (<PyTypeObject *>cls).tp_new(cls, <PyObject *>_NO_ARGS, NULL)


cdef object _artifact_id(HitTable t, int32_t a):
    """The id of artifact ``a`` of ``t``: decoded on its first use, then
    the same str for every hit of the table (``t.a_str``; the check and
    the store under the table's critical section, so that free-threaded
    builds keep one)."""
    cdef PyObject *p
    cdef const char *ab
    with cython.critical_section(t):
        p = PyList_GET_ITEM(t.a_str, a)
        if p != <PyObject *>None:
            return <object>p
        ab = PyBytes_AS_STRING(t.a_blob)
        s = PyUnicode_DecodeUTF8(ab + t.a_off[a], t.a_off[a + 1] - t.a_off[a], NULL)
        t.a_str[a] = s
        return s


cdef object _hit(HitTable t, Py_ssize_t j, object score, Deferred later):
    """The ``SearchHit`` of the record at position ``j``: its artifact id
    from the table and ``score``; its text, metadata and explain left to
    ``later`` to build, its kind, surface index, record id and source to
    read."""
    hit = _new_object(t.hit_type)
    if t.off_art >= 0 and t.off_score >= 0 and t.off_later >= 0:
        # the class's slots (SearchHit's, from rowvoi.corpus.base._HitSlots),
        # written in place: a fresh object's slots are empty
        _fill_slot(hit, t.off_art, _artifact_id(t, t.art[j]))
        _fill_slot(hit, t.off_score, score)
        _fill_slot(hit, t.off_later, later)
        return hit
    # object.__setattr__ (the frozen class's own __init__ sets its fields
    # so), for a hit class without those slots
    PyObject_GenericSetAttr(hit, "artifact_id", _artifact_id(t, t.art[j]))
    PyObject_GenericSetAttr(hit, "score", score)
    PyObject_GenericSetAttr(hit, "_rv_deferred", later)  # (DEFERRED)
    return hit


cdef extern from *:
    """
    #include "structmember.h"
    /* A writable object slot of a member descriptor (T_OBJECT_EX, not
    ** read-only): its byte offset in the instance, else -1. */
    static Py_ssize_t rv__member_offset(PyObject *descr) {
        if (!descr || Py_TYPE(descr) != &PyMemberDescr_Type) return -1;
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY)) return -1;
        return m->offset;
    }
    /* Store v in the empty slot at byte offset off of the object o (a new
    ** reference; o was made just now and nothing else has seen it). */
    static void rv__fill_slot(PyObject *o, Py_ssize_t off, PyObject *v) {
        PyObject **p = (PyObject **)((char *)o + off);
        PyObject *old = *p;
        Py_INCREF(v);
        *p = v;
        Py_XDECREF(old);
    }
    """
    Py_ssize_t _member_offset "rv__member_offset" (PyObject *descr)
    void _fill_slot "rv__fill_slot" (object o, Py_ssize_t off, object v)


cdef Py_ssize_t _slot_offset(type cls, str name):
    """The byte offset of the instance slot that attribute ``name`` of
    ``cls`` instances reads and writes (a ``__slots__`` entry: what the
    class's lookup of ``name`` finds is a writable member descriptor of
    an object slot), or -1 when it is anything else: the hit builders
    then set the attribute through ``object.__setattr__``."""
    for base in cls.__mro__:  # (the class's attribute lookup, in its order)
        found = base.__dict__.get(name, _ABSENT)
        if found is not _ABSENT:
            return _member_offset(<PyObject *>found)
    return -1


cdef inline Deferred _later(HitTable t, Py_ssize_t j, int64_t rid, object score, str mode,
                            str answered, int64_t d_rank, double d_score, int64_t l_rank,
                            double l_score, object weight, object fusion, object evidence,
                            object source):
    """The ``Deferred`` of the hit of the record at position ``j``, of id
    ``rid``: what its explain says (a hit of one side has the other's
    rank 0), and the hit's ``source``."""
    cdef Deferred d = Deferred.__new__(Deferred)
    d.t, d.j, d.rid, d.score, d.mode, d.answered = t, j, rid, score, mode, answered
    d.d_rank, d.d_score, d.l_rank, d.l_score = d_rank, d_score, l_rank, l_score
    d.weight, d.fusion, d.evidence, d.source = weight, fusion, evidence, source
    d.done = False
    return d


cdef list _build(HitTable t, const int64_t *at, const int64_t *rank, Py_ssize_t kept,
                 const int64_t *ip, const char *sp, int styp, source, str answered, str mode):
    """The hits' objects.  Hit h is the record at position ``at[h]``,
    candidate ``rank[h]``; with ``ip`` its record id is ``ip[rank[h]]``
    and its score ``sp[rank[h]]`` (the candidates' arrays), without it the
    table's id and ``sp[h]`` (a score per hit).  ``answered`` "bm25": the
    candidates are a lexical search's (its rank and score go to the
    explain's "lexical" entry, not "dense").  Each hit's text, metadata
    and explain are left to its ``Deferred``."""
    cdef list out = [None] * kept
    cdef bint lexical = answered == "bm25"
    cdef Py_ssize_t h, i, j
    cdef int64_t rid
    cdef double sc
    cdef object score
    cdef Deferred later
    for h in range(kept):
        j = at[h]
        i = rank[h]
        if ip != NULL:
            rid = ip[i]
            sc = _score(sp, styp, i)
        else:
            rid = t.ids[j]
            sc = _score(sp, styp, h)
        score = sc
        if lexical:
            later = _later(t, j, rid, score, mode, answered, 0, 0.0, i + 1, sc, 1.0, None,
                           _MISSING, source)
        else:
            later = _later(t, j, rid, score, mode, answered, i + 1, sc, 0, 0.0, 1.0, None,
                           _MISSING, source)
        out[h] = _hit(t, j, score, later)
    return out


ctypedef struct _Place:
    double s       # the score (descending)
    double t       # the tie key (descending), or 0.0
    int64_t a      # artifact rank (ascending)
    int64_t u      # surface index (ascending)
    int64_t i      # the input position (ascending: a stable order)


cdef inline int _desc(double p, double q) noexcept nogil:
    """p before q when greater; NaN after every number (where np.lexsort
    of -x puts it); -0.0 equals 0.0."""
    if p > q:
        return -1
    if p < q:
        return 1
    if p == q:
        return 0
    if isnan(p):
        return 0 if isnan(q) else 1
    return -1


cdef inline bint _before(const _Place *x, const _Place *y) noexcept nogil:
    """Whether x comes before y in result order (a strict total order:
    the input position decides last)."""
    cdef int c = _desc(x.s, y.s)
    if c == 0:
        c = _desc(x.t, y.t)
    if c == 0:
        c = (x.a > y.a) - (x.a < y.a)
    if c == 0:
        c = (x.u > y.u) - (x.u < y.u)
    if c == 0:
        c = (x.i > y.i) - (x.i < y.i)
    return c < 0


cdef void _sort_places(_Place *v, _Place *tmp, Py_ssize_t n) noexcept nogil:
    """Sort v[0:n] by _before: runs of 16 by insertion, then merged bottom
    up through tmp (n entries), the result back in v."""
    cdef Py_ssize_t lo, hi, i, j, k, mid, width
    cdef _Place x
    cdef _Place *src = v
    cdef _Place *dst = tmp
    cdef _Place *sw
    for lo in range(0, n, 16):
        hi = lo + 16 if lo + 16 < n else n
        for i in range(lo + 1, hi):
            x = v[i]
            j = i
            while j > lo and _before(&x, &v[j - 1]):
                v[j] = v[j - 1]
                j -= 1
            v[j] = x
    width = 16
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _before(&src[j], &src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
            lo = hi
        sw = src
        src = dst
        dst = sw
        width *= 2
    if src != v:
        for i in range(n):
            v[i] = src[i]


cdef void _sort_runs(_Place *v, _Place *tmp, Py_ssize_t n) noexcept nogil:
    """_sort_places of v[0:n]; when the scores already fall (no NaN: an
    index's candidates, a fused list's head), only each run of equal
    scores is sorted, by the keys after the score -- the same order, as
    entries of different runs are in it already (a lexical search's 500
    candidates on Cranfield: runs of 1 to a few)."""
    cdef Py_ssize_t h, a
    for h in range(1, n):
        if not v[h].s <= v[h - 1].s:
            _sort_places(v, tmp, n)
            return
    a = 0
    for h in range(1, n + 1):
        if h == n or v[h].s != v[a].s:
            if h - a > 1:
                _sort_places(v + a, tmp + a, h - a)
            a = h


def order(cnp.ndarray art not None, cnp.ndarray surface not None, cnp.ndarray pos not None,
          cnp.ndarray scores not None, cnp.ndarray tie=None):
    """The permutation that puts records in result order: score
    descending, then ``tie`` descending (when given), then artifact rank,
    then surface index -- ``np.lexsort((surface[pos], art[pos], -tie,
    -scores))``, equal to it element for element (NaN after every
    number, -0.0 equal to 0.0, equal keys in input order), in one merge
    sort instead of NumPy's passes over each key.

    ``art`` (int32) and ``surface`` (int64) are a record table's columns,
    ``pos`` (int64) the records' positions in them, ``scores`` and
    ``tie`` (float64) one per position; all 1-D and C-contiguous.
    Returns an intp array.  ValueError for arrays of another type, shape
    or length, or a position outside the columns."""
    cdef Py_ssize_t n_rec = cnp.PyArray_DIM(art, 0) if cnp.PyArray_NDIM(art) == 1 else -1
    cdef Py_ssize_t n = cnp.PyArray_DIM(pos, 0) if cnp.PyArray_NDIM(pos) == 1 else -1
    if (n_rec < 0 or n < 0 or not _column(art, cnp.NPY_INT32, n_rec)
            or not _column(surface, cnp.NPY_INT64, n_rec) or not _column(pos, cnp.NPY_INT64, n)
            or not _column(scores, cnp.NPY_FLOAT64, n)
            or (tie is not None and not _column(tie, cnp.NPY_FLOAT64, n))):
        raise ValueError("order: art must be int32 and surface int64 (one length), pos int64 "
                         "and scores and tie float64 (one length), 1-D, C-contiguous")
    cdef const int32_t *ap = <const int32_t *>cnp.PyArray_DATA(art)
    cdef const int64_t *up = <const int64_t *>cnp.PyArray_DATA(surface)
    cdef const int64_t *pp = <const int64_t *>cnp.PyArray_DATA(pos)
    cdef const double *sp = <const double *>cnp.PyArray_DATA(scores)
    cdef const double *tp = <const double *>cnp.PyArray_DATA(tie) if tie is not None else NULL
    cdef Py_ssize_t h, j
    _check_positions(pp, n, n_rec, "order")
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INTP, 0)
    cdef Py_ssize_t *op = <Py_ssize_t *>cnp.PyArray_DATA(out)
    if n == 0:
        return out
    cdef _Place *pl = <_Place *>PyMem_Malloc(2 * n * sizeof(_Place))
    if pl == NULL:
        raise MemoryError()
    try:
        for h in range(n):
            j = pp[h]
            pl[h].s = sp[h]
            pl[h].t = tp[h] if tp != NULL else 0.0
            pl[h].a = ap[j]
            pl[h].u = up[j]
            pl[h].i = h
        with nogil:
            _sort_runs(pl, pl + n, n)
        for h in range(n):
            op[h] = <Py_ssize_t>pl[h].i
    finally:
        PyMem_Free(pl)
    return out


def union(cnp.ndarray a not None, cnp.ndarray b not None, Py_ssize_t n_records):
    """The union of two ranked lists of record positions (``a`` and ``b``:
    int64, 1-D, C-contiguous, best first, each position once per list, all
    in ``[0, n_records)``): the distinct positions ascending, and each
    one's 1-based rank in ``a`` and in ``b`` (0 where that list lacks it),
    three int64 arrays of one length -- the engine's ``rv_records_union``.
    ValueError for arrays of another type or shape;
    ``rowvoi.errors.InvalidArgumentError`` for a position twice in one
    list, ``rowvoi.errors.RangeError`` for one out of range (both
    ValueErrors)."""
    if (cnp.PyArray_NDIM(a) != 1 or cnp.PyArray_NDIM(b) != 1
            or not _column(a, cnp.NPY_INT64, cnp.PyArray_DIM(a, 0))
            or not _column(b, cnp.NPY_INT64, cnp.PyArray_DIM(b, 0)) or n_records < 0):
        raise ValueError("union: a and b must be int64, 1-D, C-contiguous; n_records >= 0")
    cdef size_t na = <size_t>cnp.PyArray_DIM(a, 0), nb = <size_t>cnp.PyArray_DIM(b, 0)
    cdef cnp.npy_intp dims[1]
    dims[0] = <cnp.npy_intp>(na + nb)
    cdef cnp.ndarray u = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
    cdef cnp.ndarray ra = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
    cdef cnp.ndarray rb = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
    cdef size_t m = 0
    cdef rv_status st
    cdef const int64_t *ap = <const int64_t *>cnp.PyArray_DATA(a)
    cdef const int64_t *bp = <const int64_t *>cnp.PyArray_DATA(b)
    with nogil:
        st = rv_records_union(<size_t>n_records, na, ap, nb, bp,
                              <int64_t *>cnp.PyArray_DATA(u), <int64_t *>cnp.PyArray_DATA(ra),
                              <int64_t *>cnp.PyArray_DATA(rb), &m)
    check(st)
    return u[:m], ra[:m], rb[:m]


def rrf(cnp.ndarray rank_a not None, cnp.ndarray rank_b not None, int64_t rrf_k):
    """The reciprocal rank fusion scores (float64) of records ranked
    ``rank_a`` and ``rank_b`` (``union``'s ranks: int64, 1-D,
    C-contiguous, of one length; 0 where a list lacks the record): per
    record ``1 / (rrf_k + rank_a) + 1 / (rrf_k + rank_b)``, a term 0 for a
    rank 0, the ``rank_a`` term first -- the engine's ``rv_records_rrf``,
    bit for bit the sum written term by term in NumPy.  ValueError for
    arrays of another type or shape; ``rowvoi.errors.InvalidArgumentError``
    (a ValueError) for an ``rrf_k`` outside ``1 .. 2**62`` or a rank
    outside ``0 .. 2**62``."""
    cdef Py_ssize_t n = cnp.PyArray_DIM(rank_a, 0) if cnp.PyArray_NDIM(rank_a) == 1 else -1
    if n < 0 or not _column(rank_a, cnp.NPY_INT64, n) or not _column(rank_b, cnp.NPY_INT64, n):
        raise ValueError("rrf: rank_a and rank_b must be int64, 1-D, C-contiguous, of one length")
    cdef cnp.npy_intp dims[1]
    dims[0] = <cnp.npy_intp>n
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, dims, cnp.NPY_FLOAT64, 0)
    check(rv_records_rrf(<size_t>n, <const int64_t *>cnp.PyArray_DATA(rank_a),
                         <const int64_t *>cnp.PyArray_DATA(rank_b), rrf_k,
                         <double *>cnp.PyArray_DATA(out)))
    return out


def blend(cnp.ndarray ids not None, cnp.ndarray rank_a not None, cnp.ndarray rank_b not None,
          cnp.ndarray scores_a not None, cnp.ndarray scores_b not None, double alpha,
          double sat_k, flat=None, cnp.ndarray query_vector=None, uint32_t n_threads=0,
          bm25=None, query=None, size_t head=0, double max_a=INFINITY,
          double max_b=INFINITY):
    """The blend evidence (float64) of a hybrid search's records: ``ids``
    with their ``union`` ranks in the dense list ``rank_a`` and the lexical
    list ``rank_b`` (int64, 1-D, C-contiguous, of one length), those
    lists' scores in rank order (``scores_a``, ``scores_b``: float64, 1-D,
    C-contiguous); the records a list lacks are scored by the flat index
    behind ``flat`` (a ``FlatHandle.capsule``; ``query_vector``: float32,
    C-contiguous, of its dimension) and the BM25 index behind ``bm25`` (a
    ``BM25Core.capsule``; ``query``: str or bytes), when given -- the
    engine's ``rv_records_blend``, bit for bit the NumPy expression of
    ``rowvoi.corpus.retrieval.rank._blend_scores_numpy``.  With ``head``
    > 0, only the records that can be among the best ``head`` are
    computed, the others ``-inf`` (``max_a``, ``max_b``: the most a record
    the dense or lexical list lacks can score there).  The caller holds both
    indexes' read locks (a frozen flat index needs none); the GIL is
    released.  ValueError for arrays of another type or shape, or a
    capsule of another kind; TypeError for a query neither str nor bytes;
    the engine's errors raise (rowvoi.errors: ``RangeError`` for an id the
    flat index lacks)."""
    cdef Py_ssize_t n = cnp.PyArray_DIM(ids, 0) if cnp.PyArray_NDIM(ids) == 1 else -1
    if (n < 0 or not _column(ids, cnp.NPY_INT64, n) or not _column(rank_a, cnp.NPY_INT64, n)
            or not _column(rank_b, cnp.NPY_INT64, n)
            or cnp.PyArray_NDIM(scores_a) != 1 or cnp.PyArray_NDIM(scores_b) != 1
            or not _column(scores_a, cnp.NPY_FLOAT64, cnp.PyArray_DIM(scores_a, 0))
            or not _column(scores_b, cnp.NPY_FLOAT64, cnp.PyArray_DIM(scores_b, 0))):
        raise ValueError("blend: ids and ranks must be int64 and scores float64, 1-D, "
                         "C-contiguous, ids and ranks of one length")
    cdef rv_records_blend_params prm
    rv_records_blend_params_init(&prm)
    prm.alpha = alpha
    prm.sat_k = sat_k
    prm.n_threads = n_threads
    prm.head = head
    prm.max_a = max_a
    prm.max_b = max_b
    cdef Py_ssize_t qn = 0
    if flat is not None:
        prm.dense = <const rv_flat *>flat_pointer(flat)
        if (query_vector is None or not _column(query_vector, cnp.NPY_FLOAT32,
                                                <Py_ssize_t>rv_flat_dim(prm.dense))):
            raise ValueError("blend: query_vector must be float32, 1-D, C-contiguous, "
                             "of the flat index's dimension")
        prm.query_vector = <const float *>cnp.PyArray_DATA(query_vector)
    if bm25 is not None:
        prm.lexical = <const rv_bm25 *>bm25_pointer(bm25)
        text_ptr(query, &prm.query, &qn, "query")
        prm.query_len = <size_t>qn
    cdef cnp.npy_intp dims[1]
    dims[0] = <cnp.npy_intp>n
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, dims, cnp.NPY_FLOAT64, 0)
    cdef rv_status st
    cdef const int64_t *ip = <const int64_t *>cnp.PyArray_DATA(ids)
    cdef const int64_t *ra = <const int64_t *>cnp.PyArray_DATA(rank_a)
    cdef const int64_t *rb = <const int64_t *>cnp.PyArray_DATA(rank_b)
    cdef const double *sa = <const double *>cnp.PyArray_DATA(scores_a)
    cdef const double *sb = <const double *>cnp.PyArray_DATA(scores_b)
    cdef size_t na = <size_t>cnp.PyArray_DIM(scores_a, 0), nb = <size_t>cnp.PyArray_DIM(scores_b, 0)
    with nogil:
        st = rv_records_blend(&prm, <size_t>n, ip, ra, rb, na, sa, nb, sb,
                              <double *>cnp.PyArray_DATA(out))
    check(st)
    return out


cdef inline bint _column(cnp.ndarray a, int typ, Py_ssize_t n):
    return (cnp.PyArray_NDIM(a) == 1 and cnp.PyArray_DIM(a, 0) == n
            and cnp.PyArray_TYPE(a) == typ and cnp.PyArray_IS_C_CONTIGUOUS(a))


cdef int _check_positions(const int64_t *pp, Py_ssize_t n, Py_ssize_t n_rec,
                          str fn) except -1:
    """ValueError (naming ``fn``) unless every pp[0:n] is in [0, n_rec)."""
    cdef Py_ssize_t h
    for h in range(n):
        if pp[h] < 0 or pp[h] >= n_rec:
            raise ValueError(f"{fn}: position {pp[h]} out of range")
    return 0


def fused_hits(HitTable t not None, cnp.ndarray pos not None, cnp.ndarray ids not None,
               cnp.ndarray scores not None, cnp.ndarray d_rank not None,
               cnp.ndarray d_score not None, cnp.ndarray l_rank not None,
               cnp.ndarray l_score not None, cnp.ndarray evidence, weights, source,
               str mode not None, fusion, str answered_dense not None):
    """The hits of a search's final candidates, in the order given, with
    the ``explain`` of a search that may have two sides (hybrid, or a
    weighted one): :func:`rowvoi.corpus.retrieval.rank._fused_hits_reference`'s
    result, which the tests hold it to.

    Per hit: its position in ``t`` (``pos``, int64), record id (``ids``,
    int64), score (``scores``, float64), its 1-based rank and raw score on
    the dense side and on the lexical side (``d_rank``/``l_rank`` int64, 0
    where that side did not return it; ``d_score``/``l_score`` float64):
    all 1-D, C-contiguous, of one length.  ``evidence``: each hit's
    evidence (RRF; float64, the same shape), or None (no hit has one);
    ``weights`` (a dict of kind to weight, or None)
    gives ``surface_weight``; ``fusion`` (None unless hybrid) goes to the
    explain with the fused score.  Each hit's text, metadata and explain
    are left to its ``Deferred`` (evidence values: floats).  ValueError for
    arrays of another type, shape or length, or a position outside the
    table.
    """
    cdef Py_ssize_t n = cnp.PyArray_DIM(pos, 0) if cnp.PyArray_NDIM(pos) == 1 else -1
    if (n < 0 or not _column(pos, cnp.NPY_INT64, n) or not _column(ids, cnp.NPY_INT64, n)
            or not _column(scores, cnp.NPY_FLOAT64, n)
            or not _column(d_rank, cnp.NPY_INT64, n) or not _column(d_score, cnp.NPY_FLOAT64, n)
            or not _column(l_rank, cnp.NPY_INT64, n)
            or not _column(l_score, cnp.NPY_FLOAT64, n)
            or (evidence is not None and not _column(evidence, cnp.NPY_FLOAT64, n))):
        raise ValueError("fused_hits: pos, ids, d_rank, l_rank must be int64 and scores, "
                         "d_score, l_score, evidence float64, 1-D, C-contiguous, of one length")
    cdef const int64_t *pp = <const int64_t *>cnp.PyArray_DATA(pos)
    cdef const int64_t *ip = <const int64_t *>cnp.PyArray_DATA(ids)
    cdef const double *sp = <const double *>cnp.PyArray_DATA(scores)
    cdef const int64_t *dr = <const int64_t *>cnp.PyArray_DATA(d_rank)
    cdef const double *ds = <const double *>cnp.PyArray_DATA(d_score)
    cdef const int64_t *lr = <const int64_t *>cnp.PyArray_DATA(l_rank)
    cdef const double *ls = <const double *>cnp.PyArray_DATA(l_score)
    cdef const double *ev = (<const double *>cnp.PyArray_DATA(evidence)
                             if evidence is not None else NULL)
    cdef Py_ssize_t h, j
    _check_positions(pp, n, t.n, "fused_hits")
    cdef list out = [None] * n
    cdef object score, weight
    cdef Deferred later
    cdef bint weighted = bool(weights)
    for h in range(n):
        j = pp[h]
        score = sp[h]
        if weighted:
            weight = weights.get(<object>PyList_GET_ITEM(t.kinds, t.kind[j]), 1.0)
        else:
            weight = 1.0
        later = _later(t, j, ip[h], score, mode, answered_dense, dr[h], ds[h], lr[h], ls[h],
                       weight, fusion, <object>ev[h] if ev != NULL else _MISSING, source)
        out[h] = _hit(t, j, score, later)
    return out

