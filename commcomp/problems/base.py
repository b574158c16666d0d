"""The uniform interface of a two-party problem f(x, y), and its known complexity as data."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import sympy

from ..errors import InvalidParameterError, TooLargeError

__all__ = ["Problem", "ComplexityFact", "n_symbol", "eps_symbol", "all_bit_strings",
           "MAX_ENUMERATE_BITS"]

n_symbol = sympy.Symbol("n", integer=True, positive=True)
eps_symbol = sympy.Symbol("epsilon", positive=True)
MAX_ENUMERATE_BITS = 24  # 2^24 rows of n uint8 is already 400 MB at n = 24


@dataclass(frozen=True)
class ComplexityFact:
    """One known complexity of a problem, as a sympy expression in ``n`` (and ``epsilon``).

    ``relation`` is ``"="`` (exact), ``">="``/``"<="`` (a bound with this constant) or
    ``"Theta"`` (asymptotic, constants unknown). ``tag`` is the reference catalogue's
    ([P], [A], [S], [D], [R], ...).
    """

    measure: str  # deterministic_one_way | deterministic | randomized_public | randomized_private
    relation: str
    expression: sympy.Expr
    source: str
    tag: str
    note: str = ""

    def value(self, n: int, epsilon: float = 1 / 3) -> float:
        """Evaluate the expression at ``n`` (and ``epsilon``)."""
        return float(self.expression.subs({n_symbol: n, eps_symbol: epsilon}))

    def describe(self) -> str:
        return f"{self.measure} {self.relation} {self.expression}  ({self.source} {self.tag})"


def all_bit_strings(n: int) -> np.ndarray:
    """All 2^n bit strings of length n as a ``(2**n, n)`` uint8 array in lexicographic order.

    Examples
    --------
    >>> all_bit_strings(2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    if n > MAX_ENUMERATE_BITS:
        raise TooLargeError(f"cannot enumerate 2^{n} inputs: the limit is n <= {MAX_ENUMERATE_BITS}")
    codes = np.arange(2 ** n, dtype=np.uint64)[:, None]  # (2^n, 1)
    shifts = np.arange(n - 1, -1, -1, dtype=np.uint64)[None, :]  # (1, n)
    return ((codes >> shifts) & np.uint64(1)).astype(np.uint8)  # (2^n, n)


class Problem(ABC):
    """A Boolean two-party problem: Alice holds x, Bob holds y, both want f(x, y).

    Inputs travel in batches whose first axis indexes instances: Alice's are ``(B, n)`` uint8
    bit strings; Bob's are ``(B, n)`` uint8 too, except where a problem says otherwise (Index:
    ``(B,)`` int64 indices in ``[0, n)``). ``evaluate`` is vectorised over the batch.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    title: ClassVar[str]
    description: ClassVar[str]

    # -- input spaces ------------------------------------------------------------------
    def check_n(self, n: int) -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InvalidParameterError(f"{self.name}: n must be an integer >= 1, got {n!r}")
        return int(n)

    def alice_inputs(self, n: int) -> np.ndarray:
        """Every input Alice can hold, in lexicographic order."""
        return all_bit_strings(self.check_n(n))

    def bob_inputs(self, n: int) -> np.ndarray:
        """Every input Bob can hold, in lexicographic order."""
        return all_bit_strings(self.check_n(n))

    def alice_input_bits(self, n: int) -> int:
        """Bits needed to write down one of Alice's inputs."""
        return self.check_n(n)

    def bob_input_bits(self, n: int) -> int:
        """Bits needed to write down one of Bob's inputs."""
        return self.check_n(n)

    def enumerate(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """All (x, y) pairs, x-major: pair ``r * len(Y) + c`` is ``(X[r], Y[c])``."""
        xs, ys = self.alice_inputs(n), self.bob_inputs(n)
        x = np.repeat(xs, len(ys), axis=0)  # (R*C, n)
        y = np.tile(ys, (len(xs),) + (1,) * (ys.ndim - 1))  # (R*C, ...)
        return x, y

    # -- the function ------------------------------------------------------------------
    @abstractmethod
    def evaluate(self, x, y) -> np.ndarray:
        """f(x, y) for a batch: ``(B,)`` bool."""

    @abstractmethod
    def sample(self, n: int, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``batch`` random instances, with both answers well represented."""

    # -- complexity as data ------------------------------------------------------------
    @classmethod
    @abstractmethod
    def complexity(cls) -> tuple[ComplexityFact, ...]:
        """What is known about this problem's communication complexity, with sources."""

    @classmethod
    def fact(cls, measure: str) -> ComplexityFact:
        for f in cls.complexity():
            if f.measure == measure:
                return f
        raise KeyError(measure)

    def deterministic_one_way_bits(self, n: int) -> int:
        """D^{A->B}(f) at size n, exact where known."""
        return int(round(self.fact("deterministic_one_way").value(n)))

    def deterministic_bits(self, n: int) -> int:
        """D(f) at size n (two-way), exact where known."""
        return int(round(self.fact("deterministic").value(n)))

    @staticmethod
    def _check_batch(batch: int) -> int:
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 0:
            raise InvalidParameterError(f"batch must be a non-negative integer, got {batch!r}")
        return int(batch)

    def __repr__(self) -> str:
        return f"<problem {self.name}>"
