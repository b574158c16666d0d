"""D(f) by the pruned search against an exhaustive unpruned search; known values; tree checker."""

import dataclasses
import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import commcomp.matrix.protocol_tree as protocol_tree
from commcomp.errors import TooLargeError
from commcomp.matrix import (ProtocolLeaf, ProtocolNode, check_certificate, deterministic_cc,
                             problem_matrix, rank_sum_bound, reduce_matrix, tree_depth)
from commcomp.problems import get_problem


def d_exhaustive(m):
    """Reference: every split of rows or columns of every sub-rectangle, no merging, no bounds."""
    m = np.asarray(m, dtype=bool)
    rows, cols = m.shape
    row_bits = [sum(1 << j for j in range(cols) if m[i, j]) for i in range(rows)]

    def mono(rm, cm):
        seen = set()
        for i in range(rows):
            if rm >> i & 1:
                x = row_bits[i] & cm
                if x not in (0, cm):
                    return False
                seen.add(x == cm)
        return len(seen) <= 1

    def splits(mask):  # proper subsets holding the lowest element
        low = mask & -mask
        rest = mask & ~low
        sub = rest
        while True:
            if low | sub != mask:
                yield low | sub
            if sub == 0:
                return
            sub = (sub - 1) & rest

    @lru_cache(maxsize=None)
    def fits(rm, cm, d):
        if mono(rm, cm):
            return True
        if d == 0:
            return False
        return (any(fits(s, cm, d - 1) and fits(rm & ~s, cm, d - 1) for s in splits(rm))
                or any(fits(rm, s, d - 1) and fits(rm, cm & ~s, d - 1) for s in splits(cm)))

    d = 0
    while not fits((1 << rows) - 1, (1 << cols) - 1, d):
        d += 1
    return d


# 8x8 matrices whose rank bound is below D: the search, not the bound, decides them
GAP_8x8 = [
    [[0, 0, 0, 1, 1, 0, 1, 1], [1, 0, 1, 0, 1, 1, 0, 0], [1, 0, 1, 0, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0, 1, 1],
     [0, 0, 0, 0, 0, 1, 0, 0], [1, 0, 1, 0, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 0, 1, 1]],
    [[0, 0, 0, 0, 0, 1, 0, 1], [0, 0, 1, 0, 1, 1, 0, 0], [1, 0, 1, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0],
     [1, 0, 1, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 1], [1, 0, 1, 0, 1, 1, 0, 1]],
]


@settings(max_examples=60, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 5), st.integers(1, 5))))
def test_against_exhaustive_search(m):
    res = deterministic_cc(m)
    assert res.deterministic_cc == d_exhaustive(m)
    assert tree_depth(res.tree) == res.deterministic_cc
    assert check_certificate(res, m)


def test_gap_cases_against_exhaustive_search():
    rng = np.random.default_rng(1)
    searched = 0
    while searched < 8:  # xor products of a few vectors often have rank bound < D
        k = int(rng.integers(2, 4))
        m = ((rng.random((6, k)) < 0.5).astype(int) @ (rng.random((k, 6)) < 0.5).astype(int)) % 2 == 1
        res = deterministic_cc(m)
        if res.lower_bound_by == "search":
            searched += 1
            assert res.deterministic_cc == d_exhaustive(m)
            assert check_certificate(res, m).status == "unverified"  # minimality: the search's word
    for rows in GAP_8x8:
        m = np.array(rows, dtype=bool)
        res = deterministic_cc(m)
        assert res.lower_bound_by == "search" and res.deterministic_cc > res.rank_bound
        assert res.deterministic_cc == d_exhaustive(m) == 4
        assert check_certificate(res, m).status == "unverified"


def test_random_8x8_against_exhaustive_search():
    rng = np.random.default_rng(8)
    for density in (0.2, 0.5):
        m = rng.random((8, 8)) < density
        assert deterministic_cc(m).deterministic_cc == d_exhaustive(m)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_known_values(n):
    for name in ("equality", "disjointness", "greater-than", "inner-product"):
        res = deterministic_cc(problem_matrix(name, n))
        assert res.deterministic_cc == n + 1, name
        assert res.deterministic_cc == get_problem(name).deterministic_bits(n)
        assert res.search_nodes == 0 and res.lower_bound_by == "rank"  # bounds meet: no search
    index = deterministic_cc(problem_matrix("index", n))
    assert index.deterministic_cc == math.ceil(math.log2(n)) + 1 == get_problem("index").deterministic_bits(n)


def test_random_32x32_is_solved():
    rng = np.random.default_rng(3)
    for density in (0.1, 0.5):
        m = rng.random((32, 32)) < density
        res = deterministic_cc(m)
        red = reduce_matrix(m)[0]
        assert res.deterministic_cc == rank_sum_bound(red) and check_certificate(res, m)


def test_budget_and_size_limits(monkeypatch):
    m = np.array(GAP_8x8[0], dtype=bool)
    with pytest.raises(TooLargeError, match="budget of 3 nodes"):
        deterministic_cc(m, max_nodes=3)
    with pytest.raises(TooLargeError, match="limit is 32"):
        deterministic_cc(problem_matrix("equality", 9))  # 512 > 256 on the smaller side
    monkeypatch.setattr(protocol_tree, "MAX_SIDE", 4)  # m reduces to 5x5 with a gap: no search
    with pytest.raises(TooLargeError, match="limited to 4"):
        deterministic_cc(m)
    assert deterministic_cc(problem_matrix("equality", 3)).deterministic_cc == 4  # bounds meet


@pytest.mark.parametrize("name, n, expected", [("equality", 8, 9), ("greater-than", 7, 8),
                                               ("index", 12, 5)])
def test_beyond_32_when_the_bounds_meet(name, n, expected):
    m = problem_matrix(name, n)
    res = deterministic_cc(m)
    assert res.deterministic_cc == expected == get_problem(name).deterministic_bits(n)
    assert check_certificate(res, m)


def test_tree_checker_rejects_tampering():
    m = problem_matrix("equality", 2)
    res = deterministic_cc(m)
    assert check_certificate(res, m)

    def flip_first_leaf(t):
        if isinstance(t, ProtocolLeaf):
            return ProtocolLeaf(not t.value)
        return dataclasses.replace(t, child0=flip_first_leaf(t.child0))

    for bad in (dataclasses.replace(res, tree=flip_first_leaf(res.tree)),
                dataclasses.replace(res, tree=dataclasses.replace(res.tree, zero=res.tree.zero ^ {0})),
                dataclasses.replace(res, deterministic_cc=res.deterministic_cc - 1),
                dataclasses.replace(res, tree=ProtocolNode("alice", frozenset({0, 1}), ProtocolLeaf(True),
                                                           ProtocolLeaf(False)))):
        assert not check_certificate(bad, m)
