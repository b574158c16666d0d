"""Fooling sets: exact maximum by clique search for small matrices, a greedy one beyond.

A z-fooling set is a set S of cells with ``M[x, y] = z`` such that for any two of them, (x1, y1) and
(x2, y2), ``M[x1, y2] != z`` or ``M[x2, y1] != z``. No monochromatic rectangle holds two of its cells,
so a protocol tree needs ``|S|`` z-leaves, plus a leaf for the other value when it occurs:
``D(f) >= ceil(log2(|S| + [M takes both values]))`` (Kushilevitz & Nisan 1997, ch. 1.3).

Two cells in one row (or column) never fool each other, and neither do cells in two equal rows, so
the search runs on the matrix with duplicate rows and columns removed and maps back to
first-appearance indices.

Methods: ``"exact"``: a maximum clique in the graph whose vertices are the z-cells and whose edges join
pairs that fool each other, for each z, by branch and bound over Python-int bitsets (greedy colouring
bound, Tomita & Seki's MCQ/San Segundo's BBMC), started from the greedy set so that only larger sets
are searched; ``"networkx"``: the same graph handed to ``networkx.max_weight_clique`` (slower; a
cross-check); ``"greedy"``: rows taken in order of fewest z-cells, each given the compatible z-column
that appears in fewest rows (a lower bound); ``"auto"`` (default): exact when within the limits,
and the greedy set, labelled as a lower bound, when not.

Size limits: ``"exact"`` at most ``MAX_EXACT_VERTICES`` (400) cells of each value in the reduced
matrix and ``max_nodes`` search nodes (default 200 000, a few seconds); ``"networkx"`` at most
``MAX_NETWORKX_VERTICES`` (128); ``"greedy"`` ``R' C' <= MAX_CELLS_GREEDY`` (2^24).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from .build import as_matrix, ceil_log2, first_positions, reduce_matrix
from ..errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_EXACT_VERTICES", "MAX_NETWORKX_VERTICES", "MAX_CELLS_GREEDY", "MAX_NODES",
           "FoolingSetResult", "largest_fooling_set",
           "is_fooling_set"]

MAX_EXACT_VERTICES = 400
MAX_NETWORKX_VERTICES = 128
MAX_CELLS_GREEDY = 2 ** 24
MAX_NODES = 200_000
METHODS = ("auto", "exact", "networkx", "greedy")


@dataclass(frozen=True)
class FoolingSetResult:
    """A fooling set (its cells are the certificate), its value z, and what its size means."""

    size: int
    value: bool  # the common value z of the cells
    cells: tuple[tuple[int, int], ...]  # (row, column) in the input matrix
    exact: bool  # True: no fooling set (of either value) is larger
    lower_bound_bits: int  # D(f) >= ceil(log2(size + [M takes both values]))
    method: str
    measure: str = "fooling"

    @property
    def label(self) -> str:
        if self.exact:
            return "exact: largest fooling set (maximum clique)"
        return "lower bound from a greedy fooling set"

    @property
    def certificate(self):
        return self.cells


def is_fooling_set(matrix, cells, value) -> bool:
    """Whether ``cells`` is a ``value``-fooling set of ``matrix`` (vectorised over all pairs).

    Examples
    --------
    >>> import numpy as np
    >>> is_fooling_set(np.eye(3, dtype=bool), [(0, 0), (1, 1), (2, 2)], True)
    True
    """
    m = as_matrix(matrix)
    c = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
    if len(c) == 0:
        return True
    x, y = c[:, 0], c[:, 1]
    if x.min() < 0 or y.min() < 0 or x.max() >= m.shape[0] or y.max() >= m.shape[1]:
        return False
    if not np.all(m[x, y] == bool(value)):
        return False
    cross = m[x[:, None], y[None, :]] == bool(value)  # cross[a, b]: M[x_a, y_b] == z
    both = cross & cross.T
    np.fill_diagonal(both, False)
    return not both.any()


def largest_fooling_set(matrix, *, method: str = "auto", max_nodes: int = MAX_NODES) -> FoolingSetResult:
    """The largest fooling set of a communication matrix (or a greedy one, labelled as such).

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    method : {"auto", "exact", "networkx", "greedy"}
        ``"auto"`` (default) is exact within the limits and greedy (labelled a lower bound) beyond.
    max_nodes : int
        Search nodes the exact branch and bound may visit (per value z).

    Returns
    -------
    FoolingSetResult

    Raises
    ------
    TooLargeError
        ``"exact"`` beyond :data:`MAX_EXACT_VERTICES` or ``max_nodes``; ``"networkx"`` beyond
        :data:`MAX_NETWORKX_VERTICES`; any method beyond :data:`MAX_CELLS_GREEDY`.

    Examples
    --------
    >>> from commcomp.matrix import problem_matrix
    >>> res = largest_fooling_set(problem_matrix("equality", 3))
    >>> res.size, res.value, res.exact, res.lower_bound_bits   # D(EQ_3) >= log2(8 + 1)
    (8, True, True, 4)
    """
    if method not in METHODS:
        raise InvalidParameterError(f"unknown fooling-set method {method!r}; known: {', '.join(METHODS)}")
    m = as_matrix(matrix)
    red, row_class, col_class = reduce_matrix(m)
    if red.size > MAX_CELLS_GREEDY:
        raise TooLargeError(f"fooling set: {m.shape[0]}x{m.shape[1]} reduces to {red.shape[0]}x"
                            f"{red.shape[1]}; the limit is {MAX_CELLS_GREEDY} cells")
    counts = {z: int((red == z).sum()) for z in (False, True)}
    present = [z for z in (True, False) if counts[z]]
    limit = MAX_NETWORKX_VERTICES if method == "networkx" else MAX_EXACT_VERTICES
    can_exact = all(counts[z] <= limit for z in present)
    if method in ("exact", "networkx") and not can_exact:
        raise TooLargeError(f"{method} fooling set: the reduced matrix {red.shape[0]}x{red.shape[1]} "
                            f"has {counts[False]} zeros and {counts[True]} ones; the limit is "
                            f"{limit} cells of each value")
    best = max((_greedy(red, z) for z in present), key=len)
    exact = len(best) == min(red.shape)  # one cell per row and per column at most: optimal
    if not exact and method != "greedy" and can_exact:
        try:
            for z in sorted(present, key=lambda v: -counts[v]):
                found = _exact(red, z, len(best), method, max_nodes)
                if found is not None:
                    best = found
            exact = True
        except TooLargeError:
            if method != "auto":
                raise
    z = bool(red[best[0]]) if best else True
    rows_of, cols_of = first_positions(row_class, red.shape[0]), first_positions(col_class, red.shape[1])
    cells = tuple((int(rows_of[i]), int(cols_of[j])) for i, j in best)
    both_values = counts[False] > 0 and counts[True] > 0
    used = "greedy" if method == "greedy" or not exact else "exact"
    return FoolingSetResult(size=len(cells), value=z, cells=cells, exact=exact,
                            lower_bound_bits=ceil_log2(len(cells) + int(both_values)), method=used)


def _greedy(red: np.ndarray, z: bool) -> list[tuple[int, int]]:
    """Rows with fewest z-cells first; each takes the compatible column in fewest z-rows."""
    hit = red == z  # (R', C')
    col_weight = hit.sum(axis=0)
    words = _pack64(hit)  # (R', W) uint64: hit rows as bit sets
    chosen_rows: list[int] = []
    chosen_cols: list[int] = []
    used = np.zeros(red.shape[1], dtype=bool)
    for x in np.argsort(hit.sum(axis=1), kind="stable"):
        if not hit[x].any():
            continue
        allowed = hit[x] & ~used
        if chosen_rows:
            # a chosen (a, b) with M[x, b] = z forbids every column y with M[a, y] = z
            clash = np.asarray(chosen_rows)[hit[x, chosen_cols]]
            if clash.size:
                forbidden = np.bitwise_or.reduce(words[clash], axis=0)
                allowed &= ~_unpack64(forbidden, red.shape[1])
        if allowed.any():
            cand = np.flatnonzero(allowed)
            y = int(cand[np.argmin(col_weight[cand])])
            chosen_rows.append(int(x))
            chosen_cols.append(y)
            used[y] = True
    return sorted(zip(chosen_rows, chosen_cols))


def _exact(red: np.ndarray, z: bool, at_least: int, method: str, max_nodes: int):
    """A maximum z-fooling set if it is larger than ``at_least``, else None."""
    xs, ys = np.nonzero(red == z)
    cross = red[xs[:, None], ys[None, :]] == z  # (V, V)
    fools = ~(cross & cross.T)  # joined: the two cells fool each other
    np.fill_diagonal(fools, False)
    if method == "networkx":
        clique, _ = nx.max_weight_clique(nx.from_numpy_array(fools.astype(np.int8)), weight=None)
    else:
        clique = _max_clique(fools, at_least, max_nodes)
    if len(clique) <= at_least:
        return None
    return sorted((int(xs[v]), int(ys[v])) for v in clique)


def _max_clique(adjacency: np.ndarray, at_least: int, max_nodes: int) -> list[int]:
    """A maximum clique if one has more than ``at_least`` vertices (else some smaller clique).

    Branch and bound on bitsets: candidates are coloured greedily (a colour class is independent, so
    the number of colours bounds the clique) and expanded from the highest colour down.
    """
    order = np.argsort(-adjacency.sum(axis=1), kind="stable")  # high degree first
    a = adjacency[np.ix_(order, order)]
    adj = [sum(1 << int(i) for i in np.flatnonzero(row)) for row in a]
    best: list[int] = []
    size = [at_least]  # size to beat
    nodes = [0]

    def colour(cand: int) -> list[tuple[int, int]]:
        out, k, rest = [], 0, cand
        while rest:
            k += 1
            free = rest
            while free:
                low = free & -free
                v = low.bit_length() - 1
                free &= ~adj[v] & ~low  # v's neighbours cannot share its colour
                rest &= ~low
                out.append((v, k))
        return out

    def expand(clique: list[int], cand: int) -> None:
        nonlocal best
        nodes[0] += 1
        if nodes[0] > max_nodes:
            raise TooLargeError(f"exact fooling set: the clique search passed its budget of "
                                f"{max_nodes} nodes")
        for v, k in reversed(colour(cand)):
            if len(clique) + k <= size[0]:
                return
            clique.append(v)
            nxt = cand & adj[v]
            if nxt:
                expand(clique, nxt)
            elif len(clique) > size[0]:
                best, size[0] = clique.copy(), len(clique)
            clique.pop()
            cand &= ~(1 << v)

    expand([], (1 << len(adj)) - 1)
    return [int(order[v]) for v in best]


def _pack64(bits: np.ndarray) -> np.ndarray:
    pad = (-bits.shape[1]) % 64
    padded = np.pad(bits, ((0, 0), (0, pad)))
    return np.packbits(padded, axis=1).view(np.uint64)  # (R, W)


def _unpack64(words: np.ndarray, ncols: int) -> np.ndarray:
    return np.unpackbits(words.view(np.uint8))[:ncols].astype(bool)
