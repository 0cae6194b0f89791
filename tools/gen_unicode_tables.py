#!/usr/bin/env python3
"""Generate src/text/unicode_tables.h from Python's unicodedata.

The analyzer needs three facts about a code point that the C library does not
give portably: is it a letter or digit (a token character), is it a combining
mark (it continues a token), what is its simple lowercase, and -- for Latin
letters -- what plain ASCII letters it folds to when accents are stripped.
Run `python3 tools/gen_unicode_tables.py > src/text/unicode_tables.h`; the
Unicode version is written into the header.
"""

import itertools
import sys
import unicodedata

MAX = 0x110000


def ranges(pred):
    out, start = [], None
    for cp in range(MAX):
        if pred(cp):
            if start is None:
                start = cp
        elif start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, MAX - 1))
    return out


def is_alnum(cp):
    return unicodedata.category(chr(cp))[0] in "LN"


def is_mark(cp):
    return unicodedata.category(chr(cp))[0] == "M"


def simple_lower(cp):
    ch = chr(cp)
    low = ch.lower()
    if cp == 0x130:  # LATIN CAPITAL I WITH DOT ABOVE: 'i' + U+0307; keep the letter
        return ord("i")
    if len(low) == 1 and low != ch:
        return ord(low)
    return None


def lower_runs():
    """(first, last, delta, stride) runs: cp in [first,last], (cp-first)%stride==0."""
    pairs = [(cp, simple_lower(cp)) for cp in range(MAX) if simple_lower(cp) is not None]
    runs = []
    i = 0
    while i < len(pairs):
        cp, lo = pairs[i]
        delta = lo - cp
        # try stride 1 then stride 2
        best = (cp, cp, delta, 1)
        for stride in (1, 2):
            j = i
            last = cp
            while (
                j + 1 < len(pairs)
                and pairs[j + 1][0] == last + stride
                and pairs[j + 1][1] - pairs[j + 1][0] == delta
            ):
                j += 1
                last = pairs[j][0]
            if last > best[1]:
                best = (cp, last, delta, stride)
        runs.append(best)
        # advance past the run
        first, last, d, stride = best
        while (
            i < len(pairs)
            and pairs[i][0] <= last
            and (pairs[i][0] - first) % stride == 0
            and pairs[i][1] - pairs[i][0] == d
        ):
            i += 1
    return runs


LATIN_BLOCKS = [
    (0x00C0, 0x024F),
    (0x1E00, 0x1EFF),
    (0x2C60, 0x2C7F),
    (0xA720, 0xA7FF),
    (0xAB30, 0xAB6F),
    (0xFB00, 0xFB06),
    (0xFF21, 0xFF5A),
]

# Latin letters with no canonical decomposition that still carry a base letter
# (as Lucene's ASCIIFoldingFilter folds them).
EXTRA_FOLDS = {
    "\u00c6": "AE",
    "\u00e6": "ae",
    "\u00d8": "O",
    "\u00f8": "o",
    "\u0152": "OE",
    "\u0153": "oe",
    "\u00df": "ss",
    "\u1e9e": "SS",
    "\u0110": "D",
    "\u0111": "d",
    "\u0141": "L",
    "\u0142": "l",
    "\u00de": "TH",
    "\u00fe": "th",
    "\u00d0": "D",
    "\u00f0": "d",
    "\u0126": "H",
    "\u0127": "h",
    "\u0131": "i",
    "\u0138": "q",
    "\u014a": "N",
    "\u014b": "n",
    "\u0166": "T",
    "\u0167": "t",
    "\u0180": "b",
    "\u0181": "B",
    "\u0187": "C",
    "\u0188": "c",
    "\u018a": "D",
    "\u018b": "D",
    "\u018c": "d",
    "\u0191": "F",
    "\u0192": "f",
    "\u0193": "G",
    "\u0197": "I",
    "\u0198": "K",
    "\u0199": "k",
    "\u019a": "l",
    "\u019d": "N",
    "\u019e": "n",
    "\u01a4": "P",
    "\u01a5": "p",
    "\u01ab": "t",
    "\u01ac": "T",
    "\u01ad": "t",
    "\u01ae": "T",
    "\u01b2": "V",
    "\u01b3": "Y",
    "\u01b4": "y",
    "\u01b5": "Z",
    "\u01b6": "z",
    "\u0221": "d",
    "\u0234": "l",
    "\u0235": "n",
    "\u0236": "t",
    "\u0237": "j",
    "\u023a": "A",
    "\u023b": "C",
    "\u023c": "c",
    "\u023d": "L",
    "\u023e": "T",
    "\u0243": "B",
    "\u0246": "E",
    "\u0247": "e",
    "\u0248": "J",
    "\u0249": "j",
    "\u024c": "R",
    "\u024d": "r",
    "\u024e": "Y",
    "\u024f": "y",
    "\u2c65": "a",
    "\u2c66": "t",
}


def latin_folds():
    out = {}
    for lo, hi in LATIN_BLOCKS:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            if ch in EXTRA_FOLDS:
                out[cp] = EXTRA_FOLDS[ch]
                continue
            dec = unicodedata.normalize("NFKD", ch)
            base = "".join(c for c in dec if not unicodedata.combining(c))
            if (
                base
                and base != ch
                and all("a" <= c.lower() <= "z" for c in base)
                and len(base) <= 3
            ):
                out[cp] = base
    for ch, s in EXTRA_FOLDS.items():
        out.setdefault(ord(ch), s)
    return dict(sorted(out.items()))


def main():
    alnum = ranges(is_alnum)
    marks = ranges(is_mark)
    low = lower_runs()
    for a, b in itertools.pairwise(low):  # the C lookup binary-searches by first
        assert a[1] < b[0], (a, b)
    fold = latin_folds()
    w = sys.stdout.write
    w(
        "/* Generated by tools/gen_unicode_tables.py from Unicode %s; do not edit. */\n"
        % unicodedata.unidata_version
    )
    w("#ifndef RV_UNICODE_TABLES_H\n#define RV_UNICODE_TABLES_H\n\n#include <stdint.h>\n\n")
    w('#define RV__UNICODE_VERSION "%s"\n\n' % unicodedata.unidata_version)
    w("typedef struct { uint32_t first, last; } rv__cp_range;\n")
    w("typedef struct { uint32_t first, last; int32_t delta; uint32_t stride; } rv__lower_run;\n")
    w("typedef struct { uint32_t cp; char to[4]; } rv__fold_entry;\n\n")
    for name, rs in (("alnum", alnum), ("mark", marks)):
        w("/* General category %s. */\n" % ("L* or N*" if name == "alnum" else "M*"))
        w("static const rv__cp_range rv__%s_ranges[%d] = {\n" % (name, len(rs)))
        for i in range(0, len(rs), 3):
            w("    " + " ".join("{0x%05X, 0x%05X}," % r for r in rs[i : i + 3]) + "\n")
        w("};\n\n")
    w(
        "/* Simple lowercase: cp in [first,last] with (cp-first) %% stride == 0 maps to cp+delta. */\n"
    )
    w("static const rv__lower_run rv__lower_runs[%d] = {\n" % len(low))
    for r in low:
        w("    {0x%05X, 0x%05X, %d, %d},\n" % r)
    w("};\n\n")
    w("/* Latin letters folded to ASCII when accents are stripped. */\n")
    w("static const rv__fold_entry rv__latin_folds[%d] = {\n" % len(fold))
    for cp, s in fold.items():
        w('    {0x%04X, "%s"},\n' % (cp, s))
    w("};\n\n#endif\n")


if __name__ == "__main__":
    main()
