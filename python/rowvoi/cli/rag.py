"""The RAG verbs of the ``rowvoi`` command: context, question.

``context`` selects the cheapest set of retrieved chunks that supports
every claim of an answer (:func:`rowvoi.rag.select_context`; with
``--budget``, the prefix of :func:`rowvoi.rag.plan_context_path` that
fits); ``question`` ranks clarifying questions by the bits they are
expected to resolve per unit cost (:func:`rowvoi.rag.question_values`).
Both read a JSON file named on the command line (a regular file, at most
:data:`~rowvoi.cli._common.MAX_JSON_BYTES`). :mod:`rowvoi.rag` loads
pandas, so it is imported when a verb runs.

Examples
--------
>>> import argparse
>>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
>>> add_parsers(sub); list(sub.choices)
['context', 'question']
>>> _parse_prior("1, 3")
[1.0, 3.0]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Hashable
from typing import Any

from rowvoi.cli._common import (
    BUDGET,
    FRACTION,
    PLAIN,
    SECONDS,
    UsageError,
    json_argument,
    json_value,
    parse_costs,
    parse_number,
    print_json,
    printable,
    proof,
    read_json,
    split_list,
)
from rowvoi.setcover import STRATEGIES

__all__ = ["add_parsers"]


def _parse_prior(text: str | None) -> list[float] | None:
    """Comma-separated weights or a JSON list (inline or in a file): finite,
    >= 0 and not all zero."""
    if text is None:
        return None
    data = json_argument("--prior", text)
    plain = data is PLAIN
    if plain:
        data = split_list(text)
    elif not isinstance(data, list):
        raise UsageError(f"--prior: {text} must hold a JSON list of weights")
    weights = [
        parse_number("--prior", f"weight {i + 1}", w, text=plain) for i, w in enumerate(data)
    ]
    if not weights:
        raise UsageError(f"--prior {text!r} names no weights")
    if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
        raise UsageError(f"--prior: weights must be finite and >= 0, not all zero; got {text!r}")
    return weights


def _is_id(x: Any) -> bool:
    """A chunk id as JSON gives it: a string or an integer."""
    return isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool))


def _context_inputs(path: str) -> tuple[list[Any], list[str], dict[str, list[Any]]]:
    """Chunks, claims and support from a SUPPORT.json file.

    A document that does not follow the format in ``rowvoi context --help``
    is a usage error; ids that do not match up (support citing a chunk that
    is not listed) are left to :mod:`rowvoi.rag`, a failure of the request.
    """
    from rowvoi.rag import Chunk

    data = read_json(path)

    def bad(what: str) -> UsageError:
        return UsageError(f"{path}: {what} (see rowvoi context --help)")

    if not isinstance(data, dict) or not {"chunks", "claims", "support"} <= set(data):
        raise bad('expected an object with "chunks", "claims" and "support"')
    if not isinstance(data["chunks"], list):
        raise bad('"chunks" must be a list')
    chunks: list[Any] = []
    for i, c in enumerate(data["chunks"]):
        if _is_id(c):
            chunks.append(c)
            continue
        if not isinstance(c, dict) or not _is_id(c.get("id")):
            raise bad(f'chunks[{i}] must be an id or an object with a string or integer "id"')
        tokens, text = c.get("tokens"), c.get("text", "")
        if tokens is not None and not (
            isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0
        ):
            raise bad(f"chunks[{i}].tokens must be an integer >= 0, got {tokens!r}")
        if not isinstance(text, str):
            raise bad(f"chunks[{i}].text must be a string")
        chunks.append(Chunk(c["id"], text, tokens))
    claims = data["claims"]
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise bad('"claims" must be a list of strings (the keys of "support")')
    support = data["support"]
    if not isinstance(support, dict) or not all(
        isinstance(v, list) and all(_is_id(x) for x in v) for v in support.values()
    ):
        raise bad('"support" must map each claim to a list of chunk ids')
    return chunks, claims, support


def _cmd_context(args: argparse.Namespace) -> int:
    from rowvoi.rag import plan_context_path, select_context

    costs = parse_costs(args.costs, "chunk")
    chunks, claims, support = _context_inputs(args.file)
    steps: list[Any] = []
    if args.budget is not None:
        path = plan_context_path(chunks, claims, support, costs=costs, weighting=args.weighting)
        chosen = path.prefix_for_budget(args.budget)
        steps = path.steps[: len(chosen)]
        kept = set(chosen)
        covered: set[Hashable] = {c for c in claims if any(x in kept for x in support.get(c, ()))}
        cost = steps[-1].cumulative_cost if steps else 0.0
        optimal = False
    else:
        sel = select_context(
            chunks,
            claims,
            support,
            costs=costs,
            epsilon_claims=args.epsilon,
            strategy=args.strategy,
            time_limit=args.time_limit,
        )
        chosen, covered, cost, optimal = (
            sel.chunks,
            sel.covered_claims,
            sel.total_cost,
            sel.optimal,
        )
    # One shape with and without --budget: claim ids in the order of "claims".
    result: dict[str, Any] = {
        "chunks": [json_value(c) for c in chosen],
        "cost": cost,
        "coverage": 1.0 if not claims else len(covered) / len(claims),
        "optimal": optimal,
        "claims": len(claims),
        "covered_claims": [c for c in claims if c in covered],
        "missing_claims": [c for c in claims if c not in covered],
    }
    if args.budget is not None:
        result["budget"] = args.budget
        result["steps"] = [
            {
                "chunk": json_value(s.name),
                "newly_covered": s.newly_covered,
                "coverage": s.coverage,
                "cost": s.marginal_cost,
                "cumulative_cost": s.cumulative_cost,
            }
            for s in steps
        ]
    if args.json:
        print_json(result)
        return 0
    if args.budget is not None:
        print(
            f"within a budget of {args.budget:g}: {', '.join(map(printable, chosen)) or '(nothing)'}"
        )
        for s in steps:
            print(
                f"  + {printable(s.name)}  covers {s.newly_covered} new claim(s), "
                f"{s.coverage:.0%} after {s.cumulative_cost:g}"
            )
    else:
        print(f"chunks: {', '.join(map(printable, chosen)) or '(none)'}")
        print(f"cost: {cost:g}")
        print(f"strategy: {proof(args.strategy, optimal)}")
    print(f"claims supported: {len(covered)}/{len(claims)} ({result['coverage']:.0%})")
    if result["missing_claims"]:
        print("unsupported: " + ", ".join(map(printable, result["missing_claims"])))
    return 0


def _cmd_question(args: argparse.Namespace) -> int:
    from rowvoi import _validate as _v
    from rowvoi.rag import next_question, question_values

    costs = parse_costs(args.costs, "question")
    prior = _parse_prior(args.prior)
    data = read_json(args.file)
    answers = (
        data["answers"]
        if isinstance(data, dict) and isinstance(data.get("answers"), dict)
        else data
    )
    if not isinstance(answers, dict) or not all(isinstance(v, list) for v in answers.values()):
        raise UsageError(
            f"{args.file}: expected an object mapping each question to the "
            "list of answers the candidates imply (see rowvoi question --help)"
        )
    values = question_values(answers, prior=prior)
    best = next_question(answers, prior=prior, costs=costs)
    cost_of = {q: float((costs or {}).get(q, 1.0)) for q in values}

    def per_cost(q: Hashable) -> float:
        return _v.per_cost(values[q], cost_of[q])

    # by bits per cost; free questions (infinitely good value) first, the
    # most informative of them on top, as next_question chooses
    ranked = sorted(
        values, key=lambda q: (-per_cost(q), -values[q] if math.isinf(per_cost(q)) else 0.0)
    )
    if args.json:
        print_json(
            {
                "best": best.col,
                "expected_bits": best.expected_voi,
                "questions": [
                    {
                        "question": q,
                        "bits": values[q],
                        "cost": cost_of[q],
                        # null for a free question (infinitely good value)
                        "bits_per_cost": (None if math.isinf(per_cost(q)) else per_cost(q)),
                    }
                    for q in ranked
                ],
            }
        )
        return 0
    print(f"{'bits':>6}  {'per cost':>8}  question")
    for q in ranked:
        mark = "  <- ask this" if q == best.col else ""
        print(f"{values[q]:6.2f}  {per_cost(q):8.2f}  {printable(q)}{mark}")
    if best.col is None:
        print("no question can tell the candidates apart")
    return 0


# ----------------------------------------------------------------- parsers
def add_parsers(sub: Any) -> None:
    """Register ``context`` and ``question`` on the ``rowvoi`` subparsers
    (see the module's example)."""
    _add_context(sub)
    _add_question(sub)


def _add_context(sub: Any) -> None:
    """Add ``rowvoi context`` to the subparsers."""
    pc = sub.add_parser(
        "context",
        help="cheapest chunks that support every claim (RAG)",
        description="Select the cheapest set of retrieved chunks that supports every "
        "claim an answer needs (weighted set cover, cost = tokens). FILE is "
        'JSON: {"chunks": [{"id": ..., "tokens": ..., "text": ...}], '
        '"claims": [...], "support": {claim: [chunk ids]}}. Claims no '
        "chunk supports are reported, never dropped. With --json the output "
        "has the same fields with or without --budget: chunks, cost, "
        "coverage, optimal, claims (how many), covered_claims and "
        'missing_claims (lists of claim ids, in the order of "claims"); '
        "--budget adds budget and steps.",
    )
    pc.add_argument("file", help="SUPPORT.json")
    pc.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="greedy",
        help="set cover solver (default: greedy)",
    )
    pc.add_argument(
        "--epsilon",
        type=FRACTION,
        default=0.0,
        metavar="FRACTION",
        help="fraction of claims allowed to go unsupported (default 0)",
    )
    pc.add_argument(
        "--time-limit",
        type=SECONDS,
        default=None,
        metavar="SECONDS",
        help="time limit for exact/ilp/sa/ga/hybrid",
    )
    pc.add_argument(
        "--budget",
        type=BUDGET,
        default=None,
        metavar="TOKENS",
        help="instead of covering everything, print the greedy path's prefix "
        "that fits this budget (>= 0)",
    )
    pc.add_argument(
        "--weighting",
        choices=("uniform", "idf"),
        default="uniform",
        help="with --budget: weight claims equally, or favour scarce evidence",
    )
    pc.add_argument(
        "--costs",
        metavar="SPEC",
        help="chunk costs overriding tokens: id=cost,..., or a JSON object "
        "inline or in a .json file",
    )
    pc.add_argument("--json", action="store_true", help="print JSON for programs")
    pc.set_defaults(func=_cmd_context, verb_parser=pc)


def _add_question(sub: Any) -> None:
    """Add ``rowvoi question`` to the subparsers."""
    pq = sub.add_parser(
        "question",
        help="rank clarifying questions by information gain (RAG)",
        description="Rank clarifying questions by how many bits they are expected to "
        "resolve about which candidate is meant, per unit cost. FILE is "
        "JSON mapping each question to the answer each candidate implies "
        '(or {"answers": {...}}).',
    )
    pq.add_argument("file", help="ANSWERS.json")
    pq.add_argument(
        "--costs",
        metavar="SPEC",
        help="question costs (user patience): question=cost,..., or a JSON "
        "object inline or in a .json file (use JSON when a question "
        "holds a comma)",
    )
    pq.add_argument(
        "--prior",
        metavar="WEIGHTS",
        help="per-candidate prior weights (finite, >= 0, not all zero), "
        "comma-separated, or a JSON list inline or in a .json file "
        "(default: uniform)",
    )
    pq.add_argument("--json", action="store_true", help="print JSON for programs")
    pq.set_defaults(func=_cmd_question, verb_parser=pq)
