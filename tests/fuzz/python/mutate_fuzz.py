"""Deterministic mutation fuzzing of a Python target that can crash the process.

atheris installs here but gives no useful coverage feedback on rowvoi's
Python targets (tests/fuzz/RESULTS.md), and hypothesis runs in-process, so
an input that crashes the interpreter (a segfault in hnswlib -- the bug
class the HNSW structural check prevents) would take the run down with it
and leave no reproducer.  This runner keeps going past crashes:

* a child process draws inputs from ``random.Random(seed)`` -- the target's
  own ``generate(rng)`` (structure-aware: it knows where the fields are) or
  byte mutations of its seed corpus, half each -- and writes each input to
  ``<workdir>/current`` before running it;
* the parent restarts the child when it dies of a signal, saving
  ``current`` as ``tests/fuzz/corpus/py_<target>/crash-<sha1>`` (the replay
  test then runs it on every CI run); an input whose ``test_one_input``
  raises is saved the same way by the child, which goes on.

The sequence of inputs is a function of the seed, so a run is repeatable
(the count reached in a given time is not).

Usage::

    python tests/fuzz/python/mutate_fuzz.py hnsw_load SECONDS [SEED]

Prints inputs run, inputs per second, crashes and findings; exits 1 if
there were any.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

# the targets (fuzz_<target>.py) and their corpora (corpus/py_<target>/);
# ROWVOI_MUTATE_HOME points elsewhere (a directory holding both), for tests
_HOME = os.environ.get("ROWVOI_MUTATE_HOME")
HERE = Path(_HOME) if _HOME else Path(__file__).resolve().parent
CORPUS = Path(_HOME) / "corpus" if _HOME else HERE.parent / "corpus"
INTERESTING = (0, 1, 0x7F, 0x80, 0xFF)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """A few byte-level mutations of data (flip, set, insert, erase, splice)."""
    out = bytearray(data or b"\0")
    for _ in range(rng.randint(1, 6)):
        if not out:
            out.append(0)
        op = rng.randrange(5)
        i = rng.randrange(len(out))
        if op == 0:
            out[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            out[i] = rng.choice(INTERESTING) if rng.random() < 0.5 else rng.randrange(256)
        elif op == 2:
            out[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3 and len(out) > 1:
            del out[i : i + rng.randint(1, 8)]
        else:
            j = rng.randrange(len(out))
            out[i : i + 4] = out[j : j + 4]
    return bytes(out)


def _save(target: str, data: bytes) -> Path:
    out = CORPUS / f"py_{target}" / ("crash-" + hashlib.sha1(data).hexdigest()[:12])
    out.write_bytes(data)
    return out


def child(target: str, deadline: float, seed: int, start: int, work: Path) -> None:
    """Run inputs start, start + 1, ... until ``time.time()`` reaches
    deadline (so importing the target counts against the run's time);
    report counts as JSON on the last line of stdout."""
    sys.path.insert(0, str(HERE))
    mod = importlib.import_module(f"fuzz_{target}")
    seeds = [p.read_bytes() for p in sorted((CORPUS / f"py_{target}").iterdir()) if p.is_file()]
    i, findings = start, 0
    current = work / "current"
    while time.time() < deadline:
        rng = random.Random(seed * 1_000_003 + i)
        if hasattr(mod, "generate") and rng.random() < 0.5:
            data = mod.generate(rng)
        else:
            data = mutate(rng.choice(seeds), rng)
        current.write_bytes(data)
        (work / "current.idx").write_text(str(i))
        i += 1
        try:
            mod.test_one_input(data)
        except Exception:
            findings += 1
            path = _save(target, data)
            print(f"FINDING at input {i - 1}: {path}", flush=True)
            traceback.print_exc()
    current.unlink(missing_ok=True)
    (work / "current.idx").unlink(missing_ok=True)
    print(json.dumps({"next": i, "findings": findings}), flush=True)


def main() -> int:
    target, seconds = sys.argv[1], float(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    work = Path(tempfile.mkdtemp(prefix=f"rowvoi-mutate-{target}-"))
    try:
        return _run(target, seconds, seed, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # (the reproducers are in CORPUS)


def _run(target: str, seconds: float, seed: int, work: Path) -> int:
    """main's loop: children run inputs from the next one a dead child
    left, until the deadline; ``work`` holds what they share."""
    start_time, deadline = time.monotonic(), time.time() + seconds
    nxt, findings, crashes = 0, 0, 0
    while deadline - time.time() > 1:
        p = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                target,
                repr(deadline),
                str(seed),
                str(nxt),
                str(work),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        lines = p.stdout.strip().splitlines()
        print("\n".join(line for line in lines if not line.startswith("{")), flush=True)
        if p.returncode == 0 and lines and lines[-1].startswith("{"):
            done = json.loads(lines[-1])
            nxt, findings = done["next"], findings + done["findings"]
            break
        crashes += 1  # died: the input it was running is the reproducer
        current = work / "current"
        data = current.read_bytes() if current.exists() else b""
        path = _save(target, data)
        print(f"CRASH (exit {p.returncode}): reproducer {path}", flush=True)
        findings += sum(1 for ln in lines if ln.startswith("FINDING"))
        idx = work / "current.idx"
        nxt = (int(idx.read_text()) if idx.exists() else nxt) + 1  # go on after it
    took = time.monotonic() - start_time
    print(
        f"{target}: {nxt} inputs in {took:.0f} s ({nxt / took:.1f}/s), "
        f"{crashes} crash(es), {findings} finding(s)"
    )
    return 1 if crashes or findings else 0


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(
            sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), Path(sys.argv[6])
        )
        sys.exit(0)
    sys.exit(main())
