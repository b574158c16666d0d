"""The lattice solver: short vectors of the kernel lattice ``{δ in Z^k : δ D' = 0}`` by LLL / BKZ.

For ``k`` chosen rows ``D'`` ``(k, d)`` of the difference matrix the basis ``[I_k | λ D']`` (one row
per chosen bit, ``λ`` a large integer weight) spans the vectors ``(δ, λ δ D')``; lattice reduction
puts the vectors with ``δ D' = 0`` first (their tail is 0, every other vector's is at least ``λ``)
and makes them short. A reduced vector with entries in {-1, 0, 1} and zero tail is a collision,
and so are sums and differences of two such short vectors when they stay ternary. Ternary
solutions exist once ``3^k`` exceeds the number of possible sums (about ``2^(d·bits)``), and the
reduction finds them once ``k`` is a few times ``d × bits`` (measured on random data, issue 21):
attempts grow ``k`` and the BKZ block size (an attempt on the same rows goes on reducing the basis
it was left, progressive BKZ). Nothing found proves nothing; the result says what
was tried (``k``, ``d``, bits, block size).

Runs on fpylll (the optional ``lattice`` extra); without it :func:`lattice_search` raises
:class:`~commcomp.errors.MissingDependencyError`.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> D = rng.integers(-2 ** 20, 2 ** 20, size=(80, 2))             # two coordinates of 21 bits
>>> out = lattice_search(D, seed=0)                                # doctest: +SKIP
>>> out.found, all(is_solution(D, v) for v in out.vectors)        # doctest: +SKIP
(True, True)
"""

from __future__ import annotations

import math
import time

import numpy as np

from commcomp.errors import MissingDependencyError

from .zerosum import ZeroSumSearch, dedupe, is_solution

__all__ = ["lattice_search", "lattice_available", "rows_needed", "ROW_FACTOR", "ATTEMPTS"]

ROW_FACTOR = 3.5              # rows per bit of d × bits in the first attempt
#: The attempts: (rows as a multiple of the first attempt's, BKZ block size; 0 = LLL only).
#: An attempt with as many rows as the one before goes on reducing its basis (progressive BKZ).
#: Measured (issue 21, width-2 float32, k = 305 rows, d = 3, 29 bits): BKZ-20 on the first attempt's
#: rows found 2 vectors at n = 1233 (7.7 s CPU) and none at n = 699 (then 458 rows did, 25.8 s CPU);
#: skipping it cost 21.8 s CPU at n = 1233, so it stays.
ATTEMPTS = ((1.0, 0), (1.0, 20), (1.5, 20), (1.5, 30))
MAX_PAIR_ROWS = 256           # kernel vectors whose pairwise sums and differences are tried


def lattice_available() -> bool:
    try:
        import fpylll  # noqa: F401
    except ImportError:
        return False
    return True


def _fpylll():
    try:
        import fpylll
    except ImportError:
        raise MissingDependencyError("the lattice method needs fpylll: pip install 'commcomp[lattice]' "
                                     "(fpylll and cysignals)") from None
    return fpylll


def _bits(D) -> int:
    """Bits of the largest entry of ``D`` (at least 1)."""
    top = int(np.max(np.abs(D))) if D.size else 0
    return max(1, top.bit_length())


def rows_needed(d: int, bits: int) -> int:
    """The first attempt's row count: ``ROW_FACTOR · d · bits`` (module docstring)."""
    return max(2 * d + 2, math.ceil(ROW_FACTOR * d * bits))


def _embedded(D, fpylll):
    """The LLL-reduced basis of ``[I | λ D]`` ``(k, k + d)`` (an fpylll IntegerMatrix)."""
    k, d = D.shape
    # λ: far above every short kernel vector's length (about sqrt(k)); a vector with a nonzero tail is
    # then at least λ long. A λ too small could only hide solutions (each is re-checked), never add one;
    # 2^(20 + log2 k) keeps the entries near 50 bits, where 2^(k/4) made LLL run on 140-bit integers.
    weight = 1 << (20 + k.bit_length())
    A = fpylll.IntegerMatrix(k, k + d)
    for i in range(k):
        A[i, i] = 1
        for j in range(d):
            A[i, k + j] = int(D[i, j]) * weight
    fpylll.LLL.reduction(A)
    return A


def _kernel_rows(A, k: int, d: int) -> np.ndarray:
    """The δ parts ``(r, k)`` int64 of the reduced rows whose tails vanish (and whose entries are small)."""
    rows = np.array([[A[i, j] for j in range(k + d)] for i in range(k)], dtype=object)
    kernel = np.all(rows[:, k:] == 0, axis=1)
    small = np.array([max(abs(int(v)) for v in r[:k]) <= 2 ** 20 for r in rows], dtype=bool)
    return rows[kernel & small, :k].astype(np.int64)


def _ternary(basis) -> list:
    """Basis vectors in {-1, 0, 1}, and sums and differences of two short ones that are."""
    out = [v for v in basis if np.any(v) and np.max(np.abs(v)) <= 1]
    short = basis[np.max(np.abs(basis), axis=1) <= 2][:MAX_PAIR_ROWS] if len(basis) else basis
    if len(short) >= 2:
        a, b = np.triu_indices(len(short), 1)
        for combo in (short[a] + short[b], short[a] - short[b]):  # (P, k)
            ok = np.any(combo, axis=1) & (np.max(np.abs(combo), axis=1) <= 1)
            out += list(combo[ok][:64])
    return out


def lattice_search(D, *, seed: int = 0, rows=None, attempts=ATTEMPTS, max_vectors: int = 64,
                   include=(), deadline: float | None = None) -> ZeroSumSearch:
    """Ternary ``δ != 0`` with ``δ D = 0`` from reduced kernel lattices (module docstring).

    Parameters
    ----------
    D : ``(k, d)`` int64
    seed : int
        Picks the rows of each attempt (a seeded random subset; all rows when there are no more).
    rows : int, optional
        The first attempt's row count (default :func:`rows_needed`).
    attempts : sequence of ``(multiple, block)``
        Each attempt's rows (a multiple of the first's, at most all) and BKZ block size (0: LLL only),
        run in turn until one finds a solution.
    include : sequence of int
        Rows every attempt takes (a row the caller needs in the solution's support).
    deadline : float, optional
        A ``time.perf_counter()`` value: no attempt starts after it (the note says so).

    Raises
    ------
    MissingDependencyError
        Without fpylll.
    """
    fpylll = _fpylll()
    start = time.perf_counter()
    D = np.asarray(D, dtype=np.int64)
    k_all = D.shape[0]
    live = np.flatnonzero(np.any(D != 0, axis=0))  # coordinates that ever change
    cols = D[:, live]
    if cols.shape[1]:
        cols = np.unique(cols, axis=1)  # equal coordinates are one constraint
    d, bits = int(cols.shape[1]), _bits(cols)
    want = rows_needed(max(d, 1), bits) if rows is None else int(rows)
    rng = np.random.default_rng([int(seed), 37])
    tried, found, basis_of = [], [], None
    stopped = False
    for factor, block in attempts:
        if tried and deadline is not None and time.perf_counter() > deadline:
            stopped = True
            break
        k = min(k_all, math.ceil(want * factor))
        if any(t["rows"] == k and t["block_size"] == (block or "LLL") for t in tried):
            continue  # all rows were taken already at this block size
        t = time.perf_counter()
        continued = basis_of is not None and basis_of[0] == k
        if not continued:  # new rows: a fresh embedding
            if k < k_all:
                must = np.asarray(include, dtype=np.int64)
                rest = np.setdiff1d(rng.permutation(k_all), must, assume_unique=True)
                rest = rng.permutation(rest)[:max(0, k - must.size)]
                chosen = np.sort(np.concatenate([must, rest]))
            else:
                chosen = np.arange(k_all)
            basis_of = (k, chosen, _embedded(cols[chosen], fpylll) if d else None)
        _, chosen, A = basis_of
        if A is not None and block > 0:
            bkz = fpylll.BKZ
            bkz.reduction(A, bkz.Param(min(block, k), max_loops=8, flags=bkz.AUTO_ABORT | bkz.MAX_LOOPS))
        basis = _kernel_rows(A, k, d) if A is not None else np.eye(k, dtype=np.int64)
        cand = _ternary(basis)
        good = []
        for v in cand:
            delta = np.zeros(k_all, dtype=np.int64)
            delta[chosen] = v
            if is_solution(D, delta):
                good.append(delta)
        found += good
        tried.append({"rows": int(k), "coordinates": d, "bits": bits,
                      "block_size": int(block) if block else "LLL", "continued": bool(continued),
                      "kernel_vectors": int(len(basis)),
                         "solutions": len(good), "seconds": round(time.perf_counter() - t, 3)})
        if found:
            break
    vectors = dedupe(found)[:max_vectors]
    last = tried[-1]
    note = (f"{len(vectors)} ternary kernel vectors (k = {last['rows']} rows, d = {d}, {bits} bits, "
            f"{last['block_size'] if last['block_size'] == 'LLL' else 'BKZ-%d' % last['block_size']})"
            if vectors else "no ternary vector in the reduced kernel lattices tried (" + "; ".join(
                f"k = {t['rows']}, d = {d}, {bits} bits, "
                f"{'LLL' if t['block_size'] == 'LLL' else 'BKZ-%d' % t['block_size']}" for t in tried)
            + (", then the time limit" if stopped else "") + "); this proves nothing")
    return ZeroSumSearch("lattice", vectors, False, {"attempts": tried}, note, time.perf_counter() - start)
