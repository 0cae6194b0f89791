/*
** rowvoi graph: a typed, directed link graph in CSR form, documents that
** hang off its nodes and edges, and the walks over it -- hop expansion,
** neighbourhood facts for prompts and similarity-ordered expansion of a
** selection of documents (Raphtory's VectorSelection rounds).
**
** Model.  Nodes carry caller ids (int64, distinct) and are numbered
** 0 .. n_nodes - 1 in the order given ("node indexes"); edges are numbered
** 0 .. n_edges - 1 in the order given ("edge indexes"); each edge runs from
** a source node to a destination node, has a type (a small integer,
** 0 .. 65535, whose names live with the caller) and may repeat or loop.
** Nodes and edges may carry a time (int64, the caller's unit), or
** RV_GRAPH_NO_TIME.  Entities are the nodes and the edges together, numbered
** nodes first: entity i < n_nodes is node i, entity n_nodes + e is edge e.
** Documents are numbered 0 .. n_docs - 1 in the order given; each belongs to
** one entity and, when the graph holds vectors, has one vector row.
**
** Storage.  Adjacency is compressed sparse rows in both directions: the
** out-edges of a node in input order, and its in-edges in input order,
** each slot holding the edge index (4 bytes per edge and direction, plus 4
** per node and direction; edges given in order of source need no
** out-direction slots, nor edges in order of destination in-direction
** ones); each edge keeps its ends (8 bytes), which give the neighbour, its
** type when given (2) and its time when given (8; with
** RV_GRAPH_BORROW_ATTRS the caller's arrays are read in place instead).  Documents cost 4 bytes each
** plus 1/4 byte per entity when listed in entity order (else 8 and 4;
** the 4 are saved when RV_GRAPH_BORROW_ATTRS borrows doc_entity).
** Ids map to indexes by an open-addressing table, skipped (with the id
** copy) when the ids are 0 .. n_nodes - 1 in order.  Building is
** O(n_nodes + n_edges + n_docs): stable bucket sorts, no comparison sort,
** the two directions and the documents on up to four threads
** (rv_graph_spec.n_threads); large arrays of freed graphs are reused (see
** rv_graph_free).  bench/results/graph.md has the figures.
**
** Order.  Everything these functions list comes in a documented,
** deterministic order: out-edges before in-edges, each in input order;
** breadth-first levels in order of discovery, seeds in the order given;
** similarity ties broken by the lower document (or entity) index.
**
** Windows.  A window is the half-open interval [start, end) of times.  A
** node or edge is inside it when its time t has start <= t < end, or when
** it has no time (RV_GRAPH_NO_TIME: timeless items belong to every
** window).  A document is inside when its entity is.  Under a window the
** walks use only the entities inside it: a hop never starts from, passes
** through or lands on an entity outside.
**
** Vectors.  Document vectors are float32 rows of one dimension, copied at
** build or borrowed (RV_GRAPH_BORROW_VECTORS: the caller keeps them alive
** and unchanged until rv_graph_free).  Several documents may share a row
** (doc_vector_row).  Similarity to a query is the cosine (zero vectors
** score 0) or the inner product.
**
** Thread-safety: a graph is immutable once built; every function may run
** concurrently on one graph from any number of threads.
*/
#ifndef ROWVOI_GRAPH_H
#define ROWVOI_GRAPH_H

#include "core.h"
#include "flat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rv_graph rv_graph;

/* "No time": the item belongs to every window. */
#define RV_GRAPH_NO_TIME INT64_MIN

/* Largest node, edge and document counts (indexes fit in uint32). */
#define RV_GRAPH_MAX_ITEMS 0xfffffffeu

/* Edge directions, seen from a node. */
typedef enum rv_graph_dir {
    RV_GRAPH_OUT = 1, /* edges leaving the node */
    RV_GRAPH_IN = 2,  /* edges arriving at the node */
    RV_GRAPH_BOTH = 3 /* out-edges, then in-edges (a self-loop shows twice) */
} rv_graph_dir;

/* Which entities an entity-similarity expansion considers. */
typedef enum rv_graph_kinds {
    RV_GRAPH_NODES = 1,
    RV_GRAPH_EDGES = 2,
    RV_GRAPH_ENTITIES = 3 /* nodes and edges */
} rv_graph_kinds;

/* Flags of rv_graph_spec.flags. */
#define RV_GRAPH_IMPLICIT_NODES                                                                    \
    1u                             /* edge endpoints not among node_ids become
                                       nodes (no time), appended in order of
                                       first appearance (src before dst);
                                       otherwise such an edge is RV_E_RANGE */
#define RV_GRAPH_BORROW_VECTORS 2u /* keep the vectors pointer, do not copy */
#define RV_GRAPH_UNIT_ROWS                                                                         \
    4u /* the caller promises every vector row has
                                       norm 1 or 0: cosine skips the norms */
#define RV_GRAPH_FINITE_ROWS                                                                       \
    8u /* the caller has checked every vector
                                       component is finite (rv_graph_check_vectors,
                                       e.g. once when the vectors were loaded):
                                       the build skips its pass over them.
                                       Since: 0.1 */
#define RV_GRAPH_BORROW_ATTRS                                                                      \
    16u /* keep the edge_type, edge_time,
                                       doc_entity and node_time pointers, and edge_src and
                                       edge_dst when node_ids are 0 .. n_nodes-1
                                       in order (the ids are then the indexes),
                                       do not copy them: the caller keeps them
                                       alive and unchanged until rv_graph_free
                                       (node_time is copied when implicit nodes
                                       were added).  Since: 0.1 */

/*
** What a graph is built from.  Initialise with rv_graph_spec_init, then set
** the arrays you have; every array is borrowed for rv_graph_create only
** (vectors too, unless RV_GRAPH_BORROW_VECTORS).
*/
typedef struct rv_graph_spec {
    size_t n_nodes;
    const int64_t *node_ids;  /* n_nodes distinct ids; NULL when n_nodes 0 */
    const int64_t *node_time; /* NULL (no times) or n_nodes */
    size_t n_edges;
    const int64_t *edge_src;   /* n_edges node ids */
    const int64_t *edge_dst;   /* n_edges node ids */
    const uint16_t *edge_type; /* NULL (all type 0) or n_edges */
    const int64_t *edge_time;  /* NULL (no times) or n_edges */
    size_t n_docs;
    const int64_t *doc_entity;     /* n_docs entity indexes (see "Model"; with
                                    implicit nodes, edges start after them) */
    uint32_t dim;                  /* 0: no vectors; else 1 .. RV_FLAT_MAX_DIM */
    size_t n_vectors;              /* rows in vectors */
    const float *vectors;          /* n_vectors * dim floats, finite */
    const int64_t *doc_vector_row; /* NULL: document i uses row i (then
                                      n_vectors >= n_docs); else n_docs rows */
    rv_metric metric;              /* RV_METRIC_COSINE (default) or
                                    RV_METRIC_INNER_PRODUCT */
    unsigned flags;                /* RV_GRAPH_* flags */
    unsigned n_threads;            /* threads building the adjacency (capped
                                      at 4): 0 = one per online CPU once
                                      edges + documents reach 100,000, else
                                      the calling thread alone; the graph is
                                      the same for every count.  Since: 0.1 */
} rv_graph_spec;

/* Fill *spec with an empty graph: no nodes, edges, documents or vectors,
** cosine, no flags.  A NULL spec does nothing.  Since: 0.1 */
RV_API void rv_graph_spec_init(rv_graph_spec *spec /* OUT */);

/*
** Build a graph.                                        CONSTRUCTOR: rv_graph
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL out or spec, a NULL
** array whose count is > 0, a repeated node id, a document entity outside
** 0 .. entities - 1, a vector row outside 0 .. n_vectors - 1, a NaN or
** infinite vector component (naming it), a metric other than cosine or
** inner product; RV_E_RANGE for an edge endpoint that is not a node
** (without RV_GRAPH_IMPLICIT_NODES), a dimension above RV_FLAT_MAX_DIM, or
** more than RV_GRAPH_MAX_ITEMS nodes, edges, documents or vectors, or an
** n_vectors * dim no array can hold (core.h "Sizes"); RV_E_SHAPE for
** documents without vectors rows (n_vectors < n_docs and no
** doc_vector_row) when dim > 0; RV_E_NOMEM.
** Cost: O(n_nodes + n_edges + n_docs), plus one pass over the vectors
** checking they are finite (skipped with RV_GRAPH_FINITE_ROWS) and one for
** their norms (cosine without RV_GRAPH_UNIT_ROWS).
** Ownership: copies everything except borrowed vectors (and the arrays
** RV_GRAPH_BORROW_ATTRS borrows); free with rv_graph_free.  Since: 0.1
*/
RV_API rv_status rv_graph_create(const rv_graph_spec *spec, rv_graph **out /* OUT */);

/*
** Check that n_rows vectors of dim floats (row after row) are finite, as
** rv_graph_create does unless RV_GRAPH_FINITE_ROWS: a caller that checks
** its vectors once, when it loads them, can then build graphs over them
** (one per generation, say) without scanning them again.  n_threads as in
** rv_graph_spec (0: one per online CPU for large inputs); the answer is
** the same for every count.  Returns RV_OK; RV_E_INVALID_ARG naming the
** first NaN or infinite component in row order ("vectors[r][j] = nan:
** vectors must be finite") or for NULL vectors with n_rows > 0;
** RV_E_RANGE for dim 0 or above RV_FLAT_MAX_DIM, or an n_rows * dim no
** array can hold (core.h "Sizes").  Cost: one pass over the vectors.
** Since: 0.1
*/
RV_API rv_status rv_graph_check_vectors(const float *vectors, size_t n_rows, uint32_t dim,
                                        unsigned n_threads);

/* Free a graph.  NULL is a no-op.  Its large arrays (1 MiB and more) are
** kept for the next rv_graph_create, which reuses them instead of faulting
** in fresh pages (a graph is typically rebuilt as the previous one is
** freed); a kept array that a later build passes over is released when
** that build's graph is freed, so at most about two graphs' arrays wait.
** Since: 0.1 */
RV_API void rv_graph_free(rv_graph *graph);

/* Release every array kept by rv_graph_free (returning the memory to the
** system).  Thread-safe, like rv_graph_create and rv_graph_free.
** Since: 0.1 */
RV_API void rv_graph_trim(void);

/* Sizes and properties (0 for NULL).  rv_graph_n_nodes counts implicit
** nodes too.  rv_graph_max_entity_docs is the most documents on one
** entity.  Since: 0.1 */
RV_API size_t rv_graph_n_nodes(const rv_graph *graph);
RV_API size_t rv_graph_n_edges(const rv_graph *graph);
RV_API size_t rv_graph_n_docs(const rv_graph *graph);
RV_API uint32_t rv_graph_dim(const rv_graph *graph);
RV_API size_t rv_graph_max_entity_docs(const rv_graph *graph);

/*
** Node indexes of n ids (-1 for an id that is not a node), into out (n
** slots).  Returns RV_OK; RV_E_INVALID_ARG for NULL pointers (ids and out
** may be NULL when n == 0); RV_E_RANGE for an n no array can hold (core.h
** "Sizes").  O(1) per id.  Since: 0.1
*/
RV_API rv_status rv_graph_find_nodes(const rv_graph *graph, size_t n, const int64_t *ids,
                                     int64_t *out /* OUT */);

/*
** Ids of the nodes (node index order, implicit nodes included): writes
** min(capacity, n_nodes) ids and sets *n to n_nodes; RV_E_SHAPE when
** capacity is too small; RV_E_INVALID_ARG for NULL pointers (out may be
** NULL with capacity 0); RV_E_RANGE for a capacity no array can hold
** (core.h "Sizes").  Since: 0.1
*/
RV_API rv_status rv_graph_node_ids(const rv_graph *graph, int64_t *out /* OUT */, size_t capacity,
                                   size_t *n /* OUT */);

/*
** Edges of one node.                                         METHOD: rv_graph
** Lists the edges of node `node` in direction dir (out-edges, then
** in-edges for BOTH; each in input order), keeping only type `type` when
** type >= 0 (-1: every type), and only edges inside *window (whose other
** endpoint is inside too) when window is not NULL (window[0] = start,
** window[1] = end).  Writes min(capacity, count) edge indexes to edges and
** the node at the other end of each to nbrs (either may be NULL), and sets
** *n to the count.  Returns RV_OK; RV_E_SHAPE when capacity is too small
** (the first capacity entries are written; call again with *n slots);
** RV_E_RANGE for a node index out of range, type above 65535 or a
** capacity no array can hold (core.h "Sizes"); RV_E_INVALID_ARG for a NULL
** graph or n, or an unknown dir.
** Cost: O(degree).  Since: 0.1
*/
RV_API rv_status rv_graph_neighbours(const rv_graph *graph, int64_t node, rv_graph_dir dir,
                                     int32_t type, const int64_t *window, int64_t *edges /* OUT */,
                                     int64_t *nbrs /* OUT */, size_t capacity, size_t *n /* OUT */);

/*
** Number of edges of a node in a direction, of one type (type >= 0) or of
** any (-1): the fan-in for RV_GRAPH_IN.  Errors as rv_graph_neighbours.
** Cost: O(1) for every type, O(degree) for one.  Since: 0.1
*/
RV_API rv_status rv_graph_degree(const rv_graph *graph, int64_t node, rv_graph_dir dir,
                                 int32_t type, size_t *n /* OUT */);

/*
** Endpoints, type and time of n edges (each output may be NULL).
** Returns RV_OK; RV_E_RANGE naming an edge index out of range, or for an n
** no array can hold (core.h "Sizes"); RV_E_INVALID_ARG for a NULL graph,
** or NULL edges with n > 0.  Since: 0.1
*/
RV_API rv_status rv_graph_edges(const rv_graph *graph, size_t n, const int64_t *edges,
                                int64_t *src /* OUT */, int64_t *dst /* OUT */,
                                int32_t *type /* OUT */, int64_t *time /* OUT */);

/*
** Documents of n entities, entity by entity, each entity's in document
** order; repeated entities list their documents again.  Writes
** min(capacity, count) document indexes and sets *n to the count;
** RV_E_SHAPE when capacity is too small; RV_E_RANGE naming an entity out
** of range, or for an n or capacity no array can hold (core.h "Sizes");
** RV_E_INVALID_ARG for NULL pointers (entities may be NULL when n == 0,
** out when capacity == 0).  Since: 0.1
*/
RV_API rv_status rv_graph_entity_docs(const rv_graph *graph, size_t n, const int64_t *entities,
                                      int64_t *out /* OUT */, size_t capacity,
                                      size_t *n_out /* OUT */);

/* Entity of each of n documents into out.  RV_E_RANGE naming a document
** out of range, or for an n no array can hold (core.h "Sizes");
** RV_E_INVALID_ARG for a NULL graph, or NULL docs or out with n > 0.
** Since: 0.1 */
RV_API rv_status rv_graph_doc_entities(const rv_graph *graph, size_t n, const int64_t *docs,
                                       int64_t *out /* OUT */);

/*
** Parameters of rv_graph_bfs.  Initialise with rv_graph_walk_init.
*/
typedef struct rv_graph_walk {
    uint32_t max_depth;    /* hops from the seeds (0: the seeds alone) */
    size_t node_budget;    /* most nodes reported, seeds included (0: no
                                 limit); a limit, any value */
    rv_graph_dir dir;      /* which edges a hop follows (default BOTH) */
    const uint16_t *types; /* NULL, or only edges of these types */
    size_t n_types;        /* entries of types (0 with NULL types) */
    const int64_t *window; /* NULL, or {start, end}: see "Windows" */
} rv_graph_walk;

/* Defaults: depth 1, no budget, both directions, every type, no window.  A
** NULL walk does nothing.  Since: 0.1 */
RV_API void rv_graph_walk_init(rv_graph_walk *walk /* OUT */);

/*
** Breadth-first hop expansion.                               METHOD: rv_graph
** Visits each node at most once (a visited bitmap): the distinct seeds
** first (depth 0, in the order given; seeds outside the window or out of
** range are skipped -- out-of-range ones are RV_E_RANGE), then level by
** level, each level in order of discovery (the nodes of the previous level
** in order, each one's edges as rv_graph_neighbours lists them).  Stops at
** max_depth or after node_budget nodes, whichever comes first, so cycles,
** self-loops and any fan-out terminate.  Writes the nodes and their depths
** (either output may be NULL) and sets *n to the count written; at most
** capacity (RV_E_SHAPE if a node did not fit: raise capacity or set a
** budget).  Returns RV_OK; RV_E_RANGE for a seed out of range, or an
** n_seeds, walk->n_types or capacity no array can hold (core.h "Sizes");
** RV_E_INVALID_ARG for a NULL graph, walk or n, NULL seeds with
** n_seeds > 0, or NULL walk->types with n_types > 0; RV_E_NOMEM.
** Cost: O(visited nodes' degrees) plus one bitmap of n_nodes bits.
** Since: 0.1
*/
RV_API rv_status rv_graph_bfs(const rv_graph *graph, const rv_graph_walk *walk, size_t n_seeds,
                              const int64_t *seeds, int64_t *nodes /* OUT */,
                              uint32_t *depths /* OUT */, size_t capacity, size_t *n /* OUT */);

/*
** Parameters of rv_graph_facts.  Initialise with rv_graph_facts_init.
*/
typedef struct rv_graph_facts_params {
    uint32_t depth;               /* nodes within depth - 1 hops are expanded
                                    (default 3; 0 gives nothing) */
    size_t max_edges;             /* facts written, at most (default 25) */
    size_t max_edges_per_subject; /* facts with one source node, at most
                                    (0: no limit; default 0) */
    const uint16_t *bridge_types; /* types traversed but never written */
    size_t n_bridge_types;
    size_t node_budget;    /* nodes expanded, at most (0: no limit) */
    const int64_t *window; /* NULL, or {start, end} */
} rv_graph_facts_params;

/* Defaults: depth 3, 25 edges, no per-subject cap, no bridges, no budget.
** A NULL p does nothing.  Since: 0.1 */
RV_API void rv_graph_facts_init(rv_graph_facts_params *p /* OUT */);

/*
** Facts of a neighbourhood, for prompts (graph to text).     METHOD: rv_graph
** Walks breadth-first from the distinct seeds (as rv_graph_bfs, both
** directions).  Each node at distance d < depth is expanded: its edges
** (out-edges, then in-edges, in input order) are examined once each.  An
** edge of a bridge type is never written, but its far node is reached at
** distance d + 1; any other edge is written unless its source already has
** max_edges_per_subject written edges (it is still followed then), and its
** far node is reached at d + 1 too.  The walk ends when max_edges edges
** are written, every node within reach is expanded, or node_budget nodes
** were expanded, so the edge budget is filled with printable edges
** whenever enough exist within depth.  Writes edge indexes (and the depth
** of the node that reached each, when depths is not NULL) and sets *n.
** capacity must be >= max_edges.  Returns RV_OK; RV_E_RANGE for a seed out
** of range, or a capacity, max_edges, n_seeds or n_bridge_types no array
** can hold (core.h "Sizes"; max_edges_per_subject and node_budget are
** limits: any value); RV_E_SHAPE when capacity < max_edges;
** RV_E_INVALID_ARG for a NULL graph, p or n, NULL edges with
** max_edges > 0, NULL seeds with n_seeds > 0 or NULL bridge_types with
** n_bridge_types > 0; RV_E_NOMEM.  Since: 0.1
*/
RV_API rv_status rv_graph_facts(const rv_graph *graph, const rv_graph_facts_params *p,
                                size_t n_seeds, const int64_t *seeds, int64_t *edges /* OUT */,
                                uint32_t *depths /* OUT */, size_t capacity, size_t *n /* OUT */);

/*
** Document hops (VectorSelection.expand).                    METHOD: rv_graph
** Two documents are one hop apart when they are on the same entity, or
** one is on an edge and the other on an endpoint of that edge.  Starting
** from the selected documents sel[0 .. n_sel) (repeats allowed), adds
** every document 1 hop from the selection, `hops` times over, optionally
** inside *window (window[0] = start, window[1] = end, or NULL).  Writes
** the added documents (never already selected, each once) in order of
** discovery: round by round; within a round, the selection in order, and
** from each document its own entity's documents, then (a node) the
** documents of its out-edges then in-edges, or (an edge) those of its
** source then its destination.  Sets *n; at most capacity documents are
** written (RV_E_SHAPE if more were due: n_docs minus the number of distinct
** selected documents always suffices).
** Returns RV_OK; RV_E_RANGE naming a document out of range, or for an
** n_sel or capacity no array can hold (core.h "Sizes"); RV_E_INVALID_ARG
** for a NULL graph or n, NULL sel with n_sel > 0 or NULL out with
** capacity > 0; RV_E_NOMEM.  hops is a limit: any value.
** Cost: O(documents and edges touched) plus bitmaps of n_docs and
** entity bits.  Since: 0.1
*/
RV_API rv_status rv_graph_doc_hops(const rv_graph *graph, size_t n_sel, const int64_t *sel,
                                   uint32_t hops, const int64_t *window, int64_t *out /* OUT */,
                                   size_t capacity, size_t *n /* OUT */);

/*
** Similarity expansion of documents                          METHOD: rv_graph
** (VectorSelection.expand_documents_by_similarity).  Rounds: each round
** gathers, once, every document one hop (as in rv_graph_doc_hops) from the
** documents the previous round added (the first round: from the whole
** selection) that is neither selected nor gathered, inside *window when
** given; scores them all in one batch against the query (cosine or inner
** product, the graph's metric); and adds them in descending score (ties:
** lower document index first) until max_new documents were added in all.
** Stops when max_new is reached or a round adds nothing.  So a nearer,
** less similar document is taken before a farther, more similar one.
** query: dim floats, finite (under cosine, nonzero).  Writes the added
** documents and their scores in the order added; capacity must be >=
** min(max_new, n_docs).  Returns RV_OK; RV_E_STATE for a graph without
** vectors; RV_E_INVALID_ARG for a NULL graph, query, out, scores or n,
** NULL sel with n_sel > 0, or a bad query; RV_E_RANGE for a document out
** of range, or a max_new, n_sel or capacity no array of int64 results can
** hold (core.h "Sizes", as every count of results); RV_E_SHAPE for a small
** capacity; RV_E_NOMEM.  Since: 0.1
*/
RV_API rv_status rv_graph_similar_docs(const rv_graph *graph, size_t n_sel, const int64_t *sel,
                                       const float *query, size_t max_new, const int64_t *window,
                                       int64_t *out /* OUT */, float *scores /* OUT */,
                                       size_t capacity, size_t *n /* OUT */);

/*
** Similarity expansion of entities                           METHOD: rv_graph
** (VectorSelection.expand_entities/nodes/edges_by_similarity).  Entities
** one hop apart: two nodes joined by an edge, a node and an edge on it,
** two edges sharing an endpoint.  The selected entities are those of the
** selected documents.  Each round gathers every entity of `kinds` one hop
** from the entities the previous round added (first round: from every
** selected entity) that is not selected, is inside *window and has a
** document; scores each by its best document; adds whole entities (all
** their documents, each with the entity's score, in document order) in
** descending score (ties: lower entity index first) until max_new
** entities were added in all; stops when a round adds nothing.  Writes the
** added documents and scores in order; capacity must be >= min(max_new *
** max_entity_docs, n_docs).  Errors as rv_graph_similar_docs, plus
** RV_E_INVALID_ARG for unknown kinds.  Since: 0.1
*/
RV_API rv_status rv_graph_similar_entities(const rv_graph *graph, size_t n_sel, const int64_t *sel,
                                           rv_graph_kinds kinds, const float *query, size_t max_new,
                                           const int64_t *window, int64_t *out /* OUT */,
                                           float *scores /* OUT */, size_t capacity,
                                           size_t *n /* OUT */);

/*
** Top-k documents, or entities, by similarity to a query     METHOD: rv_graph
** over the whole graph (the constructors of a selection).  kinds 0 ranks
** documents; RV_GRAPH_NODES / _EDGES / _ENTITIES rank entities of those
** kinds by their best document and write all their documents (each with
** the entity's score, entity by entity) -- then k counts entities.  Only
** documents inside *window count.  Ties: lower index first.  Writes
** documents and scores and sets *n; capacity >= k (documents) or
** k * max_entity_docs (entities), capped at n_docs.  Errors as
** rv_graph_similar_docs (k in place of max_new: RV_E_RANGE for a k no
** array of int64 results can hold, as rv_flat_search and rv_bm25_search).  Cost: one score per document, on one thread
** per online CPU when the scan scores 4M vector components or more (the
** answer is the same for any thread count).  Safe to call from many
** threads at once (it reads the graph only).  Since: 0.1
*/
RV_API rv_status rv_graph_top_k(const rv_graph *graph, int kinds, const float *query, size_t k,
                                const int64_t *window, int64_t *out /* OUT */,
                                float *scores /* OUT */, size_t capacity, size_t *n /* OUT */);

/*
** Scores of n documents against a query (the graph's metric) into
** scores.  Errors as rv_graph_similar_docs (docs and scores may be NULL
** when n == 0; RV_E_RANGE for an n no array can hold).  Since: 0.1
*/
RV_API rv_status rv_graph_score_docs(const rv_graph *graph, const float *query, size_t n,
                                     const int64_t *docs, float *scores /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_GRAPH_H */
