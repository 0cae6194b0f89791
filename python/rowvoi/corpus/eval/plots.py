"""Pictures of evaluation results (needs the ``rowvoi[plot]`` extra).

:func:`plot_frontier` draws a selector sweep: every setting as a point in
(recall, precision), the Pareto frontier as a line, the best setting
marked. :func:`plot_distractor_curve` draws one or more distractor curves
(accuracy against catalog size, log-scaled).

matplotlib is imported only when a picture is asked for, with the
non-interactive Agg backend (no display needed); without it the functions
raise :class:`PlotUnavailable`, naming the extra to install. Files are
written atomically (:mod:`rowvoi._atomic`), in the format the suffix
names (``.png``, ``.svg``, ``.pdf``). Drawing uses matplotlib's
object-oriented API on a private figure, so concurrent calls do not share
state; matplotlib itself is not documented as thread-safe, so draw from
one thread at a time.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "curve.png")
>>> plot_distractor_curve({1: 1.0, 8: 0.75, 64: 0.5}, path).name
'curve.png'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rowvoi._atomic import atomic_path

__all__ = ["PlotUnavailable", "require_matplotlib", "plot_frontier", "plot_distractor_curve"]


class PlotUnavailable(ImportError):
    """matplotlib is not installed: ``pip install 'rowvoi[plot]'``."""


def require_matplotlib() -> None:
    """Raise :class:`PlotUnavailable` (naming the extra) unless matplotlib
    can be imported; call it before a long computation whose result is to
    be drawn."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise PlotUnavailable(
            "drawing needs matplotlib, which is not installed: pip install 'rowvoi[plot]'"
        ) from None


def _figure(width: float = 6.4, height: float = 4.8) -> Any:
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"{path}: give a .png, .svg or .pdf file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, bbox_inches="tight")
    return path


def plot_frontier(
    sweep: Any,
    path: str | os.PathLike[str],
    *,
    x: str = "selection_recall",
    y: str = "selection_precision",
    title: str | None = None,
) -> Path:
    """Draw a :class:`~rowvoi.corpus.eval.selection.SelectionSweep` to ``path``.

    Every setting is a grey point, the frontier of ``x`` against ``y`` a
    line through its points (each labelled ``max_k/rel``), and the best
    setting by the sweep's objective a star. Returns the path.

    Raises
    ------
    PlotUnavailable
        matplotlib is missing.
    ValueError
        An unknown metric, an empty sweep, or a suffix other than .png,
        .svg, .pdf.
    """
    front = sweep.frontier(x=x, y=y)
    if not sweep.points:
        raise ValueError("the sweep has no points to draw")
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    xs = [p.report.metric(x) for p in sweep.points]
    ys = [p.report.metric(y) for p in sweep.points]
    pts = [(a, b) for a, b in zip(xs, ys) if a is not None and b is not None]
    ax.scatter(
        [a for a, _ in pts], [b for _, b in pts], s=14, color="0.65", label=f"{len(pts)} settings"
    )
    fx = [p.report.metric(x) for p in front]
    fy = [p.report.metric(y) for p in front]
    ax.plot(fx, fy, "-o", color="tab:blue", ms=4, label="frontier")
    for p, a, b in zip(front, fx, fy):
        ax.annotate(
            f"{p.max_k}/{p.rel:g}" + ("" if p.min_score is None else f"/{p.min_score:.3g}"),
            (a, b),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=7,
        )
    best = sweep.best()
    bx, by = best.report.metric(x), best.report.metric(y)
    if bx is not None and by is not None:
        ax.scatter(
            [bx],
            [by],
            marker="*",
            s=160,
            color="tab:red",
            zorder=3,
            label=f"best {sweep.objective} (max_k={best.max_k}, rel={best.rel:g}"
            + ("" if best.min_score is None else f", min_score={best.min_score:g}")
            + ")",
        )
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(y.replace("_", " "))
    c = sweep.config
    ax.set_title(
        title
        or f"selector sweep: {c.get('strategy')}, mode {c.get('mode')}, "
        f"k={c.get('k')} ({c.get('n_cases')} cases)",
        fontsize=10,
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)


def plot_distractor_curve(
    curves: Mapping[Any, Any],
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    k: int = 1,
) -> Path:
    """Draw distractor curves to ``path``: ``curves`` is one
    ``{N: accuracy}`` (from
    :func:`~rowvoi.corpus.eval.robustness.distractor_robustness_curve`) or
    ``{label: {N: accuracy}}`` for several. Returns the path.

    Raises :class:`PlotUnavailable` without matplotlib and ``ValueError``
    for an empty curve or a bad suffix.
    """
    if not curves:
        raise ValueError("no curve to draw")
    if all(isinstance(v, Mapping) for v in curves.values()):
        series = {str(lb): dict(c) for lb, c in curves.items()}
    else:
        series = {"accuracy": dict(curves)}
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    for label, curve in series.items():
        ns = sorted(int(n) for n in curve)
        if not ns:
            raise ValueError(f"curve {label!r} is empty")
        ax.plot(ns, [float(curve[n]) for n in ns], "-o", ms=4, label=label)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("catalog size N (gold + N-1 distractors)")
    ax.set_ylabel(f"gold in top {k}")
    ax.set_title(title or "distractor robustness", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    return _save(fig, path)
