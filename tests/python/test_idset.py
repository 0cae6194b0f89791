"""IdSet: membership against a Python set, construction errors, and the
C set's lifetime behind the capsules handed to the kernels."""

import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.index.idset import MAX_ID, IdSet, as_idset

ids = st.lists(st.integers(0, MAX_ID) | st.integers(0, 50), max_size=200)


@settings(max_examples=100, deadline=None)
@given(ids, st.lists(st.integers(0, MAX_ID) | st.integers(0, 60), max_size=50))
def test_membership_matches_a_python_set(values, probes):
    s = IdSet(values)
    ref = set(values)
    assert len(s) == len(ref)
    assert s.to_numpy().tolist() == sorted(ref)
    assert list(s) == sorted(ref)
    for p in probes + values:
        assert (p in s) == (p in ref)
    assert s.as_frozenset() == frozenset(ref)
    assert s == IdSet(sorted(ref, reverse=True))


def test_inputs_and_errors():
    assert len(IdSet()) == 0 and 0 not in IdSet()
    assert len(IdSet(np.arange(10, dtype=np.uint8))) == 10
    assert len(IdSet(range(100_000))) == 100_000
    assert len(IdSet({3, 4})) == 2 and len(IdSet(x for x in (1, 1, 2))) == 2
    assert IdSet(7).to_numpy().tolist() == [7]
    assert -1 not in IdSet([1]) and "1" not in IdSet([1]) and True not in IdSet([1])
    with pytest.raises(ValueError, match=r"ids contains -3: ids must be in 0 \.\."):
        IdSet([1, -3])
    with pytest.raises(ValueError, match="ids must be in"):
        IdSet(np.array([2**63], dtype=np.uint64))
    with pytest.raises(TypeError, match="integers"):
        IdSet([1.5])
    with pytest.raises(TypeError, match="iterable of integer ids"):
        IdSet("123")
    with pytest.raises(TypeError, match="iterable of integer ids"):
        IdSet(None)
    with pytest.raises(TypeError):
        IdSet(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="filter contains -1"):
        as_idset([-1, 2])
    s = IdSet([5])
    assert as_idset(s) is s and as_idset(None) is None
    assert repr(IdSet(range(1, 7))) == "IdSet([1, 2, 3, 4, 5, ...], n=6)"
    assert hash(IdSet([1, 2])) == hash(IdSet([2, 1]))


def test_capsule_keeps_the_set_alive():
    from rowvoi.index.lexical import BM25Index

    ix = BM25Index()
    ix.add(["red apple", "green apple", "red car"])
    cap = IdSet([0, 2])._capsule()  # the IdSet itself is gone at once
    gc.collect()
    ids, _, stats = ix._core.search("red apple", 3, False, cap)
    assert ids.tolist() == [0, 2] and stats["filter_docs"] == 2
    del cap
    gc.collect()
