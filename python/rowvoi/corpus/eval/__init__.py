"""Measure retrieval: cases, ranking metrics, selection tuning, robustness.

One module per question:

``cases``
    :class:`DiscoveryCase` (a query and its gold ids; no gold: an
    abstention case), :func:`save_cases` / :func:`load_cases` (JSONL with an
    optional ``__meta__`` line), :func:`validate_cases`, :func:`to_qrels`.
``metrics``
    nDCG, precision, recall, MRR and MAP at a cutoff, as trec_eval defines
    them; TREC run files.
``retrieval``
    :func:`evaluate_discovery` (metrics, failure classes, per-case rows)
    and :func:`retrieval_report` (metrics of any retriever).
``selection``
    :func:`evaluate_selection` (what the selector commits to, apart from
    the ranking) and :func:`sweep_selector` (a grid of selector settings
    from one retrieval pass; :meth:`SelectionSweep.held_out` scores the
    tuning on cases it was not tuned on).
``robustness``
    :func:`distractor_robustness_curve`: accuracy as the catalog grows.
``graded``
    graded relevance per theme (:class:`GradedCase`), named diagnostic sets
    (distractors, hard positives) and :func:`compare_indexings` with a
    regression gate.
``generate``
    the deterministic parts of writing cases: :func:`mask_name`, the name
    leak guard, :func:`build_eval_set` around a :class:`QueryGenerator`
    you supply.
``plots``
    pictures of a sweep's precision/recall frontier and of a distractor
    curve (the ``rowvoi[plot]`` extra).

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> from rowvoi.corpus.eval import DiscoveryCase, evaluate_discovery
>>> c = build(from_mapping({"a": "wing lift", "b": "pipe flow"}, embedder="hashing"),
...           store=CorpusStore.memory(), progress=False)
>>> evaluate_discovery(c, [DiscoveryCase("lift of a wing", ["a"])], mode="lexical").primary
1.0
"""

from rowvoi.corpus.eval.cases import (
    DiscoveryCase,
    case_id,
    corpus_artifact_ids,
    load_cases,
    read_meta,
    save_cases,
    to_qrels,
    validate_cases,
)
from rowvoi.corpus.eval.metrics import (
    METRICS,
    average_precision,
    ndcg_at,
    precision_at,
    rank_run,
    recall_at,
    reciprocal_rank,
    to_run,
    write_qrels,
    write_run,
)
from rowvoi.corpus.eval.retrieval import (
    DFLT_K_VALUES,
    DFLT_METRICS,
    DFLT_MODE,
    FAILURE_CLASSES,
    DiscoveryReport,
    RetrievalReport,
    as_doc_retriever,
    evaluate_discovery,
    retrieval_report,
)
from rowvoi.corpus.eval.selection import (
    DFLT_SWEEP_MAX_K,
    DFLT_SWEEP_MIN_SCORE,
    DFLT_SWEEP_OBJECTIVE,
    DFLT_SWEEP_REL,
    SWEEP_METRICS,
    HeldOut,
    HeldOutFold,
    SelectionGridPoint,
    SelectionReport,
    SelectionSweep,
    evaluate_selection,
    sweep_selector,
)
from rowvoi.corpus.eval.robustness import (
    DFLT_CURVE_EMBEDDER,
    DFLT_CURVE_MODE,
    DFLT_DISTRACTOR_SIZES,
    distractor_curve_from_cases,
    distractor_robustness_curve,
)
from rowvoi.corpus.eval.graded import (
    LEVEL_GAINS,
    RELEVANCE_LEVELS,
    ComparisonReport,
    GradedCase,
    NamedSetReport,
    NamedSets,
    compare_indexings,
    derive_named_sets,
    evaluate_named_sets,
    fp_rate_on_distractors,
    level_histogram,
    load_graded_cases,
    recall_on_hard_positives,
    save_graded_cases,
    score_ranking,
    to_graded_qrels,
)
from rowvoi.corpus.eval.generate import (
    DFLT_ABSTENTION_FRAC,
    AbstentionGenerator,
    GeneratedCases,
    QueryGenerator,
    build_eval_set,
    corpus_signature,
    generate_abstention_cases,
    generate_cases,
    leaks_name,
    mask_name,
)
from rowvoi.corpus.eval.plots import PlotUnavailable, plot_distractor_curve, plot_frontier

__all__ = [
    # cases
    "DiscoveryCase",
    "save_cases",
    "load_cases",
    "read_meta",
    "validate_cases",
    "corpus_artifact_ids",
    "to_qrels",
    "case_id",
    # metrics
    "METRICS",
    "ndcg_at",
    "precision_at",
    "recall_at",
    "reciprocal_rank",
    "average_precision",
    "rank_run",
    "to_run",
    "write_run",
    "write_qrels",
    # retrieval
    "DFLT_K_VALUES",
    "DFLT_METRICS",
    "DFLT_MODE",
    "FAILURE_CLASSES",
    "DiscoveryReport",
    "RetrievalReport",
    "as_doc_retriever",
    "evaluate_discovery",
    "retrieval_report",
    # selection
    "SWEEP_METRICS",
    "DFLT_SWEEP_MAX_K",
    "DFLT_SWEEP_REL",
    "DFLT_SWEEP_MIN_SCORE",
    "DFLT_SWEEP_OBJECTIVE",
    "SelectionReport",
    "SelectionGridPoint",
    "SelectionSweep",
    "HeldOut",
    "HeldOutFold",
    "evaluate_selection",
    "sweep_selector",
    # robustness
    "DFLT_DISTRACTOR_SIZES",
    "DFLT_CURVE_MODE",
    "DFLT_CURVE_EMBEDDER",
    "distractor_robustness_curve",
    "distractor_curve_from_cases",
    # graded relevance, named sets, comparison
    "RELEVANCE_LEVELS",
    "LEVEL_GAINS",
    "GradedCase",
    "save_graded_cases",
    "load_graded_cases",
    "level_histogram",
    "to_graded_qrels",
    "NamedSets",
    "derive_named_sets",
    "fp_rate_on_distractors",
    "recall_on_hard_positives",
    "NamedSetReport",
    "evaluate_named_sets",
    "score_ranking",
    "ComparisonReport",
    "compare_indexings",
    # case generation
    "QueryGenerator",
    "AbstentionGenerator",
    "GeneratedCases",
    "DFLT_ABSTENTION_FRAC",
    "mask_name",
    "leaks_name",
    "generate_cases",
    "generate_abstention_cases",
    "build_eval_set",
    "corpus_signature",
    # pictures
    "PlotUnavailable",
    "plot_frontier",
    "plot_distractor_curve",
]
