"""Threads hammering a shared object for a few seconds: the loop of the
stress tests (``@pytest.mark.stress``), written once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hammered:
    """What :func:`hammer` saw: the problems the calls reported and the
    exceptions they raised (``problems``), the calls each thread made
    (``calls``), and how many times ``meanwhile`` ran."""

    problems: list[Any] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    meanwhile: int = 0


def hammer(
    seconds: float,
    threads: int,
    call: Callable[[int], Any],
    meanwhile: Callable[[int], None] | None = None,
) -> Hammered:
    """Run ``call(thread number)`` over and over in ``threads`` threads
    for ``seconds``, while this thread runs ``meanwhile(i)`` (i = 0, 1, ...)
    over and over, if given. A call returns None when all is well, else the
    problem it saw; an exception ends its thread and is a problem too."""
    stop = time.monotonic() + seconds
    out = Hammered()
    lock = threading.Lock()

    def work(t: int) -> None:
        n = 0
        try:
            while time.monotonic() < stop:
                problem = call(t)
                if problem is not None:
                    with lock:
                        out.problems.append(problem)
                n += 1
        except Exception as exc:  # a problem like any other
            with lock:
                out.problems.append(exc)
        with lock:
            out.calls.append(n)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    try:
        while meanwhile is not None and time.monotonic() < stop:
            meanwhile(out.meanwhile)
            out.meanwhile += 1
    finally:
        for w in workers:
            w.join()
    return out
