"""Exact rank over the rationals, with a certificate for each side, and the log-rank bound.

Method ``"modular"`` (default). Duplicate and zero rows and columns are removed (the rank does not
change), then the reduced 0/1 matrix A is eliminated modulo a prime p < 2^20 with float64 BLAS products
(exact, see :mod:`commcomp.matrix._modp`). This gives r pivot rows I and columns J with
``A[I, J] = L U (mod p)``, L unit lower and U upper triangular with a nonzero diagonal.

* Lower side, ``rank >= r``: ``det A[I, J] = det U != 0 (mod p)``, so the integer ``det A[I, J]`` is
  nonzero and the rows I are independent over Q. The certificate carries (p, L, U); the checker
  multiplies them out.
* Upper side, ``rank <= r``: every other row k is written as ``d * M[k] = v_k @ M[I]`` with integers
  v_k, d, checked exactly over the integers. When the reduced matrix has full row rank the other rows
  are copies of basis rows or zero rows (v_k a unit or zero vector). Otherwise the coefficients
  ``x_k = A[k, J] A[I, J]^{-1}`` are computed mod p (small integers are tried first), then mod
  further primes, combined by the Chinese remainder theorem and recovered as fractions by rational
  reconstruction, until the identity checks exactly. By Cramer's rule numerators and denominator are
  r x r minors, at most r^{r/2} (Hadamard), so primes whose product exceeds ``2 r^r`` always suffice
  when rank_Q = r; if a second prime shows a larger rank, elimination restarts with it.

Method ``"bareiss"``: fraction-free elimination over Python integers (exact, O(r R C) big-integer
operations), for small matrices and as a reference; the certificate is built the same way.

Size limits (after removing duplicate and zero rows/columns): ``"modular"``
``min(R', C') <= MAX_SIDE_MODULAR`` (4096) and ``R' C' <= MAX_CELLS_MODULAR`` (2^24);
``"bareiss"`` ``R' C' <= MAX_CELLS_BAREISS`` (2^14).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._modp import PRIMES, integer_product_equals, lu_mod_p, solve_upper
from .build import as_matrix, ceil_log2, first_positions, reduce_matrix
from ..errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_SIDE_MODULAR", "MAX_CELLS_MODULAR", "MAX_CELLS_BAREISS", "RankResult",
           "RationalRankCertificate", "rank_rational", "log_rank_bound"]

MAX_SIDE_MODULAR = 4096
MAX_CELLS_MODULAR = 2 ** 24
MAX_CELLS_BAREISS = 2 ** 14
METHODS = ("modular", "bareiss")


@dataclass(frozen=True, eq=False)
class RationalRankCertificate:
    """Both sides of ``rank_Q(M) = r``.

    Lower: ``M[basis_rows][:, basis_cols] = lower @ upper (mod prime)`` with ``lower`` unit lower
    triangular and ``upper`` upper triangular with a nonzero diagonal (r x r residues).
    Upper: ``denominator * M[dependent_rows] = numerators @ M[basis_rows]`` over the integers, and
    ``basis_rows`` and ``dependent_rows`` together list every row once.
    """

    prime: int
    basis_rows: tuple[int, ...]
    basis_cols: tuple[int, ...]
    lower: np.ndarray  # (r, r) float64 residues
    upper: np.ndarray  # (r, r) float64 residues
    dependent_rows: np.ndarray  # (d,) int64
    numerators: np.ndarray  # (d, r) int64, or object holding Python ints
    denominator: int


@dataclass(frozen=True, eq=False)
class RankResult:
    """A rank, the field it is over, the log-rank lower bound on D(f), and the certificate."""

    rank: int
    field: str  # "Q" or "GF(2)"
    log_rank_bound: int
    method: str
    certificate: object
    measure: str
    label: str


def log_rank_bound(rank: int) -> int:
    """The log-rank lower bound ``D(f) >= ceil(log2 rank(M))`` (0 for the zero matrix)."""
    return ceil_log2(rank) if rank > 0 else 0


def rank_rational(matrix, *, method: str = "modular") -> RankResult:
    """The exact rank of a 0/1 matrix over the rationals, with a certificate.

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    method : {"modular", "bareiss"}
        ``"modular"`` (default): elimination mod primes below 2^20 with exact float64 products.
        ``"bareiss"``: fraction-free elimination over Python integers (small matrices).

    Returns
    -------
    RankResult
        ``rank``, ``log_rank_bound = ceil(log2 rank)`` and a :class:`RationalRankCertificate`.

    Raises
    ------
    TooLargeError
        Beyond the size limits in the module docstring (they apply after duplicate and zero rows
        and columns are removed).

    Examples
    --------
    >>> from commcomp.matrix import problem_matrix
    >>> rank_rational(problem_matrix("inner-product", 3)).rank   # 2^n - 1: the row x = 0 is zero
    7
    >>> res = rank_rational([[1, 1, 0], [0, 1, 1], [1, 1, 1], [1, 0, 0]], method="bareiss")
    >>> res.rank, res.certificate.dependent_rows.tolist(), res.certificate.numerators.tolist()  # row 2 - row 1
    (3, [3], [[0, -1, 1]])
    """
    if method not in METHODS:
        raise InvalidParameterError(f"unknown rank method {method!r}; known: {', '.join(METHODS)}")
    m = as_matrix(matrix)
    red, row_class, col_class = reduce_matrix(m, drop_zero=True)
    _check_size(red, m.shape, method)
    rows_of = first_positions(row_class, red.shape[0])  # original row of each reduced row
    cols_of = first_positions(col_class, red.shape[1])
    if red.size == 0:
        cert = RationalRankCertificate(PRIMES[0], (), (), np.zeros((0, 0)), np.zeros((0, 0)),
                                       np.arange(m.shape[0]), np.zeros((m.shape[0], 0), np.int64), 1)
        return _result(0, method, cert)
    if method == "bareiss":
        prows, pcols = _bareiss_profile(red)
        prime, prows, pcols, lower, upper = _factor_minor(red, prows, pcols)
    else:
        prime, prows, pcols, lower, upper = _modular_profile(red, PRIMES[0])
    while True:
        dep_red = np.setdiff1d(np.arange(red.shape[0]), prows)  # reduced rows outside the basis
        x = _dependent_coefficients(red, prows, dep_red, prime)
        if isinstance(x, _Restart):  # a prime showed a larger rank: start again with it
            prime, prows, pcols, lower, upper = _modular_profile(red, x.prime)
            continue
        if x is not None:
            break
        if method == "bareiss" or red.size > MAX_CELLS_BAREISS:
            raise TooLargeError("rank over Q: could not certify the row dependencies by modular "
                                f"reconstruction, and the exact fallback is limited to "
                                f"{MAX_CELLS_BAREISS} cells")
        method = "bareiss"
        prows, pcols = _bareiss_profile(red)
        prime, prows, pcols, lower, upper = _factor_minor(red, prows, pcols)
    numer_red, den = x  # (R', r) coefficients of every reduced row (basis rows: unit vectors)
    basis = np.asarray([rows_of[i] for i in prows], dtype=np.int64)
    is_basis = np.zeros(m.shape[0], dtype=bool)
    is_basis[basis] = True
    dep = np.flatnonzero(~is_basis)
    numer = np.zeros((len(dep), len(prows)), dtype=numer_red.dtype)
    live = row_class[dep] >= 0  # dropped zero rows keep zero coefficients
    numer[live] = numer_red[row_class[dep][live]]
    cert = RationalRankCertificate(prime, tuple(int(i) for i in basis),
                                   tuple(int(cols_of[j]) for j in pcols), lower, upper, dep, numer,
                                   int(den))
    return _result(len(prows), method, cert)


def _result(rank: int, method: str, cert: RationalRankCertificate) -> RankResult:
    return RankResult(rank=rank, field="Q", log_rank_bound=log_rank_bound(rank), method=method,
                      certificate=cert, measure="rank_rational",
                      label="exact rank over Q; lower bound D(f) >= ceil(log2 rank)")


def _check_size(red: np.ndarray, shape, method: str) -> None:
    r, c = red.shape
    what = f"rank over Q ({method}): {shape[0]}x{shape[1]} reduces to {r}x{c}"
    if method == "bareiss" and r * c > MAX_CELLS_BAREISS:
        raise TooLargeError(f"{what}; the limit is {MAX_CELLS_BAREISS} cells")
    if method == "modular" and (min(r, c) > MAX_SIDE_MODULAR or r * c > MAX_CELLS_MODULAR):
        raise TooLargeError(f"{what}; the limits are min(rows, cols) <= {MAX_SIDE_MODULAR} and "
                            f"{MAX_CELLS_MODULAR} cells (distinct nonzero rows and columns)")


def scaled(rows: np.ndarray, factor: int) -> np.ndarray:
    """``factor * rows`` exactly (object dtype when the factor is too large for int64)."""
    if abs(factor) < 2 ** 62:
        return rows.astype(np.int64) * factor
    return rows.astype(object) * factor


@dataclass(frozen=True)
class _Restart:
    prime: int  # modulo this prime the rank is larger than the current basis


def _modular_profile(red: np.ndarray, p: int):
    """Pivots of ``red`` mod p, with the factors of the pivot minor."""
    rows, cols, lower, upper = lu_mod_p(red.astype(np.float64), p)
    return p, rows, cols, lower[rows], upper[:, cols]


def _factor_minor(red: np.ndarray, prows, pcols):
    """(prime, rows, cols, L, U) with ``red[rows][:, cols] = L U (mod prime)``: the rows reordered."""
    g = red[np.ix_(prows, pcols)].astype(np.float64)
    for p in PRIMES:
        rows, cols, lower, upper = lu_mod_p(g, p)
        if len(rows) == len(prows):  # cols come out as 0..r-1: the minor is nonsingular mod p
            return p, [prows[i] for i in rows], list(pcols), lower[rows], upper
    raise AssertionError("a nonsingular integer minor is singular modulo every prime tried")


def _dependent_coefficients(red, prows, dep, prime):
    """Integer coefficients writing every reduced row over the basis rows, or why not.

    Returns ``(numerators (R', r), denominator)``; a :class:`_Restart` naming a prime modulo which
    the rank is larger; or None when reconstruction failed within the Hadamard bound.
    """
    r = len(prows)
    numer = np.zeros((red.shape[0], r), dtype=np.int64)
    numer[prows, np.arange(r)] = 1
    if dep.size == 0:
        return numer, 1
    stacked = np.vstack([red[prows], red[dep]]).astype(np.float64)  # basis rows first
    rhs = red[dep]
    basis = red[prows]
    hadamard_bits = r * max(1.0, math.log2(r)) + 2  # log2(2 r^r): enough primes for CRT
    residues, modulus, tried = None, 1, 0
    for q in ([prime] + [p for p in PRIMES if p != prime]):
        rows, _, lower, _ = lu_mod_p(stacked, q)
        if len(rows) > r:
            return _Restart(q)
        if len(rows) < r or max(rows) >= r:
            continue  # the basis minor is singular mod q: skip this prime
        # dependent rows = lower[dep] @ U and basis rows (pivot order) = lower[rows] @ U
        xq = solve_upper(lower[rows].T.copy(), lower[r:].T.copy(), q).T  # (d, r) in pivot order
        x = np.empty_like(xq)
        x[:, rows] = xq  # back to the order of prows
        tried += 1
        if tried == 1:  # small integer coefficients need a single prime
            small = np.where(x > q // 2, x - q, x).astype(np.int64)
            if integer_product_equals(small, basis, rhs):
                numer[dep] = small
                return numer, 1
        residues, modulus = _crt(residues, modulus, x.astype(np.int64), q)
        got = _reconstruct(residues, modulus)
        if got is not None and integer_product_equals(got[0], basis, scaled(rhs, got[1])):
            out = numer.astype(object) * got[1]  # basis rows: den times a unit vector
            out[dep] = got[0]
            return _shrink(out), got[1]
        if math.log2(modulus) > hadamard_bits:
            return None
    return None


def _shrink(a: np.ndarray) -> np.ndarray:
    """An object array of Python ints as int64 when every entry fits."""
    if a.size == 0 or int(np.max(np.abs(a))) < 2 ** 62:
        return a.astype(np.int64)
    return a


def _crt(residues, modulus: int, x: np.ndarray, q: int):
    """Combine residues mod ``modulus`` with ``x`` mod q (object arrays of Python ints)."""
    x = x.astype(object)
    if residues is None:
        return x, q
    t = ((x - residues) % q) * pow(modulus % q, -1, q) % q
    return residues + modulus * t, modulus * q


def _ratrecon(a: int, m: int, bound: int):
    """(n, d) with ``n = a d (mod m)``, ``|n| <= bound``, ``0 < d <= bound``, or None."""
    r0, r1, t0, t1 = m, a % m, 0, 1
    while r1 > bound:
        qq = r0 // r1
        r0, r1, t0, t1 = r1, r0 - qq * r1, t1, t0 - qq * t1
    if t1 == 0 or abs(t1) > bound:
        return None
    return (r1, t1) if t1 > 0 else (-r1, -t1)


def _reconstruct(residues: np.ndarray, modulus: int):
    """Fractions ``numerators / den`` with one common denominator, from residues mod ``modulus``."""
    bound = math.isqrt(modulus // 2)
    den = 1
    while True:
        v = (residues * den) % modulus
        v = np.where(v > modulus // 2, v - modulus, v)
        bad = np.flatnonzero(np.abs(v) > bound)
        if bad.size == 0:
            return v, den
        got = _ratrecon(int(v.flat[bad[0]]) % modulus, modulus, bound)
        if got is None or got[1] == 1 or den * got[1] > bound:
            return None
        den *= got[1]


def _bareiss_profile(red: np.ndarray) -> tuple[list[int], list[int]]:
    """Pivot rows and columns of the fraction-free (Bareiss) row-echelon form over the integers."""
    a = red.astype(object)  # (R', C') Python ints
    m, n = a.shape
    order = list(range(m))
    prev, r = 1, 0
    prows, pcols = [], []
    for j in range(n):
        if r == m:
            break
        nz = np.flatnonzero(a[r:, j] != 0)
        if nz.size == 0:
            continue
        i = r + int(nz[0])
        if i != r:
            a[[r, i]] = a[[i, r]]
            order[r], order[i] = order[i], order[r]
        piv = a[r, j]
        # every entry stays an integer minor of the input, so the division is exact
        a[r + 1:, j + 1:] = (piv * a[r + 1:, j + 1:] - a[r + 1:, j:j + 1] * a[r, j + 1:]) // prev
        a[r + 1:, j] = 0
        prev = piv
        prows.append(order[r])
        pcols.append(j)
        r += 1
    return prows, pcols
