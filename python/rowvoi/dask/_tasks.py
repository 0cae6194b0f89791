"""The per-partition work of rowvoi.dask: module-level functions only.

Everything here runs on Dask workers (threads or processes, on this machine
or another), so it is plain functions of picklable arguments with no state
kept between calls; the C kernels they call release the GIL.

Two kinds of pass:

* **Value counts** (:func:`profile_part`, :func:`combine_buckets`,
  :func:`finish_bucket`): every partition counts the value keys of every
  column (weighted by the posterior when there is one) and splits the counts
  into buckets by key; the pieces of each bucket are merged in a tree. A
  key's bucket depends on the key alone, so the merged counts are exact.
* **Groups** (:func:`class_frame`, :func:`make_block`, :func:`block_step`):
  rows are shuffled so that every group of rows that agree on the chosen
  columns sits in one partition; each partition then scores its groups and
  splits them locally with the same kernels as the in-memory key finder.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

import rowvoi._setcover as _setcover

from ._values import merge_canon, value_keys

__all__ = [
    "profile_part",
    "combine_buckets",
    "finish_bucket",
    "combine_heads",
    "class_frame",
    "make_block",
    "block_step",
    "block_groups",
    "labels_at",
    "bucket_of",
    "posterior_weights",
    "filter_part",
    "match_mass",
]

_U32 = np.uint64(32)


def bucket_of(keys: np.ndarray, n_buckets: int) -> np.ndarray:
    """Bucket of hashed keys (their top bits scaled to n_buckets)."""
    if n_buckets <= 1:
        return np.zeros(len(keys), dtype=np.int64)
    top: np.ndarray = ((keys >> _U32) * np.uint64(n_buckets)) >> _U32
    return top.astype(np.int64)


def _select_rows(part: pd.DataFrame, rows: pd.Index | None) -> tuple[pd.DataFrame, Any]:
    """The candidate rows of a partition, and the labels it matched (rows given)."""
    if rows is None:
        return part, None
    mask = part.index.isin(rows)
    if mask.all():
        return part, part.index
    return part[mask], part.index[mask]


def posterior_weights(part: pd.DataFrame, col: Hashable) -> np.ndarray:
    """The posterior column as float64, checked: finite and >= 0."""
    w = pd.to_numeric(part[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"posterior column {col!r} has {part[col].iloc[i]!r} at row {part.index[i]!r}: "
            "posterior weights must be finite numbers >= 0"
        )
    return w


def profile_part(
    part: pd.DataFrame,
    columns: Sequence[Hashable],
    dtypes: Sequence[Any],
    seeds: Sequence[int],
    rows: pd.Index | None,
    n_buckets: int,
    posterior: Hashable | None,
) -> dict[str, Any]:
    """Count the value keys of every column of one partition.

    Returns {"head": {...}, "buckets": [bucket item, ...]} where a bucket
    item is {"cols": [(keys, counts, masses), ...], "canon": {j: (keys, texts)}}.
    """
    part, matched = _select_rows(part, rows)
    n = len(part)
    head: dict[str, Any] = {"n": n, "labels": None, "mass": 0.0, "wlogw": 0.0}
    if matched is not None and len(matched):
        vc = pd.Series(np.ones(len(matched), dtype=np.int64), index=matched)
        head["labels"] = vc.groupby(level=0, sort=False).sum()
    w = None
    if posterior is not None:
        w = posterior_weights(part, posterior)
        head["mass"] = math.fsum(w.tolist())
        pos = w[w > 0]
        head["wlogw"] = math.fsum((pos * np.log2(pos)).tolist())
    buckets: list[dict[str, Any]] = [{"cols": [], "canon": {}} for _ in range(n_buckets)]
    for j, (col, dtype, seed) in enumerate(zip(columns, dtypes, seeds)):
        keys, canon = value_keys(part[col], dtype, seed, col)
        uk, cnt, mass, off = _setcover.keys_count_values(keys, None, w, n_buckets)
        for b in range(n_buckets):
            a, z = int(off[b]), int(off[b + 1])
            buckets[b]["cols"].append((uk[a:z], cnt[a:z], None if mass is None else mass[a:z]))
        if canon is not None:
            ck, ct = canon
            cb = bucket_of(ck, n_buckets)
            for b in range(n_buckets):
                sel = cb == b
                buckets[b]["canon"][j] = (ck[sel], ct[sel])
    return {"head": head, "buckets": buckets}


def combine_heads(heads: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum partition headers (row counts, masses, matched labels)."""
    n = 0
    mass: list[float] = []
    wlogw: list[float] = []
    labels: list[pd.Series] = []
    for h in heads:
        n += h["n"]
        m = h["mass"]
        mass.extend(m if isinstance(m, list) else [m])
        m = h["wlogw"]
        wlogw.extend(m if isinstance(m, list) else [m])
        if h["labels"] is not None:
            labels.append(h["labels"])
    out: dict[str, Any] = {"n": n, "labels": None, "mass": mass, "wlogw": wlogw}
    if labels:
        s = pd.concat(labels)
        out["labels"] = s.groupby(level=0, sort=False).sum() if len(labels) > 1 else s
    return out


def combine_buckets(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Merge the pieces of one bucket: exact counts (and masses) per key."""
    items = [it for it in items if it is not None]
    if len(items) == 1 and items[0].get("merged"):
        return items[0]
    n_cols = len(items[0]["cols"]) if items else 0
    cols = []
    for j in range(n_cols):
        parts = [it["cols"][j] for it in items]
        keys = np.concatenate([p[0] for p in parts])
        cnts = np.concatenate([p[1] for p in parts])
        has_mass = parts[0][2] is not None
        mass = np.concatenate([p[2] for p in parts]) if has_mass else None
        uk, cnt, m, _ = _setcover.keys_count_values(keys, cnts, mass, 1)
        cols.append((uk, cnt, m))
    canon: dict[int, tuple[Any, ...]] = {}
    clashes: dict[int, tuple[Any, ...]] = {}
    for it in items:
        clashes.update(it.get("clashes", {}))
    for j in sorted({j for it in items for j in it["canon"]}):
        k, t, clash = merge_canon([it["canon"].get(j) for it in items])
        canon[j] = (k, t)
        if clash is not None and j not in clashes:
            clashes[j] = clash
    return {"cols": cols, "canon": canon, "clashes": clashes, "merged": True}


def _xlog2x(c: np.ndarray) -> list[float]:
    c = c[c >= 2].astype(np.float64)
    terms: list[float] = (c * np.log2(c)).tolist()
    return terms


def finish_bucket(item: dict[str, Any] | None, n_cols: int, dict_limit: int = 0) -> dict[str, Any]:
    """Per-column sums of one merged bucket: pairs that share a value, the
    sum of c log2 c over values, distinct values; and, for columns with at
    most dict_limit distinct values here, the (keys, counts) themselves."""
    same = [0] * n_cols
    nlogn = [0.0] * n_cols
    distinct = [0] * n_cols
    keys: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n_cols
    if item is None:
        return {
            "same": same,
            "nlogn": nlogn,
            "distinct": distinct,
            "clashes": {},
            "keys": [(np.zeros(0, np.uint64), np.zeros(0, np.uint64))] * n_cols,
        }
    for j, (k, cnt, _) in enumerate(item["cols"]):
        c = cnt.astype(np.uint64)
        same[j] = (
            int(np.sum(c * (c - np.uint64(1)) // np.uint64(2), dtype=np.uint64)) if len(c) else 0
        )
        nlogn[j] = math.fsum(_xlog2x(cnt))
        distinct[j] = len(cnt)
        if len(cnt) <= dict_limit:
            keys[j] = (k, cnt)
    return {
        "same": same,
        "nlogn": nlogn,
        "distinct": distinct,
        "clashes": dict(item.get("clashes", {})),
        "keys": keys,
    }


# ------------------------------------------------------------------ groups
def class_frame(
    part: pd.DataFrame,
    key_col: Hashable,
    key_dtype: Any,
    key_seed: int,
    key_coder: Any,
    key_counts: np.ndarray | None,
    cand: Sequence[tuple[int, Hashable, Any, int]],
    coders: Sequence[Any],
    rows: pd.Index | None,
    rows_order: bool,
    partition_info: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Rows ready for the shuffle, as integers only.

    ``__rv_cls`` is the row's group: its code (:func:`encode_keys`) or value
    key in the first chosen column; ``__rv_ord`` its order key (position in
    ``rows`` when rows are given -- the in-memory order -- else
    ``partition << 40 | position``); ``__rv_c{j}`` candidate column j, coded
    the same way. Rows alone in their group in the whole table (known from
    the first pass's counts, ``key_counts[code]``) are settled and left out.
    """
    part, _ = _select_rows(part, rows)
    keys, _ = value_keys(part[key_col], key_dtype, key_seed, key_col)
    cls = encode_keys(keys, key_coder)
    if rows_order:
        if rows is None:
            raise ValueError("rows_order needs the candidate rows")
        order = rows.get_indexer(part.index).astype(np.int64)
    else:
        number = int(partition_info["number"]) if partition_info else 0
        order = (np.int64(number) << np.int64(40)) + np.arange(len(part), dtype=np.int64)
    keep = None
    if key_counts is not None and len(cls):
        keep = key_counts[cls] >= 2
        if keep.all():
            keep = None
    data = {"__rv_cls": cls, "__rv_ord": order}
    for (j, col, dtype, seed), coder in zip(cand, coders):
        keys, _ = value_keys(part[col], dtype, seed, col)
        data[f"__rv_c{j}"] = encode_keys(keys, coder)
    out: pd.DataFrame = pd.DataFrame(data, index=pd.RangeIndex(len(part)))
    return out if keep is None else out[keep].reset_index(drop=True)


def encode_keys(keys: np.ndarray, coder: Any) -> np.ndarray:
    """Value keys -> small global codes with one of the first pass's coders:
    ("offset", lo, k): integer values lo .. lo + k - 1, code = value - lo;
    ("dict", sorted keys): code = position in the dictionary;
    None: the keys themselves."""
    if coder is None:
        return keys
    if coder[0] == "offset":
        _, lo, k, signed = coder
        vals = keys.view(np.int64) if signed else keys
        return _compact_to(vals - vals.dtype.type(lo), k)
    d = coder[1]
    # Look up each distinct key once: the dictionary can be large and the
    # keys are in no order, so a lookup per cell would miss the cache.
    local, uniq = pd.factorize(keys)
    return _compact_to(np.searchsorted(d, uniq)[local], len(d))


def _compact_to(codes: np.ndarray, k: int) -> np.ndarray:
    if k <= 256:
        return codes.astype(np.uint8)
    if k <= 65536:
        return codes.astype(np.uint16)
    return codes.astype(np.int32)


def make_block(part: pd.DataFrame, ids: Sequence[int], coded: Sequence[bool]) -> dict[str, Any]:
    """Group a shuffled partition by its group key; keep the groups of two
    or more rows (the others are settled). Columns with a dictionary arrive
    as codes; the others (value keys) are numbered here, which is enough
    since codes are compared only inside this partition."""
    cls = part["__rv_cls"].to_numpy()
    ordv = part["__rv_ord"].to_numpy(dtype=np.int64)
    order = np.argsort(cls, kind="stable")
    cs = cls[order]
    if len(cs):
        starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
        lens = np.diff(np.r_[starts, len(cs)])
    else:
        lens = np.zeros(0, dtype=np.int64)
    keep_run = lens >= 2
    sel = order[np.repeat(keep_run, lens)]
    offsets = np.r_[0, np.cumsum(lens[keep_run])].astype(np.uint64)
    codes = []
    for j, is_coded in zip(ids, coded):
        v = part[f"__rv_c{j}"].to_numpy()[sel]
        if not is_coded:
            local, uniq = pd.factorize(v)
            v = _compact_to(np.asarray(local), len(uniq))
        codes.append(v)
    return {"ids": list(ids), "codes": codes, "offsets": offsets, "ord": ordv[sel]}


def block_step(
    block: dict[str, Any], chosen: int | None, drop: Sequence[int], entropy: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split the block's groups by the chosen column (if any), drop columns
    that no longer matter, and score every remaining column.

    Returns (new block, {"ids", "resolved", "entropy", "rows", "groups"}).
    """
    ids, codes, offsets, ordv = block["ids"], block["codes"], block["offsets"], block["ord"]
    gone = set(drop)
    if chosen is not None:
        gone.add(chosen)
        code = codes[ids.index(chosen)].astype(np.int32)
        rows, offsets = _setcover.keys_group_refine(code, offsets)
        keep = [(i, c[rows]) for i, c in zip(ids, codes) if i not in gone]
        ordv = ordv[rows]
    else:
        keep = [(i, c) for i, c in zip(ids, codes) if i not in gone]
    ids = [i for i, _ in keep]
    codes = [c for _, c in keep]
    n = len(ordv)
    if codes and n:
        mat = np.empty((len(codes), n), dtype=np.int32)
        for r, c in enumerate(codes):
            mat[r] = c
        resolved, ent = _setcover.keys_group_scores(mat, offsets, entropy)
    else:
        resolved = np.zeros(len(codes), dtype=np.uint64)
        ent = np.zeros(len(codes)) if entropy else None
    new = {"ids": ids, "codes": codes, "offsets": offsets, "ord": ordv}
    stats = {
        "ids": ids,
        "resolved": resolved,
        "entropy": ent,
        "rows": n,
        "groups": max(len(offsets) - 1, 0),
    }
    return new, stats


def block_groups(block: dict[str, Any], n_groups: int, n_rows: int) -> list[tuple[int, list[int]]]:
    """The block's first n_groups groups by smallest order key, each as
    (smallest order key, its first n_rows order keys)."""
    offsets = block["offsets"].astype(np.int64)
    ordv = block["ord"]
    if len(offsets) < 2:
        return []
    starts = offsets[:-1]
    mins = np.minimum.reduceat(ordv, starts)
    out = []
    for g in np.argsort(mins, kind="stable")[:n_groups]:
        members = np.sort(ordv[offsets[g] : offsets[g + 1]])[:n_rows]
        out.append((int(mins[g]), members.tolist()))
    return out


def labels_at(part: pd.DataFrame, positions: Sequence[int]) -> list[Hashable]:
    """Index labels of a partition at the given positions."""
    labels: list[Hashable] = part.index[list(positions)].tolist()
    return labels


# ------------------------------------------------------------------ belief
def match_mass(
    part: pd.DataFrame, col: Hashable, value: Any, posterior: Hashable | None
) -> tuple[float, int]:
    """(posterior mass, rows) of the rows whose cell equals value."""
    mask = _match(part, col, value)
    if posterior is None:
        return 0.0, int(mask.sum())
    w = posterior_weights(part, posterior)
    return math.fsum(w[mask].tolist()), int(mask.sum())


def _match(part: pd.DataFrame, col: Hashable, value: Any) -> np.ndarray:
    from rowvoi import _candidates

    enc = _candidates.encode_values(part[col], col)
    code = enc.code_of(value)
    if code is None:
        return np.zeros(len(part), dtype=bool)
    mask: np.ndarray = enc.codes == code
    return mask


def filter_part(
    part: pd.DataFrame, col: Hashable, value: Any, posterior: Hashable | None, total: Any = None
) -> pd.DataFrame:
    """The rows whose cell equals value, posterior renormalised by total."""
    out: pd.DataFrame = part[_match(part, col, value)]
    if posterior is None:
        return out
    mass, _ = total
    if not mass > 0:
        empty: pd.DataFrame = out.iloc[:0]
        return empty
    out = out.copy()
    out[posterior] = posterior_weights(out, posterior) / mass
    return out
