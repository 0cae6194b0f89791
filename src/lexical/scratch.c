/*
** The spare search scratch of a BM25 index: one scratch kept between
** single searches (so a search does not allocate and clear its buffers
** again), taken and given back with atomic exchanges, and freed with the
** index (rv__bm25_spare_free, called by rv_bm25_free).
*/
#include <stdatomic.h>
#include <string.h>

#include "bm25_internal.h"
#include "search_internal.h"

void rv__scratch_free_terms(rv__scratch *s) {
    rv__free(s->qterm);
    rv__free(s->qtf);
    rv__free(s->qidf);
    rv__free(s->cur);
    rv__free(s->prefix);
    rv__free(s->tq);
    rv__free(s->tw);
    s->qterm = NULL;
    s->qtf = NULL;
    s->qidf = NULL;
    s->cur = NULL;
    s->prefix = NULL;
    s->tq = NULL;
    s->tw = NULL;
    s->q_cap = 0;
}

void rv__scratch_free(rv__scratch *s) {
    rv__free(s->raw);
    rv__scratch_free_terms(s);
    rv__free(s->heap);
    rv__free(s->sel);
    rv__free(s->wpart);
    rv__free(s->wbits);
    rv__free(s->cand);
    rv__free(s->cand_tmp);
    rv__free(s->wscore);
    memset(s, 0, sizeof *s);
}

/* A single search's scratch: the index's spare one when no other search
** holds it, else a fresh one (NULL: out of memory).  Only the spare slot of
** the index changes, atomically, so concurrent searches stay safe. */
rv__scratch *rv__scratch_take(const rv_bm25 *ix) {
    rv_bm25 *m = (rv_bm25 *)ix; /* the index is never a const object */
    rv__scratch *s = atomic_exchange(&m->spare, NULL);
    if (!s) s = rv__calloc(1, sizeof *s);
    if (s) s->ix = ix;
    return s;
}

/* Put a scratch back as the index's spare (or free it when the slot is
** taken, or when it holds a large heap or many terms: the spare stays
** small). */
void rv__scratch_give(const rv_bm25 *ix, rv__scratch *s) {
    rv_bm25 *m = (rv_bm25 *)ix;
    void *none = NULL;
    if (s->heap_cap <= 4096 && s->q_cap <= 256 &&
        atomic_compare_exchange_strong(&m->spare, &none, s))
        return;
    rv__scratch_free(s);
    rv__free(s);
}

void rv__bm25_spare_free(rv_bm25 *ix) {
    rv__scratch *s = atomic_exchange(&ix->spare, NULL);
    if (!s) return;
    rv__scratch_free(s);
    rv__free(s);
}
