"""rowvoi: value of information over candidate rows, with a native core.

Three questions, answered exactly and fast:

* **What settles it?** :func:`find_key` / :class:`SetCoverProblem`: the
  cheapest set of columns (or chunks) that tells every candidate apart.
* **What to ask next?** :func:`plan_key_path`: the order in which to acquire
  columns, with coverage and cost per step.
* **What do we believe now?** :class:`CandidateState`: hard filtering and
  soft reweighting as evidence arrives.
* **Which question next?** :class:`CandidateMIPolicy`, :class:`MIPolicy`
  (with a :class:`RowVoiModel` and its noise model) and
  :class:`DisambiguationSession`: exact expected information gain of every
  column, computed in one pass per column by the C engine.

Importing rowvoi configures no logging and prints nothing.

>>> import pandas as pd, rowvoi
>>> df = pd.DataFrame({"a": [1, 1, 2], "b": [1, 2, 2]})
>>> rowvoi.find_key(df, df.index)
['a', 'b']
"""

from typing import TYPE_CHECKING

from rowvoi import _lazy
from rowvoi._paths import get_include, get_lib_dir
from rowvoi._setcover import version as _engine_version
from rowvoi.errors import (
    IndexFormatError,
    NotProvenOptimalWarning,
    RvError,
    SolverUnavailableError,
)

if TYPE_CHECKING:  # the names _LAZY loads on first use, for type checkers
    from rowvoi.core import CandidateState, FeatureSuggestion
    from rowvoi.eval import (
        AcquisitionResult,
        KeyEvalResult,
        PolicyEvalStats,
        benchmark_policy,
        compute_gold_key,
        compute_gold_next_column_probabilistic,
        evaluate_keys,
        evaluate_policies,
        sample_candidate_sets,
    )
    from rowvoi.keys import (
        KeyPath,
        KeyPathStep,
        KeyProblem,
        find_key,
        pairwise_coverage,
        plan_key_path,
    )
    from rowvoi.ml import RowVoiModel
    from rowvoi.policies import (
        CandidateMIPolicy,
        GreedyCoveragePolicy,
        MIPolicy,
        Policy,
        RandomPolicy,
    )
    from rowvoi.prob_keys import (
        estimate_coverage_probability,
        find_key_probabilistic,
        plan_key_path_probabilistic,
    )
    from rowvoi.session import DisambiguationSession, SessionStep, StopRules
    from rowvoi.setcover import (
        CoverPath,
        CoverSolution,
        CoverStep,
        SetCoverProblem,
        coverage_of,
        solve_set_cover,
    )

__version__ = _engine_version()[0]

# The table-and-decision API (pandas, the solvers) is imported on first use
# of one of its names, so that ``import rowvoi.corpus`` (and so each corpus
# command of the CLI) does not pay for pandas and the solvers: 0.5-0.8 s a
# process (a `rowvoi search` 1.7 -> 0.9 s, `rowvoi ls` 1.15 -> 0.4 s).
# Their submodules (``rowvoi.keys``, ...) load on first attribute access too.
_LAZY, __getattr__, __dir__ = _lazy.exports(
    __name__,
    {
        "rowvoi.core": "CandidateState FeatureSuggestion",
        "rowvoi.eval": "AcquisitionResult KeyEvalResult PolicyEvalStats benchmark_policy "
        "compute_gold_key compute_gold_next_column_probabilistic evaluate_keys "
        "evaluate_policies sample_candidate_sets",
        "rowvoi.keys": "KeyPath KeyPathStep KeyProblem find_key pairwise_coverage plan_key_path",
        "rowvoi.ml": "RowVoiModel",
        "rowvoi.policies": "CandidateMIPolicy GreedyCoveragePolicy MIPolicy Policy RandomPolicy",
        "rowvoi.prob_keys": "estimate_coverage_probability find_key_probabilistic "
        "plan_key_path_probabilistic",
        "rowvoi.session": "DisambiguationSession SessionStep StopRules",
        "rowvoi.setcover": "CoverPath CoverSolution CoverStep SetCoverProblem coverage_of "
        "solve_set_cover",
    },
)

__all__ = [
    "__version__",
    "CandidateState",
    "FeatureSuggestion",
    "SetCoverProblem",
    "CoverPath",
    "CoverStep",
    "CoverSolution",
    "solve_set_cover",
    "coverage_of",
    "SolverUnavailableError",
    "KeyProblem",
    "KeyPath",
    "KeyPathStep",
    "find_key",
    "plan_key_path",
    "pairwise_coverage",
    "find_key_probabilistic",
    "plan_key_path_probabilistic",
    "estimate_coverage_probability",
    "Policy",
    "GreedyCoveragePolicy",
    "MIPolicy",
    "CandidateMIPolicy",
    "RandomPolicy",
    "StopRules",
    "SessionStep",
    "DisambiguationSession",
    "RowVoiModel",
    "sample_candidate_sets",
    "compute_gold_key",
    "compute_gold_next_column_probabilistic",
    "evaluate_keys",
    "evaluate_policies",
    "benchmark_policy",
    "KeyEvalResult",
    "PolicyEvalStats",
    "AcquisitionResult",
    "RvError",
    "IndexFormatError",
    "NotProvenOptimalWarning",
    "get_include",
    "get_lib_dir",
]
