/*
** The English Snowball stemmer ("Porter2"), written from the algorithm's
** published definition (Snowball english.sbl, the version shipped with
** Snowball 3: exceptional R1 prefixes gener/commun/arsen/past/univers/
** later/emerg/organ/inter, the 'proc'/'exc'/'succ' and 'ying' cases of
** Step 1b, and 'ogist' in Step 2).  The test suite checks it against the
** PyStemmer package word for word.
**
** Snowball works on characters, so this works on code points: "hop 3" and
** "next" count characters, not bytes.  Every step edits only the end of the
** word, so a step is "find the longest listed suffix, check its region,
** rewrite the tail".  Snowball's `among` picks the longest listed suffix and
** never falls back to a shorter one when that suffix's condition fails; the
** tables below are ordered longest first to get exactly that.
**
** Notation as in the definition: v = a e i o u y; R1 is the region after
** the first non-vowel that follows a vowel, R2 the same taken again inside
** R1; a suffix "is in R1" when it starts at or after p1.
*/
#include <string.h>

#include "text_internal.h"

typedef struct {
    uint32_t *w;
    size_t n;  /* current length */
    size_t p1; /* start of R1 */
    size_t p2; /* start of R2 */
} rv__stem;

static int rv__v(uint32_t c) {
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

/* non-vowel other than w, x and Y */
static int rv__nonv_wxy(uint32_t c) {
    return !rv__v(c) && c != 'w' && c != 'x' && c != 'Y';
}

/* Does w[0..end) end with the ASCII string s? */
static int rv__ends_at(const rv__stem *z, size_t end, const char *s, size_t sl) {
    if (sl > end) return 0;
    const uint32_t *p = z->w + end - sl;
    for (size_t i = 0; i < sl; i++)
        if (p[i] != (unsigned char)s[i]) return 0;
    return 1;
}

/* An ASCII string with its length: the tables below give every suffix,
** word and replacement so, and a literal through RV__LIT, since a word is
** tested against about a hundred of them (a strlen each was half of the
** stemmer's time). */
typedef struct {
    const char *s;
    size_t n;
} rv__str;

#define RV__S(lit)   {(lit), sizeof(lit) - 1}
#define RV__LIT(lit) ((rv__str)RV__S(lit))

/* Does the word end with the string? */
static int rv__ends(const rv__stem *z, rv__str s) {
    return rv__ends_at(z, z->n, s.s, s.n);
}

/* Is w[0..len) exactly the string? */
static int rv__is(const uint32_t *w, size_t len, rv__str s) {
    if (s.n != len) return 0;
    for (size_t i = 0; i < s.n; i++)
        if (w[i] != (unsigned char)s.s[i]) return 0;
    return 1;
}

/* Replace the last `drop` characters by the string (never longer than
** what it replaces, so the word never grows past its input length, except
** that Step 1b may add one 'e' after deleting two or more). */
static void rv__set_tail(rv__stem *z, size_t drop, rv__str s) {
    size_t at = z->n - drop;
    for (size_t i = 0; i < s.n; i++) z->w[at + i] = (unsigned char)s.s[i];
    z->n = at + s.n;
}

/* Is there a short syllable ending at position e (chars before e)? */
static int rv__shortv(const rv__stem *z, size_t e) {
    const uint32_t *w = z->w;
    if (e >= 3 && rv__nonv_wxy(w[e - 1]) && rv__v(w[e - 2]) && !rv__v(w[e - 3])) return 1;
    if (e == 2 && !rv__v(w[1]) && rv__v(w[0])) return 1;
    if (rv__ends_at(z, e, "past", 4)) return 1;
    return 0;
}

/* Is there a vowel in w[0..end)? */
static int rv__has_vowel(const rv__stem *z, size_t end) {
    for (size_t i = 0; i < end; i++)
        if (rv__v(z->w[i])) return 1;
    return 0;
}

/* Words handled whole, before anything else. */
static int rv__exception1(rv__stem *z) {
    static const struct {
        rv__str word, stem;
    } ex[] = {
        {RV__S("skis"), RV__S("ski")},      {RV__S("skies"), RV__S("sky")},
        {RV__S("idly"), RV__S("idl")},      {RV__S("gently"), RV__S("gentl")},
        {RV__S("ugly"), RV__S("ugli")},     {RV__S("early"), RV__S("earli")},
        {RV__S("only"), RV__S("onli")},     {RV__S("singly"), RV__S("singl")},
        {RV__S("sky"), RV__S("sky")},       {RV__S("news"), RV__S("news")},
        {RV__S("howe"), RV__S("howe")},     {RV__S("atlas"), RV__S("atlas")},
        {RV__S("cosmos"), RV__S("cosmos")}, {RV__S("bias"), RV__S("bias")},
        {RV__S("andes"), RV__S("andes")},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        if (rv__is(z->w, z->n, ex[i].word)) {
            z->n = 0;
            rv__set_tail(z, 0, ex[i].stem);
            return 1;
        }
    }
    return 0;
}

/* Returns 1 when Y was introduced. */
static int rv__prelude(rv__stem *z) {
    int y_found = 0;
    if (z->n && z->w[0] == '\'') {
        memmove(z->w, z->w + 1, (z->n - 1) * sizeof(uint32_t));
        z->n--;
    }
    if (z->n && z->w[0] == 'y') {
        z->w[0] = 'Y';
        y_found = 1;
    }
    for (size_t i = 1; i < z->n; i++) {
        if (z->w[i] == 'y' && rv__v(z->w[i - 1])) {
            z->w[i] = 'Y';
            y_found = 1;
        }
    }
    return y_found;
}

/* Position after "gopast v gopast non-v" starting at `from`, or n. */
static size_t rv__region_after(const rv__stem *z, size_t from) {
    size_t i = from;
    while (i < z->n && !rv__v(z->w[i])) i++;
    if (i >= z->n) return z->n;
    i++;
    while (i < z->n && rv__v(z->w[i])) i++;
    if (i >= z->n) return z->n;
    return i + 1;
}

static void rv__mark_regions(rv__stem *z) {
    static const rv__str prefixes[] = {
        RV__S("univers"), RV__S("commun"), RV__S("gener"), RV__S("arsen"), RV__S("later"),
        RV__S("emerg"),   RV__S("organ"),  RV__S("inter"), RV__S("past"),
    };
    z->p1 = z->p2 = z->n;
    size_t p1 = SIZE_MAX;
    /* the longest listed prefix; none of them is a prefix of another */
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = prefixes[i].n;
        if (pl <= z->n && rv__is(z->w, pl, prefixes[i])) {
            p1 = pl;
            break;
        }
    }
    if (p1 == SIZE_MAX) {
        /* gopast v gopast non-v must succeed, else neither mark is set */
        size_t i = 0;
        while (i < z->n && !rv__v(z->w[i])) i++;
        if (i >= z->n) return;
        i++;
        while (i < z->n && rv__v(z->w[i])) i++;
        if (i >= z->n) return;
        p1 = i + 1;
    }
    z->p1 = p1;
    z->p2 = rv__region_after(z, p1);
}

static void rv__step_1a(rv__stem *z) {
    if (rv__ends(z, RV__LIT("'s'")))
        z->n -= 3;
    else if (rv__ends(z, RV__LIT("'s")))
        z->n -= 2;
    else if (rv__ends(z, RV__LIT("'")))
        z->n -= 1;

    if (rv__ends(z, RV__LIT("sses"))) {
        z->n -= 2;
    } else if (rv__ends(z, RV__LIT("ied")) || rv__ends(z, RV__LIT("ies"))) {
        /* 'i' after two or more letters (ties -> tie, cries -> cri) */
        rv__set_tail(z, 3, z->n - 3 >= 2 ? RV__LIT("i") : RV__LIT("ie"));
    } else if (rv__ends(z, RV__LIT("us")) || rv__ends(z, RV__LIT("ss"))) {
        /* unchanged */
    } else if (rv__ends(z, RV__LIT("s"))) {
        /* delete if a vowel occurs before the letter just before the s */
        if (z->n >= 2 && rv__has_vowel(z, z->n - 2)) z->n--;
    }
}

/* The common 'ed' 'edly' 'ing' 'ingly' rule; s is where the suffix starts. */
static void rv__step_1b_general(rv__stem *z, size_t s) {
    if (!rv__has_vowel(z, s)) return;
    z->n = s;
    static const rv__str doubles[] = {RV__S("bb"), RV__S("dd"), RV__S("ff"),
                                      RV__S("gg"), RV__S("mm"), RV__S("nn"),
                                      RV__S("pp"), RV__S("rr"), RV__S("tt")};
    if (rv__ends(z, RV__LIT("at")) || rv__ends(z, RV__LIT("bl")) || rv__ends(z, RV__LIT("iz"))) {
        rv__set_tail(z, 0, RV__LIT("e"));
        return;
    }
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++) {
        if (rv__ends(z, doubles[i])) {
            /* keep "add", "odd", "ebb": a/e/o then the double, whole word */
            uint32_t c0 = z->w[0];
            if (z->n == 3 && (c0 == 'a' || c0 == 'e' || c0 == 'o')) return;
            z->n--;
            return;
        }
    }
    if (z->n == z->p1 && rv__shortv(z, z->n)) rv__set_tail(z, 0, RV__LIT("e"));
}

static void rv__step_1b(rv__stem *z) {
    static const rv__str sfx[] = {RV__S("eedly"), RV__S("ingly"), RV__S("edly"),
                                  RV__S("eed"),   RV__S("ing"),   RV__S("ed")};
    size_t k = 0, sl = 0;
    for (; k < sizeof sfx / sizeof sfx[0]; k++) {
        if (rv__ends(z, sfx[k])) {
            sl = sfx[k].n;
            break;
        }
    }
    if (!sl) return;
    size_t s = z->n - sl;
    const char *m = sfx[k].s;
    if (m[0] == 'e' && m[1] == 'e') { /* eed, eedly */
        if (s >= z->p1) {
            if (rv__is(z->w, s, RV__LIT("proc")) || rv__is(z->w, s, RV__LIT("exc")) ||
                rv__is(z->w, s, RV__LIT("succ")))
                return;
            z->n = s + 2; /* -> ee */
        }
        return;
    }
    if (sl == 3 && m[0] == 'i') { /* ing: the exceptional cases first */
        static const rv__str keep[] = {RV__S("cann"), RV__S("herr"), RV__S("earr"),
                                       RV__S("even"), RV__S("inn"),  RV__S("out")};
        for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
            size_t kl = keep[i].n;
            if (rv__ends_at(z, s, keep[i].s, kl)) {
                if (s == kl) return;       /* inning, outing, ... */
                rv__step_1b_general(z, s); /* listed ending, not whole */
                return;
            }
        }
        if (rv__ends_at(z, s, "y", 1)) {
            if (s == 2 && !rv__v(z->w[0])) { /* dying -> die, lying -> lie */
                z->n = 1;
                rv__set_tail(z, 0, RV__LIT("ie"));
                return;
            }
        }
    }
    rv__step_1b_general(z, s);
}

static void rv__step_1c(rv__stem *z) {
    size_t n = z->n;
    if (n >= 3 && (z->w[n - 1] == 'y' || z->w[n - 1] == 'Y') && !rv__v(z->w[n - 2]))
        z->w[n - 1] = 'i';
}

typedef struct {
    rv__str sfx;
    rv__str to; /* replacement; to.s NULL for a special rule */
} rv__rule;

#define RV__SPECIAL {NULL, 0}

static void rv__step_2(rv__stem *z) {
    static const rv__rule rules[] = {
        {RV__S("ational"), RV__S("ate")}, {RV__S("fulness"), RV__S("ful")},
        {RV__S("iveness"), RV__S("ive")}, {RV__S("ization"), RV__S("ize")},
        {RV__S("ousness"), RV__S("ous")}, {RV__S("tional"), RV__S("tion")},
        {RV__S("biliti"), RV__S("ble")},  {RV__S("lessli"), RV__S("less")},
        {RV__S("entli"), RV__S("ent")},   {RV__S("ation"), RV__S("ate")},
        {RV__S("alism"), RV__S("al")},    {RV__S("aliti"), RV__S("al")},
        {RV__S("ousli"), RV__S("ous")},   {RV__S("iviti"), RV__S("ive")},
        {RV__S("fulli"), RV__S("ful")},   {RV__S("ogist"), RV__S("og")},
        {RV__S("enci"), RV__S("ence")},   {RV__S("anci"), RV__S("ance")},
        {RV__S("abli"), RV__S("able")},   {RV__S("izer"), RV__S("ize")},
        {RV__S("ator"), RV__S("ate")},    {RV__S("alli"), RV__S("al")},
        {RV__S("bli"), RV__S("ble")},     {RV__S("ogi"), RV__SPECIAL},
        {RV__S("li"), RV__SPECIAL},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        size_t sl = rules[i].sfx.n;
        if (!rv__ends_at(z, z->n, rules[i].sfx.s, sl)) continue;
        size_t s = z->n - sl;
        if (s < z->p1) return;
        if (rules[i].to.s) {
            rv__set_tail(z, sl, rules[i].to);
        } else if (rules[i].sfx.s[0] == 'o') { /* ogi: after l */
            if (s >= 1 && z->w[s - 1] == 'l') rv__set_tail(z, sl, RV__LIT("og"));
        } else { /* li: after a valid li-ending */
            if (s >= 1) {
                uint32_t c = z->w[s - 1];
                if (c == 'c' || c == 'd' || c == 'e' || c == 'g' || c == 'h' || c == 'k' ||
                    c == 'm' || c == 'n' || c == 'r' || c == 't')
                    z->n = s;
            }
        }
        return;
    }
}

static void rv__step_3(rv__stem *z) {
    static const rv__rule rules[] = {
        {RV__S("ational"), RV__S("ate")}, {RV__S("tional"), RV__S("tion")},
        {RV__S("alize"), RV__S("al")},    {RV__S("icate"), RV__S("ic")},
        {RV__S("iciti"), RV__S("ic")},    {RV__S("ative"), RV__SPECIAL},
        {RV__S("ical"), RV__S("ic")},     {RV__S("ness"), RV__S("")},
        {RV__S("ful"), RV__S("")},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        size_t sl = rules[i].sfx.n;
        if (!rv__ends_at(z, z->n, rules[i].sfx.s, sl)) continue;
        size_t s = z->n - sl;
        if (s < z->p1) return;
        if (rules[i].to.s)
            rv__set_tail(z, sl, rules[i].to);
        else if (s >= z->p2)
            z->n = s; /* ative: only in R2 */
        return;
    }
}

static void rv__step_4(rv__stem *z) {
    static const rv__str sfx[] = {
        RV__S("ement"), RV__S("ance"), RV__S("ence"), RV__S("able"), RV__S("ible"), RV__S("ment"),
        RV__S("ant"),   RV__S("ent"),  RV__S("ism"),  RV__S("ate"),  RV__S("iti"),  RV__S("ous"),
        RV__S("ive"),   RV__S("ize"),  RV__S("ion"),  RV__S("al"),   RV__S("er"),   RV__S("ic"),
    };
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        size_t sl = sfx[i].n;
        if (!rv__ends_at(z, z->n, sfx[i].s, sl)) continue;
        size_t s = z->n - sl;
        if (s < z->p2) return;
        if (sfx[i].s[0] == 'i' && sfx[i].s[1] == 'o') { /* ion: after s or t */
            if (s >= 1 && (z->w[s - 1] == 's' || z->w[s - 1] == 't')) z->n = s;
        } else {
            z->n = s;
        }
        return;
    }
}

static void rv__step_5(rv__stem *z) {
    if (!z->n) return;
    size_t s = z->n - 1;
    uint32_t c = z->w[s];
    if (c == 'e') {
        if (s >= z->p2 || (s >= z->p1 && !rv__shortv(z, s))) z->n = s;
    } else if (c == 'l') {
        if (s >= z->p2 && s >= 1 && z->w[s - 1] == 'l') z->n = s;
    }
}

void rv__stem_english(uint32_t *w, size_t *n) {
    rv__stem z = {w, *n, 0, 0};
    if (rv__exception1(&z)) {
        *n = z.n;
        return;
    }
    if (z.n < 3) return;
    int y_found = rv__prelude(&z);
    rv__mark_regions(&z);
    rv__step_1a(&z);
    rv__step_1b(&z);
    rv__step_1c(&z);
    rv__step_2(&z);
    rv__step_3(&z);
    rv__step_4(&z);
    rv__step_5(&z);
    if (y_found)
        for (size_t i = 0; i < z.n; i++)
            if (z.w[i] == 'Y') z.w[i] = 'y';
    *n = z.n;
}
