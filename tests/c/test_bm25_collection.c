/*
** BM25 collection statistics (rv_bm25_set_collection_stats): the documents
** of one index split over three shard indexes, each given the statistics of
** the whole collection (N, summed lengths, every term's df by the shard's
** own term ids), score every document exactly as the whole index does, bit
** for bit, pruned and exhaustive; explain reports the collection's df; bad
** statistics are refused and leave the index as it was; any change of the
** index returns it to its own statistics.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rv_test.h"

static const char *const words[] = {"wing",  "lift", "drag",  "pipe", "heat",  "flow",
                                    "shock", "wave", "fluid", "thin", "speed", "flutter"};
#define NW  (sizeof words / sizeof words[0])
#define ND  120
#define NSH 3

static char docs[ND][128];

static void make_docs(void) {
    uint64_t x = 88172645463325252ull;
    for (int d = 0; d < ND; d++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int n = 1 + (int)(x % 9);
        docs[d][0] = 0;
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* skewed: low words more often */
            size_t w = (size_t)((x % NW) * (x % NW) / NW);
            strcat(docs[d], words[w]);
            strcat(docs[d], " ");
        }
    }
}

static rv_bm25 *index_of(int shard) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    rv_bm25_params p;
    rv_bm25_params_init(&p);
    rv_bm25 *ix = NULL;
    if (rv_bm25_create(&o, &p, &ix) != RV_OK) return NULL;
    const char *texts[ND];
    size_t lens[ND];
    int64_t ids[ND];
    size_t n = 0;
    for (int d = 0; d < ND; d++) {
        if (shard >= 0 && d % NSH != shard) continue;
        texts[n] = docs[d];
        lens[n] = strlen(docs[d]);
        ids[n++] = d;
    }
    if (rv_bm25_add(ix, n, texts, lens, ids, NULL, NULL, NULL) != RV_OK) {
        rv_bm25_free(ix);
        return NULL;
    }
    return ix;
}

/* The df of a term (by its bytes) in ix, 0 when absent. */
static uint64_t df_of(const rv_bm25 *ix, const char *t, size_t n) {
    uint32_t id = 0;
    int found = 0;
    uint64_t df = 0;
    if (rv_bm25_lookup(ix, t, n, &id, &found) != RV_OK || !found) return 0;
    if (rv_bm25_doc_freq(ix, id, &df) != RV_OK) return 0;
    return df;
}

/* dfs[t] for every term id t of shard: the summed df over all shards. */
static uint64_t *collection_dfs(rv_bm25 *shards[NSH], int s, size_t *n_terms) {
    rv_bm25_info info;
    if (rv_bm25_get_info(shards[s], &info) != RV_OK) return NULL;
    uint64_t *dfs = calloc(info.n_terms ? info.n_terms : 1, sizeof *dfs);
    for (uint32_t t = 0; dfs && t < info.n_terms; t++) {
        const char *term = NULL;
        size_t len = 0;
        if (rv_bm25_term(shards[s], t, &term, &len) != RV_OK) break;
        for (int o = 0; o < NSH; o++) dfs[t] += df_of(shards[o], term, len);
    }
    *n_terms = info.n_terms;
    return dfs;
}

static void test_shards_score_as_one_index(void) {
    make_docs();
    rv_bm25 *whole = index_of(-1), *sh[NSH];
    ASSERT_TRUE(whole != NULL);
    uint64_t n = 0, total = 0;
    for (int s = 0; s < NSH; s++) {
        sh[s] = index_of(s);
        ASSERT_TRUE(sh[s] != NULL);
        rv_bm25_info i;
        ASSERT_OK(rv_bm25_get_info(sh[s], &i));
        n += i.n_live;
        total += i.total_len;
    }
    for (int s = 0; s < NSH; s++) {
        size_t nt = 0;
        uint64_t *dfs = collection_dfs(sh, s, &nt);
        ASSERT_TRUE(dfs != NULL);
        ASSERT_OK(rv_bm25_set_collection_stats(sh[s], n, total, dfs, nt));
        free(dfs);
    }
    static const char *const queries[] = {"wing lift", "shock wave fluid", "heat", "flutter speed",
                                          "pipe pipe flow drag thin"};
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        int64_t wid[ND], id[ND];
        float wsc[ND], sc[ND];
        size_t wn = 0, nf = 0;
        ASSERT_OK(rv_bm25_search(whole, queries[q], strlen(queries[q]), ND, RV_BM25_EXHAUSTIVE,
                                 NULL, wid, wsc, &wn, NULL));
        float want[ND];
        for (int d = 0; d < ND; d++) want[d] = -1.0f;
        for (size_t i = 0; i < wn; i++) want[wid[i]] = wsc[i];
        size_t total_found = 0;
        for (int s = 0; s < NSH; s++) {
            for (unsigned flags = 0; flags <= RV_BM25_EXHAUSTIVE; flags += RV_BM25_EXHAUSTIVE) {
                ASSERT_OK(rv_bm25_search(sh[s], queries[q], strlen(queries[q]), ND, flags, NULL, id,
                                         sc, &nf, NULL));
                for (size_t i = 0; i < nf; i++) {
                    EXPECT_EQ(id[i] % NSH, s);
                    EXPECT_TRUE(memcmp(&sc[i], &want[id[i]], sizeof(float)) == 0);
                }
                /* the top 3 of a pruned search are the top 3 of the whole */
                size_t k3 = 0;
                ASSERT_OK(rv_bm25_search(sh[s], queries[q], strlen(queries[q]), 3, flags, NULL, id,
                                         sc, &k3, NULL));
                for (size_t i = 0; i < k3; i++) EXPECT_TRUE(sc[i] == want[id[i]]);
            }
            total_found += nf;
        }
        EXPECT_EQ(total_found, wn);
    }
    /* explain: the collection's df and idf */
    rv_bm25_explain_row rows[4], wrows[4];
    size_t nr = 0, wnr = 0;
    float score = 0, wscore = 0;
    ASSERT_OK(rv_bm25_explain(sh[1], "wing", 4, 1, rows, 4, &nr, &score, NULL));
    ASSERT_OK(rv_bm25_explain(whole, "wing", 4, 1, wrows, 4, &wnr, &wscore, NULL));
    EXPECT_EQ(nr, wnr);
    EXPECT_EQ(rows[0].df, wrows[0].df);
    EXPECT_TRUE(rows[0].idf == wrows[0].idf);
    EXPECT_TRUE(score == wscore);
    /* an add returns the shard to its own statistics */
    const char *extra = "wing";
    size_t elen = 4;
    int64_t eid = 1000;
    ASSERT_OK(rv_bm25_add(sh[1], 1, &extra, &elen, &eid, NULL, NULL, NULL));
    ASSERT_OK(rv_bm25_explain(sh[1], "wing", 4, 1000, rows, 4, &nr, &score, NULL));
    EXPECT_EQ(rows[0].df, df_of(sh[1], "wing", 4));
    for (int s = 0; s < NSH; s++) rv_bm25_free(sh[s]);
    rv_bm25_free(whole);
}

static void test_bad_statistics_refused(void) {
    make_docs();
    rv_bm25 *ix = index_of(0);
    ASSERT_TRUE(ix != NULL);
    rv_bm25_info i;
    ASSERT_OK(rv_bm25_get_info(ix, &i));
    uint64_t *dfs = calloc(i.n_terms, sizeof *dfs);
    ASSERT_TRUE(dfs != NULL);
    for (uint32_t t = 0; t < i.n_terms; t++) ASSERT_OK(rv_bm25_doc_freq(ix, t, &dfs[t]));
    int64_t id[4];
    float before[4], after[4];
    size_t nb = 0, na = 0;
    ASSERT_OK(rv_bm25_search(ix, "wing lift", 9, 4, 0, NULL, id, before, &nb, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_set_collection_stats(NULL, 1, 1, dfs, i.n_terms));
    EXPECT_STATUS(RV_E_SHAPE,
                  rv_bm25_set_collection_stats(ix, i.n_live, i.total_len, dfs, i.n_terms - 1));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_bm25_set_collection_stats(ix, i.n_live - 1, i.total_len, dfs, i.n_terms));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_bm25_set_collection_stats(ix, i.n_live, i.total_len - 1, dfs, i.n_terms));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_bm25_set_collection_stats(ix, i.n_live, i.total_len, NULL, i.n_terms));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_set_collection_stats(ix, 0, 5, NULL, 0));
    dfs[0] = 0; /* below the index's own df */
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_bm25_set_collection_stats(ix, i.n_live, i.total_len, dfs, i.n_terms));
    EXPECT_STR_CONTAINS(rv_errmsg(), "dfs[0]");
    dfs[0] = i.n_live + 1; /* above N */
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_bm25_set_collection_stats(ix, i.n_live, i.total_len, dfs, i.n_terms));
    /* refused: the scores are the index's own still */
    ASSERT_OK(rv_bm25_search(ix, "wing lift", 9, 4, 0, NULL, id, after, &na, NULL));
    EXPECT_EQ(na, nb);
    for (size_t k = 0; k < na && k < nb; k++) EXPECT_TRUE(after[k] == before[k]);
    /* own statistics given as collection statistics: the same scores; 0 drops them */
    for (uint32_t t = 0; t < i.n_terms; t++) ASSERT_OK(rv_bm25_doc_freq(ix, t, &dfs[t]));
    ASSERT_OK(rv_bm25_set_collection_stats(ix, i.n_live, i.total_len, dfs, i.n_terms));
    ASSERT_OK(rv_bm25_search(ix, "wing lift", 9, 4, 0, NULL, id, after, &na, NULL));
    for (size_t k = 0; k < na && k < nb; k++) EXPECT_TRUE(after[k] == before[k]);
    ASSERT_OK(rv_bm25_set_collection_stats(ix, 10 * i.n_live, 10 * i.total_len, dfs, i.n_terms));
    ASSERT_OK(rv_bm25_search(ix, "wing lift", 9, 4, 0, NULL, id, after, &na, NULL));
    EXPECT_TRUE(after[0] != before[0]);
    ASSERT_OK(rv_bm25_set_collection_stats(ix, 0, 0, NULL, 0));
    ASSERT_OK(rv_bm25_search(ix, "wing lift", 9, 4, 0, NULL, id, after, &na, NULL));
    for (size_t k = 0; k < na && k < nb; k++) EXPECT_TRUE(after[k] == before[k]);
    free(dfs);
    rv_bm25_free(ix);
}

int main(void) {
    RUN_TEST(test_shards_score_as_one_index);
    RUN_TEST(test_bad_statistics_refused);
    return RV_TEST_SUMMARY();
}
