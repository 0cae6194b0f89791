/*
** Posterior updates and entropy: hard filter, soft reweighting, the noisy
** observation likelihood, Shannon entropy in bits.
*/
#include <string.h>

#include "belief_internal.h"

void rv_belief_options_init(rv_belief_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->noise = 0.0;
    opt->costs = NULL;
    opt->n_threads = 0;
    opt->progress = NULL;
    opt->progress_ctx = NULL;
}

rv_status rv_belief_entropy(const double *weights, size_t n, double *out) {
    RV__NOT_NULL(out, "out");
    if (n && !weights) return rv__null("weights");
    RV__CHECK_SIZE(n, sizeof *weights, "n");
    *out = 0.0;
    double total;
    rv_status st = rv__check_weights(weights, n, "weights", &total);
    if (st) return st;
    if (n == 0) return RV_OK;
    if (!(total > 0))
        return rv__error(RV_E_INVALID_ARG, "weights sum to 0: no distribution to measure");
    /* Sum -q log2 q over q = w / total directly rather than through
    ** log2(total) - sum(w log2 w) / total: no cancellation for peaked
    ** distributions, where the entropy is tiny. */
    double h = 0.0;
    for (size_t i = 0; i < n; i++) h += rv__xlog2x_neg(weights[i] / total);
    *out = h > 0 ? h : 0.0;
    return RV_OK;
}

rv_status rv_belief_filter(const int32_t *codes, const double *posterior, size_t n, int32_t value,
                           uint64_t *kept, double *out_posterior, size_t *n_kept) {
    RV__NOT_NULL(n_kept, "n_kept");
    *n_kept = 0;
    if (n) {
        RV__NOT_NULL(codes, "codes");
        RV__NOT_NULL(posterior, "posterior");
        RV__NOT_NULL(kept, "kept");
        RV__NOT_NULL(out_posterior, "out_posterior");
    }
    RV__CHECK_SIZE(n, sizeof *posterior, "n");
    double total_all;
    rv_status st = rv__check_weights(posterior, n, "posterior", &total_all);
    if (st) return st;
    double mass = 0.0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (codes[i] == value) {
            mass += posterior[i];
            m++;
        }
    if (m == 0 || !(mass > 0)) return RV_OK;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (codes[i] != value) continue;
        kept[j] = (uint64_t)i;
        out_posterior[j] = posterior[i] / mass; /* j <= i: safe in place */
        j++;
    }
    *n_kept = j;
    return RV_OK;
}

rv_status rv_belief_reweight(const double *posterior, const double *likelihoods, size_t n,
                             double *out) {
    if (n) {
        RV__NOT_NULL(posterior, "posterior");
        RV__NOT_NULL(likelihoods, "likelihoods");
        RV__NOT_NULL(out, "out");
    }
    RV__CHECK_SIZE(n, sizeof *posterior, "n");
    double scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        double l = likelihoods[i];
        if (isnan(l))
            return rv__error(RV_E_INVALID_ARG,
                             "likelihoods[%zu] is NaN: likelihoods must be finite", i);
        if (!isfinite(l))
            return rv__error(RV_E_INVALID_ARG,
                             "likelihoods[%zu] is infinite: likelihoods must be finite", i);
        if (l < 0)
            return rv__error(RV_E_INVALID_ARG,
                             "likelihoods[%zu] = %g: likelihoods must be non-negative", i, l);
        if (l > scale) scale = l;
    }
    double ptotal;
    rv_status st = rv__check_weights(posterior, n, "posterior", &ptotal);
    if (st) return st;
    double total = 0.0;
    if (scale > 0)
        for (size_t i = 0; i < n; i++) total += posterior[i] * (likelihoods[i] / scale);
    if (!(total > 0))
        return rv__error(RV_E_INFEASIBLE,
                         "zero likelihood under every candidate with posterior mass: the "
                         "evidence has zero probability (zero total mass is left), so the "
                         "candidate set is wrong, not merely narrowed");
    for (size_t i = 0; i < n; i++) out[i] = posterior[i] * (likelihoods[i] / scale) / total;
    return RV_OK;
}

rv_status rv_belief_likelihood(const int32_t *codes, size_t n, int32_t value, double noise,
                               double *out) {
    if (n) {
        RV__NOT_NULL(codes, "codes");
        RV__NOT_NULL(out, "out");
    }
    RV__CHECK_SIZE(n, sizeof *out, "n");
    if (!(noise >= 0.0 && noise < 1.0))
        return rv__error(RV_E_INVALID_ARG, "noise = %g: must be in [0, 1)", noise);
    if ((uint64_t)n > RV_BELIEF_MAX_CANDIDATES)
        return rv__error(RV_E_RANGE, "%zu candidates: at most %llu per call", n,
                         (unsigned long long)RV_BELIEF_MAX_CANDIDATES);
    if (n == 0) return RV_OK;
    if (noise == 0.0) {
        /* Exact observations: a hard indicator (all zeros for a value no
        ** candidate has, which rv_belief_reweight reports as impossible). */
        for (size_t i = 0; i < n; i++) out[i] = codes[i] == value ? 1.0 : 0.0;
        return RV_OK;
    }
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) found = codes[i] == value;
    rv__bscratch s;
    rv_status st = rv__bscratch_init(&s, n);
    if (st) return st;
    rv__colstats cs;
    rv__column_hist(codes, NULL, n, NULL, &s, &cs);
    rv__bscratch_free(&s);
    /* The observed answers: the K values among the candidates, plus the
    ** observed value when no candidate has it.  A miss spreads noise evenly
    ** over a candidate's other answers, so it is noise / (answers - 1); with
    ** a single answer there are no misses and every candidate gets 1 - noise. */
    uint64_t answers = cs.k + (found ? 0u : 1u);
    double hit = 1.0 - noise;
    double miss = answers > 1 ? noise / (double)(answers - 1) : 0.0;
    for (size_t i = 0; i < n; i++) out[i] = codes[i] == value ? hit : miss;
    return RV_OK;
}
