# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private: the per-query hot path of a corpus search, compiled.

``unit_query``: the query vector's float32 unit form (norm, finiteness
check and division in one call); ``any_nonzero``: whether it is not all
zeros.  ``HitTable`` and ``dense_hits``: a dense search's last step,
done once per query for ``k`` hits -- look up each candidate record id in
the record table (binary search), keep the best surface per artifact,
decode the texts, parse the metadata and make the ``SearchHit`` objects
with their ``explain`` -- in one pass, without a Python-level call per
hit.  The reference, and the meaning of every field, is
``rowvoi.corpus.retrieve._dense_hits_reference``; validation, the result
order of equal scores and errors stay in Python
(``rowvoi.corpus.retrieve._dense_hits``).  ``dense_search``: the three
steps of an unfiltered dense search -- ``unit_query``, the flat index's
exact search (the one engine call here), ``dense_hits`` -- in one call,
handing the cases it does not decide back to the Python path.
Everything here reads objects that never change once built, so any
number of threads may call it at once.
"""

cimport numpy as cnp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.list cimport PyList_GET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject_GenericSetAttr
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.math cimport isfinite, sqrt
from libc.stdint cimport int32_t, int64_t, uint32_t

from rowvoi cimport (rv_flat, rv_flat_dim, rv_flat_search, rv_flat_search_params,
                     rv_flat_search_params_init, rv_flat_size, rv_progress_fn, rv_status)
from _check cimport check, flat_pointer, progress_check_signals

cnp.import_array()


cdef bint _vector_is_f32(cnp.ndarray x, str fn) except -1:
    """True for a float32 ``x``, False for a float64 one; ValueError
    (naming ``fn``) unless ``x`` is one of them, 1-D, in native byte
    order."""
    cdef int typ = cnp.PyArray_TYPE(x)
    if ((typ != cnp.NPY_FLOAT32 and typ != cnp.NPY_FLOAT64) or cnp.PyArray_NDIM(x) != 1
            or not cnp.PyArray_ISNOTSWAPPED(x)):
        raise ValueError(f"{fn}: x must be a 1-D float32 or float64 array "
                         "in native byte order")
    return typ == cnp.NPY_FLOAT32


cdef inline double _component(const char *xp, cnp.npy_intp step, cnp.npy_intp i,
                              bint f32) noexcept:
    if f32:
        return (<const float *>(xp + i * step))[0]
    return (<const double *>(xp + i * step))[0]


cdef bint _unit_into(const char *xp, cnp.npy_intp step, cnp.npy_intp d, bint f32,
                     float *out) noexcept:
    """unit_query's arithmetic, written to ``out`` (``d`` floats): False,
    with ``out`` unspecified, when a component is NaN or infinite."""
    cdef cnp.npy_intp i
    cdef double v, s = 0.0, n
    for i in range(d):
        v = _component(xp, step, i, f32)
        s = s + v * v
    if not isfinite(s):
        # a NaN or infinite component, or finite ones whose squares overflow
        for i in range(d):
            if not isfinite(_component(xp, step, i, f32)):
                return False
    n = sqrt(s)
    if n > 0:
        for i in range(d):
            out[i] = <float>(_component(xp, step, i, f32) / n)
    else:
        for i in range(d):
            out[i] = <float>_component(xp, step, i, f32)
    return True


def unit_query(cnp.ndarray x not None):
    """The query vector ``x`` as float32 of unit length, in one call and
    one allocation: the corpus's dense search calls this for every query
    given as a vector, and NumPy's conversion and BLAS calls that it
    replaces cost tens of microseconds when their code is out of cache.

    ``x``: float32 or float64 in native byte order, 1-D, any stride.  The
    norm ``n`` is the square root of the float64 sum of the components'
    squares (each component converted to double), added in index order;
    each component is then divided by ``n`` in double and rounded once to
    float32.  A zero vector stays zero (``n`` is 0: no division).  Squares
    whose sum overflows double give ``n = inf``, so finite components
    become zeros, as NumPy's ``x / np.linalg.norm(x)`` does.  ValueError
    for a NaN or infinite component, or for another dtype, byte order or
    number of dimensions.  Returns a new C-contiguous array; ``x`` is not
    changed."""
    cdef bint f32 = _vector_is_f32(x, "unit_query")
    cdef cnp.npy_intp d = cnp.PyArray_DIM(x, 0)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, &d, cnp.NPY_FLOAT32, 0)
    if not _unit_into(<const char *>cnp.PyArray_DATA(x), cnp.PyArray_STRIDE(x, 0), d, f32,
                      <float *>cnp.PyArray_DATA(out)):
        raise ValueError("unit_query: x has a NaN or infinite component")
    return out


def any_nonzero(cnp.ndarray x not None):
    """Whether a component of ``x`` (float32 or float64 in native byte
    order, 1-D, any stride) is not zero: ``np.count_nonzero(x) > 0`` (NaN
    counts as nonzero), without NumPy's dispatch -- the dense search asks
    it of every query vector.  ValueError for another array."""
    cdef bint f32 = _vector_is_f32(x, "any_nonzero")
    cdef cnp.npy_intp d = cnp.PyArray_DIM(x, 0), i
    cdef cnp.npy_intp step = cnp.PyArray_STRIDE(x, 0)
    cdef const char *xp = <const char *>cnp.PyArray_DATA(x)
    for i in range(d):
        if _component(xp, step, i, f32) != 0:
            return True
    return False


cdef enum:
    # a collapse to at most this many hits keeps its artifacts on the stack
    STACK_SLOTS = 256


cdef class HitTable:
    """A read-only view of one record table (``RecordTable._hit_table``):
    record ids (int64, ascending), per record its artifact rank and kind
    code (int32) and surface index (int64), the kind names, and four
    string columns as a UTF-8 ``bytes`` blob with int64 offsets (``n + 1``
    each): texts and surface metadata per record, filter fields and ids
    per artifact (an empty metadata or filter-field string means ``{}``).
    Every offset and code is checked here, once: the per-query function
    then indexes without checks.  It keeps references to all of them (they
    never change) and to the hit class and the JSON parser it uses."""

    cdef const int64_t[::1] ids
    cdef const int32_t[::1] art
    cdef const int32_t[::1] kind
    cdef const int64_t[::1] surface
    cdef list kinds
    cdef bytes t_blob, m_blob, f_blob, a_blob
    cdef const int64_t[::1] t_off, m_off, f_off, a_off
    cdef Py_ssize_t n, n_art
    cdef object hit_type, loads, new

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
        self.hit_type = hit_type
        self.loads = loads
        self.new = object.__new__
        if (self.art.shape[0] != self.n or self.kind.shape[0] != self.n
                or self.surface.shape[0] != self.n or self.t_off.shape[0] != self.n + 1
                or self.m_off.shape[0] != self.n + 1 or self.n_art < 0
                or self.f_off.shape[0] != self.n_art + 1):
            raise ValueError("HitTable: columns of different lengths")
        _check_offsets(self.t_off, len(texts), "texts")
        _check_offsets(self.m_off, len(metadata), "metadata")
        _check_offsets(self.f_off, len(filter_fields), "filter_fields")
        _check_offsets(self.a_off, len(artifact_ids), "artifact_ids")
        cdef Py_ssize_t i, n_kinds = len(kinds)
        for i in range(self.n):
            if not 0 <= self.art[i] < self.n_art:
                raise ValueError(f"HitTable: artifact rank {self.art[i]} out of range")
            if not 0 <= self.kind[i] < n_kinds:
                raise ValueError(f"HitTable: kind code {self.kind[i]} out of range")
            if i and self.ids[i] <= self.ids[i - 1]:
                raise ValueError("HitTable: record ids not strictly ascending")

    def __len__(self):
        return self.n


cdef int _check_offsets(const int64_t[::1] off, Py_ssize_t size, str what) except -1:
    cdef Py_ssize_t i
    if off[0] != 0 or off[off.shape[0] - 1] != size:
        raise ValueError(f"HitTable: {what} offsets do not span the blob")
    for i in range(1, off.shape[0]):
        if off[i] < off[i - 1]:
            raise ValueError(f"HitTable: {what} offsets not ascending")
    return 0


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #  define rv__hot_prefetch(p) __builtin_prefetch((p), 0, 3)
    #else
    #  define rv__hot_prefetch(p) ((void)(p))
    #endif
    """
    void _prefetch "rv__hot_prefetch"(const void *p) noexcept nogil


cdef Py_ssize_t _find_all(const int64_t[::1] ids, Py_ssize_t n, const int64_t *xs,
                          Py_ssize_t m, Py_ssize_t *out) noexcept:
    """Position of each ``xs[i]`` (``i < m``) in the ascending ``ids`` into
    ``out[i]``; returns the index of the first one missing, or -1 when all
    are there.  The ``m`` binary searches advance together, one halving of
    every search per step, so that the cache misses of different searches
    overlap instead of queueing one behind another (a search's probes
    depend on each other; different searches' do not)."""
    cdef Py_ssize_t i, half, length = n
    if n == 0:
        return 0 if m > 0 else -1
    for i in range(m):
        out[i] = 0
    # lower bound: out[i] is the first position whose id is >= xs[i], or
    # the last position when every id is smaller
    while length > 1:
        half = length >> 1
        for i in range(m):
            if ids[out[i] + half] <= xs[i]:
                out[i] += half
        length -= half
    for i in range(m):
        if ids[out[i]] != xs[i]:
            return i
    return -1


cdef inline double _score(const char *sp, int typ, Py_ssize_t i) noexcept:
    if typ == cnp.NPY_FLOAT32:
        return (<const float *>sp)[i]
    return (<const double *>sp)[i]


def dense_hits(HitTable t not None, cnp.ndarray ids not None, cnp.ndarray scores not None,
               cnp.ndarray pos, Py_ssize_t k, bint collapse, source, str answered not None,
               str mode not None):
    """The hits of a dense search's candidates, best first.

    ``ids`` (int64) and ``scores`` (float32 or float64), both 1-D and
    C-contiguous and of one length, are the candidates in result order
    when ``pos`` (int64, their positions in ``t``) is given; with ``pos``
    ``None`` they are in the vector index's order, and ``None`` is
    returned -- nothing built -- when a score is not strictly below the
    one before it (equal scores: the caller orders them and passes
    ``pos``), when an id is not in ``t`` (the caller reports it), or when
    an array is of another type or layout.  Keeps the first ``k``
    candidates, or with ``collapse`` the first of each artifact until
    ``k`` are kept.  ValueError for a ``pos`` out of range or of another
    length; k must be >= 1.
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
    return _hits(t, <const int64_t *>cnp.PyArray_DATA(ids),
                 <const char *>cnp.PyArray_DATA(scores), styp, n, pp, k, collapse, source,
                 answered, mode)


cdef object _hits(HitTable t, const int64_t *ip, const char *sp, int styp, Py_ssize_t n,
                  const int64_t *pp, Py_ssize_t k, bint collapse, source, str answered,
                  str mode):
    """dense_hits on ``n >= 1`` candidates given as pointers (``pp`` NULL:
    no positions, so None when a score is not strictly below the one
    before it or an id is not in ``t``)."""
    cdef Py_ssize_t i, j, m = k if k < n else n, kept
    if pp == NULL:
        for i in range(1, n):
            if not _score(sp, styp, i - 1) > _score(sp, styp, i):
                return None
    # every candidate's position; then the positions of those that make the
    # hits and their indexes among the candidates (ranks - 1)
    cdef Py_ssize_t *every = <Py_ssize_t *>PyMem_Malloc((n + 2 * m) * sizeof(Py_ssize_t))
    if every == NULL:
        raise MemoryError()
    cdef Py_ssize_t *at = every + n
    cdef Py_ssize_t *rank = at + m
    try:
        if pp != NULL:
            for i in range(n):
                j = pp[i]
                if not 0 <= j < t.n:
                    raise ValueError(f"dense_hits: position {j} out of range")
                every[i] = j
        elif _find_all(t.ids, t.n, ip, n, every) >= 0:
            return None
        if collapse:
            kept = _collapse(t, every, n, m, at, rank)
        else:
            for i in range(m):
                at[i] = every[i]
                rank[i] = i
            kept = m
        return _build(t, ip, sp, styp, at, rank, kept, source, answered, mode)
    finally:
        PyMem_Free(every)


def dense_search(HitTable t not None, flat not None, cnp.ndarray x not None, Py_ssize_t k,
                 Py_ssize_t fetch_k, bint collapse, bint kplus1, uint32_t n_threads, source,
                 str answered not None, str mode not None):
    """A whole unfiltered dense search of one query vector, in one call:
    ``unit_query(x)``, the exact search of the flat index behind ``flat``
    (a capsule from ``FlatHandle.capsule``: an index no writer changes
    again, searched without a lock, the GIL released), then
    ``dense_hits`` of its candidates -- the corpus's hot path
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
    cdef int typ = cnp.PyArray_TYPE(x)
    cdef size_t dim = rv_flat_dim(ix), size = rv_flat_size(ix)
    if ((typ != cnp.NPY_FLOAT32 and typ != cnp.NPY_FLOAT64) or cnp.PyArray_NDIM(x) != 1
            or not cnp.PyArray_ISNOTSWAPPED(x) or <size_t>cnp.PyArray_DIM(x, 0) != dim):
        return None
    # candidates: at most fetch_k, and never more than the index holds
    cdef size_t cap = <size_t>fetch_k if <size_t>fetch_k < size else size
    if cap == 0:
        cap = 1
    cdef char *block = <char *>PyMem_Malloc(dim * sizeof(float) + cap * (sizeof(int64_t) + sizeof(float)))
    if block == NULL:
        raise MemoryError()
    cdef int64_t *ip = <int64_t *>block
    cdef float *sp = <float *>(block + cap * sizeof(int64_t))
    cdef float *q = sp + cap
    cdef size_t i
    cdef rv_flat_search_params prm
    cdef rv_status st
    cdef size_t found = 0
    try:
        if not _unit_into(<const char *>cnp.PyArray_DATA(x), cnp.PyArray_STRIDE(x, 0),
                          <cnp.npy_intp>dim, typ == cnp.NPY_FLOAT32, q):
            return None  # a NaN or infinite component: the caller says so
        i = 0
        while i < dim and q[i] == 0:
            i += 1
        if i == dim:
            return []  # an all-zero unit query: no candidates
        rv_flat_search_params_init(&prm)
        prm.k = <size_t>k + 1 if kplus1 else <size_t>fetch_k
        if prm.k > cap:
            prm.k = cap
        prm.n_threads = n_threads
        prm.exact = 1
        prm.progress = <rv_progress_fn>progress_check_signals
        with nogil:
            st = rv_flat_search(ix, &prm, 1, q, ip, sp, &found)
        check(st)
        if found == 0:
            return []
        return _hits(t, ip, <const char *>sp, cnp.NPY_FLOAT32, <Py_ssize_t>found, NULL, k,
                     collapse, source, answered, mode)
    finally:
        PyMem_Free(block)


cdef Py_ssize_t _collapse(HitTable t, const Py_ssize_t *every, Py_ssize_t n, Py_ssize_t m,
                          Py_ssize_t *at, Py_ssize_t *rank) except -1:
    """The first candidate of each artifact until ``m`` are kept (an open
    addressing set of artifact ranks); returns how many were kept."""
    cdef Py_ssize_t cap = 1, i, j, h, kept = 0
    while cap < 2 * m:
        cap <<= 1
    cdef int32_t stack[2 * STACK_SLOTS]
    cdef int32_t *seen = stack
    if cap > 2 * STACK_SLOTS:
        seen = <int32_t *>PyMem_Malloc(cap * sizeof(int32_t))
        if seen == NULL:
            raise MemoryError()
    cdef int32_t a
    cdef Py_ssize_t mask = cap - 1
    try:
        for i in range(cap):
            seen[i] = -1
        for i in range(n):
            j = every[i]
            a = t.art[j]
            h = <Py_ssize_t>(<uint32_t>a * <uint32_t>2654435761) & mask
            while seen[h] != -1 and seen[h] != a:
                h = (h + 1) & mask
            if seen[h] == a:
                continue
            seen[h] = a
            at[kept] = j
            rank[kept] = i
            kept += 1
            if kept == m:
                break
        return kept
    finally:
        if seen != stack:
            PyMem_Free(seen)


cdef list _build(HitTable t, const int64_t *ip, const char *sp, int styp,
                 const Py_ssize_t *at, const Py_ssize_t *rank, Py_ssize_t kept, source,
                 str answered, str mode):
    cdef list out = [None] * kept
    cdef Py_ssize_t h, i, j
    cdef int32_t a
    cdef int64_t s0, s1
    cdef const char *tb = PyBytes_AS_STRING(t.t_blob)
    cdef const char *mb = PyBytes_AS_STRING(t.m_blob)
    cdef const char *fb = PyBytes_AS_STRING(t.f_blob)
    cdef const char *ab = PyBytes_AS_STRING(t.a_blob)
    cdef object meta, hit, score, weight = 1.0, loads = t.loads, new = t.new, typ = t.hit_type
    # ask for every hit's columns at once (texts, ids, metadata offsets):
    # their lines then arrive together, not one hit's after another's (a
    # text's first 4 KiB: the hardware prefetcher follows a longer one)
    for h in range(kept):
        j = at[h]
        a = t.art[j]
        _prefetch(&t.m_off[j])
        _prefetch(&t.f_off[a])
        _prefetch(ab + t.a_off[a])
        s1 = t.t_off[j + 1]
        if s1 > t.t_off[j] + 4096:
            s1 = t.t_off[j] + 4096
        for s0 in range(t.t_off[j], s1, 64):
            _prefetch(tb + s0)
    for h in range(kept):
        j = at[h]
        i = rank[h]
        a = t.art[j]
        s0, s1 = t.m_off[j], t.m_off[j + 1]
        if s1 > s0:
            meta = loads(PyBytes_FromStringAndSize(mb + s0, s1 - s0))
        else:
            meta = {}
        s0, s1 = t.f_off[a], t.f_off[a + 1]
        if s1 > s0:
            meta.update(loads(PyBytes_FromStringAndSize(fb + s0, s1 - s0)))
        score = _score(sp, styp, i)
        hit = new(typ)
        # object.__setattr__ (the frozen class's own __init__ sets its fields
        # so): the attributes go to the instance's own storage, with no
        # __dict__ made and grown here
        PyObject_GenericSetAttr(hit, "artifact_id", PyUnicode_DecodeUTF8(
            ab + t.a_off[a], t.a_off[a + 1] - t.a_off[a], NULL))
        PyObject_GenericSetAttr(hit, "surface_kind", <object>PyList_GET_ITEM(t.kinds, t.kind[j]))
        PyObject_GenericSetAttr(hit, "score", score)
        PyObject_GenericSetAttr(hit, "text", PyUnicode_DecodeUTF8(
            tb + t.t_off[j], t.t_off[j + 1] - t.t_off[j], NULL))
        PyObject_GenericSetAttr(hit, "metadata", meta)
        PyObject_GenericSetAttr(hit, "source", source)
        PyObject_GenericSetAttr(hit, "surface_index", t.surface[j])
        PyObject_GenericSetAttr(hit, "record_id", ip[i])
        PyObject_GenericSetAttr(hit, "explain", {
            "mode": mode,
            "answered_by": [answered],
            "dense": {"rank": i + 1, "cosine": score},
            "lexical": None,
            "surface_weight": weight,
        })
        out[h] = hit
    return out
