/*
** UTF-8 decoding, character classes, normalisation and tokenizing (see
** include/rowvoi/text.h for the pipeline).
**
** The character tables are generated from the Unicode database
** (tools/gen_unicode_tables.py), so classification does not depend on the C
** library's locale.  ASCII, nearly all of the text this sees, takes a fast
** path through a 128-entry table.
*/
#include <string.h>

#include "text_internal.h"
#include "unicode_tables.h"

#define RV__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ UTF-8 */

int rv__utf8_next(const unsigned char *s, size_t len, size_t *pos, uint32_t *cp) {
    size_t i = *pos;
    unsigned c = s[i];
    if (c < 0x80) {
        *cp = c;
        *pos = i + 1;
        return 1;
    }
    size_t need;
    uint32_t v;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0; /* no overlongs */
        else if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90; /* no overlongs */
        else if (c == 0xF4)
            hi = 0x8F; /* <= U+10FFFF */
    } else {
        *pos = i + 1; /* C0, C1, F5..FF, or a stray continuation byte */
        return 0;
    }
    size_t j = i + 1;
    for (size_t k = 0; k < need; k++, j++) {
        if (j >= len) {
            *pos = j; /* truncated: the maximal subpart ends here */
            return 0;
        }
        unsigned b = s[j];
        unsigned blo = k == 0 ? lo : 0x80, bhi = k == 0 ? hi : 0xBF;
        if (b < blo || b > bhi) {
            *pos = j; /* the bad byte starts the next sequence */
            return 0;
        }
        v = (v << 6) | (b & 0x3F);
    }
    *cp = v;
    *pos = j;
    return 1;
}

size_t rv__utf8_put(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ------------------------------------------------------- character classes */

enum { RV__SEP = 0, RV__ALNUM = 1, RV__MARK = 2, RV__SINGLE = 3 };

static int rv__in_ranges(const rv__cp_range *r, size_t n, uint32_t cp) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid].first)
            hi = mid;
        else if (cp > r[mid].last)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* Scripts written without spaces between words: one token per character. */
static int rv__is_single(uint32_t cp) {
    return (cp >= 0x3040 && cp <= 0x309F) || /* Hiragana */
           (cp >= 0x3400 && cp <= 0x4DBF) || /* CJK Ext A */
           (cp >= 0x4E00 && cp <= 0x9FFF) || /* CJK Unified */
           (cp >= 0xF900 && cp <= 0xFAFF) || /* CJK Compatibility */
           (cp >= 0x20000 && cp <= 0x3134F); /* CJK Ext B..G */
}

static int rv__class(uint32_t cp) {
    if (rv__in_ranges(rv__alnum_ranges, RV__ARRAY_LEN(rv__alnum_ranges), cp))
        return rv__is_single(cp) ? RV__SINGLE : RV__ALNUM;
    if (rv__in_ranges(rv__mark_ranges, RV__ARRAY_LEN(rv__mark_ranges), cp)) return RV__MARK;
    return RV__SEP;
}

static uint32_t rv__lower(uint32_t cp) {
    if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    size_t lo = 0, hi = RV__ARRAY_LEN(rv__lower_runs);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const rv__lower_run *r = &rv__lower_runs[mid];
        if (cp < r->first)
            hi = mid;
        else if (cp > r->last)
            lo = mid + 1;
        else
            return (cp - r->first) % r->stride == 0 ? (uint32_t)((int32_t)cp + r->delta) : cp;
    }
    return cp;
}

static const char *rv__fold(uint32_t cp) {
    size_t lo = 0, hi = RV__ARRAY_LEN(rv__latin_folds);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < rv__latin_folds[mid].cp)
            hi = mid;
        else if (cp > rv__latin_folds[mid].cp)
            lo = mid + 1;
        else
            return rv__latin_folds[mid].to;
    }
    return NULL;
}

/* Letters of the Latin script (and ASCII digits): their marks are accents. */
static int rv__is_latin(uint32_t cp) {
    return cp < 0x0250 || (cp >= 0x1E00 && cp <= 0x1EFF) || (cp >= 0x2C60 && cp <= 0x2C7F) ||
           (cp >= 0xA720 && cp <= 0xA7FF) || (cp >= 0xAB30 && cp <= 0xAB6F) ||
           (cp >= 0xFB00 && cp <= 0xFB06) || (cp >= 0xFF21 && cp <= 0xFF5A);
}

/* ASCII classes: 0 separator, 1 digit or lowercase, 2 uppercase. */
static const unsigned char rv__ascii[128] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
};

/* ------------------------------------------------------------------ options */

void rv_analyzer_options_init(rv_analyzer_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->lowercase = 1;
    opt->strip_accents = 1;
    opt->stopwords = 1;
    opt->stem = 1;
    opt->min_token_len = 1;
    opt->max_token_len = 64;
    opt->utf8 = RV_UTF8_STRICT;
}

rv_status rv_analyzer_options_check(const rv_analyzer_options *opt) {
    if (!opt) return rv__null("opt (the analyzer options)");
    const struct {
        const char *name;
        int v;
    } flags[] = {
        {"lowercase", opt->lowercase},
        {"strip_accents", opt->strip_accents},
        {"stopwords", opt->stopwords},
        {"stem", opt->stem},
    };
    for (size_t i = 0; i < RV__ARRAY_LEN(flags); i++)
        if (flags[i].v != 0 && flags[i].v != 1)
            return rv__error(RV_E_INVALID_ARG, "analyzer option %s = %d: must be 0 or 1",
                             flags[i].name, flags[i].v);
    if (opt->utf8 != RV_UTF8_STRICT && opt->utf8 != RV_UTF8_REPLACE)
        return rv__error(RV_E_INVALID_ARG,
                         "analyzer option utf8 = %d: must be "
                         "RV_UTF8_STRICT (0) or RV_UTF8_REPLACE (1)",
                         (int)opt->utf8);
    if (opt->min_token_len < 1)
        return rv__error(RV_E_INVALID_ARG, "analyzer option min_token_len = 0: must be >= 1");
    if (opt->max_token_len > RV_ANALYZER_MAX_TOKEN_LEN)
        return rv__error(RV_E_INVALID_ARG, "analyzer option max_token_len = %u: must be <= %d",
                         (unsigned)opt->max_token_len, RV_ANALYZER_MAX_TOKEN_LEN);
    if (opt->min_token_len > opt->max_token_len)
        return rv__error(RV_E_INVALID_ARG,
                         "analyzer option min_token_len = %u exceeds "
                         "max_token_len = %u",
                         (unsigned)opt->min_token_len, (unsigned)opt->max_token_len);
    return RV_OK;
}

const char *rv_unicode_version(void) {
    return RV__UNICODE_VERSION;
}

/* ------------------------------------------------------------- the analyzer */

/* A token under construction: normalised code points.  Folding may append
** up to 3 characters at once, hence the slack. */
typedef struct {
    uint32_t cp[RV_ANALYZER_MAX_TOKEN_LEN + 4];
    size_t n;
    int too_long;
    int prev_latin; /* the last base character was Latin */
    const rv_analyzer_options *opt;
    rv__term_fn fn;
    void *ctx;
} rv__tok;

static void rv__tok_push(rv__tok *t, uint32_t cp) {
    if (t->n >= t->opt->max_token_len) {
        t->too_long = 1;
        return;
    }
    t->cp[t->n++] = cp;
}

/* Append a letter or digit, normalised. */
static void rv__tok_base(rv__tok *t, uint32_t cp) {
    if (t->opt->lowercase) cp = rv__lower(cp);
    t->prev_latin = rv__is_latin(cp);
    if (t->opt->strip_accents && cp >= 0xC0) {
        const char *f = rv__fold(cp);
        if (f) {
            for (; *f; f++) rv__tok_push(t, (unsigned char)*f);
            return;
        }
    }
    rv__tok_push(t, cp);
}

static rv_status rv__tok_flush(rv__tok *t) {
    size_t n = t->n;
    int skip = t->too_long || n < t->opt->min_token_len || n == 0;
    t->n = 0;
    t->too_long = 0;
    if (skip) return RV_OK;
    if (t->opt->stopwords && rv__is_stopword_cp(t->cp, n)) return RV_OK;
    if (t->opt->stem) rv__stem_english(t->cp, &n);
    char out[(RV_ANALYZER_MAX_TOKEN_LEN + 4) * 4];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += rv__utf8_put(t->cp[i], out + len);
    return t->fn(t->ctx, out, len);
}

rv_status rv__analyze_each(const rv_analyzer_options *opt, const char *text, size_t len,
                           rv__term_fn fn, void *ctx, size_t *bad_offset) {
    rv__tok t;
    t.n = 0;
    t.too_long = 0;
    t.prev_latin = 0;
    t.opt = opt;
    t.fn = fn;
    t.ctx = ctx;
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    int in_token = 0;
    rv_status st;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) { /* ASCII fast path */
            unsigned k = rv__ascii[c];
            if (k) {
                if (!t.too_long) {
                    if (t.n < opt->max_token_len)
                        t.cp[t.n++] = (k == 2 && opt->lowercase) ? c + 32 : c;
                    else
                        t.too_long = 1;
                }
                t.prev_latin = 1;
                in_token = 1;
            } else if (in_token) {
                if ((st = rv__tok_flush(&t)) != RV_OK) return st;
                in_token = 0;
            }
            i++;
            continue;
        }
        size_t at = i;
        uint32_t cp;
        if (!rv__utf8_next(s, len, &i, &cp)) {
            if (opt->utf8 == RV_UTF8_STRICT) {
                if (bad_offset) *bad_offset = at;
                return rv__error(RV_E_INVALID_ARG, "invalid UTF-8 at byte offset %zu (byte 0x%02X)",
                                 at, (unsigned)s[at]);
            }
            cp = 0xFFFD; /* a symbol: separates tokens */
        }
        int k = rv__class(cp);
        if (k == RV__ALNUM) {
            rv__tok_base(&t, cp);
            in_token = 1;
        } else if (k == RV__MARK && in_token) {
            if (!(opt->strip_accents && t.prev_latin)) rv__tok_push(&t, cp);
        } else {
            if (in_token) {
                if ((st = rv__tok_flush(&t)) != RV_OK) return st;
                in_token = 0;
            }
            if (k == RV__SINGLE) {
                rv__tok_base(&t, cp);
                if ((st = rv__tok_flush(&t)) != RV_OK) return st;
            }
        }
    }
    if (in_token) return rv__tok_flush(&t);
    return RV_OK;
}

/* -------------------------------------------------------------- public API */

typedef struct {
    char *buf;
    size_t buf_cap, buf_len;
    size_t *ends;
    size_t ends_cap, n;
} rv__collect;

static rv_status rv__collect_term(void *ctx, const char *term, size_t len) {
    rv__collect *c = ctx;
    if (c->buf_len + len <= c->buf_cap) memcpy(c->buf + c->buf_len, term, len);
    c->buf_len += len;
    if (c->n < c->ends_cap) c->ends[c->n] = c->buf_len;
    c->n++;
    return RV_OK;
}

rv_status rv_analyze(const rv_analyzer_options *opt, const char *text, size_t len, char *buf,
                     size_t buf_cap, size_t *ends, size_t ends_cap, size_t *n_tokens,
                     size_t *buf_len) {
    if (n_tokens) *n_tokens = 0;
    if (buf_len) *buf_len = 0;
    rv_status st = rv_analyzer_options_check(opt);
    if (st != RV_OK) return st;
    RV__NOT_NULL(n_tokens, "n_tokens");
    RV__NOT_NULL(buf_len, "buf_len");
    if (!text && len) return rv__error(RV_E_INVALID_ARG, "text is NULL but len = %zu", len);
    if (!buf && buf_cap)
        return rv__error(RV_E_INVALID_ARG, "buf is NULL but buf_cap = %zu", buf_cap);
    if (!ends && ends_cap)
        return rv__error(RV_E_INVALID_ARG, "ends is NULL but ends_cap = %zu", ends_cap);
    RV__CHECK_SIZE(len, 1, "len");
    RV__CHECK_SIZE(buf_cap, 1, "buf_cap");
    RV__CHECK_SIZE(ends_cap, sizeof *ends, "ends_cap");
    rv__collect c = {buf, buf_cap, 0, ends, ends_cap, 0};
    st = rv__analyze_each(opt, text, len, rv__collect_term, &c, NULL);
    if (st != RV_OK) return st;
    *n_tokens = c.n;
    *buf_len = c.buf_len;
    if (c.buf_len > buf_cap || c.n > ends_cap)
        return rv__error(RV_E_SHAPE,
                         "output needs %zu bytes and %zu term ends; "
                         "capacities are %zu and %zu",
                         c.buf_len, c.n, buf_cap, ends_cap);
    return RV_OK;
}

rv_status rv_stem_english(const char *word, size_t len, char *out, size_t out_cap,
                          size_t *out_len) {
    if (out_len) *out_len = 0;
    if (!out_len) return rv__error(RV_E_INVALID_ARG, "out_len must not be NULL");
    if (!word && len) return rv__error(RV_E_INVALID_ARG, "word is NULL but len = %zu", len);
    if (!out && out_cap)
        return rv__error(RV_E_INVALID_ARG, "out is NULL but out_cap = %zu", out_cap);
    RV__CHECK_SIZE(len, 1, "len");
    RV__CHECK_SIZE(out_cap, 1, "out_cap");
    uint32_t local[256];
    uint32_t *w = local;
    size_t n = 0;
    const unsigned char *s = (const unsigned char *)word;
    /* count first, so long words get a buffer of the right size */
    size_t i = 0;
    while (i < len) {
        size_t at = i;
        uint32_t cp;
        if (!rv__utf8_next(s, len, &i, &cp))
            return rv__error(RV_E_INVALID_ARG, "invalid UTF-8 at byte offset %zu (byte 0x%02X)", at,
                             (unsigned)s[at]);
        n++;
    }
    if (n > 65535) return rv__error(RV_E_RANGE, "word of %zu characters: at most 65535", n);
    if (n > RV__ARRAY_LEN(local)) {
        w = rv__malloc(n * sizeof *w);
        if (!w) return rv__nomem("the stemmer's word buffer");
    }
    n = 0;
    for (i = 0; i < len;) rv__utf8_next(s, len, &i, &w[n++]);
    rv__stem_english(w, &n);
    size_t need = 0;
    char tmp[4];
    for (size_t k = 0; k < n; k++) need += rv__utf8_put(w[k], tmp);
    rv_status st = RV_OK;
    if (need > out_cap) {
        st = rv__error(RV_E_SHAPE, "the stem needs %zu bytes; out_cap is %zu", need, out_cap);
    } else {
        size_t o = 0;
        for (size_t k = 0; k < n; k++) o += rv__utf8_put(w[k], out + o);
    }
    *out_len = need;
    if (w != local) rv__free(w);
    return st;
}
