"""The exact deterministic communication complexity D(f) of a tiny matrix, by protocol-tree search.

D(M) = 0 when M is monochromatic, else 1 + the least, over every way Alice can split her rows in two
(or Bob his columns), of the larger D of the two halves (Kushilevitz & Nisan 1997, ch. 1). The search
is exact and uses three facts to stay small:

* merging equal rows (and equal columns) of a sub-rectangle changes nothing (a protocol can send
  equal rows the same way), so each sub-rectangle is reduced and sorted into a canonical form, and
  results are memoised on it;
* the leaves of a depth-d tree partition M into at most 2^d monochromatic rectangles, at least
  rank(M) of value 1 and rank(J - M) of value 0 over any field, so
  ``D(M) >= ceil(log2(rank(M) + rank(J - M)))`` (ranks mod a prime, exact); rows only raise ranks, so
  a half that already breaks this bound prunes every split that contains it;
* sending the row index is a protocol: ``D(M) <= min(ceil(log2 R'), ceil(log2 C')) + 1``.

Iterative deepening from the lower bound then finds D and a tree of that depth; the tree (over the
input's own row and column indices) is the certificate.

Size limits: at most ``MAX_SIDE`` (32) distinct rows and 32 distinct columns, and ``max_nodes``
search nodes (default ``MAX_NODES`` = 200 000). Every matrix whose two bounds meet is solved without
search: EQ, DISJ, GT, IP and Index at every n up to 5, and every random 32x32 matrix tried. Larger
matrices are accepted when the bounds meet (then the tree is the row- or column-index protocol):
up to ``MAX_SIDE_BOUNDS_MET`` (256) on the smaller side and ``MAX_CELLS_BOUNDS_MET`` (2^20) cells,
e.g. EQ, DISJ, GT and IP up to n = 8 and Index up to n = 16. Where they
do not meet, refuting depth ``lo`` means trying every split whose halves pass the rank bound, which
is exponential: a 17x17 matrix with such a gap took about 49 000 nodes (5 s on the 2-core machine),
and a gap at 32 distinct rows is out of reach (TooLargeError at the budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

from ._modp import PRIMES, lu_mod_p
from .build import as_matrix, ceil_log2, reduce_matrix
from ..errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_SIDE", "MAX_SIDE_BOUNDS_MET", "MAX_CELLS_BOUNDS_MET", "MAX_NODES", "ProtocolLeaf", "ProtocolNode", "ProtocolTreeResult",
           "deterministic_cc", "tree_depth", "tree_leaves", "rank_sum_bound"]

MAX_SIDE = 32
MAX_SIDE_BOUNDS_MET = 256
MAX_CELLS_BOUNDS_MET = 2 ** 20
MAX_NODES = 200_000
_P = PRIMES[0]


@dataclass(frozen=True)
class ProtocolLeaf:
    """The protocol ends and outputs ``value``."""

    value: bool


@dataclass(frozen=True)
class ProtocolNode:
    """``speaker`` ("alice" or "bob") sends 0 when her/his input is in ``zero``, else 1."""

    speaker: str
    zero: frozenset  # row indices (alice) or column indices (bob) that send bit 0
    child0: "ProtocolTree"
    child1: "ProtocolTree"


ProtocolTree = Union[ProtocolLeaf, ProtocolNode]


def tree_depth(tree: ProtocolTree) -> int:
    """Bits sent on the longest path."""
    if isinstance(tree, ProtocolLeaf):
        return 0
    return 1 + max(tree_depth(tree.child0), tree_depth(tree.child1))


def tree_leaves(tree: ProtocolTree) -> int:
    """Number of leaves."""
    if isinstance(tree, ProtocolLeaf):
        return 1
    return tree_leaves(tree.child0) + tree_leaves(tree.child1)


@dataclass(frozen=True)
class ProtocolTreeResult:
    """D(f), the lower bound that matched it (or the search that proved it), and the tree."""

    deterministic_cc: int
    rank_bound: int  # ceil(log2(rank(M) + rank(J - M))), ranks mod a prime
    lower_bound_by: str  # "rank": the rank bound equals D; "search": iterative deepening refuted D - 1;
    # "partition number": D = ceil(log2(χ₁ + χ₀)), the two results in ``partition``
    tree: ProtocolTree
    leaves: int
    search_nodes: int
    method: str = "search"
    measure: str = "deterministic_cc"
    partition: tuple = ()  # (χ₁ result, χ₀ result) when their bound was used

    @property
    def label(self) -> str:
        how = {"rank": "rank bound met", "search": "exhaustive search",
               "partition number": "ceil(log2 partition number) met"}[self.lower_bound_by]
        return f"exact: D(f) by protocol-tree search ({how}; the tree is the certificate)"

    @property
    def certificate(self) -> ProtocolTree:
        return self.tree


def rank_sum_bound(matrix) -> int:
    """``ceil(log2(rank(M) + rank(J - M)))`` with ranks mod a prime below 2^20 (a valid lower bound
    on D(f) and on the number of rectangles in a partition, when taken before the log).

    Examples
    --------
    >>> import numpy as np
    >>> rank_sum_bound(np.eye(4, dtype=bool))   # 4 + 4 leaves at least: D(EQ_2) >= 3
    3
    """
    m = as_matrix(matrix)
    if m.all() or not m.any():
        return 0
    return ceil_log2(_rank(m) + _rank(~m))


def deterministic_cc(matrix, *, method: str = "search", max_nodes: int = MAX_NODES,
                     partition: tuple = ()) -> ProtocolTreeResult:
    """The exact deterministic complexity D(f) of a tiny matrix, with an optimal protocol tree.

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    method : {"search"}
        Iterative deepening over protocol trees, memoised on canonical sub-rectangles and pruned by
        the rank bound (see the module docstring).
    max_nodes : int
        Search budget; past it, TooLargeError.
    partition : tuple, optional
        The χ₁ and χ₀ results (:mod:`.rectangles`) of this matrix: the leaves of a tree partition
        M, so ``D >= ceil(log2(χ₁ + χ₀))``, which starts the deepening where it beats the rank
        bound (and admits more than :data:`MAX_SIDE` distinct rows when it meets the protocol).

    Returns
    -------
    ProtocolTreeResult

    Raises
    ------
    TooLargeError
        More than :data:`MAX_SIDE` distinct rows or columns where the bounds do not meet (or beyond
        :data:`MAX_SIDE_BOUNDS_MET` / :data:`MAX_CELLS_BOUNDS_MET` where they do), or more than
        ``max_nodes`` nodes.

    Examples
    --------
    >>> from commcomp.matrix import problem_matrix
    >>> res = deterministic_cc(problem_matrix("equality", 3))
    >>> res.deterministic_cc, res.lower_bound_by, res.leaves
    (4, 'rank', 16)
    """
    if method != "search":
        raise InvalidParameterError(f"unknown method {method!r} for D(f); known: 'search'")
    m = as_matrix(matrix)
    red, _, _ = reduce_matrix(m)
    r, c = red.shape
    where = f"D(f): {m.shape[0]}x{m.shape[1]} has {r} distinct rows and {c} distinct columns"
    large = max(r, c) > MAX_SIDE
    if large and (min(r, c) > MAX_SIDE_BOUNDS_MET or r * c > MAX_CELLS_BOUNDS_MET):
        raise TooLargeError(f"{where}; the limit is {MAX_SIDE} of each for the search, and "
                            f"{MAX_SIDE_BOUNDS_MET} on the smaller side (at most "
                            f"{MAX_CELLS_BOUNDS_MET} cells) when the bounds meet")
    search = _Search(max_nodes)
    canon = _canon(red)[0]
    top = search.entry(canon)
    bound = search.lower(canon, top)
    if partition and sorted(p.measure for p in partition) != ["partition_number_0", "partition_number_1"]:
        raise InvalidParameterError("partition: pass the partition_number_1 and _0 results")
    chi_bound = ceil_log2(sum(res.value for res in partition)) if partition else 0
    top.lo = max(top.lo, chi_bound)
    if large and max(bound, chi_bound) < top.hi:
        raise TooLargeError(f"{where}; the rank bound {bound} is below the index protocol's "
                            f"{top.hi}, and the search is limited to {MAX_SIDE} of each")
    depth = max(bound, chi_bound)
    while depth < top.hi and not search.fits(canon, depth):
        depth += 1
    tree = search.build(m, np.arange(m.shape[0]), np.arange(m.shape[1]), depth)
    by = "rank" if depth == bound else "partition number" if depth == chi_bound else "search"
    return ProtocolTreeResult(deterministic_cc=depth, rank_bound=bound, lower_bound_by=by, tree=tree,
                              leaves=tree_leaves(tree), search_nodes=search.nodes,
                              partition=tuple(partition) if by == "partition number" else ())


def _rank(a: np.ndarray) -> int:
    """Rank mod a prime of a 0/1 matrix (a lower bound on the rank over Q)."""
    if a.shape[1] > a.shape[0]:
        a = a.T  # fewer columns: fewer elimination steps
    return len(lu_mod_p(a.astype(np.float64), _P)[0])


def _canon(sub: np.ndarray):
    """Sorted distinct rows, then sorted distinct columns; and where each row and column went."""
    rows_u, inv_r = np.unique(sub, axis=0, return_inverse=True)
    cols_u, inv_c = np.unique(rows_u.T, axis=0, return_inverse=True)
    return np.ascontiguousarray(cols_u.T), inv_r.reshape(-1), inv_c.reshape(-1)


class _Echelon:
    """A reduced row-echelon basis mod p that grows one row at a time (immutable: add copies)."""

    __slots__ = ("basis", "pivots")

    def __init__(self, basis=None, pivots=()):
        self.basis = basis  # (rank, c) float64 residues, reduced echelon form, or None
        self.pivots = pivots

    @property
    def rank(self) -> int:
        return len(self.pivots)

    def add(self, v: np.ndarray) -> "_Echelon":
        if self.pivots:  # reduced form: the coefficients are v's entries at the pivots
            v = np.mod(v - v[list(self.pivots)] @ self.basis, _P)  # <= 32 terms below 2^40: exact
        nz = np.flatnonzero(v)
        if nz.size == 0:
            return self
        j = int(nz[0])
        v = np.fmod(v * pow(int(v[j]), _P - 2, _P), _P)
        if not self.pivots:
            return _Echelon(v[None, :], (j,))
        basis = np.mod(self.basis - np.outer(self.basis[:, j], v), _P)
        return _Echelon(np.vstack([basis, v]), self.pivots + (j,))


@dataclass
class _Entry:
    lo: int  # D >= lo is proved
    hi: int  # D <= hi, by plan
    plan: tuple  # ("leaf", value) | ("alice", row mask) | ("bob", column mask), in canonical indices
    ranked: bool = False  # lo includes the rank bound


class _Search:
    def __init__(self, max_nodes: int):
        self.memo: dict[tuple, _Entry] = {}
        self.nodes = 0
        self.max_nodes = max_nodes

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise TooLargeError(f"D(f) search passed its budget of {self.max_nodes} nodes")

    def entry(self, canon: np.ndarray) -> _Entry:
        key = (canon.shape, np.packbits(canon).tobytes())
        e = self.memo.get(key)
        if e is None:
            e = self.memo[key] = self._new_entry(canon)
        return e

    @staticmethod
    def _new_entry(canon: np.ndarray) -> _Entry:
        r, c = canon.shape
        if canon.all() or not canon.any():
            return _Entry(0, 0, ("leaf", bool(canon.flat[0])), ranked=True)
        if ceil_log2(r) <= ceil_log2(c):  # Alice sends her row, bit by bit, then Bob the answer
            plan = ("alice", np.arange(r) < (r + 1) // 2) if r > 1 else ("bob", ~canon[0])
            return _Entry(1, ceil_log2(r) + 1, plan)
        plan = ("bob", np.arange(c) < (c + 1) // 2) if c > 1 else ("alice", ~canon[:, 0])
        return _Entry(1, ceil_log2(c) + 1, plan)

    @staticmethod
    def lower(canon: np.ndarray, e: _Entry) -> int:
        """The entry's proved lower bound, raised to the rank bound the first time it is asked."""
        if not e.ranked:
            e.lo = max(e.lo, ceil_log2(_rank(canon) + _rank(~canon)))
            e.ranked = True
        return e.lo

    def fits(self, canon: np.ndarray, d: int) -> bool:
        """Whether D(canon) <= d; on success the entry's plan achieves depth d."""
        e = self.entry(canon)
        if d >= e.hi:
            return True
        if d < self.lower(canon, e):
            return False
        self._tick()
        for speaker in ("alice", "bob"):
            mask = self._find_split(canon, speaker, d - 1)
            if mask is not None:
                e.hi, e.plan = d, (speaker, mask)
                return True
        e.lo = d + 1
        return False

    def _find_split(self, canon: np.ndarray, speaker: str, d1: int):
        """A split of the speaker's inputs into two halves that both fit depth d1, or None.

        Depth-first over the inputs, each put in half 0 or half 1 (input 0 always in half 0). A half
        whose ranks already exceed what depth d1 allows, ``rank(M) + rank(J - M) > 2^d1``, is
        abandoned with every extension of it (ranks are kept incrementally).
        """
        items = canon if speaker == "alice" else canon.T  # (k, c): the speaker's inputs as rows
        k = items.shape[0]
        if k < 2:
            return None
        ones = items.astype(np.float64)
        zeros = 1.0 - ones
        room = 1 << d1  # leaves available to each half

        def part(idx):
            return _canon(canon[idx] if speaker == "alice" else canon[:, idx])[0]

        members: tuple[list[int], list[int]] = ([0], [])
        ranks = [(_Echelon().add(ones[0]), _Echelon().add(zeros[0])), (_Echelon(), _Echelon())]
        if ranks[0][0].rank + ranks[0][1].rank > room:
            return None

        def dfs(i: int):
            if i == k:
                if members[1] and self.fits(part(members[0]), d1) and self.fits(part(members[1]), d1):
                    mask = np.zeros(k, dtype=bool)
                    mask[members[0]] = True
                    return mask
                return None
            self._tick()
            for s in (0, 1):
                saved = ranks[s]
                grown = (saved[0].add(ones[i]), saved[1].add(zeros[i]))
                if grown[0].rank + grown[1].rank > room:
                    continue  # this half can no longer be done in depth d1, nor any larger one
                ranks[s] = grown
                members[s].append(i)
                found = dfs(i + 1)
                if found is not None:
                    return found
                members[s].pop()
                ranks[s] = saved
            return None

        return dfs(1)

    def build(self, m: np.ndarray, rows: np.ndarray, cols: np.ndarray, d: int) -> ProtocolTree:
        """A tree of depth <= d for ``m[rows][:, cols]``, over the input's own indices."""
        canon, inv_r, inv_c = _canon(m[np.ix_(rows, cols)])
        if not self.fits(canon, d):
            raise AssertionError("build asked for a depth the search did not reach")
        kind, how = self.entry(canon).plan
        if kind == "leaf":
            return ProtocolLeaf(how)
        if kind == "alice":
            go0 = how[inv_r]  # each original row follows its canonical row
            return ProtocolNode("alice", frozenset(int(x) for x in rows[go0]),
                                self.build(m, rows[go0], cols, d - 1),
                                self.build(m, rows[~go0], cols, d - 1))
        go0 = how[inv_c]
        return ProtocolNode("bob", frozenset(int(y) for y in cols[go0]),
                            self.build(m, rows, cols[go0], d - 1),
                            self.build(m, rows, cols[~go0], d - 1))
