"""Where the language model goes: the protocols rowvoi.rag consumes.

The matrices rowvoi works on (which chunks support which claims, what answer
each question gets per candidate, what a probe returns) are what a model
produces. These ``typing.Protocol`` classes are that boundary: implement them
with any model or rule you like, or use the Claude-backed
:class:`~rowvoi.rag.claude.ClaudeClaimExtractor` and
:class:`~rowvoi.rag.claude.ClaudeSupportJudge` (the ``claude`` extra; the
SDK is imported only when one of them builds its own client).

>>> from rowvoi.rag.protocols import ClaimExtractor
>>> class Split:
...     def extract(self, query):
...         return [part.strip() for part in query.split(" and ")]
>>> isinstance(Split(), ClaimExtractor)
True
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["AnswerPredictor", "ClaimExtractor", "ProbeRunner", "QuestionGenerator", "SupportJudge"]


@runtime_checkable
class AnswerPredictor(Protocol):
    """Predicts the answer each question gets, per candidate.

    This is what makes value of information computable before asking
    anything: the predicted answer matrix says how each question would split
    the candidate set.
    """

    def predict(self, candidates: Sequence[str], questions: Sequence[str]) -> list[list[Any]]:
        """Return an answer matrix ``answers[i][q]``.

        ``answers[i][q]`` is the answer ``questions[q]`` would receive if
        ``candidates[i]`` were the right candidate. Answers are compared for
        equality, so normalize them (lowercase, canonical labels) rather than
        returning free prose.
        """
        ...


@runtime_checkable
class ClaimExtractor(Protocol):
    """Decomposes a query into the claims an answer must support."""

    def extract(self, query: str) -> list[str]:
        """Return the list of claims an answer to ``query`` must support."""
        ...


@runtime_checkable
class ProbeRunner(Protocol):
    """Executes a retrieval probe and reports what came back."""

    def run(self, probe: Hashable) -> Any:
        """Run ``probe`` and return the observed outcome.

        The outcome is compared against the predicted outcome matrix to build
        a likelihood vector, so it must be drawn from the same value space.
        """
        ...


@runtime_checkable
class QuestionGenerator(Protocol):
    """Proposes clarifying questions that might separate candidates."""

    def generate(self, candidates: Sequence[str], n: int) -> list[str]:
        """Propose up to ``n`` clarifying questions for these candidates."""
        ...


@runtime_checkable
class SupportJudge(Protocol):
    """Decides which chunks support which claims."""

    def judge(
        self, chunks: Sequence[tuple[Hashable, str]], claims: Sequence[Hashable]
    ) -> dict[Hashable, set[Hashable]]:
        """Map each claim to the set of chunk ids that support it.

        ``chunks`` are ``(id, text)`` pairs. A claim with no support maps to
        an empty set rather than being omitted.
        """
        ...
