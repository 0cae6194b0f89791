"""The last step of a dense search at scale: ``rowvoi._hot.dense_hits`` on a
2,000,000-record table with the caches cold.

    python bench/dense_hits_scale.py [--rounds 300]

A record table of 2M records (ids spread over 0 .. 20M, 600-byte texts,
8-byte artifact ids) is built in memory; each round picks 50 random
candidates (scores strictly falling), evicts the caches by touching 64 MiB,
and times building the 10 best hits (record lookup, texts, metadata,
``SearchHit`` objects). Prints p50 and p95 in microseconds. Run it under
two installs (say main and a branch) one after the other, alternating, to
compare them: nothing here depends on the machine but the figures.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from rowvoi._hot import HitTable, dense_hits
from rowvoi.corpus.base import SearchHit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    n, text_len = 2_000_000, 600
    rng = np.random.default_rng(0)
    ids = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int64)
    art = np.arange(n, dtype=np.int32)
    kind = np.zeros(n, np.int32)
    surface = np.arange(n, dtype=np.int64)
    texts = (b"x" * text_len) * n
    t_off = np.arange(n + 1, dtype=np.int64) * text_len
    empty = np.zeros(n + 1, np.int64)
    aids = b"".join(b"a%07d" % i for i in range(n))
    a_off = np.arange(n + 1, dtype=np.int64) * 8
    table = HitTable(
        ids, art, kind, surface, ["body"], texts, t_off, b"", empty, b"", empty, aids, a_off,
        SearchHit, json.loads,
    )  # fmt: skip
    evict = np.ones(64 << 20, np.uint8)
    scores = np.linspace(1.0, 0.5, 50).astype(np.float32)
    times = []
    for _ in range(args.rounds):
        cand = ids[rng.choice(n, 50, replace=False)]
        evict[::64] += 1
        t0 = time.perf_counter()
        dense_hits(table, cand, scores, None, 10, False, "c", "flat", "dense")
        times.append(time.perf_counter() - t0)
    times.sort()
    print(
        f"2M-record table, 50 candidates, 10 hits, caches cold: "
        f"p50 {times[len(times) // 2] * 1e6:.1f} us, p95 {times[int(0.95 * len(times))] * 1e6:.1f} us"
    )


if __name__ == "__main__":
    main()
