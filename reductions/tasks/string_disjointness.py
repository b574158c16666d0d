"""String Disjointness (BHBK): x, y, [CLS]; the answer is 1 iff no i has x_i = y_i = 1."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import TaskBatch, balanced_labels, check_batch
from .two_strings import TwoStringTask

__all__ = ["StringDisjointness"]


@dataclass(frozen=True)
class StringDisjointness(TwoStringTask):
    """String Disjointness: output 1 iff the sets with indicator vectors x and y are disjoint.

    Format: see :class:`~reductions.tasks.two_strings.TwoStringTask` (N = 2n + 1).

    Worked example (n = 3)::

        tokens   1 0 1 | 0 1 0 | [CLS]      answer 1 (disjoint)
        tokens   1 0 1 | 0 0 1 | [CLS]      answer 0 (both hold element 2)

    Examples
    --------
    >>> import numpy as np
    >>> task = StringDisjointness()
    >>> t = task.assemble(np.array([[1, 0, 1], [1, 0, 1]]), np.array([[0, 1, 0], [0, 0, 1]]))
    >>> task.ground_truth(task.make_batch(3, t)).tolist()
    [[1], [0]]
    """

    name = "string-disjointness"
    aliases = ("disjointness-string", "string_disjointness", "strdisj", "disj-string")

    def sample(self, n, batch, rng) -> TaskBatch:
        """Each coordinate (0,0), (0,1) or (1,0) uniformly; exactly half the batch gets one
        random coordinate set to (1,1)."""
        n, batch = self.check_n(n), check_batch(batch)
        pattern = rng.integers(0, 3, size=(batch, n))
        x = (pattern == 2).astype(np.int64)
        y = (pattern == 1).astype(np.int64)
        answers = balanced_labels(batch, 2, rng)  # (B,): 1 = disjoint
        rows = np.nonzero(answers == 0)[0]
        where = rng.integers(0, n, size=rows.size)
        x[rows, where] = 1
        y[rows, where] = 1
        return self.make_batch(n, self.assemble(x, y), answers=answers[:, None])

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        x, y = self.split(batch)
        return (~np.any((x & y).astype(bool), axis=1)).astype(np.int64)[:, None]  # (B, 1)
