"""EQ_n: x, y in {0,1}^n; the answer is 1[x = y]."""

from __future__ import annotations

import numpy as np
import sympy

from .base import ComplexityFact, Problem, eps_symbol, n_symbol

__all__ = ["Equality"]


class Equality(Problem):
    """EQ_n.

    ``sample`` draws x uniformly and makes y = x for half of the batch (else y is uniform
    and, for n >= 1, differs from x in a random flipped bit), so both answers appear.

    Examples
    --------
    >>> import numpy as np
    >>> Equality().evaluate(np.array([[1, 0], [1, 0]]), np.array([[1, 0], [1, 1]])).tolist()
    [True, False]
    >>> Equality().deterministic_bits(5)
    6
    """

    name = "equality"
    aliases = ("eq",)
    title = "Equality"
    description = "x, y in {0,1}^n; output 1[x = y]"

    def evaluate(self, x, y) -> np.ndarray:
        return np.all(np.asarray(x) == np.asarray(y), axis=1)  # (B,)

    def sample(self, n, batch, rng):
        n, batch = self.check_n(n), self._check_batch(batch)
        x = rng.integers(0, 2, size=(batch, n), dtype=np.uint8)
        y = x.copy()
        unequal = rng.random(batch) < 0.5
        flip = rng.integers(0, n, size=batch)
        rows = np.nonzero(unequal)[0]
        y[rows, flip[rows]] ^= 1  # one guaranteed difference
        noise = rng.integers(0, 2, size=(batch, n), dtype=np.uint8) & (rng.random((batch, n)) < 0.5)
        y[rows] ^= noise[rows] & (np.arange(n)[None, :] != flip[rows, None])  # more, elsewhere
        return x, y

    @classmethod
    def complexity(cls):
        return (
            ComplexityFact("deterministic_one_way", "=", n_symbol, "CC-EQ", "[D]"),
            ComplexityFact("deterministic", "=", n_symbol + 1,
                           "CC-EQ (Lean 4 communication-complexity formalisation)", "[D]"),
            ComplexityFact("randomized_public", "<=", sympy.ceiling(sympy.log(1 / eps_symbol, 2)) + 1,
                           "CC-EQ public-coin fingerprint: k + 1 bits, error 2^-k", "[D]"),
            ComplexityFact("randomized_private", "Theta", sympy.log(n_symbol, 2),
                           "Kushilevitz & Nisan; Newman 1991 (CC-EQ)", "[D]"),
        )
