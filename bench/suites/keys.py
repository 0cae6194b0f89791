#!/usr/bin/env python3
"""Benchmark rowvoi's deterministic key finding against the reference package.

What it measures
----------------
Wall-clock time (``time.perf_counter``, data loading excluded) and solution
quality of

* ``rowvoi.find_key(df, rows, strategy=...)`` for the ``greedy``, ``exact``
  and ``ilp`` strategies, and
* ``rowvoi.plan_key_path(df, rows)`` (pair-coverage objective),

where ``rows`` is every row of a random categorical frame, for this
repository's native ``rowvoi`` ("ours", imported from the interpreter that runs
this script) and for the pure-Python reference ``rowvoi==0.2.0`` from PyPI
("ref").  Both packages share the import name ``rowvoi``, so the reference
lives in its own virtual environment and is run in a subprocess.

Frames are generated with ``numpy.random.default_rng`` from a fixed seed: each
column gets a random cardinality between 2 and 12 and uniform values, and a
frame is redrawn until it has no duplicate rows, so a full key always exists.
Every frame is written once to an ``.npz`` file and both sides rebuild the
identical ``DataFrame`` (default ``RangeIndex``, so row labels equal row
positions, which the reference assumes) with the same loader code.

Cases (``--cases`` takes names or shell patterns, e.g. ``'greedy-*'``):

====================  ==========================================  =========
name                  call                                        reference
====================  ==========================================  =========
greedy-200x20         find_key(strategy="greedy")                 yes
path-200x20           plan_key_path()                             yes
exact-30x15           find_key(strategy="exact")                  yes
ilp-30x15             find_key(strategy="ilp")                    yes
greedy-1000x30        find_key(strategy="greedy")                 yes
path-1000x30          plan_key_path()                             yes
greedy-3000x40        find_key(strategy="greedy")                 yes
path-3000x40          plan_key_path()                             yes
greedy-1000000x50     find_key(strategy="greedy"), ours only,     no
                      in a subprocess with peak memory (RSS)
====================  ==========================================  =========

Both sides are timed alike: ``--repeat`` runs (default 3; a single run when
the first one takes more than 10 s, and always a single run for the 1M-row
case), reported as the median with the min-max of the runs -- never the best
run.  The runs are interleaved: each round runs each side once, ours first
in even rounds and the reference first in odd ones (ours in this
interpreter, the reference's in its own venv).  The reference is killed after ``--ref-timeout``
seconds (default 120), reported as ``>120 s``.  Once the reference hits the cap for a
call, larger frames of the same call are not run for it (``--ref-all`` runs
them anyway).  Each returned key is checked: its cost (sum of column costs;
``--costs unit`` makes that the number of columns) and whether it really
separates all rows.

How to run
----------
From the repository root, with the package installed in the current
interpreter (e.g. ``pip install --no-build-isolation -e .``)::

    python -m bench run keys                  # all cases, writes bench/results/keys.md
    python -m bench run keys --quick          # small cases only
    python -m bench run keys --cases greedy-200x20,exact-30x15
    python -m bench run keys --no-ref         # ours only (no reference venv needed)
    python -m bench run keys --no-ours        # reference only

The reference venv is taken from ``--ref-venv PATH``, else the environment
variable ``ROWVOI_REF_VENV``, else ``bench/.refvenv``; when it does not hold
``rowvoi==0.2.0`` it is created with ``python -m venv`` and
``pip install rowvoi==0.2.0 pulp`` (network access to PyPI needed once).

Results are written as a markdown table, with a header describing the machine
and software, to ``bench/results/keys.md`` (``--out`` to change) and the same
text is printed to stdout; progress goes to stderr.  The driver both sides run
is ``bench/peers/keys_driver.py``.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._common.results import ROOT, Run, shown_arg, versions, write

REPO_ROOT = ROOT
PEERS = ROOT / "bench" / "peers"
DEFAULT_REF_VENV = REPO_ROOT / "bench" / ".refvenv"
REF_VENV_ENV_VAR = "ROWVOI_REF_VENV"
REF_VERSION = "0.2.0"
REF_REQUIREMENTS = (f"rowvoi=={REF_VERSION}", "pulp")

#: Seconds allowed for a subprocess to import rowvoi and load its frame.
LOAD_TIMEOUT = 900.0
#: Our first run longer than this is not repeated.
REPEAT_THRESHOLD = 10.0

# ---------------------------------------------------------------------------
# Driver: loads a frame, runs one call, reports JSON.  It is written to a file
# and run by the reference venv's python (and by ours for the 1M-row case), and
# it is also exec'd in-process so that both sides use the same loader, timing
# and checking code.  It only needs the standard library, numpy and pandas.
# ---------------------------------------------------------------------------
DRIVER_PATH = PEERS / "keys_driver.py"
DRIVER_SOURCE = DRIVER_PATH.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Case:
    """One benchmark case: a call on a frame of a given shape."""

    name: str
    func: str  # "find_key" or "plan_key_path"
    strategy: str | None
    nrows: int
    ncols: int
    quick: bool = False
    ref: bool = True
    isolated: bool = False  # run ours in a subprocess (peak memory, 1 run)
    time_limit: float | None = None  # passed to find_key (ours only cases)

    @property
    def group(self) -> str:
        """Calls whose reference time grows with frame size (for cap skipping)."""
        return f"{self.func}:{self.strategy}"

    @property
    def label(self) -> str:
        """Human-readable description of the call."""
        if self.func == "plan_key_path":
            return "plan_key_path"
        return f"find_key {self.strategy}"


CASES: tuple[Case, ...] = (
    Case("greedy-200x20", "find_key", "greedy", 200, 20, quick=True),
    Case("path-200x20", "plan_key_path", None, 200, 20, quick=True),
    Case("exact-30x15", "find_key", "exact", 30, 15, quick=True),
    Case("ilp-30x15", "find_key", "ilp", 30, 15, quick=True),
    Case("greedy-1000x30", "find_key", "greedy", 1000, 30),
    Case("path-1000x30", "plan_key_path", None, 1000, 30),
    Case("greedy-3000x40", "find_key", "greedy", 3000, 40),
    Case("path-3000x40", "plan_key_path", None, 3000, 40),
    Case("exact-60x60", "find_key", "exact", 60, 60, ref=False, time_limit=60.0),
    Case("ilp-60x60", "find_key", "ilp", 60, 60, ref=False, time_limit=60.0),
    Case("exact-200x60", "find_key", "exact", 200, 60, ref=False, time_limit=60.0),
    Case("ilp-200x60", "find_key", "ilp", 200, 60, ref=False, time_limit=60.0),
    Case(
        "greedy-1000000x50",
        "find_key",
        "greedy",
        1_000_000,
        50,
        ref=False,
        isolated=True,
    ),
)


@dataclass
class Outcome:
    """What one side (ours or ref) produced for one case."""

    status: str  # ok | timeout | error | skipped | off
    seconds: float | None = None  # median of the runs
    seconds_range: tuple[float, float] | None = None  # min and max of the runs
    runs: int = 1
    key: list[str] = field(default_factory=list)
    cost: float | None = None
    path_cost: float | None = None
    valid: bool | None = None
    peak_mb: float | None = None
    loaded_mb: float | None = None
    module: str | None = None
    version: str | None = None
    optimal: bool | None = None
    message: str = ""

    @classmethod
    def from_result(cls, res: dict[str, Any]) -> Outcome:
        """Build an ``ok`` outcome from a driver result dictionary."""
        return cls(
            status="ok",
            seconds=res["seconds"],
            seconds_range=(
                (res["seconds_min"], res["seconds_max"]) if "seconds_min" in res else None
            ),
            runs=len(res.get("all_seconds") or [res["seconds"]]),
            key=list(res["key"]),
            cost=res["cost"],
            path_cost=res.get("path_cost"),
            valid=res.get("valid"),
            peak_mb=res.get("peak_mb"),
            loaded_mb=res.get("loaded_mb"),
            module=res.get("module"),
            version=res.get("version"),
            optimal=res.get("optimal"),
        )


def interleave_sides(
    ours: Callable[[], Outcome] | None,
    ref: Callable[[], Outcome] | None,
    rounds: int,
    threshold: float = 10.0,
    ours_max: int | None = None,
) -> tuple[Outcome, Outcome]:
    """Run the two sides in interleaved rounds: each round runs each side
    once (one timed call), ours first in even rounds and the reference first
    in odd ones, so load drifting during a case reaches both alike.  A side
    stops repeating after a failure or a run longer than ``threshold``
    seconds (as a single long run is reported), and ours after ``ours_max``
    runs when given.  Each side's outcome is the
    median of its runs, with their min-max.  ``None`` means the side does
    not run (its outcome is then ``off``)."""
    runs: dict[str, list[Outcome]] = {"ours": [], "ref": []}
    fns = {"ours": ours, "ref": ref}
    for r in range(max(1, rounds)):
        for side in ("ours", "ref") if r % 2 == 0 else ("ref", "ours"):
            fn, done = fns[side], runs[side]
            if fn is None or (side == "ours" and ours_max is not None and len(done) >= ours_max):
                continue
            if done and (done[-1].status != "ok" or (done[-1].seconds or 0.0) > threshold):
                continue
            done.append(fn())

    def merge(done: list[Outcome]) -> Outcome:
        if not done:
            return Outcome("off")
        failed = [o for o in done if o.status != "ok"]
        if failed:
            return failed[0]
        secs = [o.seconds for o in done if o.seconds is not None]
        first = done[0]
        first.seconds = statistics.median(secs)
        first.seconds_range = (min(secs), max(secs))
        first.runs = len(secs)
        first.peak_mb = max((o.peak_mb for o in done if o.peak_mb is not None), default=None)
        return first

    return merge(runs["ours"]), merge(runs["ref"])


# ---------------------------------------------------------------------------
# Data generation
# ---------------------------------------------------------------------------


def generate_codes(nrows: int, ncols: int, seed: int, max_attempts: int = 50):
    """Draw a random categorical code matrix with no duplicate rows.

    Returns ``(codes, cards, costs)``: a ``uint8`` array of shape
    ``(nrows, ncols)``, each column's cardinality (2..12) and a per-column cost
    in [1, 5] (used with ``--costs random``).  The draw depends only on
    ``(seed, nrows, ncols)``, so a frame is the same whichever cases run.
    """
    import numpy as np

    costs = np.round(
        np.random.default_rng([seed, nrows, ncols, 10_000]).uniform(1.0, 5.0, ncols), 2
    )
    for attempt in range(max_attempts):
        rng = np.random.default_rng([seed, nrows, ncols, attempt])
        cards = rng.integers(2, 13, size=ncols)
        codes = np.empty((nrows, ncols), dtype=np.uint8)
        for j in range(ncols):
            codes[:, j] = rng.integers(0, cards[j], size=nrows, dtype=np.uint8)
        if not has_duplicate_rows(codes):
            return codes, cards, costs
    raise RuntimeError(f"could not draw a {nrows}x{ncols} frame without duplicate rows")


def has_duplicate_rows(codes) -> bool:
    """Whether two rows of a 2-D ``uint8`` array are identical."""
    import numpy as np

    if len(codes) < 2:
        return False
    packed = np.ascontiguousarray(codes).view(np.dtype((np.void, codes.shape[1]))).ravel()
    return len(np.unique(packed)) != len(packed)


def write_frame(path: Path, codes, cards, costs) -> None:
    """Store a frame as ``.npz`` (codes, cardinalities, column names, costs)."""
    import numpy as np

    columns = np.array([f"c{j:02d}" for j in range(codes.shape[1])])
    np.savez(
        path,
        codes=codes,
        cards=np.asarray(cards, dtype=np.int64),
        columns=columns,
        costs=costs,
    )


class FrameStore:
    """Generates each frame shape once, on disk and (lazily) in memory."""

    def __init__(self, workdir: Path, seed: int, dtype: str, driver_ns: dict[str, Any]):
        """Keep frames under ``workdir``; ``driver_ns`` provides ``load_frame``."""
        self.workdir = workdir
        self.seed = seed
        self.dtype = dtype
        self.driver_ns = driver_ns
        self._paths: dict[tuple[int, int], Path] = {}
        self._frames: dict[tuple[int, int], tuple[Any, dict[str, float]]] = {}

    def path(self, nrows: int, ncols: int) -> Path:
        """Path of the ``.npz`` file for this shape, generating it if needed."""
        shape = (nrows, ncols)
        if shape not in self._paths:
            t0 = time.perf_counter()
            codes, cards, costs = generate_codes(nrows, ncols, self.seed)
            p = self.workdir / f"frame_{nrows}x{ncols}.npz"
            write_frame(p, codes, cards, costs)
            self._paths[shape] = p
            log(f"  generated {nrows}x{ncols} frame in {time.perf_counter() - t0:.1f} s")
        return self._paths[shape]

    def frame(self, nrows: int, ncols: int):
        """In-process ``(DataFrame, cost_map)`` for this shape (driver's loader)."""
        shape = (nrows, ncols)
        if shape not in self._frames:
            self._frames[shape] = self.driver_ns["load_frame"](
                str(self.path(nrows, ncols)), self.dtype
            )
        return self._frames[shape]


# ---------------------------------------------------------------------------
# Running the two sides
# ---------------------------------------------------------------------------


def log(msg: str) -> None:
    """Progress message on stderr."""
    print(msg, file=sys.stderr, flush=True)


def load_driver_namespace() -> dict[str, Any]:
    """Exec the driver source and return its namespace (no ``main()`` call)."""
    ns: dict[str, Any] = {"__name__": "rowvoi_bench_driver"}
    exec(compile(DRIVER_SOURCE, str(DRIVER_PATH), "exec"), ns)
    return ns


def make_spec(case: Case, data: Path, args: argparse.Namespace, repeat: int) -> dict[str, Any]:
    """Build the JSON spec handed to the driver for one case."""
    return {
        "data": str(data),
        "dtype": args.dtype,
        "costs": args.costs,
        "func": case.func,
        "strategy": case.strategy,
        "time_limit": case.time_limit,
        "repeat": repeat,
        "repeat_threshold": REPEAT_THRESHOLD,
    }


def _pump_lines(stream, q: queue.Queue) -> None:
    """Forward each line of ``stream`` to ``q``; ``None`` marks end of stream."""
    for line in stream:
        q.put(line)
    q.put(None)


def _next_message(q: queue.Queue, deadline: float) -> dict[str, Any] | None:
    """Next JSON protocol message before ``deadline`` (perf_counter); None at EOF.

    Raises ``queue.Empty`` when the deadline passes.
    """
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise queue.Empty
        line = q.get(timeout=remaining)
        if line is None:
            return None
        line = line.strip()
        if not line:
            continue
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the driver and anything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_driver(
    python: str,
    driver_path: Path,
    spec: dict[str, Any],
    cap: float,
    *,
    isolated_env: bool,
    cwd: Path,
) -> Outcome:
    """Run the driver in a subprocess; the call (not the load) is capped at ``cap`` s.

    ``isolated_env`` runs python with ``-I`` so neither ``PYTHONPATH``, the user
    site nor the current directory can shadow the venv's ``rowvoi``.
    """
    cmd = [python] + (["-I"] if isolated_env else []) + [str(driver_path), json.dumps(spec)]
    with tempfile.TemporaryFile(mode="w+") as errf:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=errf,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=str(cwd),
            start_new_session=True,
        )
        q: queue.Queue = queue.Queue()
        threading.Thread(target=_pump_lines, args=(proc.stdout, q), daemon=True).start()
        stage = "load"
        try:
            msg = _next_message(q, time.perf_counter() + LOAD_TIMEOUT)
            if msg is not None and msg.get("event") == "ready":
                stage = "run"
                msg = _next_message(q, time.perf_counter() + cap)
        except queue.Empty:
            _kill_group(proc)
            if stage == "load":
                return Outcome("error", message=f"import/load took over {LOAD_TIMEOUT:.0f} s")
            return Outcome("timeout", message=f"killed after {cap:g} s")
        proc.wait()
        if msg is not None and msg.get("event") == "result":
            return Outcome.from_result(msg)
        if msg is not None and msg.get("event") == "error":
            return Outcome("error", message=_last_line(msg.get("error", "")))
        errf.seek(0)
        return Outcome("error", message=f"exit {proc.returncode}: {_last_line(errf.read())}")


def _last_line(text: str) -> str:
    """Last non-empty line of a traceback or log (for the notes column)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "(no output)"


def run_ours_inprocess(
    case: Case, store: FrameStore, args: argparse.Namespace, driver_ns, repeat: int = 1
) -> Outcome:
    """Time our rowvoi in this interpreter (``repeat`` runs, median)."""
    import rowvoi

    df, cost_map = store.frame(case.nrows, case.ncols)
    spec = make_spec(case, store.path(case.nrows, case.ncols), args, repeat)
    try:
        return Outcome.from_result(driver_ns["run_case"](rowvoi, df, cost_map, spec))
    except Exception as exc:  # report, keep benchmarking the other cases
        return Outcome("error", message=f"{type(exc).__name__}: {exc}"[:200])


def run_ours_subprocess(
    case: Case, store: FrameStore, args, driver_path: Path, workdir: Path
) -> Outcome:
    """Run our rowvoi once in a child of this interpreter, recording its peak RSS."""
    spec = make_spec(case, store.path(case.nrows, case.ncols), args, 1)
    return run_driver(
        sys.executable,
        driver_path,
        spec,
        args.ours_timeout,
        isolated_env=False,
        cwd=workdir,
    )


def run_ref(
    case: Case,
    store: FrameStore,
    args,
    python: str,
    driver_path: Path,
    workdir: Path,
    repeat: int = 1,
) -> Outcome:
    """Run the reference in its venv (``repeat`` runs), capped at
    ``--ref-timeout`` seconds."""
    spec = make_spec(case, store.path(case.nrows, case.ncols), args, repeat)
    return run_driver(python, driver_path, spec, args.ref_timeout, isolated_env=True, cwd=workdir)


# ---------------------------------------------------------------------------
# Reference environment
# ---------------------------------------------------------------------------


def venv_python(venv: Path) -> Path:
    """Return the python executable inside a venv."""
    return venv / "bin" / "python"


def probe_ref(python: Path) -> dict[str, str] | None:
    """Versions of rowvoi/pandas/numpy/pulp/python in the venv, or None if unusable."""
    code = "\n".join(
        [
            "import json, platform, numpy, pandas, rowvoi",
            "try:",
            "    import pulp",
            "    pv = pulp.__version__",
            "except Exception:",
            "    pv = 'missing'",
            "print(json.dumps({'rowvoi': rowvoi.__version__,",
            "    'pandas': pandas.__version__, 'numpy': numpy.__version__,",
            "    'pulp': pv, 'python': platform.python_version()}))",
        ]
    )
    if not python.exists():
        return None
    try:
        out = subprocess.run(
            [str(python), "-I", "-c", code],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tempfile.gettempdir(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return None


def ensure_ref_venv(venv: Path) -> dict[str, str]:
    """Make sure ``venv`` holds rowvoi==0.2.0 and pulp, creating it if needed."""
    info = probe_ref(venv_python(venv))
    if info is not None and info.get("rowvoi") == REF_VERSION and info.get("pulp") != "missing":
        return info
    log(f"setting up reference venv at {venv} ({' '.join(REF_REQUIREMENTS)}) ...")
    if not venv_python(venv).exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv_python(venv)), "-m", "pip", "install", "--quiet", *REF_REQUIREMENTS],
        check=True,
        stdout=sys.stderr,
    )
    info = probe_ref(venv_python(venv))
    if info is None or info.get("rowvoi") != REF_VERSION:
        raise SystemExit(f"reference venv {venv} does not provide rowvoi {REF_VERSION}: {info}")
    return info


def resolve_ref_venv(arg: str | None) -> Path:
    """``--ref-venv``, else ``$ROWVOI_REF_VENV``, else ``bench/.refvenv``."""
    if arg:
        return Path(arg).expanduser().resolve()
    if os.environ.get(REF_VENV_ENV_VAR):
        return Path(os.environ[REF_VENV_ENV_VAR]).expanduser().resolve()
    return DEFAULT_REF_VENV


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def fmt_seconds(s: float | None) -> str:
    """Seconds with precision suited to their size."""
    if s is None:
        return "–"
    if s < 0.01:
        return f"{s * 1000:.3f} ms"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    return f"{s:.2f} s"


def fmt_ratio(r: float) -> str:
    """Speed-up ratio."""
    if r >= 100:
        return f"{r:,.0f}×"
    return f"{r:.1f}×"


def fmt_cost(c: float | None) -> str:
    """Key cost (integral costs without decimals)."""
    if c is None:
        return "–"
    return f"{c:g}" if float(c).is_integer() else f"{c:.2f}"


def side_time(o: Outcome, cap: float) -> str:
    """Table cell for one side's time."""
    if o.status == "ok":
        if o.runs > 1 and o.seconds_range is not None:
            lo, hi = o.seconds_range
            return f"{fmt_seconds(o.seconds)} ({fmt_seconds(lo)}-{fmt_seconds(hi)})"
        return fmt_seconds(o.seconds)
    if o.status == "timeout":
        return f">{cap:g} s"
    if o.status == "skipped":
        return f">{cap:g} s (not run)"
    if o.status == "off":
        return "–"
    return "error"


def ratio_cell(ours: Outcome, ref: Outcome, cap: float) -> str:
    """ref/ours speed ratio, a lower bound when the reference hit the cap."""
    if ours.status != "ok" or not ours.seconds:
        return "–"
    if ref.status == "ok" and ref.seconds is not None:
        return fmt_ratio(ref.seconds / ours.seconds)
    if ref.status in ("timeout", "skipped"):
        return ">" + fmt_ratio(cap / ours.seconds)
    return "–"


def match_cell(ours: Outcome, ref: Outcome) -> str:
    """Whether the two keys cost the same (and whether they are the same key)."""
    if ours.status != "ok" or ref.status != "ok" or ours.cost is None or ref.cost is None:
        return "–"
    if abs(ours.cost - ref.cost) > 1e-9:
        better = "ours cheaper" if ours.cost < ref.cost else "ref cheaper"
        return f"NO ({better})"
    if ours.key == ref.key:
        return "yes (same key)"
    if sorted(ours.key) == sorted(ref.key):
        return "yes (same set)"
    return "yes (other key)"


def notes_cell(case: Case, ours: Outcome, ref: Outcome) -> str:
    """Collect validity problems, errors, memory and other remarks."""
    notes = []
    for side, o in (("ours", ours), ("ref", ref)):
        if o.status == "ok" and o.valid is False:
            notes.append(f"{side} key does NOT separate all rows")
        if o.status == "error":
            notes.append(f"{side} error: {o.message}")
        if o.status == "skipped":
            notes.append(f"{side}: {o.message}")
        if (
            o.status == "ok"
            and o.path_cost is not None
            and o.cost is not None
            and abs(o.path_cost - o.cost) > 1e-6
        ):
            notes.append(f"{side} path cumulative_cost {o.path_cost:g} != {o.cost:g}")
    if (
        case.strategy == "exact"
        and ref.status == "ok"
        and ref.cost is not None
        and ours.status == "ok"
        and ours.cost is not None
        and ours.cost < ref.cost - 1e-9
    ):
        notes.append("ref 'exact' returns the first fewest-columns key, not the cheapest")
    if case.strategy in ("exact", "ilp") and ours.status == "ok" and ours.optimal is not None:
        notes.append(
            "ours proven optimal"
            if ours.optimal
            else f"ours NOT proven optimal (time limit {case.time_limit:g} s)"
        )
    if case.isolated and ours.status == "ok" and ours.peak_mb is not None:
        loaded = ours.loaded_mb or 0.0
        notes.append(f"ours peak RSS {ours.peak_mb:,.0f} MB (after load {loaded:,.0f} MB)")
    return "; ".join(notes)


def render_report(
    results: list[tuple[Case, Outcome, Outcome]],
    args: argparse.Namespace,
    ours_info: dict[str, str] | None,
    ref_info: dict[str, str] | None,
    ref_venv: Path | None,
    run: Run,
) -> str:
    """Render the markdown report: header, table, keys."""
    cap = args.ref_timeout
    if ours_info:
        ours_line = f"rowvoi {ours_info['version']} (this checkout, installed)"
    else:
        ours_line = "not run (--no-ours)"
    if ref_info:
        ref_line = (
            f"rowvoi {ref_info['rowvoi']} (pure Python, from PyPI in its own venv); "
            f"python {ref_info['python']}, numpy {ref_info['numpy']}, "
            f"pandas {ref_info['pandas']}, pulp {ref_info['pulp']}"
        )
    else:
        ref_line = "not run (--no-ref)"
    settings = (
        f"seed {args.seed}; column dtype {args.dtype}; costs {args.costs}; "
        f"both sides: median (min-max) of {args.repeat} runs (1 run when the first is over "
        f"{REPEAT_THRESHOLD:g} s, and for isolated cases), not best-of; reference capped at "
        f"{cap:g} s"
    )
    if args.costs == "random":
        cost_meaning = "sum of column costs"
    else:
        cost_meaning = "number of key columns (unit costs)"
    columns = [
        "case",
        "call",
        "frame",
        "ours",
        "reference",
        "ratio",
        "our cost",
        "ref cost",
        "costs match",
        "notes",
    ]
    lines = [
        "# rowvoi key-finding benchmark",
        "",
        *run.header(
            versions(
                "numpy",
                "pandas",
                "pulp",
                peers={"rowvoi (reference)": (ref_info or {}).get("rowvoi")},
            )
        )[:-1],
        f"- ours: {ours_line}",
        f"- reference: {ref_line}",
        f"- settings: {settings}",
        "- rows: all rows of each frame; column cardinalities drawn from 2..12; no duplicate rows",
        "",
        f"Times exclude data loading. ratio = reference time / our time. cost = {cost_meaning}.",
        "",
        "| " + " | ".join(columns) + " |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for case, ours, ref in results:
        lines.append(
            "| "
            + " | ".join(
                [
                    case.name,
                    case.label,
                    f"{case.nrows:,}×{case.ncols}",
                    side_time(ours, args.ours_timeout),
                    side_time(ref, cap),
                    ratio_cell(ours, ref, cap),
                    fmt_cost(ours.cost) if ours.status == "ok" else "–",
                    fmt_cost(ref.cost) if ref.status == "ok" else "–",
                    match_cell(ours, ref),
                    notes_cell(case, ours, ref).replace("|", "\\|"),
                ]
            )
            + " |"
        )
    lines += ["", "Keys returned (in the order returned):", ""]
    for case, ours, ref in results:
        for side, o in (("ours", ours), ("ref", ref)):
            if o.status == "ok":
                valid = "valid" if o.valid else "NOT a key"
                lines.append(f"- {case.name} {side}: {', '.join(o.key) or '(empty)'} ({valid})")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def select_cases(args: argparse.Namespace) -> list[Case]:
    """Cases chosen by ``--quick`` and ``--cases`` (names or shell patterns)."""
    cases = [c for c in CASES if c.quick] if args.quick else list(CASES)
    if args.cases:
        patterns = [p.strip() for p in args.cases.split(",") if p.strip()]
        for p in patterns:
            if not any(fnmatch.fnmatchcase(c.name, p) for c in CASES):
                known = ", ".join(c.name for c in CASES)
                raise SystemExit(f"unknown case {p!r}; known cases: {known}")
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
    if not cases:
        raise SystemExit("no case selected")
    return cases


def parse_args(argv: Sequence[str], out: Path) -> argparse.Namespace:
    """Command-line options (``out``: the default report path)."""
    p = argparse.ArgumentParser(
        prog="python -m bench run keys",
        description="Benchmark rowvoi.find_key / plan_key_path against "
        f"rowvoi=={REF_VERSION} from PyPI.",
        epilog="Cases: " + ", ".join(c.name for c in CASES),
    )
    p.add_argument("--quick", action="store_true", help="only the small cases (200x20 and 30x15)")
    p.add_argument(
        "--cases",
        metavar="NAME,...",
        help="comma-separated case names or shell patterns",
    )
    p.add_argument("--no-ref", action="store_true", help="do not run the reference")
    p.add_argument("--no-ours", action="store_true", help="do not run this repository's rowvoi")
    p.add_argument(
        "--out",
        default=str(out),
        help="markdown output (default: bench/results/keys.md)",
    )
    p.add_argument(
        "--ref-venv",
        metavar="PATH",
        help=f"venv for rowvoi=={REF_VERSION}, created when missing "
        f"(default: ${REF_VENV_ENV_VAR} or bench/.refvenv)",
    )
    p.add_argument(
        "--ref-timeout",
        type=float,
        default=120.0,
        help="cap in seconds per reference call (120)",
    )
    p.add_argument(
        "--ref-all",
        action="store_true",
        help="run the reference on larger frames even after it hit the cap",
    )
    p.add_argument(
        "--ours-timeout",
        type=float,
        default=1800.0,
        help="cap for our subprocess (1M-row) runs (1800)",
    )
    p.add_argument(
        "--repeat", type=int, default=3, help="runs per case and side, median reported (3)"
    )
    p.add_argument("--seed", type=int, default=20240601, help="data seed")
    p.add_argument(
        "--dtype",
        choices=("int", "str", "category"),
        default="int",
        help="column dtype (int)",
    )
    p.add_argument(
        "--costs",
        choices=("unit", "random"),
        default="unit",
        help="unit costs (costs=None) or seeded random column costs in [1, 5]",
    )
    args = p.parse_args(argv)
    if args.no_ref and args.no_ours:
        p.error("--no-ref and --no-ours leave nothing to run")
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def main(argv: Sequence[str], run: Run) -> int:
    """Run the selected cases, print the table and write the report."""
    args = parse_args(argv, run.out)
    cases = select_cases(args)
    driver_ns = load_driver_namespace()

    ours_info = None
    if not args.no_ours:
        try:
            import rowvoi
        except ImportError as exc:
            raise SystemExit(
                f"cannot import rowvoi ({exc}); install the package or use --no-ours"
            ) from exc
        module = os.path.abspath(getattr(rowvoi, "__file__", "") or "")
        ours_info = {
            "version": str(getattr(rowvoi, "__version__", "?")),
            "module": module,
        }
        if getattr(rowvoi, "__version__", None) == REF_VERSION and "site-packages" in module:
            log(f"warning: the imported rowvoi looks like the PyPI reference ({module})")

    ref_venv = ref_info = ref_python = None
    if not args.no_ref:
        ref_venv = resolve_ref_venv(args.ref_venv)
        ref_info = ensure_ref_venv(ref_venv)
        ref_python = str(venv_python(ref_venv))

    results: list[tuple[Case, Outcome, Outcome]] = []
    capped_groups: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="rowvoi-bench-") as tmp:
        workdir = Path(tmp)
        driver_path = DRIVER_PATH
        store = FrameStore(workdir, args.seed, args.dtype, driver_ns)
        for case in cases:
            if args.no_ours and (args.no_ref or not case.ref):
                log(f"[{case.name}] skipped: reference-free case and --no-ours")
                continue
            log(f"[{case.name}] {case.label} on {case.nrows:,}x{case.ncols}")

            skipped_ref = None
            ours_fn: Callable[[], Outcome] | None = None
            ref_fn: Callable[[], Outcome] | None = None
            if args.no_ours:
                pass
            elif case.isolated:  # one run in a child (its peak RSS), not repeated
                ours_fn = functools.partial(
                    run_ours_subprocess, case, store, args, driver_path, workdir
                )
            else:
                ours_fn = functools.partial(run_ours_inprocess, case, store, args, driver_ns)
            if args.no_ref or not case.ref:
                pass
            elif case.group in capped_groups and not args.ref_all:
                skipped_ref = Outcome(
                    "skipped",
                    message=f"not run, hit the cap on {capped_groups[case.group]}",
                )
            else:
                ref_fn = functools.partial(
                    run_ref, case, store, args, ref_python, driver_path, workdir
                )
            ours, ref = interleave_sides(
                ours_fn,
                ref_fn,
                args.repeat,
                REPEAT_THRESHOLD,
                ours_max=1 if case.isolated else None,
            )
            if skipped_ref is not None:
                ref = skipped_ref
            if ref.status == "timeout":
                capped_groups[case.group] = f"{case.nrows}x{case.ncols}"
            if (
                ours.status == "ok"
                and case.isolated
                and ours_info
                and ours.module != ours_info["module"]
            ):
                log(f"  warning: subprocess imported rowvoi from {ours.module}")
            if ours.status != "off":
                took = side_time(ours, args.ours_timeout)
                log(f"  ours: {took} {ours.message}".rstrip())
            if ref.status != "off":
                log(f"  ref:  {side_time(ref, args.ref_timeout)} {ref.message}".rstrip())
            results.append((case, ours, ref))

    report = render_report(results, args, ours_info, ref_info, ref_venv, run)
    out = write(args.out, report)
    print(report, end="")
    log(f"wrote {shown_arg(str(out))}")
    return 0
