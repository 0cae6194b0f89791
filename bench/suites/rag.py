"""Benchmark the RAG adapters against plain numpy/Python implementations.

There is no published peer with this API, so each case is compared with a
straightforward implementation written here: a set-based greedy cover for
select_context, and a numpy group-by mutual information for next_question.
Both sides must agree on the answer (same chunks / same question).

Cases (fixed seeds):
  select_context greedy and exact: 200 chunks x 50 claims, 5,000 x 500
  next_question: 1,000 candidates x 50 questions, 100,000 x 200

Timing (bench/_common/timing.py): one warm-up call each, then interleaved
rounds of our call and the baseline's; medians with the min-max over rounds,
never best-of; ratios are medians of the per-round ratios.

Run:  python -m bench run rag [--out PATH] [--exact-time-limit 60] [--rounds 5]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._common.results import Run, publish, version_of, versions
from .._common.timing import interleaved, method_note, ratio


def side_by_side(ours, base, rounds, warmup=1):
    """Interleaved rounds of both sides: (ours Samples, baseline Samples, ratio)."""
    got = interleaved({"ours": ours, "baseline": base}, rounds, warmup=warmup)
    return got["ours"], got["baseline"], ratio(got["baseline"].wall, got["ours"].wall)


def context_case(n_chunks, n_claims, seed):
    rng = np.random.default_rng(seed)
    from rowvoi.rag import Chunk

    ids = [f"c{i}" for i in range(n_chunks)]
    tokens = rng.integers(50, 800, n_chunks)
    chunks = [Chunk(i, tokens=int(t)) for i, t in zip(ids, tokens)]
    claims = [f"k{j}" for j in range(n_claims)]
    density = min(0.2, 4.0 / n_claims * 2)
    frame = pd.DataFrame(rng.random((n_claims, n_chunks)) < density, index=claims, columns=ids)
    return chunks, claims, frame, dict(zip(ids, tokens.astype(float)))


def baseline_greedy(claims, frame, costs):
    """Plain greedy set cover with Python sets: best new claims per token."""
    sets = {c: set(frame.index[frame[c].to_numpy()]) for c in frame.columns}
    uncovered = set(claims) & set().union(*sets.values())
    chosen = []
    while uncovered:
        best, best_score = None, 0.0
        for c, s in sets.items():
            gain = len(s & uncovered)
            if gain and gain / costs[c] > best_score + 1e-12 * best_score:
                best, best_score = c, gain / costs[c]
        chosen.append(best)
        uncovered -= sets[best]
    return chosen


def baseline_mi(answers, posterior, costs):
    """numpy MI of every question (exact answers): the entropy of the answer
    distribution, starting from the same DataFrame the API gets."""
    scores = []
    for j, q in enumerate(answers.columns):
        _, inverse = np.unique(answers[q].to_numpy(), return_inverse=True)
        mass = np.bincount(inverse, weights=posterior)
        mass = mass[mass > 0]
        scores.append(float(-(mass * np.log2(mass)).sum()) / costs[j])
    return int(np.argmax(scores)), scores


def question_case(n_cand, n_q, seed):
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 8, n_q)
    codes = np.stack([rng.integers(0, k, n_cand) for k in cards]).astype(np.int32)
    answers = pd.DataFrame({f"q{j}": codes[j] for j in range(n_q)})
    prior = rng.random(n_cand) + 0.05
    costs = {f"q{j}": float(c) for j, c in enumerate(rng.uniform(1, 3, n_q))}
    return answers, codes, prior / prior.sum(), costs


def main(argv: Sequence[str], run: Run) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench run rag", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", default=str(run.out))
    parser.add_argument("--exact-time-limit", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument(
        "--exact-rounds", type=int, default=1, help="interleaved rounds of exact vs ILP"
    )
    args = parser.parse_args(argv)

    from rowvoi.rag import next_question, select_context

    rows = []
    for n_chunks, n_claims in ((200, 50), (5000, 500)):
        chunks, claims, frame, cost_map = context_case(n_chunks, n_claims, 7)
        o, b, r = side_by_side(
            lambda: select_context(chunks, claims, frame),
            lambda: baseline_greedy(claims, frame, cost_map),
            args.rounds,
        )
        sel, base = o.result, b.result
        same = sorted(sel.chunks) == sorted(base)
        rows.append(
            (
                "select_context greedy",
                f"{n_chunks}x{n_claims}",
                o,
                b,
                r,
                f"same chunks: {same}; cost {sel.total_cost:g}",
            )
        )
        o, b, r = side_by_side(
            lambda: select_context(
                chunks, claims, frame, strategy="exact", time_limit=args.exact_time_limit
            ),
            lambda: select_context(
                chunks, claims, frame, strategy="ilp", time_limit=args.exact_time_limit
            ),
            args.exact_rounds,
            warmup=0,  # each call runs up to the time limit
        )
        ex, ilp = o.result, b.result
        rows.append(
            (
                "select_context exact (vs ilp/CBC)",
                f"{n_chunks}x{n_claims}",
                o,
                b,
                r,
                f"exact cost {ex.total_cost:g} optimal={ex.optimal}; "
                f"ilp cost {ilp.total_cost:g} optimal={ilp.optimal}; "
                f"greedy cost {sel.total_cost:g}",
            )
        )
    for n_cand, n_q in ((1000, 50), (100_000, 200)):
        answers, _codes, prior, costs = question_case(n_cand, n_q, 11)
        cost_arr = [costs[f"q{j}"] for j in range(n_q)]
        o, bs, r = side_by_side(
            lambda: next_question(answers, prior=prior, costs=costs),
            lambda: baseline_mi(answers, prior, cost_arr),
            args.rounds,
        )
        sug, (b, _) = o.result, bs.result
        rows.append(
            (
                "next_question",
                f"{n_cand}x{n_q}",
                o,
                bs,
                r,
                f"same question: {sug.col == f'q{b}'}",
            )
        )

    lines = [
        "# rowvoi RAG adapters benchmark",
        "",
        *run.header(versions("numpy", "pandas", peers={"pulp (CBC)": version_of("pulp")})),
        f"Whole-call times in ms. {method_note(args.rounds)} Exact vs ILP: "
        f"{args.exact_rounds} round(s), no warm-up. Ratio = baseline time / our time per round, median "
        "(min-max). The baseline is a plain",
        "Python/numpy implementation written in this script; for exact, the peer is",
        f"pulp/CBC ILP (time limit {args.exact_time_limit:g} s each).",
        "",
        "| case | size | ours | baseline | ratio | notes |",
        "|---|---|---:|---:|---:|---|",
    ]
    for name, size, a, b, r, note in rows:
        lines.append(
            f"| {name} | {size} | {a.wall_s().scaled(1e3).fmt(',.2f')} ms | "
            f"{b.wall_s().scaled(1e3).fmt(',.2f')} ms | {r.fmt('.1f', 'x')} | {note} |"
        )
    publish(args.out, lines)
    return 0
