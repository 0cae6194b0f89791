/*
** Allocation-failure sweep.  For every entry point that allocates, make the
** n-th allocation fail for n = 1, 2, ... until a run completes before
** reaching allocation n.  Every run must return RV_OK or RV_E_NOMEM (never
** another code, never a crash), a NOMEM run must leave its outputs cleared
** and a message set, and an OK run must give the same output as a run
** without injection.  Leaks are caught by LeakSanitizer in the sanitizer
** build (-DRV_SANITIZE=address,undefined).
*/
#include <stdlib.h>

#include "rv_test.h"

/* ------------------------------------------------------------ fixtures */

enum { EL = 40, SETS = 10, ROWS = 70, COLS = 5, BIG_EL = 3000, BIG_SETS = 12 };

typedef struct {
    /* set cover input (CSR) */
    uint64_t off[SETS + 1];
    uint32_t el[EL * SETS];
    double cost[SETS];
    double cost_free[SETS]; /* the same with every third set free (cost 0) */
    double weights[EL];
    /* a larger instance whose reduction has > 1024 distinct elements, so the
    ** growth paths (realloc, rehash) run */
    uint64_t big_off[BIG_SETS + 1];
    uint32_t *big_el;
    /* key frame: column-major codes, one sparse-coded column */
    int32_t codes[ROWS * COLS];
    double col_cost[COLS];
    rv_cover *p;     /* built once, for the solvers */
    rv_cover *pfree; /* built once: p with free sets */
    rv_cover *big;   /* built once */
    /* outputs of the operation under test */
    rv_cover *made;
    uint32_t sel[64];
    size_t n_sel;
    uint64_t newly[64];
    double gain[64];
    uint64_t unres;
    rv_cover_info info;
    double x[SETS];
    rv_cover_lp_result lp;
    uint64_t *sig;
    uint64_t mult[BIG_EL];
    rv_status last;
    /* outputs of the keys-over-pieces kernels */
    uint32_t rows_out[ROWS];
    uint64_t off_out[ROWS / 2 + 2];
    uint64_t keys_out[ROWS], cnt_out[ROWS], boff[4];
    double ent[COLS];
    size_t n_out, g_out;
    /* the operation's parameters */
    rv_cover_strategy strategy;
    int use_free;
    uint64_t required;
    rv_path_objective objective;
    int weighted;
} fixture;

static void fixture_init(fixture *f) {
    memset(f, 0, sizeof *f);
    rv_rng r;
    rv_rng_seed(&r, 4096);
    size_t k = 0;
    for (size_t s = 0; s < SETS; s++) {
        for (uint32_t e = 0; e < EL; e++)
            if (rv_rng_uniform(&r) < 0.25) f->el[k++] = e;
        f->off[s + 1] = k;
        f->cost[s] = 1 + (double)rv_rng_below(&r, 4);
        f->cost_free[s] = s % 3 ? f->cost[s] : 0.0;
    }
    for (size_t e = 0; e < EL; e++) f->weights[e] = rv_rng_uniform(&r);
    f->big_el = malloc((size_t)BIG_EL * BIG_SETS * sizeof(uint32_t));
    k = 0;
    for (size_t s = 0; s < BIG_SETS; s++) {
        for (uint32_t e = 0; e < BIG_EL; e++)
            if (rv_rng_uniform(&r) < 0.5) f->big_el[k++] = e;
        f->big_off[s + 1] = k;
    }
    for (size_t c = 0; c < COLS; c++) {
        for (size_t i = 0; i < ROWS; i++) {
            int32_t v = (int32_t)rv_rng_below(&r, 2 + (uint64_t)c);
            f->codes[c * ROWS + i] = c == 3 ? v * 500000000 : v; /* sparse column */
        }
        f->col_cost[c] = 0.5 + (double)c;
    }
    f->sig = malloc((size_t)BIG_EL * sizeof(uint64_t));
}

static void fixture_free(fixture *f) {
    rv_cover_free(f->p);
    rv_cover_free(f->pfree);
    rv_cover_free(f->big);
    rv_cover_free(f->made);
    free(f->big_el);
    free(f->sig);
}

/* FNV-1a over a byte range, chained. */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

#define FNV0 UINT64_C(0xcbf29ce484222325)

/* Fingerprint of a problem: sizes and per-set coverage masks. */
static uint64_t print_cover(const rv_cover *p) {
    uint64_t h = FNV0, v[3] = {rv_cover_n_sets(p), rv_cover_n_elements(p), rv_cover_n_coverable(p)};
    h = fnv(h, v, sizeof v);
    size_t m = (size_t)rv_cover_n_elements(p);
    uint8_t *mask = malloc(m + 1);
    for (uint32_t s = 0; s < rv_cover_n_sets(p); s++) {
        uint64_t n = 0;
        if (rv_cover_covered(p, &s, 1, mask, &n) != RV_OK) return 0;
        h = fnv(h, mask, m);
    }
    free(mask);
    return h;
}

/* ------------------------------------------------------------ operations */

/* An operation runs with injection on and leaves its output in the fixture;
** `print` runs with injection off, fingerprints that output and releases
** it; `cleared` says whether a failed run left its outputs cleared. */
typedef struct {
    const char *name;
    rv_status (*run)(fixture *f);
    uint64_t (*print)(fixture *f);
    int (*cleared)(const fixture *f);
} operation;

static rv_status run_create(fixture *f) {
    f->made = (rv_cover *)f; /* junk: must be reset to NULL on failure */
    return rv_cover_create(EL, SETS, f->off, f->el, f->cost, &f->made);
}

static rv_status run_create_big(fixture *f) {
    f->made = (rv_cover *)f;
    return rv_cover_create(BIG_EL, BIG_SETS, f->big_off, f->big_el, NULL, &f->made);
}

static rv_status run_create_pairs(fixture *f) {
    f->made = (rv_cover *)f;
    return rv_cover_create_pairs(f->codes, ROWS, COLS, f->col_cost, 0, &f->made);
}

static uint64_t print_made(fixture *f) {
    uint64_t h = print_cover(f->made);
    rv_cover_free(f->made);
    f->made = NULL;
    return h;
}

static int cleared_made(const fixture *f) {
    return f->made == NULL;
}

static rv_status run_solve(fixture *f) {
    rv_cover_options o;
    rv_cover_options_init(&o);
    o.strategy = f->strategy;
    o.n_required = f->required;
    o.seed = 7;
    o.iterations = 600;
    o.population = 6;
    o.generations = 4;
    o.lp_eps = 0.2;
    f->n_sel = 99;
    return rv_cover_solve(f->use_free ? f->pfree : f->p, &o, f->sel, SETS, &f->n_sel, &f->info);
}

static rv_status run_lp(fixture *f) {
    for (size_t s = 0; s < SETS; s++) f->x[s] = -1; /* must be overwritten or cleared */
    return rv_cover_lp(f->use_free ? f->pfree : f->p, f->required, 0.2, 0, f->x, SETS, &f->lp);
}

static uint64_t print_lp(fixture *f) {
    uint64_t h = fnv(FNV0, f->x, sizeof f->x);
    h = fnv(h, &f->lp.value, sizeof f->lp.value);
    return fnv(h, &f->lp.lower_bound, sizeof f->lp.lower_bound);
}

static int cleared_lp(const fixture *f) {
    for (size_t s = 0; s < SETS; s++)
        if (f->x[s] != 0) return 0;
    return f->lp.value == 0 && f->lp.lower_bound == 0;
}

static uint64_t print_solve(fixture *f) {
    uint64_t h = fnv(FNV0, f->sel, f->n_sel * sizeof f->sel[0]);
    return fnv(h, &f->info.cost, sizeof f->info.cost) ^ f->info.covered;
}

static rv_status run_solve_big(fixture *f) {
    rv_cover_options o;
    rv_cover_options_init(&o);
    o.strategy = f->strategy;
    o.iterations = 300;
    o.population = 4;
    o.generations = 2;
    f->n_sel = 99;
    return rv_cover_solve(f->big, &o, f->sel, BIG_SETS, &f->n_sel, &f->info);
}

static int cleared_solve(const fixture *f) {
    return f->n_sel == 0;
}

static rv_status run_plan_path(fixture *f) {
    f->n_sel = 99;
    return rv_cover_plan_path(f->p, f->objective, f->weighted ? f->weights : NULL, f->sel, f->newly,
                              f->gain, SETS, &f->n_sel);
}

static uint64_t print_path(fixture *f) {
    uint64_t h = fnv(FNV0, f->sel, f->n_sel * sizeof f->sel[0]);
    h = fnv(h, f->newly, f->n_sel * sizeof f->newly[0]);
    h = fnv(h, f->gain, f->n_sel * sizeof f->gain[0]);
    return fnv(h, &f->unres, sizeof f->unres);
}

static rv_status run_keys_path(fixture *f) {
    f->n_sel = 99;
    return rv_keys_plan_path(f->codes, ROWS, COLS, f->weighted ? f->col_cost : NULL, f->objective,
                             0, NULL, NULL, f->sel, f->newly, f->gain, COLS, &f->n_sel, &f->unres);
}

static rv_status run_keys_unresolved(fixture *f) {
    static const uint32_t cols[] = {3, 1, 1, 4};
    f->n_sel = 0;
    f->unres = 12345;
    return rv_keys_unresolved(f->codes, ROWS, COLS, cols, 4, &f->unres);
}

static rv_status run_covered(fixture *f) {
    static const uint32_t sel[] = {0, 2, 5};
    f->n_sel = 0;
    f->unres = 12345;
    return rv_cover_covered(f->p, sel, 3, NULL, &f->unres);
}

static rv_status run_distinct(fixture *f) {
    f->n_sel = 99;
    return rv_cover_distinct_elements(f->big, f->sig, f->mult, BIG_EL, &f->n_sel);
}

static uint64_t print_distinct(fixture *f) {
    uint64_t h = fnv(FNV0, f->sig, f->n_sel * sizeof f->sig[0]);
    return fnv(h, f->mult, f->n_sel * sizeof f->mult[0]);
}

static int cleared_nothing(const fixture *f) {
    (void)f;
    return 1;
}

/* ---------------------------------------------------------------- sweep */

static long total_runs, total_nomem;

static void sweep(fixture *f, const operation *op, const char *variant) {
    /* baseline, no injection */
    rv__test_fail_alloc_after(0);
    rv_status st = op->run(f);
    uint64_t allocs = rv__test_fail_alloc_after(0);
    if (st != RV_OK)
        FAILF("%s%s: baseline gave %s (%s)", op->name, variant, rv_status_name(st), rv_errmsg());
    uint64_t want = op->print(f);
    if (allocs == 0)
        FAILF("%s%s: baseline made no allocation through the engine", op->name, variant);

    for (uint64_t n = 1;; n++) {
        if (n > allocs + 5)
            FAILF("%s%s: still failing at n = %llu", op->name, variant, (unsigned long long)n);
        rv_errmsg_clear();
        rv__test_fail_alloc_after(n);
        st = op->run(f);
        uint64_t done = rv__test_fail_alloc_after(0);
        total_runs++;
        rvt_n_checks++;
        if (st != RV_OK && st != RV_E_NOMEM)
            FAILF("%s%s: failing allocation %llu gave %s (%s)", op->name, variant,
                  (unsigned long long)n, rv_status_name(st), rv_errmsg());
        if (done < n) {
            /* the failure was never reached: a clean, complete run */
            if (st != RV_OK)
                FAILF("%s%s: %s without an injected failure", op->name, variant,
                      rv_status_name(st));
            if (op->print(f) != want)
                FAILF("%s%s: output differs from the baseline", op->name, variant);
            if (done != allocs)
                FAILF("%s%s: %llu allocations, baseline %llu (not deterministic)", op->name,
                      variant, (unsigned long long)done, (unsigned long long)allocs);
            printf("  %s%s: %llu allocations swept\n", op->name, variant,
                   (unsigned long long)allocs);
            return;
        }
        if (st == RV_E_NOMEM) {
            total_nomem++;
            if (!op->cleared(f)) {
                if (op->print == print_made) f->made = NULL; /* may be junk */
                FAILF("%s%s: allocation %llu failed but the outputs were not cleared", op->name,
                      variant, (unsigned long long)n);
            }
            if (!strstr(rv_errmsg(), "memory"))
                FAILF("%s%s: allocation %llu: NOMEM message \"%s\"", op->name, variant,
                      (unsigned long long)n, rv_errmsg());
        } else {
            /* the failure was absorbed: the answer must still be right */
            if (op->print(f) != want)
                FAILF("%s%s: allocation %llu failed, RV_OK returned, but the output is wrong",
                      op->name, variant, (unsigned long long)n);
        }
    }
}

static fixture F;

static void test_oom_create(void) {
    static const operation op = {"rv_cover_create", run_create, print_made, cleared_made};
    sweep(&F, &op, "");
    static const operation big = {"rv_cover_create (big)", run_create_big, print_made,
                                  cleared_made};
    sweep(&F, &big, "");
}

static void test_oom_create_pairs(void) {
    static const operation op = {"rv_cover_create_pairs", run_create_pairs, print_made,
                                 cleared_made};
    sweep(&F, &op, "");
}

static void test_oom_solve(void) {
    static const operation op = {"rv_cover_solve", run_solve, print_solve, cleared_solve};
    static const rv_cover_strategy s[] = {RV_COVER_GREEDY, RV_COVER_EXACT,  RV_COVER_SA,
                                          RV_COVER_GA,     RV_COVER_HYBRID, RV_COVER_LP};
    static const char *names[] = {" greedy", " exact", " sa", " ga", " hybrid", " lp"};
    static const char *partial_names[] = {" greedy partial", " exact partial",  " sa partial",
                                          " ga partial",     " hybrid partial", " lp partial"};
    static const char *free_names[] = {" greedy free", " exact free",  " sa free",
                                       " ga free",     " hybrid free", " lp free"};
    for (int k = 0; k < 6; k++) {
        F.strategy = s[k];
        F.required = RV_COVER_ALL;
        sweep(&F, &op, names[k]);
        F.required = rv_cover_n_coverable(F.p) * 3 / 4;
        sweep(&F, &op, partial_names[k]);
        F.use_free = 1;
        sweep(&F, &op, free_names[k]);
        F.use_free = 0;
    }
}

static void test_oom_lp(void) {
    static const operation op = {"rv_cover_lp", run_lp, print_lp, cleared_lp};
    F.required = RV_COVER_ALL;
    sweep(&F, &op, " full");
    F.required = rv_cover_n_coverable(F.p) * 3 / 4;
    sweep(&F, &op, " partial");
    F.use_free = 1;
    sweep(&F, &op, " partial free");
    F.use_free = 0;
}

static void test_oom_solve_big(void) {
    static const operation op = {"rv_cover_solve (big)", run_solve_big, print_solve, cleared_solve};
    F.strategy = RV_COVER_SA;
    sweep(&F, &op, " sa");
    F.strategy = RV_COVER_EXACT;
    sweep(&F, &op, " exact");
}

static void test_oom_plan_path(void) {
    static const operation op = {"rv_cover_plan_path", run_plan_path, print_path, cleared_solve};
    for (int w = 0; w < 2; w++) {
        F.weighted = w;
        F.objective = RV_PATH_COVERAGE;
        sweep(&F, &op, w ? " coverage weighted" : " coverage");
        F.objective = RV_PATH_ENTROPY;
        sweep(&F, &op, w ? " entropy weighted" : " entropy");
    }
}

static void test_oom_keys(void) {
    static const operation op = {"rv_keys_plan_path", run_keys_path, print_path, cleared_solve};
    for (int w = 0; w < 2; w++) {
        F.weighted = w;
        F.objective = RV_PATH_COVERAGE;
        sweep(&F, &op, w ? " coverage costs" : " coverage");
        F.objective = RV_PATH_ENTROPY;
        sweep(&F, &op, w ? " entropy costs" : " entropy");
    }
    static const operation un = {"rv_keys_unresolved", run_keys_unresolved, print_path,
                                 cleared_nothing};
    sweep(&F, &un, "");
}

static const uint64_t GROUPS[3] = {0, 30, ROWS};

static rv_status run_group_scores(fixture *f) {
    return rv_keys_group_scores(f->codes, ROWS, COLS, GROUPS, 2, f->newly, f->ent);
}

static uint64_t print_group_scores(fixture *f) {
    return fnv(fnv(FNV0, f->newly, COLS * sizeof f->newly[0]), f->ent, sizeof f->ent);
}

static rv_status run_group_refine(fixture *f) {
    return rv_keys_group_refine(f->codes + ROWS, ROWS, GROUPS, 2, f->rows_out, f->off_out,
                                &f->n_out, &f->g_out);
}

static uint64_t print_group_refine(fixture *f) {
    uint64_t h = fnv(FNV0, f->rows_out, f->n_out * sizeof f->rows_out[0]);
    return fnv(h, f->off_out, (f->g_out + 1) * sizeof f->off_out[0]);
}

static rv_status run_count_values(fixture *f) {
    uint64_t keys[ROWS];
    for (size_t i = 0; i < ROWS; i++) /* a spread-out column: the hashed path */
        keys[i] = (uint64_t)f->codes[2 * ROWS + i] * 0x9e3779b97f4a7c15ULL;
    return rv_keys_count_values(keys, NULL, NULL, ROWS, 3, f->keys_out, f->cnt_out, NULL, f->boff,
                                ROWS, &f->n_out);
}

static uint64_t print_count_values(fixture *f) {
    uint64_t h = fnv(FNV0, f->keys_out, f->n_out * sizeof f->keys_out[0]);
    return fnv(fnv(h, f->cnt_out, f->n_out * sizeof f->cnt_out[0]), f->boff, sizeof f->boff);
}

static void test_oom_keys_pieces(void) {
    static const operation sc = {"rv_keys_group_scores", run_group_scores, print_group_scores,
                                 cleared_nothing};
    sweep(&F, &sc, "");
    static const operation rf = {"rv_keys_group_refine", run_group_refine, print_group_refine,
                                 cleared_nothing};
    sweep(&F, &rf, "");
    static const operation cv = {"rv_keys_count_values", run_count_values, print_count_values,
                                 cleared_nothing};
    sweep(&F, &cv, "");
}

static void test_oom_queries(void) {
    static const operation cov = {"rv_cover_covered", run_covered, print_path, cleared_nothing};
    sweep(&F, &cov, "");
    static const operation dis = {"rv_cover_distinct_elements", run_distinct, print_distinct,
                                  cleared_nothing};
    sweep(&F, &dis, "");
}

int main(void) {
    fixture_init(&F);
    if (rv_cover_create(EL, SETS, F.off, F.el, F.cost, &F.p) != RV_OK ||
        rv_cover_create(EL, SETS, F.off, F.el, F.cost_free, &F.pfree) != RV_OK ||
        rv_cover_create(BIG_EL, BIG_SETS, F.big_off, F.big_el, NULL, &F.big) != RV_OK) {
        fprintf(stderr, "fixture: %s\n", rv_errmsg());
        return 1;
    }
    RUN_TEST(test_oom_create);
    RUN_TEST(test_oom_create_pairs);
    RUN_TEST(test_oom_solve);
    RUN_TEST(test_oom_solve_big);
    RUN_TEST(test_oom_lp);
    RUN_TEST(test_oom_plan_path);
    RUN_TEST(test_oom_keys);
    RUN_TEST(test_oom_queries);
    RUN_TEST(test_oom_keys_pieces);
    printf("%ld injected runs, %ld gave RV_E_NOMEM\n", total_runs, total_nomem);
    fixture_free(&F);
    return RV_TEST_SUMMARY();
}
