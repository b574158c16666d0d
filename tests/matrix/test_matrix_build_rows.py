"""Communication matrices and distinct rows, against plain loops."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import commcomp.matrix.build as build
from commcomp.errors import InvalidParameterError, TooLargeError
from commcomp.matrix import (MAX_CELLS, check_certificate, communication_matrix, distinct_rows,
                             problem_matrix, reduce_matrix)
from commcomp.problems import get_problem

PROBLEMS = ["index", "equality", "disjointness", "inner-product", "greater-than"]


def loop_matrix(f, xs, ys):
    """The reference: one call of f per (x, y) pair."""
    return np.array([[bool(f(x[None], y[None])[0]) for y in ys] for x in xs], dtype=bool)


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_problem_matrix_equals_pairwise_loop(name, n):
    prob = get_problem(name)
    expected = loop_matrix(prob.evaluate, prob.alice_inputs(n), prob.bob_inputs(n))
    assert np.array_equal(problem_matrix(name, n), expected)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_problem_matrices_match_definitions(n):
    xs = [tuple(int(b) for b in np.binary_repr(v, n)) for v in range(2 ** n)]
    eq = problem_matrix("equality", n)
    disj = problem_matrix("disjointness", n)
    ip = problem_matrix("inner-product", n)
    gt = problem_matrix("greater-than", n)
    idx = problem_matrix("index", n)
    for a, x in enumerate(xs):
        for b, y in enumerate(xs):
            assert eq[a, b] == (x == y)
            assert disj[a, b] == (not any(u and v for u, v in zip(x, y)))
            assert ip[a, b] == (sum(u * v for u, v in zip(x, y)) % 2 == 1)
            assert gt[a, b] == (a > b)  # lexicographic order = numeric order
        for i in range(n):
            assert idx[a, i] == bool(x[i])


def test_blocks_of_rows_give_the_same_matrix(monkeypatch):
    rng = np.random.default_rng(0)
    xs = rng.integers(0, 5, size=(37, 3))
    ys = rng.integers(0, 5, size=(23, 3))
    f = lambda x, y: (x * y).sum(axis=1) % 3 == 1  # noqa: E731
    whole = communication_matrix(f, xs, ys)
    monkeypatch.setattr(build, "_CHUNK_PAIRS", 50)  # two rows per call of f
    calls = []
    counted = lambda x, y: calls.append(len(x)) or f(x, y)  # noqa: E731
    assert np.array_equal(communication_matrix(counted, xs, ys), whole)
    assert np.array_equal(whole, loop_matrix(f, xs, ys))
    assert len(calls) == 19 and max(calls) == 2 * 23  # batched, never one call per pair


def test_bad_functions_and_sizes_are_refused():
    xs = np.zeros((4, 2), dtype=np.uint8)
    with pytest.raises(InvalidParameterError):
        communication_matrix(lambda x, y: np.zeros(3, dtype=bool), xs, xs)
    with pytest.raises(InvalidParameterError):
        communication_matrix(lambda x, y: np.full(len(x), 2), xs, xs)
    with pytest.raises(TooLargeError, match="limit"):
        communication_matrix(lambda x, y: x[:, 0] == y[:, 0], xs, xs, max_cells=15)
    with pytest.raises(TooLargeError, match=str(MAX_CELLS)):
        problem_matrix("equality", 15)


def test_reduce_matrix_classes():
    m = np.array([[0, 0, 0], [1, 1, 0], [0, 0, 0], [1, 1, 0]], dtype=bool)
    red, rc, cc = reduce_matrix(m)
    assert red.tolist() == [[False, False], [True, False]] and rc.tolist() == [0, 1, 0, 1]
    assert cc.tolist() == [0, 0, 1]
    red, rc, cc = reduce_matrix(m, drop_zero=True)
    assert red.tolist() == [[True]] and rc.tolist() == [-1, 0, -1, 0] and cc.tolist() == [0, 0, -1]


@settings(max_examples=60, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 9), st.integers(1, 9))))
def test_distinct_rows_against_a_set(m):
    res = distinct_rows(m)
    k = len({tuple(row) for row in m.tolist()})
    assert res.distinct_rows == k
    assert res.one_way_bits == math.ceil(math.log2(k))
    assert check_certificate(res, m)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_one_way_known_values(n):
    assert distinct_rows(problem_matrix("index", n)).one_way_bits == n  # D^{A->B}(Index_n) = n
    for name in ("equality", "disjointness", "inner-product", "greater-than"):
        res = distinct_rows(problem_matrix(name, n))
        assert res.one_way_bits == n
        assert res.one_way_bits == get_problem(name).deterministic_one_way_bits(n)


def test_rows_checker_rejects_tampering():
    m = problem_matrix("index", 3)
    res = distinct_rows(m)
    assert check_certificate(res, m)
    cls = res.certificate.row_class.copy()
    cls[0], cls[1] = cls[1], cls[0]
    bad = type(res)(res.distinct_rows, res.one_way_bits, res.method,
                    type(res.certificate)(res.certificate.representatives, cls))
    assert not check_certificate(bad, m)
    fewer = type(res)(res.distinct_rows, res.one_way_bits - 1, res.method, res.certificate)
    assert not check_certificate(fewer, m)
    dup = np.vstack([m, m[:1]])  # a claim of 8 classes where the 9th row repeats row 0 is fine...
    assert check_certificate(distinct_rows(dup), dup)
    same = type(res.certificate)((0, 0) + res.certificate.representatives[2:], res.certificate.row_class)
    assert not check_certificate(type(res)(8, 3, "sort", same), m)  # ...two equal representatives are not
