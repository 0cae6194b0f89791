/*
** Saving and loading BM25 indexes (format version 2, little-endian).
**
**   offset  size
**   0       8    magic "RVBM25IX"
**   8       4    format version (RV_BM25_FORMAT_VERSION)
**   12      4    header size (32)
**   16      8    payload size P
**   24      4    analyzer version (RV_ANALYZER_VERSION)
**   28      4    0
**   32      P    payload, sections padded to 8-byte boundaries:
**                params: u32 variant, u32 0, f64 k1, f64 b, f64 delta
**                analyzer: u8 lowercase, strip_accents, stopwords, stem,
**                          u32 min_token_len, max_token_len, utf8
**                counts: u64 n_docs, n_terms, n_postings, n_over, pool_len,
**                        i64 next_id
**                u32 doc_len[n_docs]; u8 doc_state[n_docs]; i64 ext[n_docs]
**                u64 str_off[n_terms + 1]; pool bytes[pool_len]
**                u64 offsets[n_terms + 1]   postings of term t, in id order
**                u32 docs[n_postings]; u8 tfs[n_postings] (255: see overflow)
**                u64 over_pos[n_over]; u32 over_tf[n_over]
**   32+P    4    CRC-32C of bytes [0, 32 + P)
**   36+P    4    0
**
** Documents are listed by slot (bm25_internal.h) with their caller id.
** Format 1 (before caller ids) is refused with RV_E_VERSION and a message
** saying to rebuild: its documents carried no ids to carry over.
**
** Loading checks, in order: magic, format version, sizes, checksum,
** analyzer version, then every structural invariant the search code relies
** on (monotone offsets, increasing in-range slots, tf >= 1, the overflow
** table, unique valid-UTF-8 terms, document lengths equal to the sum of
** their term frequencies, caller ids in range with at most one live slot
** per id and every earlier slot of an id deleted, next_id above every id).
** Statistics (N, total length, document frequencies) are recomputed from
** the live documents, never read.  A file that passes is as safe to search
** as one built in memory; one that does not gives RV_E_CORRUPT or
** RV_E_VERSION.  The posting arrays of a loaded index stay inside the file
** image (no copy).
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/atomic_file.h"
#include "bm25_internal.h"

static const char rv__magic[8] = {'R', 'V', 'B', 'M', '2', '5', 'I', 'X'};
#define RV__HEADER  32u
#define RV__TRAILER 8u

/* --------------------------------------------------------------- writer */

/* Bytes go to a caller buffer (buf) or a file descriptor (fd >= 0) through
** a staging buffer; the checksum runs over everything written. */
typedef struct {
    unsigned char *buf;
    uint64_t cap;
    int fd;
    unsigned char *stage;
    size_t staged, stage_cap;
    uint64_t pos;
    uint32_t crc;
    const rv__crc_table *tab;
    int err; /* errno of a failed write */
} rv__writer;

static void rv__flush(rv__writer *w) {
    size_t off = 0;
    while (off < w->staged && !w->err) {
        ssize_t r = write(w->fd, w->stage + off, w->staged - off);
        if (r < 0) {
            if (errno == EINTR) continue;
            w->err = errno ? errno : EIO;
            break;
        }
        off += (size_t)r;
    }
    w->staged = 0;
}

static void rv__emit(rv__writer *w, const void *p, size_t n) {
    if (!n) return;
    w->crc = rv__crc32c(w->tab, w->crc, p, n);
    if (w->buf) {
        if (w->pos + n <= w->cap) memcpy(w->buf + w->pos, p, n);
    } else {
        const unsigned char *s = p;
        while (n && !w->err) {
            size_t room = w->stage_cap - w->staged;
            size_t m = n < room ? n : room;
            memcpy(w->stage + w->staged, s, m);
            w->staged += m;
            s += m;
            n -= m;
            w->pos += m;
            if (w->staged == w->stage_cap) rv__flush(w);
        }
        return;
    }
    w->pos += n;
}

static void rv__emit_u32(rv__writer *w, uint32_t v) {
    unsigned char b[4];
    rv__put_u32(b, v);
    rv__emit(w, b, 4);
}

static void rv__emit_u64(rv__writer *w, uint64_t v) {
    unsigned char b[8];
    rv__put_u64(b, v);
    rv__emit(w, b, 8);
}

static void rv__emit_f64(rv__writer *w, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    rv__emit_u64(w, u);
}

static void rv__emit_pad(rv__writer *w) {
    static const unsigned char zero[8] = {0};
    size_t r = (size_t)(rv__pad8(w->pos) - w->pos);
    rv__emit(w, zero, r);
}

/* Arrays of u32 / u64 in little-endian order, in chunks. */
static void rv__emit_u32s(rv__writer *w, const uint32_t *a, uint64_t n) {
    if (rv__host_le()) {
        rv__emit(w, a, (size_t)n * 4);
        return;
    }
    for (uint64_t i = 0; i < n; i++) rv__emit_u32(w, a[i]);
}

static void rv__emit_u64s(rv__writer *w, const uint64_t *a, uint64_t n) {
    if (rv__host_le()) {
        rv__emit(w, a, (size_t)n * 8);
        return;
    }
    for (uint64_t i = 0; i < n; i++) rv__emit_u64(w, a[i]);
}

#define RV__FIXED (32 + 16 + 48) /* params, analyzer, counts */

static uint64_t rv__payload_size(const rv_bm25 *ix, uint64_t n_post, uint64_t n_over) {
    uint64_t p = RV__FIXED;
    p += rv__pad8((uint64_t)ix->n_docs * 4) + rv__pad8(ix->n_docs) + (uint64_t)ix->n_docs * 8;
    p += ((uint64_t)ix->n_terms + 1) * 8 + rv__pad8(ix->n_terms ? ix->pool_len : 0);
    p += ((uint64_t)ix->n_terms + 1) * 8;
    p += rv__pad8(n_post * 4) + rv__pad8(n_post);
    p += n_over * 8 + rv__pad8(n_over * 4);
    return p;
}

/* The next list of term t at or after segment *si: 1 and its posting
** range [*a, *e), or 0 when no segment is left.  Terms are taken in
** ascending order; segpos[] holds each segment's place in its sorted term
** list and moves past t. */
static int rv__next_list(const rv_bm25 *ix, size_t *segpos, uint32_t t, size_t *si, uint64_t *a,
                         uint64_t *e) {
    for (; *si < ix->n_segs; (*si)++) {
        const rv__seg *s = ix->segs[*si];
        size_t j = segpos[*si];
        if (j >= s->n_terms || s->term_ids[j] != t) continue;
        segpos[*si] = j + 1;
        *a = s->offsets[j];
        *e = s->offsets[j + 1];
        return 1;
    }
    return 0;
}

/* Per segment, the index of the next term to write. */
static void rv__write_index(const rv_bm25 *ix, rv__writer *w, size_t *segpos, uint64_t n_post,
                            uint64_t n_over) {
    unsigned char h[RV__HEADER];
    memset(h, 0, sizeof h);
    memcpy(h, rv__magic, 8);
    rv__put_u32(h + 8, RV_BM25_FORMAT_VERSION);
    rv__put_u32(h + 12, RV__HEADER);
    rv__put_u64(h + 16, rv__payload_size(ix, n_post, n_over));
    rv__put_u32(h + 24, RV_ANALYZER_VERSION);
    rv__emit(w, h, sizeof h);
    /* params, analyzer */
    rv__emit_u32(w, (uint32_t)ix->par.variant);
    rv__emit_u32(w, 0);
    rv__emit_f64(w, ix->par.k1);
    rv__emit_f64(w, ix->par.b);
    rv__emit_f64(w, ix->par.delta);
    unsigned char fl[4] = {(unsigned char)ix->an.lowercase, (unsigned char)ix->an.strip_accents,
                           (unsigned char)ix->an.stopwords, (unsigned char)ix->an.stem};
    rv__emit(w, fl, 4);
    rv__emit_u32(w, ix->an.min_token_len);
    rv__emit_u32(w, ix->an.max_token_len);
    rv__emit_u32(w, (uint32_t)ix->an.utf8);
    /* counts */
    rv__emit_u64(w, ix->n_docs);
    rv__emit_u64(w, ix->n_terms);
    rv__emit_u64(w, n_post);
    rv__emit_u64(w, n_over);
    rv__emit_u64(w, ix->n_terms ? ix->pool_len : 0);
    rv__emit_u64(w, (uint64_t)ix->next_id);
    /* documents */
    rv__emit_u32s(w, ix->doc_len, ix->n_docs);
    rv__emit_pad(w);
    rv__emit(w, ix->doc_state, ix->n_docs);
    rv__emit_pad(w);
    rv__emit_u64s(w, (const uint64_t *)(const void *)ix->ext, ix->n_docs);
    /* dictionary */
    if (ix->n_terms) {
        rv__emit_u64s(w, ix->str_off, (uint64_t)ix->n_terms + 1);
        rv__emit(w, ix->pool, (size_t)ix->pool_len);
    } else {
        rv__emit_u64(w, 0);
    }
    rv__emit_pad(w);
    /* offsets: prefix sums of the postings stored per term (live and
    ** deleted documents), one merge over the segments' sorted term lists */
    uint64_t off = 0, a, e;
    rv__emit_u64(w, 0);
    for (size_t si = 0; si < ix->n_segs; si++) segpos[si] = 0;
    for (uint32_t t = 0; t < ix->n_terms; t++) {
        for (size_t si = 0; rv__next_list(ix, segpos, t, &si, &a, &e); si++) off += e - a;
        rv__emit_u64(w, off);
    }
    /* docs, then tfs, then overflow: three passes over the terms */
    for (int pass = 0; pass < 3; pass++) {
        for (size_t si = 0; si < ix->n_segs; si++) segpos[si] = 0;
        uint64_t outpos = 0;
        for (uint32_t t = 0; t < ix->n_terms; t++) {
            for (size_t si = 0; rv__next_list(ix, segpos, t, &si, &a, &e); si++) {
                const rv__seg *s = ix->segs[si];
                if (pass == 0) {
                    rv__emit_u32s(w, s->docs + a, e - a);
                } else if (pass == 1) {
                    rv__emit(w, s->tfs + a, (size_t)(e - a));
                } else {
                    for (uint64_t q = a; q < e; q++)
                        if (s->tfs[q] == RV__TF_ESCAPE) rv__emit_u64(w, outpos + (q - a));
                }
                outpos += e - a;
            }
        }
        if (pass < 2) rv__emit_pad(w);
    }
    /* overflow tfs, in the same order as their positions */
    for (size_t si = 0; si < ix->n_segs; si++) segpos[si] = 0;
    for (uint32_t t = 0; t < ix->n_terms; t++) {
        for (size_t si = 0; rv__next_list(ix, segpos, t, &si, &a, &e); si++) {
            const rv__seg *s = ix->segs[si];
            for (uint64_t q = a; q < e; q++)
                if (s->tfs[q] == RV__TF_ESCAPE) rv__emit_u32(w, rv__seg_tf(s, q));
        }
    }
    rv__emit_pad(w);
    unsigned char tr[RV__TRAILER];
    memset(tr, 0, sizeof tr);
    rv__put_u32(tr, w->crc);
    /* the checksum covers everything before it, not itself */
    uint32_t crc = w->crc;
    rv__emit(w, tr, sizeof tr);
    w->crc = crc;
}

static void rv__count(const rv_bm25 *ix, uint64_t *n_post, uint64_t *n_over) {
    *n_post = *n_over = 0;
    for (size_t i = 0; i < ix->n_segs; i++) {
        *n_post += ix->segs[i]->n_post;
        *n_over += ix->segs[i]->n_over;
    }
}

rv_status rv_bm25_save_buffer(const rv_bm25 *ix, void *buf, size_t capacity, size_t *size) {
    if (size) *size = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(size, "size");
    if (!buf && capacity)
        return rv__error(RV_E_INVALID_ARG, "buf is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(capacity, 1, "capacity");
    uint64_t n_post, n_over;
    rv__count(ix, &n_post, &n_over);
    uint64_t total = RV__HEADER + rv__payload_size(ix, n_post, n_over) + RV__TRAILER;
    if (total > SIZE_MAX) return rv__error(RV_E_RANGE, "the index is too large for memory");
    *size = (size_t)total;
    if (total > capacity)
        return rv__error(RV_E_SHAPE, "the index needs %zu bytes; capacity is %zu", (size_t)total,
                         capacity);
    size_t *segpos = rv__malloc((ix->n_segs ? ix->n_segs : 1) * sizeof *segpos);
    rv__crc_table *tab = rv__malloc(sizeof *tab);
    if (!segpos || !tab) {
        rv__free(segpos);
        rv__free(tab);
        return rv__nomem("the save buffers");
    }
    rv__crc32c_init(tab);
    rv__writer w;
    memset(&w, 0, sizeof w);
    w.buf = buf;
    w.cap = capacity;
    w.fd = -1;
    w.tab = tab;
    rv__write_index(ix, &w, segpos, n_post, n_over);
    rv__free(segpos);
    rv__free(tab);
    if (w.pos != total)
        return rv__error(RV_E_INTERNAL, "wrote %llu bytes, expected %llu",
                         (unsigned long long)w.pos, (unsigned long long)total);
    return RV_OK;
}

rv_status rv_bm25_save(const rv_bm25 *ix, const char *path) {
    return rv_bm25_save_mode(ix, path, -1);
}

rv_status rv_bm25_save_mode(const rv_bm25 *ix, const char *path, long mode) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(path, "path");
    if (mode > 0777)
        return rv__error(RV_E_INVALID_ARG, "mode %#lo: give permission bits only (at most 0777)",
                         (unsigned long)mode);
    size_t *segpos = rv__malloc((ix->n_segs ? ix->n_segs : 1) * sizeof *segpos);
    rv__crc_table *tab = rv__malloc(sizeof *tab);
    unsigned char *stage = rv__malloc((size_t)1 << 20);
    rv__atomic_file af = {-1, NULL, NULL, NULL};
    rv_status st = RV_OK;
    if (!segpos || !tab || !stage) {
        st = rv__nomem("the save buffers");
        goto done;
    }
    /* a temporary sibling, fsynced and renamed over path (core/atomic_file) */
    if ((st = rv__atomic_begin_mode(&af, path, mode)) != RV_OK) goto done;
    uint64_t n_post, n_over;
    rv__count(ix, &n_post, &n_over);
    rv__crc32c_init(tab);
    rv__writer w;
    memset(&w, 0, sizeof w);
    w.fd = af.fd;
    w.stage = stage;
    w.stage_cap = (size_t)1 << 20;
    w.tab = tab;
    rv__write_index(ix, &w, segpos, n_post, n_over);
    rv__flush(&w);
    if (w.err) {
        st = rv__error(RV_E_IO, "cannot write %s: %s", af.tmp, strerror(w.err));
        goto done;
    }
    st = rv__atomic_commit(&af);
done:
    rv__atomic_abort(&af); /* no-op after a commit */
    rv__free(segpos);
    rv__free(tab);
    rv__free(stage);
    return st;
}

/* --------------------------------------------------------------- reader */

typedef struct {
    const unsigned char *p;
    uint64_t size, pos;
} rv__reader;

/* Take n bytes (then pad to 8 when asked); NULL when the payload is short. */
static const unsigned char *rv__take(rv__reader *r, uint64_t n, int pad) {
    uint64_t need = pad ? rv__pad8(n) : n;
    if (need < n || need > r->size - r->pos) return NULL;
    const unsigned char *q = r->p + r->pos;
    r->pos += need;
    return q;
}

#define RV__CORRUPT(...) rv__error(RV_E_CORRUPT, __VA_ARGS__)

/* Load step 1: magic, format version, header fields, size, checksum and
** analyzer version; *payload_out gets the payload's size. */
static rv_status rv__load_header(const unsigned char *buf, uint64_t size, uint64_t *payload_out) {
    if (size < RV__HEADER + RV__TRAILER)
        return RV__CORRUPT("not a BM25 index: %llu bytes is shorter than the header",
                           (unsigned long long)size);
    if (memcmp(buf, rv__magic, 8) != 0) return RV__CORRUPT("not a BM25 index: bad magic number");
    uint32_t version = rv__get_u32(buf + 8);
    if (version == 1)
        return rv__error(RV_E_VERSION,
                         "BM25 index format version 1 was written before "
                         "documents had caller ids (this library reads version %d): rebuild "
                         "the index from its documents and save it again",
                         RV_BM25_FORMAT_VERSION);
    if (version != RV_BM25_FORMAT_VERSION)
        return rv__error(RV_E_VERSION,
                         "BM25 index format version %u; this library reads "
                         "version %d",
                         version, RV_BM25_FORMAT_VERSION);
    if (rv__get_u32(buf + 12) != RV__HEADER || rv__get_u32(buf + 28) != 0)
        return RV__CORRUPT("BM25 index header is damaged");
    uint64_t payload = rv__get_u64(buf + 16);
    *payload_out = payload;
    if (payload > size || size - payload != RV__HEADER + RV__TRAILER)
        return RV__CORRUPT("BM25 index is truncated or has trailing bytes: %llu bytes, header "
                           "says %llu",
                           (unsigned long long)size,
                           (unsigned long long)(payload + RV__HEADER + RV__TRAILER));
    rv__crc_table *tab = rv__malloc(sizeof *tab);
    if (!tab) return rv__nomem("the checksum table");
    rv__crc32c_init(tab);
    uint32_t crc = rv__crc32c(tab, 0, buf, (size_t)(RV__HEADER + payload));
    rv__free(tab);
    const unsigned char *trailer = buf + RV__HEADER + payload;
    if (crc != rv__get_u32(trailer) || rv__get_u32(trailer + 4) != 0)
        return RV__CORRUPT("BM25 index fails its checksum (the file is damaged)");
    uint32_t aver = rv__get_u32(buf + 24);
    if (aver != RV_ANALYZER_VERSION)
        return rv__error(RV_E_VERSION,
                         "BM25 index was built with analyzer version %u; this "
                         "library analyses text with version %d, so queries would not match",
                         aver, RV_ANALYZER_VERSION);
    return RV_OK;
}

/* The fixed fields and the section pointers of a checked image. */
typedef struct rv__image {
    rv_bm25_params par;
    rv_analyzer_options an;
    uint64_t n_docs, n_terms, n_post, n_over, pool_len;
    int64_t next_id;
    const unsigned char *p_len, *p_state, *p_ext, *p_stroff, *p_pool, *p_off, *p_docs, *p_tfs,
        *p_opos, *p_otf;
} rv__image;

/* Load step 2: the parameters, analyzer options and counts, and every
** section's place; the sections must fill the payload exactly. */
static rv_status rv__load_layout(const unsigned char *buf, uint64_t payload, rv__image *im) {
    rv__reader r = {buf + RV__HEADER, payload, 0};
    const unsigned char *q = rv__take(&r, RV__FIXED, 0);
    if (!q) return RV__CORRUPT("BM25 index payload is too short");
    im->par.variant = (rv_bm25_variant)rv__get_u32(q);
    uint64_t u;
    u = rv__get_u64(q + 8);
    memcpy(&im->par.k1, &u, 8);
    u = rv__get_u64(q + 16);
    memcpy(&im->par.b, &u, 8);
    u = rv__get_u64(q + 24);
    memcpy(&im->par.delta, &u, 8);
    memset(&im->an, 0, sizeof im->an);
    im->an.lowercase = q[32];
    im->an.strip_accents = q[33];
    im->an.stopwords = q[34];
    im->an.stem = q[35];
    im->an.min_token_len = rv__get_u32(q + 36);
    im->an.max_token_len = rv__get_u32(q + 40);
    im->an.utf8 = (rv_utf8_policy)rv__get_u32(q + 44);
    if (rv__get_u32(q + 4) != 0 || rv_bm25_params_check(&im->par) != RV_OK ||
        rv_analyzer_options_check(&im->an) != RV_OK)
        return RV__CORRUPT("BM25 index has invalid parameters or analyzer options");
    im->n_docs = rv__get_u64(q + 48);
    im->n_terms = rv__get_u64(q + 56);
    im->n_post = rv__get_u64(q + 64);
    im->n_over = rv__get_u64(q + 72);
    im->pool_len = rv__get_u64(q + 80);
    im->next_id = (int64_t)rv__get_u64(q + 88);
    if (im->n_docs > RV_BM25_MAX_DOCS || im->n_terms >= UINT32_MAX || im->n_post > payload ||
        im->n_over > im->n_post || im->pool_len > payload || im->n_docs > payload)
        return RV__CORRUPT("BM25 index has impossible sizes");
    if (im->next_id < 0 || (uint64_t)im->next_id > (uint64_t)RV_MAX_ID + 1)
        return RV__CORRUPT("BM25 index has an impossible next id");
    /* every section must fit: checked as the reader takes it */
    im->p_len = rv__take(&r, im->n_docs * 4, 1);
    im->p_state = rv__take(&r, im->n_docs, 1);
    im->p_ext = rv__take(&r, im->n_docs * 8, 0);
    im->p_stroff = rv__take(&r, (im->n_terms + 1) * 8, 0);
    im->p_pool = rv__take(&r, im->n_terms ? im->pool_len : 0, 1);
    im->p_off = rv__take(&r, (im->n_terms + 1) * 8, 0);
    im->p_docs = rv__take(&r, im->n_post * 4, 1);
    im->p_tfs = rv__take(&r, im->n_post, 1);
    im->p_opos = rv__take(&r, im->n_over * 8, 0);
    im->p_otf = rv__take(&r, im->n_over * 4, 1);
    if (!im->p_len || !im->p_state || !im->p_ext || !im->p_stroff || !im->p_pool || !im->p_off ||
        !im->p_docs || !im->p_tfs || !im->p_opos || !im->p_otf || r.pos != r.size)
        return RV__CORRUPT("BM25 index sections do not match its sizes");
    if (!im->n_terms && (im->pool_len || im->n_post))
        return RV__CORRUPT("BM25 index has postings but no terms");
    return RV_OK;
}

/* Load step 3: documents: lengths, states, caller ids (at most one live
** slot per id, and a later slot of an id only after the earlier was
** deleted). */
static rv_status rv__load_docs(rv_bm25 *ix, const rv__image *im) {
    rv_status st;
    if ((st = rv__bm25_reserve_docs(ix, im->n_docs)) != RV_OK) return st;
    if ((st = rv__idmap_reserve(ix, im->n_docs)) != RV_OK) return st;
    for (uint64_t d = 0; d < im->n_docs; d++) {
        ix->doc_len[d] = rv__get_u32(im->p_len + 4 * d);
        uint8_t s = im->p_state[d];
        int64_t id = (int64_t)rv__get_u64(im->p_ext + 8 * d);
        if (s > RV_BM25_DOC_PURGED) {
            st = RV__CORRUPT("BM25 index: document %llu has state %u", (unsigned long long)d, s);
            return st;
        }
        if (id < 0 || id > RV_MAX_ID || id >= im->next_id) {
            st = RV__CORRUPT("BM25 index: document %llu has id %lld", (unsigned long long)d,
                             (long long)id);
            return st;
        }
        uint32_t prev = rv__idmap_find(ix, id);
        if (prev != RV__NO_SLOT && ix->doc_state[prev] == RV_BM25_DOC_LIVE) {
            st =
                RV__CORRUPT("BM25 index: id %lld is filed under two live documents", (long long)id);
            return st;
        }
        ix->doc_state[d] = s;
        if (s != RV_BM25_DOC_LIVE) rv__mark_dead(ix, (uint32_t)d);
        ix->ext[d] = id;
        rv__idmap_put(ix, (uint32_t)d);
        if (ix->doc_len[d] > ix->max_dl) ix->max_dl = ix->doc_len[d];
        if (s == RV_BM25_DOC_LIVE) {
            ix->n_live++;
            ix->total_len += ix->doc_len[d];
        } else if (s == RV_BM25_DOC_TOMBSTONED) {
            ix->n_tombstoned++;
        }
    }
    ix->n_docs = (uint32_t)im->n_docs;
    ix->next_id = im->next_id;
    if ((st = rv__bm25_reserve_ltab(ix, ix->max_dl)) != RV_OK) return st;
    return RV_OK;
}

/* Load step 4: the dictionary: offsets from 0, valid UTF-8, no repeated
** term, and the strings fill the pool. */
static rv_status rv__load_dict(rv_bm25 *ix, const rv__image *im) {
    rv_status st;
    if (rv__get_u64(im->p_stroff) != 0) {
        st = RV__CORRUPT("BM25 index dictionary offsets do not start at 0");
        return st;
    }
    for (uint64_t t = 0; t < im->n_terms; t++) {
        uint64_t a = rv__get_u64(im->p_stroff + 8 * t), e = rv__get_u64(im->p_stroff + 8 * (t + 1));
        if (e <= a || e > im->pool_len) {
            st = RV__CORRUPT("BM25 index: term %llu has bad string offsets", (unsigned long long)t);
            return st;
        }
        const char *s = (const char *)im->p_pool + a;
        size_t len = (size_t)(e - a), i = 0;
        uint32_t cp;
        while (i < len)
            if (!rv__utf8_next((const unsigned char *)s, len, &i, &cp)) {
                st = RV__CORRUPT("BM25 index: term %llu is not valid UTF-8", (unsigned long long)t);
                return st;
            }
        uint32_t h = rv__hash_bytes(s, len), id;
        if (rv__dict_find(ix, s, len, h, &id)) {
            st = RV__CORRUPT("BM25 index: term %llu repeats term %u", (unsigned long long)t, id);
            return st;
        }
        if ((st = rv__dict_insert(ix, s, len, h, &id)) != RV_OK) return st;
    }
    if (im->n_terms && rv__get_u64(im->p_stroff + 8 * im->n_terms) != im->pool_len) {
        st = RV__CORRUPT("BM25 index dictionary strings do not fill the pool");
        return st;
    }
    return RV_OK;
}

/* Load step 5: the postings as one segment over all documents, arrays left
** in the image (seg comes zeroed and the caller frees it on failure; sums
** has n_docs zeroed slots).  Checks offsets, postings and overflow entries,
** and that each document's length is the sum of its term frequencies. */
static rv_status rv__load_postings(rv_bm25 *ix, const rv__image *im, rv__seg *seg, uint64_t *sums) {
    rv_status st;
    seg->doc_base = 0;
    seg->doc_end = (uint32_t)im->n_docs;
    seg->n_dead = (uint32_t)(im->n_docs - ix->n_live);
    seg->n_post = im->n_post;
    seg->n_over = im->n_over;
    size_t nt = 0;
    if (rv__get_u64(im->p_off) != 0) {
        st = RV__CORRUPT("BM25 index posting offsets do not start at 0");
        return st;
    }
    for (uint64_t t = 0; t < im->n_terms; t++) {
        uint64_t a = rv__get_u64(im->p_off + 8 * t), e = rv__get_u64(im->p_off + 8 * (t + 1));
        if (e < a || e > im->n_post) {
            st =
                RV__CORRUPT("BM25 index: term %llu has bad posting offsets", (unsigned long long)t);
            return st;
        }
        ix->df[t] = 0; /* counted from the live postings below */
        nt += e > a;
    }
    if (rv__get_u64(im->p_off + 8 * im->n_terms) != im->n_post) {
        st = RV__CORRUPT("BM25 index posting offsets do not cover the postings");
        return st;
    }
    seg->n_terms = nt;
    seg->term_ids = rv__malloc((nt ? nt : 1) * sizeof *seg->term_ids);
    seg->offsets = rv__malloc((nt + 1) * sizeof *seg->offsets);
    seg->over_pos = rv__malloc((im->n_over ? im->n_over : 1) * sizeof *seg->over_pos);
    seg->over_tf = rv__malloc((im->n_over ? im->n_over : 1) * sizeof *seg->over_tf);
    if (!seg->term_ids || !seg->offsets || !seg->over_pos || !seg->over_tf) {
        st = rv__nomem("the loaded index");
        return st;
    }
    if (rv__host_le()) {
        seg->docs = (uint32_t *)(void *)im->p_docs; /* 8-aligned within an aligned image */
    } else {
        seg->docs = rv__malloc((im->n_post ? im->n_post : 1) * sizeof *seg->docs);
        if (!seg->docs) {
            st = rv__nomem("the loaded index");
            return st;
        }
        for (uint64_t i = 0; i < im->n_post; i++) seg->docs[i] = rv__get_u32(im->p_docs + 4 * i);
    }
    seg->tfs = (uint8_t *)im->p_tfs;
    size_t k = 0;
    for (uint64_t t = 0; t < im->n_terms; t++) {
        uint64_t a = rv__get_u64(im->p_off + 8 * t), e = rv__get_u64(im->p_off + 8 * (t + 1));
        if (e == a) continue;
        seg->term_ids[k] = (uint32_t)t;
        seg->offsets[k++] = a;
        for (uint64_t i = a; i < e; i++) {
            uint32_t d = seg->docs[i];
            if (d >= im->n_docs || (i > a && d <= seg->docs[i - 1]) ||
                ix->doc_state[d] == RV_BM25_DOC_PURGED || im->p_tfs[i] == 0) {
                st = RV__CORRUPT("BM25 index: posting %llu of term %llu is invalid",
                                 (unsigned long long)(i - a), (unsigned long long)t);
                return st;
            }
            ix->df[t] += ix->doc_state[d] == RV_BM25_DOC_LIVE;
        }
    }
    seg->offsets[nt] = im->n_post;
    uint64_t n_escape = 0;
    for (uint64_t i = 0; i < im->n_post; i++) n_escape += im->p_tfs[i] == RV__TF_ESCAPE;
    if (n_escape != im->n_over) {
        st = RV__CORRUPT("BM25 index overflow table does not match its escapes");
        return st;
    }
    for (uint64_t i = 0; i < im->n_over; i++) {
        uint64_t pos = rv__get_u64(im->p_opos + 8 * i);
        uint32_t tf = rv__get_u32(im->p_otf + 4 * i);
        if (pos >= im->n_post || (i && pos <= seg->over_pos[i - 1]) ||
            im->p_tfs[pos] != RV__TF_ESCAPE || tf < RV__TF_ESCAPE) {
            st = RV__CORRUPT("BM25 index overflow entry %llu is invalid", (unsigned long long)i);
            return st;
        }
        seg->over_pos[i] = pos;
        seg->over_tf[i] = tf;
    }
    /* document lengths must equal the sum of their term frequencies */
    for (size_t i = 0; i < nt; i++)
        for (uint64_t p = seg->offsets[i]; p < seg->offsets[i + 1]; p++)
            sums[seg->docs[p]] += rv__seg_tf(seg, p);
    for (uint64_t d = 0; d < im->n_docs; d++) {
        if (ix->doc_state[d] != RV_BM25_DOC_PURGED && sums[d] != ix->doc_len[d]) {
            st = RV__CORRUPT("BM25 index: document %llu has length %u but %llu term occurrences",
                             (unsigned long long)d, ix->doc_len[d], (unsigned long long)sums[d]);
            return st;
        }
    }
    return RV_OK;
}

/* Load an image (buf, size bytes, 8-aligned) that owner will back: the
** steps above, then install the segment. */
static rv_status rv__load(const unsigned char *buf, uint64_t size, void *owner, rv_bm25 **out) {
    *out = NULL;
    uint64_t payload;
    rv__image im;
    rv_status st = rv__load_header(buf, size, &payload);
    if (st == RV_OK) st = rv__load_layout(buf, payload, &im);
    if (st != RV_OK) return st;

    rv_bm25 *ix = NULL;
    rv__seg *seg = NULL;
    uint64_t *sums = NULL;
    if ((st = rv_bm25_create(&im.an, &im.par, &ix)) != RV_OK) return st;
    if ((st = rv__load_docs(ix, &im)) != RV_OK) goto fail;
    if ((st = rv__load_dict(ix, &im)) != RV_OK) goto fail;
    seg = rv__calloc(1, sizeof *seg);
    sums = rv__calloc(im.n_docs ? im.n_docs : 1, sizeof *sums);
    if (!seg || !sums) {
        st = rv__nomem("the loaded index");
        goto fail;
    }
    if ((st = rv__load_postings(ix, &im, seg, sums)) != RV_OK) goto fail;
    rv__free(sums);
    sums = NULL;
    if ((st = rv__seg_finish(seg, ix->doc_len)) != RV_OK) goto fail;
    ix->segs = rv__malloc(sizeof *ix->segs);
    if (!ix->segs) {
        st = rv__nomem("the segment list");
        goto fail;
    }
    ix->segs[0] = seg;
    ix->n_segs = 1;
    if (rv__host_le())
        seg->blob = owner; /* the segment now owns the image */
    else
        rv__free(owner);
    rv__bm25_refresh(ix);
    *out = ix;
    return RV_OK;
fail:
    rv__free(sums);
    if (seg) {
        if (rv__host_le()) seg->docs = NULL; /* points into the image */
        seg->tfs = NULL;
        rv__seg_free(seg);
    }
    rv_bm25_free(ix);
    return st;
}

rv_status rv_bm25_load_buffer(const void *buf, size_t size, rv_bm25 **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    if (!buf && size) return rv__error(RV_E_INVALID_ARG, "buf is NULL but size = %zu", size);
    RV__CHECK_SIZE(size, 1, "size");
    /* copy into an 8-aligned image the index can own */
    unsigned char *img = rv__malloc(size ? size : 1);
    if (!img) return rv__nomem("the index image");
    if (size) memcpy(img, buf, size);
    rv_status st = rv__load(img, size, img, out);
    if (st != RV_OK) rv__free(img);
    return st;
}

rv_status rv_bm25_load_fd(int fd, const char *name, rv_bm25 **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    if (fd < 0) return rv__error(RV_E_INVALID_ARG, "fd = %d is not a file descriptor", fd);
    char fdname[32];
    if (!name) {
        snprintf(fdname, sizeof fdname, "file descriptor %d", fd);
        name = fdname;
    }
    uint64_t size;
    rv_status st = rv__regular_size(fd, name, &size);
    if (st) return st;
    unsigned char *img = rv__malloc(size ? (size_t)size : 1);
    if (!img) return rv__nomem("the index image");
    uint64_t got = 0;
    while (got < size) {
        ssize_t r = pread(fd, img + got, (size_t)(size - got), (off_t)got);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            rv__free(img);
            return rv__error(RV_E_IO, "cannot read %s: %s", name, strerror(e));
        }
        if (r == 0) break;
        got += (uint64_t)r;
    }
    st = rv__load(img, got, img, out);
    if (st != RV_OK) {
        rv__free(img);
        if (st == RV_E_CORRUPT || st == RV_E_VERSION) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", rv_errmsg());
            return rv__error(st, "%s: %s", name, msg);
        }
    }
    return st;
}

rv_status rv_bm25_load(const char *path, rv_bm25 **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    RV__NOT_NULL(path, "path");
    int fd = rv__open_read(path);
    if (fd < 0) return rv__error(RV_E_IO, "cannot open %s: %s", path, strerror(errno));
    rv_status st = rv_bm25_load_fd(fd, path, out);
    close(fd);
    return st;
}
