/*
** Internals of the flat index, shared by its files:
**   flat_build.c    create, add, delete, compact, the id map, accessors
**   flat_search.c   batched top-k search and exact re-scoring
**   flat_screen.c   the exact search of an int8 index (the screen)
**   flat_kernels.c  the scoring kernels, picked per CPU
**   flat_io.c       save and load
*/
#ifndef ROWVOI_FLAT_INTERNAL_H
#define ROWVOI_FLAT_INTERNAL_H

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../internal.h"
#include "../core/binfile.h"

/* Rows are scanned in panels of 16: panel p holds rows 16p .. 16p+15 with
** element j of lane l at [j * 16 + l] (float32/float16) or, for int8, byte t
** of dimension quad j/4 at [(j/4) * 64 + l * 4 + t].  A kernel scores one
** panel against a block of queries, so each loaded panel value serves every
** query of the block and the dot products need no horizontal sums. */
#define RV__PANEL 16u

/* Rows per work item of a search (a multiple of RV__PANEL): small enough
** that a chunk of panels stays in L2 while every query block passes over
** it. */
#define RV__CHUNK_ROWS 256u

/* Kernels.  qpack holds a block of qb queries interleaved by dimension
** (float: qpack[j * qb + i]; int8: the 4 bytes of quad j/4 of query i at
** qpack[((j/4) * qb + i) * 4]).  out receives qb rows of 16 lane scores. */
typedef void (*rv__tile_f32_fn)(const float *panel, size_t dim, const float *qpack, float *out);
typedef void (*rv__tile_f16_fn)(const uint16_t *panel, size_t dim, const float *qpack, float *out);
typedef void (*rv__tile_i8_fn)(const int8_t *panel, size_t dim4, const uint8_t *qpack,
                               int32_t *out);
/* One panel of 16 int8 rows against one query of int16 codes (dim4 of
** them, zero past dim): out[l] = sum_j q[j] * code of row l at j, exact in
** int32 as long as max|q| * 127 * dim4 < 2^31 (the caller's choice of the
** query's range). */
typedef void (*rv__tile_q16_fn)(const int8_t *panel, size_t dim4, const int16_t *q, int32_t *out);
/* The same sums over the listed dimension quads only: out[l] = sum over
** j in quads[0 .. n_quads) of q[4j .. 4j+3] . codes of row l at 4j .. 4j+3.
** Integer sums, so when every quad holding a nonzero query code is listed
** out equals rv__tile_q16_fn's, bit for bit (a sparse query's screen reads
** the panel lines of its nonzero quads only). */
typedef void (*rv__tile_q16s_fn)(const int8_t *panel, const int16_t *q, const uint32_t *quads,
                                 size_t n_quads, int32_t *out);
/* The screen's score intervals of one panel's first `lanes` rows
** (rv__scan_chunk_screen in flat_screen.c): with qb = (qs, alpha, beta),
**   a = ((float)itile[l] * sc[l]) * qs,  b = (alpha qe[l] + beta qn[l]) + 1e-30,
** up[l] = a + b and lo[l] = a - b, each a float32 operation (any of them
** may be fused, which only drops roundings); a non-finite a or b (overflow)
** gives (-inf, +inf).  Returns the mask of lanes with up[l] >= tau (bit l;
** tau a float or -inf). */
typedef uint32_t (*rv__screen_bounds_fn)(const int32_t *itile, const float *sc, const float *qe,
                                         const float *qn, size_t lanes, const float *qb, float tau,
                                         float *up, float *lo);
typedef float (*rv__dot_fn)(const float *a, const float *b, size_t n);
/* out[r] = dot(q, x + r * dim, dim) for r < n_rows (x row-major): the
** dot products of one query with consecutive rows, several rows at a time
** so that their independent sums hide the FMA latency.  Each out[r] is bit
** for bit what the matching rv__dot_fn returns. */
typedef void (*rv__dots_fn)(const float *q, const float *x, size_t n_rows, size_t dim, float *out);
/* The same for the rows x + rows[r] * dim (r < n_rows). */
typedef void (*rv__dotsg_fn)(const float *q, const float *x, const size_t *rows, size_t n_rows,
                             size_t dim, float *out);

typedef struct rv__flat_kernels {
    rv__tile_f32_fn f32;
    unsigned qb_f32;
    rv__tile_f16_fn f16;
    unsigned qb_f16;
    rv__tile_i8_fn i8;
    unsigned qb_i8;
    rv__tile_q16_fn q16;   /* the exact search's int8 screen */
    rv__tile_q16s_fn q16s; /* the same for the nonzero quads of a query */
    rv__screen_bounds_fn bounds;
    rv__dot_fn dot;
    rv__dots_fn dots;   /* same arithmetic as dot */
    rv__dotsg_fn dotsg; /* same arithmetic as dot */
    const char *name;   /* which instruction set was picked */
} rv__flat_kernels;

/* Pick the best kernels this CPU runs (x86-64: AVX-512, AVX2+FMA, or the
** portable versions).  With RV_NO_MULTIVERSION defined only the portable
** ones are used. */
void rv__flat_kernels_select(rv__flat_kernels *k);

/* The portable kernels alone (for tests comparing paths). */
void rv__flat_kernels_portable(rv__flat_kernels *k);

/* IEEE binary16 conversions, round to nearest even; finite inputs assumed
** within +-65504 for to_half. */
uint16_t rv__f32_to_f16(float f);
float rv__f16_to_f32(uint16_t h);


/* The index itself. */
struct rv_flat {
    uint32_t dim;
    uint32_t dim4; /* dim rounded up to a multiple of 4 (int8) */
    rv_metric metric;
    rv_flat_storage storage;
    uint32_t rescore_factor;
    rv__flat_kernels kern;

    size_t n_rows;   /* rows stored, deleted ones included */
    size_t cap_rows; /* capacity, a multiple of RV__PANEL */
    size_t n_live;
    int64_t next_id; /* one past the largest id ever added */

    int64_t *row_id; /* cap_rows */
    uint8_t *dead;   /* cap_rows; 1 for a deleted row */
    float *sqnorm;   /* cap_rows; |x|^2 of the stored row (L2) */

    /* F32: panels of float32 only (rows are read back from the panels).
    ** F16/I8: float32 rows row-major for re-scoring, plus the panels. */
    void *panels_raw; /* allocation behind panels (for alignment) */
    void *panels;     /* 64-byte aligned */
    float *rows;      /* F16/I8 only: cap_rows * dim */
    float *scale;     /* I8 only: per-row scale */
    int32_t *csum;    /* I8 only: per-row sum of the int8 codes */
    /* I8 only, for the exact search's screen (see flat_screen.c):
    ** upper bounds of |x - scale * code| and of |scale * code| (Euclidean
    ** norms) of each stored row x. */
    float *qerr;
    float *qnorm;

    /* id -> row: open addressing, linear probing, backward-shift deletes.
    ** Empty slots hold key -1. */
    int64_t *map_key;
    size_t *map_row;
    size_t map_cap; /* power of two */
    size_t map_used;
};

/* Bounds of the rescore factor (rv_flat_options, rv_flat_search_params). */
#define RV__DEFAULT_RESCORE 8u
#define RV__MAX_RESCORE     1024u

/* x rounded up to a multiple of m. */
static inline size_t rv__round_up(size_t x, size_t m) {
    return (x + m - 1) / m * m;
}

/* Bytes of one panel of 16 rows. */
static inline size_t rv__panel_bytes(const rv_flat *ix) {
    if (ix->storage == RV_FLAT_I8) return (size_t)ix->dim4 * RV__PANEL;
    size_t elem = ix->storage == RV_FLAT_F32 ? 4 : ix->storage == RV_FLAT_F16 ? 2 : 1;
    return (size_t)ix->dim * RV__PANEL * elem;
}

/* The smallest float >= x (x >= 0, finite). */
static inline float rv__float_up(double x) {
    float f = (float)x;
    if ((double)f < x) f = nextafterf(f, INFINITY);
    return f;
}

/* The row of a live id, or SIZE_MAX (the id map: open addressing, linear
** probing, empty slots hold -1). */
static inline size_t rv__map_find(const rv_flat *ix, int64_t id) {
    if (!ix->map_cap) return SIZE_MAX;
    size_t mask = ix->map_cap - 1, i = (size_t)rv__mix64((uint64_t)id) & mask;
    while (ix->map_key[i] != -1) {
        if (ix->map_key[i] == id) return ix->map_row[i];
        i = (i + 1) & mask;
    }
    return SIZE_MAX;
}

/* Internal add used by load: norm_given != 0 keeps cosine vectors as they
** are (they were normalised when first added). */
rv_status rv__flat_add(rv_flat *index, size_t n, const float *vectors, const int64_t *ids,
                       int64_t *assigned, int norm_given);

/* Room for `rows` rows and ids in all, allocated once (a load or a
** compaction that knows its size); grows nothing already large enough. */
rv_status rv__flat_reserve(rv_flat *index, size_t rows);

/* Row r of the index as float32 (points into rows, or gathers from the
** float32 panels into tmp, dim floats). */
const float *rv__flat_row(const rv_flat *index, size_t r, float *tmp);

/* ------------------------------------------------------------- search */

/* Search modes beside the rv_flat_storage values: exact scores from the
** float32 rows of a compact-storage index; the exact search of an
** int8-storage index, whose int8 copy screens the rows that the float32
** rows then score (flat_screen.c). */
#define RV__MODE_ROWS   3
#define RV__MODE_SCREEN 4

/* One candidate of a search. */
typedef struct rv__hit {
    float s; /* internal score: higher is better */
    int64_t id;
    size_t row;
} rv__hit;

/* a ranks before b: higher score, then lower id. */
static inline int rv__hit_better(float sa, int64_t ia, float sb, int64_t ib) {
    return sa > sb || (sa == sb && ia < ib);
}

/* Sort n hits best first, by rv__hit_better (flat_search.c). */
void rv__sort_hits(rv__hit *h, size_t n);

/* Sift h[i] down a heap of n hits whose root is the last in result order
** (the worst). */
static inline void rv__sift_hits(rv__hit *h, size_t n, size_t i) {
    rv__hit x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && rv__hit_better(h[c].s, h[c].id, h[c + 1].s, h[c + 1].id)) c++;
        if (!rv__hit_better(x.s, x.id, h[c].s, h[c].id)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* Bounded heap with the worst hit at the root. */
static inline void rv__heap_push(rv__hit *h, size_t *n, size_t cap, rv__hit x) {
    if (*n < cap) {
        size_t i = (*n)++;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (!rv__hit_better(h[p].s, h[p].id, x.s, x.id)) break;
            h[i] = h[p];
            i = p;
        }
        h[i] = x;
        return;
    }
    if (!rv__hit_better(x.s, x.id, h[0].s, h[0].id)) return;
    h[0] = x;
    rv__sift_hits(h, cap, 0);
}

/* One pass of a search (flat_search.c): the queries of the pass, packed,
** the rows to skip, the panels to scan in chunks, and per thread a heap
** per query. */
typedef struct rv__search {
    const rv_flat *ix;
    size_t nq;              /* queries in this pass */
    size_t kk;              /* heap size per query */
    unsigned qb;            /* queries per kernel block */
    size_t nqb;             /* query blocks */
    int mode;               /* storage scanned: RV_FLAT_F32 / F16 / I8 */
    const float *qpack_f;   /* float query blocks */
    const uint8_t *qpack_b; /* int8 query blocks */
    const float *qscale;    /* int8: per-query scale */
    const float *qrows;     /* prepared queries, row-major (RV__MODE_ROWS) */
    const int16_t *q16;     /* screen: int16 query codes, dim4 per query */
    const float *qbound;    /* screen: per query (code scale, alpha, beta) */
    const uint32_t *qnz;    /* screen: per query dim4/4 + 1: count, nonzero quads */
    float *sc_u;            /* screen: [n_threads][chunk rows] upper bounds */
    size_t *sc_row;         /* screen: [n_threads][chunk rows] their rows */
    double *sc_lb;          /* screen: [n_threads][4 kk] lower bounds */
    const uint8_t *skip;    /* per row: 1 = never return (dead or filtered) */
    const size_t *panels;   /* panels holding at least one eligible row */
    size_t chunk_panels;    /* panels per work item */
    size_t n_panels;        /* entries of panels */
    size_t n_chunks;
    atomic_size_t next_chunk;
    atomic_size_t done_chunks;
    atomic_int stop;
    rv__hit *heaps; /* [n_threads][nq][kk] */
    size_t *counts; /* [n_threads][nq] */
    float *tiles;   /* [n_threads][qb * 16] floats or int32 */
    rv_progress_fn progress;
    void *progress_ctx;
    uint64_t progress_base, progress_total;
    int interrupted;
} rv__search;

/* The screen (flat_screen.c).  rv__pack_queries_q16: the screen's form of
** nq prepared queries; rv__scan_chunk_screen: work item c of a pass in
** RV__MODE_SCREEN on thread t. */
void rv__pack_queries_q16(const rv_flat *ix, const float *qn, size_t nq, int16_t *q16,
                          float *qbound, uint32_t *qnz);
void rv__scan_chunk_screen(rv__search *sr, unsigned t, size_t c);

#endif /* ROWVOI_FLAT_INTERNAL_H */
