/*
** Internals of the flat index, shared by flat.c, flat_kernels.c, flat_io.c.
*/
#ifndef ROWVOI_FLAT_INTERNAL_H
#define ROWVOI_FLAT_INTERNAL_H

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
** (rv__scan_chunk_screen in flat.c): with qb = (qs, alpha, beta),
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
    /* I8 only, for the exact search's screen (see rv_flat_search in flat.c):
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

/* Internal add used by load: norm_given != 0 keeps cosine vectors as they
** are (they were normalised when first added). */
rv_status rv__flat_add(rv_flat *index, size_t n, const float *vectors, const int64_t *ids,
                       int64_t *assigned, int norm_given);

/* Row r of the index as float32 (points into rows, or gathers from the
** float32 panels into tmp, dim floats). */
const float *rv__flat_row(const rv_flat *index, size_t r, float *tmp);

#endif /* ROWVOI_FLAT_INTERNAL_H */
