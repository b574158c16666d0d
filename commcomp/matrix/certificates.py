"""One checker for every certificate: ``check_certificate(result, matrix)``.

The checker trusts nothing the measure computed except the certificate, and verifies it against the
matrix by a method other than the one that found it:

* distinct rows: every row equals its class representative, and the representatives are pairwise
  distinct (a Python set of row bytes, not a sort);
* rank over Q: the pivot minor equals the given L U mod the given prime (L unit lower, U upper with a
  nonzero diagonal), so it is nonsingular over Q; and every other row times the denominator equals
  its integer combination of basis rows, exactly. Together: rank = r;
* rank over GF(2): each echelon vector, rebuilt by xor from the rows it names (a triangular change of
  basis), has its own first column, so the basis rows are independent; every other row is the xor
  of the basis rows it names;
* fooling set: the cells hold the claimed value and every pair fools each other;
* protocol tree: run on the whole matrix, every leaf's rectangle holds the leaf's value, and the
  depth is the claimed D;
* partition: the rectangles are monochromatic and cover every cell exactly once;
* partition / cover numbers of one colour z (χ_z, C^z): the rectangles hold only z-cells and cover
  every z-cell exactly once (partition) or at least once (cover); the fooling set's cells hold z and
  pairwise fool; the lower side is recomputed (rank over Q by Bareiss, or the fooling set's size),
  or the solver's DRAT proof that value - 1 rectangles cannot do is checked (:mod:`.drat`) on the
  CNF rebuilt from the matrix; where it rests on a solver without a proof the check says which.

Where a lower side rests on the rank bound (D(f), partition number), the ranks are recomputed over Q
with fraction-free (Bareiss) elimination on Python integers; where it rests on the search alone, the
check says so.

Examples
--------
>>> from commcomp.matrix import problem_matrix, rank_rational
>>> m = problem_matrix("disjointness", 3)
>>> check = check_certificate(rank_rational(m), m)
>>> bool(check), check.measure
(True, 'rank_rational')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from ._modp import PRIMES, integer_product_equals, lu_mod_p, matmul_mod
from .build import as_matrix, ceil_log2, reduce_matrix
from .discrepancy import MAX_WORK, DiscrepancyResult, check_discrepancy, max_imbalance_batch
from .drat import check_drat
from .solvers import rectangle_cnf
from .fooling import FoolingSetResult
from .partition import PartitionResult
from .rectangles import RectangleNumberResult
from .protocol_tree import ProtocolLeaf, ProtocolNode, ProtocolTreeResult
from .rank import RankResult
from .rows import DistinctRowsResult

__all__ = ["CertificateCheck", "check_certificate", "rank_over_q_bareiss", "STATUSES"]


STATUSES = ("verified", "unverified", "rejected")


@dataclass(frozen=True)
class CertificateCheck:
    """The verdict on one certificate; true only when every part of it was re-verified.

    ``status`` is ``verified`` (``ok`` true: the value and its minimality were both re-checked here),
    ``unverified`` (what was checked holds, but part of the claim, say the minimality, rests on a
    solver or a search that was not re-checked: ``ok`` false) or ``rejected`` (something is wrong).
    """

    measure: str
    ok: bool
    detail: str
    status: str = ""

    def __post_init__(self):
        if not self.status:
            object.__setattr__(self, "status", "verified" if self.ok else "rejected")
        if self.status not in STATUSES or self.ok != (self.status == "verified"):
            raise ValueError(f"inconsistent certificate check: ok={self.ok}, status={self.status!r}")

    def __bool__(self) -> bool:
        return self.ok


class _Unverified(str):
    """A detail whose claim rests in part on something not re-verified (check_certificate: ok=False)."""


def _unverified_if(detail: str, parts) -> str:
    return _Unverified(detail) if any(isinstance(p, _Unverified) for p in parts) else detail


class _Reject(Exception):
    pass


def _require(cond, why: str) -> None:
    if not cond:
        raise _Reject(why)


def check_certificate(result, matrix) -> CertificateCheck:
    """Re-verify the certificate carried by a measure's result against the matrix.

    Parameters
    ----------
    result : DistinctRowsResult, RankResult, FoolingSetResult, ProtocolTreeResult, PartitionResult
        or RectangleNumberResult
    matrix : (R, C) 0/1 array the result was computed from

    Returns
    -------
    CertificateCheck
        ``ok`` and a one-line ``detail`` (what was verified, or why the certificate was rejected).
    """
    m = as_matrix(matrix)
    checks = {DistinctRowsResult: _rows, FoolingSetResult: _fooling, ProtocolTreeResult: _tree,
              PartitionResult: _partition, RectangleNumberResult: _rectangle_number,
              DiscrepancyResult: _discrepancy}
    if isinstance(result, RankResult):
        fn = _rank_q if result.field == "Q" else _rank_gf2
    else:
        fn = checks.get(type(result))
        if fn is None:
            raise TypeError(f"no certificate checker for {type(result).__name__}")
    try:
        detail = fn(result, m)
    except _Reject as why:
        return CertificateCheck(result.measure, False, f"rejected: {why}")
    except (IndexError, ValueError, TypeError, AttributeError) as err:  # malformed certificate
        return CertificateCheck(result.measure, False, f"rejected: malformed certificate ({err})")
    if isinstance(detail, _Unverified):
        return CertificateCheck(result.measure, False, f"unverified: {detail}", "unverified")
    return CertificateCheck(result.measure, True, detail)


def _discrepancy(res: DiscrepancyResult, m: np.ndarray) -> str:
    """The rectangle's signed sum re-added; an exact value's maximality re-searched over the subsets of
    the *columns* (distinct, weighted), one block of masks at a time (unverified where that is too large)."""
    try:
        detail = check_discrepancy(res, m)
    except ValueError as why:
        raise _Reject(str(why)) from None
    if not res.exact:
        return detail + "; the value is the spectral upper bound, recomputed"
    a = 1 - 2 * m.astype(np.int64)
    cols, counts = np.unique(a, axis=1, return_counts=True)  # (R, k)
    weighted = (cols * counts[None, :]).T  # (k, R): each distinct column once, times its multiplicity
    k = weighted.shape[0]
    if k >= 62 or (1 << k) * k * a.shape[0] > MAX_WORK:
        return _Unverified(detail + f"; maximality rests on the search (2^{k} column subsets: too many to re-run)")
    best = 0
    block = max(1, (1 << 22) // a.shape[0])
    for start in range(0, 1 << k, block):
        stop = min(1 << k, start + block)
        masks = (np.arange(start, stop)[:, None] >> np.arange(k)) & 1  # (b, k)
        best = max(best, int(max_imbalance_batch((masks @ weighted)[:, None, :])[0].max()))
    _require(best == abs(res.imbalance), f"a column subset reaches {best}, not {abs(res.imbalance)}")
    return detail + f"; maximal over all 2^{k} distinct-column subsets, re-searched"


def _rows(res: DistinctRowsResult, m: np.ndarray) -> str:
    cert = res.certificate
    reps = np.asarray(cert.representatives, dtype=np.int64)
    cls = np.asarray(cert.row_class)
    k = res.distinct_rows
    _require(len(reps) == k and cls.shape == (m.shape[0],), "wrong number of classes or labels")
    _require(cls.min() >= 0 and cls.max() < k, "class label out of range")
    _require(np.array_equal(cls[reps], np.arange(k)), "a representative is not in its own class")
    _require(np.array_equal(m, m[reps[cls]]), "a row differs from its class representative")
    _require(len({m[i].tobytes() for i in reps}) == k, "two representatives are equal rows")
    _require(res.one_way_bits == ceil_log2(k), "one_way_bits is not ceil(log2 #distinct rows)")
    return f"{m.shape[0]} rows fall into {k} classes of equal rows with distinct representatives"


def _rank_q(res: RankResult, m: np.ndarray) -> str:
    cert = res.certificate
    rows, cols = list(cert.basis_rows), list(cert.basis_cols)
    r, p = res.rank, int(cert.prime)
    _require(len(rows) == len(cols) == r, "basis size differs from the rank")
    _require(len(set(rows)) == r and len(set(cols)) == r, "repeated basis row or column")
    _require(res.log_rank_bound == (ceil_log2(r) if r else 0), "log_rank_bound is not ceil(log2 rank)")
    if r:
        _require(sympy.isprime(p) and p < 2 ** 20, "the modulus is not a prime below 2^20")
        low, up = np.asarray(cert.lower, dtype=np.float64), np.asarray(cert.upper, dtype=np.float64)
        _require(low.shape == (r, r) and up.shape == (r, r), "factor shapes")
        for f in (low, up):
            _require(np.all(f == np.round(f)) and f.min() >= 0 and f.max() < p, "factor entries")
        _require(np.all(np.triu(low, 1) == 0) and np.all(np.diag(low) == 1), "L is not unit lower")
        _require(np.all(np.tril(up, -1) == 0) and np.all(np.diag(up) != 0), "U is not upper "
                 "triangular with a nonzero diagonal")
        minor = m[np.ix_(rows, cols)].astype(np.float64)
        _require(np.array_equal(matmul_mod(low, up, p), minor), "L U differs from the minor mod p")
    dep = np.asarray(cert.dependent_rows, dtype=np.int64)
    _require(sorted(rows + dep.tolist()) == list(range(m.shape[0])),
             "basis and dependent rows do not list every row once")
    den = int(cert.denominator)
    _require(den >= 1, "denominator must be positive")
    numer = np.asarray(cert.numerators)
    _require(numer.shape == (len(dep), r), "numerator shape")
    rhs = m[dep].astype(object) * den if den >= 2 ** 62 else m[dep].astype(np.int64) * den
    _require(integer_product_equals(numer, m[rows], rhs),
             "a dependent row is not the stated combination of basis rows")
    return (f"rank over Q = {r}: pivot minor nonsingular (= L U mod {p}), {len(dep)} other rows "
            f"are exact rational combinations of the basis rows")


def _lowbit_ints(a: np.ndarray) -> list[int]:
    """Rows as Python ints with column c at bit c (the other bit order from the solver's)."""
    packed = np.packbits(a, axis=1, bitorder="little")
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


def _rank_gf2(res: RankResult, m: np.ndarray) -> str:
    cert = res.certificate
    _require(cert.axis in (0, 1), "axis must be 0 or 1")
    a = m if cert.axis == 0 else m.T
    ints = _lowbit_ints(a)
    rows, r = list(cert.basis_rows), res.rank
    _require(len(rows) == r == len(cert.pivot_cols) == len(cert.echelon), "basis size")
    _require(len(set(cert.pivot_cols)) == r, "two echelon vectors share a first column")
    _require(res.log_rank_bound == (ceil_log2(r) if r else 0), "log_rank_bound is not ceil(log2 rank)")
    for t, mask in enumerate(cert.echelon):
        _require(mask >> t & 1 and mask >> (t + 1) == 0 and mask >= 0,
                 "the change of basis is not unit triangular")
        vec = _xor(ints, rows, mask)
        _require(vec and (vec & -vec).bit_length() - 1 == cert.pivot_cols[t],
                 f"echelon vector {t} does not start at its pivot column")
    dep = np.asarray(cert.dependent_rows, dtype=np.int64)
    _require(sorted(rows + dep.tolist()) == list(range(a.shape[0])),
             "basis and dependent rows do not list every row once")
    _require(len(cert.dependencies) == len(dep), "one dependency per dependent row")
    for k, mask in zip(dep.tolist(), cert.dependencies):
        _require(0 <= mask < (1 << r) and _xor(ints, rows, mask) == ints[k],
                 f"row {k} is not the xor of the basis rows named")
    what = "rows" if cert.axis == 0 else "columns"
    return f"rank over GF(2) = {r}: {r} independent {what} (distinct pivots), the others their xors"


def _xor(ints: list[int], rows: list[int], mask: int) -> int:
    acc, t = 0, 0
    while mask:
        if mask & 1:
            acc ^= ints[rows[t]]
        mask >>= 1
        t += 1
    return acc


def _fooling(res: FoolingSetResult, m: np.ndarray) -> str:
    cells = np.asarray(res.cells, dtype=np.int64).reshape(-1, 2)
    _require(len(cells) == res.size, "size differs from the number of cells")
    _require(len({tuple(c) for c in cells.tolist()}) == len(cells), "repeated cell")
    if len(cells):
        x, y = cells[:, 0], cells[:, 1]
        _require(x.min() >= 0 and y.min() >= 0 and x.max() < m.shape[0] and y.max() < m.shape[1],
                 "cell out of range")
        _require(np.all(m[x, y] == res.value), "a cell does not hold the fooling value")
        same_x = m[np.ix_(x, y)] == res.value  # (s, s): M[x_a, y_b] == z
        clash = same_x & same_x.T
        clash[np.arange(len(x)), np.arange(len(x))] = False
        _require(not clash.any(), "two cells do not fool each other")
    both = bool(m.any()) and not bool(m.all())
    _require(res.lower_bound_bits == ceil_log2(res.size + int(both)), "lower_bound_bits")
    return f"{res.size} cells of value {int(res.value)}, pairwise fooling"


def _tree(res: ProtocolTreeResult, m: np.ndarray) -> str:
    depth, leaves = _walk(res.tree, m, np.arange(m.shape[0]), np.arange(m.shape[1]))
    _require(depth == res.deterministic_cc, f"tree depth {depth} differs from D = {res.deterministic_cc}")
    _require(leaves == res.leaves, "leaf count")
    if res.lower_bound_by == "partition number":
        lower = _partition_side(res, m)
    else:
        lower = _lower_side(m, res.deterministic_cc, res.lower_bound_by, log=True)
    return _unverified_if(f"the tree computes M on every cell with depth {depth}; {lower}", [lower])


def _walk(tree, m: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[int, int]:
    if isinstance(tree, ProtocolLeaf):
        _require(np.all(m[np.ix_(rows, cols)] == tree.value), "a leaf's rectangle is not monochromatic")
        return 0, 1
    _require(isinstance(tree, ProtocolNode) and tree.speaker in ("alice", "bob"), "bad tree node")
    zero = np.fromiter(tree.zero, dtype=np.int64, count=len(tree.zero))
    if tree.speaker == "alice":
        go0 = np.isin(rows, zero)
        a, b = _walk(tree.child0, m, rows[go0], cols), _walk(tree.child1, m, rows[~go0], cols)
    else:
        go0 = np.isin(cols, zero)
        a, b = _walk(tree.child0, m, rows, cols[go0]), _walk(tree.child1, m, rows, cols[~go0])
    return 1 + max(a[0], b[0]), a[1] + b[1]


def _partition(res: PartitionResult, m: np.ndarray) -> str:
    count = np.zeros(m.shape, dtype=np.int64)
    for rect in res.rectangles:
        rs, cs = list(rect.rows), list(rect.cols)
        _require(rs and cs, "empty rectangle")
        _require(np.all(m[np.ix_(rs, cs)] == rect.value), "a rectangle is not monochromatic")
        np.add.at(count, np.ix_(rs, cs), 1)
    _require(np.all(count == 1), "the rectangles do not cover every cell exactly once")
    _require(len(res.rectangles) == res.partition_number, "count differs from partition_number")
    lower = _lower_side(m, res.partition_number, res.lower_bound_by, log=False)
    return _unverified_if(f"{res.partition_number} disjoint monochromatic rectangles cover M; {lower}", [lower])


def _rectangle_number(res: RectangleNumberResult, m: np.ndarray) -> str:
    z, value = res.colour, res.value
    cells = m == z
    count = np.zeros(m.shape, dtype=np.int64)
    for rect in res.rectangles:
        rs, cs = list(rect.rows), list(rect.cols)
        _require(rs and cs and rect.value == z, "empty rectangle or one of the other colour")
        _require(np.all(cells[np.ix_(rs, cs)]), f"a rectangle holds a cell that is not {int(z)}")
        np.add.at(count, np.ix_(rs, cs), 1)
    covered = np.all(count[cells] == 1) if res.kind == "partition" else np.all(count[cells] >= 1)
    _require(covered, f"the rectangles do not {res.kind} the {int(z)}-cells")
    _require(len(res.rectangles) == value, "count differs from the value")
    fool = np.asarray(res.fooling_set, dtype=np.int64).reshape(-1, 2)
    if len(fool):
        x, y = fool[:, 0], fool[:, 1]
        _require(np.all(cells[x, y]), f"a fooling cell is not {int(z)}")
        cross = cells[np.ix_(x, y)]
        clash = cross & cross.T
        np.fill_diagonal(clash, False)
        _require(not clash.any() and len({tuple(c) for c in fool.tolist()}) == len(fool),
                 "the fooling cells do not pairwise fool")
    lower = len(fool)
    if res.kind == "partition" and cells.any():
        red = np.unique(np.unique(cells, axis=0).T, axis=0)
        # rank mod a prime is at most the rank over Q, so beyond Bareiss's size it still proves it
        lower = max(lower, rank_over_q_bareiss(red) if red.size <= 4096 else
                    len(lu_mod_p(red.astype(np.float64), PRIMES[1])[0]))
    _require(lower >= res.lower_bound, f"the stated lower bound {res.lower_bound} is not reached")
    what = f"{value} {int(z)}-rectangles {res.kind} the {int(z)}-cells"
    if res.lower_bound_by == "solver proof":
        return f"{what}; minimal: {_refutation(res, m)}"
    if res.lower_bound_by in ("rank", "fooling set", "empty"):
        _require(lower >= value, f"the {res.lower_bound_by} bound {lower} does not reach {value}")
        return f"{what}; minimal: {res.lower_bound_by} bound {lower} re-computed"
    return _Unverified(f"{what}; lower bound {lower} re-checked (rank / fooling set); the rest, no "
                       f"{value - 1}, is {res.lower_bound_by} by {res.solver} (not re-verified)")


def _refutation(res: RectangleNumberResult, m: np.ndarray) -> str:
    """Rebuild the CNF for value - 1 rectangles from the matrix and check the DRAT proof on it."""
    red, row_class, col_class = reduce_matrix(m == res.colour, drop_zero=True)
    fixed = [(int(row_class[i]), int(col_class[j])) for i, j in res.fooling_set]
    clauses = rectangle_cnf(red, res.value - 1, exact=res.kind == "partition", fixed=fixed)[0]
    ok, detail = check_drat(clauses, res.proof)
    _require(ok, f"the DRAT proof of no {res.value - 1} does not check: {detail}")
    return (f"no {res.value - 1} (the CNF rebuilt from M, with the fooling set fixed; "
            f"{res.solver}'s DRAT proof re-checked: {detail})")


def _partition_side(res: ProtocolTreeResult, m: np.ndarray) -> str:
    """D >= ceil(log2(χ₁ + χ₀)): the two partition results are checked here too."""
    parts = {p.measure: p for p in res.partition}
    _require(set(parts) == {"partition_number_1", "partition_number_0"}, "partition results missing")
    details, held = [], []
    for p in parts.values():
        held.append(_rectangle_number(p, m))  # raises _Reject when it does not hold
        details.append({"solver-proved": f"solver-proved by {p.solver}, not re-verified",
                        "solver proof": "DRAT proof re-checked"}.get(p.lower_bound_by, p.lower_bound_by))
    chi = sum(p.value for p in parts.values())
    _require(ceil_log2(chi) >= res.deterministic_cc, f"ceil(log2 {chi}) does not reach D")
    return _unverified_if(f"minimal: D >= ceil(log2 partition number {chi}) (χ₁, χ₀: {'; '.join(details)})", held)


def _lower_side(m: np.ndarray, value: int, how: str, *, log: bool) -> str:
    if how != "rank":
        return _Unverified("minimality rests on the exhaustive search (not re-verified)")
    red = np.unique(np.unique(m, axis=0).T, axis=0)  # equal rows/columns do not change ranks
    if red.size <= 4096:
        total, how = rank_over_q_bareiss(red) + rank_over_q_bareiss(~red), "over Q (Bareiss)"
    else:  # rank mod a prime is at most the rank over Q, so this still proves the bound
        p = PRIMES[1]
        total = sum(len(lu_mod_p(a.astype(np.float64), p)[0]) for a in (red, ~red))
        how = f"mod {p}"
    bound = ceil_log2(total) if log else total
    _require(bound >= value, f"the rank bound {bound} does not reach {value}")
    return f"minimal: rank(M) + rank(J - M) = {total} {how}"


def rank_over_q_bareiss(a) -> int:
    """Rank over Q by fraction-free elimination on Python ints (small matrices)."""
    a = np.asarray(a).astype(np.int64).astype(object)
    m, n = a.shape
    prev, r = 1, 0
    for j in range(n):
        piv = next((i for i in range(r, m) if a[i, j] != 0), None)
        if piv is None:
            continue
        a[[r, piv]] = a[[piv, r]]
        a[r + 1:, j + 1:] = (a[r, j] * a[r + 1:, j + 1:] - a[r + 1:, j:j + 1] * a[r, j + 1:]) // prev
        a[r + 1:, j] = 0
        prev = a[r, j]
        r += 1
        if r == m:
            break
    return r
