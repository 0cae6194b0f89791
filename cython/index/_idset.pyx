# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of id sets (core.h).  The public type is
rowvoi.index.idset.IdSet; search kernels in other extension modules receive the
set as a capsule named "rowvoi.rv_idset" that keeps its owner alive."""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t

from rowvoi cimport *
from _check cimport check, owner_capsule

cnp.import_array()

MAX_ID = RV_MAX_ID


cdef class IdSetCore:
    """Owns one rv_idset handle (immutable once built)."""
    cdef rv_idset *p

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        rv_idset_free(self.p)

    @staticmethod
    def create(cnp.ndarray[int64_t, ndim=1, mode="c"] ids):
        cdef IdSetCore self = IdSetCore.__new__(IdSetCore)
        cdef size_t n = ids.shape[0]
        cdef const int64_t *ip = &ids[0] if n else NULL
        cdef rv_status st
        with nogil:
            st = rv_idset_create(ip, n, &self.p)
        check(st)
        return self

    def __len__(self):
        return rv_idset_size(self.p)

    def contains(self, int64_t id):
        return bool(rv_idset_contains(self.p, id))

    def ids(self):
        """The ids ascending (int64)."""
        cdef size_t n = rv_idset_size(self.p), got = 0
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        check(rv_idset_ids(self.p, &out[0], n, &got))
        return out[:got]

    def capsule(self):
        """A capsule of the rv_idset pointer that keeps this object alive."""
        return owner_capsule(<void *>self.p, b"rowvoi.rv_idset", self)


def _last_error():
    """Test hook: the calling thread's last engine message (``rv_errmsg``).

    Every extension links one shared librowvoi, so a failure raised through
    any module is readable here; the tests use that to prove one engine
    image per process.
    """
    return rv_errmsg().decode("utf-8", "replace")
