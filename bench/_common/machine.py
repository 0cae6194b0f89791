"""The machine a benchmark ran on, in one line for its results file.

One implementation for every suite: the CPU model and the vector extensions
that pick rowvoi's kernels (the int8 scan's, onnxruntime's int8 matrix
products), the cores this process may use, and the load average (the
machine is shared: other jobs' load skews timings).  Standard library only.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The extensions named in a machine line, in this order, when present.
VECTOR_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni")


def _cpuinfo_field(name: str) -> str | None:
    """The first ``name`` line of /proc/cpuinfo (None where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(name):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what ``platform`` knows."""
    return _cpuinfo_field("model name") or platform.processor() or "unknown CPU"


def vector_extensions() -> str:
    """The CPU's vector extensions that pick rowvoi's kernels, for a
    results file's machine line: e.g. ``"avx2"`` or ``"avx2, avx512f,
    avx512_vnni, avx512_bf16"`` (bf16: the encoder's bfloat16 attention). Read from /proc/cpuinfo; ``"unknown"`` elsewhere."""
    flags = _cpuinfo_field("flags")
    if flags is None:
        return "unknown"
    have = set(flags.split())
    return ", ".join(f for f in VECTOR_FLAGS if f in have) or "no avx2"


def host_tag() -> str:
    """``"_avx512"`` on a CPU with AVX-512 (avx512f), else ``""``: the suffix
    of a results file's name, so that one host's results sit beside the
    other's rather than over them."""
    return "_avx512" if "avx512f" in vector_extensions().split(", ") else ""


def cores() -> int:
    """CPUs this process may run on (its affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load_average() -> str:
    """The 1-minute load average, ``"unknown"`` where there is none."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):
        return "unknown"


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB.

    ``VmHWM`` of ``/proc/self/status`` belongs to the process's own address
    space. ``ru_maxrss`` is the fallback off Linux; on Linux it would carry
    the parent's peak across fork and exec, inflating a child's figure.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def machine_line() -> str:
    """``"AMD EPYC 7B13 (x86_64), 2 cores, vector extensions: avx2; load
    average 1.23"``: what a results file says of the machine."""
    return (
        f"{cpu_model()} ({platform.machine()}), {cores()} cores, vector extensions: "
        f"{vector_extensions()}; load average {load_average()}"
    )


def git_commit() -> str:
    """This checkout's commit (``-dirty`` with uncommitted changes), or
    ``"unknown"`` outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if head.returncode != 0:
            return "unknown"
        status = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")
