"""The row-packing upper bound on χ₁ and its use before the solver (issue 25).

Checked independently: every packing is a partition of exactly the 1-cells (recounted cell by
cell); it is never below χ₁ from the exhaustive branch and bound on every 3x3 matrix and random
4x5 ones; and on unions of random rectangles, where it meets the rank bound, ``partition_number_1``
asks the solver nothing (before: the solver ran, and on 24x24 unions gave up at its budget).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from commcomp.matrix.partition import partition_number
from commcomp.matrix.rectangles import _rank, partition_number_1
from commcomp.matrix.row_packing import row_packing_partition


def _union_of_rectangles(side: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = np.zeros((side, side), dtype=int)
    for _ in range(count):
        m[np.ix_(rng.random(side) < 0.3, rng.random(side) < 0.3)] = 1
    return m


def _covered_once(m: np.ndarray, rects) -> bool:
    count = np.zeros_like(m)
    for rows, cols in rects:
        count[np.ix_(rows, cols)] += 1
    return bool((count == m).all())


def test_every_packing_partitions_exactly_the_ones_and_is_an_upper_bound():
    for bits in itertools.product((0, 1), repeat=9):
        m = np.array(bits).reshape(3, 3)
        packed = row_packing_partition(m)
        assert _covered_once(m, packed), m
        if m.any():
            chi_1 = sum(1 for r in partition_number(m).rectangles if r.value)
            assert len(packed) >= chi_1, m
    rng = np.random.default_rng(5)
    for _ in range(40):
        m = (rng.random((4, 5)) < 0.5).astype(int)
        packed = row_packing_partition(m)
        assert _covered_once(m, packed)
        assert len(packed) >= sum(1 for r in partition_number(m).rectangles if r.value)


@pytest.mark.parametrize("seed", [0, 3, 4])
def test_union_of_random_rectangles_needs_no_solver(seed):
    m = _union_of_rectangles(24, 10, seed)
    res = partition_number_1(m)
    assert res.value == _rank(m) and res.lower_bound_by == "rank"
    assert res.steps == ()  # no call to the solver: the heuristic met the rank bound
    assert "row-packing" in res.solver
    assert _covered_once(m, [(r.rows, r.cols) for r in res.rectangles])
