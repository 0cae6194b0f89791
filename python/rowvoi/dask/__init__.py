"""Keys, key paths and information gain over Dask DataFrames; corpora in shards.

For tables that outgrow one machine's memory. Every function here is the
twin of an in-memory one and gives its answer on any table both can hold:

==========================  ==============================================
``find_key``                :func:`rowvoi.keys.find_key`
``plan_key_path``           :func:`rowvoi.keys.plan_key_path`
``question_values``         :meth:`rowvoi.policies.CandidateMIPolicy.compute_mi`
                            for every column at once
``suggest``                 :meth:`rowvoi.policies.CandidateMIPolicy.suggest`
``filter_candidates``       :meth:`rowvoi.CandidateState.filter_candidates`
==========================  ==============================================

Corpora that outgrow one machine are built in shards and searched as one
(:mod:`rowvoi.dask.corpus`): :func:`build_sharded`, :func:`open_sharded`
and :class:`ShardedCorpus`, whose hits equal those of one corpus.

Install with ``pip install 'rowvoi[dask]'``. Every function takes
``scheduler=`` (None: the active ``distributed`` client, else Dask's
threads; a scheduler name; or a ``distributed.Client`` -- connect to a
running cluster with ``Client("tcp://scheduler-host:8786")``) and
``progress=`` (a progress bar per pass on stderr). The per-partition work is
done by the C engine with the GIL released, in module-level functions that
pickle to process workers; nothing is kept between calls.
"""

from __future__ import annotations

try:
    import dask.dataframe  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "rowvoi.dask needs dask[dataframe] (and distributed for clusters): "
        "pip install 'rowvoi[dask]'"
    ) from exc

from .belief import filter_candidates, question_values, suggest
from .corpus import (
    ShardedBuildReport,
    ShardedCorpus,
    ShardedCorpusError,
    build_sharded,
    open_sharded,
    remove_sharded,
    shard_of,
)
from .keys import find_key, plan_key_path

__all__ = [
    "find_key",
    "plan_key_path",
    "question_values",
    "suggest",
    "filter_candidates",
    "build_sharded",
    "open_sharded",
    "ShardedCorpus",
    "ShardedBuildReport",
    "ShardedCorpusError",
    "shard_of",
    "remove_sharded",
]
