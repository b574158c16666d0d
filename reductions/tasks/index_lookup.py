"""Index Lookup (BHBK): n symbols, then a query token p; the answer is s_p."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch

__all__ = ["IndexLookup"]


@dataclass(frozen=True)
class IndexLookup(Task):
    """Index Lookup: symbols s_0 ... s_{n-1}, then one query token p; output s_p.

    Format (N = n + 1)::

        position  0    1    ...  n-1      n
        token     s_0  s_1  ...  s_{n-1}  p      (answer read at position n)

    Vocabulary: ids ``0 .. alphabet-1`` are the symbols (named ``"0"``, ``"1"``, ...); id
    ``alphabet + p`` is the query token for index p (named ``"p<p>"``). The answer is the
    symbol's id, in ``[0, alphabet)``; with the default binary alphabet it is a bit.

    Worked example (n = 4)::

        tokens   1  0  1  1  p2        ids [1, 0, 1, 1, 4]
        answer   s_2 = 1               read at position 4

    Parameters
    ----------
    alphabet : int
        Number of symbols (at least 2).

    Examples
    --------
    >>> import numpy as np
    >>> task = IndexLookup()
    >>> batch = task.make_batch(4, np.array([[1, 0, 1, 1, 2 + 2]]))
    >>> task.ground_truth(batch).tolist()
    [[1]]
    >>> task.render(batch.tokens[0], 4)
    '1 0 1 1 p2'
    """

    alphabet: int = 2

    name = "index-lookup"
    aliases = ("il", "index_lookup", "indexlookup")
    answer_kind = "symbol"

    def __post_init__(self):
        if self.alphabet < 2:
            raise InvalidParameterError(f"index-lookup: alphabet must be >= 2, got {self.alphabet}")

    def vocabulary(self, n):
        n = self.check_n(n)
        return tuple(str(a) for a in range(self.alphabet)) + tuple(f"p{p}" for p in range(n))

    def vocab_size(self, n):
        return self.alphabet + self.check_n(n)

    def length(self, n):
        return self.check_n(n) + 1

    def query_token(self, index) -> np.ndarray:
        """Token id of the query for ``index`` (vectorised)."""
        return self.alphabet + np.asarray(index, dtype=np.int64)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Uniform symbols and query; the symbol at the query is set to a balanced label."""
        n, batch = self.check_n(n), check_batch(batch)
        symbols = rng.integers(0, self.alphabet, size=(batch, n), dtype=np.int64)  # (B, n)
        query = rng.integers(0, n, size=batch, dtype=np.int64)  # (B,)
        answers = balanced_labels(batch, self.alphabet, rng)  # (B,)
        symbols[np.arange(batch), query] = answers
        tokens = np.concatenate([symbols, self.query_token(query)[:, None]], axis=1)  # (B, n+1)
        return self.make_batch(n, tokens, answers=answers[:, None])

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        tokens = batch.tokens  # (B, n+1)
        n = tokens.shape[1] - 1
        p = tokens[:, n] - self.alphabet  # (B,)
        if np.any((p < 0) | (p >= n)):
            raise InvalidParameterError("index-lookup: the last token must be a query token p<i>")
        return tokens[np.arange(tokens.shape[0]), p][:, None]  # (B, 1)
