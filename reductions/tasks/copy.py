"""Copying (Jelassi, Brandfonbrener, Kakade, Malach, ICML 2024, arXiv 2402.01032): read a string, then
write it out again."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, check_batch

__all__ = ["Copy"]


@dataclass(frozen=True)
class Copy(Task):
    """Copy: a string s_0 ... s_{n-1} over an alphabet D, a separator, then n blank tokens; the
    answer at the k-th blank is s_k.

    Format (N = 2n + 1)::

        positions 0    ...  n-1      n      n+1 ... 2n
        tokens    s_0  ...  s_{n-1}  [SEP]  _   ... _        (answers s_0 .. s_{n-1} at n+1 .. 2n)

    The blanks are fixed tokens, not the previous output fed back: a model that read s must
    produce it from what it carries past the separator, which is the setting of JBKM's pigeonhole
    bound (a generalized state space model's outputs after the string are a function of its state).
    Ids ``0 .. alphabet-1`` are symbols, then ``[SEP]``, then ``_``.

    Examples
    --------
    >>> import numpy as np
    >>> task = Copy()
    >>> task.ground_truth(task.make_batch(3, np.array([[1, 0, 1, 2, 3, 3, 3]]))).tolist()
    [[1, 0, 1]]
    """

    alphabet: int = 2

    name = "copy"
    aliases = ("copying", "string-copy", "repeat")
    answer_kind = "symbol"

    def __post_init__(self):
        if self.alphabet < 2:
            raise InvalidParameterError(f"copy: alphabet must be >= 2, got {self.alphabet}")

    @property
    def separator(self) -> int:
        return self.alphabet

    @property
    def blank(self) -> int:
        return self.alphabet + 1

    def vocabulary(self, n):
        self.check_n(n)
        return tuple(str(a) for a in range(self.alphabet)) + ("[SEP]", "_")

    def vocab_size(self, n):
        self.check_n(n)
        return self.alphabet + 2

    def length(self, n):
        return 2 * self.check_n(n) + 1

    def output_positions(self, n):
        n = self.check_n(n)
        return np.arange(n + 1, 2 * n + 1, dtype=np.int64)

    def assemble(self, strings) -> np.ndarray:
        """Tokens ``(B, 2n+1)`` for strings ``(B, n)``."""
        s = np.asarray(strings, dtype=np.int64)
        B, n = s.shape
        return np.concatenate([s, np.full((B, 1), self.separator), np.full((B, n), self.blank)], axis=1)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Uniform strings (JBKM's distribution)."""
        n, batch = self.check_n(n), check_batch(batch)
        s = rng.integers(0, self.alphabet, size=(batch, n), dtype=np.int64)
        return self.make_batch(n, self.assemble(s), answers=s)

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        n, t = batch.n, batch.tokens
        s = t[:, :n]
        if (np.any((s < 0) | (s >= self.alphabet)) or np.any(t[:, n] != self.separator)
                or np.any(t[:, n + 1:] != self.blank)):
            raise InvalidParameterError("copy: expected symbols, [SEP], then blanks")
        return s.copy()  # (B, n)
