# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the belief kernels (belief.h).  Arrays in, arrays out;
labels, pandas and friendly validation live in rowvoi.core / rowvoi.policies /
rowvoi.ml.  Every kernel runs with the GIL released."""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, uint32_t, uint64_t

from rowvoi cimport *
from _check cimport check, progress_check_signals

cnp.import_array()

NONE = RV_BELIEF_NONE
MIN_GAIN = RV_BELIEF_MIN_GAIN


cdef inline cnp.ndarray _f64(x):
    return np.ascontiguousarray(x, dtype=np.float64)


cdef inline cnp.ndarray _i32(x):
    return np.ascontiguousarray(x, dtype=np.int32)


def entropy(weights):
    """Entropy in bits of weights normalised by their total."""
    cdef cnp.ndarray[double, ndim=1, mode="c"] w = _f64(weights)
    cdef double out = 0.0
    cdef const double *wp = &w[0] if w.shape[0] else NULL
    cdef size_t n = w.shape[0]
    cdef rv_status st
    with nogil:
        st = rv_belief_entropy(wp, n, &out)
    check(st)
    return out


def filter_codes(codes, posterior, int32_t value):
    """(indices kept, renormalised posterior); both empty when nothing is left."""
    cdef cnp.ndarray[int32_t, ndim=1, mode="c"] c = _i32(codes)
    cdef cnp.ndarray[double, ndim=1, mode="c"] p = _f64(posterior)
    cdef size_t n = c.shape[0]
    if <size_t>p.shape[0] != n:
        raise ValueError(f"posterior has {p.shape[0]} entries for {n} codes")
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] kept = np.empty(max(<Py_ssize_t>n, 1), dtype=np.uint64)
    cdef cnp.ndarray[double, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.float64)
    cdef size_t k = 0
    cdef rv_status st
    with nogil:
        st = rv_belief_filter(&c[0] if n else NULL, &p[0] if n else NULL, n, value,
                              &kept[0], &out[0], &k)
    check(st)
    return kept[:k], out[:k]


def reweight(posterior, likelihoods):
    """posterior * likelihoods, renormalised."""
    cdef cnp.ndarray[double, ndim=1, mode="c"] p = _f64(posterior)
    cdef cnp.ndarray[double, ndim=1, mode="c"] l = _f64(likelihoods)
    cdef size_t n = p.shape[0]
    if <size_t>l.shape[0] != n:
        raise ValueError(f"likelihoods has {l.shape[0]} entries for {n} candidates")
    cdef cnp.ndarray[double, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.float64)
    cdef rv_status st
    with nogil:
        st = rv_belief_reweight(&p[0] if n else NULL, &l[0] if n else NULL, n, &out[0])
    check(st)
    return out[:n]


def likelihood(codes, int32_t value, double noise):
    """P(value observed | candidate) under the noise model."""
    cdef cnp.ndarray[int32_t, ndim=1, mode="c"] c = _i32(codes)
    cdef size_t n = c.shape[0]
    cdef cnp.ndarray[double, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.float64)
    cdef rv_status st
    with nogil:
        st = rv_belief_likelihood(&c[0] if n else NULL, n, value, noise, &out[0])
    check(st)
    return out[:n]


def mutual_information(codes, rows, posterior, double noise=0.0, costs=None,
                       unsigned n_threads=0):
    """Information gain of every column.

    codes: (n_cols, n_rows) int32; rows: candidate row positions (uint64) or
    None for the first len(posterior) rows.  Returns a dict with arrays "mi",
    "h_col", "n_values", "pairs", and "h_rows" and "best" (-1 for none).
    """
    cdef cnp.ndarray[int32_t, ndim=2, mode="c"] cd = _i32(codes)
    cdef cnp.ndarray[double, ndim=1, mode="c"] p = _f64(posterior)
    cdef size_t n_cols = cd.shape[0], n_rows = cd.shape[1], n_cand = p.shape[0]
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] r
    cdef const uint64_t *rp = NULL
    cdef cnp.ndarray[double, ndim=1, mode="c"] c
    cdef rv_belief_options opt
    rv_belief_options_init(&opt)
    opt.noise = noise
    opt.n_threads = n_threads
    opt.progress = <rv_progress_fn>progress_check_signals
    if rows is not None:
        r = np.ascontiguousarray(rows, dtype=np.uint64)
        if <size_t>r.shape[0] != n_cand:
            raise ValueError(f"rows has {r.shape[0]} entries for {n_cand} posterior weights")
        rp = &r[0] if n_cand else NULL
    if costs is not None:
        c = _f64(costs)
        if <size_t>c.shape[0] != n_cols:
            raise ValueError(f"costs has {c.shape[0]} entries for {n_cols} columns")
        opt.costs = &c[0] if n_cols else NULL
    cdef Py_ssize_t m = max(<Py_ssize_t>n_cols, 1)
    cdef cnp.ndarray[double, ndim=1, mode="c"] mi = np.zeros(m, dtype=np.float64)
    cdef cnp.ndarray[double, ndim=1, mode="c"] hc = np.zeros(m, dtype=np.float64)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] kv = np.zeros(m, dtype=np.uint64)
    cdef cnp.ndarray[uint64_t, ndim=1, mode="c"] pairs = np.zeros(m, dtype=np.uint64)
    cdef double hr = 0.0
    cdef uint32_t best = RV_BELIEF_NONE
    cdef const int32_t *cp = &cd[0, 0] if (n_cols and n_rows) else NULL
    cdef const double *pp = &p[0] if n_cand else NULL
    cdef rv_status st
    with nogil:
        st = rv_belief_mi(cp, n_rows, n_cols, rp, n_cand, pp, &opt, &mi[0], &hc[0],
                          &kv[0], &pairs[0], &hr, &best)
    check(st)
    return {
        "mi": mi[:n_cols], "h_col": hc[:n_cols], "n_values": kv[:n_cols],
        "pairs": pairs[:n_cols], "h_rows": hr,
        "best": -1 if best == RV_BELIEF_NONE else <Py_ssize_t>best,
    }
