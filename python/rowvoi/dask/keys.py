"""Greedy keys and key paths over Dask DataFrames.

The same greedy as :func:`rowvoi.keys.find_key` (``strategy="greedy"``) and
:func:`rowvoi.keys.plan_key_path`, run as passes over a table that need not
fit in memory; the answers are the in-memory ones (same columns in the same
order, same pair counts and costs, ties to the lowest column index).

How a run goes:

1. **Value counts** (one pass): every partition counts each column's value
   keys (:mod:`rowvoi.dask._values`), the counts meet bucket by bucket in a
   tree, and the first column is the one that tells the most row pairs
   apart: ``C(n, 2) - sum over values of C(count, 2)`` (per unit cost).
   Hashed columns are checked for key collisions in the same pass.
2. **One shuffle**: rows are moved so that all rows sharing a value of the
   first column sit in one partition (groups of one row are settled and
   dropped). From here on a group never spans partitions, because later
   columns only split groups.
3. **Group passes**: each partition scores every column against its own
   groups with the C kernels (:func:`rowvoi._setcover.keys_group_scores`),
   the driver adds up one integer per column and partition and picks the
   column, and each partition splits its groups by it. The groups live in
   worker memory between passes (a cluster spills them to disk when short)
   and shrink as rows are settled.

Class identity is exact: the first split uses value keys that were checked
for collisions, and every later split compares codes inside one partition.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from dask import delayed

from rowvoi import _validate as _v, keys as _mem
from rowvoi.errors import NotProvenOptimalWarning, RangeError
from rowvoi.frame import UnknownLabelError, resolve_columns, resolve_costs
from rowvoi.setcover import CoverSolution, required_count

from . import _tasks
from ._run import Expired, Runner, check_ddf, tree_reduce
from ._values import column_kind

__all__ = ["find_key", "plan_key_path"]

#: Attempts at a collision-free hash seed per hashed column before giving up.
MAX_SEED_TRIES = 8

#: Most distinct values a column may have to travel through the shuffle as
#: dictionary codes (the dictionary goes to every worker: 8 bytes a value).
DICT_LIMIT = 1 << 22


def _ratio_better(a: float, ca: float, b: float, cb: float) -> bool:
    """a/ca strictly better than b/cb up to a relative 1e-12 (the engine's
    rule, free columns included: :func:`rowvoi._validate.ratio_better`)."""
    return _v.ratio_better(a, ca, b, cb)


def _nlog2n(n: int) -> float:
    return 0.0 if n < 2 else n * math.log2(n)


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _resolve_rows(rows: Any) -> tuple[pd.Index | None, list[Hashable] | None]:
    """(index for lookups, the labels as given) or (None, None) for every row."""
    if rows is None:
        return None, None
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise TypeError(f"rows must be a sequence of labels, got {type(rows).__name__}")
    out = list(rows)
    idx = pd.Index(out, tupleize_cols=False) if out else pd.Index([], dtype=object)
    if not idx.is_unique:
        raise ValueError(f"rows lists {idx[idx.duplicated()][0]!r} more than once")
    return idx, out


def _check_labels(rows: pd.Index, found: pd.Series | None) -> None:
    """Every requested label must match exactly one row (as in memory)."""
    counts = pd.Series(0, index=rows, dtype=np.int64)
    if found is not None and len(found):
        counts = counts.add(found.reindex(rows, fill_value=0), fill_value=0)
    missing = [r for r, c in zip(rows, counts.to_numpy()) if c == 0]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        raise UnknownLabelError(f"rows not in df.index: {shown}")
    dup = [r for r, c in zip(rows, counts.to_numpy()) if c > 1]
    if dup:
        raise ValueError(
            f"df.index has duplicate labels (e.g. {dup[0]!r}), so rows cannot be addressed "
            "by label; use df.reset_index(drop=True) first"
        )


class _Problem:
    """One greedy run: the frame, its columns, costs, rows and the runner."""

    def __init__(self, ddf: Any, rows: Any, columns: Any, costs: Any, runner: Runner):
        self.ddf = check_ddf(ddf)
        self.rows, self.row_labels = _resolve_rows(rows)
        self.columns = resolve_columns(ddf, columns)
        self.costs = resolve_costs(ddf, costs, self.columns)
        dtypes = ddf.dtypes
        self.dtypes = [dtypes[c] for c in self.columns]
        self.seeds = [0] * len(self.columns)
        self.sub = ddf[self.columns]
        self.runner = runner
        self.n_buckets = max(1, min(64, -(-self.sub.npartitions // 8)))

    # ------------------------------------------------------- value counts
    def value_counts(self, label: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """One pass: (header sums, per-bucket column sums); re-hashes columns
        whose keys collide until none does."""
        for _ in range(MAX_SEED_TRIES):
            head, finals = self._value_counts_once(label)
            clashes: dict[int, tuple[Any, ...]] = {}
            for f in finals:
                for j, c in f["clashes"].items():
                    clashes.setdefault(j, c)
            if not clashes:
                return head, finals
            for j in clashes:
                self.seeds[j] += 1
        j, (a, b) = next(iter(clashes.items()))
        raise RuntimeError(
            f"column {self.columns[j]!r}: values {a!r} and {b!r} kept sharing a 64-bit key "
            f"over {MAX_SEED_TRIES} hash seeds; please report this"
        )

    def _value_counts_once(self, label: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        B = self.n_buckets
        parts = self.sub.to_delayed()
        mapped = [
            delayed(_tasks.profile_part, pure=True)(
                p, self.columns, self.dtypes, self.seeds, self.rows, B, None
            )
            for p in parts
        ]
        heads = [delayed(operator.getitem)(m, "head") for m in mapped]
        bucket_lists = [delayed(operator.getitem)(m, "buckets") for m in mapped]
        finals = []
        for b in range(B):
            items = [delayed(operator.getitem)(bl, b) for bl in bucket_lists]
            merged = tree_reduce(items, _tasks.combine_buckets)
            finals.append(
                delayed(_tasks.finish_bucket)(merged, len(self.columns), -(-DICT_LIMIT // B))
            )
        head = tree_reduce(heads, _tasks.combine_heads)
        out = self.runner.compute([head, *finals], label)
        return out[0], out[1:]

    # ------------------------------------------------------------- groups
    def build_groups(self, first: int, cand: list[int], finals: list[dict[str, Any]]) -> list[Any]:
        """Shuffle candidate rows by their value of column `first` and group them.

        Columns whose distinct values the first pass collected (at most
        DICT_LIMIT) travel as dictionary codes of 1, 2 or 4 bytes; the others
        as 8-byte value keys."""
        sub = self.sub
        dicts = [self._dictionary(j, finals) for j in range(len(self.columns))]
        key_coder = self._coder(first, dicts[first])
        key_counts = None
        first_dict = dicts[first]
        if key_coder is not None and first_dict is not None:
            keys, counts = first_dict
            key_counts = np.zeros(
                key_coder[2] if key_coder[0] == "offset" else len(keys), dtype=np.int64
            )
            key_counts[_tasks.encode_keys(keys, key_coder).astype(np.int64)] = counts
        cand_spec = [(j, self.columns[j], self.dtypes[j], self.seeds[j]) for j in cand]
        coders = [self._coder(j, dicts[j]) for j in cand]
        head = (self.columns[first], self.dtypes[first], self.seeds[first])
        tail = (self.rows, self.rows is not None)
        meta = _tasks.class_frame(
            sub._meta, *head, key_coder, key_counts, cand_spec, coders, *tail
        )
        # Large dictionaries enter the graph once, not once per partition.
        frame = sub.map_partitions(
            _tasks.class_frame,
            *head,
            delayed(key_coder),
            delayed(key_counts),
            cand_spec,
            delayed(coders),
            *tail,
            meta=meta,
            align_dataframes=False,
        )
        # a local scheduler shuffles by tasks: Dask's default while any
        # distributed Client exists in the process is p2p, which runs only
        # on that client's workers
        method = None if self.runner.client is not None else "tasks"
        shuffled = frame.shuffle(
            on="__rv_cls", npartitions=max(1, sub.npartitions), shuffle_method=method
        )
        coded = [c is not None for c in coders]
        return [
            delayed(_tasks.make_block, pure=True)(p, cand, coded) for p in shuffled.to_delayed()
        ]

    def _coder(self, j: int, d: tuple[np.ndarray, np.ndarray] | None) -> Any:
        """How column j travels (see _tasks.encode_keys)."""
        if d is None:
            return None
        keys = d[0]
        dtype = self.dtypes[j]
        if column_kind(dtype) == "bits" and dtype.kind in "iub" and len(keys):
            signed = dtype.kind == "i"
            vals = keys.view(np.int64) if signed else keys
            lo, hi = int(vals.min()), int(vals.max())
            if hi - lo < 4 * len(keys) + 64:
                return ("offset", lo, hi - lo + 1, signed)
        return ("dict", keys)

    def _dictionary(
        self, j: int, finals: list[dict[str, Any]]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Sorted distinct value keys of column j and their counts, if collected."""
        parts = [f["keys"][j] for f in finals]
        if any(p is None for p in parts):
            return None
        keys = np.concatenate([p[0] for p in parts])
        counts = np.concatenate([p[1] for p in parts])
        if len(keys) > DICT_LIMIT:
            return None
        order = np.argsort(keys, kind="stable")
        return keys[order], counts[order]


def _pick(
    resolved: dict[int, int], gains: dict[int, float], costs: np.ndarray, used: set[int]
) -> int:
    """The engine's choice: among columns resolving a pair, the best gain per
    cost, ties to the lowest index; columns resolving nothing become used."""
    best = -1
    for j in sorted(resolved):
        if j in used:
            continue
        if resolved[j] == 0:
            used.add(j)
            continue
        if best < 0 or _ratio_better(gains[j], float(costs[j]), gains[best], float(costs[best])):
            best = j
    return best


class _Run:
    """The result of a greedy run."""

    def __init__(self, n_rows: int):
        self.n_rows = n_rows
        self.order: list[int] = []
        self.newly: list[int] = []
        self.gains: list[float] = []
        self.left = _pairs(n_rows)
        self.timed_out = False
        self.state: list[Any] | None = None  # persisted (block, stats) per partition
        self.all_same = False  # no column split the rows at all


def _greedy(pb: _Problem, entropy: bool, eps: float) -> _Run:
    """Greedy steps until at most an eps fraction of pairs is unresolved (the
    in-memory stop rule) or no column resolves another pair."""
    runner = pb.runner
    m = len(pb.columns)
    try:
        head, finals = pb.value_counts("pass 1: value counts of every column")
    except Expired:
        run = _Run(0)
        run.timed_out = True
        return run
    if pb.rows is not None:
        _check_labels(pb.rows, head["labels"])
    n = head["n"]
    run = _Run(n)
    if run.left == 0:
        return run
    stop = run.left - required_count(run.left, eps)
    used: set[int] = set()
    resolved = {j: run.left - sum(f["same"][j] for f in finals) for j in range(m)}
    gains = {
        j: (
            (_nlog2n(n) - math.fsum(f["nlogn"][j] for f in finals)) / n
            if entropy
            else float(resolved[j])
        )
        for j in range(m)
    }
    step = 1
    while True:
        best = _pick(resolved, gains, pb.costs, used)
        if best < 0:
            if step == 1:
                run.all_same = True
            break
        used.add(best)
        run.order.append(best)
        run.newly.append(int(resolved[best]))
        run.gains.append(gains[best])
        run.left -= int(resolved[best])
        if run.left <= stop:
            break
        step += 1
        try:
            if run.state is None:
                cand = [j for j in range(m) if j not in used]
                blocks = pb.build_groups(best, cand, finals)
                tasks = [delayed(_tasks.block_step)(b, None, [], entropy) for b in blocks]
            else:
                drop = sorted(j for j in used if j != best)
                tasks = [
                    delayed(_tasks.block_step)(
                        delayed(operator.getitem)(s, 0), best, drop, entropy
                    )
                    for s in run.state
                ]
            state = runner.persist(tasks, f"pass {step}: split groups and score columns")
            run.state = state
            stats = runner.compute([delayed(operator.getitem)(s, 1) for s in state], "")
        except Expired:
            run.timed_out = True
            break
        resolved = {j: 0 for j in range(m) if j not in used}
        ent_parts: dict[int, list[float]] = {j: [] for j in resolved}
        for st in stats:
            for k, j in enumerate(st["ids"]):
                resolved[j] += int(st["resolved"][k])
                if entropy:
                    ent_parts[j].append(float(st["entropy"][k]))
        gains = {
            j: (math.fsum(ent_parts[j]) / n if entropy else float(resolved[j])) for j in resolved
        }
    return run


def _duplicate_groups(pb: _Problem, run: _Run) -> list[list[Hashable]]:
    """The first 5 groups of rows no column tells apart (6 labels each), in
    the in-memory order."""
    if run.all_same or run.state is None:
        firsts = _first_rows(pb, 6)
        return [firsts] if len(firsts) >= 2 else []
    per_block = pb.runner.compute(
        [delayed(_tasks.block_groups)(delayed(operator.getitem)(s, 0), 5, 6) for s in run.state],
        "",
    )
    groups = sorted((g for blk in per_block for g in blk), key=lambda g: g[0])[:5]
    if pb.row_labels is not None:
        labels = pb.row_labels
        return [[labels[i] for i in members] for _, members in groups]
    return _labels_by_order(pb, [members for _, members in groups])


def _first_rows(pb: _Problem, k: int) -> list[Hashable]:
    """Labels of the first k candidate rows in the in-memory order."""
    if pb.row_labels is not None:
        return pb.row_labels[:k]
    lengths = [int(x) for x in pb.runner.compute([pb.sub.map_partitions(len)], "")[0]]
    orders: list[int] = []
    need = k
    for p, ln in enumerate(lengths):
        take = min(ln, need)
        orders.extend((p << 40) + i for i in range(take))
        need -= take
        if need == 0:
            break
    return _labels_by_order(pb, [orders])[0]


def _labels_by_order(pb: _Problem, groups: list[list[int]]) -> list[list[Hashable]]:
    """Labels for order keys ``partition << 40 | position``."""
    want: dict[int, set[int]] = {}
    for members in groups:
        for o in members:
            want.setdefault(o >> 40, set()).add(o & ((1 << 40) - 1))
    parts = pb.ddf.to_delayed()
    keys = sorted(want)
    found = pb.runner.compute(
        [delayed(_tasks.labels_at)(parts[p], sorted(want[p])) for p in keys], ""
    )
    label = {}
    for p, labs in zip(keys, found):
        for pos, lab in zip(sorted(want[p]), labs):
            label[(p << 40) + pos] = lab
    return [[label[o] for o in members] for members in groups]


def _timeout_warning(run: _Run) -> None:
    total = _pairs(run.n_rows)
    warnings.warn(
        f"rowvoi.dask: time limit reached after {len(run.order)} greedy step(s); the "
        f"result resolves {total - run.left} of {total} row pairs known so far and is "
        "flagged timed_out (for find_key it may not be a key)",
        NotProvenOptimalWarning,
        stacklevel=3,
    )


def _collect(pb: _Problem, why: str) -> pd.DataFrame:
    """The candidate rows as a pandas frame (for the strategies that need the
    explicit pair universe; only when their pairs fit its limit)."""
    if pb.rows is not None:
        n = len(pb.rows)
    else:
        n = int(pb.runner.compute([pb.sub.map_partitions(len).sum()], "count rows")[0])
    n_pairs = _pairs(n)
    if n_pairs > _mem.MAX_EXPLICIT_PAIRS:
        raise RangeError(
            f"{why} needs the explicit universe of row pairs: {n} rows give {n_pairs} pairs, "
            f"above the limit of {_mem.MAX_EXPLICIT_PAIRS} (rowvoi.keys.MAX_EXPLICIT_PAIRS, "
            "about 10,000 rows); on a Dask frame use strategy='greedy' / "
            "weighting='uniform' (any size) or pass fewer rows"
        )
    rows = pb.rows
    frame = (
        pb.sub
        if rows is None
        else pb.sub.map_partitions(lambda p, r: p[p.index.isin(r)], rows, meta=pb.sub._meta)
    )
    df: pd.DataFrame = pb.runner.compute([frame], "collect the candidate rows")[0]
    if rows is None and not df.index.is_unique:
        df = df.reset_index(drop=True)
    return df


# ------------------------------------------------------------------ public
def find_key(
    ddf: Any,
    rows: Sequence[Hashable] | None = None,
    *,
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    strategy: Literal["greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"] = "greedy",
    epsilon_pairs: float = 0.0,
    time_limit: float | None = None,
    seed: int = 0,
    scheduler: Any = None,
    progress: bool = False,
) -> CoverSolution:
    """Find a key (columns that tell every pair of rows apart) of a Dask frame.

    The Dask twin of :func:`rowvoi.keys.find_key`: same arguments, same
    answer on any table both can hold. ``strategy="greedy"`` runs on the
    cluster at any size (see the module docstring for the passes); the
    other strategies need the explicit pair universe, so they collect the
    candidate rows and run in memory when the pairs fit
    :data:`rowvoi.keys.MAX_EXPLICIT_PAIRS`, and raise
    :class:`rowvoi.errors.RangeError` otherwise.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The table.
    rows : Sequence[Hashable] or None
        Labels (``ddf.index`` values) of the rows to tell apart; None means
        every row (then the index need not be unique). Each label must match
        exactly one row.
    columns, costs, strategy, epsilon_pairs, seed
        As in :func:`rowvoi.keys.find_key` (costs finite and >= 0).
    time_limit : float or None
        Seconds. Checked before every pass (on a ``distributed`` cluster a
        pass still running at the deadline is cancelled). A greedy run that
        runs out returns the columns picked so far with ``timed_out=True``
        (it may not be a key: ``covered < total``) and warns with
        :class:`rowvoi.errors.NotProvenOptimalWarning`.
    scheduler : None, str or distributed.Client
        None: the active ``distributed`` client if any, else Dask's default
        (threads); a name ("threads", "processes", "synchronous"); or a
        ``distributed.Client`` (``Client("tcp://host:8786")`` connects to a
        running scheduler).
    progress : bool
        Print a progress bar per pass on stderr.

    Returns
    -------
    CoverSolution
        The key's columns in pick order, with ``cost``, ``covered`` and
        ``total`` (row pairs) and ``timed_out``.

    Raises
    ------
    TypeError
        ddf is not a Dask DataFrame.
    ValueError
        As in memory: unknown strategy, bad epsilon or cost, rows that are
        missing or match several rows, duplicate rows that make the key
        impossible (the message names them).
    rowvoi.errors.RangeError
        A non-greedy strategy on more pairs than the explicit universe holds.

    Notes
    -----
    Thread-safety: no state is shared between calls; concurrent calls on
    one cluster are independent.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> from rowvoi.dask import find_key
    >>> df = pd.DataFrame({"name": ["Ann", "Ann", "Bob", "Bob"],
    ...                    "city": ["Oslo", "Rome", "Oslo", "Rome"],
    ...                    "age": [30, 30, 30, 41]})
    >>> find_key(dd.from_pandas(df, npartitions=2), scheduler="synchronous")
    ['name', 'city']
    """
    _v.strategy(strategy)  # raises for an unknown name; returns it unchanged
    eps = _v.fraction("epsilon_pairs", epsilon_pairs)
    tl = _v.time_limit(time_limit)
    _v.seed("seed", seed)
    pb = _Problem(ddf, rows, columns, costs, Runner(scheduler, progress, tl))
    if strategy != "greedy":
        df = _collect(pb, f"strategy {strategy!r}")
        labels = list(df.index) if pb.rows is None else list(pb.rows)
        return _mem.find_key(
            df,
            labels,
            columns=pb.columns,
            costs=dict(zip(pb.columns, pb.costs)),
            strategy=strategy,
            epsilon_pairs=eps,
            time_limit=time_limit,
            seed=seed,
        )
    return _solution(pb, _greedy(pb, entropy=False, eps=eps), eps)


def _solution(pb: _Problem, run: _Run, eps: float) -> CoverSolution:
    n = _pairs(run.n_rows)
    if n == 0 and not run.timed_out:
        return CoverSolution([], strategy="greedy", optimal=True)
    allowed = n - required_count(n, eps)
    if run.timed_out:
        _timeout_warning(run)
    elif run.left > allowed:
        raise ValueError(_mem.duplicates_message(run.left, _duplicate_groups(pb, run)))
    order = np.asarray(run.order, dtype=np.int64)
    cost = float(pb.costs[order].sum()) if len(order) else 0.0
    return CoverSolution(
        [pb.columns[i] for i in run.order],
        strategy="greedy",
        cost=cost,
        covered=n - run.left,
        total=n,
        timed_out=run.timed_out,
    )


def plan_key_path(
    ddf: Any,
    rows: Sequence[Hashable] | None = None,
    *,
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    objective: Literal["pair_coverage", "entropy"] = "pair_coverage",
    weighting: Literal["uniform", "pair_idf"] = "uniform",
    time_limit: float | None = None,
    scheduler: Any = None,
    progress: bool = False,
) -> _mem.KeyPath:
    """Plan a greedy path of columns over a Dask frame.

    The Dask twin of :func:`rowvoi.keys.plan_key_path`: same steps (columns,
    newly covered pairs, costs, weighted gains) on any table both can hold.
    ``weighting="uniform"`` (either objective) runs on the cluster at any
    size. ``weighting="pair_idf"`` weighs each pair by how many columns
    separate it, which needs every pair explicitly: the candidate rows are
    collected and planned in memory when their pairs fit
    :data:`rowvoi.keys.MAX_EXPLICIT_PAIRS`, else
    :class:`rowvoi.errors.RangeError`.

    Parameters
    ----------
    ddf, rows, columns, costs, time_limit, scheduler, progress
        As in :func:`find_key`; a run stopped by ``time_limit`` returns the
        steps so far and warns (:class:`rowvoi.errors.NotProvenOptimalWarning`).
    objective, weighting
        As in :func:`rowvoi.keys.plan_key_path`. With ``objective="entropy"``
        the gains are sums of ``c log2 c`` added in another order than in
        memory: equal up to rounding (relative 1e-12), so the path is the
        same unless two columns' gains differ by less than that.

    Returns
    -------
    KeyPath

    Notes
    -----
    Thread-safety: keeps no state between calls; concurrent calls (on one
    cluster or several) are independent.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> from rowvoi.dask import plan_key_path
    >>> df = pd.DataFrame({"a": [1, 1, 2, 2], "b": [1, 2, 3, 4]})
    >>> path = plan_key_path(dd.from_pandas(df, npartitions=2), scheduler="synchronous")
    >>> [(s.col, s.newly_covered_pairs) for s in path.steps]
    [('b', 6)]
    """
    _mem.check_path_options(objective, weighting)
    tl = _v.time_limit(time_limit)
    pb = _Problem(ddf, rows, columns, costs, Runner(scheduler, progress, tl))
    if weighting != "uniform":
        df = _collect(pb, "weighting='pair_idf'")
        labels = list(df.index) if pb.rows is None else list(pb.rows)
        return _mem.plan_key_path(
            df,
            labels,
            columns=pb.columns,
            costs=dict(zip(pb.columns, pb.costs)),
            objective=objective,
            weighting=weighting,
        )
    entropy = objective == "entropy"
    run = _greedy(pb, entropy=entropy, eps=0.0)
    if run.timed_out:
        _timeout_warning(run)
    n = _pairs(run.n_rows)
    if n == 0:
        return _mem.KeyPath([])
    return _mem.build_path(
        pb.columns, pb.costs, run.order, run.newly, run.gains if entropy else None, n
    )
