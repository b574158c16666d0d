"""A cheap upper bound on χ_z: the row-packing heuristic for exact (partition) rectangle covers.

Rows of the 0/1 matrix A (the z-cells) are taken one at a time in some order. Each row's set S of
1-columns is written as a disjoint union of the column sets C of rectangles already open (largest C
first, taking C only when C ⊆ what is left of S: the row joins that rectangle, whose cells (row, C)
are all 1), and whatever is left opens a new rectangle ({row}, rest). Every 1-cell lands in exactly
one rectangle and every rectangle holds 1-cells only, so the result is a partition of the 1-cells
of A into 1-rectangles: an upper bound on χ₁(A), and (a partition is a cover) on C¹(A).

This is the row-packing step of exact Boolean matrix factorisation heuristics (e.g. EBMF); it is
run over a few row orders and on the transpose, and the smallest partition is kept. The exact
search of :mod:`.rectangles` then only asks the solver for k below it, and stops at once where it
meets the rank or fooling-set lower bound.
"""

from __future__ import annotations

import numpy as np

__all__ = ["row_packing_partition"]

_SEEDED_ORDERS = 6


def _pack(rows_as_masks: list[int], order) -> list[tuple[list[int], int]]:
    """Row packing of the rows (bit masks over the columns) in ``order``: [(rows, column mask)]."""
    rects: list[tuple[list[int], int]] = []
    for r in order:
        left = rows_as_masks[r]
        if not left:
            continue
        # largest open column sets first: a big block taken whole leaves fewer new rectangles
        for rows, cols in sorted(rects, key=lambda rc: -bin(rc[1]).count("1")):
            if cols & left == cols:
                rows.append(r)
                left &= ~cols
                if not left:
                    break
        if left:
            rects.append(([r], left))
    return rects


def _best_packing(a: np.ndarray, seed: int):
    masks = [int("".join("1" if v else "0" for v in row[::-1]) or "0", 2) for row in a]
    weights = a.sum(axis=1)
    orders = [range(a.shape[0]), np.argsort(-weights, kind="stable"), np.argsort(weights, kind="stable")]
    rng = np.random.default_rng(seed)
    orders += [rng.permutation(a.shape[0]) for _ in range(_SEEDED_ORDERS)]
    return min((_pack(masks, [int(i) for i in order]) for order in orders), key=len)


def _bits(mask: int) -> tuple[int, ...]:
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def row_packing_partition(a, *, seed: int = 0) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """A partition of the 1-cells of ``a`` into 1-rectangles, by row packing (rows and columns).

    Parameters
    ----------
    a : (R, C) 0/1 array
    seed : int
        Seed of the extra random row orders tried.

    Returns
    -------
    list of (rows, cols)
        Disjoint all-ones rectangles covering every 1-cell of ``a``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1]])
    >>> sorted(row_packing_partition(a))
    [((0, 1), (0, 1)), ((1, 2), (2,))]
    """
    a = np.asarray(a).astype(bool)
    by_rows = [(tuple(sorted(rows)), _bits(cols)) for rows, cols in _best_packing(a, seed)]
    by_cols = [(_bits(rows), tuple(sorted(cols))) for cols, rows in _best_packing(a.T, seed)]
    return min(by_rows, by_cols, key=len)
