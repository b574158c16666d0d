"""Fooling sets against exhaustive enumeration; known sizes; greedy labels; tampering."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import commcomp.matrix.fooling as fooling
from commcomp.errors import TooLargeError
from commcomp.matrix import check_certificate, is_fooling_set, largest_fooling_set, problem_matrix


def largest_fooling_bruteforce(m):
    """Reference: grow every fooling set cell by cell (no bound), for both values; the largest size."""
    m = np.asarray(m, dtype=bool)
    best = 0
    for z in (False, True):
        cells = [(i, j) for i in range(m.shape[0]) for j in range(m.shape[1]) if m[i, j] == z]

        def fools(a, b):
            return m[a[0], b[1]] != z or m[b[0], a[1]] != z

        def grow(chosen, start):
            nonlocal best
            best = max(best, len(chosen))
            for k in range(start, len(cells)):
                if all(fools(cells[k], c) for c in chosen):
                    grow(chosen + [cells[k]], k + 1)

        grow([], 0)
    return best


@settings(max_examples=50, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 5), st.integers(1, 5))))
def test_exact_fooling_set_against_bruteforce(m):
    res = largest_fooling_set(m, method="exact")
    assert res.size == largest_fooling_bruteforce(m) and res.exact
    assert is_fooling_set(m, res.cells, res.value)
    assert check_certificate(res, m)


def test_bitset_search_and_networkx_agree():
    rng = np.random.default_rng(4)
    for _ in range(12):
        m = rng.random((7, 7)) < rng.uniform(0.2, 0.8)
        a = largest_fooling_set(m, method="exact")
        b = largest_fooling_set(m, method="networkx")
        assert a.size == b.size and a.exact and b.exact
        assert check_certificate(a, m) and check_certificate(b, m)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_known_fooling_sets(n):
    for name in ("equality", "disjointness", "greater-than"):
        res = largest_fooling_set(problem_matrix(name, n))
        assert res.size == 2 ** n and res.exact
        assert res.lower_bound_bits == n + 1  # D >= log2(2^n + 1): tight for EQ, DISJ, GT
    eq = largest_fooling_set(problem_matrix("equality", n))
    assert eq.value and sorted(eq.cells) == [(i, i) for i in range(2 ** n)]
    disj = largest_fooling_set(problem_matrix("disjointness", n))
    assert disj.value and all(x + y == 2 ** n - 1 for x, y in disj.cells)  # y = complement of x
    assert largest_fooling_set(problem_matrix("index", n)).size == n


@pytest.mark.parametrize("n", [6, 8])
def test_greedy_finds_the_diagonals_at_larger_n(n):
    for name in ("equality", "disjointness"):
        m = problem_matrix(name, n)
        res = largest_fooling_set(m, method="greedy")
        assert res.size == 2 ** n and res.exact  # as many as rows: provably largest
        assert check_certificate(res, m)


def test_greedy_is_labelled_a_lower_bound():
    m = problem_matrix("inner-product", 5)  # 32x32: too many cells for the exact search
    res = largest_fooling_set(m)
    assert not res.exact and res.label == "lower bound from a greedy fooling set"
    assert res.method == "greedy" and check_certificate(res, m)
    assert res.size <= largest_fooling_set(problem_matrix("inner-product", 4), method="exact").size * 4
    with pytest.raises(TooLargeError, match="400"):
        largest_fooling_set(m, method="exact")


def test_search_budget(monkeypatch):
    m = problem_matrix("inner-product", 4)
    with pytest.raises(TooLargeError, match="budget of 10 nodes"):
        largest_fooling_set(m, method="exact", max_nodes=10)
    res = largest_fooling_set(m, max_nodes=10)  # auto falls back to the greedy set
    assert not res.exact and check_certificate(res, m)


def test_fooling_checker_rejects_tampering():
    m = problem_matrix("disjointness", 3)
    res = largest_fooling_set(m)
    cells = list(res.cells)
    cells[0] = (cells[0][0], cells[1][1])  # two cells in one column never fool each other
    for bad in (dataclasses.replace(res, cells=tuple(cells)),
                dataclasses.replace(res, value=not res.value),
                dataclasses.replace(res, size=res.size + 1),
                dataclasses.replace(res, lower_bound_bits=res.lower_bound_bits + 1),
                dataclasses.replace(res, cells=res.cells[:-1] + ((0, 0),))):
        assert not check_certificate(bad, m)
    assert is_fooling_set(m, [(7, 0)], True)  # x = 111 and y = 000 are disjoint: a 1-cell
    assert not is_fooling_set(m, [(7, 7)], True) and is_fooling_set(m, [(7, 7)], False)
    assert not is_fooling_set(m, [(6, 1), (5, 2), (6, 0)], True)  # (6, 1) and (6, 0): one row


def test_auto_falls_back_to_greedy_beyond_the_vertex_limit(monkeypatch):
    m = problem_matrix("inner-product", 3)  # largest fooling set 7 < 8 rows: greedy cannot prove it
    assert largest_fooling_set(m).exact
    monkeypatch.setattr(fooling, "MAX_EXACT_VERTICES", 5)
    res = largest_fooling_set(m)
    assert not res.exact and res.method == "greedy" and check_certificate(res, m)
