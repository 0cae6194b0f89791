# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True
"""Private bindings of the graph engine (graph.h).  Types in, types out;
validation with friendly messages and the public API live in rowvoi.graph.
Every kernel runs with the GIL released; a built graph is immutable, so
calls may run concurrently from many threads."""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t

from rowvoi cimport *
from _check cimport check

cnp.import_array()

NO_TIME = RV_GRAPH_NO_TIME
MAX_ITEMS = RV_GRAPH_MAX_ITEMS
DIRS = {"out": RV_GRAPH_OUT, "in": RV_GRAPH_IN, "both": RV_GRAPH_BOTH}
KINDS = {"documents": 0, "nodes": RV_GRAPH_NODES, "edges": RV_GRAPH_EDGES,
         "entities": RV_GRAPH_ENTITIES}
METRICS = {"cosine": RV_METRIC_COSINE, "ip": RV_METRIC_INNER_PRODUCT}


def trim():
    """Release the arrays that freed graphs keep for the next build
    (rv_graph_trim): the next build faults in fresh pages."""
    with nogil:
        rv_graph_trim()


def check_vectors(cnp.ndarray[float, ndim=2, mode="c"] vectors, unsigned n_threads=0):
    """Raise (RV_E_INVALID_ARG) naming the first NaN or infinite component
    of 2-D float32 vectors (rv_graph_check_vectors)."""
    cdef size_t n = vectors.shape[0]
    cdef uint32_t dim = vectors.shape[1]
    cdef const float *p = &vectors[0, 0] if n and dim else NULL
    cdef rv_status st
    with nogil:
        st = rv_graph_check_vectors(p, n, dim, n_threads)
    check(st)


cdef const int64_t *_i64(object a) except? NULL:
    """Pointer to a C-contiguous int64 array (NULL for None or empty)."""
    if a is None:
        return NULL
    cdef cnp.ndarray[int64_t, ndim=1, mode="c"] arr = a
    return &arr[0] if arr.shape[0] else NULL


cdef const uint16_t *_u16(object a) except? NULL:
    if a is None:
        return NULL
    cdef cnp.ndarray[uint16_t, ndim=1, mode="c"] arr = a
    return &arr[0] if arr.shape[0] else NULL


cdef class GraphHandle:
    """Owns one rv_graph handle (immutable once built)."""
    cdef rv_graph *p
    cdef object _vectors  # kept alive when the engine borrows them
    cdef object _attrs  # edge ends, types, times, node times, doc entities (borrowed)

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        rv_graph_free(self.p)

    @staticmethod
    def create(node_ids, node_time, src, dst, etype, etime, doc_entity, vectors,
               doc_vector_row, str metric, bint implicit_nodes, bint borrow,
               bint unit_rows, bint finite_rows):
        """Arrays are int64 (etype uint16, vectors 2-D float32), C order, or
        None.  borrow: the engine keeps the vectors, edge ends (ids 0 .. n-1),
        types and times, node times and document entities (the handle
        holds them); finite_rows: the vectors
        were checked (check_vectors).  Returns the handle."""
        cdef rv_graph_spec s
        rv_graph_spec_init(&s)
        cdef GraphHandle self = GraphHandle.__new__(GraphHandle)
        cdef cnp.ndarray[float, ndim=2, mode="c"] vec
        s.n_nodes = 0 if node_ids is None else len(node_ids)
        s.node_ids = _i64(node_ids)
        s.node_time = _i64(node_time)
        s.n_edges = 0 if src is None else len(src)
        s.edge_src = _i64(src)
        s.edge_dst = _i64(dst)
        s.edge_type = _u16(etype)
        s.edge_time = _i64(etime)
        s.n_docs = 0 if doc_entity is None else len(doc_entity)
        s.doc_entity = _i64(doc_entity)
        if vectors is not None:
            vec = vectors
            s.dim = vec.shape[1]
            s.n_vectors = vec.shape[0]
            s.vectors = &vec[0, 0] if vec.shape[0] else NULL
            s.doc_vector_row = _i64(doc_vector_row)
            s.metric = METRICS[metric]
        s.flags = ((RV_GRAPH_IMPLICIT_NODES if implicit_nodes else 0)
                   | (RV_GRAPH_BORROW_VECTORS | RV_GRAPH_BORROW_ATTRS if borrow else 0)
                   | (RV_GRAPH_UNIT_ROWS if unit_rows else 0)
                   | (RV_GRAPH_FINITE_ROWS if finite_rows else 0))
        cdef rv_status st
        with nogil:
            st = rv_graph_create(&s, &self.p)
        check(st)
        if borrow:
            self._vectors = vectors
            self._attrs = (src, dst, etype, etime, node_time, doc_entity)
        return self

    @property
    def n_nodes(self):
        return rv_graph_n_nodes(self.p)

    @property
    def n_edges(self):
        return rv_graph_n_edges(self.p)

    @property
    def n_docs(self):
        return rv_graph_n_docs(self.p)

    @property
    def dim(self):
        return rv_graph_dim(self.p)

    @property
    def max_entity_docs(self):
        return rv_graph_max_entity_docs(self.p)

    def find_nodes(self, cnp.ndarray[int64_t, ndim=1, mode="c"] ids):
        cdef size_t n = ids.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(n, dtype=np.int64)
        with nogil:
            st = rv_graph_find_nodes(self.p, n, &ids[0] if n else NULL,
                                     &out[0] if n else NULL)
        check(st)
        return out

    def node_ids(self):
        cdef size_t n = rv_graph_n_nodes(self.p), got = 0
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        check(rv_graph_node_ids(self.p, &out[0], n, &got))
        return out[:got]

    def neighbours(self, int64_t node, str dir, int32_t type, window):
        """(edge indexes, neighbour node indexes) of one node."""
        cdef size_t n = 0
        cdef const int64_t *w = _i64(window)
        cdef rv_graph_dir d = DIRS[dir]
        cdef rv_status st = rv_graph_degree(self.p, node, d, -1, &n)
        check(st)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] edges = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] nbrs = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        with nogil:
            st = rv_graph_neighbours(self.p, node, d, type, w, &edges[0], &nbrs[0], n, &n)
        check(st)
        return edges[:n], nbrs[:n]

    def degree(self, int64_t node, str dir, int32_t type):
        cdef size_t n = 0
        check(rv_graph_degree(self.p, node, DIRS[dir], type, &n))
        return n

    def edges(self, cnp.ndarray[int64_t, ndim=1, mode="c"] edges):
        """(src, dst, type, time) of edge indexes (node indexes for ends)."""
        cdef size_t n = edges.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] src = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] dst = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] time = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        cdef cnp.ndarray[int32_t, ndim=1, mode="c"] typ = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int32)
        cdef rv_status st
        with nogil:
            st = rv_graph_edges(self.p, n, &edges[0] if n else NULL, &src[0], &dst[0],
                                &typ[0], &time[0])
        check(st)
        return src[:n], dst[:n], typ[:n], time[:n]

    def entity_docs(self, cnp.ndarray[int64_t, ndim=1, mode="c"] entities):
        cdef size_t n = entities.shape[0], got = 0
        cdef size_t cap = n * rv_graph_max_entity_docs(self.p)
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.int64)
        cdef rv_status st
        with nogil:
            st = rv_graph_entity_docs(self.p, n, &entities[0] if n else NULL, &out[0], cap,
                                      &got)
        check(st)
        return out[:got]

    def doc_entities(self, cnp.ndarray[int64_t, ndim=1, mode="c"] docs):
        cdef size_t n = docs.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>n, 1), dtype=np.int64)
        with nogil:
            st = rv_graph_doc_entities(self.p, n, &docs[0] if n else NULL, &out[0])
        check(st)
        return out[:n]

    def bfs(self, cnp.ndarray[int64_t, ndim=1, mode="c"] seeds, uint32_t max_depth, size_t budget, str dir, types, window):
        cdef rv_graph_walk w
        rv_graph_walk_init(&w)
        w.max_depth = max_depth
        w.node_budget = budget
        w.dir = DIRS[dir]
        w.types = _u16(types)
        w.n_types = 0 if types is None else len(types)
        w.window = _i64(window)
        cdef size_t cap = rv_graph_n_nodes(self.p)
        if budget and budget < cap:
            cap = budget
        cdef size_t n = 0, ns = seeds.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] nodes = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.int64)
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] depth = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.uint32)
        cdef rv_status st
        with nogil:
            st = rv_graph_bfs(self.p, &w, ns, &seeds[0] if ns else NULL, &nodes[0], &depth[0],
                              cap, &n)
        check(st)
        return nodes[:n], depth[:n]

    def facts(self, cnp.ndarray[int64_t, ndim=1, mode="c"] seeds, uint32_t depth, size_t max_edges, size_t per_subject,
              bridge_types, size_t budget, window):
        cdef rv_graph_facts_params p
        rv_graph_facts_init(&p)
        p.depth = depth
        p.max_edges = max_edges
        p.max_edges_per_subject = per_subject
        p.bridge_types = _u16(bridge_types)
        p.n_bridge_types = 0 if bridge_types is None else len(bridge_types)
        p.node_budget = budget
        p.window = _i64(window)
        cdef size_t n = 0, ns = seeds.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] edges = np.empty(max(<Py_ssize_t>max_edges, 1), dtype=np.int64)
        cdef cnp.ndarray[uint32_t, ndim=1, mode="c"] depths = np.empty(max(<Py_ssize_t>max_edges, 1), dtype=np.uint32)
        cdef rv_status st
        with nogil:
            st = rv_graph_facts(self.p, &p, ns, &seeds[0] if ns else NULL, &edges[0],
                                &depths[0], max_edges, &n)
        check(st)
        return edges[:n], depths[:n]

    def doc_hops(self, cnp.ndarray[int64_t, ndim=1, mode="c"] sel, uint32_t hops, window):
        cdef size_t ns = sel.shape[0], n = 0
        cdef size_t nd = rv_graph_n_docs(self.p)
        cdef size_t cap = nd - ns if nd > ns else 0
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.int64)
        cdef const int64_t *w = _i64(window)
        cdef rv_status st
        with nogil:
            st = rv_graph_doc_hops(self.p, ns, &sel[0] if ns else NULL, hops, w, &out[0],
                                   cap, &n)
        check(st)
        return out[:n]

    def similar(self, cnp.ndarray[int64_t, ndim=1, mode="c"] sel, str kinds, cnp.ndarray[float, ndim=1, mode="c"] query,
                size_t max_new, window):
        """Similarity rounds: kinds "documents" (max_new documents) or
        "nodes" / "edges" / "entities" (max_new entities)."""
        cdef size_t ns = sel.shape[0], n = 0
        cdef size_t nd = rv_graph_n_docs(self.p)
        cdef size_t per = rv_graph_max_entity_docs(self.p)
        cdef size_t cap = nd
        cdef int k = KINDS[kinds]
        if k == 0:
            cap = max_new if max_new < nd else nd
        elif per and max_new < nd // per + 1:
            cap = max_new * per if max_new * per < nd else nd
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.int64)
        cdef cnp.ndarray[float, ndim=1, mode="c"] scores = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.float32)
        cdef const int64_t *w = _i64(window)
        cdef const int64_t *sp = &sel[0] if ns else NULL
        cdef rv_status st
        with nogil:
            if k == 0:
                st = rv_graph_similar_docs(self.p, ns, sp, &query[0], max_new, w, &out[0],
                                           &scores[0], cap, &n)
            else:
                st = rv_graph_similar_entities(self.p, ns, sp, <rv_graph_kinds>k, &query[0],
                                               max_new, w, &out[0], &scores[0], cap, &n)
        check(st)
        return out[:n], scores[:n]

    def top_k(self, str kinds, cnp.ndarray[float, ndim=1, mode="c"] query, size_t k,
              window):
        cdef size_t nd = rv_graph_n_docs(self.p), n = 0
        cdef size_t per = rv_graph_max_entity_docs(self.p)
        cdef int kind = KINDS[kinds]
        cdef size_t cap = nd
        if kind == 0:
            cap = k if k < nd else nd
        elif per and k < nd // per + 1:
            cap = k * per if k * per < nd else nd
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] out = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.int64)
        cdef cnp.ndarray[float, ndim=1, mode="c"] scores = np.empty(max(<Py_ssize_t>cap, 1), dtype=np.float32)
        cdef const int64_t *w = _i64(window)
        cdef rv_status st
        with nogil:
            st = rv_graph_top_k(self.p, kind, &query[0], k, w, &out[0], &scores[0], cap, &n)
        check(st)
        return out[:n], scores[:n]

    def score_docs(self, cnp.ndarray[float, ndim=1, mode="c"] query, cnp.ndarray[int64_t, ndim=1, mode="c"] docs):
        cdef size_t n = docs.shape[0]
        cdef cnp.ndarray[float, ndim=1, mode="c"] scores = np.empty(max(<Py_ssize_t>n, 1), dtype=np.float32)
        cdef rv_status st
        with nogil:
            st = rv_graph_score_docs(self.p, &query[0], n, &docs[0] if n else NULL,
                                     &scores[0])
        check(st)
        return scores[:n]
