"""The partition number: fewest monochromatic rectangles that partition a tiny matrix, exactly.

The leaves of a protocol tree partition the matrix into monochromatic rectangles, so
``D(f) >= ceil(log2 partition_number)``; and any partition into rectangles has at least rank(M)
rectangles of value 1 and rank(J - M) of value 0 (each rectangle is a rank-one matrix), over any field.

Search: equal rows (and columns) can share every rectangle, so the matrix is reduced first. Then
branch and bound over exact covers: the first uncovered cell (row-major) must be the first cell of
the rectangle covering it, so only those rectangles are tried, largest first; a branch is cut when
``rectangles so far + rank(M o U) + rank((J - M) o U) >= best``, U the uncovered cells (ranks mod a
prime below 2^20, exact); and a set of covered cells already reached with as few rectangles is not
searched again. The rectangles found (over the input's own indices) are the certificate; the lower
side is the rank bound when it is met, the search otherwise.

Size limits: at most ``MAX_CELLS`` (64) cells and ``MAX_SIDE`` (16) on a side after reduction, and
``max_nodes`` search nodes (default ``MAX_NODES`` = 200 000).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._modp import PRIMES, _lu_base
from .build import as_matrix, reduce_matrix
from ..errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_CELLS", "MAX_SIDE", "MAX_NODES", "Rectangle", "PartitionResult", "partition_number"]

MAX_CELLS = 64
MAX_SIDE = 16
MAX_NODES = 200_000
_P = PRIMES[0]


@dataclass(frozen=True)
class Rectangle:
    """The cells ``rows x cols``, all holding ``value``."""

    rows: tuple[int, ...]
    cols: tuple[int, ...]
    value: bool


@dataclass(frozen=True)
class PartitionResult:
    """The partition number, the rank bound, and a partition of that size."""

    partition_number: int
    rank_bound: int  # rank(M) + rank(J - M), ranks mod a prime
    lower_bound_by: str  # "rank": the rank bound is met; "search": branch and bound proved it
    rectangles: tuple[Rectangle, ...]
    search_nodes: int
    method: str = "search"
    measure: str = "partition_number"

    @property
    def label(self) -> str:
        how = "rank bound met" if self.lower_bound_by == "rank" else "exhaustive search"
        return f"exact: fewest monochromatic rectangles partitioning M ({how})"

    @property
    def certificate(self) -> tuple[Rectangle, ...]:
        return self.rectangles


def partition_number(matrix, *, method: str = "search", max_nodes: int = MAX_NODES) -> PartitionResult:
    """The least number of monochromatic rectangles that partition a tiny matrix, with a partition.

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    method : {"search"}
        Branch and bound over exact covers (module docstring).
    max_nodes : int
        Search budget; past it, TooLargeError.

    Returns
    -------
    PartitionResult

    Raises
    ------
    TooLargeError
        Beyond :data:`MAX_CELLS` cells or :data:`MAX_SIDE` on a side after removing duplicate rows and
        columns, or past ``max_nodes``.

    Examples
    --------
    >>> from commcomp.matrix import problem_matrix
    >>> res = partition_number(problem_matrix("disjointness", 2))
    >>> res.partition_number, res.lower_bound_by    # rank 4 + rank 3
    (7, 'rank')
    """
    if method != "search":
        raise InvalidParameterError(f"unknown method {method!r} for the partition number; known: 'search'")
    m = as_matrix(matrix)
    red, row_class, col_class = reduce_matrix(m)
    r, c = red.shape
    if r * c > MAX_CELLS or max(r, c) > MAX_SIDE:
        raise TooLargeError(f"partition number: {m.shape[0]}x{m.shape[1]} reduces to {r}x{c}; the "
                            f"limits are {MAX_CELLS} cells and {MAX_SIDE} distinct rows or columns")
    search = _CoverSearch(red, max_nodes)
    best = search.run()
    rects = []
    for rows_mask, cols_mask, value in best:
        rows = np.flatnonzero(np.isin(row_class, _bits(rows_mask)))  # every row of those classes
        cols = np.flatnonzero(np.isin(col_class, _bits(cols_mask)))
        rects.append(Rectangle(tuple(int(x) for x in rows), tuple(int(y) for y in cols), value))
    return PartitionResult(partition_number=len(rects), rank_bound=search.root_bound,
                           lower_bound_by="rank" if len(rects) == search.root_bound else "search",
                           rectangles=tuple(rects), search_nodes=search.nodes)


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _rank(a: np.ndarray) -> int:
    if not a.any():
        return 0
    if a.shape[1] > a.shape[0]:
        a = a.T
    return len(_lu_base(a.astype(np.float64), _P)[0])


class _CoverSearch:
    """Branch and bound over exact covers of the cells by monochromatic rectangles."""

    def __init__(self, red: np.ndarray, max_nodes: int):
        self.a = red
        self.r, self.c = red.shape
        self.full = (1 << (self.r * self.c)) - 1
        self.max_nodes = max_nodes
        self.nodes = 0
        self.by_first = self._rectangles()  # first cell -> [(cells, rows, cols, value)], largest first
        self.root_bound = self._bound(0)
        self.best = self._rowwise()
        self.seen: dict[int, int] = {}

    def _rectangles(self):
        """Every monochromatic rectangle, filed under its first cell (row-major)."""
        a, r, c = self.a, self.r, self.c
        cols_of = {v: [sum(1 << j for j in range(c) if a[i, j] == v) for i in range(r)]
                   for v in (False, True)}  # columns where row i holds v
        by_first: list[list] = [[] for _ in range(r * c)]
        for rows in range(1, 1 << r):
            members = _bits(rows)
            for v in (False, True):
                cols_ok = (1 << c) - 1
                for i in members:
                    cols_ok &= cols_of[v][i]
                sub = cols_ok
                while sub:  # every nonempty subset of the columns where those rows all hold v
                    cells = 0
                    for i in members:
                        cells |= sub << (i * c)
                    first = (cells & -cells).bit_length() - 1
                    by_first[first].append((cells, rows, sub, v))
                    sub = (sub - 1) & cols_ok
        for lst in by_first:
            lst.sort(key=lambda t: -t[0].bit_count())
        return by_first

    def _rowwise(self):
        """A first partition: each row split into its 0-cells and its 1-cells (or columns, if fewer)."""
        def split(a):
            out = []
            for i in range(a.shape[0]):
                for v in (False, True):
                    js = np.flatnonzero(a[i] == v)
                    if js.size:
                        out.append((i, js, v))
            return out

        by_rows, by_cols = split(self.a), split(self.a.T)
        if len(by_rows) <= len(by_cols):
            return [(1 << i, sum(1 << int(j) for j in js), v) for i, js, v in by_rows]
        return [(sum(1 << int(j) for j in js), 1 << i, v) for i, js, v in by_cols]

    def _bound(self, covered: int) -> int:
        """rank(M o U) + rank((J - M) o U), U the uncovered cells: rectangles still needed."""
        free = np.array([(~covered >> k) & 1 for k in range(self.r * self.c)], dtype=bool)
        free = free.reshape(self.r, self.c)
        return _rank(self.a & free) + _rank(~self.a & free)

    def run(self):
        if len(self.best) > self.root_bound:
            self._search(0, [])
        return self.best

    def _search(self, covered: int, chosen: list) -> None:
        if covered == self.full:
            if len(chosen) < len(self.best):
                self.best = list(chosen)
            return
        if self.seen.get(covered, 1 << 30) <= len(chosen):
            return
        self.seen[covered] = len(chosen)
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise TooLargeError(f"partition number search passed its budget of {self.max_nodes} nodes")
        if len(chosen) + self._bound(covered) >= len(self.best):
            return
        first = ((~covered) & -(~covered)).bit_length() - 1
        for cells, rows, cols, value in self.by_first[first]:
            if cells & covered:
                continue
            chosen.append((rows, cols, value))
            self._search(covered | cells, chosen)
            chosen.pop()
            if len(self.best) == self.root_bound:
                return  # met the lower bound: optimal
