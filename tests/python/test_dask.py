"""rowvoi.dask against the in-memory functions it twins.

Random tables (hypothesis: sizes, partitions of uneven size including empty
ones and a single one, NaN/None, categorical, numeric, string and mixed
object columns) must give the in-memory answers: the same key, the same
path steps, the same errors, information gain within 1e-12 bits. A small
2-worker LocalCluster with processes runs the same comparisons across
process boundaries.
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from rowvoi import (  # noqa: E402
    CandidateState,
    _belief,
    _candidates,
    keys as mem,
)
from rowvoi.dask import (  # noqa: E402
    _values,
    filter_candidates,
    find_key,
    plan_key_path,
    question_values,
    suggest,
)
from rowvoi.errors import NotProvenOptimalWarning, RangeError  # noqa: E402
from rowvoi.frame import UnknownLabelError  # noqa: E402
from rowvoi.policies import CandidateMIPolicy  # noqa: E402

SYNC = "synchronous"


@pytest.fixture(autouse=True)
def _keep_object_columns():
    """Dask turns object columns into strings by default ("1" and 1 and 1.0
    would all become text); keep the values the pandas frame holds."""
    import dask

    with dask.config.set({"dataframe.convert-string": False}):
        yield


def _piece(p):
    return p


def split(df: pd.DataFrame, sizes: list[int]):
    """A Dask frame whose partitions have exactly these sizes (zeros allowed)."""
    bounds = np.r_[0, np.cumsum(sizes)]
    pieces = [df.iloc[a:b] for a, b in itertools.pairwise(bounds)]
    return dd.from_map(_piece, pieces, meta=df.iloc[:0])


def _column(kind: str, vals: list[int]) -> object:
    if kind == "int":
        return np.array(vals, dtype=np.int64)
    if kind == "uint8":
        return np.array(vals, dtype=np.uint8)
    if kind == "float":  # NaN and -0.0 among the values
        return np.array([np.nan if v == 0 else -0.0 if v == 1 else v / 2 for v in vals])
    if kind == "str":
        return pd.array([None if v == 0 else f"s{v}" for v in vals], dtype="str")
    if kind == "cat":
        return pd.Categorical([None if v == 0 else f"c{v}" for v in vals])
    if kind == "obj":  # 1 == 1.0 == True in pandas; "1" is another value
        pool = [None, 1, 1.0, "1", True, (1, 2), float("nan"), 2.5]
        # filled item by item: np.array(list, dtype=object) of nothing but
        # the tuple would be 2-D
        col = np.empty(len(vals), dtype=object)
        for i, v in enumerate(vals):
            col[i] = pool[v % len(pool)]
        return col
    if kind == "bool":
        return np.array([v % 2 == 0 for v in vals])
    if kind == "Int64":
        return pd.array([pd.NA if v == 0 else v for v in vals], dtype="Int64")
    if kind == "date":
        return pd.to_datetime([None if v == 0 else f"2024-01-0{v}" for v in vals])
    raise AssertionError(kind)


def test_object_column_of_tuples_only_stays_one_column():
    """The generator's object column when every value is the tuple (a draw
    that once made a 2-D array, which pandas rejects)."""
    col = _column("obj", [5, 5, 5])
    assert col.shape == (3,) and col[0] == (1, 2)
    assert pd.DataFrame({"obj0": col}).shape == (3, 1)


KINDS = ["int", "uint8", "float", "str", "cat", "obj", "bool", "Int64", "date"]


@st.composite
def tables(draw, max_rows: int = 40):
    n = draw(st.integers(0, max_rows))
    m = draw(st.integers(1, 4))
    data = {}
    for j in range(m):
        kind = draw(st.sampled_from(KINDS))
        card = draw(st.integers(1, 6))
        vals = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
        data[f"{kind}{j}"] = _column(kind, vals)
    labels = draw(st.sampled_from(["range", "str"]))
    index = pd.RangeIndex(n) if labels == "range" else pd.Index([f"r{i}" for i in range(n)])
    df = pd.DataFrame(data, index=index)
    n_parts = draw(st.integers(1, 5))
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=n_parts - 1, max_size=n_parts - 1)))
    sizes = list(np.diff([0, *cuts, n]))
    return df, sizes


def _outcome(fn, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        return type(exc).__name__, str(exc)


def _same_solution(a, b) -> None:
    assert a[0] == b[0], (a, b)
    if a[0] != "ok":
        assert a[1] == b[1]
        return
    x, y = a[1], b[1]
    assert list(x) == list(y)
    assert (x.cost, x.covered, x.total, x.strategy) == (y.cost, y.covered, y.total, y.strategy)


def _steps(path) -> list:
    return [
        (
            s.col,
            s.newly_covered_pairs,
            s.cumulative_covered_pairs,
            s.total_pairs,
            s.marginal_cost,
            s.cumulative_cost,
        )
        for s in path.steps
    ]


def _same_path(a, b) -> None:
    assert _steps(a) == _steps(b)
    for s, t in zip(a.steps, b.steps):
        if s.newly_covered_weight is None:
            assert t.newly_covered_weight is None
        else:
            assert t.newly_covered_weight == pytest.approx(
                s.newly_covered_weight, rel=1e-9, abs=1e-9
            )


# ------------------------------------------------------------------ keys
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.data())
def test_find_key_matches_memory(table, data):
    df, sizes = table
    ddf = split(df, sizes)
    cols = list(df.columns)
    costs = {c: data.draw(st.sampled_from([1.0, 0.5, 2.0, 3.0])) for c in cols}
    eps = data.draw(st.sampled_from([0.0, 0.0, 0.1, 0.5]))
    rows = None
    if len(df) and data.draw(st.booleans()):
        rows = data.draw(st.permutations(list(df.index)))[: data.draw(st.integers(0, len(df)))]
    want = _outcome(
        mem.find_key, df, rows if rows is not None else None, costs=costs, epsilon_pairs=eps
    )
    got = _outcome(find_key, ddf, rows, costs=costs, epsilon_pairs=eps, scheduler=SYNC)
    _same_solution(want, got)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.sampled_from(["pair_coverage", "entropy"]), st.booleans())
def test_plan_key_path_matches_memory(table, objective, with_costs):
    df, sizes = table
    ddf = split(df, sizes)
    costs = {c: 1.0 + (i % 3) for i, c in enumerate(df.columns)} if with_costs else None
    want = mem.plan_key_path(df, None, costs=costs, objective=objective)
    got = plan_key_path(ddf, costs=costs, objective=objective, scheduler=SYNC)
    _same_path(want, got)


def test_larger_table_many_partitions_matches_memory():
    rng = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 40, n),
            "b": rng.integers(0, 300, n),
            "c": rng.choice(["x", "y", None], n),
            "d": rng.integers(0, 5, n).astype(float),
            "e": np.arange(n) % 7,
        }
    )
    sizes = [0, 700, 1, 0, 900, 1399, 1]
    ddf = split(df, sizes)
    want = _outcome(mem.find_key, df, None)
    assert want[0] == "ValueError" and "duplicate rows: 85, 1744; 451, 1207" in want[1]
    _same_solution(want, _outcome(find_key, ddf, scheduler=SYNC))
    _same_solution(
        ("ok", mem.find_key(df, None, epsilon_pairs=0.01)),
        ("ok", find_key(ddf, epsilon_pairs=0.01, scheduler="threads")),
    )
    _same_path(
        mem.plan_key_path(df, None, objective="entropy"),
        plan_key_path(ddf, objective="entropy", scheduler="threads"),
    )
    rows = [int(r) for r in rng.permutation(n)[:500]]
    _same_solution(_outcome(mem.find_key, df, rows), _outcome(find_key, ddf, rows, scheduler=SYNC))
    one = split(df, [n])
    _same_path(mem.plan_key_path(df, None), plan_key_path(one, scheduler=SYNC))


def test_duplicate_rows_error_names_them_like_memory():
    df = pd.DataFrame(
        {"a": [1, 2, 1, 3, 2, 1], "b": ["x", "y", "x", "z", "y", "x"]}, index=list("pqrstu")
    )
    for sizes in ([6], [2, 0, 4], [1, 1, 1, 1, 1, 1]):
        ddf = split(df, sizes)
        with pytest.raises(ValueError) as want:
            mem.find_key(df, None)
        with pytest.raises(ValueError) as got:
            find_key(ddf, scheduler=SYNC)
        assert str(got.value) == str(want.value)
        assert "'p', 'r', 'u'" in str(got.value)
        rows = ["u", "q", "p", "t", "s"]
        with pytest.raises(ValueError) as want:
            mem.find_key(df, rows)
        with pytest.raises(ValueError) as got:
            find_key(ddf, rows, scheduler=SYNC)
        assert str(got.value) == str(want.value)
    # every row identical: no column splits anything
    same = pd.DataFrame({"a": [1] * 4, "b": ["x"] * 4})
    with pytest.raises(ValueError) as want:
        mem.find_key(same, None)
    with pytest.raises(ValueError) as got:
        find_key(split(same, [3, 1]), scheduler=SYNC)
    assert str(got.value) == str(want.value)


def test_non_greedy_strategies_and_idf_collect_small_tables(monkeypatch):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({c: rng.integers(0, 4, 40) for c in "abcdef"})
    ddf = split(df, [10, 0, 30])
    for strategy in ("exact", "ilp"):
        want = mem.find_key(df, None, strategy=strategy)
        got = find_key(ddf, strategy=strategy, scheduler=SYNC)
        assert sorted(got) == sorted(want) and got.cost == want.cost and got.optimal
    _same_path(
        mem.plan_key_path(df, None, weighting="pair_idf"),
        plan_key_path(ddf, weighting="pair_idf", scheduler=SYNC),
    )
    monkeypatch.setattr(mem, "MAX_EXPLICIT_PAIRS", 100)
    with pytest.raises(RangeError, match="explicit universe"):
        plan_key_path(ddf, weighting="pair_idf", scheduler=SYNC)
    with pytest.raises(RangeError, match="explicit universe"):
        find_key(ddf, list(range(20)), strategy="exact", scheduler=SYNC)


def test_bad_arguments_raise_like_memory():
    df = pd.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]}, index=["x", "y", "z"])
    ddf = split(df, [1, 2])
    with pytest.raises(TypeError, match=r"dask\.dataframe\.DataFrame"):
        find_key(df)
    with pytest.raises(UnknownLabelError, match="'w'"):
        find_key(ddf, ["x", "w"], scheduler=SYNC)
    with pytest.raises(ValueError, match="more than once"):
        find_key(ddf, ["x", "x"], scheduler=SYNC)
    with pytest.raises(ValueError, match="costs must be finite and >= 0"):
        find_key(ddf, costs={"a": -1}, scheduler=SYNC)
    with pytest.raises(UnknownLabelError):
        plan_key_path(ddf, columns=["zz"], scheduler=SYNC)
    with pytest.raises(ValueError, match="Unknown strategy"):
        find_key(ddf, strategy="magic", scheduler=SYNC)
    with pytest.raises(ValueError, match="unknown objective"):
        plan_key_path(ddf, objective="magic", scheduler=SYNC)
    with pytest.raises(ValueError, match="unknown scheduler"):
        find_key(ddf, scheduler="gpu")
    # a label that matches two rows (the partitions repeat their index)
    twice = split(pd.concat([df, df]), [3, 3])
    with pytest.raises(ValueError, match="duplicate labels"):
        find_key(twice, ["x"], scheduler=SYNC)
    # rows=None does not need a unique index
    assert list(find_key(split(pd.DataFrame({"a": [1, 2, 3, 4]}), [2, 2]), scheduler=SYNC)) == [
        "a"
    ]


def _slow(p):
    time.sleep(0.4)
    return p


def test_time_limit_returns_flagged_prefix():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 3, 200),
            "b": rng.integers(0, 3, 200),
            "c": np.arange(200) % 11,
            "d": np.arange(200),
        }
    )
    ddf = split(df, [100, 100]).map_partitions(_slow, meta=df.iloc[:0])
    with pytest.warns(NotProvenOptimalWarning, match="time limit"):
        res = find_key(ddf, columns=["a", "b", "c"], time_limit=0.3, scheduler=SYNC)
    assert res.timed_out and len(res) == 1 and res.covered < res.total
    cols = ["a", "b", "c"]
    assert res[0] == mem.plan_key_path(df, None, columns=cols).columns()[0]
    with pytest.warns(NotProvenOptimalWarning):
        part = plan_key_path(ddf, columns=cols, time_limit=0.3, scheduler=SYNC)
    assert len(part.steps) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = plan_key_path(split(df, [100, 100]), columns=cols, time_limit=60, scheduler=SYNC)
    _same_path(mem.plan_key_path(df, None, columns=cols), full)


def test_hash_collisions_are_detected_and_rehashed(monkeypatch):
    real = _values._hash_texts
    seeds = []

    def weak(texts, seed):
        seeds.append(seed)
        out = real(texts, seed)
        return out & np.uint64(1) if seed == 0 else out  # seed 0: 2 keys for everything

    monkeypatch.setattr(_values, "_hash_texts", weak)
    df = pd.DataFrame({"s": ["a", "b", "c", "d", "a", "b"], "t": ["x", "y", "x", "y", "y", "x"]})
    ddf = split(df, [2, 4])
    _same_solution(("ok", mem.find_key(df, None)), ("ok", find_key(ddf, scheduler=SYNC)))
    assert 0 in seeds and 1 in seeds
    post = [0.1, 0.2, 0.3, 0.1, 0.2, 0.1]
    got = question_values(split(df.assign(p=post), [2, 4]), "p", scheduler=SYNC)
    want = _mi(df, ["s", "t"], np.array(post), 0.0)
    assert got["s"] == pytest.approx(want[0], abs=1e-12)


def test_canonical_values_follow_pandas_equality():
    c = _values.canonical
    assert c(1) == c(1.0) == c(True) == c(np.int8(1)) == c(np.float32(1.0))
    assert c("1") != c(1) and c(0.5) != c("0.5") and c((1, 2)) == c((1.0, 2))
    from decimal import Decimal

    assert c(Decimal("1.5")) == c(1.5) and c(Decimal("0.1")) != c(0.1)
    assert c(pd.Timestamp("2024-01-01")) == c(pd.Timestamp("2024-01-01").to_pydatetime())
    assert c(pd.Timestamp("2024-01-01", tz="UTC")) == c(
        pd.Timestamp("2024-01-01 01:00", tz="Europe/Paris")
    )


def test_progress_bar_on_stderr(capsys):
    df = pd.DataFrame({"a": [1, 1, 2, 2, 3], "b": [1, 2, 1, 2, 1], "c": [0, 0, 0, 1, 1]})
    ddf = split(df, [2, 3])
    res = find_key(ddf, scheduler="threads", progress=True)
    err = capsys.readouterr().err
    assert "rowvoi.dask: pass 1" in err and "100% Completed" in err
    assert list(res) == list(mem.find_key(df, None))


# ---------------------------------------------------------------- belief
def _mi(df: pd.DataFrame, cols: list, post: np.ndarray, noise: float) -> np.ndarray:
    codes = _candidates.encode_columns_at(df, cols, np.arange(len(df)))
    return _belief.mutual_information(codes, None, post, noise)["mi"]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.data())
def test_question_values_and_suggest_match_memory(table, data):
    df, sizes = table
    if len(df) == 0:
        with pytest.raises(ValueError, match="no rows"):
            question_values(split(df, sizes), scheduler=SYNC)
        return
    cols = list(df.columns)
    weights = np.array(
        data.draw(
            st.lists(
                st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.25]), min_size=len(df), max_size=len(df)
            )
        )
    )
    if weights.sum() == 0:
        weights[0] = 1.0
    noise = data.draw(st.sampled_from([0.0, 0.0, 0.2]))
    ddf = split(df.assign(post=weights), sizes)
    got = question_values(ddf, "post", noise=noise, scheduler=SYNC)
    want = _mi(df, cols, weights, noise)
    assert list(got) == cols
    for c, w in zip(cols, want):
        assert abs(got[c] - w) <= 1e-12
    uni = question_values(split(df, sizes), scheduler=SYNC)
    for c, w in zip(cols, _mi(df, cols, np.ones(len(df)), 0.0)):
        assert abs(uni[c] - w) <= 1e-12
    costs = {c: data.draw(st.sampled_from([1.0, 2.0, 0.5])) for c in cols}
    normalize = data.draw(st.booleans())
    state = CandidateState(list(df.index), weights / weights.sum())
    s_mem = CandidateMIPolicy(normalize=normalize, costs=costs).suggest(df, state)
    s_dd = suggest(ddf, "post", costs=costs, normalize=normalize, scheduler=SYNC)
    assert s_dd.col == s_mem.col
    assert s_dd.score == pytest.approx(s_mem.score, rel=1e-9, abs=1e-12)
    assert s_dd.expected_voi == pytest.approx(s_mem.expected_voi, abs=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(max_rows=25), st.data())
def test_filter_candidates_matches_memory(table, data):
    df, sizes = table
    if len(df) == 0:
        return
    col = data.draw(st.sampled_from(list(df.columns)))
    value = df[col].iloc[data.draw(st.integers(0, len(df) - 1))]
    weights = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 1.0, 3.0]), min_size=len(df), max_size=len(df)))
    )
    if weights.sum() == 0:
        weights[-1] = 1.0
    state = CandidateState(list(df.index), weights / weights.sum())
    want = state.filter_candidates(df, col, value)
    got = filter_candidates(split(df.assign(post=weights), sizes), col, value, "post").compute(
        scheduler=SYNC
    )
    assert list(got.index) == list(want.candidate_rows)
    np.testing.assert_allclose(
        got["post"].to_numpy(dtype=float), want.posterior, rtol=1e-12, atol=1e-15
    )
    plain = filter_candidates(split(df, sizes), col, value).compute(scheduler=SYNC)
    mask = _candidates.encode_values(df[col], col)
    code = mask.code_of(value)
    assert list(plain.index) == [r for r, k in zip(df.index, mask.codes) if k == code]


def test_belief_bad_input():
    df = pd.DataFrame({"a": [1, 2], "p": [0.5, np.nan]}, index=["x", "y"])
    with pytest.raises(ValueError, match="'y'"):
        question_values(split(df, [1, 1]), "p", scheduler=SYNC)
    with pytest.raises(ValueError, match="sums to 0"):
        question_values(split(df.assign(p=[0.0, 0.0]), [2]), "p", scheduler=SYNC)
    with pytest.raises(ValueError, match="noise"):
        question_values(split(df, [2]), noise=1.0, scheduler=SYNC)
    with pytest.raises(UnknownLabelError):
        filter_candidates(split(df, [2]), "zz", 1)
    s = suggest(split(df.iloc[:1], [1]), scheduler=SYNC)  # one row: nothing to learn
    assert s.col == df.columns[0] and s.expected_voi == 0.0


# --------------------------------------------------------------- cluster
@pytest.fixture(scope="module")
def client(cluster_client):
    return cluster_client


@pytest.mark.xdist_group("dask-cluster")  # one LocalCluster (the module's client) per run
@pytest.mark.stress
def test_cluster_with_processes_matches_memory(client):
    rng = np.random.default_rng(11)
    n = 2000
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 30, n),
            "b": rng.choice(["u", "v", None], n),
            "c": rng.integers(0, 200, n).astype(float),
            "d": pd.Categorical(rng.choice(list("pqrs"), n)),
            "e": np.arange(n) % 13,
        },
        index=[f"r{i}" for i in range(n)],
    )
    ddf = split(df, [500, 0, 1, 999, 500])
    want = _outcome(mem.find_key, df, None)
    assert want[0] == "ValueError"  # three pairs of duplicate rows, named
    _same_solution(want, _outcome(find_key, ddf, scheduler=client))
    _same_solution(
        ("ok", mem.find_key(df, None, epsilon_pairs=1e-5)),
        ("ok", find_key(ddf, epsilon_pairs=1e-5, scheduler=client)),
    )
    rows = [f"r{i}" for i in rng.permutation(n)[:300]]
    _same_solution(("ok", mem.find_key(df, rows)), ("ok", find_key(ddf, rows)))  # default client
    _same_path(
        mem.plan_key_path(df, None, objective="entropy"),
        plan_key_path(ddf, objective="entropy", scheduler=client),
    )
    post = rng.random(n)
    got = question_values(
        split(df.assign(p=post), [500, 0, 1, 999, 500]), "p", noise=0.1, scheduler=client
    )
    want = _mi(df, list(df.columns), post, 0.1)
    assert max(abs(got[c] - w) for c, w in zip(df.columns, want)) <= 1e-12
    state = CandidateState(list(df.index), post / post.sum())
    kept = state.filter_candidates(df, "b", "u")
    out = filter_candidates(
        split(df.assign(p=post), [500, 0, 1, 999, 500]), "b", "u", "p"
    ).compute()
    assert list(out.index) == kept.candidate_rows
    np.testing.assert_allclose(out["p"].to_numpy(), kept.posterior, rtol=1e-12)


@pytest.mark.xdist_group("dask-cluster")  # one LocalCluster (the module's client) per run
@pytest.mark.stress
def test_local_scheduler_while_a_client_exists(client):
    """scheduler="sync" (or "threads") with a distributed Client alive in the
    process: the shuffle runs by tasks on that local scheduler (Dask's
    default there would be p2p, which needs the client's workers)."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame({c: rng.integers(0, 4, 300) for c in "abcde"}).drop_duplicates()
    ddf = split(df, [100, 0, len(df) - 100])
    for sched in (SYNC, "threads"):
        _same_solution(("ok", mem.find_key(df, None)), ("ok", find_key(ddf, scheduler=sched)))


def _very_slow(p):
    time.sleep(6)
    return p


@pytest.mark.xdist_group("dask-cluster")  # one LocalCluster (the module's client) per run
@pytest.mark.stress
def test_cluster_time_limit_cancels_a_running_pass(client):
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": [1, 1, 2, 2]})
    ddf = split(df, [2, 2]).map_partitions(_very_slow, meta=df.iloc[:0])
    t0 = time.monotonic()
    with pytest.warns(NotProvenOptimalWarning):
        res = find_key(ddf, time_limit=0.5, scheduler=client)
    assert time.monotonic() - t0 < 4.5  # did not wait for the 6 s pass
    assert res.timed_out and list(res) == []


def test_free_columns_match_memory():
    rng = np.random.default_rng(11)
    df = pd.DataFrame({c: rng.integers(0, 3, 60) for c in "abcdef"}).drop_duplicates()
    costs = {"a": 0.0, "b": 2.0, "c": 0, "d": 1.0, "e": 3.0, "f": 1.0}
    ddf = split(df, [25, 0, 35])
    want = mem.find_key(df, None, costs=costs)
    got = find_key(ddf, costs=costs, scheduler=SYNC)
    assert list(got) == list(want) and got.cost == want.cost
    assert [c for c in got if costs[c] == 0] == list(got)[: sum(costs[c] == 0 for c in got)]
    _same_path(
        mem.plan_key_path(df, None, costs=costs),
        plan_key_path(ddf, costs=costs, scheduler=SYNC),
    )
    s = suggest(ddf, costs={"c": 0}, scheduler=SYNC)
    assert s.col == "c" and s.score == float("inf")
