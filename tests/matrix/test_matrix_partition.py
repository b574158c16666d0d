"""Partition number against exhaustive search; known values; partition checker."""

import dataclasses
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from commcomp.errors import TooLargeError
from commcomp.matrix import (Rectangle, check_certificate, deterministic_cc, partition_number,
                             problem_matrix)


def partition_exhaustive(m):
    """Reference: every monochromatic rectangle of the unreduced matrix, no bound, memo on cells."""
    m = np.asarray(m, dtype=bool)
    rows, cols = m.shape
    by_first = {}
    for rm in range(1, 1 << rows):
        for cm in range(1, 1 << cols):
            cells = [(i, j) for i in range(rows) if rm >> i & 1 for j in range(cols) if cm >> j & 1]
            if len({bool(m[i, j]) for i, j in cells}) == 1:
                mask = sum(1 << (i * cols + j) for i, j in cells)
                by_first.setdefault((mask & -mask).bit_length() - 1, []).append(mask)
    full = (1 << (rows * cols)) - 1

    @lru_cache(maxsize=None)
    def fewest(covered):
        if covered == full:
            return 0
        first = (~covered & (covered + 1)).bit_length() - 1  # lowest uncovered cell
        return 1 + min(fewest(covered | r) for r in by_first[first] if not r & covered)

    return fewest(0)


# matrices whose partition number exceeds rank(M) + rank(J - M)
GAPS = [
    ([[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 1, 0]], 8),
    ([[1, 1, 0, 0, 1], [0, 1, 0, 1, 1], [0, 0, 1, 1, 1], [1, 0, 1, 0, 1]], 8),
    ([[1, 0, 1, 1, 0], [0, 0, 1, 1, 1], [0, 1, 0, 0, 1], [1, 0, 0, 1, 1], [0, 1, 1, 0, 0]], 10),
    ([[1, 1, 0, 0, 1], [1, 1, 0, 1, 0], [1, 0, 1, 0, 1], [1, 0, 1, 1, 0], [1, 0, 0, 1, 1]], 9),
]


@settings(max_examples=40, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 4), st.integers(1, 4))))
def test_against_exhaustive_search(m):
    res = partition_number(m)
    assert res.partition_number == partition_exhaustive(m)
    assert check_certificate(res, m)


@pytest.mark.parametrize("rows, expected", GAPS)
def test_gap_cases(rows, expected):
    m = np.array(rows, dtype=bool)
    res = partition_number(m)
    assert res.lower_bound_by == "search" and res.partition_number > res.rank_bound
    assert res.partition_number == expected == partition_exhaustive(m)
    check = check_certificate(res, m)  # the rectangles hold; minimality is the search's word: not ok
    assert check.status == "unverified" and not check.ok


@pytest.mark.parametrize("n", [1, 2, 3])
def test_known_values(n):
    assert partition_number(problem_matrix("equality", n)).partition_number == 2 ** (n + 1)
    assert partition_number(problem_matrix("disjointness", n)).partition_number == 2 ** (n + 1) - 1
    assert partition_number(problem_matrix("greater-than", n)).partition_number == 2 ** (n + 1) - 1
    assert partition_number(problem_matrix("index", n)).partition_number == 2 * n


def test_8x8_matrices_and_the_protocol_tree_bound():
    rng = np.random.default_rng(6)
    for density in (0.3, 0.5, 0.7):
        m = rng.random((8, 8)) < density
        res = partition_number(m)
        tree = deterministic_cc(m)
        assert res.partition_number <= tree.leaves <= 2 ** tree.deterministic_cc  # leaves partition M
        assert check_certificate(res, m)


def test_limits():
    with pytest.raises(TooLargeError, match="64 cells"):
        partition_number(problem_matrix("equality", 4))
    with pytest.raises(TooLargeError, match="budget of 2 nodes"):
        partition_number(np.array(GAPS[0][0], dtype=bool), max_nodes=2)


def test_partition_checker_rejects_tampering():
    m = problem_matrix("disjointness", 2)
    res = partition_number(m)
    rects = list(res.rectangles)
    first = rects[0]
    grown = Rectangle(tuple(sorted(set(first.rows) | {1})), first.cols, first.value)  # row 1 is mixed
    for bad in (dataclasses.replace(res, rectangles=tuple(rects[1:])),  # a cell left uncovered
                dataclasses.replace(res, rectangles=tuple([grown] + rects[1:])),
                dataclasses.replace(res, rectangles=tuple(rects + [rects[0]])),  # covered twice
                dataclasses.replace(res, partition_number=res.partition_number - 1)):
        assert not check_certificate(bad, m)
