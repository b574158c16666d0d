"""Multi-query associative recall (MQAR, Arora et al. 2023): key-value pairs, then queries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch, random_subsets

__all__ = ["MQAR", "NOT_FOUND"]

NOT_FOUND = -1  # answer for a query whose key is not among the pairs (the sampler never asks one)


@dataclass(frozen=True)
class MQAR(Task):
    """MQAR: n key-value pairs k_1 v_1 ... k_n v_n, then Q query keys; answer each query's value.

    Format (N = 2n + Q)::

        positions 0    1    ...  2n-2  2n-1 | 2n   ...  2n+Q-1
        tokens    k_1  v_1  ...  k_n   v_n  | q_1  ...  q_Q       (answers read at each q_j)

    Vocabulary: ids ``0 .. K-1`` are keys ``"k<j>"`` with ``K = key_factor * n``; ids
    ``K .. K+values-1`` are values ``"v<a>"``. Keys within an instance are distinct. The answer
    at q_j is the value index (in ``[0, values)``) paired with key q_j, or ``NOT_FOUND`` (-1)
    when q_j is not among the keys. This is the format the reference leaves open (BHBK-MQAR
    [R]); Zoology's MQAR uses the same pair-then-query layout.

    Parameters
    ----------
    num_queries : int or None
        Q; None means Q = n (one query per pair: "many queries").
    values : int
        Size of the value alphabet (binary by default, so a value is a bit).
    key_factor : int
        Key vocabulary size K = key_factor * n.

    Worked example (n = 3, Q = 2, K = 6)::

        tokens   k4 v1  k0 v0  k5 v1 | k0 k4
        answers  v(k0) = 0, v(k4) = 1

    Examples
    --------
    >>> import numpy as np
    >>> task = MQAR(num_queries=2)
    >>> K = task.key_space(3)
    >>> t = np.array([[4, K + 1, 0, K + 0, 5, K + 1, 0, 4]])
    >>> task.ground_truth(task.make_batch(3, t)).tolist()
    [[0, 1]]
    """

    num_queries: int | None = 1
    values: int = 2
    key_factor: int = 2

    name = "mqar"
    aliases = ("associative-recall", "ar", "multi-query-associative-recall")
    answer_kind = "symbol"

    def __post_init__(self):
        if (self.num_queries is not None and self.num_queries < 1) or self.values < 2 \
                or self.key_factor < 1:
            raise InvalidParameterError("mqar: need num_queries >= 1 (or None), values >= 2, "
                                        "key_factor >= 1")

    def queries(self, n) -> int:
        """Number Q of queries at size n."""
        return self.check_n(n) if self.num_queries is None else self.num_queries

    def key_space(self, n) -> int:
        return self.key_factor * self.check_n(n)

    def vocabulary(self, n):
        return (tuple(f"k{j}" for j in range(self.key_space(n)))
                + tuple(f"v{a}" for a in range(self.values)))

    def vocab_size(self, n):
        return self.key_space(n) + self.values

    def length(self, n):
        return 2 * self.check_n(n) + self.queries(n)

    def output_positions(self, n):
        return np.arange(2 * self.check_n(n), self.length(n), dtype=np.int64)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Distinct random keys; queries ask present keys (distinct while Q <= n); the values
        read by the queries are balanced."""
        n, batch = self.check_n(n), check_batch(batch)
        K, Q = self.key_space(n), self.queries(n)
        keys = random_subsets(batch, K, n, rng)  # (B, n) distinct
        vals = rng.integers(0, self.values, size=(batch, n), dtype=np.int64)  # (B, n)
        if Q <= n:
            asked = random_subsets(batch, n, Q, rng)  # (B, Q) distinct pair indices
            vals[np.arange(batch)[:, None], asked] = balanced_labels((batch, Q), self.values, rng)
        else:
            asked = rng.integers(0, n, size=(batch, Q))  # repeats unavoidable
        tokens = np.empty((batch, 2 * n + Q), dtype=np.int64)
        tokens[:, 0:2 * n:2] = keys
        tokens[:, 1:2 * n:2] = K + vals
        tokens[:, 2 * n:] = np.take_along_axis(keys, asked, axis=1)
        answers = np.take_along_axis(vals, asked, axis=1)  # (B, Q)
        return self.make_batch(n, tokens, answers=answers)

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        n = batch.n
        K = self.key_space(n)
        tokens = batch.tokens
        keys, vals = tokens[:, 0:2 * n:2], tokens[:, 1:2 * n:2] - K  # (B, n) each
        queries = tokens[:, 2 * n:]  # (B, Q)
        if np.any((keys < 0) | (keys >= K)) or np.any((queries < 0) | (queries >= K)):
            raise InvalidParameterError("mqar: key and query positions must hold key ids")
        if np.any((vals < 0) | (vals >= self.values)):
            raise InvalidParameterError("mqar: value positions must hold value ids")
        ordered = np.sort(keys, axis=1)
        if np.any(ordered[:, 1:] == ordered[:, :-1]):
            raise InvalidParameterError("mqar: keys within an instance must be distinct")
        rows = np.arange(batch.batch_size)[:, None]
        lookup = np.full((batch.batch_size, K), NOT_FOUND, dtype=np.int64)  # (B, K): key -> value
        lookup[rows, keys] = vals
        return lookup[rows, queries]  # (B, Q)
