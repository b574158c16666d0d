"""Partition numbers χ₁, χ₀, χ and cover numbers C¹, C⁰, exactly, each with both certificates.

χ_z(M) is the fewest z-monochromatic rectangles that partition the z-cells of M; C^z(M) the fewest
that cover them (overlaps allowed). A partition of M into monochromatic rectangles splits into a
partition of its 1-cells and one of its 0-cells, and two such partitions together partition M, so
``χ(M) = χ₁(M) + χ₀(M)``. ``ceil(log2 C¹)`` is the nondeterministic complexity N¹(f) and
``ceil(log2 C⁰)`` the co-nondeterministic N⁰(f) (Kushilevitz & Nisan 1997, ch. 2).

Method, for the z-cells A = (M == z):

1. equal rows (and columns) of A are merged and its zero rows and columns dropped: a rectangle can
   take a whole class, so nothing changes;
2. lower bounds that check without the solver: a z-fooling set S (no rectangle holds two of its
   cells: ``C^z >= |S|``, ``χ_z >= |S|``) and, for partitions, ``χ_z >= rank_Q(A)`` (A is the sum
   of the rectangles' rank-one indicator matrices);
3. the upper bound ``min(rows, columns)`` of the reduced A (one rectangle per distinct row), and the
   row-packing heuristic's partition (:mod:`.row_packing`) where it is smaller: where it meets the
   lower bound, no solver runs;
4. for k from the best lower bound upward, the solver (:mod:`.solvers`) is asked for k rectangles,
   with S placed in rectangles 0..|S|-1; the first k it answers is the value.

The rectangles (over the input's own indices) are the upper certificate. The lower side is
``"rank"`` or ``"fooling set"`` when that bound equals the value (the checker recomputes it), else
``"solver proof"``: CaDiCaL's DRAT proof that the CNF for value - 1 rectangles is unsatisfiable,
kept (up to ``drat.MAX_PROOF_LINES`` = 200 000 lines) and re-checked by :mod:`.drat` against the CNF rebuilt
from the matrix; or ``"solver-proved"`` where the backend gives no proof (CP-SAT, z3): the named
solver found no value - 1 and nothing re-checks it.

Without a solver package (``solver="search"`` or none installed) the partition numbers come from
the branch and bound of :func:`~commcomp.matrix.partition.partition_number` (an optimal partition
of M holds an optimal one of each colour) and the cover numbers from a depth-bounded search over
maximal rectangles; ``result.solver`` says which ran.

Limits (the package docstring lists every one): ``MAX_SIDE`` (64) distinct nonzero rows and
columns and ``MAX_CELLS`` (2048) z-cells after reduction for the search (solver or fallback),
``MAX_CELLS_BOUNDS`` (2^20) reduced cells where the bounds meet (no search); the solver's
``MAX_CONFLICTS`` per call; the fallbacks as in :mod:`.partition`, and for covers
``MAX_FALLBACK_CELLS`` (40) z-cells after reduction and ``MAX_FALLBACK_NODES`` (200 000).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._modp import PRIMES, lu_mod_p
from .build import as_matrix, ceil_log2, reduce_matrix
from .drat import MAX_PROOF_LINES
from .fooling import _exact as _exact_fooling, _greedy as _greedy_fooling
from .partition import Rectangle, partition_number as _partition_search
from .row_packing import row_packing_partition
from .solvers import SOLVERS, find_rectangles, pick_solver
from ..errors import TooLargeError

__all__ = ["MAX_SIDE", "MAX_CELLS", "MAX_CELLS_BOUNDS", "MAX_FALLBACK_NODES", "MAX_FALLBACK_CELLS", "RectangleNumberResult",
           "partition_number_1", "partition_number_0", "cover_number_1", "cover_number_0",
           "rectangle_number"]

MAX_SIDE = 64
MAX_CELLS = 2048
MAX_FALLBACK_NODES = 200_000
MAX_FALLBACK_CELLS = 40
MAX_CELLS_BOUNDS = 2 ** 20
_FOOLING_NODES = 20_000


@dataclass(frozen=True)
class RectangleNumberResult:
    """χ_z or C^z of M with its rectangles (upper certificate) and its lower-bound certificate."""

    measure: str  # "partition_number_1", "partition_number_0", "cover_number_1", "cover_number_0"
    value: int
    colour: bool
    kind: str  # "partition" or "cover"
    rectangles: tuple[Rectangle, ...]
    lower_bound: int  # max(rank, fooling set): checks without the solver
    lower_bound_by: str  # "rank" | "fooling set" | "solver-proved" | "search" | "empty"
    rank: int | None  # rank of (M == colour) mod a prime below 2^20 (partitions only)
    fooling_set: tuple[tuple[int, int], ...]  # cells of value ``colour``, pairwise fooling
    solver: str  # what ran: a backend's description, or the branch and bound
    steps: tuple[tuple[int, bool, float], ...] = ()  # (k, feasible, seconds) asked of the solver
    proof: tuple[str, ...] = ()  # "solver proof": DRAT lines refuting value - 1 rectangles

    @property
    def bits(self) -> int:
        """``ceil(log2 value)``: for covers N¹(f) or N⁰(f)."""
        return ceil_log2(self.value) if self.value else 0

    @property
    def label(self) -> str:
        what = {"partition": "fewest disjoint", "cover": "fewest (overlapping)"}[self.kind]
        how = {"rank": "rank bound met", "fooling set": "fooling set met",
               "solver-proved": f"solver-proved by {self.solver}", "search": "exhaustive search",
               "solver proof": f"{self.solver}'s DRAT proof of no {self.value - 1}",
               "empty": f"no {int(self.colour)}-cells"}[self.lower_bound_by]
        return f"exact: {what} {int(self.colour)}-rectangles ({how})"

    @property
    def certificate(self) -> tuple[Rectangle, ...]:
        return self.rectangles


def rectangle_number(matrix, colour: bool, *, kind: str, solver: str | None = "auto",
                     max_conflicts: int | None = None):
    """χ_colour (``kind="partition"``) or C^colour (``kind="cover"``) of a matrix, certified.

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    colour : bool
    kind : {"partition", "cover"}
    solver : str, optional
        ``"auto"`` (default: the first installed of :data:`~commcomp.matrix.solvers.SOLVERS`, else
        the branch and bound), ``"search"`` (the branch and bound), or a backend name.
    max_conflicts : int, optional
        The solver's conflict budget per call (default ``solvers.MAX_CONFLICTS``).

    Returns
    -------
    RectangleNumberResult

    Raises
    ------
    TooLargeError
        Beyond :data:`MAX_SIDE` / :data:`MAX_CELLS` where the bounds do not meet, beyond
        :data:`MAX_CELLS_BOUNDS`, past the solver's conflict budget, or the fallback's limits.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    >>> rectangle_number(m, True, kind="partition").value, rectangle_number(m, True, kind="cover").value
    (3, 2)
    """
    if kind not in ("partition", "cover"):
        raise ValueError(f"kind must be 'partition' or 'cover', got {kind!r}")
    m = as_matrix(matrix)
    colour = bool(colour)
    measure = f"{kind}_number_{int(colour)}"
    backend = pick_solver(solver)
    ones = m == colour
    if not ones.any():
        return RectangleNumberResult(measure, 0, colour, kind, (), 0, "empty", 0, (), "none needed")
    red, row_class, col_class = reduce_matrix(ones, drop_zero=True)
    r, c = red.shape
    if red.size > MAX_CELLS_BOUNDS:
        raise TooLargeError(f"{measure}: the {int(colour)}-cells of {m.shape[0]}x{m.shape[1]} reduce "
                            f"to {r}x{c}; the limit is {MAX_CELLS_BOUNDS} cells")
    fooling = _fooling_set(red)
    rank = _rank(red) if kind == "partition" else None
    lower = max(len(fooling), rank or 0)
    upper = min(r, c)
    packed = row_packing_partition(red) if lower < upper else []  # cheap upper bound (a partition)
    if packed and len(packed) < upper:
        upper = len(packed)
    else:
        packed = []
    if lower < upper and (max(r, c) > MAX_SIDE or int(red.sum()) > MAX_CELLS):
        raise TooLargeError(f"{measure}: the {int(colour)}-cells of {m.shape[0]}x{m.shape[1]} reduce "
                            f"to {r}x{c} with {int(red.sum())} cells and the bounds {lower} <= "
                            f"{measure} <= {upper} do not meet; the search limits are {MAX_SIDE} "
                            f"distinct rows or columns and {MAX_CELLS} cells")

    def expand(rects):
        out = []
        for rows, cols in rects:
            if rows and cols:
                out.append(Rectangle(tuple(int(x) for x in np.flatnonzero(np.isin(row_class, rows))),
                                     tuple(int(y) for y in np.flatnonzero(np.isin(col_class, cols))),
                                     colour))
        return tuple(out)

    steps = []
    refuted: tuple[int, list] = (-1, [])  # the last k found infeasible, and its DRAT proof
    if lower >= upper and packed:  # the row-packing heuristic already meets the lower bound
        rects, ran = expand(packed), "none needed (row-packing heuristic meets the lower bound)"
    elif lower >= upper:  # one rectangle per distinct row (or column) already meets the lower bound
        rects, ran = _trivial(red, expand), "none needed (bounds meet)"
    elif backend is None:
        rects, ran = _fallback(m, red, colour, kind, lower, upper, expand, packed)
    else:
        ran = SOLVERS[backend].description
        rects = None
        for k in range(lower, upper):
            t0 = time.perf_counter()
            proof: list = []
            found = find_rectangles(red, k, exact=kind == "partition", fixed=fooling, solver=backend,
                                    proof=proof, max_conflicts=max_conflicts)
            steps.append((k, found is not None, time.perf_counter() - t0))
            if found is None:
                refuted = (k, proof)
            else:
                rects = expand(found)
                break
        if rects is None:  # every k below the upper bound refuted
            rects = expand(packed) if packed else _trivial(red, expand)
    value = len(rects)
    kept: tuple[str, ...] = ()
    if kind == "partition" and value == rank:
        by = "rank"
    elif value == len(fooling):
        by = "fooling set"
    elif backend is None:
        by = "search"
    elif refuted[0] == value - 1 and refuted[1] and len(refuted[1]) <= MAX_PROOF_LINES:
        by, kept = "solver proof", tuple(refuted[1])
    else:
        by = "solver-proved"
    cells = tuple((int(np.flatnonzero(row_class == i)[0]), int(np.flatnonzero(col_class == j)[0]))
                  for i, j in fooling)
    return RectangleNumberResult(measure, value, colour, kind, rects, lower, by, rank, cells, ran,
                                 tuple(steps), kept)


def _rectangle_measure(colour: bool, kind: str, doc: str):
    """The public function for one (colour, kind) pair of :func:`rectangle_number`, named
    ``{kind}_number_{colour}`` and carrying ``doc`` (its doctest runs with the module's)."""
    def measure(matrix, *, solver: str | None = "auto",
                max_conflicts: int | None = None) -> RectangleNumberResult:
        return rectangle_number(matrix, colour, kind=kind, solver=solver, max_conflicts=max_conflicts)

    measure.__name__ = measure.__qualname__ = f"{kind}_number_{int(colour)}"
    measure.__doc__ = doc
    return measure


partition_number_1 = _rectangle_measure(True, "partition",
    """χ₁: fewest 1-rectangles partitioning the 1-cells (see :func:`rectangle_number`).

    Examples
    --------
    >>> import numpy as np
    >>> partition_number_1(1 - np.eye(4, dtype=int)).value   # NOT-EQUALITY on 2 bits
    4
    """)

partition_number_0 = _rectangle_measure(False, "partition",
    """χ₀: fewest 0-rectangles partitioning the 0-cells (see :func:`rectangle_number`).

    Examples
    --------
    >>> import numpy as np
    >>> partition_number_0(np.eye(4, dtype=int)).value
    4
    """)

cover_number_1 = _rectangle_measure(True, "cover",
    """C¹: fewest 1-rectangles covering the 1-cells; ``result.bits`` is N¹(f).

    Examples
    --------
    >>> import numpy as np
    >>> res = cover_number_1(1 - np.eye(4, dtype=int))   # NOT-EQUALITY on 2 bits
    >>> res.value, res.bits   # fewest k with binomial(k, k // 2) >= 4 (for 3 bits: 5, not 2 * 3)
    (4, 2)
    """)

cover_number_0 = _rectangle_measure(False, "cover",
    """C⁰: fewest 0-rectangles covering the 0-cells; ``result.bits`` is N⁰(f).

    Examples
    --------
    >>> import numpy as np
    >>> cover_number_0(np.eye(4, dtype=int)).value
    4
    """)


def _rank(a: np.ndarray) -> int:
    """Rank mod a prime below 2^20: at most the rank over Q, so a valid lower bound on χ."""
    if a.shape[1] > a.shape[0]:
        a = a.T
    return len(lu_mod_p(a.astype(np.float64), PRIMES[0])[0])


def _fooling_set(red: np.ndarray) -> list[tuple[int, int]]:
    """A large 1-fooling set of the reduced matrix: the exact maximum within a small budget, else
    the greedy one."""
    best = _greedy_fooling(red, True)
    if len(best) < min(red.shape) and int(red.sum()) <= 400:
        try:
            best = _exact_fooling(red, True, len(best), "exact", _FOOLING_NODES) or best
        except TooLargeError:
            pass
    return best


def _trivial(red: np.ndarray, expand):
    """One rectangle per distinct row (or column, if fewer): a partition, hence also a cover."""
    if red.shape[0] <= red.shape[1]:
        return expand([((i,), tuple(np.flatnonzero(red[i]).tolist())) for i in range(red.shape[0])])
    return expand([(tuple(np.flatnonzero(red[:, j]).tolist()), (j,)) for j in range(red.shape[1])])


def _fallback(m, red, colour, kind, lower, upper, expand, packed=()):
    if kind == "partition":
        res = _partition_search(m)  # an optimal partition of M holds an optimal one of each colour
        return tuple(x for x in res.rectangles if x.value == colour), "branch and bound (no solver)"
    if lower < upper and int(red.sum()) > MAX_FALLBACK_CELLS:
        raise TooLargeError(f"{kind}_number_{int(colour)} without a solver: {int(red.sum())} "
                            f"{int(colour)}-cells after reduction; the branch and bound's limit is "
                            f"{MAX_FALLBACK_CELLS} (pip install 'commcomp[solver]')")
    rects = _maximal_rectangles(red)
    for k in range(lower, upper):
        found = _cover_search(red, rects, k)
        if found is not None:
            return expand(found), "branch and bound (no solver)"
    return (expand(packed) if packed else _trivial(red, expand)), "branch and bound (no solver)"


def _maximal_rectangles(red: np.ndarray) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every maximal all-ones rectangle: column sets closed under intersection of row supports."""
    supports = {sum(1 << int(j) for j in np.flatnonzero(row)) for row in red}
    closed, frontier = set(supports), set(supports)
    while frontier:
        new = {a & b for a in frontier for b in supports if a & b} - closed
        if len(closed) + len(new) > MAX_FALLBACK_NODES:
            raise TooLargeError(f"cover search: more than {MAX_FALLBACK_NODES} maximal rectangles")
        closed |= new
        frontier = new
    out = []
    for cols in closed:
        rows = tuple(i for i in range(red.shape[0]) if all(red[i, j] for j in _bits(cols)))
        out.append((rows, tuple(_bits(cols))))
    return out


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _cover_search(red: np.ndarray, rects, k: int):
    """k maximal rectangles covering every 1-cell, by depth-first search, or None.

    Branches on the uncovered cell in fewest maximal rectangles; prunes where a greedy fooling set
    of the uncovered cells (no rectangle holds two) exceeds the rectangles left, and where the same
    uncovered set already failed with as many rectangles left.
    """
    r, c = red.shape
    masks = [sum(1 << (i * c + j) for i in rows for j in cols) for rows, cols in rects]
    cells = [(int(i), int(j)) for i, j in zip(*np.nonzero(red))]  # Python ints: shifts past 63
    bit = {cell: 1 << (cell[0] * c + cell[1]) for cell in cells}
    holders = {cell: [t for t, mask in enumerate(masks) if mask & bit[cell]] for cell in cells}
    target = sum(bit.values())
    failed: dict[int, int] = {}
    nodes = [0]

    def fooling_bound(left: int) -> int:
        chosen: list[tuple[int, int]] = []
        for (i, j) in cells:
            if left & bit[i, j] and all(not (red[i, y] and red[x, j]) for x, y in chosen):
                chosen.append((i, j))
        return len(chosen)

    def dfs(left: int, budget: int, chosen: list):
        if not left:
            return list(chosen)
        if failed.get(left, -1) >= budget or fooling_bound(left) > budget:
            return None
        nodes[0] += 1
        if nodes[0] > MAX_FALLBACK_NODES:
            raise TooLargeError(f"cover search passed its budget of {MAX_FALLBACK_NODES} nodes")
        cell = min((cl for cl in cells if left & bit[cl]), key=lambda cl: len(holders[cl]))
        for t in holders[cell]:  # some rectangle must hold this cell
            chosen.append(t)
            found = dfs(left & ~masks[t], budget - 1, chosen)
            if found is not None:
                return found
            chosen.pop()
        failed[left] = budget
        return None

    found = dfs(target, k, [])
    return None if found is None else [rects[t] for t in found]
