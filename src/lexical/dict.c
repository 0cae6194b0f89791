/*
** The term dictionary: term bytes -> dense term id.
**
** Open addressing with linear probing over a power-of-two table, kept at
** most half full.  A slot holds the term id + 1 (0 marks an empty slot),
** the 32-bit hash with the low byte replaced by the length (capped at 255),
** and the first 8 bytes of the term zero-padded: a term of at most 8 bytes
** is identified by the slot alone, so a lookup costs one cache miss
** instead of one per array it would otherwise visit.  Hashes are also kept
** per term, so growing the table never rehashes strings.  Terms are never
** removed
** (ids stay stable across deletes and compaction), except that a failed
** add rolls back the terms it introduced (rv__dict_truncate).
*/
#include <string.h>

#include "bm25_internal.h"

/* A 32-bit hash of a byte string: 8 bytes at a time through a
** multiply-xorshift mixer.  Not cryptographic; only needs to spread terms. */
uint32_t rv__hash_bytes(const char *s, size_t n) {
    const uint64_t m = 0x9E3779B97F4A7C15ULL;
    uint64_t h = 0x243F6A8885A308D3ULL ^ (n * m);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * m;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    for (size_t j = 0; i < n; i++, j++) w |= (uint64_t)(unsigned char)s[i] << (8 * j);
    h = (h ^ w) * m;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return (uint32_t)h;
}

static uint64_t rv__head8(const char *s, size_t n) {
    uint64_t w = 0;
    size_t m = n < 8 ? n : 8;
    for (size_t i = 0; i < m; i++) w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    return w;
}

static uint32_t rv__hash_len(uint32_t h, size_t n) {
    return (h & 0xFFFFFF00u) | (uint32_t)(n < 255 ? n : 255);
}

int rv__dict_find(const rv_bm25 *ix, const char *s, size_t n, uint32_t h, uint32_t *id) {
    if (!ix->slots) return 0;
    uint64_t head = rv__head8(s, n);
    uint32_t hl = rv__hash_len(h, n);
    uint64_t i = h & ix->slot_mask;
    for (;;) {
        const rv__slot *sl = &ix->slots[i];
        if (!sl->id1) return 0;
        if (sl->hash_len == hl && sl->head == head) {
            uint32_t t = sl->id1 - 1;
            if (n <= 8) { /* the slot holds all of it (length and bytes) */
                *id = t;
                return 1;
            }
            uint64_t a = ix->str_off[t], b = ix->str_off[t + 1];
            if (b - a == n && memcmp(ix->pool + a + 8, s + 8, n - 8) == 0) {
                *id = t;
                return 1;
            }
        }
        i = (i + 1) & ix->slot_mask;
    }
}

static void rv__slot_put(rv__slot *slots, uint64_t mask, uint32_t t, uint32_t h, const char *s,
                         size_t n) {
    uint64_t i = h & mask;
    while (slots[i].id1) i = (i + 1) & mask;
    slots[i].head = rv__head8(s, n);
    slots[i].id1 = t + 1;
    slots[i].hash_len = rv__hash_len(h, n);
}

static rv_status rv__dict_grow_slots(rv_bm25 *ix) {
    uint64_t cap = ix->slots ? (ix->slot_mask + 1) * 2 : 1024;
    rv__slot *slots = rv__calloc(cap, sizeof *slots);
    if (!slots) return rv__nomem("the term dictionary's hash table");
    uint64_t mask = cap - 1;
    for (uint32_t t = 0; t < ix->n_terms; t++) {
        uint64_t a = ix->str_off[t], b = ix->str_off[t + 1];
        rv__slot_put(slots, mask, t, ix->hashes[t], ix->pool + a, (size_t)(b - a));
    }
    rv__free(ix->slots);
    ix->slots = slots;
    ix->slot_mask = mask;
    return RV_OK;
}

/* Grow the per-term arrays to hold at least `need` terms. */
static rv_status rv__dict_grow_terms(rv_bm25 *ix, uint64_t need) {
    if (need <= ix->term_cap) return RV_OK;
    uint64_t cap = ix->term_cap ? (uint64_t)ix->term_cap * 2 : 1024;
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    if (cap < need) return rv__error(RV_E_RANGE, "more than %u distinct terms", UINT32_MAX - 1);
    uint64_t *so = rv__realloc(ix->str_off, (cap + 1) * sizeof *so);
    if (!so) return rv__nomem("the term dictionary");
    ix->str_off = so;
    uint32_t *hs = rv__realloc(ix->hashes, cap * sizeof *hs);
    if (!hs) return rv__nomem("the term dictionary");
    ix->hashes = hs;
    uint64_t *df = rv__realloc(ix->df, cap * sizeof *df);
    if (!df) return rv__nomem("the document frequencies");
    ix->df = df;
    rv__tmark *mk = rv__realloc(ix->marks, cap * sizeof *mk);
    if (!mk) return rv__nomem("the term counters");
    ix->marks = mk;
    ix->term_cap = (uint32_t)cap;
    return RV_OK;
}

rv_status rv__dict_insert(rv_bm25 *ix, const char *s, size_t n, uint32_t h, uint32_t *id) {
    if (ix->n_terms >= UINT32_MAX - 1)
        return rv__error(RV_E_RANGE, "more than %u distinct terms", UINT32_MAX - 1);
    rv_status st = rv__dict_grow_terms(ix, (uint64_t)ix->n_terms + 1);
    if (st != RV_OK) return st;
    if (!ix->slots || 2 * ((uint64_t)ix->n_terms + 1) > ix->slot_mask + 1) {
        if ((st = rv__dict_grow_slots(ix)) != RV_OK) return st;
    }
    if (ix->pool_len + n > ix->pool_cap) {
        uint64_t cap = ix->pool_cap ? ix->pool_cap * 2 : 8192;
        while (cap < ix->pool_len + n) cap *= 2;
        char *p = rv__realloc(ix->pool, cap);
        if (!p) return rv__nomem("the term dictionary's strings");
        ix->pool = p;
        ix->pool_cap = cap;
    }
    uint32_t t = ix->n_terms;
    if (t == 0) ix->str_off[0] = 0;
    memcpy(ix->pool + ix->pool_len, s, n);
    ix->pool_len += n;
    ix->str_off[t + 1] = ix->pool_len;
    ix->hashes[t] = h;
    ix->df[t] = 0;
    memset(&ix->marks[t], 0, sizeof ix->marks[t]);
    rv__slot_put(ix->slots, ix->slot_mask, t, h, s, n);
    ix->n_terms = t + 1;
    *id = t;
    return RV_OK;
}

/* Forget the terms with ids >= n_terms (a failed add's).  Linear probing
** cannot delete single entries, so the table is refilled in place (no
** allocation, so rolling back cannot fail). */
void rv__dict_truncate(rv_bm25 *ix, uint32_t n_terms) {
    if (n_terms >= ix->n_terms) return;
    ix->n_terms = n_terms;
    ix->pool_len = n_terms ? ix->str_off[n_terms] : 0;
    if (!ix->slots) return;
    uint64_t mask = ix->slot_mask;
    memset(ix->slots, 0, (mask + 1) * sizeof *ix->slots);
    for (uint32_t t = 0; t < n_terms; t++) {
        uint64_t a = ix->str_off[t], b = ix->str_off[t + 1];
        rv__slot_put(ix->slots, mask, t, ix->hashes[t], ix->pool + a, (size_t)(b - a));
    }
}
