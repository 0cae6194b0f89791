"""A RAG pipeline with rowvoi, end to end, with no network and no API key.

Three capabilities on one small support-desk scenario:

1. Minimal sufficient context: which retrieved chunks to put in the prompt.
2. A clarifying question: which one question settles which document is meant.
3. Adaptive retrieval: which probes to run until one candidate is clear.

The language-model parts (claim extraction, support judgement, probe
execution) are scripted stand-ins implementing rowvoi.rag.protocols, so the
example is deterministic. Swap in real implementations for production, such
as rowvoi.rag.claude's ClaudeClaimExtractor and ClaudeSupportJudge
(pip install "rowvoi[claude]").

Run:  python examples/rag/rag_pipeline_demo.py
"""

from __future__ import annotations

from typing import ClassVar

from rowvoi import CandidateState, StopRules
from rowvoi.rag import (
    Chunk,
    RetrievalSession,
    extract_and_select,
    next_question,
    observe_answer,
    plan_context_path,
    question_values,
)
from rowvoi.rag.protocols import ClaimExtractor, ProbeRunner, SupportJudge

QUERY = "How much is the Pro plan, when did v4.2 ship, and does it support SSO?"

CHUNKS = [
    Chunk("pricing#p1", "The Pro plan costs $40 per seat per month.", tokens=120),
    Chunk("pricing#p4", "Pro includes SSO via SAML and OIDC.", tokens=90),
    Chunk("release#v42", "Version 4.2 shipped on March 3rd, 2026.", tokens=80),
    Chunk("blog#launch", "Launch post: v4.2 is out, Pro now $40, SSO for all.", tokens=600),
    Chunk("faq#all", "FAQ covering pricing, releases, SSO and refunds.", tokens=1500),
]


class KeywordExtractor:
    """Stand-in ClaimExtractor: one claim per topic the query mentions."""

    TOPICS: ClassVar[dict[str, str]] = {"price": "pro plan", "release": "v4.2", "sso": "sso"}

    def extract(self, query: str) -> list[str]:
        q = query.lower()
        return [claim for claim, cue in self.TOPICS.items() if cue in q]


class KeywordJudge:
    """Stand-in SupportJudge: a chunk supports a claim if it mentions its cue."""

    CUES: ClassVar[dict[str, tuple[str, ...]]] = {
        "price": ("$40",),
        "release": ("4.2",),
        "sso": ("sso",),
    }

    def judge(self, chunks, claims):
        return {
            c: {cid for cid, text in chunks if any(cue in text.lower() for cue in self.CUES[c])}
            for c in claims
        }


def context_demo() -> None:
    print("1. Minimal sufficient context")
    extractor, judge = KeywordExtractor(), KeywordJudge()
    assert isinstance(extractor, ClaimExtractor) and isinstance(judge, SupportJudge)
    selection = extract_and_select(
        QUERY, CHUNKS, extractor=extractor, judge=judge, strategy="exact"
    )
    print(f"   claims: {KeywordExtractor().extract(QUERY)}")
    print(
        f"   chunks: {sorted(selection.chunks)}  ({selection.total_cost:g} tokens, "
        f"{selection.coverage:.0%} of claims, optimal={selection.optimal})"
    )
    top_by_length = sorted(CHUNKS, key=lambda c: -c.tokens)[:2]
    print(
        f"   (the two biggest 'catch-all' chunks would cost "
        f"{sum(c.tokens for c in top_by_length)} tokens)"
    )
    claims = extractor.extract(QUERY)
    support = judge.judge([(c.id, c.text) for c in CHUNKS], claims)
    path = plan_context_path(CHUNKS, claims, support)
    print(f"   with a 200-token budget: {path.prefix_for_budget(200)}")
    print(f"   coverage curve: {path.coverage_curve()}")


def question_demo() -> None:
    print("2. Clarifying question")
    # Four candidate documents; what each implies as the answer to each question.
    answers = {
        "Cloud or self-hosted?": ["cloud", "cloud", "self", "self"],
        "Which version?": ["v4", "v3", "v4", "v3"],
        "Paste your config": ["A", "B", "C", "D"],
        "Are you an admin?": ["yes", "yes", "yes", "yes"],
    }
    costs = {"Paste your config": 10.0}
    for question, bits in question_values(answers).items():
        print(f"   {bits:.2f} bits  {question}")
    best = next_question(answers, costs=costs)
    print(f"   ask: {best.col!r} ({best.expected_voi:.2f} bits for cost {best.marginal_cost:g})")
    state = CandidateState.uniform(range(4))
    state = observe_answer(state, answers, best.col, "self", noise=0.02)
    follow = next_question(answers, state=state, costs=costs)
    state = observe_answer(state, answers, follow.col, "v3", noise=0.02)
    print(
        f"   after answers 'self' and 'v3': posterior "
        f"{state.posterior.round(3).tolist()} -> candidate {int(state.posterior.argmax())}"
    )


class ScriptedRunner:
    """Stand-in ProbeRunner: a backend whose right answer is candidate 3."""

    def __init__(self, outcomes):
        self.outcomes = outcomes

    def run(self, probe):
        return self.outcomes[probe][3]


def retrieval_demo() -> None:
    print("3. Adaptive retrieval")
    outcomes = {
        "bm25": ["hit", "hit", "miss", "miss"],
        "metadata:version": ["v4", "v3", "v4", "v3"],
        "rerank": ["1st", "2nd", "3rd", "4th"],
    }
    runner = ScriptedRunner(outcomes)
    assert isinstance(runner, ProbeRunner)
    session = RetrievalSession(
        outcomes,
        runner=runner,
        prior=[0.20, 0.15, 0.45, 0.20],
        costs={"bm25": 1.0, "metadata:version": 1.0, "rerank": 12.0},
        noise=0.05,
    )
    session.run(StopRules(epsilon_posterior=0.15, target_unique=False))
    for step in session.history:
        print(
            f"   probe {step.probe!r}: got {step.outcome!r}, expected "
            f"{step.expected_voi:.3f} bits, realised {step.realized_gain:.3f}"
        )
    print(
        f"   best candidate {session.best_candidate} at "
        f"{session.state.max_posterior:.0%} after cost {session.cumulative_cost:g} "
        f"({session.stop_reason})"
    )


if __name__ == "__main__":
    context_demo()
    question_demo()
    retrieval_demo()
