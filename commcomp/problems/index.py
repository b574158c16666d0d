"""INDEX_n: Alice holds x in {0,1}^n, Bob an index i in [0, n); the answer is x_i."""

from __future__ import annotations

import numpy as np
import sympy

from ..errors import InvalidParameterError
from .base import ComplexityFact, Problem, eps_symbol, n_symbol

__all__ = ["Index"]

_H2 = -eps_symbol * sympy.log(eps_symbol, 2) - (1 - eps_symbol) * sympy.log(1 - eps_symbol, 2)


class Index(Problem):
    """INDEX_n (0-based: Bob's ``i`` is in ``[0, n)``).

    Examples
    --------
    >>> import numpy as np
    >>> Index().evaluate(np.array([[0, 1, 1]]), np.array([1])).tolist()
    [True]
    >>> Index().deterministic_one_way_bits(8), Index().deterministic_bits(8)
    (8, 4)
    """

    name = "index"
    aliases = ("idx", "index-function")
    title = "Index"
    description = "Alice x in {0,1}^n, Bob i in [n]; output x_i"

    def bob_inputs(self, n: int) -> np.ndarray:
        return np.arange(self.check_n(n), dtype=np.int64)

    def bob_input_bits(self, n: int) -> int:
        n = self.check_n(n)
        return max(1, (n - 1).bit_length())

    def evaluate(self, x, y) -> np.ndarray:
        x = np.asarray(x)
        i = np.asarray(y, dtype=np.int64).reshape(-1)
        if i.size and (i.min() < 0 or i.max() >= x.shape[1]):
            raise InvalidParameterError(f"index out of range [0, {x.shape[1]})")
        return x[np.arange(x.shape[0]), i].astype(bool)  # (B,)

    def sample(self, n, batch, rng):
        n, batch = self.check_n(n), self._check_batch(batch)
        x = rng.integers(0, 2, size=(batch, n), dtype=np.uint8)  # uniform x: x_i is a fair coin
        i = rng.integers(0, n, size=batch, dtype=np.int64)
        return x, i

    @classmethod
    def complexity(cls):
        src = "Kremer, Nisan, Ron 1999; Kushilevitz & Nisan 1997"
        return (
            ComplexityFact("deterministic_one_way", "=", n_symbol, src + " (CC-INDEX)", "[D]",
                           "Bob may ask any i, so Alice's one message must fix all of x"),
            ComplexityFact("deterministic", "=", sympy.ceiling(sympy.log(n_symbol, 2)) + 1,
                           "CC-INDEX: Bob sends i, Alice answers x_i", "[D]",
                           "upper bound by the protocol; equality for the two-way model"),
            ComplexityFact("randomized_one_way", ">=", (1 - _H2) * n_symbol,
                           "Kremer, Nisan, Ron 1999 (CC-INDEX)", "[D]",
                           "error epsilon, public coin, Alice to Bob"),
        )
