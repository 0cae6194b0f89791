"""Write the seed corpus of the BM25 loader fuzz target.

    python tools/gen_bm25_seeds.py   (from the repository root, rowvoi installed)

Each seed is one mode byte (0: the fuzz target recomputes the checksum
after mutating, 1: loads as is) followed by a saved index.  The indexes
cover the format's corners: the default analyzer with empty documents, tf
above 254 (the overflow table), non-ASCII terms and documents purged by a
segment merge, tombstones, and caller ids with a deleted id filed again.
Run it again whenever the format changes.
"""

from __future__ import annotations

import pathlib

from rowvoi.index.lexical import BM25Index
from rowvoi.index.text import Analyzer

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fuzz" / "corpus" / "bm25_load"


def seeds() -> list[BM25Index]:
    a = BM25Index()
    a.add(["apple banana cherry", "apple banana", "", "the of"])

    b = BM25Index(Analyzer(stem=False), variant="bm25+")
    b.add(["apple " * 300 + "zz", "cherry", "b c"])

    c = BM25Index(variant="atire", k1=0.5, b=0.2)
    c.add(["café naïve"])
    c.delete([0])
    c.add(["東京 apple x z"])  # the merge of the two segments purges document 0

    d = BM25Index(Analyzer(min_token_len=2), variant="bm25l")
    d.add([f"t{i % 7} apple t{i % 3}" for i in range(40)])
    d.delete([1, 5, 9])

    e = BM25Index(Analyzer(stem=False))
    e.add(["red shoes", "red hat", "blue shoes", "green"], ids=[5, 900, 3, 77])
    e.delete([900])
    e.add(["red red scarf"], ids=[900])
    return [a, b, c, d, e]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("seed*"):
        old.unlink()
    for i, ix in enumerate(seeds()):
        data = ix.to_bytes()
        for mode in (0, 1):
            (OUT / f"seed{i}{mode}").write_bytes(bytes([mode]) + data)
    print(f"wrote {2 * len(seeds())} seeds to {OUT}")


if __name__ == "__main__":
    main()
