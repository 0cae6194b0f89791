# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the text analysis engine (text.h).  The public API,
validation and docs live in rowvoi.index.text."""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint32_t

from rowvoi cimport *
from _check cimport check
from _analyzer cimport fill_options, options_dict, text_ptr

ANALYZER_VERSION = RV_ANALYZER_VERSION
MAX_TOKEN_LEN = RV_ANALYZER_MAX_TOKEN_LEN


def default_options():
    cdef rv_analyzer_options o
    rv_analyzer_options_init(&o)
    return options_dict(&o)


cdef list analyze_one(const rv_analyzer_options *o, const char *p, Py_ssize_t n):
    cdef size_t cap = 2 * <size_t>n + 16
    cdef size_t ecap = <size_t>n + 1
    cdef char *buf = <char *>PyMem_Malloc(cap)
    cdef size_t *ends = <size_t *>PyMem_Malloc(ecap * sizeof(size_t))
    cdef size_t nt = 0, bl = 0, i, a
    cdef rv_status st
    cdef list out = []
    if buf == NULL or ends == NULL:
        PyMem_Free(buf)
        PyMem_Free(ends)
        raise MemoryError("out of memory analysing a text")
    try:
        with nogil:
            st = rv_analyze(o, p, <size_t>n, buf, cap, ends, ecap, &nt, &bl)
        check(st)
        a = 0
        for i in range(nt):
            out.append(PyUnicode_DecodeUTF8(buf + a, ends[i] - a, NULL))
            a = ends[i]
    finally:
        PyMem_Free(buf)
        PyMem_Free(ends)
    return out


cdef class AnalyzerCore:
    """Holds one rv_analyzer_options."""
    cdef rv_analyzer_options o

    def __init__(self, dict options):
        fill_options(&self.o, options)

    def tokenize(self, text):
        cdef const char *p = NULL
        cdef Py_ssize_t n = 0
        text_ptr(text, &p, &n, "text")
        return analyze_one(&self.o, p, n)

    def tokenize_many(self, texts):
        cdef const char *p = NULL
        cdef Py_ssize_t n = 0
        out = []
        for i, t in enumerate(texts):
            text_ptr(t, &p, &n, f"texts[{i}]")
            try:
                out.append(analyze_one(&self.o, p, n))
            except ValueError as e:
                raise type(e)(f"texts[{i}]: {e}") from None
        return out


def stem(word):
    cdef const char *p = NULL
    cdef Py_ssize_t n = 0
    text_ptr(word, &p, &n, "word")
    cdef size_t cap = <size_t>n + 1, ol = 0
    cdef char *out = <char *>PyMem_Malloc(cap)
    if out == NULL:
        raise MemoryError("out of memory stemming a word")
    try:
        check(rv_stem_english(p, <size_t>n, out, cap, &ol))
        return PyUnicode_DecodeUTF8(out, ol, NULL)
    finally:
        PyMem_Free(out)


def is_stopword(word):
    cdef const char *p = NULL
    cdef Py_ssize_t n = 0
    text_ptr(word, &p, &n, "word")
    return bool(rv_is_stopword(p, <size_t>n))


def stopwords():
    cdef size_t i
    return tuple(rv_stopword(i).decode("ascii") for i in range(rv_stopword_count()))


def unicode_version():
    return rv_unicode_version().decode("ascii")
