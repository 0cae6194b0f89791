"""The ``rowvoi discover`` verb: search corpora and commit to the few
results worth reading, or abstain.

:func:`rowvoi.corpus.discover` searches one corpus or several (each gated
on its own floor, then fused by rank), selects (``--strategy``,
``--max-k``, ``--rel``, ``--min-score``) and, with ``--disclose``, reads
each result's body from inside the corpus's root. The human output shows,
for each committed hit, the number its floor was compared with, and for a
tool of a catalogue (``rowvoi build NAME --mcp-tools FILE``) how to call it:
the tool's name, its arguments and its server (``--json`` carries the whole
input schema in each result's ``metadata``).

Examples
--------
>>> import argparse
>>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
>>> add_parsers(sub); list(sub.choices)
['discover']
>>> _discover_floor("notes=0.4,wiki=auto", ["notes", "wiki"])
{'notes': 0.4, 'wiki': 'auto'}
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from typing import Any

from rowvoi.cli._common import (
    REL,
    UsageError,
    add_rerank_args,
    corpus_names,
    integer,
    open_named,
    print_json,
    printable,
    rerank_from_args,
    search_k,
    split_list,
)
from rowvoi.corpus import (
    DISCLOSURE_LEVELS,
    FUSIONS,
    MODES,
    SELECT_STRATEGIES,
    NoFloorWarning,
    discover,
)
from rowvoi.corpus.retrieval.rank import MAX_FETCH_K
from rowvoi.corpus.retrieval.selection import _has_evidence as _evidence, floor_score

__all__ = ["add_parsers"]


def _discover_floor(text: str | None, names: list[str]) -> Any:
    """``--min-score``: FLOAT or auto for one corpus; auto or
    NAME=FLOAT|auto,... for several (usage errors only)."""
    if text is None:
        return None

    def one(token: str, option: str) -> Any:
        if token == "auto":
            return "auto"
        try:
            value = float(token)
        except ValueError:
            raise UsageError(f"{option}: {token!r} is not a number or 'auto'") from None
        if not math.isfinite(value):
            raise UsageError(f"{option}: {token!r} must be finite")
        return value

    if "=" not in text:
        value = one(text.strip(), "--min-score")
        if len(names) > 1 and value != "auto":
            raise UsageError(
                "--min-score: one number cannot be the floor of several "
                "corpora (their scores live on different scales); give "
                "'auto' or NAME=FLOAT,NAME=FLOAT"
            )
        return value
    floors: dict[str, Any] = {}
    for item in split_list(text):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--min-score: {item!r} is not NAME=FLOAT or NAME=auto")
        if name.strip() not in names:
            raise UsageError(
                f"--min-score names {name.strip()!r}, which is not one of the "
                f"corpora searched ({', '.join(names)})"
            )
        floors[name.strip()] = one(value.strip(), f"--min-score {name.strip()}")
    return floors if len(names) > 1 else floors[names[0]]


def _indent(text: str, prefix: str = "     ", max_lines: int = 40) -> list[str]:
    lines = text.splitlines() or [""]
    out = [prefix + line for line in lines[:max_lines]]
    if len(lines) > max_lines:
        out.append(f"{prefix}... ({len(lines) - max_lines} more lines)")
    return out


def _cmd_discover(args: argparse.Namespace) -> int:
    names = args.names
    floor = _discover_floor(args.min_score, names)
    if args.disclose and args.disclose_level not in (None, "body"):
        raise UsageError(
            f"--disclose is --disclose-level body; it cannot go with --disclose-level "
            f"{args.disclose_level}"
        )
    level = args.disclose_level or ("body" if args.disclose else "metadata")
    reads = level != "metadata"  # body or bundled: each result's body is read
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoFloorWarning)
        opened = [open_named(n) for n in names]
        result = discover(
            opened if len(opened) > 1 else opened[0],
            args.query,
            k=args.k,
            mode=args.mode,
            strategy=args.strategy,
            max_k=args.max_k,
            rel=args.rel,
            min_score=floor,
            fusion=args.fusion,
            disclose_level=level,
            roots=args.root,
            **rerank_from_args(args),
        )
    for w in caught:
        if issubclass(w.category, NoFloorWarning):
            print(f"{args.verb_parser.prog}: warning: {printable(w.message)}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if args.json:
        print_json(result.to_dict())
        return 0
    sig = result.signals
    print(
        f"{len(result.results)} of {result.n_retrieved} retrieved "
        f"({result.mode}, {result.strategy}): {result.reason}"
    )
    # a floor compares each hit's floor_score: a hybrid RRF hit's evidence
    # (its blend score), not its rank-only RRF score; every line that shows
    # a floor shows the number compared with it, labelled
    per_source = sig.get("per_source") or {}
    for name, ps in per_source.items():
        top = "-" if ps["top_score"] is None else f"{ps['top_score']:.4g}"
        floor_text = ""
        if ps["floor"] is not None:
            ev = ps.get("top_evidence")
            floor_text = f", floor {ps['floor']:.4g}" + (
                "" if ev is None else f" on the evidence (top evidence {ev:.4g})"
            )
        gated = "; gated" if ps["abstained"] and ps["n_retrieved"] else ""
        none = f" (no hits: {printable(ps['no_hits'])})" if ps.get("no_hits") else ""
        print(
            f"  {printable(name)}: {ps['n_retrieved']} retrieved{none}, top {top}{floor_text}{gated}"
        )
    if sig.get("no_hits"):
        print(f"  no hits: {printable(sig['no_hits'])}")
    floor = sig.get("min_score")
    on_evidence = sig.get("floor_compares") == "evidence"
    what = "evidence" if on_evidence else "score"
    if floor is not None and sig.get("top_floor_score") is not None:
        top = sig["top_floor_score"]
        if result.abstained:
            print(f"  top {what} {top:.4g} is below the floor {floor:.4g}")
        else:
            how = "its blend score; an RRF score depends on ranks only" if on_evidence else ""
            print(
                f"  floor {floor:.4g} ({sig.get('floor_from')}), compared with each hit's "
                f"{what}{f' ({how})' if how else ''}: top {what} {top:.4g}"
            )
    selected = result.selection.selected if result.selection is not None else []
    for i, d in enumerate(result.results, 1):
        who = printable(f"{d.source}/{d.artifact_id}" if len(names) > 1 else d.artifact_id)
        name = f"  {printable(d.name)}" if d.name != str(d.artifact_id) else ""
        hit_floor = per_source.get(d.source, {}).get("floor") if per_source else floor
        compared = ""
        if hit_floor is not None and i <= len(selected) and _evidence(selected[i - 1]):
            compared = f"  (evidence {floor_score(selected[i - 1]):.4g}, floor {hit_floor:.4g})"
        print(f"{i:2d}. {d.score:.4g}  {who}{name}{compared}")
        if d.pointer:
            print(f"     {printable(d.pointer)}")
        summary = " ".join(d.summary.split())
        if summary or not d.metadata.get("disclosure"):
            print(f"     {printable(summary[:160])}{'...' if len(summary) > 160 else ''}")
        elif not reads:
            print(f"     (not disclosed: {printable(d.metadata['disclosure'])})")
        tool, params = d.metadata.get("tool"), d.metadata.get("param_names")
        if isinstance(tool, str) and isinstance(params, list):  # a tool catalogue's hit
            server = d.metadata.get("server")
            on = f" on server {server}" if server else ""
            print(printable(f"     call: {tool}({', '.join(map(str, params))}){on}"))
        if reads:
            if d.body is not None:
                print("     ---")
                for line in _indent(d.body):
                    print(printable(line.expandtabs(8)))
            elif d.metadata.get("disclosure"):
                print(f"     (body not read: {printable(d.metadata['disclosure'])})")
    return 0


# ----------------------------------------------------------------- parsers
def add_parsers(sub: Any) -> None:
    """Register ``discover`` on the ``rowvoi`` subparsers (see the
    module's example)."""
    p = sub.add_parser(
        "discover",
        help="search corpora and commit to the few results worth reading",
        description="Search one or more built corpora, then commit to the few results an "
        "agent or a person should act on -- or abstain. The conservative "
        "strategy keeps the top result and those scoring at least --rel times "
        "its score, at most --max-k. Several corpora (NAME,NAME) are searched "
        "separately, each gated on its own floor, then fused by rank "
        "(reciprocal rank fusion): scores of different corpora are never "
        "compared. --min-score turns on abstention: a floor on the search's "
        "own score scale, 'auto' for the floor calibrated for the corpus "
        "(none stored: a warning, and no floor), or NAME=FLOAT,... per corpus. "
        "--disclose reads each result's file (only inside the corpus's root, or "
        "the --root folders). "
        "Exit 1 for an unknown or empty corpus.",
        epilog="example: rowvoi discover notes 'how do I rotate the TLS certificate' "
        "--disclose; rowvoi discover notes,wiki 'vpn setup' --min-score auto --json",
    )
    p.add_argument(
        "names",
        metavar="NAME[,NAME...]",
        type=corpus_names,
        help="the corpus, or several, comma-separated",
    )
    p.add_argument("query", metavar="QUERY", help="what to look for (searched verbatim)")
    p.add_argument(
        "--k",
        type=search_k(),
        default=10,
        help=f"candidates retrieved per corpus, 1 .. {MAX_FETCH_K} (default 10)",
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        default="hybrid",
        metavar="{hybrid,dense,lexical}",
        help="search mode (default hybrid)",
    )
    p.add_argument(
        "--fusion",
        choices=FUSIONS,
        default="rrf",
        metavar="{rrf,blend}",
        help="hybrid fusion: rrf (rank-based, default) or blend (keeps score "
        "magnitudes; pairs with --min-score)",
    )
    add_rerank_args(p)
    p.add_argument(
        "--strategy",
        choices=SELECT_STRATEGIES,
        default="conservative",
        help="selection rule (default conservative)",
    )
    p.add_argument(
        "--max-k",
        type=integer(1),
        default=3,
        help="commit to at most this many results (default 3)",
    )
    p.add_argument(
        "--rel",
        type=REL,
        default=0.9,
        help="keep results scoring at least this fraction of the top (default 0.9)",
    )
    p.add_argument(
        "--min-score",
        metavar="FLOAT|auto|NAME=FLOAT,...",
        help="abstain below this floor (default: never abstain)",
    )
    p.add_argument(
        "--disclose",
        action="store_true",
        help="also print each result's body (the file it points to): --disclose-level body",
    )
    p.add_argument(
        "--disclose-level",
        choices=DISCLOSURE_LEVELS,
        help="what to hand back of each result: metadata (default: id, name, "
        "summary, pointer), body (also the file it points to) or bundled (for "
        "bodies with attachments; today the same as body)",
    )
    p.add_argument(
        "--root",
        metavar="DIR",
        action="append",
        help="with --disclose: read bodies only from inside DIR (repeatable; "
        "default: the folder each corpus was built from)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_discover, verb_parser=p)
