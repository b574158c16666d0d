"""The shared format of String Equality and String Disjointness: x, y, then a classification token."""

from __future__ import annotations

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch

__all__ = ["TwoStringTask", "CLS"]

CLS = 2  # token id of the classification token read at the end


class TwoStringTask(Task):
    """Two bit strings x, y of length n, then ``[CLS]``; the answer is a predicate of (x, y).

    Format (N = 2n + 1), as in the reference's C3::

        positions 0 .. n-1      n .. 2n-1       2n
        tokens    x_0 .. x_{n-1} y_0 .. y_{n-1}  [CLS]     (answer read at 2n)

    Vocabulary: ``0``, ``1``, ``[CLS]`` (ids 0, 1, 2).
    """

    def vocabulary(self, n):
        self.check_n(n)
        return ("0", "1", "[CLS]")

    def vocab_size(self, n):
        return 3

    def length(self, n):
        return 2 * self.check_n(n) + 1

    @staticmethod
    def assemble(x, y) -> np.ndarray:
        """Tokens from bit strings: ``[x, y, CLS]``, shape ``(B, 2n+1)``."""
        x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
        cls = np.full((x.shape[0], 1), CLS, dtype=np.int64)
        return np.concatenate([x, y, cls], axis=1)

    def split(self, batch: TaskBatch) -> tuple[np.ndarray, np.ndarray]:
        """The two strings of a batch, validated."""
        tokens, n = batch.tokens, batch.n
        if tokens.shape[1] != 2 * n + 1:
            raise InvalidParameterError(f"{self.name}: expected length {2 * n + 1}, got {tokens.shape[1]}")
        x, y = tokens[:, :n], tokens[:, n:2 * n]
        if np.any((tokens[:, :2 * n] < 0) | (tokens[:, :2 * n] > 1)) or np.any(tokens[:, 2 * n] != CLS):
            raise InvalidParameterError(f"{self.name}: expected bits then [CLS]")
        return x, y
