"""Match3 (SHT): for each position i, are there j, k with x_i + x_j + x_k = 0 (mod M)?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch
from .match2 import value_counts

__all__ = ["Match3"]


@dataclass(frozen=True)
class Match3(Task):
    """Match3: x_0 ... x_{N-1} in Z_M; Match3(X)_i = 1 iff some j, k, both != i (j = k
    allowed), have x_i + x_j + x_k = 0 mod M.

    Sequence to sequence: every position is an output (answers ``(B, N)``). The size
    parameter n gives N = 2n + 1 tokens and, by default, M = 4n + 1 (the reference's §8.6
    sizes: n for Alice, n for Bob, one query token; M odd and > 4n would also do).
    Vocabulary: id v is the residue v.

    Choice made here: j and k range over positions other than i. Without it, a query token
    x_i = 0 (as in §8.6) would match itself (0 + 0 + 0 = 0). The sampler balances the answer
    at ``query_position`` (the last position by default, where the DISJ reduction reads it).

    Ground truth: with c the residue counts, the number of ordered pairs (j, k) with
    x_j + x_k = t is the cyclic self-convolution (c * c)[t] (computed by FFT and rounded;
    exact while N^2 < 2^40); pairs using i are removed by inclusion-exclusion:
    (c * c)[-x_i] - 2 c[-2 x_i] + [3 x_i = 0].

    Worked example (n = 2, M = 9)::

        tokens   0  1  2  7  8
        answers  1  1  1  1  1     (0 + 1 + 8, 0 + 2 + 7, ...)
        tokens   0  1  2  3  3
        answers  0  0  0  1  1     (3 + 3 + 3 = 9 with j = k; 0, 1, 2 find no pair)

    Examples
    --------
    >>> import numpy as np
    >>> task = Match3()
    >>> task.ground_truth(task.make_batch(2, np.array([[0, 1, 2, 3, 3], [0, 1, 2, 7, 8]]))).tolist()
    [[0, 0, 0, 1, 1], [1, 1, 1, 1, 1]]
    """

    modulus: int | None = None
    query_position: int = -1

    name = "match3"
    aliases = ("match-3", "triple-match")

    def modulus_at(self, n) -> int:
        n = self.check_n(n)
        M = 4 * n + 1 if self.modulus is None else self.modulus
        if M < 3 or M % 2 == 0:
            raise InvalidParameterError(f"match3: modulus must be odd and >= 3, got {M}")
        return M

    def vocabulary(self, n):
        return tuple(str(v) for v in range(self.modulus_at(n)))

    def vocab_size(self, n):
        return self.modulus_at(n)

    def length(self, n):
        return 2 * self.check_n(n) + 1

    def output_positions(self, n):
        return np.arange(self.length(n), dtype=np.int64)

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        M, tokens = self.modulus_at(batch.n), batch.tokens
        if np.any((tokens < 0) | (tokens >= M)):
            raise InvalidParameterError(f"match3: tokens must be residues in [0, {M})")
        counts = value_counts(tokens, M)  # (B, M)
        spectrum = np.fft.rfft(counts.astype(np.float64), axis=1)
        pairs = np.rint(np.fft.irfft(spectrum * spectrum, n=M, axis=1)).astype(np.int64)  # (B, M)
        total = np.take_along_axis(pairs, (-tokens) % M, axis=1)  # (B, N)
        with_i = np.take_along_axis(counts, (-2 * tokens) % M, axis=1)  # (B, N)
        count = total - 2 * with_i + ((3 * tokens) % M == 0)
        return (count > 0).astype(np.int64)  # (B, N)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Exactly half the batch has a solution at ``query_position``. With t = -x_q, the
        others are drawn from [L, L + (M-1)/2) where 2L = t + 1, so no two of them sum to t;
        positives then set one other position to t minus another."""
        n, batch = self.check_n(n), check_batch(batch)
        M, N = self.modulus_at(n), self.length(n)
        q = self.query_position % N
        x_q = rng.integers(0, M, size=batch)  # (B,)
        t = (-x_q) % M
        low = ((t + 1) * ((M + 1) // 2)) % M  # (t + 1) / 2 mod M
        tokens = (low[:, None] + rng.integers(0, (M - 1) // 2, size=(batch, N))) % M  # (B, N)
        tokens[:, q] = x_q
        answers = balanced_labels(batch, 2, rng)
        rows = np.nonzero(answers == 1)[0]
        others = np.delete(np.arange(N), q)
        pick = np.argsort(rng.random((rows.size, N - 1)), axis=1)[:, :2]  # two distinct others
        j, k = others[pick[:, 0]], others[pick[:, 1]]
        tokens[rows, k] = (t[rows] - tokens[rows, j]) % M
        return self.make_batch(n, tokens, answers=self.ground_truth(self.make_batch(n, tokens)))
