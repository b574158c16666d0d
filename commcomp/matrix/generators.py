"""Seeded generators of test matrices, among them matrices with a gap between the rank bound and the
partition number (or the best protocol).

* :func:`random_matrix`: i.i.d. entries;
* :func:`random_union`: the union (entrywise OR) of random rectangles: C¹ is at most the number
  of rectangles while rank and χ₁ can be larger, since the rectangles overlap;
* :func:`kronecker`: ``M[(i, i'), (j, j')] = A[i, j] and B[i', j']`` (the AND of two problems on
  split inputs); ranks multiply, and so do the partition numbers of the 1-cells, at most;
* :func:`xor_product`: ``M[(i, i'), (j, j')] = A[i, j] xor B[i', j']``;
* :func:`gap_matrix`: one of the above built from small random factors, chosen by seed.

Examples
--------
>>> import numpy as np
>>> xor_product(np.eye(2, dtype=bool), np.eye(2, dtype=bool)).astype(int).tolist()[0]
[0, 1, 1, 0]
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["random_matrix", "random_union", "kronecker", "xor_product", "gap_matrix", "GAP_KINDS"]

GAP_KINDS = ("union", "kronecker", "xor")


def random_matrix(rows: int, cols: int, *, density: float = 0.5, seed: int = 0) -> np.ndarray:
    """An (rows, cols) bool matrix with i.i.d. entries, 1 with probability ``density``."""
    return np.random.default_rng(seed).random((rows, cols)) < density


def random_union(rows: int, cols: int, rectangles: int, *, seed: int = 0) -> np.ndarray:
    """The union of ``rectangles`` random rectangles, each row and column in with probability 1/2.

    Examples
    --------
    >>> random_union(6, 6, 3, seed=1).shape
    (6, 6)
    """
    rng = np.random.default_rng(seed)
    in_rows = rng.random((rectangles, rows)) < 0.5  # (k, R)
    in_cols = rng.random((rectangles, cols)) < 0.5  # (k, C)
    return np.einsum("ki,kj->ij", in_rows.astype(np.int64), in_cols.astype(np.int64)) > 0


def kronecker(a, b) -> np.ndarray:
    """``M[(i, i'), (j, j')] = a[i, j] and b[i', j']`` (row (i, i') at index i * R_b + i')."""
    return np.kron(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)).astype(bool)


def xor_product(a, b) -> np.ndarray:
    """``M[(i, i'), (j, j')] = a[i, j] xor b[i', j']``."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    out = a[:, None, :, None] ^ b[None, :, None, :]  # (Ra, Rb, Ca, Cb)
    return out.reshape(a.shape[0] * b.shape[0], a.shape[1] * b.shape[1])


def gap_matrix(side: int, *, kind: str = "union", seed: int = 0) -> np.ndarray:
    """A side x side matrix of the given kind built from seeded random parts.

    ``union``: the union of ``side // 2`` random rectangles; ``kronecker`` / ``xor``: the product
    of a random ``s x s`` and a random ``(side // s) x (side // s)`` matrix, s the largest divisor of
    side at most its square root (side must not be prime, for these two), each part redrawn until
    its rows and columns are distinct.

    Examples
    --------
    >>> gap_matrix(12, kind="kronecker", seed=3).shape
    (12, 12)
    """
    if kind not in GAP_KINDS:
        raise InvalidParameterError(f"unknown gap kind {kind!r}; known: {', '.join(GAP_KINDS)}")
    if side < 2:
        raise InvalidParameterError(f"side must be >= 2, got {side}")
    if kind == "union":
        return random_union(side, side, max(2, side // 2), seed=seed)
    s = max(d for d in range(1, int(side ** 0.5) + 1) if side % d == 0)
    if s == 1:
        raise InvalidParameterError(f"{kind} needs a composite side, got {side}")
    rng = np.random.default_rng(seed)
    a, b = _distinct(rng, s), _distinct(rng, side // s)
    return kronecker(a, b) if kind == "kronecker" else xor_product(a, b)


def _distinct(rng, n: int) -> np.ndarray:
    """A random n x n matrix with distinct rows and distinct columns (up to 1000 draws)."""
    for _ in range(1000):
        m = rng.random((n, n)) < 0.5
        if len(np.unique(m, axis=0)) == n and len(np.unique(m, axis=1)) == n:
            return m
    return m
