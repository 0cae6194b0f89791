"""Where and how the passes run: scheduler choice, progress, time limits.

One :class:`Runner` per public call; it holds no state beyond that call.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import dask
from dask import delayed

__all__ = ["Runner", "Expired", "tree_reduce", "check_ddf", "LOCAL_SCHEDULERS"]

LOCAL_SCHEDULERS = (
    "threads",
    "threading",
    "sync",
    "synchronous",
    "single-threaded",
    "processes",
    "multiprocessing",
)


class Expired(Exception):
    """The time limit ran out (internal: turned into a flagged partial result)."""


def check_ddf(ddf: Any) -> Any:
    """Return ddf if it is a Dask DataFrame, else raise TypeError."""
    import dask.dataframe as dd

    if not isinstance(ddf, dd.DataFrame):
        hint = (
            (
                " (a pandas DataFrame: use rowvoi.keys / rowvoi.policies, or "
                "dask.dataframe.from_pandas)"
            )
            if type(ddf).__module__.startswith("pandas")
            else ""
        )
        raise TypeError(f"ddf must be a dask.dataframe.DataFrame, got {type(ddf).__name__}{hint}")
    return ddf


def _is_client(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("compute", "gather", "persist", "submit"))


class Runner:
    """Runs task graphs on one scheduler, with an optional progress bar and deadline.

    Parameters
    ----------
    scheduler : None, str or distributed.Client
        None: the active ``distributed`` client if there is one, else Dask's
        default (threads). A name: one of :data:`LOCAL_SCHEDULERS`. A
        ``distributed.Client``: run there.
    progress : bool
        Show a progress bar on stderr for every pass (``dask.diagnostics``
        locally, ``distributed.progress`` on a cluster).
    time_limit : float
        Seconds (0: none). Checked before every pass; on a cluster a pass
        still running at the deadline is cancelled.
    """

    def __init__(self, scheduler: Any = None, progress: bool = False, time_limit: float = 0.0):
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
        self.client = None
        self.scheduler = None
        if scheduler is None:
            try:
                from distributed import default_client

                self.client = default_client()
            except (ImportError, ValueError):
                self.client = None
        elif isinstance(scheduler, str):
            if scheduler not in LOCAL_SCHEDULERS:
                raise ValueError(
                    f"unknown scheduler {scheduler!r}; use one of "
                    f"{', '.join(LOCAL_SCHEDULERS)} or a distributed.Client"
                )
            self.scheduler = scheduler
        elif _is_client(scheduler):
            self.client = scheduler
        else:
            raise TypeError(
                "scheduler must be None, a scheduler name or a distributed.Client, "
                f"got {type(scheduler).__name__}"
            )
        self.progress = progress
        self.start = time.monotonic()
        self.deadline = self.start + time_limit if time_limit > 0 else None
        self.passes = 0

    # --------------------------------------------------------------- time
    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def check_time(self) -> None:
        """Raise :class:`Expired` when the deadline has passed."""
        r = self.remaining()
        if r is not None and r <= 0:
            raise Expired()

    # ------------------------------------------------------------ running
    def compute(self, objs: Sequence[Any], label: str = "") -> list[Any]:
        """Compute dask objects in one pass; returns their values in order."""
        self._start(label)
        if self.client is not None:
            futures = self.client.compute(list(objs))
            self._wait(futures)
            return list(self.client.gather(futures))
        return self._local(dask.compute, objs)

    def persist(self, objs: Sequence[Any], label: str = "") -> list[Any]:
        """Compute and keep results where they are (worker memory on a cluster,
        spilled to disk by the workers when it runs short)."""
        self._start(label)
        if self.client is not None:
            out = self.client.persist(list(objs))
            from distributed import futures_of

            self._wait(futures_of(out))
            return list(out)
        return self._local(dask.persist, objs)

    def _start(self, label: str) -> None:
        self.check_time()
        self.passes += 1
        if self.progress and label:
            print(f"rowvoi.dask: {label}", file=sys.stderr, flush=True)

    def _local(self, fn: Callable[..., Any], objs: Sequence[Any]) -> list[Any]:
        """fn (dask.compute or dask.persist) on a local scheduler, with the
        dask.diagnostics progress bar when asked."""
        if self.progress:
            from dask.diagnostics import ProgressBar

            with ProgressBar(out=sys.stderr):
                return list(fn(*objs, scheduler=self.scheduler))
        return list(fn(*objs, scheduler=self.scheduler))

    def _wait(self, futures: list[Any]) -> None:
        from distributed import wait

        if self.progress:
            from distributed import progress

            progress(futures)  # blocks until the pass is done
        r = self.remaining()
        try:
            wait(futures, timeout=r)
        except TimeoutError as exc:
            if self.client is not None:
                self.client.cancel(futures)
            raise Expired() from exc


def tree_reduce(
    items: list[Any], combine: Callable[[list[Any]], Any], split_every: int = 8
) -> Any:
    """A delayed tree of ``combine(list)`` calls over items (None when empty)."""
    if not items:
        return None
    level = list(items)
    while len(level) > 1:
        level = [
            delayed(combine, pure=True)(level[i : i + split_every])
            for i in range(0, len(level), split_every)
        ]
    if len(items) == 1:
        return delayed(combine, pure=True)(level)
    return level[0]
