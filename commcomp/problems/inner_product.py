"""IP2_n: x, y in {0,1}^n; the answer is <x, y> mod 2."""

from __future__ import annotations

import numpy as np
import sympy

from .base import ComplexityFact, Problem, n_symbol

__all__ = ["InnerProduct"]


class InnerProduct(Problem):
    """IP2_n (answer True means the inner product is odd). Uniform sampling is balanced.

    Examples
    --------
    >>> import numpy as np
    >>> InnerProduct().evaluate(np.array([[1, 1, 0]]), np.array([[1, 1, 1]])).tolist()
    [False]
    """

    name = "inner-product"
    aliases = ("ip", "ip2", "inner_product")
    title = "Inner product mod 2"
    description = "x, y in {0,1}^n; output <x, y> mod 2"

    def evaluate(self, x, y) -> np.ndarray:
        return (np.sum(np.asarray(x, dtype=np.int64) & np.asarray(y, dtype=np.int64), axis=1) % 2
                ).astype(bool)  # (B,)

    def sample(self, n, batch, rng):
        n, batch = self.check_n(n), self._check_batch(batch)
        return (rng.integers(0, 2, size=(batch, n), dtype=np.uint8),
                rng.integers(0, 2, size=(batch, n), dtype=np.uint8))

    @classmethod
    def complexity(cls):
        return (
            ComplexityFact("deterministic_one_way", "=", n_symbol, "CC-IP2 (rows are distinct)", "[D]"),
            ComplexityFact("deterministic", "=", n_symbol + 1, "CC-IP2 (Chor & Goldreich 1988)", "[D]",
                           "n + 1 with the output bit"),
            ComplexityFact("randomized_public", ">=", n_symbol / 2 - sympy.Integer(1),
                           "CC-IP2 discrepancy <= 2^(-n/2) (Chor & Goldreich 1988)", "[D]",
                           "advantage 1/4 over guessing: n/2 - log2(4) + O(1)"),
        )
