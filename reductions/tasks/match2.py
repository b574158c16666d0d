"""Match2 (SHT): for each position i, is there another j with x_i + x_j = 0 (mod M)?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch

__all__ = ["Match2", "value_counts"]


def value_counts(tokens, modulus: int) -> np.ndarray:
    """``(B, M)`` counts of each residue in each row of ``tokens`` ``(B, N)``."""
    B = tokens.shape[0]
    counts = np.zeros(B * modulus, dtype=np.int64)
    flat = (np.arange(B)[:, None] * modulus + tokens).ravel()
    np.add.at(counts, flat, 1)
    return counts.reshape(B, modulus)


@dataclass(frozen=True)
class Match2(Task):
    """Match2: x_0 ... x_{N-1} in Z_M; Match2(X)_i = 1 iff some j != i has x_i + x_j = 0 mod M.

    Sequence to sequence: every position is an output (answers ``(B, N)``). The size
    parameter n gives N = n + 1 tokens and, by default, M = 2n + 1 (``modulus`` overrides
    it). Vocabulary: id v is the residue v, named ``"v"``.

    Choice made here (SHT's Def. leaves it implicit): j ranges over positions other than i.
    The sampler balances the answer at ``query_position`` (the last position by default,
    where the INDEX reduction reads it); other positions are whatever they come out as.

    Worked example (n = 3, M = 7)::

        tokens   1  5  3  6
        answers  1  0  0  1      (1 + 6 = 7; 5 needs a 2, 3 needs a 4)

    Examples
    --------
    >>> import numpy as np
    >>> task = Match2()
    >>> task.ground_truth(task.make_batch(3, np.array([[1, 5, 3, 6]]))).tolist()
    [[1, 0, 0, 1]]
    """

    modulus: int | None = None
    query_position: int = -1

    name = "match2"
    aliases = ("match-2", "pair-match")

    def modulus_at(self, n) -> int:
        n = self.check_n(n)
        M = 2 * n + 1 if self.modulus is None else self.modulus
        if M < 3:
            raise InvalidParameterError(f"match2: modulus must be >= 3, got {M}")
        return M

    def vocabulary(self, n):
        return tuple(str(v) for v in range(self.modulus_at(n)))

    def vocab_size(self, n):
        return self.modulus_at(n)

    def length(self, n):
        return self.check_n(n) + 1

    def output_positions(self, n):
        return np.arange(self.length(n), dtype=np.int64)

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        M, tokens = self.modulus_at(batch.n), batch.tokens
        if np.any((tokens < 0) | (tokens >= M)):
            raise InvalidParameterError(f"match2: tokens must be residues in [0, {M})")
        counts = value_counts(tokens, M)  # (B, M)
        partner = np.take_along_axis(counts, (-tokens) % M, axis=1)  # (B, N): #j with x_j = -x_i
        partner -= ((2 * tokens) % M == 0)  # j = i itself is not allowed
        return (partner > 0).astype(np.int64)  # (B, N)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Exactly half the batch has a match at ``query_position``. Negatives draw every other
        value from a half-range that cannot contain -x_q; positives then copy -x_q into one
        random other position."""
        n, batch = self.check_n(n), check_batch(batch)
        M, N = self.modulus_at(n), self.length(n)
        q = self.query_position % N
        target = (-rng.integers(1, M, size=batch)) % M  # (B,) the value that would match x_q
        start = (target + 1) % M  # others live in [start, start + (M-1)//2): never the target
        tokens = (start[:, None] + rng.integers(0, (M - 1) // 2, size=(batch, N))) % M  # (B, N)
        tokens[:, q] = (-target) % M
        answers = balanced_labels(batch, 2, rng)  # (B,)
        rows = np.nonzero(answers == 1)[0]
        others = np.delete(np.arange(N), q)
        tokens[rows, others[rng.integers(0, N - 1, size=rows.size)]] = target[rows]
        return self.make_batch(n, tokens, answers=self.ground_truth(self.make_batch(n, tokens)))
