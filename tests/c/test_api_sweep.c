/*
** The argument sweep of the whole public C API (core.h "NULL" and "Sizes").
**
** Every RV_API function has one entry in CASES below: a valid call (which
** must give the entry's `ok` result), and one line per pointer and per size
** argument.  The driver makes the valid call, then for each pointer argument
** the same call with that pointer NULL, and for each size argument the same
** call with the size 0 and then SIZE_MAX, and checks each result against
** the line:
**   - a function returning rv_status must return the status written there,
**     and for RV_E_INVALID_ARG and RV_E_RANGE rv_errmsg() must name the
**     argument (the NULL one, or the size no array can hold);
**   - a function returning a value must return the value written there (0
**     for a NULL handle, as the headers say).
** A size line may also list pointers that are NULL together with the zero
** size ("arrays may be NULL when n == 0"), which must give the same result.
** Run under ASan/UBSan (-DRV_SANITIZE=address,undefined) and valgrind
** (scripts/valgrind.sh), a SIZE_MAX that slipped through to a loop or a
** memset shows up as an out-of-bounds access even when the status is right.
**
** The list is kept complete by the test itself: it reads the headers
** (include/rowvoi/ *.h, the directory CMake passes as RV_INCLUDE_DIR), and
** fails for an RV_API function without an entry, for a pointer or size_t
** argument of a declaration without a line, and for an entry or line that
** names nothing in the headers.  A new function therefore fails this test
** until it is added here.
*/
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rv_test.h"

#ifndef RV_INCLUDE_DIR
#  error "RV_INCLUDE_DIR (the include/ directory) must be defined by the build"
#endif

/* --------------------------------------------------------------- fixtures */

#define DIM 4

static rv_bm25 *g_bm;       /* 3 documents, ids 0, 1, 2 */
static rv_flat *g_fl;       /* float16 storage, rescore factor 4, ids 10, 11, 12 */
static rv_graph *g_gr;      /* nodes 100 -> 101 -> 102, 3 documents with vectors */
static rv_cover *g_cv;      /* 3 elements, sets {0, 1} and {2} */
static rv_hasher *g_hs;     /* dim 8 */
static rv_encoder *g_enc;   /* the small model of enc_spec */
static rv_idset *g_set;     /* {0, 1} */
static char g_dir[64];      /* a temporary directory */
static char g_bm_path[128]; /* g_bm saved */
static char g_fl_path[128]; /* g_fl saved */
static unsigned char *g_bm_img, *g_fl_img;
static size_t g_bm_img_size, g_fl_img_size;

static const char *const DOCS[] = {"the quick brown fox", "lazy dogs sleep", "quick thinking"};
static const float VECS[3 * DIM] = {1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1};
static const int32_t CODES[3 * 2] = {0, 0, 1, 0, 1, 1}; /* 3 rows, 2 columns */

static rv_bm25 *new_bm25(void) {
    rv_bm25 *ix = NULL;
    size_t lens[3];
    int64_t ids[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++) lens[i] = strlen(DOCS[i]);
    if (rv_bm25_create(NULL, NULL, &ix) || rv_bm25_add(ix, 3, DOCS, lens, ids, NULL, NULL, NULL)) {
        fprintf(stderr, "fixture: %s\n", rv_errmsg());
        exit(2);
    }
    return ix;
}

static rv_flat *new_flat(void) {
    rv_flat_options opt;
    rv_flat_options_init(&opt);
    opt.dim = DIM;
    opt.storage = RV_FLAT_F16;
    opt.rescore_factor = 4;
    rv_flat *ix = NULL;
    int64_t ids[3] = {10, 11, 12};
    if (rv_flat_create(&opt, &ix) || rv_flat_add(ix, 3, VECS, ids, NULL)) {
        fprintf(stderr, "fixture: %s\n", rv_errmsg());
        exit(2);
    }
    return ix;
}

static const int64_t G_NODES[3] = {100, 101, 102};
static const int64_t G_SRC[2] = {100, 101}, G_DST[2] = {101, 102};
static const int64_t G_DOC_ENTITY[3] = {0, 1, 3}; /* node 0, node 1, edge 0 */

static void graph_spec(rv_graph_spec *s) {
    rv_graph_spec_init(s);
    s->n_nodes = 3;
    s->node_ids = G_NODES;
    s->n_edges = 2;
    s->edge_src = G_SRC;
    s->edge_dst = G_DST;
    s->n_docs = 3;
    s->doc_entity = G_DOC_ENTITY;
    s->dim = DIM;
    s->n_vectors = 3;
    s->vectors = VECS;
    s->n_threads = 1;
}

/* A one-layer encoder of hidden 64, 4 heads, ffn 64, vocabulary 4, 4
** positions: zero weights, scales 1/64, LayerNorm gamma 1 -- valid, and
** enough for every argument of encoder.h. */
static int8_t E_W[64 * 192];
static float E_SCALE[192], E_ZERO[192], E_ONE[64];
static rv_encoder_layer E_LAYER;
static const rv_encoder_spec *enc_spec(void) {
    static rv_encoder_spec es;
    for (int i = 0; i < 192; i++) E_SCALE[i] = 1.0f / 64;
    for (int i = 0; i < 64; i++) E_ONE[i] = 1.0f;
    rv_encoder_linear lin = {E_W, E_SCALE, E_ZERO, 0, NULL, NULL};
    E_LAYER.qkv = E_LAYER.out = E_LAYER.up = E_LAYER.down = lin;
    E_LAYER.ln1_gamma = E_LAYER.ln2_gamma = E_ONE;
    E_LAYER.ln1_beta = E_LAYER.ln2_beta = E_ZERO;
    memset(&es, 0, sizeof es);
    es.hidden = 64;
    es.heads = 4;
    es.ffn = 64;
    es.layers = 1;
    es.vocab = 4;
    es.max_positions = 4;
    es.type_vocab = 1;
    es.ln_eps = 1e-12f;
    es.attn_scale = 0.5f;
    es.word = es.position = es.type = E_W;
    es.word_scale = es.position_scale = es.type_scale = E_SCALE;
    es.emb_gamma = E_ONE;
    es.emb_beta = E_ZERO;
    es.layer = &E_LAYER;
    return &es;
}

static void fixtures_make(void) {
    g_bm = new_bm25();
    g_fl = new_flat();
    rv_graph_spec gs;
    graph_spec(&gs);
    uint64_t off[3] = {0, 2, 3};
    uint32_t el[3] = {0, 1, 2};
    rv_hasher_options ho;
    rv_hasher_options_init(&ho);
    ho.dim = 8;
    int64_t set_ids[2] = {0, 1};
    snprintf(g_dir, sizeof g_dir, "/tmp/rv_test_sweep_XXXXXX");
    if (rv_graph_create(&gs, &g_gr) || rv_cover_create(3, 2, off, el, NULL, &g_cv) ||
        rv_hasher_create(&ho, &g_hs) || rv_idset_create(set_ids, 2, &g_set) ||
        rv_encoder_create(enc_spec(), &g_enc) || !mkdtemp(g_dir)) {
        fprintf(stderr, "fixture: %s\n", rv_errmsg());
        exit(2);
    }
    snprintf(g_bm_path, sizeof g_bm_path, "%s/index.rvbm", g_dir);
    snprintf(g_fl_path, sizeof g_fl_path, "%s/index.rvflat", g_dir);
    rv_bm25_save_buffer(g_bm, NULL, 0, &g_bm_img_size);
    rv_flat_save_buffer(g_fl, NULL, 0, &g_fl_img_size);
    g_bm_img = malloc(g_bm_img_size);
    g_fl_img = malloc(g_fl_img_size);
    if (!g_bm_img || !g_fl_img || rv_bm25_save(g_bm, g_bm_path) || rv_flat_save(g_fl, g_fl_path) ||
        rv_bm25_save_buffer(g_bm, g_bm_img, g_bm_img_size, &g_bm_img_size) ||
        rv_flat_save_buffer(g_fl, g_fl_img, g_fl_img_size, &g_fl_img_size)) {
        fprintf(stderr, "fixture: %s\n", rv_errmsg());
        exit(2);
    }
}

static void fixtures_free(void) {
    rv_bm25_free(g_bm);
    rv_flat_free(g_fl);
    rv_graph_free(g_gr);
    rv_cover_free(g_cv);
    rv_hasher_free(g_hs);
    rv_encoder_free(g_enc);
    rv_idset_free(g_set);
    free(g_bm_img);
    free(g_fl_img);
    unlink(g_bm_path);
    unlink(g_fl_path);
    /* saves that failed leave nothing; the sweep's own saves reuse these
    ** two paths */
    rmdir(g_dir);
}

/* ------------------------------------------------------ one call's state */

#define MAXP 16
#define MAXZ 8

/* Arguments of one call: p[] the pointers and z[] the sizes, in the order
** of the entry's lines; storage they point into; objects the call may own. */
typedef struct sw {
    void *p[MAXP];
    size_t z[MAXZ];
    /* objects made for this call (freed after it unless the call freed them) */
    rv_bm25 *own_bm;
    rv_flat *own_fl;
    rv_idset *own_set;
    rv_cover *own_cv;
    rv_graph *own_gr;
    rv_hasher *own_hs;
    rv_encoder *own_enc;
    /* handles a constructor under test writes */
    rv_bm25 *bm_out;
    rv_flat *fl_out;
    rv_idset *set_out;
    rv_cover *cv_out;
    rv_graph *gr_out;
    rv_hasher *hs_out;
    rv_encoder *enc_out;
    /* storage */
    int64_t i64a[64], i64b[64], i64c[64], i64d[64];
    int32_t i32a[64];
    uint32_t u32a[64], u32b[64];
    uint64_t u64a[64], u64b[64], u64c[64], u64d[64], u64e[64];
    uint16_t u16a[8];
    uint8_t u8a[64];
    float f32a[256], f32b[256];
    double f64a[64], f64b[64], f64c[64];
    size_t za[64];
    size_t n1, n2;
    uint64_t x1, x2;
    uint32_t w1;
    int in1;
    float fl1;
    double d1;
    char text[64], buf[512];
    const char *cp;
    const char *texts[4];
    rv_rng rng;
    rv_bm25_params bp;
    rv_analyzer_options ao;
    rv_bm25_info binfo;
    rv_bm25_search_info bsi;
    rv_bm25_explain_row rows[16];
    rv_flat_options fo;
    rv_flat_search_params fsp;
    rv_graph_spec gs;
    rv_graph_walk gw;
    rv_graph_facts_params gf;
    rv_cover_options co;
    rv_cover_info ci;
    rv_cover_lp_result lpr;
    rv_hnsw_expect he;
    rv_hnsw_info hi;
    int fd;
    rv_belief_options bo;
    rv_hasher_options ho;
    rv_encoder_spec es;
    rv_records rt;
    rv_records_search_params rsp;
    rv_records_blend_params rbp;
    rv_records_verdict rvd;
    unsigned char image[1 << 16];
} sw;

static void sw_release(sw *s) {
    rv_bm25_free(s->own_bm);
    rv_flat_free(s->own_fl);
    rv_idset_free(s->own_set);
    rv_cover_free(s->own_cv);
    rv_graph_free(s->own_gr);
    rv_hasher_free(s->own_hs);
    rv_bm25_free(s->bm_out);
    rv_flat_free(s->fl_out);
    rv_idset_free(s->set_out);
    rv_cover_free(s->cv_out);
    rv_graph_free(s->gr_out);
    rv_hasher_free(s->hs_out);
    rv_encoder_free(s->own_enc);
    rv_encoder_free(s->enc_out);
}

/* --------------------------------------------------------------- entries */

/* One argument line: a pointer ('p') or a size ('z'); for a pointer, `a` is
** the result with it NULL; for a size, `a` the result with 0 and `b` with
** SIZE_MAX.  zero_nulls: pointer names (space-separated) also NULL in the
** zero-size call.  msg: what rv_errmsg() must contain for RV_E_INVALID_ARG
** and RV_E_RANGE results (NULL: the name, after any "->"; "": no check). */
typedef struct sw_arg {
    const char *name; /* as in the header; "spec->n_nodes" for a struct field */
    char kind;
    int64_t a, b;
    const char *zero_nulls;
    const char *msg;
} sw_arg;

typedef struct sw_case {
    const char *fn;
    int status; /* 1: returns rv_status */
    int64_t ok; /* result of the valid call */
    void (*init)(sw *);
    int64_t (*call)(sw *);
    sw_arg args[18];
} sw_case;

#define OK  RV_OK
#define INV RV_E_INVALID_ARG
#define RNG RV_E_RANGE
#define SHP RV_E_SHAPE

#define PTR(name, on_null)               {name, 'p', on_null, 0, NULL, NULL}
#define PTRM(name, on_null, msg)         {name, 'p', on_null, 0, NULL, msg}
#define SZ(name, on_zero, on_max)        {name, 'z', on_zero, on_max, NULL, NULL}
#define SZN(name, on_zero, on_max, null) {name, 'z', on_zero, on_max, null, NULL}
#define SZM(name, on_zero, on_max, msg)  {name, 'z', on_zero, on_max, NULL, msg}

#define P(T, i) ((T)s->p[i])
#define Z(i)    (s->z[i])

/* Status functions return their status; constructors free what they made. */
#define FREE_IF_OK(st, fn, h)                                                                      \
    do {                                                                                           \
        if ((st) == RV_OK && (h)) {                                                                \
            fn(*(h));                                                                              \
            *(h) = NULL;                                                                           \
        }                                                                                          \
    } while (0)

/* ---- core.h */

static void init_none(sw *s) {
    (void)s;
}
static int64_t call_status_name(sw *s) {
    (void)s;
    return strcmp(rv_status_name(RV_E_RANGE), "RV_E_RANGE") == 0 &&
           strcmp(rv_status_name((rv_status)12345), "RV_E_UNKNOWN") == 0;
}
static int64_t call_errmsg(sw *s) {
    (void)s;
    rv_flat_create(NULL, NULL);
    return strstr(rv_errmsg(), "must not be NULL") != NULL;
}
static int64_t call_errmsg_clear(sw *s) {
    (void)s;
    rv_flat_create(NULL, NULL);
    rv_errmsg_clear();
    return rv_errmsg()[0] == '\0';
}
static int64_t call_version(sw *s) {
    (void)s;
    return strcmp(rv_version(), RV_VERSION_STRING) == 0;
}
static int64_t call_version_number(sw *s) {
    (void)s;
    return rv_version_number() == RV_VERSION_NUMBER;
}

static void init_rng(sw *s) {
    rv_rng_seed(&s->rng, 42);
    s->p[0] = &s->rng;
}
static int64_t call_rng_seed(sw *s) {
    rv_rng_seed(P(rv_rng *, 0), 7);
    return P(rv_rng *, 0) ? (s->rng.s[0] | s->rng.s[1] | s->rng.s[2] | s->rng.s[3]) != 0 : -1;
}
static int64_t call_rng_seed_stream(sw *s) {
    rv_rng_seed_stream(P(rv_rng *, 0), 7, 3);
    return P(rv_rng *, 0) ? (s->rng.s[0] | s->rng.s[1] | s->rng.s[2] | s->rng.s[3]) != 0 : -1;
}
static int64_t call_rng_next(sw *s) {
    return rv_rng_next(P(rv_rng *, 0)) != 0; /* NULL: 0 */
}
static int64_t call_rng_below(sw *s) {
    uint64_t r = rv_rng_below(P(rv_rng *, 0), 1000);
    return P(rv_rng *, 0) ? r < 1000 : (int64_t)r; /* NULL: 0 */
}
static int64_t call_rng_uniform(sw *s) {
    double u = rv_rng_uniform(P(rv_rng *, 0));
    return P(rv_rng *, 0) ? u >= 0 && u < 1 : (u == 0.0 ? 0 : 99);
}

static void init_idset_create(sw *s) {
    s->i64a[0] = 5;
    s->i64a[1] = 3;
    s->i64a[2] = 5;
    s->p[0] = s->i64a;
    s->z[0] = 3;
    s->p[1] = &s->set_out;
}
static int64_t call_idset_create(sw *s) {
    rv_status st = rv_idset_create(P(const int64_t *, 0), Z(0), P(rv_idset **, 1));
    FREE_IF_OK(st, rv_idset_free, P(rv_idset **, 1));
    return st;
}
static void init_idset_free(sw *s) {
    int64_t ids[1] = {4};
    rv_idset_create(ids, 1, &s->own_set);
    s->p[0] = s->own_set;
}
static int64_t call_idset_free(sw *s) {
    rv_idset_free(P(rv_idset *, 0));
    if (P(rv_idset *, 0)) s->own_set = NULL;
    return 0;
}
static void init_set(sw *s) {
    s->p[0] = g_set;
}
static int64_t call_idset_size(sw *s) {
    return (int64_t)rv_idset_size(P(const rv_idset *, 0));
}
static int64_t call_idset_contains(sw *s) {
    return rv_idset_contains(P(const rv_idset *, 0), 1);
}
static void init_idset_ids(sw *s) {
    s->p[0] = g_set;
    s->p[1] = s->i64a;
    s->z[0] = 8;
    s->p[2] = &s->n1;
}
static int64_t call_idset_ids(sw *s) {
    return rv_idset_ids(P(const rv_idset *, 0), P(int64_t *, 1), Z(0), P(size_t *, 2));
}

static void init_bitset(sw *s) {
    s->u64a[0] = 0xFF;
    s->u64a[1] = 0x3;
    s->u64b[0] = 0x0F;
    s->u64b[1] = 0x1;
    s->p[0] = s->u64a;
    s->p[1] = s->u64b;
    s->z[0] = 2;
}
static int64_t call_bitset_count(sw *s) {
    return (int64_t)rv_bitset_count(P(const uint64_t *, 0), Z(0)); /* 8 + 2 */
}
static int64_t call_bitset_count_andnot(sw *s) {
    return (int64_t)rv_bitset_count_andnot(P(const uint64_t *, 0), P(const uint64_t *, 1),
                                           Z(0)); /* 4 + 1 */
}
static int64_t call_bitset_count_and(sw *s) {
    return (int64_t)rv_bitset_count_and(P(const uint64_t *, 0), P(const uint64_t *, 1),
                                        Z(0)); /* 4 + 1 */
}

/* ---- cover.h */

static void init_cover_create(sw *s) {
    s->z[0] = 3; /* n_elements */
    s->z[1] = 2; /* n_sets */
    s->u64a[0] = 0;
    s->u64a[1] = 2;
    s->u64a[2] = 3;
    s->u32a[0] = 0;
    s->u32a[1] = 1;
    s->u32a[2] = 2;
    s->f64a[0] = 1;
    s->f64a[1] = 2;
    s->p[0] = s->u64a;
    s->p[1] = s->u32a;
    s->p[2] = s->f64a;
    s->p[3] = &s->cv_out;
}
static int64_t call_cover_create(sw *s) {
    rv_status st = rv_cover_create(Z(0), Z(1), P(const uint64_t *, 0), P(const uint32_t *, 1),
                                   P(const double *, 2), P(rv_cover **, 3));
    FREE_IF_OK(st, rv_cover_free, P(rv_cover **, 3));
    return st;
}
static void init_codes(sw *s) {
    memcpy(s->i32a, CODES, sizeof CODES);
}
static void init_cover_create_pairs(sw *s) {
    init_codes(s);
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->z[1] = 2;
    s->f64a[0] = s->f64a[1] = 1;
    s->p[1] = s->f64a;
    s->p[2] = &s->cv_out;
}
static int64_t call_cover_create_pairs(sw *s) {
    rv_status st = rv_cover_create_pairs(P(const int32_t *, 0), Z(0), Z(1), P(const double *, 1), 0,
                                         P(rv_cover **, 2));
    FREE_IF_OK(st, rv_cover_free, P(rv_cover **, 2));
    return st;
}
static void init_cover_free(sw *s) {
    uint64_t off[2] = {0, 1};
    uint32_t el[1] = {0};
    rv_cover_create(1, 1, off, el, NULL, &s->own_cv);
    s->p[0] = s->own_cv;
}
static int64_t call_cover_free(sw *s) {
    rv_cover_free(P(rv_cover *, 0));
    if (P(rv_cover *, 0)) s->own_cv = NULL;
    return 0;
}
static void init_cover(sw *s) {
    s->p[0] = g_cv;
}
static int64_t call_cover_n_sets(sw *s) {
    return (int64_t)rv_cover_n_sets(P(const rv_cover *, 0));
}
static int64_t call_cover_n_elements(sw *s) {
    return (int64_t)rv_cover_n_elements(P(const rv_cover *, 0));
}
static int64_t call_cover_n_coverable(sw *s) {
    return (int64_t)rv_cover_n_coverable(P(const rv_cover *, 0));
}
static void init_cover_element_counts(sw *s) {
    s->p[0] = g_cv;
    s->p[1] = s->u32a;
}
static int64_t call_cover_element_counts(sw *s) {
    return rv_cover_element_counts(P(const rv_cover *, 0), P(uint32_t *, 1));
}
static void init_cover_covered(sw *s) {
    s->p[0] = g_cv;
    s->u32a[0] = 0;
    s->p[1] = s->u32a;
    s->z[0] = 1;
    s->p[2] = s->u8a;
    s->p[3] = &s->x1;
}
static int64_t call_cover_covered(sw *s) {
    return rv_cover_covered(P(const rv_cover *, 0), P(const uint32_t *, 1), Z(0), P(uint8_t *, 2),
                            P(uint64_t *, 3));
}
static void init_cover_distinct(sw *s) {
    s->p[0] = g_cv;
    s->p[1] = s->u64a;
    s->p[2] = s->u64b;
    s->z[0] = 8;
    s->p[3] = &s->n1;
}
static int64_t call_cover_distinct(sw *s) {
    return rv_cover_distinct_elements(P(const rv_cover *, 0), P(uint64_t *, 1), P(uint64_t *, 2),
                                      Z(0), P(size_t *, 3));
}
static void init_cover_options(sw *s) {
    s->p[0] = &s->co;
}
static int64_t call_cover_options_init(sw *s) {
    rv_cover_options_init(P(rv_cover_options *, 0));
    return P(rv_cover_options *, 0) ? s->co.n_required == RV_COVER_ALL : -1;
}
static void init_cover_solve(sw *s) {
    rv_cover_options_init(&s->co);
    s->p[0] = g_cv;
    s->p[1] = &s->co;
    s->p[2] = s->u32a;
    s->z[0] = 8;
    s->p[3] = &s->n1;
    s->p[4] = &s->ci;
}
static int64_t call_cover_solve(sw *s) {
    return rv_cover_solve(P(const rv_cover *, 0), P(const rv_cover_options *, 1), P(uint32_t *, 2),
                          Z(0), P(size_t *, 3), P(rv_cover_info *, 4));
}
static void init_bm25_load_fd(sw *s) {
    s->fd = open(g_bm_path, O_RDONLY);
    s->p[0] = "bm25 index";
    s->p[1] = &s->bm_out;
}
static int64_t call_bm25_load_fd(sw *s) {
    rv_status st = rv_bm25_load_fd(s->fd, P(const char *, 0), P(rv_bm25 **, 1));
    FREE_IF_OK(st, rv_bm25_free, P(rv_bm25 **, 1));
    if (s->fd >= 0) close(s->fd);
    return st;
}
static void init_flat_load_fd(sw *s) {
    s->fd = open(g_fl_path, O_RDONLY);
    s->p[0] = "flat index";
    s->p[1] = &s->fl_out;
}
static int64_t call_flat_load_fd(sw *s) {
    rv_status st = rv_flat_load_fd(s->fd, P(const char *, 0), P(rv_flat **, 1));
    FREE_IF_OK(st, rv_flat_free, P(rv_flat **, 1));
    if (s->fd >= 0) close(s->fd);
    return st;
}
static void init_hnsw_expect_init(sw *s) {
    memset(&s->he, 0xff, sizeof s->he);
    s->p[0] = &s->he;
}
static int64_t call_hnsw_expect_init(sw *s) {
    rv_hnsw_expect_init(P(rv_hnsw_expect *, 0));
    return P(rv_hnsw_expect *, 0) ? s->he.dim == 0 && s->he.max_elements == 0 : -1;
}
/* an empty hnswlib graph (1-d vectors, M 2, capacity 4), as hnswlib writes one */
static void put_u64(unsigned char *p, uint64_t v) {
    memcpy(p, &v, 8);
}
static void init_hnsw_check(sw *s) {
    unsigned char *h = s->image;
    memset(h, 0, RV_HNSW_HEADER_SIZE);
    const uint64_t m = 2, dim = 1;
    put_u64(h + 8, 4);                        /* capacity */
    put_u64(h + 24, 4 + 8 * m + 4 * dim + 8); /* bytes per element */
    put_u64(h + 32, 4 + 8 * m + 4 * dim);     /* label offset */
    put_u64(h + 40, 4 + 8 * m);               /* vector offset */
    int32_t top = -1;
    uint32_t entry = UINT32_MAX;
    memcpy(h + 48, &top, 4);
    memcpy(h + 52, &entry, 4);
    put_u64(h + 56, m);
    put_u64(h + 64, 2 * m);
    put_u64(h + 72, m);
    double mult = 1.0 / log((double)m);
    memcpy(h + 80, &mult, 8);
    put_u64(h + 88, 10); /* ef_construction */
    rv_hnsw_expect_init(&s->he);
    s->he.dim = 1, s->he.M = 2, s->he.ef_construction = 10, s->he.max_elements = 4;
    s->p[0] = s->image;
    s->z[0] = RV_HNSW_HEADER_SIZE;
    s->p[1] = &s->he;
    s->p[2] = &s->hi;
}
static int64_t call_hnsw_check(sw *s) {
    return rv_hnsw_check(P(const void *, 0), Z(0), P(const rv_hnsw_expect *, 1),
                         P(rv_hnsw_info *, 2));
}
static void init_cover_lp(sw *s) {
    s->p[0] = g_cv;
    s->p[1] = s->f64a;
    s->z[0] = 8;
    s->p[2] = &s->lpr;
}
static int64_t call_cover_lp(sw *s) {
    return rv_cover_lp(P(const rv_cover *, 0), RV_COVER_ALL, 0.05, 0, P(double *, 1), Z(0),
                       P(rv_cover_lp_result *, 2));
}
static void init_cover_plan_path(sw *s) {
    s->p[0] = g_cv;
    s->f64a[0] = s->f64a[1] = s->f64a[2] = 1;
    s->p[1] = s->f64a;
    s->p[2] = s->u32a;
    s->p[3] = s->u64a;
    s->p[4] = s->f64b;
    s->z[0] = 8;
    s->p[5] = &s->n1;
}
static int64_t call_cover_plan_path(sw *s) {
    return rv_cover_plan_path(P(const rv_cover *, 0), RV_PATH_COVERAGE, P(const double *, 1),
                              P(uint32_t *, 2), P(uint64_t *, 3), P(double *, 4), Z(0),
                              P(size_t *, 5));
}
static void init_keys_plan_path(sw *s) {
    init_codes(s);
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->z[1] = 2;
    s->f64a[0] = s->f64a[1] = 1;
    s->p[1] = s->f64a;
    s->p[2] = s->text; /* progress_ctx: any pointer */
    s->p[3] = s->u32a;
    s->p[4] = s->u64a;
    s->p[5] = s->f64b;
    s->z[2] = 8;
    s->p[6] = &s->n1;
    s->p[7] = &s->x1;
}
static int64_t call_keys_plan_path(sw *s) {
    return rv_keys_plan_path(P(const int32_t *, 0), Z(0), Z(1), P(const double *, 1),
                             RV_PATH_COVERAGE, 0, NULL, P(void *, 2), P(uint32_t *, 3),
                             P(uint64_t *, 4), P(double *, 5), Z(2), P(size_t *, 6),
                             P(uint64_t *, 7));
}
static void init_keys_unresolved(sw *s) {
    init_codes(s);
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->z[1] = 2;
    s->u32a[0] = 0;
    s->p[1] = s->u32a;
    s->z[2] = 1;
    s->p[2] = &s->x1;
}
static int64_t call_keys_unresolved(sw *s) {
    return rv_keys_unresolved(P(const int32_t *, 0), Z(0), Z(1), P(const uint32_t *, 1), Z(2),
                              P(uint64_t *, 2));
}
static void init_keys_count_values(sw *s) {
    s->u64a[0] = 5;
    s->u64a[1] = 7;
    s->u64a[2] = 5;
    s->u64b[0] = s->u64b[1] = s->u64b[2] = 1;
    s->f64a[0] = 1;
    s->f64a[1] = 2;
    s->f64a[2] = 3;
    s->p[0] = s->u64a;
    s->p[1] = s->u64b;
    s->p[2] = s->f64a;
    s->z[0] = 3;
    s->p[3] = s->u64c;
    s->p[4] = s->u64d;
    s->p[5] = s->f64b;
    s->p[6] = s->u64e;
    s->z[1] = 3;
    s->p[7] = &s->n1;
}
static int64_t call_keys_count_values(sw *s) {
    return rv_keys_count_values(P(const uint64_t *, 0), P(const uint64_t *, 1),
                                P(const double *, 2), Z(0), 2, P(uint64_t *, 3), P(uint64_t *, 4),
                                P(double *, 5), P(uint64_t *, 6), Z(1), P(size_t *, 7));
}
static void init_keys_group_scores(sw *s) {
    init_codes(s);
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->z[1] = 2;
    s->u64a[0] = 0;
    s->u64a[1] = 3;
    s->p[1] = s->u64a;
    s->z[2] = 1;
    s->p[2] = s->u64b;
    s->p[3] = s->f64a;
}
static int64_t call_keys_group_scores(sw *s) {
    return rv_keys_group_scores(P(const int32_t *, 0), Z(0), Z(1), P(const uint64_t *, 1), Z(2),
                                P(uint64_t *, 2), P(double *, 3));
}
static void init_keys_group_refine(sw *s) {
    init_codes(s);
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->u64a[0] = 0;
    s->u64a[1] = 3;
    s->p[1] = s->u64a;
    s->z[1] = 1;
    s->p[2] = s->u32a;
    s->p[3] = s->u64b;
    s->p[4] = &s->n1;
    s->p[5] = &s->n2;
}
static int64_t call_keys_group_refine(sw *s) {
    return rv_keys_group_refine(P(const int32_t *, 0), Z(0), P(const uint64_t *, 1), Z(1),
                                P(uint32_t *, 2), P(uint64_t *, 3), P(size_t *, 4), P(size_t *, 5));
}

/* ---- text.h */

static void init_analyzer_options(sw *s) {
    rv_analyzer_options_init(&s->ao);
    s->p[0] = &s->ao;
}
static int64_t call_analyzer_options_init(sw *s) {
    rv_analyzer_options_init(P(rv_analyzer_options *, 0));
    return P(rv_analyzer_options *, 0) ? (int64_t)s->ao.max_token_len : -1;
}
static int64_t call_analyzer_options_check(sw *s) {
    return rv_analyzer_options_check(P(const rv_analyzer_options *, 0));
}
static void init_analyze(sw *s) {
    rv_analyzer_options_init(&s->ao);
    strcpy(s->text, "Quick brown foxes");
    s->p[0] = &s->ao;
    s->p[1] = s->text;
    s->z[0] = strlen(s->text);
    s->p[2] = s->buf;
    s->z[1] = sizeof s->buf;
    s->p[3] = s->za;
    s->z[2] = 64;
    s->p[4] = &s->n1;
    s->p[5] = &s->n2;
}
static int64_t call_analyze(sw *s) {
    return rv_analyze(P(const rv_analyzer_options *, 0), P(const char *, 1), Z(0), P(char *, 2),
                      Z(1), P(size_t *, 3), Z(2), P(size_t *, 4), P(size_t *, 5));
}
static void init_stem(sw *s) {
    strcpy(s->text, "running");
    s->p[0] = s->text;
    s->z[0] = 7;
    s->p[1] = s->buf;
    s->z[1] = 16;
    s->p[2] = &s->n1;
}
static int64_t call_stem(sw *s) {
    return rv_stem_english(P(const char *, 0), Z(0), P(char *, 1), Z(1), P(size_t *, 2));
}
static void init_is_stopword(sw *s) {
    strcpy(s->text, "the");
    s->p[0] = s->text;
    s->z[0] = 3;
}
static int64_t call_is_stopword(sw *s) {
    return rv_is_stopword(P(const char *, 0), Z(0));
}
static int64_t call_stopword_count(sw *s) {
    (void)s;
    return rv_stopword_count() > 100;
}
static void init_stopword(sw *s) {
    s->z[0] = 0;
}
static int64_t call_stopword(sw *s) {
    return rv_stopword(Z(0)) != NULL;
}
static int64_t call_unicode_version(sw *s) {
    (void)s;
    return rv_unicode_version()[0] != '\0';
}

/* ---- bm25.h */

static void init_bm25_params(sw *s) {
    rv_bm25_params_init(&s->bp);
    s->p[0] = &s->bp;
}
static int64_t call_bm25_params_init(sw *s) {
    rv_bm25_params_init(P(rv_bm25_params *, 0));
    return P(rv_bm25_params *, 0) ? s->bp.k1 == 1.2 : -1;
}
static int64_t call_bm25_params_check(sw *s) {
    return rv_bm25_params_check(P(const rv_bm25_params *, 0));
}
static void init_bm25_create(sw *s) {
    rv_analyzer_options_init(&s->ao);
    rv_bm25_params_init(&s->bp);
    s->p[0] = &s->ao;
    s->p[1] = &s->bp;
    s->p[2] = &s->bm_out;
}
static int64_t call_bm25_create(sw *s) {
    rv_status st = rv_bm25_create(P(const rv_analyzer_options *, 0), P(const rv_bm25_params *, 1),
                                  P(rv_bm25 **, 2));
    FREE_IF_OK(st, rv_bm25_free, P(rv_bm25 **, 2));
    return st;
}
static void init_bm25_own(sw *s) {
    s->own_bm = new_bm25();
    s->p[0] = s->own_bm;
}
static int64_t call_bm25_free(sw *s) {
    rv_bm25_free(P(rv_bm25 *, 0));
    if (P(rv_bm25 *, 0)) s->own_bm = NULL;
    return 0;
}
static void init_bm25_add(sw *s) {
    init_bm25_own(s);
    s->z[0] = 2;
    s->texts[0] = "alpha beta";
    s->texts[1] = "gamma";
    s->za[0] = 10;
    s->za[1] = 5;
    s->i64a[0] = 20;
    s->i64a[1] = 21;
    s->p[1] = (void *)s->texts;
    s->p[2] = s->za;
    s->p[3] = s->i64a;
    s->p[4] = s->text;
    s->p[5] = s->i64b;
}
static int64_t call_bm25_add(sw *s) {
    return rv_bm25_add(P(rv_bm25 *, 0), Z(0), P(const char *const *, 1), P(const size_t *, 2),
                       P(const int64_t *, 3), NULL, P(void *, 4), P(int64_t *, 5));
}
static void init_bm25_delete(sw *s) {
    init_bm25_own(s);
    s->i64a[0] = 1;
    s->p[1] = s->i64a;
    s->z[0] = 1;
    s->p[2] = &s->n1;
}
static int64_t call_bm25_delete(sw *s) {
    return rv_bm25_delete(P(rv_bm25 *, 0), P(const int64_t *, 1), Z(0), P(size_t *, 2));
}
static int64_t call_bm25_compact(sw *s) {
    return rv_bm25_compact(P(rv_bm25 *, 0));
}
static void init_bm25_set_params(sw *s) {
    init_bm25_own(s);
    rv_bm25_params_init(&s->bp);
    s->bp.k1 = 0.9;
    s->p[1] = &s->bp;
}
static int64_t call_bm25_set_params(sw *s) {
    return rv_bm25_set_params(P(rv_bm25 *, 0), P(const rv_bm25_params *, 1));
}
/* the index's own statistics given as collection statistics: valid */
static void init_bm25_collection(sw *s) {
    init_bm25_own(s);
    rv_bm25_get_info(s->own_bm, &s->binfo);
    for (uint32_t t = 0; t < s->binfo.n_terms && t < 64; t++)
        rv_bm25_doc_freq(s->own_bm, t, &s->u64a[t]);
    s->x1 = s->binfo.n_live;
    s->x2 = s->binfo.total_len;
    s->p[1] = s->u64a;
    s->z[0] = s->binfo.n_terms;
}
static int64_t call_bm25_collection(sw *s) {
    return rv_bm25_set_collection_stats(P(rv_bm25 *, 0), s->x1, s->x2, P(const uint64_t *, 1),
                                        Z(0));
}
static void init_bm25_get(sw *s) {
    s->p[0] = g_bm;
}
/* get_params / get_analyzer / get_info: p[1] only says whether the output
** is NULL; the call passes a pointer of the right type */
static void init_bm25_get2(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = s->buf;
}
static int64_t call_bm25_get_params2(sw *s) {
    return rv_bm25_get_params(P(const rv_bm25 *, 0), P(rv_bm25_params *, 1) ? &s->bp : NULL);
}
static int64_t call_bm25_get_analyzer(sw *s) {
    return rv_bm25_get_analyzer(P(const rv_bm25 *, 0), P(void *, 1) ? &s->ao : NULL);
}
static int64_t call_bm25_get_info(sw *s) {
    return rv_bm25_get_info(P(const rv_bm25 *, 0), P(void *, 1) ? &s->binfo : NULL);
}
static void init_bm25_search(sw *s) {
    s->p[0] = g_bm;
    strcpy(s->text, "quick");
    s->p[1] = s->text;
    s->z[0] = 5;
    s->z[1] = 4;
    s->p[2] = g_set;
    s->p[3] = s->i64a;
    s->p[4] = s->f32a;
    s->p[5] = &s->n1;
    s->p[6] = &s->bsi;
}
static int64_t call_bm25_search(sw *s) {
    return rv_bm25_search(P(const rv_bm25 *, 0), P(const char *, 1), Z(0), Z(1), 0,
                          P(const rv_idset *, 2), P(int64_t *, 3), P(float *, 4), P(size_t *, 5),
                          P(rv_bm25_search_info *, 6));
}
static void init_bm25_search_terms(sw *s) {
    s->p[0] = g_bm;
    s->u32a[0] = 0;
    s->u32a[1] = 1;
    s->p[1] = s->u32a;
    s->z[0] = 2;
    s->z[1] = 4;
    s->p[2] = g_set;
    s->p[3] = s->i64a;
    s->p[4] = s->f32a;
    s->p[5] = &s->n1;
    s->p[6] = &s->bsi;
}
static int64_t call_bm25_search_terms(sw *s) {
    return rv_bm25_search_terms(P(const rv_bm25 *, 0), P(const uint32_t *, 1), Z(0), Z(1), 0,
                                P(const rv_idset *, 2), P(int64_t *, 3), P(float *, 4),
                                P(size_t *, 5), P(rv_bm25_search_info *, 6));
}
static void init_bm25_search_batch(sw *s) {
    s->p[0] = g_bm;
    s->z[0] = 2;
    s->texts[0] = "quick fox";
    s->texts[1] = "sleep";
    s->za[0] = 9;
    s->za[1] = 5;
    s->p[1] = (void *)s->texts;
    s->p[2] = s->za;
    s->z[1] = 3;
    s->p[3] = g_set;
    s->p[4] = s->text;
    s->p[5] = s->i64a;
    s->p[6] = s->f32a;
    s->p[7] = s->u32a;
}
static int64_t call_bm25_search_batch(sw *s) {
    return rv_bm25_search_batch(P(const rv_bm25 *, 0), Z(0), P(const char *const *, 1),
                                P(const size_t *, 2), Z(1), 0, P(const rv_idset *, 3), 1, NULL,
                                P(void *, 4), P(int64_t *, 5), P(float *, 6), P(uint32_t *, 7));
}
static void init_bm25_explain(sw *s) {
    s->p[0] = g_bm;
    strcpy(s->text, "quick fox");
    s->p[1] = s->text;
    s->z[0] = 9;
    s->p[2] = s->rows;
    s->z[1] = 16;
    s->p[3] = &s->n1;
    s->p[4] = &s->fl1;
    s->p[5] = &s->w1;
}
static int64_t call_bm25_explain(sw *s) {
    return rv_bm25_explain(P(const rv_bm25 *, 0), P(const char *, 1), Z(0), 0,
                           P(rv_bm25_explain_row *, 2), Z(1), P(size_t *, 3), P(float *, 4),
                           P(uint32_t *, 5));
}
static void init_bm25_lookup(sw *s) {
    s->p[0] = g_bm;
    strcpy(s->text, "quick");
    s->p[1] = s->text;
    s->z[0] = 5;
    s->p[2] = &s->w1;
    s->p[3] = &s->in1;
}
static int64_t call_bm25_lookup(sw *s) {
    return rv_bm25_lookup(P(const rv_bm25 *, 0), P(const char *, 1), Z(0), P(uint32_t *, 2),
                          P(int *, 3));
}
static void init_bm25_term(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = &s->cp;
    s->p[2] = &s->n1;
}
static int64_t call_bm25_term(sw *s) {
    return rv_bm25_term(P(const rv_bm25 *, 0), 0, P(const char **, 1), P(size_t *, 2));
}
static void init_bm25_doc_freq(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = &s->x1;
}
static int64_t call_bm25_doc_freq(sw *s) {
    return rv_bm25_doc_freq(P(const rv_bm25 *, 0), 0, P(uint64_t *, 1));
}
static void init_bm25_doc(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = &s->w1;
    s->p[2] = &s->in1;
}
static int64_t call_bm25_doc(sw *s) {
    return rv_bm25_doc(P(const rv_bm25 *, 0), 1, P(uint32_t *, 1), P(int *, 2));
}
static int64_t call_bm25_contains(sw *s) {
    return rv_bm25_contains(P(const rv_bm25 *, 0), 2);
}
static void init_bm25_ids(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = s->i64a;
    s->z[0] = 8;
    s->p[2] = &s->n1;
}
static int64_t call_bm25_ids(sw *s) {
    return rv_bm25_ids(P(const rv_bm25 *, 0), P(int64_t *, 1), Z(0), P(size_t *, 2));
}
static void init_bm25_save(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = g_bm_path;
}
static int64_t call_bm25_save(sw *s) {
    return rv_bm25_save(P(const rv_bm25 *, 0), P(const char *, 1));
}
static int64_t call_bm25_save_mode(sw *s) {
    return rv_bm25_save_mode(P(const rv_bm25 *, 0), P(const char *, 1), 0600);
}
static void init_bm25_load(sw *s) {
    s->p[0] = g_bm_path;
    s->p[1] = &s->bm_out;
}
static int64_t call_bm25_load(sw *s) {
    rv_status st = rv_bm25_load(P(const char *, 0), P(rv_bm25 **, 1));
    FREE_IF_OK(st, rv_bm25_free, P(rv_bm25 **, 1));
    return st;
}
static void init_bm25_save_buffer(sw *s) {
    s->p[0] = g_bm;
    s->p[1] = s->image;
    s->z[0] = sizeof s->image;
    s->p[2] = &s->n1;
}
static int64_t call_bm25_save_buffer(sw *s) {
    return rv_bm25_save_buffer(P(const rv_bm25 *, 0), P(void *, 1), Z(0), P(size_t *, 2));
}
static void init_bm25_load_buffer(sw *s) {
    s->p[0] = g_bm_img;
    s->z[0] = g_bm_img_size;
    s->p[1] = &s->bm_out;
}
static int64_t call_bm25_load_buffer(sw *s) {
    rv_status st = rv_bm25_load_buffer(P(const void *, 0), Z(0), P(rv_bm25 **, 1));
    FREE_IF_OK(st, rv_bm25_free, P(rv_bm25 **, 1));
    return st;
}

/* ---- belief.h */

static void init_belief_entropy(sw *s) {
    s->f64a[0] = s->f64a[1] = 1;
    s->p[0] = s->f64a;
    s->z[0] = 2;
    s->p[1] = &s->d1;
}
static int64_t call_belief_entropy(sw *s) {
    return rv_belief_entropy(P(const double *, 0), Z(0), P(double *, 1));
}
static void init_belief_filter(sw *s) {
    s->i32a[0] = 1;
    s->i32a[1] = 2;
    s->i32a[2] = 1;
    s->f64a[0] = s->f64a[1] = s->f64a[2] = 1;
    s->p[0] = s->i32a;
    s->p[1] = s->f64a;
    s->z[0] = 3;
    s->p[2] = s->u64a;
    s->p[3] = s->f64b;
    s->p[4] = &s->n1;
}
static int64_t call_belief_filter(sw *s) {
    return rv_belief_filter(P(const int32_t *, 0), P(const double *, 1), Z(0), 1, P(uint64_t *, 2),
                            P(double *, 3), P(size_t *, 4));
}
static void init_belief_reweight(sw *s) {
    s->f64a[0] = s->f64a[1] = 1;
    s->f64b[0] = 0.2;
    s->f64b[1] = 0.8;
    s->p[0] = s->f64a;
    s->p[1] = s->f64b;
    s->z[0] = 2;
    s->p[2] = s->f64c;
}
static int64_t call_belief_reweight(sw *s) {
    return rv_belief_reweight(P(const double *, 0), P(const double *, 1), Z(0), P(double *, 2));
}
static void init_belief_likelihood(sw *s) {
    s->i32a[0] = 1;
    s->i32a[1] = 2;
    s->i32a[2] = 1;
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->p[1] = s->f64a;
}
static int64_t call_belief_likelihood(sw *s) {
    return rv_belief_likelihood(P(const int32_t *, 0), Z(0), 1, 0.1, P(double *, 1));
}
static void init_belief_options(sw *s) {
    s->p[0] = &s->bo;
    s->bo.n_threads = 9;
}
static int64_t call_belief_options_init(sw *s) {
    rv_belief_options_init(P(rv_belief_options *, 0));
    return P(rv_belief_options *, 0) ? s->bo.n_threads == 0 && !s->bo.costs : -1;
}
static void init_belief_mi(sw *s) {
    init_codes(s);
    rv_belief_options_init(&s->bo);
    s->bo.n_threads = 1;
    s->p[0] = s->i32a;
    s->z[0] = 3;
    s->z[1] = 2;
    s->u64a[0] = 0;
    s->u64a[1] = 1;
    s->u64a[2] = 2;
    s->p[1] = s->u64a;
    s->z[2] = 3;
    s->f64a[0] = s->f64a[1] = s->f64a[2] = 1;
    s->p[2] = s->f64a;
    s->p[3] = &s->bo;
    s->p[4] = s->f64b;
    s->p[5] = s->f64c;
    s->p[6] = s->u64b;
    s->p[7] = s->u64c;
    s->p[8] = &s->d1;
    s->p[9] = &s->w1;
}
static int64_t call_belief_mi(sw *s) {
    return rv_belief_mi(P(const int32_t *, 0), Z(0), Z(1), P(const uint64_t *, 1), Z(2),
                        P(const double *, 2), P(const rv_belief_options *, 3), P(double *, 4),
                        P(double *, 5), P(uint64_t *, 6), P(uint64_t *, 7), P(double *, 8),
                        P(uint32_t *, 9));
}

/* ---- flat.h */

static void init_flat_options(sw *s) {
    s->p[0] = &s->fo;
}
static int64_t call_flat_options_init(sw *s) {
    rv_flat_options_init(P(rv_flat_options *, 0));
    return P(rv_flat_options *, 0) ? (int64_t)s->fo.rescore_factor : -1;
}
static void init_flat_create(sw *s) {
    rv_flat_options_init(&s->fo);
    s->fo.dim = DIM;
    s->p[0] = &s->fo;
    s->p[1] = &s->fl_out;
}
static int64_t call_flat_create(sw *s) {
    rv_status st = rv_flat_create(P(const rv_flat_options *, 0), P(rv_flat **, 1));
    FREE_IF_OK(st, rv_flat_free, P(rv_flat **, 1));
    return st;
}
static void init_flat_own(sw *s) {
    s->own_fl = new_flat();
    s->p[0] = s->own_fl;
}
static int64_t call_flat_free(sw *s) {
    rv_flat_free(P(rv_flat *, 0));
    if (P(rv_flat *, 0)) s->own_fl = NULL;
    return 0;
}
static void init_flat(sw *s) {
    s->p[0] = g_fl;
}
static int64_t call_flat_dim(sw *s) {
    return rv_flat_dim(P(const rv_flat *, 0));
}
static int64_t call_flat_metric(sw *s) {
    return rv_flat_metric(P(const rv_flat *, 0));
}
static int64_t call_flat_storage_kind(sw *s) {
    return rv_flat_storage_kind(P(const rv_flat *, 0));
}
static int64_t call_flat_rescore_factor(sw *s) {
    return rv_flat_rescore_factor(P(const rv_flat *, 0));
}
static int64_t call_flat_size(sw *s) {
    return (int64_t)rv_flat_size(P(const rv_flat *, 0));
}
static void init_flat_own_deleted(sw *s) {
    init_flat_own(s);
    int64_t id = 10;
    rv_flat_delete(s->own_fl, 1, &id, NULL);
}
static int64_t call_flat_n_deleted(sw *s) {
    return (int64_t)rv_flat_n_deleted(P(const rv_flat *, 0));
}
static void init_flat_add(sw *s) {
    init_flat_own(s);
    s->z[0] = 2;
    memcpy(s->f32a, VECS, 2 * DIM * sizeof(float));
    s->p[1] = s->f32a;
    s->i64a[0] = 20;
    s->i64a[1] = 21;
    s->p[2] = s->i64a;
    s->p[3] = s->i64b;
}
static int64_t call_flat_add(sw *s) {
    return rv_flat_add(P(rv_flat *, 0), Z(0), P(const float *, 1), P(const int64_t *, 2),
                       P(int64_t *, 3));
}
static void init_flat_delete(sw *s) {
    init_flat_own(s);
    s->z[0] = 1;
    s->i64a[0] = 11;
    s->p[1] = s->i64a;
    s->p[2] = &s->n1;
}
static int64_t call_flat_delete(sw *s) {
    return rv_flat_delete(P(rv_flat *, 0), Z(0), P(const int64_t *, 1), P(size_t *, 2));
}
static int64_t call_flat_remove(sw *s) {
    return rv_flat_remove(P(rv_flat *, 0), Z(0), P(const int64_t *, 1), P(size_t *, 2));
}
static int64_t call_flat_compact(sw *s) {
    return rv_flat_compact(P(rv_flat *, 0));
}
static int64_t call_flat_contains(sw *s) {
    return rv_flat_contains(P(const rv_flat *, 0), 12);
}
static void init_flat_ids(sw *s) {
    s->p[0] = g_fl;
    s->p[1] = s->i64a;
    s->z[0] = 8;
    s->p[2] = &s->n1;
}
static int64_t call_flat_ids(sw *s) {
    return rv_flat_ids(P(const rv_flat *, 0), P(int64_t *, 1), Z(0), P(size_t *, 2));
}
static void init_flat_get(sw *s) {
    s->p[0] = g_fl;
    s->z[0] = 2;
    s->i64a[0] = 11;
    s->i64a[1] = 10;
    s->p[1] = s->i64a;
    s->p[2] = s->f32a;
}
static int64_t call_flat_get(sw *s) {
    return rv_flat_get(P(const rv_flat *, 0), Z(0), P(const int64_t *, 1), P(float *, 2));
}
static void init_flat_search_params(sw *s) {
    s->p[0] = &s->fsp;
}
static int64_t call_flat_search_params_init(sw *s) {
    rv_flat_search_params_init(P(rv_flat_search_params *, 0));
    return P(rv_flat_search_params *, 0) ? (int64_t)s->fsp.k : -1;
}
static void init_flat_search(sw *s) {
    rv_flat_search_params_init(&s->fsp);
    s->fsp.n_threads = 1;
    s->p[0] = g_fl;
    s->p[1] = &s->fsp;
    s->z[0] = 2; /* n_queries */
    memcpy(s->f32a, VECS, 2 * DIM * sizeof(float));
    s->p[2] = s->f32a;
    s->p[3] = s->i64a;
    s->p[4] = s->f32b;
    s->p[5] = &s->n1;
    s->z[1] = 3; /* params->k */
}
static int64_t call_flat_search(sw *s) {
    if (s->p[1]) s->fsp.k = Z(1);
    return rv_flat_search(P(const rv_flat *, 0), P(const rv_flat_search_params *, 1), Z(0),
                          P(const float *, 2), P(int64_t *, 3), P(float *, 4), P(size_t *, 5));
}
static void init_flat_rescore(sw *s) {
    s->p[0] = g_fl;
    s->z[0] = 1;
    memcpy(s->f32a, VECS, DIM * sizeof(float));
    s->p[1] = s->f32a;
    s->z[1] = 3;
    s->i64a[0] = 12;
    s->i64a[1] = -1;
    s->i64a[2] = 10;
    s->p[2] = s->i64a;
    s->z[2] = 2;
    s->p[3] = s->i64b;
    s->p[4] = s->f32b;
    s->p[5] = s->za;
}
static int64_t call_flat_rescore(sw *s) {
    return rv_flat_rescore(P(const rv_flat *, 0), Z(0), P(const float *, 1), Z(1),
                           P(const int64_t *, 2), Z(2), 1, P(int64_t *, 3), P(float *, 4),
                           P(size_t *, 5));
}
static void init_flat_save(sw *s) {
    s->p[0] = g_fl;
    s->p[1] = g_fl_path;
}
static int64_t call_flat_save(sw *s) {
    return rv_flat_save(P(const rv_flat *, 0), P(const char *, 1));
}
static int64_t call_flat_save_mode(sw *s) {
    return rv_flat_save_mode(P(const rv_flat *, 0), P(const char *, 1), 0600);
}
static void init_flat_load(sw *s) {
    s->p[0] = g_fl_path;
    s->p[1] = &s->fl_out;
}
static int64_t call_flat_load(sw *s) {
    rv_status st = rv_flat_load(P(const char *, 0), P(rv_flat **, 1));
    FREE_IF_OK(st, rv_flat_free, P(rv_flat **, 1));
    return st;
}
static void init_flat_save_buffer(sw *s) {
    s->p[0] = g_fl;
    s->p[1] = s->image;
    s->z[0] = sizeof s->image;
    s->p[2] = &s->n1;
}
static int64_t call_flat_save_buffer(sw *s) {
    return rv_flat_save_buffer(P(const rv_flat *, 0), P(void *, 1), Z(0), P(size_t *, 2));
}
static void init_flat_load_buffer(sw *s) {
    s->p[0] = g_fl_img;
    s->z[0] = g_fl_img_size;
    s->p[1] = &s->fl_out;
}
static int64_t call_flat_load_buffer(sw *s) {
    rv_status st = rv_flat_load_buffer(P(const void *, 0), Z(0), P(rv_flat **, 1));
    FREE_IF_OK(st, rv_flat_free, P(rv_flat **, 1));
    return st;
}
static void init_flat_check_queries(sw *s) {
    s->p[0] = g_fl;
    s->z[0] = 2;
    memcpy(s->f32a, VECS, 2 * DIM * sizeof(float));
    s->p[1] = s->f32a;
}
static int64_t call_flat_check_queries(sw *s) {
    return rv_flat_check_queries(P(const rv_flat *, 0), Z(0), P(const float *, 1));
}

/* ---- graph.h */

static void init_graph_spec(sw *s) {
    s->p[0] = &s->gs;
}
static int64_t call_graph_spec_init(sw *s) {
    rv_graph_spec_init(P(rv_graph_spec *, 0));
    return P(rv_graph_spec *, 0) ? s->gs.metric == RV_METRIC_COSINE && s->gs.n_nodes == 0 : -1;
}
/* The spec's own arrays and counts are swept too: p[2..6] and z[0..3]
** stand for its fields. */
static void init_graph_create(sw *s) {
    graph_spec(&s->gs);
    s->p[0] = &s->gs;
    s->p[1] = &s->gr_out;
    s->p[2] = (void *)s->gs.node_ids;
    s->p[3] = (void *)s->gs.edge_src;
    s->p[4] = (void *)s->gs.edge_dst;
    s->p[5] = (void *)s->gs.doc_entity;
    s->p[6] = (void *)s->gs.vectors;
    s->z[0] = s->gs.n_nodes;
    s->z[1] = s->gs.n_edges;
    s->z[2] = s->gs.n_docs;
    s->z[3] = s->gs.n_vectors;
}
static int64_t call_graph_create(sw *s) {
    s->gs.node_ids = P(const int64_t *, 2);
    s->gs.edge_src = P(const int64_t *, 3);
    s->gs.edge_dst = P(const int64_t *, 4);
    s->gs.doc_entity = P(const int64_t *, 5);
    s->gs.vectors = P(const float *, 6);
    s->gs.n_nodes = Z(0);
    s->gs.n_edges = Z(1);
    s->gs.n_docs = Z(2);
    s->gs.n_vectors = Z(3);
    rv_status st = rv_graph_create(P(const rv_graph_spec *, 0), P(rv_graph **, 1));
    FREE_IF_OK(st, rv_graph_free, P(rv_graph **, 1));
    return st;
}
static void init_graph_check_vectors(sw *s) {
    memcpy(s->f32a, VECS, sizeof VECS);
    s->p[0] = s->f32a;
    s->z[0] = 3;
}
static int64_t call_graph_check_vectors(sw *s) {
    return rv_graph_check_vectors(P(const float *, 0), Z(0), DIM, 1);
}
static void init_graph_own(sw *s) {
    rv_graph_spec gs;
    graph_spec(&gs);
    rv_graph_create(&gs, &s->own_gr);
    s->p[0] = s->own_gr;
}
static int64_t call_graph_free(sw *s) {
    rv_graph_free(P(rv_graph *, 0));
    if (P(rv_graph *, 0)) s->own_gr = NULL;
    return 0;
}
static int64_t call_graph_trim(sw *s) {
    (void)s;
    rv_graph_trim();
    return 0;
}
static void init_graph(sw *s) {
    s->p[0] = g_gr;
}
static int64_t call_graph_n_nodes(sw *s) {
    return (int64_t)rv_graph_n_nodes(P(const rv_graph *, 0));
}
static int64_t call_graph_n_edges(sw *s) {
    return (int64_t)rv_graph_n_edges(P(const rv_graph *, 0));
}
static int64_t call_graph_n_docs(sw *s) {
    return (int64_t)rv_graph_n_docs(P(const rv_graph *, 0));
}
static int64_t call_graph_dim(sw *s) {
    return rv_graph_dim(P(const rv_graph *, 0));
}
static int64_t call_graph_max_entity_docs(sw *s) {
    return (int64_t)rv_graph_max_entity_docs(P(const rv_graph *, 0));
}
static void init_graph_find_nodes(sw *s) {
    s->p[0] = g_gr;
    s->z[0] = 2;
    s->i64a[0] = 101;
    s->i64a[1] = 999;
    s->p[1] = s->i64a;
    s->p[2] = s->i64b;
}
static int64_t call_graph_find_nodes(sw *s) {
    return rv_graph_find_nodes(P(const rv_graph *, 0), Z(0), P(const int64_t *, 1),
                               P(int64_t *, 2));
}
static void init_graph_node_ids(sw *s) {
    s->p[0] = g_gr;
    s->p[1] = s->i64a;
    s->z[0] = 8;
    s->p[2] = &s->n1;
}
static int64_t call_graph_node_ids(sw *s) {
    return rv_graph_node_ids(P(const rv_graph *, 0), P(int64_t *, 1), Z(0), P(size_t *, 2));
}
static void init_graph_neighbours(sw *s) {
    s->p[0] = g_gr;
    s->i64c[0] = INT64_MIN + 1;
    s->i64c[1] = INT64_MAX;
    s->p[1] = s->i64c; /* window: everything */
    s->p[2] = s->i64a;
    s->p[3] = s->i64b;
    s->z[0] = 8;
    s->p[4] = &s->n1;
}
static int64_t call_graph_neighbours(sw *s) {
    return rv_graph_neighbours(P(const rv_graph *, 0), 1, RV_GRAPH_BOTH, -1, P(const int64_t *, 1),
                               P(int64_t *, 2), P(int64_t *, 3), Z(0), P(size_t *, 4));
}
static void init_graph_degree(sw *s) {
    s->p[0] = g_gr;
    s->p[1] = &s->n1;
}
static int64_t call_graph_degree(sw *s) {
    return rv_graph_degree(P(const rv_graph *, 0), 1, RV_GRAPH_BOTH, -1, P(size_t *, 1));
}
static void init_graph_edges(sw *s) {
    s->p[0] = g_gr;
    s->z[0] = 2;
    s->i64a[0] = 1;
    s->i64a[1] = 0;
    s->p[1] = s->i64a;
    s->p[2] = s->i64b;
    s->p[3] = s->i64c;
    s->p[4] = s->i32a;
    s->p[5] = s->i64d;
}
static int64_t call_graph_edges(sw *s) {
    return rv_graph_edges(P(const rv_graph *, 0), Z(0), P(const int64_t *, 1), P(int64_t *, 2),
                          P(int64_t *, 3), P(int32_t *, 4), P(int64_t *, 5));
}
static void init_graph_entity_docs(sw *s) {
    s->p[0] = g_gr;
    s->z[0] = 2;
    s->i64a[0] = 0;
    s->i64a[1] = 3;
    s->p[1] = s->i64a;
    s->p[2] = s->i64b;
    s->z[1] = 8;
    s->p[3] = &s->n1;
}
static int64_t call_graph_entity_docs(sw *s) {
    return rv_graph_entity_docs(P(const rv_graph *, 0), Z(0), P(const int64_t *, 1),
                                P(int64_t *, 2), Z(1), P(size_t *, 3));
}
static void init_graph_doc_entities(sw *s) {
    s->p[0] = g_gr;
    s->z[0] = 2;
    s->i64a[0] = 2;
    s->i64a[1] = 0;
    s->p[1] = s->i64a;
    s->p[2] = s->i64b;
}
static int64_t call_graph_doc_entities(sw *s) {
    return rv_graph_doc_entities(P(const rv_graph *, 0), Z(0), P(const int64_t *, 1),
                                 P(int64_t *, 2));
}
static void init_graph_walk(sw *s) {
    s->p[0] = &s->gw;
}
static int64_t call_graph_walk_init(sw *s) {
    rv_graph_walk_init(P(rv_graph_walk *, 0));
    return P(rv_graph_walk *, 0) ? (int64_t)s->gw.max_depth : -1;
}
static void init_graph_bfs(sw *s) {
    rv_graph_walk_init(&s->gw);
    s->gw.max_depth = 3;
    s->u16a[0] = 0;
    s->p[0] = g_gr;
    s->p[1] = &s->gw;
    s->z[0] = 1;
    s->i64a[0] = 0;
    s->p[2] = s->i64a;
    s->p[3] = s->i64b;
    s->p[4] = s->u32a;
    s->z[1] = 8;
    s->p[5] = &s->n1;
    s->p[6] = s->u16a; /* walk->types */
    s->z[2] = 1;       /* walk->n_types */
    s->z[3] = 10;      /* walk->node_budget */
}
static int64_t call_graph_bfs(sw *s) {
    s->gw.types = P(const uint16_t *, 6);
    s->gw.n_types = Z(2);
    s->gw.node_budget = Z(3);
    return rv_graph_bfs(P(const rv_graph *, 0), P(const rv_graph_walk *, 1), Z(0),
                        P(const int64_t *, 2), P(int64_t *, 3), P(uint32_t *, 4), Z(1),
                        P(size_t *, 5));
}
static void init_graph_facts_params(sw *s) {
    s->p[0] = &s->gf;
}
static int64_t call_graph_facts_init(sw *s) {
    rv_graph_facts_init(P(rv_graph_facts_params *, 0));
    return P(rv_graph_facts_params *, 0) ? (int64_t)s->gf.max_edges : -1;
}
static void init_graph_facts(sw *s) {
    rv_graph_facts_init(&s->gf);
    s->u16a[0] = 7;
    s->p[0] = g_gr;
    s->p[1] = &s->gf;
    s->z[0] = 1;
    s->i64a[0] = 0;
    s->p[2] = s->i64a;
    s->p[3] = s->i64b;
    s->p[4] = s->u32a;
    s->z[1] = 32;
    s->p[5] = &s->n1;
    s->z[2] = 25;      /* p->max_edges */
    s->p[6] = s->u16a; /* p->bridge_types */
    s->z[3] = 1;       /* p->n_bridge_types */
    s->z[4] = 10;      /* p->node_budget */
    s->z[5] = 3;       /* p->max_edges_per_subject */
}
static int64_t call_graph_facts(sw *s) {
    s->gf.max_edges = Z(2);
    s->gf.bridge_types = P(const uint16_t *, 6);
    s->gf.n_bridge_types = Z(3);
    s->gf.node_budget = Z(4);
    s->gf.max_edges_per_subject = Z(5);
    return rv_graph_facts(P(const rv_graph *, 0), P(const rv_graph_facts_params *, 1), Z(0),
                          P(const int64_t *, 2), P(int64_t *, 3), P(uint32_t *, 4), Z(1),
                          P(size_t *, 5));
}
static void init_graph_doc_hops(sw *s) {
    s->p[0] = g_gr;
    s->z[0] = 1;
    s->i64a[0] = 0;
    s->p[1] = s->i64a;
    s->i64c[0] = INT64_MIN + 1;
    s->i64c[1] = INT64_MAX;
    s->p[2] = s->i64c;
    s->p[3] = s->i64b;
    s->z[1] = 8;
    s->p[4] = &s->n1;
}
static int64_t call_graph_doc_hops(sw *s) {
    return rv_graph_doc_hops(P(const rv_graph *, 0), Z(0), P(const int64_t *, 1), 2,
                             P(const int64_t *, 2), P(int64_t *, 3), Z(1), P(size_t *, 4));
}
static void init_graph_similar(sw *s) {
    s->p[0] = g_gr;
    s->z[0] = 1;
    s->i64a[0] = 0;
    s->p[1] = s->i64a;
    memcpy(s->f32a, VECS + DIM, DIM * sizeof(float));
    s->p[2] = s->f32a;
    s->z[1] = 2; /* max_new */
    s->i64c[0] = INT64_MIN + 1;
    s->i64c[1] = INT64_MAX;
    s->p[3] = s->i64c;
    s->p[4] = s->i64b;
    s->p[5] = s->f32b;
    s->z[2] = 8;
    s->p[6] = &s->n1;
}
static int64_t call_graph_similar_docs(sw *s) {
    return rv_graph_similar_docs(P(const rv_graph *, 0), Z(0), P(const int64_t *, 1),
                                 P(const float *, 2), Z(1), P(const int64_t *, 3), P(int64_t *, 4),
                                 P(float *, 5), Z(2), P(size_t *, 6));
}
static int64_t call_graph_similar_entities(sw *s) {
    return rv_graph_similar_entities(
        P(const rv_graph *, 0), Z(0), P(const int64_t *, 1), RV_GRAPH_ENTITIES, P(const float *, 2),
        Z(1), P(const int64_t *, 3), P(int64_t *, 4), P(float *, 5), Z(2), P(size_t *, 6));
}
static void init_graph_top_k(sw *s) {
    s->p[0] = g_gr;
    memcpy(s->f32a, VECS, DIM * sizeof(float));
    s->p[1] = s->f32a;
    s->z[0] = 2; /* k */
    s->i64c[0] = INT64_MIN + 1;
    s->i64c[1] = INT64_MAX;
    s->p[2] = s->i64c;
    s->p[3] = s->i64b;
    s->p[4] = s->f32b;
    s->z[1] = 8;
    s->p[5] = &s->n1;
}
static int64_t call_graph_top_k(sw *s) {
    return rv_graph_top_k(P(const rv_graph *, 0), 0, P(const float *, 1), Z(0),
                          P(const int64_t *, 2), P(int64_t *, 3), P(float *, 4), Z(1),
                          P(size_t *, 5));
}
static void init_graph_score_docs(sw *s) {
    s->p[0] = g_gr;
    memcpy(s->f32a, VECS, DIM * sizeof(float));
    s->p[1] = s->f32a;
    s->z[0] = 2;
    s->i64a[0] = 1;
    s->i64a[1] = 2;
    s->p[2] = s->i64a;
    s->p[3] = s->f32b;
}
static int64_t call_graph_score_docs(sw *s) {
    return rv_graph_score_docs(P(const rv_graph *, 0), P(const float *, 1), Z(0),
                               P(const int64_t *, 2), P(float *, 3));
}

/* ---- hashing.h */

static void init_hasher_options(sw *s) {
    s->p[0] = &s->ho;
}
static int64_t call_hasher_options_init(sw *s) {
    rv_hasher_options_init(P(rv_hasher_options *, 0));
    return P(rv_hasher_options *, 0) ? (int64_t)s->ho.dim : -1;
}
static void init_hasher_create(sw *s) {
    rv_hasher_options_init(&s->ho);
    s->p[0] = &s->ho;
    s->p[1] = &s->hs_out;
}
static int64_t call_hasher_create(sw *s) {
    rv_status st = rv_hasher_create(P(const rv_hasher_options *, 0), P(rv_hasher **, 1));
    FREE_IF_OK(st, rv_hasher_free, P(rv_hasher **, 1));
    return st;
}
static void init_hasher_own(sw *s) {
    rv_hasher_options ho;
    rv_hasher_options_init(&ho);
    rv_hasher_create(&ho, &s->own_hs);
    s->p[0] = s->own_hs;
}
static int64_t call_hasher_free(sw *s) {
    rv_hasher_free(P(rv_hasher *, 0));
    if (P(rv_hasher *, 0)) s->own_hs = NULL;
    return 0;
}
static void init_hasher(sw *s) {
    s->p[0] = g_hs;
}
static int64_t call_hasher_dim(sw *s) {
    return rv_hasher_dim(P(const rv_hasher *, 0));
}
static int64_t call_hasher_id(sw *s) {
    return strncmp(rv_hasher_id(P(const rv_hasher *, 0)), "hash-v1:dim=8,", 14) == 0
               ? 1
               : (int64_t)strlen(rv_hasher_id(P(const rv_hasher *, 0)));
}
static void init_hasher_embed(sw *s) {
    s->p[0] = g_hs;
    strcpy(s->text, "hello world");
    s->p[1] = s->text;
    s->z[0] = 11;
    s->p[2] = s->f32a;
}
static int64_t call_hasher_embed(sw *s) {
    return rv_hasher_embed(P(const rv_hasher *, 0), P(const char *, 1), Z(0), P(float *, 2));
}
static void init_hasher_embed_batch(sw *s) {
    s->p[0] = g_hs;
    strcpy(s->text, "helloworld");
    s->p[1] = s->text;
    s->u64a[0] = 0;
    s->u64a[1] = 5;
    s->u64a[2] = 10;
    s->p[2] = s->u64a;
    s->z[0] = 2;
    s->p[3] = s->f32a;
}
static int64_t call_hasher_embed_batch(sw *s) {
    return rv_hasher_embed_batch(P(const rv_hasher *, 0), P(const char *, 1),
                                 P(const uint64_t *, 2), Z(0), 1, P(float *, 3));
}

/* ---- encoder.h */

static void init_encoder_create(sw *s) {
    s->es = *enc_spec();
    s->p[0] = &s->es;
    s->p[1] = &s->enc_out;
}
static int64_t call_encoder_create(sw *s) {
    rv_status st = rv_encoder_create(P(const rv_encoder_spec *, 0), P(rv_encoder **, 1));
    FREE_IF_OK(st, rv_encoder_free, P(rv_encoder **, 1));
    return st;
}
static void init_encoder_own(sw *s) {
    rv_encoder_create(enc_spec(), &s->own_enc);
    s->p[0] = s->own_enc;
}
static int64_t call_encoder_free(sw *s) {
    rv_encoder_free(P(rv_encoder *, 0));
    if (P(rv_encoder *, 0)) s->own_enc = NULL;
    return 0;
}
static void init_encoder(sw *s) {
    s->p[0] = g_enc;
}
static int64_t call_encoder_kernel(sw *s) {
    return strlen(rv_encoder_kernel(P(const rv_encoder *, 0))) > 0;
}
static int64_t call_encoder_dim(sw *s) {
    return rv_encoder_dim(P(const rv_encoder *, 0));
}
static void init_encoder_encode(sw *s) {
    s->p[0] = g_enc;
    s->za[0] = 0;
    s->za[1] = 2;
    s->za[2] = 3;
    s->p[1] = s->za;
    s->i32a[0] = 1;
    s->i32a[1] = 3;
    s->i32a[2] = 0;
    s->p[2] = s->i32a;
    s->p[3] = NULL; /* type ids: all 0 */
    s->p[4] = s->f32a;
    s->z[0] = 2;
}
static int64_t call_encoder_encode(sw *s) {
    return rv_encoder_encode(P(const rv_encoder *, 0), Z(0), P(const size_t *, 1),
                             P(const int32_t *, 2), P(const int32_t *, 3), P(float *, 4));
}

/* ---- records.h */

/* A table of the three records of g_fl (ids 10, 11, 12) over two artifacts:
** texts "abc", no metadata, artifact ids "xy". */
static const int64_t R_IDS[3] = {10, 11, 12};
static const int32_t R_ART[3] = {0, 1, 0}, R_KIND[3] = {0, 0, 1};
static const int64_t R_OFF_REC[4] = {0, 1, 2, 3}, R_OFF_EMPTY[4] = {0, 0, 0, 0};
static const int64_t R_OFF_ART[3] = {0, 1, 2};

static void records_table(rv_records *t) {
    memset(t, 0, sizeof *t);
    t->n_records = 3;
    t->ids = R_IDS;
    t->artifact = R_ART;
    t->kind = R_KIND;
    t->n_kinds = 2;
    t->texts = (rv_strings){"abc", 3, R_OFF_REC};
    t->metadata = (rv_strings){NULL, 0, R_OFF_EMPTY};
    t->n_artifacts = 2;
    t->filter_fields = (rv_strings){NULL, 0, R_OFF_EMPTY};
    t->artifact_ids = (rv_strings){"xy", 2, R_OFF_ART};
}

static void init_unit_vector(sw *s) {
    memcpy(s->f32a, VECS, DIM * sizeof(float));
    s->p[0] = s->f32a;
    s->z[0] = DIM;
    s->p[1] = s->f32b;
}
static int64_t call_unit_vector(sw *s) {
    return rv_unit_vector(P(const void *, 0), RV_REAL_F32, Z(0), sizeof(float), P(float *, 1));
}
static int64_t call_any_nonzero(sw *s) {
    return rv_any_nonzero(P(const void *, 0), RV_REAL_F32, Z(0), sizeof(float));
}
static void init_records_check(sw *s) {
    records_table(&s->rt);
    s->p[0] = &s->rt;
    s->p[1] = (void *)s->rt.ids;
    s->p[2] = (void *)s->rt.artifact;
    s->p[3] = (void *)s->rt.kind;
    s->p[4] = (void *)s->rt.texts.offsets;
    s->z[0] = s->rt.n_records;
    s->z[1] = s->rt.n_artifacts;
}
static int64_t call_records_check(sw *s) {
    s->rt.ids = P(const int64_t *, 1);
    s->rt.artifact = P(const int32_t *, 2);
    s->rt.kind = P(const int32_t *, 3);
    s->rt.texts.offsets = P(const int64_t *, 4);
    s->rt.n_records = Z(0);
    s->rt.n_artifacts = Z(1);
    return rv_records_check(P(const rv_records *, 0));
}
static void init_records_hits(sw *s) {
    records_table(&s->rt);
    s->p[0] = &s->rt;
    s->z[0] = 2; /* n */
    s->i64a[0] = 12;
    s->i64a[1] = 10;
    s->p[1] = s->i64a;
    s->f32a[0] = 0.5f;
    s->f32a[1] = 0.25f;
    s->p[2] = s->f32a;
    s->i64b[0] = 2;
    s->i64b[1] = 0;
    s->p[3] = s->i64b; /* pos */
    s->z[1] = 2;       /* k */
    s->p[4] = s->i64c;
    s->p[5] = s->i64d;
    s->p[6] = &s->n1;
    s->p[7] = &s->rvd;
}
static int64_t call_records_hits(sw *s) {
    return rv_records_hits(P(const rv_records *, 0), Z(0), P(const int64_t *, 1),
                           P(const void *, 2), RV_REAL_F32, P(const int64_t *, 3), Z(1), 1,
                           P(int64_t *, 4), P(int64_t *, 5), P(size_t *, 6),
                           P(rv_records_verdict *, 7));
}
static void init_records_union(sw *s) {
    s->z[0] = 20; /* n_records */
    s->z[1] = 2;  /* n_a */
    s->i64a[0] = 7;
    s->i64a[1] = 3;
    s->p[0] = s->i64a;
    s->z[2] = 3; /* n_b */
    s->i64b[0] = 3;
    s->i64b[1] = 19;
    s->i64b[2] = 0;
    s->p[1] = s->i64b;
    s->p[2] = s->i64c;
    s->p[3] = s->i64d;
    s->p[4] = s->u64a;
    s->p[5] = &s->n1;
}
static int64_t call_records_union(sw *s) {
    return rv_records_union(Z(0), Z(1), P(const int64_t *, 0), Z(2), P(const int64_t *, 1),
                            P(int64_t *, 2), P(int64_t *, 3), P(int64_t *, 4), P(size_t *, 5));
}
static void init_records_rrf(sw *s) {
    s->z[0] = 3; /* n */
    s->i64a[0] = 1;
    s->i64a[1] = 0;
    s->i64a[2] = 2;
    s->i64b[0] = 2;
    s->i64b[1] = 1;
    s->i64b[2] = 0;
    s->p[0] = s->i64a;
    s->p[1] = s->i64b;
    s->p[2] = s->f64a;
}
static int64_t call_records_rrf(sw *s) {
    return rv_records_rrf(Z(0), P(const int64_t *, 0), P(const int64_t *, 1), 60, P(double *, 2));
}
static void init_records_blend_params(sw *s) {
    s->p[0] = &s->rbp;
}
static int64_t call_records_blend_params_init(sw *s) {
    rv_records_blend_params_init(P(rv_records_blend_params *, 0));
    return P(rv_records_blend_params *, 0) ? (int64_t)s->rbp.sat_k : -1;
}
static void init_records_blend(sw *s) {
    /* records 10, 11, 12: dense ranks 1, -, 2 (11 asked of g_fl), lexical
    ** ranks -, 1, - (10 and 12 asked of g_bm, which lacks them) */
    rv_records_blend_params_init(&s->rbp);
    s->rbp.dense = g_fl;
    memcpy(s->f32a, VECS, DIM * sizeof(float));
    s->rbp.query_vector = s->f32a;
    s->rbp.n_threads = 1;
    s->rbp.lexical = g_bm;
    s->rbp.query = "quick";
    s->rbp.query_len = 5;
    int64_t ids[3] = {10, 11, 12}, ra[3] = {1, 0, 2}, rb[3] = {0, 1, 0};
    memcpy(s->i64a, ids, sizeof ids);
    memcpy(s->i64b, ra, sizeof ra);
    memcpy(s->i64c, rb, sizeof rb);
    s->f64a[0] = 0.9;
    s->f64a[1] = 0.5;
    s->f64b[0] = 2.5;
    s->p[0] = &s->rbp;
    s->p[1] = s->i64a;
    s->p[2] = s->i64b;
    s->p[3] = s->i64c;
    s->p[4] = s->f64a;
    s->p[5] = s->f64b;
    s->p[6] = s->f64c;
    s->z[0] = 3; /* n */
    s->z[1] = 2; /* n_a */
    s->z[2] = 1; /* n_b */
}
static int64_t call_records_blend(sw *s) {
    return rv_records_blend(P(const rv_records_blend_params *, 0), Z(0), P(const int64_t *, 1),
                            P(const int64_t *, 2), P(const int64_t *, 3), Z(1),
                            P(const double *, 4), Z(2), P(const double *, 5), P(double *, 6));
}
static void init_records_search_params(sw *s) {
    s->p[0] = &s->rsp;
}
static int64_t call_records_search_params_init(sw *s) {
    rv_records_search_params_init(P(rv_records_search_params *, 0));
    return P(rv_records_search_params *, 0) ? (int64_t)s->rsp.k : -1;
}
static void init_records_search(sw *s) {
    records_table(&s->rt);
    rv_records_search_params_init(&s->rsp);
    s->rsp.fetch_k = 3;
    s->rsp.n_threads = 1;
    s->p[0] = &s->rt;
    s->p[1] = g_fl;
    s->p[2] = &s->rsp;
    memcpy(s->f32a, VECS, DIM * sizeof(float));
    s->p[3] = s->f32a;
    s->p[4] = s->i64a;
    s->p[5] = s->i64b;
    s->p[6] = s->f32b;
    s->p[7] = &s->n1;
    s->p[8] = &s->rvd;
    s->z[0] = 2; /* params->k */
}
static int64_t call_records_search(sw *s) {
    if (s->p[2]) { /* (fetch_k >= k: a k of SIZE_MAX is sized by the index) */
        s->rsp.k = Z(0);
        if (s->rsp.fetch_k < Z(0)) s->rsp.fetch_k = Z(0);
    }
    return rv_records_search(P(const rv_records *, 0), P(const rv_flat *, 1),
                             P(const rv_records_search_params *, 2), P(const float *, 3),
                             P(int64_t *, 4), P(int64_t *, 5), P(float *, 6), P(size_t *, 7),
                             P(rv_records_verdict *, 8));
}

/* ------------------------------------------------------------- the table */

static const sw_case CASES[] = {
    /* core.h */
    {"rv_status_name", 0, 1, init_none, call_status_name, {{0}}},
    {"rv_errmsg", 0, 1, init_none, call_errmsg, {{0}}},
    {"rv_errmsg_clear", 0, 1, init_none, call_errmsg_clear, {{0}}},
    {"rv_version", 0, 1, init_none, call_version, {{0}}},
    {"rv_version_number", 0, 1, init_none, call_version_number, {{0}}},
    {"rv_rng_seed", 0, 1, init_rng, call_rng_seed, {PTR("rng", -1)}},
    {"rv_rng_seed_stream", 0, 1, init_rng, call_rng_seed_stream, {PTR("rng", -1)}},
    {"rv_rng_next", 0, 1, init_rng, call_rng_next, {PTR("rng", 0)}},
    {"rv_rng_below", 0, 1, init_rng, call_rng_below, {PTR("rng", 0)}},
    {"rv_rng_uniform", 0, 1, init_rng, call_rng_uniform, {PTR("rng", 0)}},
    {"rv_idset_create",
     1,
     OK,
     init_idset_create,
     call_idset_create,
     {PTR("ids", INV), SZN("n", OK, RNG, "ids"), PTR("out", INV)}},
    {"rv_idset_free", 0, 0, init_idset_free, call_idset_free, {PTR("set", 0)}},
    {"rv_idset_size", 0, 2, init_set, call_idset_size, {PTR("set", 0)}},
    {"rv_idset_contains", 0, 1, init_set, call_idset_contains, {PTR("set", 0)}},
    {"rv_idset_ids",
     1,
     OK,
     init_idset_ids,
     call_idset_ids,
     {PTR("set", INV), PTR("out", INV), SZN("capacity", SHP, RNG, "out"), PTR("n", INV)}},
    {"rv_bitset_count",
     0,
     10,
     init_bitset,
     call_bitset_count,
     {PTR("a", 0), SZN("nwords", 0, 0, "a")}},
    {"rv_bitset_count_andnot",
     0,
     5,
     init_bitset,
     call_bitset_count_andnot,
     {PTR("a", 0), PTR("b", 0), SZN("nwords", 0, 0, "a b")}},
    {"rv_bitset_count_and",
     0,
     5,
     init_bitset,
     call_bitset_count_and,
     {PTR("a", 0), PTR("b", 0), SZN("nwords", 0, 0, "a b")}},

    /* cover.h */
    {"rv_cover_create",
     1,
     OK,
     init_cover_create,
     call_cover_create,
     {SZ("n_elements", RNG, RNG), SZ("n_sets", OK, RNG), PTR("offsets", INV), PTR("elements", INV),
      PTR("costs", OK), PTR("out", INV)}},
    {"rv_cover_create_pairs",
     1,
     OK,
     init_cover_create_pairs,
     call_cover_create_pairs,
     {PTR("codes", INV), SZN("n_rows", OK, RNG, "codes"), SZN("n_cols", OK, RNG, "codes costs"),
      PTR("costs", OK), PTR("out", INV)}},
    {"rv_cover_free", 0, 0, init_cover_free, call_cover_free, {PTR("p", 0)}},
    {"rv_cover_n_sets", 0, 2, init_cover, call_cover_n_sets, {PTR("p", 0)}},
    {"rv_cover_n_elements", 0, 3, init_cover, call_cover_n_elements, {PTR("p", 0)}},
    {"rv_cover_n_coverable", 0, 3, init_cover, call_cover_n_coverable, {PTR("p", 0)}},
    {"rv_cover_element_counts",
     1,
     OK,
     init_cover_element_counts,
     call_cover_element_counts,
     {PTR("p", INV), PTR("counts", INV)}},
    {"rv_cover_covered",
     1,
     OK,
     init_cover_covered,
     call_cover_covered,
     {PTR("p", INV), PTR("sel", INV), SZN("n_sel", OK, RNG, "sel"), PTR("mask", OK),
      PTR("n_covered", INV)}},
    {"rv_cover_distinct_elements",
     1,
     OK,
     init_cover_distinct,
     call_cover_distinct,
     {PTR("p", INV), PTR("signatures", INV), PTR("mult", INV), SZ("capacity", SHP, RNG),
      PTR("n_distinct", INV)}},
    {"rv_cover_options_init", 0, 1, init_cover_options, call_cover_options_init, {PTR("opt", -1)}},
    {"rv_cover_solve",
     1,
     OK,
     init_cover_solve,
     call_cover_solve,
     {PTR("p", INV), PTR("opt", INV), PTR("selected", INV), SZ("capacity", SHP, RNG),
      PTR("n_selected", INV), PTR("info", OK)}},
    {"rv_cover_lp",
     1,
     OK,
     init_cover_lp,
     call_cover_lp,
     {PTR("p", INV), PTR("x", INV), SZ("capacity", SHP, RNG), PTR("res", INV)}},
    {"rv_cover_plan_path",
     1,
     OK,
     init_cover_plan_path,
     call_cover_plan_path,
     {PTR("p", INV), PTR("weights", OK), PTR("order", INV), PTR("newly_covered", INV),
      PTR("gain", OK), SZ("capacity", SHP, RNG), PTR("n_steps", INV)}},
    {"rv_keys_plan_path",
     1,
     OK,
     init_keys_plan_path,
     call_keys_plan_path,
     {PTR("codes", INV), SZN("n_rows", OK, RNG, "codes"), SZN("n_cols", OK, RNG, "codes costs"),
      PTR("costs", OK), PTR("progress_ctx", OK), PTR("order", INV), PTR("newly_resolved", INV),
      PTR("gain", OK), SZ("capacity", SHP, RNG), PTR("n_steps", INV), PTR("unresolved", INV)}},
    {"rv_keys_unresolved",
     1,
     OK,
     init_keys_unresolved,
     call_keys_unresolved,
     {PTR("codes", INV), SZN("n_rows", OK, RNG, "codes"), SZ("n_cols", RNG, RNG), PTR("cols", INV),
      SZN("n_sel", OK, RNG, "cols"), PTR("unresolved", INV)}},
    {"rv_keys_count_values",
     1,
     OK,
     init_keys_count_values,
     call_keys_count_values,
     {PTR("keys", INV), PTR("weights", OK), PTR("mass", OK),
      SZN("n", OK, RNG, "keys out_keys out_counts mass out_mass"), PTR("out_keys", INV),
      PTR("out_counts", INV), PTR("out_mass", INV), PTR("bucket_offsets", INV),
      SZ("capacity", SHP, RNG), PTR("n_distinct", INV)}},
    {"rv_keys_group_scores",
     1,
     OK,
     init_keys_group_scores,
     call_keys_group_scores,
     {PTR("codes", INV), SZ("n_rows", INV, RNG), SZN("n_cols", OK, RNG, "resolved entropy"),
      PTR("offsets", INV), SZN("n_groups", OK, RNG, "offsets"), PTR("resolved", INV),
      PTR("entropy", OK)}},
    {"rv_keys_group_refine",
     1,
     OK,
     init_keys_group_refine,
     call_keys_group_refine,
     {PTR("code", INV), SZ("n_rows", INV, RNG), PTR("offsets", INV),
      SZN("n_groups", OK, RNG, "offsets"), PTR("rows_out", INV), PTR("offsets_out", INV),
      PTR("n_rows_out", INV), PTR("n_groups_out", INV)}},

    /* text.h */
    {"rv_analyzer_options_init",
     0,
     64,
     init_analyzer_options,
     call_analyzer_options_init,
     {PTR("opt", -1)}},
    {"rv_analyzer_options_check",
     1,
     OK,
     init_analyzer_options,
     call_analyzer_options_check,
     {PTR("opt", INV)}},
    {"rv_analyze",
     1,
     OK,
     init_analyze,
     call_analyze,
     {PTR("opt", INV), PTR("text", INV), SZN("len", OK, RNG, "text"), PTR("buf", INV),
      SZN("buf_cap", SHP, RNG, "buf"), PTR("ends", INV), SZN("ends_cap", SHP, RNG, "ends"),
      PTR("n_tokens", INV), PTR("buf_len", INV)}},
    {"rv_stem_english",
     1,
     OK,
     init_stem,
     call_stem,
     {PTR("word", INV), SZN("len", OK, RNG, "word"), PTR("out", INV),
      SZN("out_cap", SHP, RNG, "out"), PTR("out_len", INV)}},
    {"rv_is_stopword",
     0,
     1,
     init_is_stopword,
     call_is_stopword,
     {PTR("word", 0), SZN("len", 0, 0, "word")}},
    {"rv_stopword_count", 0, 1, init_none, call_stopword_count, {{0}}},
    {"rv_stopword", 0, 1, init_stopword, call_stopword, {SZ("i", 1, 0)}},
    {"rv_unicode_version", 0, 1, init_none, call_unicode_version, {{0}}},

    /* bm25.h */
    {"rv_bm25_params_init", 0, 1, init_bm25_params, call_bm25_params_init, {PTR("params", -1)}},
    {"rv_bm25_params_check", 1, OK, init_bm25_params, call_bm25_params_check, {PTR("params", INV)}},
    {"rv_bm25_create",
     1,
     OK,
     init_bm25_create,
     call_bm25_create,
     {PTR("analyzer", OK), PTR("params", OK), PTR("out", INV)}},
    {"rv_bm25_free", 0, 0, init_bm25_own, call_bm25_free, {PTR("index", 0)}},
    {"rv_bm25_add",
     1,
     OK,
     init_bm25_add,
     call_bm25_add,
     {PTR("index", INV), SZN("n_docs", OK, RNG, "texts lens ids assigned"), PTR("texts", INV),
      PTR("lens", INV), PTR("ids", OK), PTR("progress_ctx", OK), PTR("assigned", OK)}},
    {"rv_bm25_delete",
     1,
     OK,
     init_bm25_delete,
     call_bm25_delete,
     {PTR("index", INV), PTR("ids", INV), SZN("n", OK, RNG, "ids"), PTR("n_deleted", OK)}},
    {"rv_bm25_compact", 1, OK, init_bm25_own, call_bm25_compact, {PTR("index", INV)}},
    {"rv_bm25_set_params",
     1,
     OK,
     init_bm25_set_params,
     call_bm25_set_params,
     {PTR("index", INV), PTR("params", INV)}},
    {"rv_bm25_set_collection_stats",
     1,
     OK,
     init_bm25_collection,
     call_bm25_collection,
     {PTR("index", INV), PTR("dfs", INV), SZ("n_terms", SHP, SHP)}},
    {"rv_bm25_get_params",
     1,
     OK,
     init_bm25_get2,
     call_bm25_get_params2,
     {PTR("index", INV), PTR("out", INV)}},
    {"rv_bm25_get_analyzer",
     1,
     OK,
     init_bm25_get2,
     call_bm25_get_analyzer,
     {PTR("index", INV), PTR("out", INV)}},
    {"rv_bm25_get_info",
     1,
     OK,
     init_bm25_get2,
     call_bm25_get_info,
     {PTR("index", INV), PTR("out", INV)}},
    {"rv_bm25_search",
     1,
     OK,
     init_bm25_search,
     call_bm25_search,
     {PTR("index", INV), PTR("query", INV), SZN("len", OK, RNG, "query"), SZ("k", INV, RNG),
      PTR("filter", OK), PTR("ids", INV), PTR("scores", INV), PTR("n_found", INV),
      PTR("info", OK)}},
    {"rv_bm25_search_terms",
     1,
     OK,
     init_bm25_search_terms,
     call_bm25_search_terms,
     {PTR("index", INV), PTR("term_ids", INV), SZN("n_terms", OK, RNG, "term_ids"),
      SZ("k", INV, RNG), PTR("filter", OK), PTR("ids", INV), PTR("scores", INV),
      PTR("n_found", INV), PTR("info", OK)}},
    {"rv_bm25_search_batch",
     1,
     OK,
     init_bm25_search_batch,
     call_bm25_search_batch,
     {PTR("index", INV), SZN("n_queries", OK, RNG, "queries lens ids scores n_found"),
      PTR("queries", INV), PTR("lens", INV), SZ("k", INV, RNG), PTR("filter", OK),
      PTR("progress_ctx", OK), PTR("ids", INV), PTR("scores", INV), PTR("n_found", INV)}},
    {"rv_bm25_explain",
     1,
     OK,
     init_bm25_explain,
     call_bm25_explain,
     {PTR("index", INV), PTR("query", INV), SZN("len", OK, RNG, "query"), PTR("rows", INV),
      SZN("capacity", SHP, RNG, "rows"), PTR("n_rows", INV), PTR("score", OK), PTR("doc_len", OK)}},
    {"rv_bm25_lookup",
     1,
     OK,
     init_bm25_lookup,
     call_bm25_lookup,
     {PTR("index", INV), PTR("term", INV), SZN("len", OK, RNG, "term"), PTR("term_id", INV),
      PTR("found", INV)}},
    {"rv_bm25_term",
     1,
     OK,
     init_bm25_term,
     call_bm25_term,
     {PTR("index", INV), PTR("term", INV), PTR("len", INV)}},
    {"rv_bm25_doc_freq",
     1,
     OK,
     init_bm25_doc_freq,
     call_bm25_doc_freq,
     {PTR("index", INV), PTR("df", INV)}},
    {"rv_bm25_doc",
     1,
     OK,
     init_bm25_doc,
     call_bm25_doc,
     {PTR("index", INV), PTR("doc_len", OK), PTR("state", OK)}},
    {"rv_bm25_contains", 0, 1, init_bm25_get, call_bm25_contains, {PTR("index", 0)}},
    {"rv_bm25_ids",
     1,
     OK,
     init_bm25_ids,
     call_bm25_ids,
     {PTR("index", INV), PTR("ids", INV), SZN("capacity", SHP, RNG, "ids"), PTR("n_ids", INV)}},
    {"rv_bm25_save", 1, OK, init_bm25_save, call_bm25_save, {PTR("index", INV), PTR("path", INV)}},
    {"rv_bm25_save_mode",
     1,
     OK,
     init_bm25_save,
     call_bm25_save_mode,
     {PTR("index", INV), PTR("path", INV)}},
    {"rv_bm25_load", 1, OK, init_bm25_load, call_bm25_load, {PTR("path", INV), PTR("out", INV)}},
    {"rv_bm25_save_buffer",
     1,
     OK,
     init_bm25_save_buffer,
     call_bm25_save_buffer,
     {PTR("index", INV), PTR("buf", INV), SZN("capacity", SHP, RNG, "buf"), PTR("size", INV)}},
    {"rv_bm25_load_fd",
     1,
     OK,
     init_bm25_load_fd,
     call_bm25_load_fd,
     {PTR("name", OK), PTR("out", INV)}},
    {"rv_bm25_load_buffer",
     1,
     OK,
     init_bm25_load_buffer,
     call_bm25_load_buffer,
     {PTR("buf", INV), SZN("size", RV_E_CORRUPT, RNG, "buf"), PTR("out", INV)}},

    /* hnsw.h */
    {"rv_hnsw_expect_init",
     0,
     1,
     init_hnsw_expect_init,
     call_hnsw_expect_init,
     {PTR("expect", -1)}},
    {"rv_hnsw_check",
     1,
     OK,
     init_hnsw_check,
     call_hnsw_check,
     {PTR("buf", INV), SZN("size", RV_E_CORRUPT, RNG, "buf"), PTR("expect", INV), PTR("info", OK)}},

    /* belief.h */
    {"rv_belief_entropy",
     1,
     OK,
     init_belief_entropy,
     call_belief_entropy,
     {PTR("weights", INV), SZN("n", OK, RNG, "weights"), PTR("out", INV)}},
    {"rv_belief_filter",
     1,
     OK,
     init_belief_filter,
     call_belief_filter,
     {PTR("codes", INV), PTR("posterior", INV),
      SZN("n", OK, RNG, "codes posterior kept out_posterior"), PTR("kept", INV),
      PTR("out_posterior", INV), PTR("n_kept", INV)}},
    {"rv_belief_reweight",
     1,
     OK,
     init_belief_reweight,
     call_belief_reweight,
     {PTR("posterior", INV), PTR("likelihoods", INV),
      SZN("n", RV_E_INFEASIBLE, RNG, "posterior likelihoods out"), PTR("out", INV)}},
    {"rv_belief_likelihood",
     1,
     OK,
     init_belief_likelihood,
     call_belief_likelihood,
     {PTR("codes", INV), SZN("n", OK, RNG, "codes out"), PTR("out", INV)}},
    {"rv_belief_options_init",
     0,
     1,
     init_belief_options,
     call_belief_options_init,
     {PTR("opt", -1)}},
    {"rv_belief_mi",
     1,
     OK,
     init_belief_mi,
     call_belief_mi,
     {PTR("codes", INV), SZ("n_rows", RNG, RNG), SZN("n_cols", OK, RNG, "mi"), PTR("rows", OK),
      SZN("n_cand", OK, RNG, "rows posterior codes"), PTR("posterior", INV), PTR("opt", OK),
      PTR("mi", INV), PTR("h_col", OK), PTR("n_values", OK), PTR("pairs", OK), PTR("h_rows", OK),
      PTR("best", OK)}},

    /* flat.h */
    {"rv_flat_options_init", 0, 8, init_flat_options, call_flat_options_init, {PTR("opt", -1)}},
    {"rv_flat_create",
     1,
     OK,
     init_flat_create,
     call_flat_create,
     {PTR("opt", INV), PTR("out", INV)}},
    {"rv_flat_free", 0, 0, init_flat_own, call_flat_free, {PTR("index", 0)}},
    {"rv_flat_dim", 0, DIM, init_flat, call_flat_dim, {PTR("index", 0)}},
    {"rv_flat_metric", 0, RV_METRIC_COSINE, init_flat, call_flat_metric, {PTR("index", 0)}},
    {"rv_flat_storage_kind", 0, RV_FLAT_F16, init_flat, call_flat_storage_kind, {PTR("index", 0)}},
    {"rv_flat_rescore_factor", 0, 4, init_flat, call_flat_rescore_factor, {PTR("index", 0)}},
    {"rv_flat_size", 0, 3, init_flat, call_flat_size, {PTR("index", 0)}},
    {"rv_flat_n_deleted", 0, 1, init_flat_own_deleted, call_flat_n_deleted, {PTR("index", 0)}},
    {"rv_flat_add",
     1,
     OK,
     init_flat_add,
     call_flat_add,
     {PTR("index", INV), SZN("n", OK, RNG, "vectors ids assigned"), PTR("vectors", INV),
      PTR("ids", OK), PTR("assigned", OK)}},
    {"rv_flat_delete",
     1,
     OK,
     init_flat_delete,
     call_flat_delete,
     {PTR("index", INV), SZN("n", OK, RNG, "ids"), PTR("ids", INV), PTR("n_deleted", OK)}},
    {"rv_flat_remove",
     1,
     OK,
     init_flat_delete,
     call_flat_remove,
     {PTR("index", INV), SZN("n", OK, RNG, "ids"), PTR("ids", INV), PTR("n_removed", OK)}},
    {"rv_flat_compact", 1, OK, init_flat_own_deleted, call_flat_compact, {PTR("index", INV)}},
    {"rv_flat_contains", 0, 1, init_flat, call_flat_contains, {PTR("index", 0)}},
    {"rv_flat_ids",
     1,
     OK,
     init_flat_ids,
     call_flat_ids,
     {PTR("index", INV), PTR("ids", INV), SZN("capacity", SHP, RNG, "ids"), PTR("n_ids", INV)}},
    {"rv_flat_get",
     1,
     OK,
     init_flat_get,
     call_flat_get,
     {PTR("index", INV), SZN("n", OK, RNG, "ids out"), PTR("ids", INV), PTR("out", INV)}},
    {"rv_flat_search_params_init",
     0,
     10,
     init_flat_search_params,
     call_flat_search_params_init,
     {PTR("p", -1)}},
    {"rv_flat_search",
     1,
     OK,
     init_flat_search,
     call_flat_search,
     {PTR("index", INV), PTR("params", INV), SZN("n_queries", OK, RNG, "queries ids scores"),
      PTR("queries", INV), PTR("ids", INV), PTR("scores", INV), PTR("n_found", INV),
      SZ("params->k", INV, RNG)}},
    {"rv_flat_rescore",
     1,
     OK,
     init_flat_rescore,
     call_flat_rescore,
     {PTR("index", INV), SZN("n_queries", OK, RNG, "queries cand ids scores n_found"),
      PTR("queries", INV), SZN("n_cand", OK, RNG, "cand"), PTR("cand", INV), SZ("k", INV, RNG),
      PTR("ids", INV), PTR("scores", INV), PTR("n_found", INV)}},
    {"rv_flat_save", 1, OK, init_flat_save, call_flat_save, {PTR("index", INV), PTR("path", INV)}},
    {"rv_flat_load_fd",
     1,
     OK,
     init_flat_load_fd,
     call_flat_load_fd,
     {PTR("name", OK), PTR("out", INV)}},
    {"rv_flat_save_mode",
     1,
     OK,
     init_flat_save,
     call_flat_save_mode,
     {PTR("index", INV), PTR("path", INV)}},
    {"rv_flat_load", 1, OK, init_flat_load, call_flat_load, {PTR("path", INV), PTR("out", INV)}},
    {"rv_flat_save_buffer",
     1,
     OK,
     init_flat_save_buffer,
     call_flat_save_buffer,
     {PTR("index", INV), PTR("buf", INV), SZN("capacity", SHP, RNG, "buf"), PTR("size", INV)}},
    {"rv_flat_load_buffer",
     1,
     OK,
     init_flat_load_buffer,
     call_flat_load_buffer,
     {PTR("buf", INV), SZN("size", RV_E_CORRUPT, RNG, "buf"), PTR("out", INV)}},
    {"rv_flat_check_queries",
     1,
     OK,
     init_flat_check_queries,
     call_flat_check_queries,
     {PTR("index", INV), SZN("n_queries", OK, RNG, "queries"), PTR("queries", INV)}},

    /* graph.h */
    {"rv_graph_spec_init", 0, 1, init_graph_spec, call_graph_spec_init, {PTR("spec", -1)}},
    {"rv_graph_create",
     1,
     OK,
     init_graph_create,
     call_graph_create,
     {PTR("spec", INV), PTR("out", INV), PTR("spec->node_ids", INV), PTR("spec->edge_src", INV),
      PTR("spec->edge_dst", INV), PTR("spec->doc_entity", INV), PTR("spec->vectors", INV),
      SZM("spec->n_nodes", RNG, RNG, ""), SZM("spec->n_edges", INV, RNG, ""),
      SZM("spec->n_docs", OK, RNG, ""), SZM("spec->n_vectors", SHP, RNG, "")}},
    {"rv_graph_check_vectors",
     1,
     OK,
     init_graph_check_vectors,
     call_graph_check_vectors,
     {PTR("vectors", INV), SZN("n_rows", OK, RNG, "vectors")}},
    {"rv_graph_free", 0, 0, init_graph_own, call_graph_free, {PTR("graph", 0)}},
    {"rv_graph_trim", 0, 0, init_none, call_graph_trim, {{0}}},
    {"rv_graph_n_nodes", 0, 3, init_graph, call_graph_n_nodes, {PTR("graph", 0)}},
    {"rv_graph_n_edges", 0, 2, init_graph, call_graph_n_edges, {PTR("graph", 0)}},
    {"rv_graph_n_docs", 0, 3, init_graph, call_graph_n_docs, {PTR("graph", 0)}},
    {"rv_graph_dim", 0, DIM, init_graph, call_graph_dim, {PTR("graph", 0)}},
    {"rv_graph_max_entity_docs", 0, 1, init_graph, call_graph_max_entity_docs, {PTR("graph", 0)}},
    {"rv_graph_find_nodes",
     1,
     OK,
     init_graph_find_nodes,
     call_graph_find_nodes,
     {PTR("graph", INV), SZN("n", OK, RNG, "ids out"), PTR("ids", INV), PTR("out", INV)}},
    {"rv_graph_node_ids",
     1,
     OK,
     init_graph_node_ids,
     call_graph_node_ids,
     {PTR("graph", INV), PTR("out", INV), SZN("capacity", SHP, RNG, "out"), PTR("n", INV)}},
    {"rv_graph_neighbours",
     1,
     OK,
     init_graph_neighbours,
     call_graph_neighbours,
     {PTR("graph", INV), PTR("window", OK), PTR("edges", OK), PTR("nbrs", OK),
      SZN("capacity", SHP, RNG, "edges nbrs"), PTR("n", INV)}},
    {"rv_graph_degree",
     1,
     OK,
     init_graph_degree,
     call_graph_degree,
     {PTR("graph", INV), PTR("n", INV)}},
    {"rv_graph_edges",
     1,
     OK,
     init_graph_edges,
     call_graph_edges,
     {PTR("graph", INV), SZN("n", OK, RNG, "edges"), PTR("edges", INV), PTR("src", OK),
      PTR("dst", OK), PTR("type", OK), PTR("time", OK)}},
    {"rv_graph_entity_docs",
     1,
     OK,
     init_graph_entity_docs,
     call_graph_entity_docs,
     {PTR("graph", INV), SZN("n", OK, RNG, "entities"), PTR("entities", INV), PTR("out", INV),
      SZN("capacity", SHP, RNG, "out"), PTR("n_out", INV)}},
    {"rv_graph_doc_entities",
     1,
     OK,
     init_graph_doc_entities,
     call_graph_doc_entities,
     {PTR("graph", INV), SZN("n", OK, RNG, "docs out"), PTR("docs", INV), PTR("out", INV)}},
    {"rv_graph_walk_init", 0, 1, init_graph_walk, call_graph_walk_init, {PTR("walk", -1)}},
    {"rv_graph_bfs",
     1,
     OK,
     init_graph_bfs,
     call_graph_bfs,
     {PTR("graph", INV), PTR("walk", INV), SZN("n_seeds", OK, RNG, "seeds"), PTR("seeds", INV),
      PTR("nodes", OK), PTR("depths", OK), SZ("capacity", SHP, RNG), PTR("n", INV),
      PTR("walk->types", INV), SZN("walk->n_types", OK, RNG, "walk->types"),
      SZ("walk->node_budget", OK, OK)}},
    {"rv_graph_facts_init", 0, 25, init_graph_facts_params, call_graph_facts_init, {PTR("p", -1)}},
    {"rv_graph_facts",
     1,
     OK,
     init_graph_facts,
     call_graph_facts,
     {PTR("graph", INV), PTR("p", INV), SZN("n_seeds", OK, RNG, "seeds"), PTR("seeds", INV),
      PTR("edges", INV), PTR("depths", OK), SZ("capacity", SHP, RNG), PTR("n", INV),
      SZN("p->max_edges", OK, RNG, "edges depths"), PTR("p->bridge_types", INV),
      SZN("p->n_bridge_types", OK, RNG, "p->bridge_types"), SZ("p->node_budget", OK, OK),
      SZ("p->max_edges_per_subject", OK, OK)}},
    {"rv_graph_doc_hops",
     1,
     OK,
     init_graph_doc_hops,
     call_graph_doc_hops,
     {PTR("graph", INV), SZN("n_sel", OK, RNG, "sel"), PTR("sel", INV), PTR("window", OK),
      PTR("out", INV), SZN("capacity", SHP, RNG, "out"), PTR("n", INV)}},
    {"rv_graph_similar_docs",
     1,
     OK,
     init_graph_similar,
     call_graph_similar_docs,
     {PTR("graph", INV), SZN("n_sel", OK, RNG, "sel"), PTR("sel", INV), PTR("query", INV),
      SZ("max_new", OK, RNG), PTR("window", OK), PTR("out", INV), PTR("scores", INV),
      SZ("capacity", SHP, RNG), PTR("n", INV)}},
    {"rv_graph_similar_entities",
     1,
     OK,
     init_graph_similar,
     call_graph_similar_entities,
     {PTR("graph", INV), SZN("n_sel", OK, RNG, "sel"), PTR("sel", INV), PTR("query", INV),
      SZ("max_new", OK, RNG), PTR("window", OK), PTR("out", INV), PTR("scores", INV),
      SZ("capacity", SHP, RNG), PTR("n", INV)}},
    {"rv_graph_top_k",
     1,
     OK,
     init_graph_top_k,
     call_graph_top_k,
     {PTR("graph", INV), PTR("query", INV), SZ("k", OK, RNG), PTR("window", OK), PTR("out", INV),
      PTR("scores", INV), SZ("capacity", SHP, RNG), PTR("n", INV)}},
    {"rv_graph_score_docs",
     1,
     OK,
     init_graph_score_docs,
     call_graph_score_docs,
     {PTR("graph", INV), PTR("query", INV), SZN("n", OK, RNG, "docs scores"), PTR("docs", INV),
      PTR("scores", INV)}},

    /* hashing.h */
    {"rv_hasher_options_init",
     0,
     384,
     init_hasher_options,
     call_hasher_options_init,
     {PTR("opt", -1)}},
    {"rv_hasher_create",
     1,
     OK,
     init_hasher_create,
     call_hasher_create,
     {PTR("opt", INV), PTR("out", INV)}},
    {"rv_hasher_free", 0, 0, init_hasher_own, call_hasher_free, {PTR("h", 0)}},
    {"rv_hasher_dim", 0, 8, init_hasher, call_hasher_dim, {PTR("h", 0)}},
    {"rv_hasher_id", 0, 1, init_hasher, call_hasher_id, {PTR("h", 0)}},
    {"rv_hasher_embed",
     1,
     OK,
     init_hasher_embed,
     call_hasher_embed,
     {PTR("h", INV), PTR("text", INV), SZN("len", OK, RNG, "text"), PTR("out", INV)}},
    {"rv_hasher_embed_batch",
     1,
     OK,
     init_hasher_embed_batch,
     call_hasher_embed_batch,
     {PTR("h", INV), PTR("data", INV), PTR("offsets", INV), SZN("n", OK, RNG, "data offsets out"),
      PTR("out", INV)}},

    /* encoder.h */
    {"rv_encoder_create",
     1,
     OK,
     init_encoder_create,
     call_encoder_create,
     {PTR("spec", INV), PTR("out", INV)}},
    {"rv_encoder_free", 0, 0, init_encoder_own, call_encoder_free, {PTR("enc", 0)}},
    {"rv_encoder_kernel", 0, 1, init_encoder, call_encoder_kernel, {PTR("enc", 0)}},
    {"rv_encoder_dim", 0, 64, init_encoder, call_encoder_dim, {PTR("enc", 0)}},
    {"rv_encoder_encode",
     1,
     OK,
     init_encoder_encode,
     call_encoder_encode,
     {PTR("enc", INV), SZN("n", OK, RNG, "offsets ids out"), PTR("offsets", INV), PTR("ids", INV),
      PTR("type_ids", OK), PTR("out", INV)}},

    /* records.h */
    {"rv_unit_vector",
     1,
     OK,
     init_unit_vector,
     call_unit_vector,
     {PTR("x", INV), SZN("n", OK, RNG, "x out"), PTR("out", INV)}},
    {"rv_any_nonzero", 0, 1, init_unit_vector, call_any_nonzero, {PTR("x", 0), SZ("n", 0, 0)}},
    {"rv_records_check",
     1,
     OK,
     init_records_check,
     call_records_check,
     {PTR("table", INV), PTR("table->ids", INV), PTR("table->artifact", INV),
      PTR("table->kind", INV), PTRM("table->texts.offsets", INV, "texts.offsets"),
      SZM("table->n_records", INV, RNG, ""), SZM("table->n_artifacts", INV, RNG, "")}},
    {"rv_records_hits",
     1,
     OK,
     init_records_hits,
     call_records_hits,
     {PTR("table", INV), SZN("n", OK, RNG, "ids scores pos"), PTR("ids", INV), PTR("scores", OK),
      PTR("pos", OK), SZ("k", INV, OK), PTR("at", INV), PTR("rank", INV), PTR("n_hits", INV),
      PTR("verdict", INV)}},
    {"rv_records_union",
     1,
     OK,
     init_records_union,
     call_records_union,
     {SZM("n_records", RNG, OK, "out of range"), SZN("n_a", OK, RNG, "a"), PTR("a", INV),
      SZN("n_b", OK, RNG, "b"), PTR("b", INV), PTR("u", INV), PTR("rank_a", INV),
      PTR("rank_b", INV), PTR("n_u", INV)}},
    {"rv_records_rrf",
     1,
     OK,
     init_records_rrf,
     call_records_rrf,
     {SZN("n", OK, RNG, "rank_a rank_b out"), PTR("rank_a", INV), PTR("rank_b", INV),
      PTR("out", INV)}},
    {"rv_records_blend_params_init",
     0,
     1,
     init_records_blend_params,
     call_records_blend_params_init,
     {PTR("p", -1)}},
    {"rv_records_blend",
     1,
     OK,
     init_records_blend,
     call_records_blend,
     {PTR("params", INV), SZN("n", OK, RNG, "ids rank_a rank_b out"), PTR("ids", INV),
      PTR("rank_a", INV), PTR("rank_b", INV), SZ("n_a", INV, RNG), PTR("scores_a", INV),
      SZ("n_b", INV, RNG), PTR("scores_b", INV), PTR("out", INV)}},
    {"rv_records_search_params_init",
     0,
     10,
     init_records_search_params,
     call_records_search_params_init,
     {PTR("p", -1)}},
    {"rv_records_search",
     1,
     OK,
     init_records_search,
     call_records_search,
     {PTR("table", INV), PTR("index", INV), PTR("params", INV), PTR("query", INV), PTR("at", INV),
      PTR("rank", INV), PTR("scores", INV), PTR("n_hits", INV), PTR("verdict", INV),
      SZ("params->k", INV, OK)}},
};

#define N_CASES (sizeof CASES / sizeof CASES[0])

/* ------------------------------------------------------------- the driver */

static sw g_sw; /* one call's arguments (large: static) */

static const char *msg_of(const sw_arg *a) {
    if (a->msg) return a->msg;
    const char *arrow = strstr(a->name, "->");
    return arrow ? arrow + 2 : a->name;
}

/* Index of pointer `name` among the case's pointer lines, or -1. */
static int ptr_index(const sw_case *c, const char *name, size_t len) {
    int pi = 0;
    for (const sw_arg *a = c->args; a->name; a++) {
        if (a->kind != 'p') continue;
        if (strlen(a->name) == len && strncmp(a->name, name, len) == 0) return pi;
        pi++;
    }
    return -1;
}

/* One call with the arguments the case's init gives, changed by `change`
** (pointer index pi set NULL, or size index zi set to zval); returns the
** result.  what: a label for failure messages. */
static int64_t sweep_call(const sw_case *c, int pi, int zi, size_t zval, const char *zero_nulls) {
    memset(&g_sw, 0, sizeof g_sw);
    c->init(&g_sw);
    if (pi >= 0) g_sw.p[pi] = NULL;
    if (zi >= 0) {
        g_sw.z[zi] = zval;
        for (const char *q = zero_nulls; q && *q;) {
            size_t len = strcspn(q, " ");
            int k = ptr_index(c, q, len);
            if (k >= 0) g_sw.p[k] = NULL;
            q += len;
            q += strspn(q, " ");
        }
    }
    rv_errmsg_clear();
    int64_t r = c->call(&g_sw);
    sw_release(&g_sw);
    return r;
}

static void check(const sw_case *c, const char *what, int64_t got, int64_t want, const char *msg) {
    rvt_n_checks++;
    if (got != want) {
        if (c->status)
            rvt_fail(__FILE__, __LINE__, "%s(%s): expected %s, got %s (%s)", c->fn, what,
                     rv_status_name((rv_status)want), rv_status_name((rv_status)got), rv_errmsg());
        else
            rvt_fail(__FILE__, __LINE__, "%s(%s): expected %lld, got %lld", c->fn, what,
                     (long long)want, (long long)got);
        return;
    }
    if (c->status && msg && *msg && (want == RV_E_INVALID_ARG || want == RV_E_RANGE)) {
        rvt_n_checks++;
        if (!strstr(rv_errmsg(), msg))
            rvt_fail(__FILE__, __LINE__, "%s(%s): the message \"%s\" does not name \"%s\"", c->fn,
                     what, rv_errmsg(), msg);
    }
}

static void sweep_case(const sw_case *c) {
    char what[96];
    /* the valid call */
    check(c, "valid arguments", sweep_call(c, -1, -1, 0, NULL), c->ok, NULL);
    int pi = 0, zi = 0;
    for (const sw_arg *a = c->args; a->name; a++) {
        if (a->kind == 'p') {
            snprintf(what, sizeof what, "%s = NULL", a->name);
            check(c, what, sweep_call(c, pi, -1, 0, NULL), a->a, msg_of(a));
            pi++;
            continue;
        }
        snprintf(what, sizeof what, "%s = 0", a->name);
        check(c, what, sweep_call(c, -1, zi, 0, NULL), a->a, msg_of(a));
        if (a->zero_nulls) {
            snprintf(what, sizeof what, "%s = 0, NULL %s", a->name, a->zero_nulls);
            check(c, what, sweep_call(c, -1, zi, 0, a->zero_nulls), a->a, msg_of(a));
        }
        snprintf(what, sizeof what, "%s = SIZE_MAX", a->name);
        check(c, what, sweep_call(c, -1, zi, SIZE_MAX, NULL), a->b, msg_of(a));
        zi++;
    }
    if (pi > MAXP || zi > MAXZ) FAILF("%s: more arguments than the sweep holds", c->fn);
}

static void test_sweep(void) {
    for (size_t i = 0; i < N_CASES; i++) sweep_case(&CASES[i]);
}

/* --------------------------------------------------- completeness check */

static const sw_case *find_case(const char *fn) {
    for (size_t i = 0; i < N_CASES; i++)
        if (strcmp(CASES[i].fn, fn) == 0) return &CASES[i];
    return NULL;
}

static int has_line(const sw_case *c, const char *name, char kind) {
    for (const sw_arg *a = c->args; a->name; a++)
        if (a->kind == kind && strcmp(a->name, name) == 0) return 1;
    return 0;
}

/* Remove comments from a declaration, in place. */
static void strip_comments(char *s) {
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '/' && r[1] == '*') {
            char *e = strstr(r + 2, "*/");
            if (!e) break;
            r = e + 2;
            *w++ = ' ';
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
}

/* The last identifier in [a, b). */
static void last_ident(const char *a, const char *b, char *out, size_t cap) {
    const char *e = b;
    while (e > a && !(e[-1] == '_' || (e[-1] >= '0' && e[-1] <= '9') ||
                      (e[-1] >= 'a' && e[-1] <= 'z') || (e[-1] >= 'A' && e[-1] <= 'Z')))
        e--;
    const char *s = e;
    while (s > a && (s[-1] == '_' || (s[-1] >= '0' && s[-1] <= '9') ||
                     (s[-1] >= 'a' && s[-1] <= 'z') || (s[-1] >= 'A' && s[-1] <= 'Z')))
        s--;
    size_t n = (size_t)(e - s) < cap - 1 ? (size_t)(e - s) : cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

/* Check one declaration ("RV_API ... name(params);", comments removed)
** against the table; *n_decls counts them. */
static void check_decl(const char *header, char *decl, size_t *n_decls) {
    char *open = strchr(decl, '('), *close = strrchr(decl, ')');
    if (!open || !close) FAILF("%s: cannot read \"%.60s\"", header, decl);
    char fn[96], name[96];
    last_ident(decl, open, fn, sizeof fn);
    (*n_decls)++;
    const sw_case *c = find_case(fn);
    if (!c) FAILF("%s: %s has no entry in the sweep (tests/c/test_api_sweep.c CASES)", header, fn);
    /* the parameters, split at top-level commas */
    int seen_p = 0, seen_z = 0;
    for (char *a = open + 1; a < close;) {
        char *e = a;
        int depth = 0;
        while (e < close && (depth || *e != ',')) {
            if (*e == '(') depth++;
            if (*e == ')') depth--;
            e++;
        }
        while (*a == ' ' || *a == '\n' || *a == '\t') a++;
        size_t len = (size_t)(e - a);
        char param[256];
        if (len >= sizeof param) len = sizeof param - 1;
        memcpy(param, a, len);
        param[len] = '\0';
        if (strcmp(param, "void") != 0 && len > 0) {
            last_ident(param, param + len, name, sizeof name);
            int is_ptr = strchr(param, '*') != NULL;
            int is_size = !is_ptr && (strncmp(param, "size_t ", 7) == 0 ||
                                      strncmp(param, "const size_t ", 13) == 0);
            if (is_ptr) {
                seen_p++;
                if (!has_line(c, name, 'p'))
                    FAILF("%s: %s: pointer argument %s has no line in the sweep", header, fn, name);
            } else if (is_size) {
                seen_z++;
                if (!has_line(c, name, 'z'))
                    FAILF("%s: %s: size argument %s has no line in the sweep", header, fn, name);
            }
        }
        a = e + 1;
    }
    /* and every line names an argument (or a field of one) */
    int lines = 0;
    for (const sw_arg *a = c->args; a->name; a++) {
        if (strstr(a->name, "->")) continue;
        lines++;
        char pat[100];
        snprintf(pat, sizeof pat, "%s", a->name);
        int found = 0;
        for (char *q = strstr(open, pat); q && q < close; q = strstr(q + 1, pat)) {
            char before = q[-1], after = q[strlen(pat)];
            int edge_b = !(before == '_' || (before >= 'a' && before <= 'z'));
            int edge_a = !(after == '_' || (after >= 'a' && after <= 'z'));
            if (edge_b && edge_a) found = 1;
        }
        if (!found) FAILF("%s: %s: the sweep's line %s names no argument", header, fn, a->name);
    }
    if (lines != seen_p + seen_z)
        FAILF("%s: %s: %d pointer and size arguments, %d lines in the sweep", header, fn,
              seen_p + seen_z, lines);
}

static void test_every_function_is_swept(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rowvoi", RV_INCLUDE_DIR);
    DIR *d = opendir(dir);
    if (!d) FAILF("cannot open %s", dir);
    size_t n_decls = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t nl = strlen(ent->d_name);
        if (nl < 3 || strcmp(ent->d_name + nl - 2, ".h") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            closedir(d);
            FAILF("cannot read %s", path);
        }
        static char text[1 << 18];
        size_t got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[got] = '\0';
        for (char *q = text; (q = strstr(q, "RV_API ")); q++) {
            if (q != text && q[-1] != '\n') continue; /* only declarations that open a line */
            char *semi = strchr(q, ';');
            if (!semi) break;
            char decl[2048];
            size_t len =
                (size_t)(semi - q) < sizeof decl - 1 ? (size_t)(semi - q) : sizeof decl - 1;
            memcpy(decl, q, len);
            decl[len] = '\0';
            strip_comments(decl);
            check_decl(ent->d_name, decl, &n_decls);
        }
    }
    closedir(d);
    /* no entry for a function the headers no longer declare */
    EXPECT_EQ(n_decls, N_CASES);
    EXPECT_TRUE(n_decls > 100);
}

/* ------------------------------------------------- the bugs it was made for */

/* rv_flat_rescore wrote k slots per query whatever k was: SIZE_MAX ran past
** the caller's buffer, while rv_flat_search refused the same k.  Both now
** refuse it with the same status before writing anything. */
static void test_flat_k_bounded_alike(void) {
    int64_t ids[4] = {7, 7, 7, 7}, cand[2] = {10, 11};
    float scores[4] = {0}, q[DIM] = {1, 0, 0, 0};
    size_t found[1] = {99}, nf = 99;
    rv_flat_search_params prm;
    rv_flat_search_params_init(&prm);
    prm.k = SIZE_MAX;
    EXPECT_STATUS(RV_E_RANGE, rv_flat_search(g_fl, &prm, 1, q, ids, scores, &nf));
    EXPECT_STR_CONTAINS(rv_errmsg(), "k");
    EXPECT_STATUS(RV_E_RANGE,
                  rv_flat_rescore(g_fl, 1, q, 2, cand, SIZE_MAX, 1, ids, scores, found));
    EXPECT_STR_CONTAINS(rv_errmsg(), "k");
    EXPECT_EQ(ids[0], 7); /* nothing written */
    EXPECT_EQ(found[0], 99);
    /* the largest k that an array can hold is accepted by both (the results
    ** are min(k, live) and the rest of the slots are padding; a 4-slot
    ** buffer holds k = 4) */
    prm.k = 4;
    EXPECT_OK(rv_flat_search(g_fl, &prm, 1, q, ids, scores, &nf));
    EXPECT_EQ(nf, 3);
    EXPECT_OK(rv_flat_rescore(g_fl, 1, q, 2, cand, 4, 1, ids, scores, found));
    EXPECT_EQ(found[0], 2);
    EXPECT_EQ(ids[2], -1);
    /* n_queries * k that overflows size_t is refused, not wrapped */
    prm.k = (SIZE_MAX >> 4) + 1;
    EXPECT_STATUS(RV_E_RANGE, rv_flat_search(g_fl, &prm, 32, q, ids, scores, &nf));
    EXPECT_STATUS(RV_E_RANGE, rv_flat_rescore(g_fl, 32, q, 2, cand, (SIZE_MAX >> 4) + 1, 1, ids,
                                              scores, found));
}

/* The three functions that crashed on NULL. */
static void test_null_crashers(void) {
    rv_rng_seed(NULL, 1);
    rv_rng_seed_stream(NULL, 1, 2);
    EXPECT_EQ(rv_rng_next(NULL), 0);
    EXPECT_EQ(rv_rng_below(NULL, 10), 0);
    EXPECT_TRUE(rv_rng_uniform(NULL) == 0.0);
    EXPECT_EQ(rv_bitset_count(NULL, 4), 0);
    EXPECT_EQ(rv_bitset_count_and(NULL, NULL, 4), 0);
    EXPECT_EQ(rv_bitset_count_andnot(NULL, NULL, 4), 0);
}

/* A facts walk sized its per-subject table by max_edges: max_edges =
** SIZE_MAX looped forever doubling a table size that wrapped to 0.  Now
** max_edges is bounded like every count of results, and the table by the
** edges the graph has. */
static void test_facts_max_edges(void) {
    rv_graph_facts_params p;
    rv_graph_facts_init(&p);
    int64_t seeds[1] = {0}, edges[4];
    size_t n = 99;
    p.max_edges = SIZE_MAX;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_facts(g_gr, &p, 1, seeds, edges, NULL, SIZE_MAX >> 4, &n));
    EXPECT_STR_CONTAINS(rv_errmsg(), "max_edges");
    /* a large but possible max_edges on a two-edge graph needs no large table */
    p.max_edges = (size_t)1 << 40;
    EXPECT_OK(rv_graph_facts(g_gr, &p, 1, seeds, edges, NULL, (size_t)1 << 40, &n));
    EXPECT_EQ(n, 2);
}

int main(void) {
    fixtures_make();
    RUN_TEST(test_every_function_is_swept);
    RUN_TEST(test_sweep);
    RUN_TEST(test_flat_k_bounded_alike);
    RUN_TEST(test_null_crashers);
    RUN_TEST(test_facts_max_edges);
    fixtures_free();
    return RV_TEST_SUMMARY();
}
