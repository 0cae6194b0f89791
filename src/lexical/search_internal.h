/*
** The working memory of BM25 searches (search.c), and the one spare
** scratch an index keeps for its next single search (scratch.c): its
** types, shared by the two units, and how a scratch is taken, given back
** and freed.  Internal to src/lexical.
*/
#ifndef RV_LEXICAL_SEARCH_INTERNAL_H
#define RV_LEXICAL_SEARCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bm25_internal.h"

/* One hit of a search: its score, slot and caller id. */
typedef struct {
    float score;
    uint32_t doc;
    int64_t id;
} rv__hit;

/* A cursor over one query term's posting list. */
typedef struct {
    const uint32_t *docs;
    const rv__seg *seg;
    uint64_t pos, end, start;    /* posting positions of the list */
    uint64_t blk, blk0, blk_end; /* current, first and end block */
    uint32_t doc;                /* current document, UINT32_MAX at end */
    float idf;
    double qtf;
    double ub;       /* qtf * the list's bound */
    uint32_t q;      /* index of the term in canonical order */
    uint64_t bb_blk; /* the block whose bound bb is (UINT64_MAX: none yet) */
    double bb;
} rv__cur;

/* Per-thread scratch, reused across the queries of a batch. */
typedef struct {
    uint32_t *raw; /* analysed query term ids, with repeats */
    size_t n_raw, raw_cap;
    uint32_t *qterm; /* distinct, ascending */
    uint32_t *qtf;
    float *qidf; /* idf of each, single precision */
    size_t nq, q_cap;
    rv__cur *cur;
    double *prefix;
    uint32_t *tq; /* terms matched by the current candidate */
    float *tw;
    size_t cur_cap;
    rv__hit *heap;
    size_t heap_cap;
    float *sel; /* scores of the heap's 2k slots, for bulk offers (k >= 32) */
    size_t sel_cap;
    /* window kernel: per-document partial scores (all zero between
    ** windows), a bitmap of touched documents, candidates */
    double *wpart;
    uint64_t *wbits;
    uint32_t *cand, *cand_tmp;
    /* term-at-a-time kernel: the candidates' scores (RV__WIN_MAX) */
    float *wscore;
    const rv_bm25 *ix;
} rv__scratch;

/* Free what a scratch holds (not the scratch itself); zeroes it. */
void rv__scratch_free(rv__scratch *s);
/* Free the per-term arrays alone (qterm .. tw; q_cap 0), to size them anew. */
void rv__scratch_free_terms(rv__scratch *s);

/* A single search's scratch: the index's spare one when no other search
** holds it, else a fresh one (NULL: out of memory).  Only the spare slot of
** the index changes, atomically, so concurrent searches stay safe. */
rv__scratch *rv__scratch_take(const rv_bm25 *ix);

/* Put a scratch back as the index's spare, or free it (the slot is taken,
** or the scratch grew large). */
void rv__scratch_give(const rv_bm25 *ix, rv__scratch *s);

#endif
