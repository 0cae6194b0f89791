"""From a corpus search to decisions: enough context, then the right runbook.

An on-call engineer sees "checkout returns 502 errors". rowvoi searches a
small corpus of runbooks, then answers two questions a ranked list cannot:

1. Which chunks are *enough* to brief someone on every usual cause? A set
   cover over the claims the briefing needs, costed in tokens
   (rowvoi.rag.select_context on search hits).
2. Which runbook applies to *this* incident? The candidates are the
   runbooks the search found; each probe is a search for a symptom. Its
   predicted outcome per runbook is whether the runbook's corpus search
   finds that runbook; its observed outcome is whether the same search
   finds anything in the incident's own logs -- a second corpus. A
   RetrievalSession runs the most informative probe first and stops when
   one runbook holds 95% of the belief.

Everything runs offline in a second or two: both corpora use the hashing
embedder and live in temporary in-memory stores (nothing is written to
your corpus directory). The support judge is a scripted stand-in for a
language model (rowvoi.rag.protocols.SupportJudge).

Run:  python examples/corpus_to_decisions.py
"""

from __future__ import annotations

from rowvoi import StopRules
from rowvoi.corpus import Chunked, CorpusStore, build, discover, from_mapping, search
from rowvoi.rag import RetrievalSession, select_context
from rowvoi.rag.corpus import (
    SearchProbeRunner,
    hits_to_chunks,
    prior_from_hits,
    probe_outcomes,
)

RUNBOOKS = {
    "tls-expiry": {
        "kind": "runbook",
        "text": "Checkout returns 502 errors after the TLS certificate of the payment "
        "gateway expired. Symptom: the load balancer logs 'x509: certificate has "
        "expired'. Fix: renew the certificate with certbot, then reload nginx.",
    },
    "db-pool": {
        "kind": "runbook",
        "text": "Checkout returns 502 errors when the database connection pool is exhausted. "
        "Symptom: the app logs 'too many connections' and 'pool timeout'. Fix: "
        "restart the worker that leaks connections, then raise max_connections.",
    },
    "disk-full": {
        "kind": "runbook",
        "text": "Order writes fail and checkout returns 502 errors when the disk is full. "
        "Symptom: 'No space left on device' in the app log. Fix: rotate and compress "
        "the logs, then clear /var/tmp.",
    },
    "dns": {
        "kind": "runbook",
        "text": "Calls to the payment provider fail with 502 errors when DNS resolution "
        "breaks. Symptom: 'temporary failure in name resolution'. Fix: restart "
        "systemd-resolved and check the upstream resolvers.",
    },
    "oom": {
        "kind": "runbook",
        "text": "Checkout workers crash and requests return 502 errors when the kernel's "
        "OOM killer ends them. Symptom: 'Out of memory: Killed process' in the "
        "kernel log. Fix: lower the worker memory limit or add swap.",
    },
    "overview": {
        "kind": "overview",
        "text": "A 502 at checkout has five usual causes: an expired TLS certificate, an "
        "exhausted database connection pool, a full disk, broken DNS resolution and "
        "the OOM killer. Start with the load balancer log, then the app log.",
    },
    "vpn": {
        "kind": "howto",
        "text": "Connect to the office VPN with WireGuard: import the profile, then "
        "enable the tunnel.",
    },
}

#: The incident's logs: the evidence the probes search.
INCIDENT_LOGS = {
    "lb-1": "10:02:11 lb: upstream returned 502 for POST /checkout",
    "lb-2": "10:02:11 lb: handshake with gateway failed: x509: certificate has expired",
    "app-1": "10:02:12 app: order 8812 failed: upstream error",
    "app-2": "10:02:15 app: health check ok",
}

#: What a briefing on checkout 502s must cover, and the words that show a
#: chunk covers it (a scripted support judge).
CLAIMS = {
    "certificate": ("certificate",),
    "connection pool": ("connection pool",),
    "full disk": ("disk",),
    "dns": ("dns",),
    "oom killer": ("oom",),
}

#: Symptom searches an engineer could run against the logs.
PROBES = [
    "certificate expired",
    "too many connections pool timeout",
    "no space left on device",
    "failure in name resolution",
    "out of memory killed",
]


class CueJudge:
    """Stand-in SupportJudge: a chunk supports a claim if it has a cue."""

    def judge(self, chunks, claims):
        return {
            c: {cid for cid, text in chunks if any(cue in text.lower() for cue in CLAIMS[c])}
            for c in claims
        }


def build_corpora():
    runbooks = build(
        from_mapping(
            RUNBOOKS,
            name="runbooks",
            embedder="hashing",
            strategy=Chunked(chunk_size=120, overlap=30, text_key="text"),
            metadata_of=lambda aid, raw: {"kind": raw["kind"]},
        ),
        store=CorpusStore.memory(),
        progress=False,
    )
    logs = build(
        from_mapping(INCIDENT_LOGS, name="incident", embedder="hashing"),
        store=CorpusStore.memory(),
        progress=False,
    )
    return runbooks, logs


def main() -> str:
    runbooks, logs = build_corpora()
    query = "checkout returns 502 errors"

    # 0. The one-call tool: search, commit to the few best, disclose.
    found = discover(runbooks, query, k=8)
    print(f"discover: {found.ids} ({found.reason})")

    # 1. Minimal context: the cheapest chunks that cover every cause.
    chunk_hits = search(runbooks, query, k=12, mode="hybrid", per_artifact=False)
    chunks = hits_to_chunks(chunk_hits)
    support = CueJudge().judge([(c.id, c.text) for c in chunks], list(CLAIMS))
    context = select_context(chunks, list(CLAIMS), support)
    top = chunks[: len(context.chunks)]
    top_covers = [cl for cl in CLAIMS if any(c.id in support[cl] for c in top)]
    print(
        f"context: {context.chunks}: {context.total_cost:g} tokens, covers "
        f"{len(context.covered_claims)} of {len(CLAIMS)} causes (the top {len(top)} "
        f"chunks: {sum(c.tokens for c in top)} tokens, {len(top_covers)} causes)"
    )

    # 2. Which runbook applies? Candidates from a filtered search; probes
    #    are symptom searches; the runner searches the incident's logs.
    hits = search(runbooks, query, k=5, mode="hybrid", filter={"kind": "runbook"})
    candidates = [h.artifact_id for h in hits]
    outcomes = probe_outcomes(runbooks, candidates, PROBES)
    session = RetrievalSession(
        outcomes, runner=SearchProbeRunner(logs), prior=prior_from_hits(hits), noise=0.05
    )
    steps = session.run(StopRules(epsilon_posterior=0.05, max_steps=len(PROBES)))
    for step in steps:
        print(
            f"probe {step.probe!r}: {step.outcome} -> entropy {step.entropy_before:.2f} "
            f"-> {step.entropy_after:.2f} bits"
        )
    best = candidates[session.best_candidate]
    print(
        f"runbook: {best} (posterior {session.state.max_posterior:.3f}, "
        f"{session.steps_taken} probe{'s' if session.steps_taken != 1 else ''})"
    )
    return best


if __name__ == "__main__":
    main()
