"""Exact linear algebra modulo a prime p < 2^20, on float64 arrays with BLAS matrix products.

Why float64 is exact here: residues lie in ``[0, p)`` with ``p < 2^20``, so a product of two is below
``2^40`` and a dot product of at most ``KMAX = 8192`` such products stays below ``2^53``; every partial
sum is then an integer that float64 holds exactly, whatever order BLAS adds in (OpenBLAS uses no
Strassen-like algorithm). Longer dot products are cut into pieces of ``KMAX`` and reduced in between.

The elimination is recursive over columns (Toledo's recursive LU), so almost all of the work is in
matrix products; the leaves are plain Gaussian elimination on at most ``BASE`` columns.

Examples
--------
>>> import numpy as np
>>> p = PRIMES[0]
>>> A = np.array([[1, 1, 0], [0, 1, 1], [1, 2, 1]], dtype=np.float64)
>>> rows, cols, L, U = lu_mod_p(A, p)
>>> rows, cols        # row 2 = row 0 + row 1, so the rank mod p is 2
([0, 1], [0, 1])
"""

from __future__ import annotations

import numpy as np

__all__ = ["PRIMES", "KMAX", "matmul_mod", "lu_mod_p", "rank_mod_p", "solve_lower_unit",
           "solve_upper", "inverse_mod_p", "integer_product_equals"]

KMAX = 8192  # longest dot product that float64 holds exactly for residues below 2^20
BASE = 32  # leaf width of the recursive elimination


def _primes_below(limit: int, count: int) -> tuple[int, ...]:
    sieve = np.ones(limit, dtype=bool)
    sieve[:2] = False
    for q in range(2, int(limit ** 0.5) + 1):
        if sieve[q]:
            sieve[q * q::q] = False
    return tuple(int(q) for q in np.flatnonzero(sieve)[::-1][:count])


PRIMES: tuple[int, ...] = _primes_below(1 << 20, 4096)  # the 4096 largest primes below 2^20, descending


def matmul_mod(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """``a @ b mod p`` for float64 arrays of residues in ``[0, p)``, exactly."""
    k = a.shape[1]
    if k <= KMAX:
        return np.fmod(a @ b, p)
    out = np.zeros((a.shape[0], b.shape[1]))
    for s in range(0, k, KMAX):
        out += np.fmod(a[:, s:s + KMAX] @ b[s:s + KMAX], p)  # each term < p; at most k/KMAX terms
    return np.fmod(out, p)


def _lu_base(a: np.ndarray, p: int):
    """Plain Gaussian elimination of a (m, b) block; see :func:`lu_mod_p` for the output."""
    a = a.copy()
    m, b = a.shape
    k = min(m, b)
    lower = np.zeros((m, k))  # (m, rank)
    upper = np.zeros((k, b))  # (rank, b)
    alive = np.ones(m, dtype=bool)
    prow: list[int] = []
    pcol: list[int] = []
    for j in range(b):
        cand = np.flatnonzero(alive & (a[:, j] != 0))
        if cand.size == 0:
            continue
        i, others = int(cand[0]), cand[1:]
        t = len(prow)
        lower[i, t] = 1.0
        upper[t, j:] = a[i, j:]
        if others.size:
            mult = np.fmod(a[others, j] * pow(int(a[i, j]), p - 2, p), p)  # (k,)
            lower[others, t] = mult
            if j + 1 < b:
                a[others, j + 1:] = np.mod(a[others, j + 1:] - mult[:, None] * a[i, j + 1:], p)
        alive[i] = False
        prow.append(i)
        pcol.append(j)
    r = len(prow)
    return prow, pcol, lower[:, :r], upper[:r]


def lu_mod_p(a: np.ndarray, p: int):
    """Row-echelon elimination of ``a`` mod p: pivot rows, pivot columns and the factors.

    Parameters
    ----------
    a : (m, n) float64 array of residues in ``[0, p)`` (0/1 entries are fine).
    p : prime below 2^20.

    Returns
    -------
    rows, cols : lists of length r = rank of ``a`` mod p, in pivot order. ``cols`` is increasing
        (the column rank profile), and ``a[rows][:, cols]`` is nonsingular mod p.
    lower : (m, r) float64 with ``lower[rows]`` unit lower triangular.
    upper : (r, n) float64 in row-echelon form, ``upper[t, cols[t]] != 0``, and
        ``a = lower @ upper (mod p)``; so ``a[rows][:, cols] = lower[rows] @ upper[:, cols]``
        with ``upper[:, cols]`` upper triangular.
    """
    m, n = a.shape
    if n <= BASE or m == 0:
        return _lu_base(a, p)
    n1 = n // 2
    rows1, cols1, lower1, upper1 = lu_mod_p(a[:, :n1], p)
    r1 = len(rows1)
    if r1 == 0:
        rows2, cols2, lower2, upper2 = lu_mod_p(a[:, n1:], p)
        return rows2, [n1 + c for c in cols2], lower2, np.hstack([np.zeros((len(rows2), n1)), upper2])
    u12 = solve_lower_unit(lower1[rows1], a[rows1, n1:], p)  # (r1, n - n1)
    rest = np.setdiff1d(np.arange(m), rows1)  # non-pivot rows after the left half
    if rest.size == 0:
        return rows1, cols1, lower1, np.hstack([upper1, u12])
    resid = np.mod(a[rest, n1:] - matmul_mod(lower1[rest], u12, p), p)  # Schur complement rows
    rows2, cols2, lower2, upper2 = lu_mod_p(resid, p)
    r2 = len(rows2)
    lower = np.zeros((m, r1 + r2))
    lower[:, :r1] = lower1
    lower[rest, r1:] = lower2
    upper = np.zeros((r1 + r2, n))
    upper[:r1, :n1] = upper1
    upper[:r1, n1:] = u12
    upper[r1:, n1:] = upper2
    return rows1 + [int(rest[i]) for i in rows2], cols1 + [n1 + c for c in cols2], lower, upper


def rank_mod_p(a, p: int = PRIMES[0]) -> int:
    """Rank of an integer matrix mod p (a lower bound on its rank over the rationals)."""
    a = np.mod(np.asarray(a, dtype=np.float64), p)
    return len(lu_mod_p(a, p)[0])


def solve_lower_unit(lower: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """X with ``lower @ X = b (mod p)`` for unit lower triangular ``lower`` (r, r) and b (r, q)."""
    r = lower.shape[0]
    if r <= 64:
        x = np.array(b, dtype=np.float64)
        for t in range(1, r):
            x[t] = np.mod(x[t] - lower[t, :t] @ x[:t], p)  # t <= 64 terms below 2^40: exact
        return x
    h = r // 2
    x1 = solve_lower_unit(lower[:h, :h], b[:h], p)
    x2 = solve_lower_unit(lower[h:, h:], np.mod(b[h:] - matmul_mod(lower[h:, :h], x1, p), p), p)
    return np.vstack([x1, x2])


def solve_upper(upper: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """X with ``upper @ X = b (mod p)`` for upper triangular ``upper`` with a nonzero diagonal."""
    r = upper.shape[0]
    if r <= 64:
        x = np.array(b, dtype=np.float64)
        inv = [pow(int(upper[t, t]), p - 2, p) for t in range(r)]
        for t in range(r - 1, -1, -1):
            x[t] = np.fmod(np.mod(x[t] - upper[t, t + 1:] @ x[t + 1:], p) * inv[t], p)
        return x
    h = r // 2
    x2 = solve_upper(upper[h:, h:], b[h:], p)
    x1 = solve_upper(upper[:h, :h], np.mod(b[:h] - matmul_mod(upper[:h, h:], x2, p), p), p)
    return np.vstack([x1, x2])


def inverse_mod_p(g, p: int) -> np.ndarray | None:
    """The inverse of a square integer matrix mod p, or None when it is singular mod p.

    Examples
    --------
    >>> import numpy as np
    >>> w = inverse_mod_p(np.array([[1, 1], [0, 1]]), 101)
    >>> w.astype(int).tolist()
    [[1, 100], [0, 1]]
    """
    g = np.mod(np.asarray(g, dtype=np.float64), p)
    r = g.shape[0]
    rows, cols, lower, upper = lu_mod_p(g, p)
    if len(rows) < r:
        return None
    # g[rows] = lower[rows] @ upper, upper triangular (the pivot columns are 0..r-1 in order).
    perm = np.zeros((r, r))
    perm[np.arange(r), rows] = 1.0  # perm @ g = g[rows]
    return solve_upper(upper, solve_lower_unit(lower[rows], perm, p), p)


def integer_product_equals(v, b: np.ndarray, rhs) -> bool:
    """Whether ``v @ b == rhs`` holds exactly over the integers.

    ``v`` may hold Python ints (dtype object) of any size; ``b`` is a 0/1 matrix. When every
    partial sum stays below 2^53 the product is one float64 BLAS call; otherwise both sides are
    compared modulo enough primes below 2^20 that their product exceeds twice the largest possible
    absolute value of either side (then congruence implies equality: the Chinese remainder theorem).
    """
    v = np.asarray(v)
    rhs = np.asarray(rhs)
    b = np.asarray(b, dtype=np.float64)
    if v.size == 0 or b.size == 0:
        return bool(np.all(rhs == 0))
    vmax = int(np.max(np.abs(v)))
    rmax = int(np.max(np.abs(rhs))) if rhs.size else 0
    bound = max(vmax * b.shape[0], rmax)
    if bound < 2 ** 52:
        return bool(np.array_equal(v.astype(np.float64) @ b, rhs.astype(np.float64)))
    modulus, i = 1, 0
    while modulus <= 2 * bound:
        q = PRIMES[i]
        vq = np.mod(v, q).astype(np.float64)
        rq = np.mod(rhs, q).astype(np.float64)
        if not np.array_equal(matmul_mod(vq, b, q), rq):
            return False
        modulus *= q
        i += 1
    return True
