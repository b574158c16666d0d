"""Multi-Index Lookup (BHBK rebuttal): k indices, n symbols, the k indices again."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch, random_subsets

__all__ = ["MultiIndexLookup"]


@dataclass(frozen=True)
class MultiIndexLookup(Task):
    """Multi-Index Lookup with the indices also prepended (reference §4.1 BHBK-MIL-RNN, §8.8).

    The size parameter ``n`` is the number k of indices; the data has
    ``L = data_factor * k`` symbols (k = L/2 by default, the rebuttal's "k = N/2")::

        positions 0 .. k-1        k .. k+L-1        k+L .. 2k+L-1
        tokens    p_1 ... p_k     s_0 ... s_{L-1}    p_1 ... p_k      N = 2k + L

    The output after each trailing index p_j (positions ``k+L .. 2k+L-1``) is s_{p_j}; the
    ground truth reads the trailing indices only (the prepended ones only help a recurrent
    model decide what to store).

    Vocabulary: ids ``0 .. alphabet-1`` are symbols, id ``alphabet + p`` is the index token
    ``"p<p>"`` for p in ``[0, L)``. Answers are symbol ids, shape ``(B, k)``.

    Worked example (k = 2, L = 4)::

        tokens   p3 p0 | 0 1 1 0 | p3 p0
        answers  s_3 = 0 at position 6, s_0 = 0 at position 7

    Examples
    --------
    >>> import numpy as np
    >>> task = MultiIndexLookup()
    >>> t = np.array([[2 + 3, 2 + 0, 0, 1, 1, 0, 2 + 3, 2 + 0]])
    >>> task.ground_truth(task.make_batch(2, t)).tolist()
    [[0, 0]]
    >>> task.output_positions(2).tolist()
    [6, 7]
    """

    alphabet: int = 2
    data_factor: int = 2

    name = "multi-index-lookup"
    aliases = ("mil", "multi_index_lookup", "multiindexlookup")
    answer_kind = "symbol"

    def __post_init__(self):
        if self.alphabet < 2 or self.data_factor < 1:
            raise InvalidParameterError("multi-index-lookup: need alphabet >= 2 and data_factor >= 1")

    def data_length(self, n) -> int:
        """Number L of data symbols."""
        return self.data_factor * self.check_n(n)

    def vocabulary(self, n):
        return (tuple(str(a) for a in range(self.alphabet))
                + tuple(f"p{p}" for p in range(self.data_length(n))))

    def vocab_size(self, n):
        return self.alphabet + self.data_length(n)

    def length(self, n):
        return 2 * self.check_n(n) + self.data_length(n)

    def output_positions(self, n):
        k, L = self.check_n(n), self.data_length(n)
        return np.arange(k + L, 2 * k + L, dtype=np.int64)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Uniform symbols; k distinct random indices; the looked-up symbols are balanced."""
        k, L, batch = self.check_n(n), self.data_length(n), check_batch(batch)
        symbols = rng.integers(0, self.alphabet, size=(batch, L), dtype=np.int64)  # (B, L)
        index = random_subsets(batch, L, k, rng)  # (B, k), distinct since k <= L
        answers = balanced_labels((batch, k), self.alphabet, rng)  # (B, k)
        symbols[np.arange(batch)[:, None], index] = answers
        query = self.alphabet + index  # (B, k)
        tokens = np.concatenate([query, symbols, query], axis=1)  # (B, 2k+L)
        return self.make_batch(k, tokens, answers=answers)

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        k = batch.n
        L = self.data_length(k)
        symbols = batch.tokens[:, k:k + L]  # (B, L)
        index = batch.tokens[:, k + L:] - self.alphabet  # (B, k)
        if np.any((index < 0) | (index >= L)):
            raise InvalidParameterError("multi-index-lookup: trailing tokens must be index tokens")
        return np.take_along_axis(symbols, index, axis=1)  # (B, k)
