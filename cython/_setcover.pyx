# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the set cover engine (cover.h).  Types in, types out;
the public API, validation and labels live in rowvoi.setcover / rowvoi.keys."""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t

from rowvoi cimport *
from _check cimport check, progress_check_signals

cnp.import_array()

STRATEGIES = {"greedy": RV_COVER_GREEDY, "exact": RV_COVER_EXACT,
              "sa": RV_COVER_SA, "ga": RV_COVER_GA, "hybrid": RV_COVER_HYBRID,
              "lp": RV_COVER_LP}
LP_EPS = RV_COVER_LP_EPS
OBJECTIVES = {"coverage": RV_PATH_COVERAGE, "entropy": RV_PATH_ENTROPY}


def version():
    """(version string, version number) of the linked engine."""
    return rv_version().decode("ascii"), rv_version_number()


def header_version():
    """Version macros as compiled from rowvoi.h."""
    return (RV_VERSION_MAJOR, RV_VERSION_MINOR, RV_VERSION_PATCH,
            RV_VERSION_NUMBER, RV_VERSION_STRING.decode("ascii"))


cdef class CoverProblem:
    """Owns one rv_cover handle."""
    cdef rv_cover *p

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        rv_cover_free(self.p)

    @staticmethod
    def from_csr(size_t n_elements, offsets, elements, costs=None):
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] off = np.ascontiguousarray(offsets, dtype=np.uint64)
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] el = np.ascontiguousarray(elements, dtype=np.uint32)
        cdef cnp.ndarray[double, ndim=1, mode="c"] c
        cdef const double *cp = NULL
        cdef size_t n_sets = off.shape[0] - 1
        cdef const uint32_t *ep = NULL
        if off.shape[0] < 1:
            raise ValueError("offsets must have n_sets + 1 entries")
        if costs is not None:
            c = np.ascontiguousarray(costs, dtype=np.float64)
            if <size_t>c.shape[0] != n_sets:
                raise ValueError("costs must have one entry per set")
            cp = &c[0] if n_sets else NULL
        if el.shape[0]:
            ep = &el[0]
        cdef CoverProblem self = CoverProblem.__new__(CoverProblem)
        cdef rv_status st
        with nogil:
            st = rv_cover_create(n_elements, n_sets, &off[0], ep, cp, &self.p)
        check(st)
        return self

    @staticmethod
    def from_codes(codes, costs=None, uint64_t max_bytes=0):
        """codes: (n_cols, n_rows) int32 array."""
        cdef cnp.ndarray[int32_t, ndim=2, mode="c"] cd = np.ascontiguousarray(codes, dtype=np.int32)
        cdef size_t n_cols = cd.shape[0], n_rows = cd.shape[1]
        cdef cnp.ndarray[double, ndim=1, mode="c"] c
        cdef const double *cp = NULL
        cdef const int32_t *dp = NULL
        if costs is not None:
            c = np.ascontiguousarray(costs, dtype=np.float64)
            if <size_t>c.shape[0] != n_cols:
                raise ValueError("costs must have one entry per column")
            cp = &c[0] if n_cols else NULL
        if n_cols and n_rows:
            dp = &cd[0, 0]
        cdef CoverProblem self = CoverProblem.__new__(CoverProblem)
        cdef rv_status st
        with nogil:
            st = rv_cover_create_pairs(dp, n_rows, n_cols, cp, max_bytes, &self.p)
        check(st)
        return self

    @property
    def n_sets(self):
        return rv_cover_n_sets(self.p)

    @property
    def n_elements(self):
        return rv_cover_n_elements(self.p)

    @property
    def n_coverable(self):
        return rv_cover_n_coverable(self.p)

    def element_counts(self):
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] out = np.zeros(
            max(<Py_ssize_t>rv_cover_n_elements(self.p), 1), dtype=np.uint32)
        check(rv_cover_element_counts(self.p, &out[0]))
        return out[:rv_cover_n_elements(self.p)]

    def covered(self, sel, bint with_mask=False):
        """(count, mask or None) for a selection of set indices."""
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] s = np.ascontiguousarray(sel, dtype=np.uint32)
        cdef uint64_t m = rv_cover_n_elements(self.p)
        cdef cnp.ndarray[uint8_t, ndim=1, mode="c"] mask = np.zeros(max(<Py_ssize_t>m, 1), dtype=np.uint8)
        cdef uint64_t n = 0
        cdef const uint32_t *sp = &s[0] if s.shape[0] else NULL
        cdef rv_status st
        with nogil:
            st = rv_cover_covered(self.p, sp, s.shape[0], &mask[0] if with_mask else NULL, &n)
        check(st)
        return n, (mask[:m].astype(bool) if with_mask else None)

    def distinct_elements(self):
        """(signatures as a bool matrix n_distinct x n_sets, multiplicities)."""
        cdef size_t n = rv_cover_n_sets(self.p)
        cdef size_t sw = (n + 63) // 64 if n else 1
        cdef size_t need = 0
        cdef rv_status st
        with nogil:
            st = rv_cover_distinct_elements(self.p, NULL, NULL, 0, &need)
        if st != RV_OK and st != RV_E_SHAPE:
            check(st)
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] sig = np.zeros(max(need * sw, 1), dtype=np.uint64)
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] mult = np.zeros(max(need, 1), dtype=np.uint64)
        cdef size_t got = 0
        with nogil:
            st = rv_cover_distinct_elements(self.p, &sig[0], &mult[0], need, &got)
        check(st)
        bits = np.unpackbits(sig[:got * sw].reshape(got, sw).view(np.uint8).reshape(got, sw * 8),
                             axis=1, bitorder="little")[:, :n].astype(bool)
        return bits, mult[:got].copy()

    def solve(self, str strategy, n_required=None, double time_limit=0.0,
              uint64_t seed=0, uint32_t iterations=0, uint32_t population=0,
              uint32_t generations=0, double lp_eps=0.0, uint32_t lp_rounds=0):
        """Returns (selected set indices, info dict).  info["timed_out"] is
        True when the exact solver stopped at its limit (answer unproven);
        info["lower_bound"] is a proven lower bound on the optimum (the LP
        bound for "lp", rounded up for integer costs; the cost when optimal;
        else 0), info["lp_bound"] the relaxation's own bound ("lp" only)."""
        cdef rv_cover_options opt
        rv_cover_options_init(&opt)
        opt.strategy = STRATEGIES[strategy]
        if n_required is not None:
            opt.n_required = <uint64_t>n_required
        opt.time_limit = time_limit
        opt.seed = seed
        opt.iterations = iterations
        opt.population = population
        opt.generations = generations
        opt.lp_eps = lp_eps
        opt.lp_rounds = lp_rounds
        opt.progress = <rv_progress_fn>progress_check_signals
        cdef size_t n = rv_cover_n_sets(self.p)
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] out = np.zeros(max(<Py_ssize_t>n, 1), dtype=np.uint32)
        cdef size_t k = 0
        cdef rv_cover_info info
        cdef rv_status st
        with nogil:
            st = rv_cover_solve(self.p, &opt, &out[0], n, &k, &info)
        timed_out = st == RV_E_TIMEOUT
        if not timed_out:
            check(st)
        return out[:k].copy(), {
            "cost": info.cost, "covered": info.covered, "optimal": bool(info.optimal),
            "work": info.work, "seconds": info.seconds, "timed_out": timed_out,
            "lower_bound": info.lower_bound, "lp_bound": info.lp_bound,
            "message": rv_errmsg().decode("utf-8", "replace") if timed_out else "",
        }

    def lp(self, n_required=None, double eps=RV_COVER_LP_EPS, double time_limit=0.0):
        """The LP relaxation within 1 + eps (rv_cover_lp).  Returns (x, info):
        x the fractional cover (float64, one value per set), info with
        value, lower_bound, converged, work, seconds, timed_out."""
        cdef size_t n = rv_cover_n_sets(self.p)
        cdef cnp.ndarray[double, ndim=1, mode="c"] x = np.zeros(max(<Py_ssize_t>n, 1), dtype=np.float64)
        cdef uint64_t req = RV_COVER_ALL if n_required is None else <uint64_t>n_required
        cdef rv_cover_lp_result res
        cdef rv_status st
        with nogil:
            st = rv_cover_lp(self.p, req, eps, time_limit, &x[0], n, &res)
        timed_out = st == RV_E_TIMEOUT
        if not timed_out:
            check(st)
        return x[:n].copy(), {
            "value": res.value, "lower_bound": res.lower_bound,
            "converged": bool(res.converged), "work": res.work, "seconds": res.seconds,
            "timed_out": timed_out,
        }

    def plan_path(self, str objective="coverage", weights=None):
        """Returns (order, newly_covered, gain) arrays."""
        cdef size_t n = rv_cover_n_sets(self.p)
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] order = np.zeros(max(<Py_ssize_t>n, 1), dtype=np.uint32)
        cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] newly = np.zeros(max(<Py_ssize_t>n, 1), dtype=np.uint64)
        cdef cnp.ndarray[double, ndim=1, mode="c"] gain = np.zeros(max(<Py_ssize_t>n, 1), dtype=np.float64)
        cdef cnp.ndarray[double, ndim=1, mode="c"] w
        cdef const double *wp = NULL
        cdef rv_path_objective obj = OBJECTIVES[objective]
        if weights is not None:
            w = np.ascontiguousarray(weights, dtype=np.float64)
            if <uint64_t>w.shape[0] != rv_cover_n_elements(self.p):
                raise ValueError("weights must have one entry per element")
            wp = &w[0] if w.shape[0] else NULL
        cdef size_t k = 0
        cdef rv_status st
        with nogil:
            st = rv_cover_plan_path(self.p, obj, wp, &order[0], &newly[0], &gain[0], n, &k)
        check(st)
        return order[:k].copy(), newly[:k].copy(), gain[:k].copy()


def keys_plan_path(codes, costs=None, str objective="coverage", uint64_t stop_unresolved=0):
    """Greedy key path by partition refinement.  codes: (n_cols, n_rows) int32.
    Returns (order, newly_resolved, gain, unresolved_at_end)."""
    cdef cnp.ndarray[int32_t, ndim=2, mode="c"] cd = np.ascontiguousarray(codes, dtype=np.int32)
    cdef size_t n_cols = cd.shape[0], n_rows = cd.shape[1]
    cdef cnp.ndarray[double, ndim=1, mode="c"] c
    cdef const double *cp = NULL
    cdef const int32_t *dp = NULL
    if costs is not None:
        c = np.ascontiguousarray(costs, dtype=np.float64)
        if <size_t>c.shape[0] != n_cols:
            raise ValueError("costs must have one entry per column")
        cp = &c[0] if n_cols else NULL
    if n_cols and n_rows:
        dp = &cd[0, 0]
    cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] order = np.zeros(max(<Py_ssize_t>n_cols, 1), dtype=np.uint32)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] newly = np.zeros(max(<Py_ssize_t>n_cols, 1), dtype=np.uint64)
    cdef cnp.ndarray[double, ndim=1, mode="c"] gain = np.zeros(max(<Py_ssize_t>n_cols, 1), dtype=np.float64)
    cdef rv_path_objective obj = OBJECTIVES[objective]
    cdef size_t k = 0
    cdef uint64_t unresolved = 0
    cdef rv_status st
    with nogil:
        st = rv_keys_plan_path(dp, n_rows, n_cols, cp, obj, stop_unresolved,
                               <rv_progress_fn>progress_check_signals, NULL,
                               &order[0], &newly[0], &gain[0], n_cols, &k, &unresolved)
    check(st)
    return order[:k].copy(), newly[:k].copy(), gain[:k].copy(), unresolved


def keys_unresolved(codes, cols):
    """Row pairs that agree on every column in cols.  codes: (n_cols, n_rows)."""
    cdef cnp.ndarray[int32_t, ndim=2, mode="c"] cd = np.ascontiguousarray(codes, dtype=np.int32)
    cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] cs = np.ascontiguousarray(cols, dtype=np.uint32)
    cdef size_t n_cols = cd.shape[0], n_rows = cd.shape[1]
    cdef const int32_t *dp = &cd[0, 0] if (n_cols and n_rows) else NULL
    cdef const uint32_t *sp = &cs[0] if cs.shape[0] else NULL
    cdef uint64_t out = 0
    cdef rv_status st
    with nogil:
        st = rv_keys_unresolved(dp, n_rows, n_cols, sp, cs.shape[0], &out)
    check(st)
    return out


def keys_count_values(keys, weights=None, mass=None, uint32_t n_buckets=1):
    """Distinct uint64 keys with summed weights (and masses), grouped by bucket.
    Returns (keys, counts, masses or None, bucket_offsets)."""
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] k = np.ascontiguousarray(keys, dtype=np.uint64)
    cdef size_t n = k.shape[0]
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] w
    cdef cnp.ndarray[double, ndim=1, mode="c"] m
    cdef const uint64_t *wp = NULL
    cdef const double *mp = NULL
    if weights is not None:
        w = np.ascontiguousarray(weights, dtype=np.uint64)
        if <size_t>w.shape[0] != n:
            raise ValueError("weights must have one entry per key")
        wp = &w[0] if n else NULL
    if mass is not None:
        m = np.ascontiguousarray(mass, dtype=np.float64)
        if <size_t>m.shape[0] != n:
            raise ValueError("mass must have one entry per key")
        mp = &m[0] if n else NULL
    cdef Py_ssize_t cap = max(<Py_ssize_t>n, 1)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] ok = np.empty(cap, dtype=np.uint64)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] oc = np.empty(cap, dtype=np.uint64)
    cdef cnp.ndarray[double, ndim=1, mode="c"] om = np.empty(cap if mass is not None else 1,
                                                            dtype=np.float64)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] off = np.zeros(<Py_ssize_t>n_buckets + 1,
                                                               dtype=np.uint64)
    cdef const uint64_t *kp = &k[0] if n else NULL
    cdef double *omp = &om[0] if mass is not None else NULL
    cdef size_t nd = 0
    cdef rv_status st
    with nogil:
        st = rv_keys_count_values(kp, wp, mp, n, n_buckets, &ok[0], &oc[0], omp, &off[0],
                                  <size_t>cap, &nd)
    check(st)
    return (ok[:nd].copy(), oc[:nd].copy(), om[:nd].copy() if mass is not None else None, off)


def keys_group_scores(codes, offsets, bint entropy=False):
    """Pairs each column resolves inside the row groups [offsets[g], offsets[g+1]).
    codes: (n_cols, n_rows).  Returns (resolved uint64, entropy float64 or None)."""
    cdef cnp.ndarray[int32_t, ndim=2, mode="c"] cd = np.ascontiguousarray(codes, dtype=np.int32)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] of = np.ascontiguousarray(offsets, dtype=np.uint64)
    cdef size_t n_cols = cd.shape[0], n_rows = cd.shape[1]
    cdef size_t n_groups = of.shape[0] - 1 if of.shape[0] else 0
    cdef const int32_t *dp = &cd[0, 0] if (n_cols and n_rows) else NULL
    cdef const uint64_t *op = &of[0] if of.shape[0] else NULL
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] res = np.zeros(max(<Py_ssize_t>n_cols, 1),
                                                               dtype=np.uint64)
    cdef cnp.ndarray[double, ndim=1, mode="c"] ent = np.zeros(max(<Py_ssize_t>n_cols, 1),
                                                             dtype=np.float64)
    cdef double *ep = &ent[0] if entropy else NULL
    cdef rv_status st
    with nogil:
        st = rv_keys_group_scores(dp, n_rows, n_cols, op, n_groups, &res[0], ep)
    check(st)
    return res[:n_cols].copy(), (ent[:n_cols].copy() if entropy else None)


def keys_group_refine(code, offsets):
    """Split the row groups by one column, keeping parts of >= 2 rows.
    Returns (rows uint32, offsets uint64)."""
    cdef cnp.ndarray[int32_t, ndim=1, mode="c"] cd = np.ascontiguousarray(code, dtype=np.int32)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] of = np.ascontiguousarray(offsets, dtype=np.uint64)
    cdef size_t n_rows = cd.shape[0]
    cdef size_t n_groups = of.shape[0] - 1 if of.shape[0] else 0
    cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] rows = np.empty(max(<Py_ssize_t>n_rows, 1),
                                                                dtype=np.uint32)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] oo = np.empty(<Py_ssize_t>(n_rows // 2 + 2),
                                                              dtype=np.uint64)
    cdef const int32_t *dp = &cd[0] if n_rows else NULL
    cdef const uint64_t *op = &of[0] if of.shape[0] else NULL
    cdef size_t n_out = 0, g_out = 0
    cdef rv_status st
    with nogil:
        st = rv_keys_group_refine(dp, n_rows, op, n_groups, &rows[0], &oo[0], &n_out, &g_out)
    check(st)
    return rows[:n_out].copy(), oo[:g_out + 1].copy()


def _raise_status(int code):
    """Test hook: produce an engine failure with the given status code."""
    cdef rv_cover *p = NULL
    cdef uint64_t off[2]
    cdef uint32_t el[1]
    cdef double cost[1]
    cdef uint32_t sel[1]
    cdef uint64_t n = 0
    if code == RV_E_INVALID_ARG:
        check(rv_cover_create(1, 0, NULL, NULL, NULL, &p))
    elif code == RV_E_RANGE:
        off[0] = 0; off[1] = 1; el[0] = 5
        check(rv_cover_create(1, 1, off, el, NULL, &p))
    raise ValueError(f"no trigger for status {code}")
