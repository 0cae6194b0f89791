"""The ``ir`` side of the ``maintain`` suite: run in ``ir``'s own virtual
environment (``ir`` 0.1.61), one step per process.

    $IR_PY bench/peers/maintain_ir.py CONFIG.json STEP > RESULT.json

CONFIG names the folder of files and a scratch directory (ir's data,
config and cache folders live there, so steps share one corpus). STEP
``register`` registers the folder as a files corpus (hashing embedder,
whole-text strategy, source-change policy); any other step runs ``ir.maintenance.maintain(
all=True)`` once and prints its wall time (import excluded) and results.
It imports nothing from rowvoi.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> None:
    cfg = json.load(open(sys.argv[1]))
    step = sys.argv[2]
    os.environ["IR_DATA_DIR"] = os.path.join(cfg["scratch"], "data")
    os.environ["IR_CONFIG_DIR"] = os.path.join(cfg["scratch"], "config")
    os.environ["IR_CACHE_DIR"] = os.path.join(cfg["scratch"], "cache")
    from ir import WholeText, registry
    from ir.maintenance import maintain

    if step == "register":
        registry.register(
            "bench",
            "files",
            embedder="light",
            root=cfg["root"],
            strategy=WholeText(),
            pattern=cfg["pattern"],
            maintenance={"reindex": {"on": "source-change"}},
        )
        print(json.dumps({"ok": True}))
        return
    t0 = time.perf_counter()
    results = maintain(all=True)
    seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "seconds": seconds,
                "results": [
                    {"name": r.name, "ran": r.ran, "reason": r.reason, "error": r.error}
                    for r in results
                ],
            }
        )
    )


if __name__ == "__main__":
    main()
