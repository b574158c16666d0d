"""The sorting solver: equal subset sums of the rows of ``D``, found by sorting exact integer keys.

Two subsets ``T != T'`` of Alice's bits with ``sum_{i in T} D_i = sum_{i in T'} D_i`` give the
ternary ``δ = 1_T - 1_T'`` with ``δ D = 0`` (:mod:`.zerosum`): two inputs with the same message.

* **Exhaustive** when ``2^k <= budget``: every subset sum (that is, every input of Alice's) is
  built by doubling, and sorted; distinct sums *prove* that no two inputs send the same message.
* **Meet in the middle** otherwise, phase by phase: the sums of all subsets of at most ``s`` of the
  first ``m_s`` rows (``m_s`` as large as the budget allows), ``s = 1, 2, ...``; the first phase also
  compares ``D_i`` with ``-D_j`` (``δ = e_i + e_j``). A coarse grid (bfloat16, ``fixed:8:4``) collides
  in the first phases: its rows take few values. A phase that finds nothing proves nothing.

Examples
--------
>>> import numpy as np
>>> D = np.array([[3, 1], [5, 2], [2, 1], [7, 7]])
>>> out = sorting_search(D, budget=1 << 10)
>>> out.tried["exhaustive"], [v.tolist() for v in out.vectors]
(True, [[1, -1, 1, 0]])
>>> sorting_search(np.array([[1, 0], [0, 1], [1, 1]]) * [1, 3], budget=4).proved_none   # too few sums
False
"""

from __future__ import annotations

import math
import time

import numpy as np

from .zerosum import ZeroSumSearch, dedupe, is_solution

__all__ = ["sorting_search", "subset_sums", "combinations", "equal_neighbours", "MAX_VECTORS",
           "EXHAUSTIVE_MAX_BITS"]

MAX_VECTORS = 64           # solutions kept per search
EXHAUSTIVE_MAX_BITS = 26   # 2^26 sums at most in an exhaustive pass (whatever the budget)
MAX_SUBSET_SIZE = 6
MAX_ELEMENTS = 1 << 24     # int64 entries of one phase's sums (128 MiB): wide instances get fewer sums


def subset_sums(D) -> np.ndarray:
    """Every subset sum of the rows of ``D`` ``(k, d)``: ``(2^k, d)`` int64, row ``x`` (as a k-bit
    integer, bit i = row i) holding ``x @ D`` (wrapping int64: exact, :mod:`.terms`)."""
    D = np.asarray(D, dtype=np.int64)
    sums = np.zeros((1, D.shape[1]), dtype=np.int64)
    for row in D:  # doubling: the sums without row i, then with it
        sums = np.concatenate([sums, sums + row[None, :]], axis=0)
    return sums


def combinations(m: int, s: int) -> np.ndarray:
    """All ``s``-subsets of ``range(m)`` as ``(C(m, s), s)`` int64, in colex order (vectorised).

    >>> combinations(4, 2).tolist()
    [[0, 1], [0, 2], [1, 2], [0, 3], [1, 3], [2, 3]]
    """
    out = np.arange(m, dtype=np.int64)[:, None]  # s = 1
    for t in range(2, s + 1):
        # colex: the (t-1)-subsets of range(j) are the first C(j, t-1) rows of ``out``
        counts = np.array([math.comb(j, t - 1) for j in range(m)], dtype=np.int64)  # (m,)
        last = np.repeat(np.arange(m, dtype=np.int64), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        prefix = np.arange(last.size, dtype=np.int64) - starts  # row of ``out`` for each new row
        out = np.concatenate([out[prefix], last[:, None]], axis=1)
    return out if s >= 1 else np.zeros((1, 0), dtype=np.int64)


def equal_neighbours(sums) -> np.ndarray:
    """Pairs ``(a, b)`` ``(P, 2)`` of row indices with equal rows of ``sums`` ``(M, d)``: each row
    against the first of its class, found by one lexicographic sort."""
    order = np.lexsort(sums.T[::-1])  # (M,)
    s = sums[order]
    same = np.all(s[1:] == s[:-1], axis=1)  # (M - 1,)
    if not same.any():
        return np.zeros((0, 2), dtype=np.int64)
    starts = np.concatenate([[True], ~same])  # a class begins where a row differs from the one before
    head = order[np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))]
    pairs = np.stack([head, order], axis=1)[np.concatenate([[False], same])]
    return pairs


def _exhaustive(D, k: int):
    sums = subset_sums(D)
    pairs = equal_neighbours(sums)[:MAX_VECTORS]
    bits = np.arange(k, dtype=np.int64)
    vectors = [((int(a) >> bits) & 1) - ((int(b) >> bits) & 1) for a, b in pairs]
    return vectors, {"exhaustive": True, "sums": int(len(sums)), "equal_sums": int(len(pairs))}


def _largest_m(k: int, s: int, budget: int) -> int:
    """The most rows m <= k whose subsets of size 1..s number at most ``budget``."""
    m = s
    while m < k and sum(math.comb(m + 1, j) for j in range(1, s + 1)) <= budget:
        m += 1
    return m if sum(math.comb(m, j) for j in range(1, s + 1)) <= budget else 0


def _phase(D, s: int, m: int) -> tuple[list, int]:
    """Equal sums among the subsets of size 1..s of rows 0..m-1 (and ``D_i = -D_j`` when s = 1)."""
    k, d = D.shape
    pools, members = [], []
    for t in range(1, s + 1):
        c = combinations(m, t)  # (C, t)
        total = np.zeros((len(c), d), dtype=np.int64)
        for col in range(t):
            total += D[c[:, col]]
        pools.append(total)
        members.append(np.pad(c, ((0, 0), (0, s - t)), constant_values=-1))
    if s == 1:  # signed: -D_j
        pools.append(-D[:m])
        members.append(-2 - np.arange(m, dtype=np.int64)[:, None])  # -2 - j marks "minus row j"
    sums, rows = np.concatenate(pools), np.concatenate(members)  # (M, d), (M, s)
    vectors = []
    for a, b in equal_neighbours(sums)[:MAX_VECTORS]:
        delta = np.zeros(k, dtype=np.int64)
        for j in rows[a]:
            if j >= 0:
                delta[j] += 1
            elif j <= -2:  # the class's first entry is -D_j
                delta[-2 - j] -= 1
        for j in rows[b]:
            if j >= 0:
                delta[j] -= 1
            elif j <= -2:  # D_a = -D_j: delta = e_a + e_j
                delta[-2 - j] += 1
        vectors.append(delta)
    return vectors, len(sums)


def sorting_search(D, *, budget: int = 1 << 21, max_size: int = MAX_SUBSET_SIZE) -> ZeroSumSearch:
    """Ternary ``δ != 0`` with ``δ D = 0`` by sorting subset sums (module docstring).

    Parameters
    ----------
    D : ``(k, d)`` int64
    budget : int
        Most sums sorted in one pass (the exhaustive pass runs when ``2^k`` fits); at most
        ``MAX_ELEMENTS / d`` whatever is asked.
    max_size : int
        Largest subsets of the meet-in-the-middle phases.

    Returns
    -------
    ZeroSumSearch
        ``proved_none`` only after an exhaustive pass with every sum distinct.
    """
    start = time.perf_counter()
    D = np.asarray(D, dtype=np.int64)
    k = D.shape[0]
    budget = max(2, min(int(budget), MAX_ELEMENTS // max(1, D.shape[1])))  # memory: sums (budget, d) int64
    if k <= EXHAUSTIVE_MAX_BITS and (1 << k) <= budget:
        found, tried = _exhaustive(D, k)
        vectors = dedupe(v for v in found if is_solution(D, v))
        note = (f"all {1 << k} subset sums sorted: " + (f"{len(vectors)} collisions kept" if vectors else
                "every one distinct (proved: no two inputs send the same message)"))
        return ZeroSumSearch("sorting", vectors, not vectors, tried, note, time.perf_counter() - start)
    zero = np.flatnonzero(np.all(D == 0, axis=1))[:MAX_VECTORS]  # a bit no message depends on
    found = [np.eye(k, dtype=np.int64)[i] for i in zero]
    phases = [{"subset_size": 0, "rows": k, "sums": k, "collisions": len(found)}]
    for s in range(1, max_size + 1):
        if found:
            break
        m = _largest_m(k, s, budget)
        if m <= s:  # the budget leaves no room for subsets this large
            break
        vecs, sums = _phase(D, s, m)
        good = [v for v in vecs if is_solution(D, v)]
        phases.append({"subset_size": s, "rows": m, "sums": sums, "collisions": len(good)})
        found += good
    vectors = dedupe(found)[:MAX_VECTORS]
    last = phases[-1]
    if vectors and last["subset_size"] == 0:
        note = f"{len(vectors)} bits that no attention sum depends on (zero rows)"
    elif vectors:
        note = f"equal sums of at most {last['subset_size']} of {last['rows']} rows: {len(vectors)} collisions"
    else:
        note = (f"no equal sums among subsets of at most {last['subset_size']} of {last['rows']} rows "
                f"(budget {budget} sums per phase); this proves nothing")
    return ZeroSumSearch("sorting", vectors, False, {"exhaustive": False, "budget": int(budget), "phases": phases},
                         note, time.perf_counter() - start)
