"""DISJ_n: x, y in {0,1}^n as sets; the answer is 1 iff no i has x_i = y_i = 1."""

from __future__ import annotations

import numpy as np

from .base import ComplexityFact, Problem, n_symbol

__all__ = ["Disjointness"]


class Disjointness(Problem):
    """DISJ_n (answer True means disjoint).

    Uniform x, y are almost never disjoint for large n, so ``sample`` draws each pair from a
    disjoint or a singly-intersecting distribution with probability 1/2 each: coordinates are
    (0,0), (0,1), (1,0) uniformly, and in the intersecting half one random coordinate is (1,1).

    Examples
    --------
    >>> import numpy as np
    >>> Disjointness().evaluate(np.array([[1, 0], [1, 0]]), np.array([[0, 1], [1, 1]])).tolist()
    [True, False]
    """

    name = "disjointness"
    aliases = ("disj", "set-disjointness")
    title = "Disjointness"
    description = "x, y in {0,1}^n; output 1 iff no i with x_i = y_i = 1"

    def evaluate(self, x, y) -> np.ndarray:
        return ~np.any((np.asarray(x) & np.asarray(y)).astype(bool), axis=1)  # (B,)

    def sample(self, n, batch, rng):
        n, batch = self.check_n(n), self._check_batch(batch)
        pattern = rng.integers(0, 3, size=(batch, n))  # 0: (0,0), 1: (0,1), 2: (1,0)
        x = (pattern == 2).astype(np.uint8)
        y = (pattern == 1).astype(np.uint8)
        intersect = rng.random(batch) < 0.5
        rows = np.nonzero(intersect)[0]
        where = rng.integers(0, n, size=batch)[rows]
        x[rows, where] = 1
        y[rows, where] = 1
        return x, y

    @classmethod
    def complexity(cls):
        return (
            ComplexityFact("deterministic_one_way", "=", n_symbol, "CC-DISJ", "[D]"),
            ComplexityFact("deterministic", "=", n_symbol + 1, "CC-DISJ", "[D]"),
            ComplexityFact("randomized_public", "Theta", n_symbol,
                           "Kalyanasundaram & Schnitger 1992; Razborov 1992 (CC-DISJ)", "[D]",
                           "also one-way; dense sets needed"),
        )
