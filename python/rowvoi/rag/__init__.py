"""Retrieval-augmented generation adapters over rowvoi's core engines.

rowvoi answers two questions about tabular data: which minimal set of
columns distinguishes a set of candidate rows, and which column to observe
next. Both have direct analogues in RAG, and this package is the adapter
layer; the algorithms themselves are unchanged.

==========================  ==========================================
Tabular                     RAG
==========================  ==========================================
Set cover over row pairs    ``context``: cover claims with chunks
Next column by MI           ``questions``: next clarifying question
Sequential acquisition      ``retrieval``: next retrieval probe
==========================  ==========================================

Everything here is deterministic and depends only on pandas and numpy (and
rowvoi's engine): the functions take matrices and return selections.
Producing those matrices is what needs a language model, and that boundary
is :mod:`rowvoi.rag.protocols`; no LLM SDK is imported by ``rowvoi.rag``.
For an Anthropic-backed implementation, install the ``claude`` extra and
import :mod:`rowvoi.rag.claude` explicitly: it is deliberately not imported
here.
"""

from rowvoi.rag.context import (
    Chunk,
    ContextSelection,
    extract_and_select,
    plan_context_path,
    select_context,
)
from rowvoi.rag.questions import (
    answer_frame,
    answer_likelihoods,
    next_question,
    observe_answer,
    question_values,
)
from rowvoi.rag.retrieval import ProbeStep, RetrievalSession
from rowvoi.rag.protocols import (
    AnswerPredictor,
    ClaimExtractor,
    ProbeRunner,
    QuestionGenerator,
    SupportJudge,
)

__all__ = [
    "Chunk",
    "ContextSelection",
    "select_context",
    "plan_context_path",
    "extract_and_select",
    "answer_frame",
    "answer_likelihoods",
    "next_question",
    "observe_answer",
    "question_values",
    "RetrievalSession",
    "ProbeStep",
    "AnswerPredictor",
    "ClaimExtractor",
    "ProbeRunner",
    "QuestionGenerator",
    "SupportJudge",
]
