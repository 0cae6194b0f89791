/*
** The exact search of an int8-storage flat index (RV__MODE_SCREEN of
** rv_flat_search): the int8 copy of the rows bounds every row's float32
** score from above and below, and only the rows whose upper bound reaches
** the k-th best lower bound are scored from the float32 rows -- so the
** results are those of a float32 scan of every row, bit for bit.  The
** rest of the search (plan, passes, threads, merge) is flat_search.c's.
*/
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flat_internal.h"

/* Move the want largest of the upper ends u[0 .. n) (0 < want < n), with
** their rows r[i] (parallel arrays), to the front: quickselect with a
** median-of-three pivot and branch-free partitions.  The order in which
** the screen's candidates are scored changes only how soon the heap's
** worst score rises, never the results, so the selection stops after 32
** rounds (adversarial input) with whatever front it has: O(n) expected,
** O(32 n) at worst, correct either way. */
static void rv__cand_front(float *u, size_t *r, size_t n, size_t want) {
    size_t lo = 0, hi = n;
    for (int round = 0; round < 32 && lo < want && want < hi; round++) {
        size_t mid = lo + (hi - lo) / 2;
        float a = u[lo], b = u[mid], c = u[hi - 1];
        float piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t gt = lo; /* [lo, gt) > piv, then <= piv */
        for (size_t i = lo; i < hi; i++) {
            float x = u[i];
            size_t xr = r[i], up = x > piv;
            u[i] = u[gt];
            r[i] = r[gt];
            u[gt] = x;
            r[gt] = xr;
            gt += up;
        }
        if (want <= gt) {
            hi = gt;
            continue;
        }
        size_t eq = gt; /* [gt, eq) == piv, then < piv */
        for (size_t i = gt; i < hi; i++) {
            float x = u[i];
            size_t xr = r[i], same = x == piv;
            u[i] = u[eq];
            r[i] = r[eq];
            u[eq] = x;
            r[eq] = xr;
            eq += same;
        }
        if (want <= eq) return;
        lo = eq;
    }
}

/* The screen's form of nq prepared queries (rows of qn):
** int16 codes qcode = round(q / qs), dim4 per query (zero past dim), with
** |qcode| <= qmax = min(32767, (2^31 - 1) / (127 dim4)) so that the
** int32 sums of rv__tile_q16_fn cannot overflow; and per query (qs, alpha,
** beta) for the bound of rv__scan_chunk_screen: with Q >= |q| and
** Eq >= |q - qs qcode| (both computed in double and enlarged by margins far
** above the double roundings), alpha = Q (1 + gamma_dim) and
** beta = Eq + gamma_dim Q + 8 u (Q + Eq), times 1 + 1e-6, rounded up to
** float.  qs is a float, so the screen's float products use it exactly.
** qnz receives per query (dim4 / 4 + 1 entries) the number of dimension
** quads holding a nonzero code, then those quads in increasing order: the
** screen of a sparse query reads only their panel lines (rv__tile_q16s_fn). */
void rv__pack_queries_q16(const rv_flat *ix, const float *qn, size_t nq, int16_t *q16,
                          float *qbound, uint32_t *qnz) {
    size_t dim = ix->dim, d4 = ix->dim4;
    double u = ldexp(1.0, -24), nu = (double)dim * u;
    double gam = nu / (1.0 - nu);
    double qmax = (double)(2147483647u / (127u * (unsigned)d4));
    if (qmax > 32767.0) qmax = 32767.0;
    const float fqmax = (float)qmax, magic = 0x1.8p23f;
    for (size_t i = 0; i < nq; i++) {
        const float *q = qn + i * dim;
        int16_t *c = q16 + i * d4;
        /* |q|^2 and later |q - qh|^2 in four interleaved double sums: any
        ** order errs by far less than the margins below */
        float maxabs = 0;
        double n2[4] = {0, 0, 0, 0}, e2[4] = {0, 0, 0, 0};
        for (size_t j = 0; j < dim; j++) {
            float a = fabsf(q[j]);
            maxabs = a > maxabs ? a : maxabs;
        }
        size_t j4 = dim / 4 * 4;
        for (size_t j = 0; j < j4; j += 4)
            for (size_t t = 0; t < 4; t++) n2[t] += (double)q[j + t] * q[j + t];
        for (size_t j = j4; j < dim; j++) n2[j - j4] += (double)q[j] * q[j];
        /* a float, so that the screen's float products use it exactly */
        float qsf = maxabs > 0 ? (float)((double)maxabs / qmax) : 0.0f;
        float inv = qsf > 0 ? 1.0f / qsf : 0.0f;
        if (qsf > 0 && inv <= FLT_MAX) {
            /* Codes in float: |q inv| <= qmax (1 + 2^-22) < 2^22, where
            ** adding and taking away 1.5 * 2^23 rounds to the nearest
            ** integer.  Any integer code in range keeps the bound valid
            ** (the error below is that of the codes written), so the
            ** rounding need not be the correctly rounded q / qs. */
            for (size_t j = 0; j < dim; j++) {
                float r = (q[j] * inv + magic) - magic;
                r = r > fqmax ? fqmax : r;
                r = r < -fqmax ? -fqmax : r;
                c[j] = (int16_t)r;
            }
        } else { /* qs subnormal or zero: double division */
            for (size_t j = 0; j < dim; j++) {
                double k = 0;
                if (qsf > 0) {
                    k = nearbyint((double)q[j] / (double)qsf);
                    if (k > qmax) k = qmax;
                    if (k < -qmax) k = -qmax;
                }
                c[j] = (int16_t)k;
            }
        }
        for (size_t j = dim; j < d4; j++) c[j] = 0;
        /* the quads holding a nonzero code (the others add nothing) */
        uint32_t *nz = qnz + i * (d4 / 4 + 1), n_nz = 0;
        for (size_t j = 0; j < d4; j += 4)
            if (c[j] | c[j + 1] | c[j + 2] | c[j + 3]) nz[1 + n_nz++] = (uint32_t)(j / 4);
        nz[0] = n_nz;
        double qs = (double)qsf;
        for (size_t j = 0; j < j4; j += 4)
            for (size_t t = 0; t < 4; t++) {
                double d = (double)q[j + t] - qs * (double)c[j + t]; /* qs c: exact */
                e2[t] += d * d;
            }
        for (size_t j = j4; j < dim; j++) {
            double d = (double)q[j] - qs * (double)c[j];
            e2[j - j4] += d * d;
        }
        double Q = sqrt((n2[0] + n2[1]) + (n2[2] + n2[3])) * (1.0 + 1e-6);
        double Eq = sqrt((e2[0] + e2[1]) + (e2[2] + e2[3])) * (1.0 + 1e-6) + 1e-12 * Q;
        qbound[3 * i] = qsf;
        qbound[3 * i + 1] = rv__float_up(Q * (1.0 + gam) * (1.0 + 1e-6));
        qbound[3 * i + 2] = rv__float_up((Eq + gam * Q + 8.0 * u * (Q + Eq)) * (1.0 + 1e-6));
    }
}

/* The exact search of an int8-storage index (RV__MODE_SCREEN), work item c.
**
** For a stored row x (float32), its int8 copy xh = scale * code and a
** prepared query q with int16 codes qh = qs * qcode, the int8 screen gives
** a = qs * scale * (qcode . code), exact in int32 and then in double.  The
** float32 score s that the rows scan computes (rv__exact_score) satisfies
**   |s - a| <= |q| |x - xh| + |q - qh| |xh|          (the quantisation)
**            + gamma_dim |q| |x|                       (float32 sums)
**            + rounding of a, b, a + b, a - b           (8 u (|q| + |q - qh|) |xh|)
** (Cauchy-Schwarz; |x| <= |xh| + |x - xh|; gamma_n = n u / (1 - n u) with
** u = 2^-24 bounds a float32 dot product of n terms in any order; a is
** three float32 roundings of the exact integer sum, |a| <= (|q| +
** |q - qh|) |xh|).  With the per-row bounds qerr >= |x - xh| and qnorm >=
** |xh| (rv__store_row) this is b = alpha * qerr + beta * qnorm, alpha and
** beta per query rounded up (rv__pack_queries_q16), enlarged by 1 + 1e-6
** (the roundings of b itself) and by 1e-30 (underflow: each float32
** operation near the subnormals errs by at most 2^-149 absolutely).  So s
** lies in [a - b, a + b].
**
** Per query, the work item first computes every eligible row's interval;
** then T = the kk-th largest among the exact scores already in the query's
** heap and the lower ends of the new intervals (kk distinct rows score >= T,
** so the final kk-th best score is >= T); a row whose upper end is below T
** scores below the final kk-th best and cannot be a result (nor tie with
** one).  The other rows are scored exactly (rv__dotsg_fn: the rows scan's
** arithmetic) and offered to the heap, as the rows scan does, in blocks of
** the highest upper ends (rv__cand_front: selected, not sorted); whenever
** the heap holds kk hits, every row left whose upper end is below its
** worst score scores below a hit already held (so below the final kk-th
** best) and is dropped unscored.  Hence the results -- ids, order and
** scores -- are those of the rows scan, bit for bit, whatever the data
** (the top kk of a total order do not depend on the order in which rows
** are offered).  Blocks instead of a heap of candidates: at k = 500 of
** 1,398 Cranfield rows, popping candidates one by one from a heap was the
** search's largest cost (23 % of it).
**
** The integer sums: a query quad (4 dimensions) whose codes are all zero
** adds nothing to any row's sum, so a query with such quads (sparse
** vectors) may be screened through the list of its other quads
** (rv__tile_q16s_fn), reading only their panel lines; the sums are the
** same integers.  It is, when at most half of its quads are nonzero: the
** list's lines are scattered, so the hardware prefetcher does not stream
** them as it streams whole panels, and a query that skips few lines loses
** more than it saves (the Cranfield hashing queries, 512 dimensions, 107
** of 128 quads nonzero at the median: the kernel's step through Python
** 51 -> 45 us warm and 250 -> 202 us with the caches evicted, medians of 5
** processes each, alternated, on an AVX2 host). */
void rv__scan_chunk_screen(rv__search *sr, unsigned t, size_t c) {
    const rv_flat *ix = sr->ix;
    size_t p0 = c * sr->chunk_panels, p1 = p0 + sr->chunk_panels;
    if (p1 > sr->n_panels) p1 = sr->n_panels;
    size_t nq = sr->nq, kk = sr->kk, dim = ix->dim, d4 = ix->dim4;
    size_t cr = sr->chunk_panels * RV__PANEL;
    rv__hit *heaps = sr->heaps + (size_t)t * nq * kk;
    size_t *counts = sr->counts + (size_t)t * nq;
    int32_t *itile = (int32_t *)(void *)(sr->tiles + (size_t)t * sr->qb * RV__PANEL);
    float *U = sr->sc_u + (size_t)t * cr;
    size_t *rows = sr->sc_row + (size_t)t * cr;
    double *lb = sr->sc_lb + (size_t)t * 4 * kk;
    size_t pb = rv__panel_bytes(ix);
    const char *pan0 = (const char *)ix->panels;
    for (size_t q = 0; q < nq; q++) {
        rv__hit *h = heaps + q * kk;
        size_t *cnt = counts + q;
        const float *qb3 = sr->qbound + 3 * q;
        const int16_t *qc = sr->q16 + q * d4;
        /* the query's nonzero code quads: count, then the list */
        const uint32_t *nzq = sr->qnz + q * (d4 / 4 + 1);
        int sparse = 2 * (size_t)nzq[0] <= d4 / 4; /* at most half */
        /* lb holds lower bounds of distinct rows' scores: the exact scores
        ** in the heap, then every new lower end above tau.  tau never
        ** exceeds the kk-th largest of all the lower bounds offered (it is
        ** the kk-th largest of a subset), and every value above tau is
        ** kept, so the kk-th largest of lb at the end is that of all of
        ** them: T.  Rows whose upper end is below tau (<= T) are dropped at
        ** once. */
        size_t nb = *cnt, m = 0;
        double tau = -INFINITY; /* always a float value (or -inf) */
        for (size_t i = 0; i < nb; i++) lb[i] = (double)h[i].s;
        if (nb == kk) {
            tau = lb[0];
            for (size_t i = 1; i < nb; i++)
                if (lb[i] < tau) tau = lb[i]; /* the heap's worst */
        }
        for (size_t pi = p0; pi < p1; pi++) {
            size_t r0 = sr->panels[pi] * RV__PANEL;
            const int8_t *pan = (const int8_t *)(const void *)(pan0 + sr->panels[pi] * pb);
            if (sparse)
                ix->kern.q16s(pan, qc, nzq + 1, nzq[0], itile);
            else
                ix->kern.q16(pan, d4, qc, itile);
            size_t lanes = ix->n_rows - r0 < RV__PANEL ? ix->n_rows - r0 : RV__PANEL;
            float up[RV__PANEL], lo[RV__PANEL];
            const float *sc = ix->scale + r0, *qe = ix->qerr + r0, *qn = ix->qnorm + r0;
            uint32_t reach = ix->kern.bounds(itile, sc, qe, qn, lanes, qb3, (float)tau, up, lo);
            /* the lanes whose upper end reached tau (it may rise below),
            ** appended without branches (whether a lane stays is a coin
            ** toss): m < cr and nb < 4 kk before each write */
            while (reach) {
                size_t l = rv__ctz64(reach);
                reach &= reach - 1;
                size_t keep = !((double)up[l] < tau) & !sr->skip[r0 + l];
                U[m] = up[l];
                rows[m] = r0 + l;
                m += keep;
                lb[nb] = (double)lo[l];
                nb += keep & ((double)lo[l] > tau);
                if (nb == 4 * kk) {
                    /* keep the kk largest; tau = the smallest of them */
                    tau = rv__kth_largest_f64(lb, nb, kk);
                    nb = kk;
                }
            }
        }
        /* T: -inf while fewer than kk rows are known */
        double thr = nb >= kk ? rv__kth_largest_f64(lb, nb, kk) : -INFINITY;
        size_t n_c = 0;
        for (size_t i = 0; i < m; i++) { /* (branch-free: the test is a coin toss) */
            float x = U[i];
            U[n_c] = x;
            rows[n_c] = rows[i];
            n_c += (double)x >= thr;
        }
        /* exact scores, as the rows scan computes them, four rows at a
        ** time, in blocks: while the heap has room, the rows with the
        ** highest upper ends that fill it; once it is full, every row whose
        ** upper end is below its worst score is dropped unscored (no such
        ** row can enter it), and the next block is the highest quarter of
        ** a heap (at least 8 rows) of those left */
        const float *qr = sr->qrows + q * dim;
        size_t done = 0; /* rows[0 .. done) scored */
        while (done < n_c) {
            size_t take;
            if (*cnt < kk) {
                take = kk - *cnt;
            } else {
                float worst = h[0].s;
                size_t w = done;
                for (size_t i = done; i < n_c; i++) {
                    float x = U[i];
                    U[w] = x;
                    rows[w] = rows[i];
                    w += !(x < worst);
                }
                n_c = w;
                if (done == n_c) break;
                take = kk / 4 > 8 ? kk / 4 : 8;
            }
            if (take < n_c - done)
                rv__cand_front(U + done, rows + done, n_c - done, take);
            else
                take = n_c - done;
            size_t end = done + take;
            for (size_t b = done; b < end; b += 4) {
                size_t g = end - b < 4 ? end - b : 4;
                float s4[4];
                ix->kern.dotsg(qr, ix->rows, rows + b, g, dim, s4);
                for (size_t i = 0; i < g; i++) {
                    size_t row = rows[b + i];
                    float s = s4[i];
                    if (*cnt == kk && !rv__hit_better(s, ix->row_id[row], h[0].s, h[0].id))
                        continue;
                    rv__hit x = {s, ix->row_id[row], row};
                    rv__heap_push(h, cnt, kk, x);
                }
            }
            done = end;
        }
    }
}
