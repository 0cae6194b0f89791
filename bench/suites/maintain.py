"""Maintenance benchmark: ``maintain --all`` on a folder of files, rowvoi
beside ``ir`` 0.1.61.

    python -m bench run maintain --ir-python IR_VENV/bin/python \\
        [--docs 1400,10000] [--rounds 5] \\
        [--markdown bench/results/maintain.md] [--json bench/results/maintain.json]

A folder of N Markdown files (the Cranfield abstracts, repeated with a
numbered suffix past 1,400) is registered as a files corpus on both sides
(hashing embedder, one surface per file, rebuild-on-source-change policy)
and built once. Then, in interleaved rounds (the order of the two systems
alternates per round; medians over rounds with min-max), each system runs
its ``maintain(all=True)`` after:

* ``noop``: nothing changed (the cron case, nearly every run);
* ``touch10``: 10 files touched (new mtime, same bytes);
* ``edit10``: 10 files edited.

Times are wall seconds of the maintain call in-process (imports excluded;
``ir`` runs in its own virtual environment, one process per step, through
``bench/peers/maintain_ir.py``). ``ir``'s source-change policy always runs
its incremental build, which reads and hashes every file; rowvoi compares
sizes and mtimes with the last run's and hashes only files that differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from .._common.cranfield import find_data, records
from .._common.results import ROOT, Run, versions, write
from .._common.timing import spread

IR_PEER = ROOT / "bench" / "peers" / "maintain_ir.py"
STEPS = ("noop", "touch10", "edit10")


def docs_of(n: int) -> dict[str, str]:
    path = os.path.join(find_data(), "cran.all.1400")
    base = [(r.get("T", "") + " " + r.get("W", "")).strip() for r in records(path)]
    return {
        f"d{i:06d}.md": base[i % len(base)] + ("" if i < len(base) else f" (copy {i})")
        for i in range(n)
    }


def write_tree(root: str, docs: dict[str, str]) -> None:
    for i, (name, text) in enumerate(sorted(docs.items())):
        sub = os.path.join(root, f"s{i // 500:03d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, name), "w") as fh:
            fh.write(text)


def change(root: str, step: str, round_no: int) -> None:
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
    picked = files[round_no * 10 % len(files) :][:10]
    for p in picked:
        if step == "touch10":
            t = time.time_ns() - 10**10  # not in the racy window: a plain touch
            os.utime(p, ns=(t, t + round_no))
        elif step == "edit10":
            with open(p, "a") as fh:
                fh.write(f" Revised in round {round_no}.")


def ours(home: str, step: str) -> dict:
    os.environ["ROWVOI_HOME"] = home
    from rowvoi.corpus.maintenance.runs import maintain

    t0 = time.perf_counter()
    report = maintain(all=True)
    seconds = time.perf_counter() - t0
    r = report.results[0]
    return {
        "seconds": seconds,
        "action": r.action,
        "reason": r.reason,
        "texts": (r.counts or {}).get("texts_embedded", 0),
    }


def theirs(ir_python: str, cfg_path: str, step: str) -> dict:
    p = subprocess.run(
        [ir_python, str(IR_PEER), cfg_path, step],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


def bench_size(n: int, rounds: int, ir_python: str, scratch: str) -> dict:
    root_ours = os.path.join(scratch, f"ours-{n}")
    root_ir = os.path.join(scratch, f"ir-{n}")
    docs = docs_of(n)
    write_tree(root_ours, docs)
    write_tree(root_ir, docs)
    home = os.path.join(scratch, f"home-{n}")
    os.environ["ROWVOI_HOME"] = home
    from rowvoi.corpus import registry

    registry.register(
        "bench",
        "files",
        root=root_ours,
        embedder="hashing",
        pattern=r"\.md$",
        maintenance="on_source_change",
    )
    cfg = {"root": root_ir, "pattern": r"\.md$", "scratch": os.path.join(scratch, f"irdata-{n}")}
    cfg_path = os.path.join(scratch, f"ir-{n}.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    theirs(ir_python, cfg_path, "register")
    first = {"ours": ours(home, "build"), "ir": theirs(ir_python, cfg_path, "build")}
    # the first no-op run records the fingerprint on our side; not timed
    ours(home, "noop")
    runs: dict[str, dict[str, list]] = {s: {"ours": [], "ir": []} for s in STEPS}
    for k in range(rounds):
        for step in STEPS:
            change(root_ours, step, k)
            change(root_ir, step, k)
            order = ("ours", "ir") if k % 2 == 0 else ("ir", "ours")
            for who in order:
                res = ours(home, step) if who == "ours" else theirs(ir_python, cfg_path, step)
                runs[step][who].append(res)
    out = {"n_docs": n, "first": first, "steps": {}}
    for step in STEPS:
        o = [r["seconds"] for r in runs[step]["ours"]]
        t = [r["seconds"] for r in runs[step]["ir"]]
        out["steps"][step] = {
            "ours_s": spread(o).median,
            "ours_spread": [spread(o).lo, spread(o).hi],
            "ir_s": spread(t).median,
            "ir_spread": [spread(t).lo, spread(t).hi],
            "ratio_ir_over_ours": spread(t).median / spread(o).median,
            "ours_action": runs[step]["ours"][-1]["action"],
            "ours_reason": runs[step]["ours"][-1]["reason"],
            "ir_reason": runs[step]["ir"][-1]["results"][0]["reason"],
        }
    return out


def markdown(results: list[dict], header: list[str], rounds: int) -> str:
    lines = [
        "# Corpus maintenance: `maintain --all`, rowvoi vs ir 0.1.61",
        "",
        *header,
        f"{rounds} interleaved rounds, medians (min-max). "
        "Wall seconds of one `maintain(all=True)` call, in-process. The machine was "
        "shared (2 cores, several users): absolute times are noisy, ratios less so.",
        "",
    ]
    for res in results:
        n = res["n_docs"]
        f = res["first"]
        lines += [
            f"## {n:,} files",
            "",
            f"First run (build): rowvoi {f['ours']['seconds']:.2f} s, "
            f"ir {f['ir']['seconds']:.2f} s.",
            "",
            "| after | rowvoi s | ir s | ir / rowvoi | rowvoi says | ir says |",
            "|---|---|---|---|---|---|",
        ]
        for step in STEPS:
            s = res["steps"][step]
            lines.append(
                f"| {step} | {s['ours_s']:.4f} ({s['ours_spread'][0]:.4f}-"
                f"{s['ours_spread'][1]:.4f}) | {s['ir_s']:.3f} ({s['ir_spread'][0]:.3f}-"
                f"{s['ir_spread'][1]:.3f}) | {s['ratio_ir_over_ours']:.1f}x | "
                f"{s['ours_action']} ({s['ours_reason']}) | {s['ir_reason']} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run maintain", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--ir-python", required=True, help="python of a venv with ir 0.1.61")
    ap.add_argument("--docs", default="1400,10000", help="folder sizes, comma-separated")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--markdown", default=str(run.out))
    ap.add_argument("--json", default=str(run.path("maintain.json")))
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for n in (int(x) for x in args.docs.split(",")):
            results.append(bench_size(n, args.rounds, args.ir_python, scratch))
            print(json.dumps(results[-1]["steps"]), file=sys.stderr)
    v = versions("numpy", peers={"ir": ir_version(args.ir_python)})
    write(args.markdown, markdown(results, run.header(v), args.rounds))
    write(
        args.json,
        json.dumps(
            {"command": run.command, "versions": v, "rounds": args.rounds, "results": results},
            indent=1,
        ),
    )
    return 0


def ir_version(ir_python: str) -> str | None:
    """The version of ir in ``ir_python``'s environment (None if unknown)."""
    p = subprocess.run(
        [ir_python, "-c", "from importlib.metadata import version; print(version('ir'))"],
        capture_output=True,
        text=True,
    )
    return p.stdout.strip() or None if p.returncode == 0 else None
