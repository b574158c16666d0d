"""Induction heads (Sanford, Hsu, Telgarsky 2024, arXiv 2408.14332): output the token that followed
the previous occurrence of the current token."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch

__all__ = ["InductionHeads"]


@dataclass(frozen=True)
class InductionHeads(Task):
    """Induction heads: tokens sigma_0 ... sigma_{n-1}; output at the last position the token that
    immediately follows the rightmost previous occurrence of sigma_{n-1}, or the paper's bottom
    when sigma_{n-1} did not occur before, written as id ``|Sigma|`` (the augmented alphabet
    Sigma + {bottom}: an argmax readout of |Sigma| + 1 classes can say it).

    The paper (SHT 2024, §1) defines an output at every position i; commcomp reads the last one,
    which is all the INDEX reduction needs (its lower bound is about that one output). Format
    (N = n): the n tokens themselves, ids ``0 .. alphabet-1`` named ``"a<j>"``. The default
    |Sigma| = 3 is what the INDEX partition writes (two bits and the current token); ``alphabet``
    None means |Sigma| = n (the paper's regime |Sigma| <= n).

    Worked example (n = 6)::

        tokens   a2 a0 a1 a2 a3 a1     the last a1 occurred at position 2, followed by a2
        answer   a2 (id 2)             read at position 5

    Examples
    --------
    >>> import numpy as np
    >>> task = InductionHeads(alphabet=None)
    >>> b = task.make_batch(6, np.array([[2, 0, 1, 2, 3, 1], [2, 0, 1, 2, 3, 4]]))
    >>> task.ground_truth(b).tolist()
    [[2], [6]]
    """

    alphabet: int | None = 3

    name = "induction-heads"
    aliases = ("induction", "ih", "induction_heads", "1-hop-induction-heads")
    answer_kind = "symbol"
    min_n = 2

    def __post_init__(self):
        if self.alphabet is not None and self.alphabet < 2:
            raise InvalidParameterError(f"induction-heads: alphabet must be >= 2, got {self.alphabet}")

    def symbols(self, n) -> int:
        """|Sigma| at size n."""
        return self.check_n(n) if self.alphabet is None else self.alphabet

    def vocabulary(self, n):
        return tuple(f"a{j}" for j in range(self.symbols(n)))

    def vocab_size(self, n):
        return self.symbols(n)

    def length(self, n):
        return self.check_n(n)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Uniform tokens; the last token is a copy of a uniformly chosen earlier one, and the
        token after that earlier occurrence's rightmost copy is set to a balanced label (so every
        answer has a previous occurrence and the answers are balanced over the alphabet)."""
        n, batch = self.check_n(n), check_batch(batch)
        s = self.symbols(n)
        tokens = rng.integers(0, s, size=(batch, n), dtype=np.int64)  # (B, n)
        rows = np.arange(batch)
        where = rng.integers(0, n - 1, size=batch)  # (B,) the previous occurrence
        tokens[:, -1] = tokens[rows, where]
        last = self._rightmost_previous(tokens)  # (B,) >= where
        tokens[rows, last + 1] = np.where(last + 1 == n - 1, tokens[rows, last + 1],
                                          balanced_labels(batch, s, rng))
        return self.make_batch(n, tokens, answers=self.ground_truth(self.make_batch(n, tokens)))

    @staticmethod
    def _rightmost_previous(tokens) -> np.ndarray:
        """(B,) index of the rightmost j < N-1 with tokens[j] == tokens[N-1], else -1."""
        N = tokens.shape[1]
        hit = tokens[:, :-1] == tokens[:, -1:]  # (B, N-1)
        rev = np.argmax(hit[:, ::-1], axis=1)  # first hit from the right
        return np.where(hit.any(axis=1), N - 2 - rev, -1)

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        tokens = batch.tokens  # (B, N)
        if np.any((tokens < 0) | (tokens >= self.symbols(batch.n))):
            raise InvalidParameterError("induction-heads: tokens must be symbol ids")
        j = self._rightmost_previous(tokens)  # (B,)
        after = tokens[np.arange(tokens.shape[0]), np.maximum(j + 1, 0)]
        return np.where(j >= 0, after, self.bottom(batch.n))[:, None]  # (B, 1)

    def bottom(self, n) -> int:
        """The answer id of bottom (no previous occurrence): |Sigma|."""
        return self.symbols(n)
