"""Discrepancy under the uniform distribution: exact, with its maximising rectangle, and the spectral bound.

For a 0/1 matrix ``M`` (R x C) with sign matrix ``A = (-1)^M``, the discrepancy under the uniform
distribution is

    disc_U(M) = max over rectangles S x T of |Σ_{(x, y) ∈ S×T} A[x, y]| / (R C).

A protocol whose leaves are ``L`` rectangles, each with one answer, has advantage ``1 - 2ε <= L · disc``
(:mod:`commcomp.bounds.average`), so ``disc`` bounds the error of every short protocol.

Exact search.  For a fixed row set S the best column set is all columns whose sum over S is positive (or
all whose sum is negative), so ``max_T |Σ| = max(Σ_y max(v_y, 0), Σ_y max(-v_y, 0))`` with
``v = Σ_{x∈S} A[x, :]``; the search enumerates every S (vectorised: a block of subset masks times the
matrix).  Equal rows go together in some optimal S (for the optimal T, S is every row with positive or
every row with negative sum over T), so the subsets run over *distinct* rows weighted by their counts, on
the side (rows or columns) with fewer distinct lines.  Limit: ``2^k · k · other side <= MAX_WORK`` with
``k`` the distinct lines enumerated.  The spectral bound needs ``R C min(R, C) <= MAX_SPECTRAL_WORK``.

Spectral bound.  ``|1_S^T A 1_T| <= ||A||_2 sqrt(|S| |T|) <= ||A||_2 sqrt(R C)``, so
``disc_U <= ||A||_2 / sqrt(R C)``, an upper bound for any size (float64 SVD; for IP_n the sign matrix is a
Hadamard matrix with ``||A||_2 = 2^{n/2}``: Lindsey's ``2^{-n/2}``).  Where the exact search is out of
reach, the report gives this upper bound and a rectangle found by alternating best responses from the
top singular vectors, whose imbalance is a lower bound.

Examples
--------
>>> from commcomp.matrix import problem_matrix
>>> d = discrepancy(problem_matrix("inner-product", 2))
>>> d.exact, d.imbalance, d.fraction, round(d.spectral_bound, 9)   # Lindsey: <= 2^(-n/2)
(True, 5, '5/16', 0.5)
>>> check_discrepancy(d, problem_matrix("inner-product", 2))
'rectangle 3 x 3 sums to 5 of 16 cells: 5/16'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .build import as_matrix

__all__ = ["DiscrepancyResult", "discrepancy", "spectral_bound", "MAX_SPECTRAL_WORK", "check_discrepancy",
           "max_imbalance_batch", "MAX_WORK",
           "discrepancy_rows"]

#: most multiply-adds of the exact search (2^k subsets x k x the other side)
MAX_WORK = 1 << 28
#: most multiply-adds of the spectral bound (the Gram matrix of the shorter side: R C min(R, C))
MAX_SPECTRAL_WORK = 1 << 28
_SLACK = 1e-12  # float64 eigenvalues of an integer Gram matrix, rounded up by this relative amount
_BLOCK = 1 << 22  # entries of one (subsets x columns) block


@dataclass(frozen=True, eq=False)
class DiscrepancyResult:
    """``value`` = |imbalance| / cells: exact (``exact``) or, if not, the spectral upper bound, with the best
    rectangle found (``imbalance`` its signed sum, ``lower_bound`` = |imbalance| / cells)."""

    value: float
    exact: bool
    imbalance: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    cells: int
    spectral_bound: float | None
    method: str
    measure: str = "discrepancy"

    @property
    def lower_bound(self) -> float:
        """The rectangle's own |imbalance| / cells (equal to ``value`` when exact)."""
        return abs(self.imbalance) / self.cells

    @property
    def fraction(self) -> str:
        """``|imbalance| / cells`` as an exact fraction."""
        return str(Fraction(abs(self.imbalance), self.cells))

    @property
    def label(self) -> str:
        if self.exact:
            return "exact: max over rectangles of |sum of (-1)^M| / (R C) (every row subset searched)"
        return ("upper bound (spectral, ||(-1)^M||_2 / sqrt(R C)); exact search out of reach: the rectangle "
                f"found gives >= {self.lower_bound:.6g}")

    def to_json(self) -> dict:
        return {"value": self.value, "exact": self.exact, "fraction": self.fraction if self.exact else None,
                "lower_bound": self.lower_bound, "imbalance": self.imbalance, "method": self.method,
                "rectangle": {"rows": list(self.rows), "cols": list(self.cols)}}


def _masks(k: int, start: int, stop: int) -> np.ndarray:
    return ((np.arange(start, stop, dtype=np.int64)[:, None] >> np.arange(k)) & 1)  # (stop - start, k)


def max_imbalance_batch(signs: np.ndarray, start: int = 0, stop: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a batch of small ±1 (or weighted) matrices ``(B, R, C)``: over the row subsets with bit masks in
    ``[start, stop)`` (default all ``2^R``), the largest |rectangle sum| of each matrix, the mask reaching
    it and the sign of its best column set (+1: the columns with positive sums).  The exact search of
    :func:`discrepancy` runs this on one matrix block by block.

    >>> a = np.array([[[1, 1], [1, -1]]])
    >>> [v.tolist() for v in max_imbalance_batch(a)]
    [[2], [1], [1]]
    """
    signs = np.asarray(signs, dtype=np.int64)
    stop = 1 << signs.shape[1] if stop is None else stop
    masks = _masks(signs.shape[1], start, stop)  # (S, R)
    col = np.einsum("sr,brc->bsc", masks, signs)  # (B, S, C) column sums over each row subset
    pos = np.where(col > 0, col, 0).sum(axis=2)  # (B, S)
    neg = np.where(col < 0, -col, 0).sum(axis=2)  # (B, S)
    best = np.maximum(pos, neg)
    subset = best.argmax(axis=1)  # (B,)
    pick = np.arange(len(subset))
    return best[pick, subset], start + subset, np.where(pos[pick, subset] >= neg[pick, subset], 1, -1)


def _distinct(lines: np.ndarray):
    uniq, inverse, counts = np.unique(lines, axis=0, return_inverse=True, return_counts=True)
    return uniq, inverse.reshape(-1), counts


def _exact_search(a: np.ndarray):
    """The exact maximum over a (R, C) sign matrix: (imbalance, rows, cols), searching distinct rows."""
    uniq, inverse, counts = _distinct(a)
    weighted = (uniq * counts[:, None])[None]  # (1, k, C): each distinct row once, times its multiplicity
    k = weighted.shape[1]
    block = max(1, _BLOCK // max(1, a.shape[1]))
    best, best_mask, best_sign = -1, 0, 1
    for start in range(0, 1 << k, block):
        value, mask, sign = max_imbalance_batch(weighted, start, min(1 << k, start + block))
        if int(value[0]) > best:
            best, best_mask, best_sign = int(value[0]), int(mask[0]), int(sign[0])
    chosen = np.flatnonzero((best_mask >> np.arange(k)) & 1)
    rows = np.flatnonzero(np.isin(inverse, chosen))
    v = a[rows].sum(axis=0)
    cols = np.flatnonzero(v > 0 if best_sign > 0 else v < 0)
    return int(a[np.ix_(rows, cols)].sum()), rows, cols


def _best_response(a: np.ndarray, cols: np.ndarray, sign: int):
    v = a[:, cols].sum(axis=1) * sign
    rows = np.flatnonzero(v > 0)
    if rows.size == 0:
        return rows, cols
    w = a[rows].sum(axis=0) * sign
    return rows, np.flatnonzero(w > 0)


def _heuristic(a: np.ndarray, vector: np.ndarray):
    """A good rectangle by alternating best responses from the top singular vector of the shorter side
    (a lower bound); returns (imbalance, rows, cols)."""
    if a.shape[0] < a.shape[1]:
        total, rows, cols = _heuristic(a.T, vector)
        return total, cols, rows
    # vector: the top eigenvector of the shorter side's Gram matrix, here over the columns
    best = (0, np.zeros(0, np.int64), np.zeros(0, np.int64))
    for start in (vector > 0, vector < 0):
        for sign in (1, -1):
            cols = np.flatnonzero(start)
            rows = np.zeros(0, np.int64)
            for _ in range(20):
                new_rows, new_cols = _best_response(a, cols, sign)
                if np.array_equal(new_rows, rows) and np.array_equal(new_cols, cols):
                    break
                rows, cols = new_rows, new_cols
            total = int(a[np.ix_(rows, cols)].sum()) if rows.size and cols.size else 0
            if abs(total) > abs(best[0]):
                best = (total, rows, cols)
    return best


def _top_eigen(a: np.ndarray) -> tuple[float, np.ndarray]:
    """Largest eigenvalue of the shorter side's Gram matrix, and its eigenvector (over that side)."""
    r, c = a.shape
    f = a.astype(np.float64)
    gram = f.T @ f if c <= r else f @ f.T  # (k, k), integer entries exactly representable
    values, vectors = np.linalg.eigh(gram)
    return float(values[-1]), vectors[:, -1]


def spectral_bound(a: np.ndarray) -> float:
    """``||A||_2 / sqrt(R C)`` for a sign matrix, from the largest eigenvalue of the shorter side's Gram
    matrix (exact integers, float64 eigenvalue rounded up by ``_SLACK``).

    Raises
    ------
    TooLargeError
        Beyond :data:`MAX_SPECTRAL_WORK`.
    """
    return _spectral(a)[0]


def _spectral(a: np.ndarray) -> tuple[float, np.ndarray]:
    """:func:`spectral_bound` and the top eigenvector it came from."""
    from ..errors import TooLargeError

    r, c = a.shape
    if r * c * min(r, c) > MAX_SPECTRAL_WORK:
        raise TooLargeError(f"spectral discrepancy bound: {r} x {c} needs {r * c * min(r, c)} multiply-adds "
                            f"(> {MAX_SPECTRAL_WORK})")
    top, vector = _top_eigen(a)
    return math.sqrt(max(top, 0.0) * (1 + _SLACK) / (r * c)), vector


def discrepancy(matrix, *, exact: bool | None = None) -> DiscrepancyResult:
    """The discrepancy of a 0/1 matrix under the uniform distribution (module docstring).

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    exact : bool, optional
        None (default): exact where the search fits :data:`MAX_WORK`, else the spectral bound; True:
        exact, raising :class:`~commcomp.errors.TooLargeError` beyond the limit; False: spectral only.
    """
    from ..errors import TooLargeError

    m = as_matrix(matrix)
    a = 1 - 2 * m.astype(np.int64)  # (R, C) signs
    cells = a.shape[0] * a.shape[1]
    try:
        spectral, vector = _spectral(a)
    except TooLargeError:
        spectral = vector = None
    k_rows, k_cols = len(np.unique(a, axis=0)), len(np.unique(a, axis=1).T)
    transpose = k_cols < k_rows
    k, other = (k_cols, a.shape[0]) if transpose else (k_rows, a.shape[1])
    fits = k < 62 and (1 << k) * k * other <= MAX_WORK
    if (exact or spectral is None) and not fits:
        raise TooLargeError(f"exact discrepancy: 2^{k} subsets x {k} x {other} > {MAX_WORK} (MAX_WORK)"
                            + ("; the spectral bound too: R C min(R, C) > " + str(MAX_SPECTRAL_WORK)
                               if spectral is None else "; the spectral bound needs exact=False"))
    if fits and exact is not False:
        total, first, second = _exact_search(a.T if transpose else a)
        rows, cols = (second, first) if transpose else (first, second)
        return DiscrepancyResult(abs(total) / cells, True, total, tuple(map(int, rows)), tuple(map(int, cols)),
                                 cells, spectral, f"every subset of {k} distinct {'columns' if transpose else 'rows'}")
    total, rows, cols = _heuristic(a, vector)
    return DiscrepancyResult(spectral, False, total, tuple(map(int, rows)), tuple(map(int, cols)), cells, spectral,
                             "spectral bound; rectangle by alternating best responses")


def check_discrepancy(result: DiscrepancyResult, matrix) -> str:
    """Re-add the rectangle's signs from the matrix; raises ValueError if the certificate is wrong.
    (An exact value's maximality rests on the search; the spectral bound is recomputed.)"""
    m = as_matrix(matrix)
    a = 1 - 2 * m.astype(np.int64)
    rows, cols = np.asarray(result.rows, np.int64), np.asarray(result.cols, np.int64)
    if len(set(result.rows)) != rows.size or len(set(result.cols)) != cols.size:
        raise ValueError("the rectangle repeats a row or column")
    total = int(a[np.ix_(rows, cols)].sum()) if rows.size and cols.size else 0
    if total != result.imbalance or result.cells != a.size:
        raise ValueError(f"the rectangle sums to {total}, not the claimed {result.imbalance}")
    if result.spectral_bound is not None:
        spectral = float(np.linalg.norm(a.astype(np.float64), 2)) / math.sqrt(a.size)  # an SVD, not the Gram
        if not math.isclose(spectral, result.spectral_bound, rel_tol=1e-9):
            raise ValueError("the spectral bound does not recompute")
        if result.lower_bound > result.spectral_bound * (1 + 1e-9):
            raise ValueError("the rectangle beats the spectral upper bound")
    if result.exact and result.value != abs(total) / a.size:
        raise ValueError("the exact value is not the rectangle's")
    return (f"rectangle {rows.size} x {cols.size} sums to {total} of {a.size} cells: "
            f"{Fraction(abs(total), a.size)}")


def discrepancy_rows(payload: dict) -> list[list]:
    """``matrix`` table rows ``[measure, value, what it is]`` for the discrepancy fields of a report's JSON."""
    d = payload.get("discrepancy")
    if not d:
        return []
    shown = f"{d['fraction']} = {d['value']:.6g}" if d["exact"] else f"<= {d['value']:.6g}"
    what = ("exact: max |signed sum| over rectangles / cells" if d["exact"] else
            f"upper bound (spectral); a rectangle gives >= {d['lower_bound']:.6g}")
    rect = d["rectangle"]
    return [["discrepancy", shown, f"{what}; rectangle {len(rect['rows'])} rows x {len(rect['cols'])} cols"],
            ["spectral_discrepancy_bound", "-" if payload.get("spectral_discrepancy_bound") is None else
             f"{payload['spectral_discrepancy_bound']:.6g}", "upper bound: ||(-1)^M||_2 / sqrt(R C)"]]
