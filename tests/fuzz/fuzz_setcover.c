/*
** Fuzz target for the set cover engine.  Decodes the input into a small
** problem (sets, costs, a coverage target) and a small key problem (integer
** codes), runs every solver and the path planners, and aborts when an
** invariant breaks:
**   - every solver returns a cover of the target (or RV_E_INFEASIBLE when
**     the target exceeds the coverable elements), with the reported cost;
**   - no strategy beats the exact solver, no lower bound (the LP's
**     included) exceeds its optimum, and "optimal" is only ever true;
**   - the LP relaxation's x is feasible and costs what it reports, with
**     lower_bound <= value;
**   - the partition-refinement key path equals the pair-bitset path.
** Built as a libFuzzer target with -DRV_BUILD_FUZZ=ON (clang); the replay
** driver tests/c/test_fuzz_replay.c runs it under ctest on a corpus and on
** generated inputs.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"
#include "fuzz_util.h"

typedef struct fz_in {
    const uint8_t *p;
    size_t n, i;
} fz_in;

static unsigned fz_byte(fz_in *in) {
    return in->i < in->n ? in->p[in->i++] : 0u;
}

static void fz_cover(fz_in *in) {
    size_t n_el = 1 + fz_byte(in) % 40, n_sets = 1 + fz_byte(in) % 12;
    uint64_t offsets[13] = {0};
    uint32_t elems[12 * 16];
    double costs[12];
    size_t k = 0;
    for (size_t s = 0; s < n_sets; s++) {
        size_t len = fz_byte(in) % 16;
        for (size_t j = 0; j < len; j++) elems[k++] = fz_byte(in) % (uint32_t)n_el;
        offsets[s + 1] = k;
        costs[s] = 0.5 * (fz_byte(in) % 9); /* 0: a free set */
    }
    unsigned target = fz_byte(in);
    rv_cover *p = NULL;
    RVF_CHECK(rv_cover_create(n_el, n_sets, offsets, elems, costs, &p) == RV_OK);
    uint64_t coverable = rv_cover_n_coverable(p);
    uint64_t required = target % 2 ? RV_COVER_ALL : target % (n_el + 2);
    uint64_t need = required == RV_COVER_ALL ? coverable : required;
    double exact_cost = -1;
    for (int strat = RV_COVER_EXACT; strat >= RV_COVER_GREEDY; strat--) {
        for (int st2 = strat; st2 <= (strat == RV_COVER_EXACT ? RV_COVER_LP : strat); st2++) {
            if (strat == RV_COVER_GREEDY && st2 != RV_COVER_GREEDY) break;
            rv_cover_options opt;
            rv_cover_options_init(&opt);
            opt.strategy = (rv_cover_strategy)st2;
            opt.n_required = required;
            opt.seed = target;
            opt.iterations = 2000;
            opt.generations = 20;
            opt.lp_eps = 0.2;
            uint32_t sel[12];
            size_t n_sel = 99;
            rv_cover_info info;
            rv_status st = rv_cover_solve(p, &opt, sel, n_sets, &n_sel, &info);
            if (need > coverable) {
                RVF_CHECK(st == RV_E_INFEASIBLE);
                continue;
            }
            RVF_CHECK(st == RV_OK);
            uint64_t got = 0;
            RVF_CHECK(rv_cover_covered(p, sel, n_sel, NULL, &got) == RV_OK);
            RVF_CHECK(got >= need);
            double c = 0;
            for (size_t i = 0; i < n_sel; i++) c += costs[sel[i]];
            RVF_CHECK(c == info.cost);
            if (st2 == RV_COVER_EXACT) {
                RVF_CHECK(info.optimal);
                exact_cost = c;
            } else if (exact_cost >= 0) {
                RVF_CHECK(exact_cost <= c + 1e-9);
                RVF_CHECK(info.lower_bound <= exact_cost + 1e-9);
                RVF_CHECK(info.lp_bound <= exact_cost + 1e-9);
                if (info.optimal) RVF_CHECK(c <= exact_cost + 1e-9);
            }
        }
    }
    if (need <= coverable) {
        double x[12];
        rv_cover_lp_result res;
        rv_status st = rv_cover_lp(p, required, 0.2, 0, x, n_sets, &res);
        RVF_CHECK(st == RV_OK);
        RVF_CHECK(res.lower_bound <= res.value + 1e-12);
        RVF_CHECK(res.lower_bound <= exact_cost + 1e-9);
        double c = 0;
        for (size_t s = 0; s < n_sets; s++) {
            RVF_CHECK(x[s] >= 0 && x[s] <= 1);
            c += costs[s] * x[s];
        }
        RVF_CHECK(c <= res.value * (1 + 1e-9) + 1e-12 && c >= res.value * (1 - 1e-9) - 1e-12);
    }
    rv_cover_free(p);
}

static void fz_keys(fz_in *in) {
    size_t rows = 2 + fz_byte(in) % 11, cols = 1 + fz_byte(in) % 6;
    int32_t codes[6 * 12];
    double costs[6];
    for (size_t c = 0; c < cols; c++) {
        unsigned card = 1 + fz_byte(in) % 4;
        for (size_t r = 0; r < rows; r++) codes[c * rows + r] = (int32_t)(fz_byte(in) % card);
        costs[c] = 1 + fz_byte(in) % 3;
    }
    rv_cover *p = NULL;
    RVF_CHECK(rv_cover_create_pairs(codes, rows, cols, costs, 0, &p) == RV_OK);
    uint32_t o1[6], o2[6];
    uint64_t n1[6], n2[6], left = 0;
    size_t s1 = 0, s2 = 0;
    RVF_CHECK(rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, o1, n1, NULL, cols, &s1) == RV_OK);
    RVF_CHECK(rv_keys_plan_path(codes, rows, cols, costs, RV_PATH_COVERAGE, 0, NULL, NULL, o2, n2,
                                NULL, cols, &s2, &left) == RV_OK);
    RVF_CHECK(s1 == s2);
    for (size_t i = 0; i < s1; i++) RVF_CHECK(o1[i] == o2[i] && n1[i] == n2[i]);
    uint64_t pairs = (uint64_t)rows * (rows - 1) / 2;
    RVF_CHECK(pairs - left == rv_cover_n_coverable(p));
    rv_cover_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_in in = {data, size, 0};
    fz_cover(&in);
    fz_keys(&in);
    return 0;
}
