#!/usr/bin/env python3
"""Write tests/data/stem_english.tsv: word<TAB>stem pairs from PyStemmer.

The C test (tests/c/test_text.c) replays it; the Python test compares the
stemmer with PyStemmer on a much larger list at run time.  The sample mixes
dictionary words with inflected forms so that every rule of every step fires.
Needs: pip install PyStemmer english-words.
"""

import random
import sys

import Stemmer
from english_words import get_english_words_set

words = sorted(get_english_words_set(["web2", "gcide"], lower=True, alpha=True))
rng = random.Random(5)
sample = rng.sample(words, 2500)
for w in rng.sample(words, 800):
    sample.append(
        w
        + rng.choice(
            [
                "s",
                "ed",
                "ing",
                "ly",
                "ness",
                "ies",
                "'s",
                "ingly",
                "edly",
                "y",
                "eed",
                "ational",
                "izer",
                "fulness",
            ]
        )
    )
sample += (
    "pasted pasting universal university later lateral emergency organic organization "
    "international interval generous communism arsenic skis skies dying lying tying vying "
    "ugly early only singly idly gently sky news howe atlas cosmos bias andes inning outing "
    "canning herring earring evening proceed exceed succeed proceeding exceedingly agreed "
    "hopping hoped hoping bled filing fizzed eying ying sayyid yyy 'quote' apostrophe's "
    "geologist geology ably luxuriating added odd ebbed cries ties gas gaps kiwis "
    "naïve façade café résumé über"
).split()
stem = Stemmer.Stemmer("english")
out = sys.stdout
out.write("# word\tstem (PyStemmer %s, english)\n" % Stemmer.version())
for w in sample:
    out.write("%s\t%s\n" % (w, stem.stemWord(w)))
