"""Distinct rows, and with them the exact deterministic one-way complexity D^{A->B}(f).

In a one-way protocol Alice sends one message and Bob answers from it and his y. Two inputs x, x' with
different rows must get different messages (else Bob errs on a column where they differ), and
inputs with equal rows may share one. So the number of messages needed is exactly the number of
distinct rows, and ``D^{A->B}(f) = ceil(log2 #distinct rows)`` (Kushilevitz & Nisan 1997, ch. 4).

Size limit: the matrix itself (:data:`commcomp.matrix.build.MAX_CELLS`); the work is one sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .build import MAX_CELLS, _unique_rows, as_matrix, ceil_log2
from ..errors import InvalidParameterError, TooLargeError

__all__ = ["DistinctRowsCertificate", "DistinctRowsResult", "distinct_rows"]


@dataclass(frozen=True, eq=False)
class DistinctRowsCertificate:
    """Row ``r`` equals row ``representatives[row_class[r]]``; the representatives differ pairwise."""

    representatives: tuple[int, ...]
    row_class: np.ndarray  # (R,) int64


@dataclass(frozen=True, eq=False)
class DistinctRowsResult:
    """The number of distinct rows and the one-way complexity it gives."""

    distinct_rows: int
    one_way_bits: int
    method: str
    certificate: DistinctRowsCertificate
    measure: str = "rows"
    label: str = "exact: D^{A->B}(f) = ceil(log2 #distinct rows)"


def distinct_rows(matrix, *, method: str = "sort") -> DistinctRowsResult:
    """Distinct rows of a communication matrix and the exact one-way complexity Alice -> Bob.

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    method : {"sort"}
        ``"sort"`` (the only one): rows packed to bytes and sorted with ``np.unique``.

    Returns
    -------
    DistinctRowsResult
        ``distinct_rows``, ``one_way_bits = ceil(log2 distinct_rows)`` (0 when all rows agree), and a
        certificate naming the representative row of each class.

    Raises
    ------
    TooLargeError
        Above :data:`MAX_CELLS` cells.

    Examples
    --------
    >>> from commcomp.matrix import problem_matrix
    >>> res = distinct_rows(problem_matrix("index", 4))
    >>> res.distinct_rows, res.one_way_bits
    (16, 4)
    """
    if method != "sort":
        raise InvalidParameterError(f"unknown method {method!r} for distinct rows; known: 'sort'")
    m = as_matrix(matrix)
    if m.size > MAX_CELLS:
        raise TooLargeError(f"distinct rows: {m.shape[0]}x{m.shape[1]} exceeds the limit of "
                            f"{MAX_CELLS} cells")
    red, row_class = _unique_rows(m, drop_zero=False)
    reps = np.full(len(red), -1, dtype=np.int64)
    # first appearance of each class: classes are numbered in first-appearance order
    seen = np.r_[True, row_class[1:] > np.maximum.accumulate(row_class)[:-1]]
    reps[row_class[seen]] = np.flatnonzero(seen)
    k = len(red)
    return DistinctRowsResult(
        distinct_rows=k, one_way_bits=ceil_log2(k), method=method,
        certificate=DistinctRowsCertificate(tuple(int(r) for r in reps), row_class))
