"""Nearest Neighbour (BHBK): labelled vectors, then a query vector; output the nearest's label."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of
from commcomp.errors import InvalidParameterError
from models.constructions.jl import max_abs_overlap

from ..device_ops import constant_table, gather_rows
from .base import Task, TaskBatch, balanced_labels, check_batch, random_subsets

__all__ = ["NearestNeighbour", "sign_vector_table", "sign_vector_width"]

_TABLE_SEED = 20240609  # fixed: the table is public, the same for everyone


def sign_vector_width(size: int, gamma: float = 0.5) -> int:
    """``k``, the length of :func:`sign_vector_table`'s rows: ``ceil((4 ln size + 2 ln 2) / gamma^2)``.

    >>> sign_vector_width(8)
    39
    """
    return math.ceil((4 * math.log(max(size, 2)) + 2 * math.log(2)) / gamma ** 2)




@lru_cache(maxsize=16)
def sign_vector_table(size: int, gamma: float = 0.5) -> np.ndarray:
    """A public table of ``size`` distinct sign vectors with small pairwise inner products.

    Row j is ``s_j`` in {-1, +1}^k with ``k = ceil((4 ln size + 2 ln 2) / gamma**2)`` (the
    reference's C1 recipe with delta = 1/2); the unit vector is ``T(j) = s_j / sqrt(k)``.
    Draws from a fixed seed until every off-diagonal ``abs(<s_i, s_j>) <= gamma * k``, so the
    rows are distinct and an exact match beats any other row by at least ``(1 - gamma) k``.
    Inner products are integers, so nearest-neighbour ties are decided exactly.

    Returns
    -------
    numpy.ndarray
        ``(size, k)`` int8, read-only.

    Examples
    --------
    >>> t = sign_vector_table(8)
    >>> t.shape, bool(np.all(np.abs(t) == 1))
    ((8, 39), True)
    """
    if size < 1:
        raise InvalidParameterError(f"table size must be >= 1, got {size}")
    k = sign_vector_width(size, gamma)
    rng = np.random.default_rng(_TABLE_SEED)
    while True:
        s = np.where(rng.random((size, k)) < 0.5, -1, 1).astype(np.int8)  # (V, k)
        if max_abs_overlap(s) <= gamma * k:
            s.setflags(write=False)
            return s


@dataclass(frozen=True)
class NearestNeighbour(Task):
    """Nearest Neighbour: x_1, y_1, ..., x_n, y_n, x_q; output the label of the x_i nearest x_q.

    Vectors come from a public table of ``V = table_factor * n`` distinct unit vectors
    ``T(j) = s_j / sqrt(k)`` (:func:`sign_vector_table`), so each vector is also a token id:
    ids ``0 .. V-1`` are vectors ``"v<j>"``, id ``V`` is label ``"y0"`` and ``V + 1`` is
    ``"y1"``. Format (N = 2n + 1)::

        position  0    1    2    3   ...  2n-2     2n-1     2n
        token     x_1  y_1  x_2  y_2 ...  x_n      y_n      x_q     (answer read at 2n)

    The nearest vector is the one with the largest inner product (all are unit vectors);
    ties go to the earliest pair. ``features`` holds ``T(j)`` at vector positions and zeros at
    label positions, shape ``(B, N, k)``. Answers are the label bits, shape ``(B, 1)``.

    Worked example (n = 2, V = 4)::

        tokens   v3 y1 v0 y0 v3     ->  x_q = x_1, so the answer is y_1 = 1

    Examples
    --------
    >>> import numpy as np
    >>> task = NearestNeighbour()
    >>> V = task.table_size(2)
    >>> batch = task.make_batch(2, np.array([[3, V + 1, 0, V, 3]]))
    >>> task.ground_truth(batch).tolist()
    [[1]]
    """

    table_factor: int = 2
    gamma: float = 0.5

    name = "nearest-neighbour"
    aliases = ("nearest-neighbor", "nn", "nearest_neighbour", "nearest_neighbor")

    def __post_init__(self):
        if self.table_factor < 1 or not 0 < self.gamma < 1:
            raise InvalidParameterError("nearest-neighbour: need table_factor >= 1, 0 < gamma < 1")

    def table_size(self, n) -> int:
        """Number V of vectors in the public table."""
        return self.table_factor * self.check_n(n)

    def table(self, n) -> np.ndarray:
        """The public unit vectors ``T``, shape ``(V, k)`` float64."""
        s = sign_vector_table(self.table_size(n), self.gamma)
        return s / math.sqrt(s.shape[1])

    def feature_width(self, n) -> int:
        """``k``, the width of the vectors ``T(j)`` (without building the table)."""
        return sign_vector_width(self.table_size(n), self.gamma)

    def vocabulary(self, n):
        return tuple(f"v{j}" for j in range(self.table_size(n))) + ("y0", "y1")

    def vocab_size(self, n):
        return self.table_size(n) + 2

    def length(self, n):
        return 2 * self.check_n(n) + 1

    def label_token(self, n, bits) -> np.ndarray:
        return self.table_size(n) + np.asarray(bits, dtype=np.int64)

    def nearest(self, tokens, n) -> np.ndarray:
        """Index in ``[0, n)`` of the pair whose vector is nearest the query, ``(B,)``."""
        s = sign_vector_table(self.table_size(n), self.gamma).astype(np.int64)  # (V, k)
        vec = tokens[:, 0:2 * n:2]  # (B, n)
        query = tokens[:, 2 * n]  # (B,)
        V = self.table_size(n)
        if np.any((vec < 0) | (vec >= V)) or np.any((query < 0) | (query >= V)):
            raise InvalidParameterError("nearest-neighbour: vector positions must hold vector ids")
        scores = np.einsum("bik,bk->bi", s[vec], s[query])  # (B, n), exact integers
        return np.argmax(scores, axis=1)  # first maximum: ties go to the earliest pair

    def sample(self, n, batch, rng) -> TaskBatch:
        """Distinct random table vectors, a random query vector (half the time one of the x_i),
        random labels, and a balanced label at the nearest pair."""
        n, batch = self.check_n(n), check_batch(batch)
        V = self.table_size(n)
        vec = random_subsets(batch, V, n, rng)  # (B, n) distinct ids
        query = rng.integers(0, V, size=batch)  # (B,)
        copy = rng.random(batch) < 0.5
        query[copy] = vec[copy, rng.integers(0, n, size=int(copy.sum()))]
        labels = rng.integers(0, 2, size=(batch, n), dtype=np.int64)
        tokens = np.empty((batch, 2 * n + 1), dtype=np.int64)
        tokens[:, 0:2 * n:2], tokens[:, 2 * n] = vec, query
        answers = balanced_labels(batch, 2, rng)  # (B,)
        labels[np.arange(batch), self.nearest(tokens, n)] = answers
        tokens[:, 1:2 * n:2] = self.label_token(n, labels)
        return self.make_batch(n, tokens, self.features(tokens, n), answers[:, None])

    def features(self, tokens, n):
        """``(B, N, k)``: T(id) at vector positions (the query included), zeros at labels.

        On the namespace of ``tokens``: a device's tokens give device features, gathered there
        from the public table (a constant of n, the one host array uploaded).

        Examples
        --------
        >>> import array_api_strict as xps
        >>> task = NearestNeighbour()
        >>> f = task.features(xps.asarray([[3, 4, 0, 5, 3]]), 2)
        >>> f.shape, f.dtype == xps.float64, bool(xps.all(f[0, 0, :] == f[0, 4, :])), bool(xps.all(f[0, 1, :] == 0))
        ((1, 5, 28), True, True, True)
        >>> from commcomp.backend import to_numpy
        >>> bool(np.array_equal(to_numpy(f), task.features(np.array([[3, 4, 0, 5, 3]]), 2)))
        True
        """
        table = self.table(n)  # (V, k)
        padded = np.vstack([table, np.zeros((2, table.shape[1]))])  # label ids map to 0
        if is_numpy(tokens) or not is_array(tokens):
            return padded[np.asarray(tokens)]  # (B, N, k)
        xp = namespace_of(tokens)
        return gather_rows(xp, constant_table(xp, tokens, padded, xp.float64), tokens)  # (B, N, k)

    def make_encoded(self, n, tokens) -> TaskBatch:
        """A batch from tokens, with the features filled in (what reductions use), on the tokens'
        namespace."""
        return self.make_batch(n, tokens, self.features(tokens, n))

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        n, batch = batch.n, batch.on_host()  # NumPy only: a device batch comes back, counted
        nearest = self.nearest(batch.tokens, n)  # (B,)
        label = batch.tokens[np.arange(batch.batch_size), 2 * nearest + 1] - self.table_size(n)
        if np.any((label < 0) | (label > 1)):
            raise InvalidParameterError("nearest-neighbour: label positions must hold y0 or y1")
        return label[:, None]  # (B, 1)
