# cython: language_level=3
# Helpers shared by the text and BM25 bindings: borrow the UTF-8 bytes of a
# str or bytes, and convert analyzer options to and from a dict.
from cpython.bytes cimport PyBytes_AsStringAndSize
from libc.stdint cimport uint32_t

from rowvoi cimport *
from _check cimport check

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL


cdef inline int text_ptr(object text, const char **p, Py_ssize_t *n, str what) except -1:
    """Point p/n at the UTF-8 bytes of text (str or bytes); the object must
    stay alive while they are used."""
    if isinstance(text, str):
        try:
            p[0] = PyUnicode_AsUTF8AndSize(text, n)
        except UnicodeEncodeError as e:
            raise ValueError(f"{what} cannot be encoded as UTF-8 (a lone surrogate at "
                             f"character {e.start})") from None
        return 0
    if isinstance(text, bytes):
        PyBytes_AsStringAndSize(text, <char **>p, n)
        return 0
    raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")


cdef inline int fill_options(rv_analyzer_options *o, dict d) except -1:
    """Analyzer options from the dict rowvoi.index.text.Analyzer keeps."""
    rv_analyzer_options_init(o)
    o.lowercase = 1 if d["lowercase"] else 0
    o.strip_accents = 1 if d["strip_accents"] else 0
    o.stopwords = 1 if d["stopwords"] else 0
    o.stem = 1 if d["stem"] else 0
    o.min_token_len = <uint32_t>d["min_token_len"]
    o.max_token_len = <uint32_t>d["max_token_len"]
    o.utf8 = RV_UTF8_STRICT if d["utf8"] == "strict" else RV_UTF8_REPLACE
    check(rv_analyzer_options_check(o))
    return 0


cdef inline dict options_dict(const rv_analyzer_options *o):
    return {"lowercase": bool(o.lowercase), "strip_accents": bool(o.strip_accents),
            "stopwords": bool(o.stopwords), "stem": bool(o.stem),
            "min_token_len": o.min_token_len, "max_token_len": o.max_token_len,
            "utf8": "strict" if o.utf8 == RV_UTF8_STRICT else "replace"}
