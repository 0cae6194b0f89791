#!/usr/bin/env python3
"""Benchmark rowvoi's belief layer (policies, sessions) against the reference.

What it measures
----------------
Wall-clock time (``time.perf_counter``; data loading, model fitting and state
construction excluded) of

* ``CandidateMIPolicy().suggest(df, state)``: model-free MI of every column,
* ``MIPolicy(RowVoiModel().fit(df)).suggest(df, state)``: the model's
  expected information gain of every column (the model is fitted outside
  the timed region, on the same frame),
* ``DisambiguationSession(df, rows, policy=CandidateMIPolicy()).run(
  StopRules(), true_row=...)``: a whole session to a unique row,

where ``state`` is uniform over every row of a random categorical frame, for
this repository's native ``rowvoi`` ("ours") and for the pure-Python
reference ``rowvoi==0.2.0`` from PyPI ("ref"), which runs in its own
virtual environment in a subprocess.

This reuses the harness of the ``keys`` suite (``bench/suites/keys.py``) -- the same frame generator
(seeded, no duplicate rows, cardinalities 2..12, written once to ``.npz``),
the same loader (``load_frame`` of the keys driver, which this script's
driver executes from the file beside it), the same subprocess protocol with
a time cap, and the same reference-venv handling.  Only the timed calls
differ.

Cases (``--cases`` takes names or shell patterns):

==========================  =============================================  =========
name                        call                                           reference
==========================  =============================================  =========
cmi-1000x30                 CandidateMIPolicy.suggest                      yes
cmi-10000x30                CandidateMIPolicy.suggest                      yes
mip-1000x20                 MIPolicy.suggest                               yes
mip-5000x20                 MIPolicy.suggest                               yes
session-1000x20             DisambiguationSession.run to a unique row      yes
cmi-1000000x100             CandidateMIPolicy.suggest, ours only,          no
                            in a subprocess with peak memory (RSS)
mip-1000000x100             MIPolicy.suggest, ours only, in a subprocess   no
==========================  =============================================  =========

Both sides are timed alike: ``--repeat`` runs (default 3; one when the first
takes more than 10 s), with a fresh state for every run (so nothing cached on
a state from an earlier run helps), reported as the median with the min-max
of the runs -- never the best run.  The runs are interleaved: each round
runs each side once, the order alternating round by round.  The reference is killed after
``--ref-timeout`` seconds.
Both sides report the column they chose and its expected information gain,
so the table also says whether they agree.

How to run
----------
From the repository root, with the package installed in the current
interpreter::

    python -m bench run belief                  # all cases -> bench/results/belief.md
    python -m bench run belief --quick          # the 1,000-row cases only
    python -m bench run belief --cases 'cmi-*'
    python -m bench run belief --no-ref         # ours only
    python -m bench run belief --ref-venv REF_VENV

The driver both sides run is ``bench/peers/belief_driver.py``.  The
reference venv is found as in the ``keys`` suite (``--ref-venv``, then
``$ROWVOI_REF_VENV``, then ``bench/.refvenv``, created when missing).
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._common.results import Run, versions, write
from . import keys as harness

# The driver: same protocol as the keys suite's (one JSON object per line on
# the original stdout: "ready" once loaded, then "result" or "error").  It
# executes the keys driver beside it (bench/peers/keys_driver.py) for
# load_frame and max_rss_mb, so both benchmarks build identical frames.
DRIVER_PATH = harness.PEERS / "belief_driver.py"
DRIVER_SOURCE = DRIVER_PATH.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Case:
    """One benchmark case."""

    name: str
    func: str  # candidate_mi | mi_policy | session
    nrows: int
    ncols: int
    quick: bool = False
    ref: bool = True
    isolated: bool = False
    target: float | None = None  # required speed-up over the reference
    max_seconds: float | None = None  # required absolute time (ours)

    @property
    def label(self) -> str:
        """The call, for the table."""
        return {
            "candidate_mi": "CandidateMIPolicy.suggest",
            "mi_policy": "MIPolicy.suggest",
            "session": "DisambiguationSession.run",
        }[self.func]


CASES: tuple[Case, ...] = (
    Case("cmi-1000x30", "candidate_mi", 1000, 30, quick=True),
    Case("cmi-10000x30", "candidate_mi", 10_000, 30, target=1000.0),
    Case("mip-1000x20", "mi_policy", 1000, 20, quick=True),
    Case("mip-5000x20", "mi_policy", 5000, 20, target=1000.0),
    Case("session-1000x20", "session", 1000, 20, quick=True),
    Case(
        "cmi-1000000x100",
        "candidate_mi",
        1_000_000,
        100,
        ref=False,
        isolated=True,
        max_seconds=1.0,
    ),
    Case(
        "mip-1000000x100", "mi_policy", 1_000_000, 100, ref=False, isolated=True, max_seconds=1.0
    ),
)


def select_cases(spec: str | None, quick: bool) -> list[Case]:
    """Cases named by --cases (names or patterns), or all (or the quick ones)."""
    if spec:
        pats = [p.strip() for p in spec.split(",") if p.strip()]
        out = [c for c in CASES if any(fnmatch.fnmatch(c.name, p) for p in pats)]
        if not out:
            raise SystemExit(
                f"--cases {spec!r} matches no case: " + ", ".join(c.name for c in CASES)
            )
        return out
    return [c for c in CASES if c.quick or not quick]


def make_spec(case: Case, data: Path, repeat: int) -> dict[str, Any]:
    """The JSON spec handed to the driver."""
    return {
        "data": str(data),
        "dtype": "int",
        "func": case.func,
        "repeat": repeat,
        "repeat_threshold": harness.REPEAT_THRESHOLD,
    }


def frame_path(workdir: Path, case: Case, seed: int, cache: dict) -> Path:
    """Generate (once) and store the frame for a case's shape."""
    shape = (case.nrows, case.ncols)
    if shape not in cache:
        codes, cards, costs = harness.generate_codes(case.nrows, case.ncols, seed)
        p = workdir / f"frame_{case.nrows}x{case.ncols}.npz"
        harness.write_frame(p, codes, cards, costs)
        cache[shape] = p
    return cache[shape]


def run_ours(case: Case, data: Path, args, workdir: Path, driver_ns: dict) -> harness.Outcome:
    """Ours, one run: in-process, or in a child for the isolated cases."""
    spec = make_spec(case, data, 1)
    if case.isolated:
        return harness.run_driver(
            sys.executable,
            DRIVER_PATH,
            spec,
            args.ours_timeout,
            isolated_env=False,
            cwd=workdir,
        )
    import rowvoi

    try:
        df, _ = driver_ns["load_frame"](str(data), "int")
        return harness.Outcome.from_result(driver_ns["run_case"](rowvoi, df, spec))
    except Exception as exc:  # report it and keep going
        return harness.Outcome("error", message=f"{type(exc).__name__}: {exc}"[:200])


def run_ref(case: Case, data: Path, args, python: str, workdir: Path) -> harness.Outcome:
    """The reference in its venv, one run, capped at --ref-timeout seconds."""
    spec = make_spec(case, data, 1)
    return harness.run_driver(
        python, DRIVER_PATH, spec, args.ref_timeout, isolated_env=True, cwd=workdir
    )


def agree_cell(case: Case, ours: harness.Outcome, ref: harness.Outcome) -> str:
    """Whether both sides chose the same column(s)."""
    if ours.status != "ok" or ref.status != "ok":
        return "–"
    if ours.key == ref.key:
        return "yes"
    return f"NO (ours {', '.join(ours.key)}; ref {', '.join(ref.key)})"


def result_cell(case: Case, o: harness.Outcome) -> str:
    """What the call returned: the column and its gain, or the session's steps."""
    if o.status != "ok":
        return "–"
    if case.func == "session":
        return f"{len(o.key)} questions, " + ("unique" if o.cost == 1.0 else "NOT unique")
    return f"{o.key[0]} ({o.cost:.4f} bits)" if o.cost is not None else str(o.key[0])


def target_cell(case: Case, ours: harness.Outcome, ref: harness.Outcome, cap: float) -> str:
    """Whether the issue's target for this case is met."""
    if case.target is not None:
        if ours.status != "ok" or not ours.seconds:
            return f"≥{case.target:,.0f}×: not measured"
        if ref.status == "ok" and ref.seconds:
            r = ref.seconds / ours.seconds
            return f"≥{case.target:,.0f}×: {'met' if r >= case.target else 'NOT met'}"
        if ref.status in ("timeout", "skipped"):
            r = cap / ours.seconds
            return (
                f"≥{case.target:,.0f}×: {'met (lower bound)' if r >= case.target else 'unknown'}"
            )
        return f"≥{case.target:,.0f}×: no reference time"
    if case.max_seconds is not None:
        if ours.status != "ok":
            return f"<{case.max_seconds:g} s: not measured"
        ok = ours.seconds is not None and ours.seconds < case.max_seconds
        return f"<{case.max_seconds:g} s: {'met' if ok else 'NOT met'}"
    return ""


def render(results, args, ref_info, ref_venv, run: Run) -> str:
    """The markdown report."""
    import rowvoi

    cap = args.ref_timeout
    ref_version = (ref_info or {}).get("rowvoi")
    lines = [
        "# rowvoi belief benchmark (policies and sessions)",
        "",
        *run.header(versions("numpy", "pandas", peers={"rowvoi (reference)": ref_version}))[:-1],
        f"- ours: rowvoi {rowvoi.__version__} (this checkout, installed)",
    ]
    if ref_info:
        lines.append(
            f"- reference: rowvoi {ref_info['rowvoi']} (pure Python, from PyPI in its own venv); "
            f"python {ref_info['python']}, numpy {ref_info['numpy']}, "
            f"pandas {ref_info['pandas']}"
        )
    else:
        lines.append("- reference: not run (--no-ref)")
    lines += [
        f"- settings: seed {args.seed}; int64 columns, cardinalities 2..12, no duplicate "
        f"rows; state uniform over all rows; both sides median (min-max) of {args.repeat} "
        f"runs, fresh state each run (1 run when the first is over 10 s), not best-of; "
        f"reference capped at {cap:g} s",
        "",
        "Times exclude loading, model fitting and state construction. "
        "ratio = reference time / our time.",
        "",
        "| case | call | frame | ours | reference | ratio | target | our result | "
        "same choice | notes |",
        "|---|---|---|---:|---:|---:|---|---|---|---|",
    ]
    for case, ours, ref in results:
        notes = []
        for side, o in (("ours", ours), ("ref", ref)):
            if o.status == "error":
                notes.append(f"{side} error: {o.message}")
        if case.isolated and ours.status == "ok" and ours.peak_mb is not None:
            notes.append(
                f"ours peak RSS {ours.peak_mb:,.0f} MB (after load {ours.loaded_mb:,.0f} MB)"
            )
        if (
            ref.status == "ok"
            and ours.status == "ok"
            and case.func != "session"
            and ref.cost is not None
            and ours.cost is not None
        ):
            notes.append(f"ref reports {ref.cost:.4f} bits")
        lines.append(
            "| "
            + " | ".join(
                [
                    case.name,
                    case.label,
                    f"{case.nrows:,} × {case.ncols}",
                    harness.side_time(ours, args.ours_timeout),
                    harness.side_time(ref, cap),
                    harness.ratio_cell(ours, ref, cap),
                    target_cell(case, ours, ref, cap),
                    result_cell(case, ours),
                    agree_cell(case, ours, ref),
                    "; ".join(notes),
                ]
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str], run: Run) -> int:
    """Run the benchmark; see the module docstring."""
    p = argparse.ArgumentParser(
        prog="python -m bench run belief", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--cases", help="comma-separated case names or patterns")
    p.add_argument("--quick", action="store_true", help="the 1,000-row cases only")
    p.add_argument("--no-ref", action="store_true", help="do not run the reference")
    p.add_argument("--no-ours", action="store_true", help="do not run ours")
    p.add_argument("--ref-venv", help="venv holding rowvoi==0.2.0")
    p.add_argument(
        "--ref-timeout",
        type=float,
        default=300.0,
        help="seconds before a reference call is killed (default 300)",
    )
    p.add_argument(
        "--ours-timeout",
        type=float,
        default=600.0,
        help="seconds before an isolated run of ours is killed (default 600)",
    )
    p.add_argument(
        "--repeat", type=int, default=3, help="runs per case and side, median reported (3)"
    )
    p.add_argument("--seed", type=int, default=0, help="frame seed (default 0)")
    p.add_argument("--out", default=str(run.out), help="markdown report path")
    args = p.parse_args(argv)
    cases = select_cases(args.cases, args.quick)
    ref_venv = ref_info = None
    python = None
    if not args.no_ref and any(c.ref for c in cases):
        ref_venv = harness.resolve_ref_venv(args.ref_venv)
        ref_info = harness.ensure_ref_venv(ref_venv)
        python = str(harness.venv_python(ref_venv))
    results = []
    with tempfile.TemporaryDirectory(prefix="rowvoi-belief-bench-") as tmp:
        workdir = Path(tmp)
        driver_ns: dict[str, Any] = {
            "__name__": "rowvoi_belief_driver",
            "__file__": str(DRIVER_PATH),
        }
        exec(compile(DRIVER_SOURCE, str(DRIVER_PATH), "exec"), driver_ns)
        frames: dict = {}
        for case in cases:
            harness.log(f"{case.name}: {case.label} on {case.nrows:,} x {case.ncols}")
            data = frame_path(workdir, case, args.seed, frames)
            # interleaved rounds: each side once per round, the order alternating
            ours, ref = harness.interleave_sides(
                None
                if args.no_ours
                else functools.partial(run_ours, case, data, args, workdir, driver_ns),
                functools.partial(run_ref, case, data, args, python, workdir)
                if case.ref and python is not None
                else None,
                args.repeat,
                harness.REPEAT_THRESHOLD,
            )
            harness.log(
                f"  ours: {harness.side_time(ours, args.ours_timeout)} "
                f"{ours.key[:1]} {ours.message}"
            )
            if ref.status != "off":
                harness.log(
                    f"  ref:  {harness.side_time(ref, args.ref_timeout)} "
                    f"{ref.key[:1]} {ref.message}"
                )
            results.append((case, ours, ref))
    report = render(results, args, ref_info, ref_venv, run)
    write(args.out, report)
    print(report)
    return 0
