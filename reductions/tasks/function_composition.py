"""Function composition (Peng, Narayanan, Papadimitriou 2024, arXiv 2402.08164), under the two token
layouts of Strobl, Angluin, Frank (2025, arXiv 2503.22076): answer g(f(x))."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, check_batch

__all__ = ["FunctionComposition", "LAYOUTS"]

#: ``pairs``: one token per entry, naming its input and its value together (id ``i n + v``);
#: ``split``: an input token ``i<i>`` and, at the next position, a value token ``v<v>`` (the layout
#: Strobl et al. show concise 1-layer Transformers cannot read).
LAYOUTS = ("pairs", "split")


@dataclass(frozen=True)
class FunctionComposition(Task):
    """Function composition on the domain [n]: the entries of g, the entries of f, a query x; output
    g(f(x)).

    Each function is given as n entries (input i, value v), one per input, in any order.
    Format, layout ``pairs`` (N = 2n + 1)::

        g-entries (i, g(i)) x n | f-entries (i, f(i)) x n | q<x>       ids i*n + v, then 2 n^2 + x

    layout ``split`` (N = 4n + 1)::

        i<i> v<g(i)> ... (n pairs) | i<i> v<f(i)> ... (n pairs) | q<x>  ids i, n + v, then 2n + x

    In ``pairs`` the g-block's ids are ``i n + v`` and the f-block's ``n^2 + i n + v`` (so the two
    functions are told apart by their tokens, not only by their positions). The answer is g(f(x)),
    read at the last position. g comes first: the PNP split gives g to Alice.

    Worked example (n = 2, pairs): g = (0->1, 1->0), f = (0->1, 1->1), x = 0::

        tokens   (0,1) (1,0) | f(0,1) f(1,1) | q0      ids [1, 2, 5, 7, 8]
        answer   g(f(0)) = g(1) = 0

    Examples
    --------
    >>> import numpy as np
    >>> task = FunctionComposition()
    >>> task.ground_truth(task.make_batch(2, np.array([[1, 2, 5, 7, 8]]))).tolist()
    [[0]]
    >>> s = FunctionComposition(layout="split")
    >>> s.ground_truth(s.make_batch(2, np.array([[1, 2, 0, 3, 0, 3, 1, 3, 4]]))).tolist()
    [[0]]
    """

    layout: str = "pairs"

    name = "function-composition"
    aliases = ("composition", "fc", "function_composition", "grandparent")
    answer_kind = "symbol"
    min_n = 2

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise InvalidParameterError(f"function-composition: layout must be one of {LAYOUTS}, "
                                        f"got {self.layout!r}")

    def vocabulary(self, n):
        n = self.check_n(n)
        if self.layout == "pairs":
            entries = tuple(f"{tag}({i},{v})" for tag in ("g", "f") for i in range(n) for v in range(n))
        else:
            entries = tuple(f"i{i}" for i in range(n)) + tuple(f"v{v}" for v in range(n))
        return entries + tuple(f"q{x}" for x in range(n))

    def vocab_size(self, n):
        n = self.check_n(n)
        return (2 * n * n if self.layout == "pairs" else 2 * n) + n

    def length(self, n):
        n = self.check_n(n)
        return (2 * n if self.layout == "pairs" else 4 * n) + 1

    def answer_values(self, n) -> int:
        """How many answers there are at size n: g(f(x)) is a value in [n] (the readout's classes)."""
        return self.check_n(n)

    def query_offset(self, n) -> int:
        """Id of the query token q0."""
        n = self.check_n(n)
        return 2 * n * n if self.layout == "pairs" else 2 * n

    def assemble(self, g_inputs, g_values, f_inputs, f_values, query, n) -> np.ndarray:
        """Tokens ``(B, N)`` from the entries ``(B, n)`` of g and f (in the order given) and the query ``(B,)``."""
        q = self.query_offset(n) + np.asarray(query, dtype=np.int64)[:, None]
        if self.layout == "pairs":
            return np.concatenate([g_inputs * n + g_values, n * n + f_inputs * n + f_values, q], axis=1)
        B = q.shape[0]
        tokens = np.empty((B, 4 * n + 1), dtype=np.int64)
        tokens[:, 0:2 * n:2], tokens[:, 1:2 * n:2] = g_inputs, n + g_values
        tokens[:, 2 * n:4 * n:2], tokens[:, 2 * n + 1:4 * n:2] = f_inputs, n + f_values
        tokens[:, -1:] = q
        return tokens

    def entries(self, batch: TaskBatch):
        """``(g_inputs, g_values, f_inputs, f_values, query)`` read back from the tokens."""
        n, t = batch.n, batch.tokens
        if self.layout == "pairs":
            g, f = t[:, :n], t[:, n:2 * n] - n * n
            parts = (g // n, g % n, f // n, f % n)
            ok = np.all((t[:, :n] >= 0) & (t[:, :n] < n * n)) and np.all((f >= 0) & (f < n * n))
        else:
            parts = (t[:, 0:2 * n:2], t[:, 1:2 * n:2] - n, t[:, 2 * n:4 * n:2], t[:, 2 * n + 1:4 * n:2] - n)
            ok = all(np.all((p >= 0) & (p < n)) for p in parts)
        query = t[:, -1] - self.query_offset(n)
        if not ok or np.any((query < 0) | (query >= n)):
            raise InvalidParameterError("function-composition: tokens do not follow the layout")
        return (*parts, query)

    def sample(self, n, batch, rng) -> TaskBatch:
        """Uniform random g and f, entries in a random order, uniform query."""
        n, batch = self.check_n(n), check_batch(batch)
        order = np.argsort(rng.random((2, batch, n)), axis=-1).astype(np.int64)  # (2, B, n)
        values = rng.integers(0, n, size=(2, batch, n), dtype=np.int64)
        query = rng.integers(0, n, size=batch, dtype=np.int64)
        tokens = self.assemble(order[0], values[0], order[1], values[1], query, n)
        return self.make_batch(n, tokens, answers=self.ground_truth(self.make_batch(n, tokens)))

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        g_in, g_val, f_in, f_val, query = self.entries(batch)
        n, rows = batch.n, np.arange(batch.batch_size)[:, None]
        tables = []
        for inputs, values in ((g_in, g_val), (f_in, f_val)):
            if np.any(np.sort(inputs, axis=1) != np.arange(n)):
                raise InvalidParameterError("function-composition: each function needs one entry per input")
            table = np.empty((batch.batch_size, n), dtype=np.int64)  # (B, n): input -> value
            table[rows, inputs] = values
            tables.append(table)
        g, f = tables
        r = rows[:, 0]
        return g[r, f[r, query]][:, None]  # (B, 1)
