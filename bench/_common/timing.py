"""Timing shared by every suite in ``bench/``: interleaved rounds, medians, spread.

The method, the same for every system a benchmark compares:

* each system is warmed up once (its first call is not timed);
* then ``rounds`` rounds run, and in each round every system runs once, in an
  order that rotates from round to round, so the load of this shared machine
  (which changes from minute to minute) falls on all of them alike;
* a system's figure is the **median** over its rounds, reported with the
  spread (minimum-maximum over the rounds); never the best round;
* a ratio of two systems is the median of the per-round ratios (both were
  timed in the same round, close together in time), with its min-max.

Wall-clock time is ``time.perf_counter``; CPU time is ``time.process_time``
(the work of this process, all its threads, without time spent waiting for a
core -- the fairer figure for single-threaded runs on a busy machine).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Spread:
    """Median and range of one figure over rounds (``n`` samples)."""

    median: float
    lo: float
    hi: float
    n: int

    def scaled(self, factor: float) -> Spread:
        """The same figure times ``factor`` (for unit changes)."""
        a, b = self.lo * factor, self.hi * factor
        return Spread(self.median * factor, min(a, b), max(a, b), self.n)

    def rate(self, count: float) -> Spread:
        """``count / seconds``: a per-second rate; the range turns over."""
        inf = float("inf")
        lo = count / self.hi if self.hi else inf
        hi = count / self.lo if self.lo else inf
        return Spread(count / self.median if self.median else inf, lo, hi, self.n)

    def fmt(self, spec: str = ",.3g", unit: str = "") -> str:
        """``"median (lo-hi)unit"``; a single sample has no range."""
        if self.n <= 1:
            return f"{self.median:{spec}}{unit}"
        return f"{self.median:{spec}} ({self.lo:{spec}}-{self.hi:{spec}}){unit}"


def spread(xs: Iterable[float]) -> Spread:
    """Median and min-max of ``xs`` (at least one value)."""
    v = [float(x) for x in xs]
    if not v:
        raise ValueError("spread() needs at least one sample")
    return Spread(statistics.median(v), min(v), max(v), len(v))


def median(xs: Iterable[float]) -> float:
    """The median of ``xs`` (at least one value)."""
    return spread(xs).median


def med(xs: Iterable[float]) -> tuple[float, float, float]:
    """``(median, min, max)`` of ``xs``, as a plain tuple."""
    s = spread(xs)
    return s.median, s.lo, s.hi


def ratio(num: Sequence[float], den: Sequence[float]) -> Spread:
    """Per-round ratio ``num[i] / den[i]``, median and range over rounds."""
    if len(num) != len(den):
        raise ValueError(f"ratio() needs paired rounds, got {len(num)} and {len(den)}")
    return spread(a / b for a, b in zip(num, den))


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Run ``fn`` once: ``(wall seconds, CPU seconds, result)``."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


@dataclass(frozen=True)
class SelfTimed:
    """What a case returns when the work ran elsewhere (a child process in
    another venv) and was timed there: its own wall and CPU seconds replace
    the time of the call, which would include the pipe."""

    wall: float
    cpu: float
    result: Any = None


@dataclass
class Samples:
    """Per-round wall and CPU seconds of one case, and its last result."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    result: Any = None

    def wall_s(self) -> Spread:
        """Median and range of the wall-clock seconds."""
        return spread(self.wall)

    def cpu_s(self) -> Spread:
        """Median and range of the CPU seconds."""
        return spread(self.cpu)


def interleaved(
    cases: Mapping[str, Callable[[], Any]],
    rounds: int,
    *,
    warmup: int = 1,
    collect: bool = True,
    only_first_round: Iterable[str] = (),
) -> dict[str, Samples]:
    """Time every case once per round, ``rounds`` rounds, order rotating.

    ``warmup`` untimed calls of each case come first (their result is kept
    when no round runs).  ``collect`` runs the garbage collector before every
    timed call so that one case's garbage is not collected in another's time.
    Cases named in ``only_first_round`` (very slow ones) run in round 0 only.
    A case that returns :class:`SelfTimed` is recorded with the seconds it
    reports.
    Returns, per case, the samples in round order and the last result.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    names = list(cases)
    once = set(only_first_round)
    out = {name: Samples() for name in names}
    for name in names:
        for _ in range(warmup):
            out[name].result = cases[name]()
    for r in range(rounds):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            if r and name in once:
                continue
            if collect:
                gc.collect()
            w, c, res = timed(cases[name])
            if isinstance(res, SelfTimed):
                w, c, res = res.wall, res.cpu, res.result
            s = out[name]
            s.wall.append(w)
            s.cpu.append(c)
            s.result = res
    return out


def method_note(rounds: int) -> str:
    """One sentence for a results file saying how the figures were taken."""
    return (
        f"Medians over {rounds} interleaved rounds (every system once per round, "
        "order rotating), with the min-max over rounds in brackets; not best-of."
    )
