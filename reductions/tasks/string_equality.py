"""String Equality (BHBK): x, y, [CLS]; the answer is 1[x = y]."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import TaskBatch, balanced_labels, check_batch
from .two_strings import TwoStringTask

__all__ = ["StringEquality"]


@dataclass(frozen=True)
class StringEquality(TwoStringTask):
    """String Equality: output 1 iff the two halves are equal.

    Format: see :class:`~reductions.tasks.two_strings.TwoStringTask` (N = 2n + 1).

    Worked example (n = 3)::

        tokens   1 0 1 | 1 0 1 | [CLS]      answer 1 (read at position 6)
        tokens   1 0 1 | 1 1 1 | [CLS]      answer 0

    Examples
    --------
    >>> import numpy as np
    >>> task = StringEquality()
    >>> t = task.assemble(np.array([[1, 0, 1], [1, 0, 1]]), np.array([[1, 0, 1], [1, 1, 1]]))
    >>> task.ground_truth(task.make_batch(3, t)).tolist()
    [[1], [0]]
    """

    name = "string-equality"
    aliases = ("equality-string", "string_equality", "streq", "eq-string")

    def sample(self, n, batch, rng) -> TaskBatch:
        """Uniform x; y = x for exactly half the batch, else x with a random non-empty set flipped."""
        n, batch = self.check_n(n), check_batch(batch)
        x = rng.integers(0, 2, size=(batch, n), dtype=np.int64)
        answers = balanced_labels(batch, 2, rng)  # (B,)
        flips = rng.integers(0, 2, size=(batch, n), dtype=np.int64)
        flips[np.arange(batch), rng.integers(0, n, size=batch)] = 1  # at least one flip
        y = x ^ (flips * (1 - answers)[:, None])
        return self.make_batch(n, self.assemble(x, y), answers=answers[:, None])

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        x, y = self.split(batch)
        return np.all(x == y, axis=1).astype(np.int64)[:, None]  # (B, 1)
