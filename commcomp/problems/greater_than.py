"""GT_n: x, y in {0,1}^n read as binary numbers (most significant bit first); the answer is 1[x > y]."""

from __future__ import annotations

import numpy as np
import sympy

from .base import ComplexityFact, Problem, n_symbol

__all__ = ["GreaterThan"]


class GreaterThan(Problem):
    """GT_n. ``sample`` makes x > y for about half the batch (x = y has probability 2^-n).

    Examples
    --------
    >>> import numpy as np
    >>> GreaterThan().evaluate(np.array([[1, 0], [0, 1]]), np.array([[0, 1], [0, 1]])).tolist()
    [True, False]
    """

    name = "greater-than"
    aliases = ("gt", "greater_than")
    title = "Greater-than"
    description = "x, y in {0,1}^n as binary numbers; output 1[x > y]"

    def evaluate(self, x, y) -> np.ndarray:
        x, y = np.asarray(x, dtype=np.int8), np.asarray(y, dtype=np.int8)
        diff = x - y  # (B, n) in {-1, 0, 1}
        first = np.argmax(diff != 0, axis=1)  # first differing position (0 if none)
        return diff[np.arange(diff.shape[0]), first] > 0  # (B,)

    def sample(self, n, batch, rng):
        n, batch = self.check_n(n), self._check_batch(batch)
        return (rng.integers(0, 2, size=(batch, n), dtype=np.uint8),
                rng.integers(0, 2, size=(batch, n), dtype=np.uint8))

    @classmethod
    def complexity(cls):
        return (
            ComplexityFact("deterministic_one_way", "=", n_symbol, "rows of GT are distinct", "[D]"),
            ComplexityFact("deterministic", "=", n_symbol + 1, "Kushilevitz & Nisan 1997 (fooling set)",
                           "[D]", "fooling set {(x, x)} of size 2^n and the trivial protocol"),
            ComplexityFact("randomized_public", "Theta", sympy.log(n_symbol, 2),
                           "Nisan 1993; Viola 2015", "[R]"),
        )
