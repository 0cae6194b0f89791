"""Tool search over a catalogue of MCP tools: top-1 accuracy and abstention.

    python -m bench run mcp_tools            # the figures in bench/results/mcp_tools.md
    python -m bench run mcp_tools --quick    # 40 requests of each kind

The catalogue and the requests are the test data of ``tests/data/mcp/``
(320 tools on 40 servers, 131 labelled requests, 50 requests no tool
serves; see its README). The catalogue is built with
:func:`rowvoi.corpus.from_mcp_tools` and MiniLM (``"server.tool:
description"`` embedded, schemas not), then every request goes through
:func:`rowvoi.corpus.discover` (``k=10``, the conservative selector) in each
mode:

* **top-1**: the first result is the intended tool or one of its ``also``
  alternates (and, stricter, the intended tool only); top-3 and MRR come
  from the search's ranking; the ``disambiguation`` requests and those
  aimed at a thin-description tool are shown apart;
* **abstention, held out**: the floor is calibrated
  (:func:`rowvoi.corpus.calibrate_min_score`, ``k=10``) on the
  even-numbered in-catalogue and out-of-catalogue requests and applied with
  ``min_score="auto"`` to the odd-numbered ones, then the other way round;
  the table pools both folds: the share of in-catalogue requests still
  answered, of out-of-catalogue requests refused, and of in-catalogue
  requests answered with the right tool first.

Writes ``bench/results/mcp_tools.md`` and ``mcp_tools.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._common.results import ROOT, Run, publish, versions, write

DATA = ROOT / "tests" / "data" / "mcp"
#: (label, mode, fusion) of the searches measured
CONFIGS = (
    ("dense", "dense", "rrf"),
    ("lexical", "lexical", "rrf"),
    ("hybrid (rrf)", "hybrid", "rrf"),
    ("hybrid (blend)", "hybrid", "blend"),
)
K = 10


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _pct(x: float) -> str:
    return "-" if x != x else f"{100 * x:.1f} %"  # NaN: no request of that group


def accuracy(corpus: Any, requests: Sequence[dict[str, Any]], mode: str, fusion: str) -> dict:
    """Top-1 (accepted, intended only), top-3, MRR over ``requests``, with
    the disambiguation and thin-description groups apart."""
    from rowvoi.corpus import discover, search

    thin = {r["tool"] for r in requests if r.get("thin")}
    rows = []
    seconds = 0.0
    for r in requests:
        ok = {r["tool"], *r.get("also", [])}
        t0 = time.perf_counter()
        res = discover(corpus, r["request"], k=K, mode=mode, fusion=fusion)
        seconds += time.perf_counter() - t0
        first = res.results[0].artifact_id if res.results else None
        ranked = [
            h.artifact_id for h in search(corpus, r["request"], k=K, mode=mode, fusion=fusion)
        ]
        rank = next((i for i, a in enumerate(ranked, 1) if a in ok), None)
        server = r["tool"].split(".", 1)[0]
        rows.append(
            {
                "miss_same_server": first not in ok
                and first is not None
                and first.split(".", 1)[0] == server,
                "top1": first in ok,
                "top1_intended": first == r["tool"],
                "top3": rank is not None and rank <= 3,
                "rr": 0.0 if rank is None else 1.0 / rank,
                "kind": r.get("kind"),
                "thin": r["tool"] in thin,
            }
        )

    def share(sel: list[dict], key: str) -> float:
        return sum(bool(x[key]) for x in sel) / len(sel) if sel else float("nan")

    dis = [x for x in rows if x["kind"] == "disambiguation"]
    thin_rows = [x for x in rows if x["thin"]]
    return {
        "n": len(rows),
        "top1": share(rows, "top1"),
        "top1_intended": share(rows, "top1_intended"),
        "top3": share(rows, "top3"),
        "mrr": statistics.fmean(x["rr"] for x in rows),
        "misses_on_the_server": sum(x["miss_same_server"] for x in rows)
        / max(1, sum(not x["top1"] for x in rows)),
        "disambiguation_top1": share(dis, "top1"),
        "n_disambiguation": len(dis),
        "thin_top1": share(thin_rows, "top1"),
        "n_thin": len(thin_rows),
        "ms_per_request": 1e3 * seconds / max(len(rows), 1),  # one discover
    }


def abstention(
    corpus: Any,
    requests: Sequence[dict[str, Any]],
    outside: Sequence[str],
    mode: str,
    fusion: str,
) -> dict:
    """Held-out abstention, two folds (even / odd), pooled."""
    from rowvoi.corpus import NoFloorWarning, calibrate_min_score, discover

    answered = refused = right = n_in = n_out = 0
    floors = []
    for fold in (0, 1):
        cal_in = [r["request"] for i, r in enumerate(requests) if i % 2 == fold]
        cal_out = [q for i, q in enumerate(outside) if i % 2 == fold]
        test_in = [r for i, r in enumerate(requests) if i % 2 != fold]
        test_out = [q for i, q in enumerate(outside) if i % 2 != fold]
        cal = calibrate_min_score(corpus, cal_in, cal_out, mode=mode, fusion=fusion, k=K)
        floors.append(cal.min_score)
        with warnings.catch_warnings():
            warnings.simplefilter("error", NoFloorWarning)  # the floor must be there
            for r in test_in:
                res = discover(
                    corpus, r["request"], k=K, mode=mode, fusion=fusion, min_score="auto"
                )
                if not res.abstained:
                    answered += 1
                    right += res.results[0].artifact_id in {r["tool"], *r.get("also", [])}
            for q in test_out:
                res = discover(corpus, q, k=K, mode=mode, fusion=fusion, min_score="auto")
                refused += res.abstained
        n_in += len(test_in)
        n_out += len(test_out)
    return {
        "floors": floors,
        "answered": answered / n_in,
        "refused": refused / n_out,
        "answered_right": right / n_in,
        "n_in": n_in,
        "n_out": n_out,
    }


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run mcp_tools", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--requests",
        type=int,
        default=None,
        help="use only the first N labelled and N out-of-catalogue requests",
    )
    ap.add_argument("--embedder", default="minilm", help="embedder spec (default minilm)")
    args = ap.parse_args(argv)

    from rowvoi.corpus import CorpusStore, build, from_mcp_tools

    tools = _load("mcp_tools.json")
    requests = _load("mcp_requests.json")
    outside = [r["request"] for r in _load("mcp_out_of_catalogue.json")]
    thin = {
        f"{t['server']}.{t['name']}" for t in tools if len(t.get("description", "").split()) < 4
    }
    for r in requests:
        r["thin"] = r["tool"] in thin
    if args.requests:
        requests, outside = requests[: args.requests], outside[: args.requests]

    with tempfile.TemporaryDirectory(prefix="rowvoi-mcp-bench-") as tmp:
        store = CorpusStore(Path(tmp) / "tools", name="tools")
        t0 = time.perf_counter()
        corpus = build(
            from_mcp_tools(DATA / "mcp_tools.json", embedder=args.embedder),
            store=store,
            progress=False,
        )
        build_s = time.perf_counter() - t0
        results = {}
        for label, mode, fusion in CONFIGS:
            acc = accuracy(corpus, requests, mode, fusion)
            ab = abstention(corpus, requests, outside, mode, fusion)
            results[label] = {"mode": mode, "fusion": fusion, **acc, "abstention": ab}
            print(
                f"{label}: top-1 {_pct(acc['top1'])}, answered {_pct(ab['answered'])}, "
                f"refused {_pct(ab['refused'])}",
                flush=True,
            )
        store.close()

    n_req = len(requests)
    n_dis = sum(r.get("kind") == "disambiguation" for r in requests)
    n_thin = sum(r["thin"] for r in requests)
    lines = [
        "# Tool search over an MCP catalogue: top-1 accuracy and abstention",
        "",
        *run.header(versions("numpy", "onnxruntime")),
        f"Catalogue: {len(tools)} tools on {len({t['server'] for t in tools})} servers "
        f"(`tests/data/mcp/`), built with `from_mcp_tools` and `{args.embedder}` in "
        f"{build_s:.1f} s; {n_req} labelled requests ({n_dis} disambiguation, {n_thin} "
        f"aimed at a thin-description tool), {len(outside)} out-of-catalogue requests. "
        f"`discover(k={K})`, conservative selector.",
        "",
        "## Top-1 accuracy",
        "",
        "A request counts when the first result is its intended tool or one of its "
        "`also` alternates; *intended only* counts the intended tool alone; *misses on "
        "the intended server*: of the requests missed, the share whose first result "
        "is another tool of the right server (the wrong verb).",
        "",
        "| mode | top-1 | intended only | top-3 | MRR | disambiguation | thin "
        "| misses on the intended server | ms / discover |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in results.items():
        lines.append(
            f"| {label} | {_pct(r['top1'])} | {_pct(r['top1_intended'])} | {_pct(r['top3'])} "
            f"| {r['mrr']:.3f} | {_pct(r['disambiguation_top1'])} | {_pct(r['thin_top1'])} "
            f"| {_pct(r['misses_on_the_server'])} | {r['ms_per_request']:.1f} |"
        )
    lines += [
        "",
        "## Abstention with a calibrated floor, held out",
        "",
        "Floors calibrated on the even-numbered requests of both sets, applied with "
        '`min_score="auto"` to the odd-numbered ones, and the other way round; both '
        "folds pooled. *Answered right*: in-catalogue requests answered with an accepted "
        "tool first (the top-1 figure above, after the floor).",
        "",
        "| mode | floors (two folds) | in-catalogue answered | out-of-catalogue refused "
        "| answered right |",
        "|---|---|---|---|---|",
    ]
    for label, r in results.items():
        ab = r["abstention"]
        floors = ", ".join(f"{f:.4g}" for f in ab["floors"])
        lines.append(
            f"| {label} | {floors} | {_pct(ab['answered'])} of {ab['n_in']} "
            f"| {_pct(ab['refused'])} of {ab['n_out']} | {_pct(ab['answered_right'])} |"
        )
    lines += [
        "",
        "The hybrid RRF floor compares each hit's evidence (its blend score), not its "
        "rank-only RRF score (see `rowvoi.corpus.retrieval.calibration`).",
    ]
    publish(run.out, lines)
    doc = {
        "catalogue": {"tools": len(tools), "requests": n_req, "out_of_catalogue": len(outside)},
        "embedder": args.embedder,
        "k": K,
        "build_seconds": build_s,
        "results": results,
    }
    write(run.path("mcp_tools.json"), json.dumps(doc, indent=1) + "\n")
    return 0
