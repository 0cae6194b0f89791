# cython: language_level=3
# Status checking shared by every extension module.  Every module links the
# one shared librowvoi, so the thread-local message read here is the one the
# failing call wrote, whichever module made it.
from libc.stdint cimport uint64_t
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_New, PyCapsule_SetContext
from cpython.ref cimport Py_DECREF, Py_INCREF
from rowvoi cimport rv_status, rv_errmsg, rv_status_name, RV_OK, RV_E_INTERRUPTED

cdef extern from "Python.h":
    int _rv_signals "PyErr_CheckSignals" () nogil
    void *_rv_err_occurred "PyErr_Occurred" ()


cdef inline int check(rv_status st) except -1:
    """Raise the exception for a failed status; call after leaving nogil.

    The one place where an engine status becomes an exception: the class
    comes from rowvoi.errors.raise_for_status, keyed by the rv_status enum
    (rowvoi._status); the engine's message passes through unchanged."""
    if st == RV_OK:
        return 0
    if st == RV_E_INTERRUPTED and _rv_err_occurred() != NULL:
        return -1  # the progress callback left KeyboardInterrupt pending
    from rowvoi.errors import raise_for_status
    raise_for_status(<int>st, rv_status_name(st).decode("ascii"),
                     rv_errmsg().decode("utf-8", "replace"))
    return -1


cdef inline int progress_check_signals(void *ctx, uint64_t done,
                                       uint64_t total) noexcept nogil:
    """rv_progress_fn that stops a kernel when Ctrl-C is pending."""
    with gil:
        if _rv_signals() != 0:
            return 1
    return 0


cdef extern from "Python.h":
    void *_rv_capsule_pointer "PyCapsule_GetPointer" (object capsule, const char *name) except? NULL


cdef inline const void *idset_pointer(object capsule) except? NULL:
    """The rv_idset behind a capsule from rowvoi.index._idset (NULL for None).
    The capsule keeps its set alive; hold it for the duration of the call."""
    if capsule is None:
        return NULL
    return _rv_capsule_pointer(capsule, b"rowvoi.rv_idset")


cdef inline const void *flat_pointer(object capsule) except NULL:
    """The rv_flat behind a capsule from rowvoi.index._flat (FlatHandle.capsule).
    The capsule keeps its index alive; hold it for the duration of the
    call.  ValueError (PyCapsule's) for another object."""
    return _rv_capsule_pointer(capsule, b"rowvoi.rv_flat")


cdef inline const void *bm25_pointer(object capsule) except NULL:
    """The rv_bm25 behind a capsule from rowvoi.index._bm25 (BM25Core.capsule).
    The capsule keeps its index alive; hold it, and the index's read lock,
    for the duration of the call.  ValueError (PyCapsule's) for another
    object."""
    return _rv_capsule_pointer(capsule, b"rowvoi.rv_bm25")


cdef inline void _capsule_release(object capsule) noexcept:
    cdef void *owner = PyCapsule_GetContext(capsule)
    if owner != NULL:
        Py_DECREF(<object>owner)


cdef inline object owner_capsule(void *pointer, const char *name, object owner):
    """A capsule of ``pointer`` named ``name`` that keeps ``owner`` alive
    until the capsule is freed (how one module hands an engine handle to
    another: idset_pointer, flat_pointer, bm25_pointer)."""
    cap = PyCapsule_New(pointer, name, _capsule_release)
    Py_INCREF(owner)
    PyCapsule_SetContext(cap, <void *>owner)
    return cap
