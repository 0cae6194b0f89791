/*
** The English stopword list: function words (articles, pronouns,
** auxiliaries, prepositions, conjunctions) plus the fragments that
** splitting contractions at the apostrophe leaves behind ("don't" gives
** "don" and "t").  Matched on the normalised token, before stemming.
** Sorted by bytes, so lookup is a binary search.
*/

#include "text_internal.h"

static const char *const rv__stopwords[] = {
    "a",        "about",      "above",   "after",      "again",  "against", "ain",       "all",
    "am",       "an",         "and",     "any",        "are",    "aren",    "as",        "at",
    "be",       "because",    "been",    "before",     "being",  "below",   "between",   "both",
    "but",      "by",         "can",     "could",      "couldn", "d",       "did",       "didn",
    "do",       "does",       "doesn",   "doing",      "don",    "down",    "during",    "each",
    "few",      "for",        "from",    "further",    "had",    "hadn",    "has",       "hasn",
    "have",     "haven",      "having",  "he",         "her",    "here",    "hers",      "herself",
    "him",      "himself",    "his",     "how",        "i",      "if",      "in",        "into",
    "is",       "isn",        "it",      "its",        "itself", "just",    "ll",        "m",
    "me",       "mightn",     "more",    "most",       "mustn",  "my",      "myself",    "needn",
    "no",       "nor",        "not",     "now",        "o",      "of",      "off",       "on",
    "once",     "only",       "or",      "other",      "our",    "ours",    "ourselves", "out",
    "over",     "own",        "re",      "s",          "same",   "shan",    "she",       "should",
    "shouldn",  "so",         "some",    "such",       "t",      "than",    "that",      "the",
    "their",    "theirs",     "them",    "themselves", "then",   "there",   "these",     "they",
    "this",     "those",      "through", "to",         "too",    "under",   "until",     "up",
    "ve",       "very",       "was",     "wasn",       "we",     "were",    "weren",     "what",
    "when",     "where",      "which",   "while",      "who",    "whom",    "why",       "will",
    "with",     "won",        "would",   "wouldn",     "y",      "you",     "your",      "yours",
    "yourself", "yourselves",
};

#define RV__N_STOP      (sizeof rv__stopwords / sizeof rv__stopwords[0])
#define RV__STOP_MAXLEN 10

/* a[0..al) against the NUL-terminated b, bytes unsigned, a prefix first
** (memcmp's order, then the shorter first), in one pass: no strlen of b
** per step of the search. */
static int rv__stop_cmp(const char *a, size_t al, const char *b) {
    size_t i = 0;
    for (; i < al && b[i]; i++)
        if (a[i] != b[i]) return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
    if (i < al) return 1; /* b is a proper prefix of a */
    return b[i] ? -1 : 0;
}

int rv_is_stopword(const char *word, size_t len) {
    if (!word || len == 0 || len > RV__STOP_MAXLEN) return 0;
    size_t lo = 0, hi = RV__N_STOP;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = rv__stop_cmp(word, len, rv__stopwords[mid]);
        if (c == 0) return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

int rv__is_stopword_cp(const uint32_t *w, size_t n) {
    char buf[RV__STOP_MAXLEN];
    if (n == 0 || n > RV__STOP_MAXLEN) return 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] < 'a' || w[i] > 'z') return 0;
        buf[i] = (char)w[i];
    }
    return rv_is_stopword(buf, n);
}

size_t rv_stopword_count(void) {
    return RV__N_STOP;
}

const char *rv_stopword(size_t i) {
    return i < RV__N_STOP ? rv__stopwords[i] : NULL;
}
