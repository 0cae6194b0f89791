/*
** Information gain of every candidate column: rv_belief_mi.
**
** Under the noise model of belief.h the observation Y of a column depends on
** the row R only through the row's value V, and H(Y | R = r) is the same for
** every r:  h_noise(K) = -(1-e) log2(1-e) - e log2(e / (K-1)).  So
**
**     I(R; Y | E) = H(R|E) - E_y[ H(R | E, Y = y) ] = H(Y|E) - h_noise(K),
**
** where P(Y = x | E) = (1-e) w_x + e/(K-1) (1 - w_x) and w_x is the posterior
** mass of the candidates whose value is x.  The right-hand form needs only
** the K masses w_x, i.e. one histogram pass -- O(n) per column, never a
** per-value pass over the candidates -- and it involves no difference of two
** large entropies, so it stays accurate when the gain is small.  With e = 0
** it is H(V|E), the entropy of the value distribution.
**
** Parallelism: columns are handed out through an atomic counter.  A column's
** result depends only on its codes and the posterior (the histogram has no
** thread-dependent state), so the output is identical for any thread count.
** All scratch is allocated on the calling thread before any worker starts,
** so allocation failures (and failure injection in tests) surface there.
*/
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "belief_internal.h"

#include <stdatomic.h>

#include "../core/parallel.h"

/* Below this many cells (candidates x columns, ~5 ms of work) one thread is
** faster: starting and joining workers costs more than it saves, and on a
** busy machine a late-scheduled worker delays the join. */
#define RV__MI_PARALLEL_MIN ((uint64_t)1 << 22)

typedef struct rv__mi_job {
    const int32_t *codes;
    size_t n_rows, n_cols, n_cand;
    const uint64_t *rows;
    const double *post; /* normalised to sum to 1 */
    double h_rows;
    double noise;
    double *mi, *h_col;
    uint64_t *n_values, *pairs;
} rv__mi_job;

static uint64_t rv__c2(uint64_t n) {
    return n < 2 ? 0 : n * (n - 1) / 2;
}

static void rv__mi_column(const rv__mi_job *job, rv__bscratch *s, size_t c) {
    rv__colstats cs;
    rv__column_hist(job->codes + c * job->n_rows, job->rows, job->n_cand, job->post, s, &cs);
    double hv = 0.0;
    for (uint64_t j = 0; j < cs.k; j++) hv += rv__xlog2x_neg(s->vals[j]);
    if (hv < 0) hv = 0.0;
    double gain = 0.0;
    if (cs.k >= 2) {
        double e = job->noise;
        if (e == 0.0) {
            gain = hv;
        } else {
            double hit = 1.0 - e, miss = e / (double)(cs.k - 1);
            double hy = 0.0;
            for (uint64_t j = 0; j < cs.k; j++) {
                double w = s->vals[j];
                hy += rv__xlog2x_neg(hit * w + miss * (1.0 - w));
            }
            double h_noise = rv__xlog2x_neg(hit) - e * log2(miss);
            gain = hy - h_noise;
        }
    }
    /* The exact bounds: I(R;Y) <= H(R) and, Y depending on R only through V,
    ** I(R;Y) <= H(V).  Clamping removes rounding excursions only. */
    if (gain > job->h_rows) gain = job->h_rows;
    if (gain > hv) gain = hv;
    if (!(gain > 0)) gain = 0.0;
    job->mi[c] = gain;
    if (job->h_col) job->h_col[c] = hv;
    if (job->n_values) job->n_values[c] = cs.k;
    if (job->pairs) job->pairs[c] = rv__c2(job->n_cand) - cs.same_pairs;
}

/* The columns of one call, shared by its workers. */
typedef struct rv__mi_shared {
    const rv__mi_job *job;
    rv__bscratch *scratch; /* one per worker */
    const rv_belief_options *opt;
    atomic_size_t next; /* next column to take */
    atomic_size_t done; /* columns finished */
    atomic_int stop;    /* set when the progress callback stops */
    int reported_all;   /* worker 0 only: its last report was n_cols */
    rv_status st;       /* worker 0 only: RV_E_INTERRUPTED */
} rv__mi_shared;

/* Worker t takes columns from the shared counter until none are left
** (rv__worker_fn).  Worker 0 is the calling thread and alone reports
** progress.  Each column's results go to its own slots, so the output does
** not depend on which worker computed it. */
static void rv__mi_worker(void *ctx, unsigned t) {
    rv__mi_shared *sh = (rv__mi_shared *)ctx;
    const rv_belief_options *opt = sh->opt;
    size_t n_cols = sh->job->n_cols;
    for (;;) {
        if (atomic_load_explicit(&sh->stop, memory_order_relaxed)) break;
        size_t c = atomic_fetch_add(&sh->next, 1);
        if (c >= n_cols) break;
        rv__mi_column(sh->job, &sh->scratch[t], c);
        size_t done = atomic_fetch_add(&sh->done, 1) + 1;
        if (t != 0) continue;
        sh->reported_all = done == n_cols;
        if (opt->progress && opt->progress(opt->progress_ctx, done, n_cols)) {
            atomic_store(&sh->stop, 1);
            sh->st = rv__error(RV_E_INTERRUPTED, "stopped by the progress callback");
        }
    }
}

rv_status rv_belief_mi(const int32_t *codes, size_t n_rows, size_t n_cols, const uint64_t *rows,
                       size_t n_cand, const double *posterior, const rv_belief_options *opt,
                       double *mi, double *h_col, uint64_t *n_values, uint64_t *pairs,
                       double *h_rows, uint32_t *best) {
    rv_belief_options defaults;
    if (!opt) {
        rv_belief_options_init(&defaults);
        opt = &defaults;
    }
    if (best) *best = RV_BELIEF_NONE;
    if (h_rows) *h_rows = 0.0;
    if (n_cols && !mi) return rv__null("mi");
    if (n_cols && n_cand && !codes) return rv__null("codes");
    if (n_cand && !posterior) return rv__null("posterior");
    RV__CHECK_SIZE2(n_rows, n_cols, sizeof *codes, "n_rows", "n_cols");
    RV__CHECK_SIZE(n_cand, sizeof *rows, "n_cand");
    if (!(opt->noise >= 0.0 && opt->noise < 1.0))
        return rv__error(RV_E_INVALID_ARG, "noise = %g: must be in [0, 1)", opt->noise);
    if (n_cols > (size_t)UINT32_MAX - 1)
        return rv__error(RV_E_RANGE, "%zu columns: at most %u per call", n_cols, UINT32_MAX - 1);
    if ((uint64_t)n_cand > RV_BELIEF_MAX_CANDIDATES)
        return rv__error(RV_E_RANGE, "%zu candidates: at most %llu per call", n_cand,
                         (unsigned long long)RV_BELIEF_MAX_CANDIDATES);
    if (opt->costs)
        for (size_t c = 0; c < n_cols; c++) {
            double v = opt->costs[c];
            if (!(v >= 0) || !isfinite(v))
                return rv__error(RV_E_INVALID_ARG, "costs[%zu] = %g: costs must be finite and >= 0",
                                 c, v);
        }
    if (rows) {
        for (size_t i = 0; i < n_cand; i++)
            if (rows[i] >= n_rows)
                return rv__error(RV_E_RANGE, "rows[%zu] = %llu is >= n_rows = %zu", i,
                                 (unsigned long long)rows[i], n_rows);
    } else if (n_cand > n_rows) {
        return rv__error(RV_E_RANGE, "n_cand = %zu exceeds n_rows = %zu (rows is NULL)", n_cand,
                         n_rows);
    }
    double total;
    rv_status st = rv__check_weights(posterior, n_cand, "posterior", &total);
    if (st) return st;
    if (n_cand && !(total > 0))
        return rv__error(RV_E_INVALID_ARG, "posterior sums to 0: no belief to update");

    /* The posterior, normalised once (so every column sees identical input). */
    double *post = rv__malloc((n_cand ? n_cand : 1) * sizeof(double));
    if (!post) return rv__nomem("the normalised posterior");
    double hr = 0.0;
    for (size_t i = 0; i < n_cand; i++) {
        post[i] = posterior[i] / total;
        hr += rv__xlog2x_neg(post[i]);
    }
    if (hr < 0) hr = 0.0;

    rv__mi_job job = {codes, n_rows,     n_cols, n_cand, rows,     post,
                      hr,    opt->noise, mi,     h_col,  n_values, pairs};

    /* work: candidate-column cells; below RV__MI_PARALLEL_MIN one thread */
    unsigned n_threads = rv__threads_for(opt->n_threads, n_cols, (double)n_cand * (double)n_cols,
                                         (double)RV__MI_PARALLEL_MIN);
    rv__bscratch scratch[RV__MAX_THREADS];
    unsigned n_scratch = 0;
    for (; n_scratch < n_threads; n_scratch++) {
        st = rv__bscratch_init(&scratch[n_scratch], n_cand);
        if (st) break;
    }
    if (st) {
        for (unsigned t = 0; t < n_scratch; t++) rv__bscratch_free(&scratch[t]);
        rv__free(post);
        return st;
    }

    rv__mi_shared sh;
    sh.job = &job;
    sh.scratch = scratch;
    sh.opt = opt;
    atomic_init(&sh.next, 0);
    atomic_init(&sh.done, 0);
    atomic_init(&sh.stop, 0);
    sh.reported_all = 0;
    sh.st = RV_OK;
    rv__parallel_run(n_threads, rv__mi_worker, &sh);
    st = sh.st;
    /* The other workers may have taken every column before the calling
    ** thread took any: report the final count once here, so the callback
    ** always runs (and a pending interrupt is always honoured). */
    if (!st && opt->progress && !sh.reported_all &&
        opt->progress(opt->progress_ctx, atomic_load(&sh.done), n_cols))
        st = rv__error(RV_E_INTERRUPTED, "stopped by the progress callback");
    for (unsigned t = 0; t < n_scratch; t++) rv__bscratch_free(&scratch[t]);
    rv__free(post);
    if (st) return st;

    if (h_rows) *h_rows = hr;
    if (best) {
        uint32_t b = RV_BELIEF_NONE;
        for (size_t c = 0; c < n_cols; c++) {
            if (!(mi[c] > RV_BELIEF_MIN_GAIN)) continue;
            double cc = opt->costs ? opt->costs[c] : 1.0;
            if (b == RV_BELIEF_NONE) {
                b = (uint32_t)c;
                continue;
            }
            double cb = opt->costs ? opt->costs[b] : 1.0;
            if (rv__ratio_better(mi[c], cc, mi[b], cb)) b = (uint32_t)c;
        }
        *best = b;
    }
    return RV_OK;
}
