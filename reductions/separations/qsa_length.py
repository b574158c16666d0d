"""qSA at a sparsity q and a length N of one's choosing: the judge of qSA constructions off N = 2q + 1.

The registered qSA task has N = 2q + 1 rows (the DISJ_q reduction of SHT Thm 4 needs them).  SHT's
separation from recurrent models holds at any fixed q (Thm 11 even at q = 1), and the catalogue's
construction rows are stated at the ``bounds`` parameter q; :class:`QsaAtLength` samples rows
``x_i = (z_i; y_i; i)`` at any ``N >= q + 1`` (z from the task's public data table, y_i a uniform
q-subset of [0, N) by Floyd's method, vectorised over the batch and the rows) and judges with the
task's own ground truth (the mean of the z_j, j in y_i), so a construction built with
``length=N`` is checked on the inputs it is claimed for.

Examples
--------
>>> import numpy as np
>>> judge = QsaAtLength(q=1, length=9)
>>> batch = judge.sample(4, np.random.default_rng(0))
>>> batch.features.shape, judge.ground_truth(batch).shape
((4, 9, 4), (4, 9, 2))
>>> ptr = batch.features[0, :, 2].astype(int)
>>> bool(np.allclose(judge.ground_truth(batch)[0], batch.features[0, ptr, :2]))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from ..tasks.base import TaskBatch
from ..tasks.qsa import QSparseAveraging

__all__ = ["QsaAtLength", "floyd_subsets"]


def floyd_subsets(shape: tuple[int, ...], universe: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform ``size``-subsets of ``[0, universe)``, ascending, ``shape + (size,)`` int64.

    Floyd's method: for j = universe - size .. universe - 1 draw t in [0, j]; take j if t is
    already taken, else t.  One vectorised step per element of the subset.

    >>> s = floyd_subsets((1000,), 5, 2, np.random.default_rng(1))
    >>> bool(np.all(s[:, 0] < s[:, 1])), len({tuple(r) for r in s.tolist()})   # all C(5, 2) sets
    (True, 10)
    """
    if not 0 <= size <= universe:
        raise InvalidParameterError(f"need 0 <= size <= universe, got {size}, {universe}")
    chosen = np.empty(tuple(shape) + (size,), dtype=np.int64)
    for idx, j in enumerate(range(universe - size, universe)):
        t = rng.integers(0, j + 1, size=shape)
        taken = (chosen[..., :idx] == t[..., None]).any(axis=-1)
        chosen[..., idx] = np.where(taken, j, t)
    return np.sort(chosen, axis=-1)


@dataclass(frozen=True)
class QsaAtLength:
    """The ``task_object`` of a qSA construction at sparsity ``q`` and ``length`` rows."""

    q: int
    length: int
    dim: int = 2

    def __post_init__(self):
        if self.q < 1 or self.length < self.q + 1 or self.dim < 1:
            raise InvalidParameterError(f"qsa: need q >= 1, length >= q + 1, dim >= 1 (got {self.q}, "
                                        f"{self.length}, {self.dim})")

    @property
    def task(self) -> QSparseAveraging:
        return QSparseAveraging(dim=self.dim)

    def sample(self, batch: int, rng: np.random.Generator) -> TaskBatch:
        table = self.task.table()
        N = self.length
        z_ids = rng.integers(0, len(table), size=(batch, N))  # (B, N)
        pointers = floyd_subsets((batch, N), N, self.q, rng)  # (B, N, q)
        position = np.broadcast_to(np.arange(N, dtype=np.float64)[None, :, None], (batch, N, 1))
        features = np.concatenate([table[z_ids], pointers.astype(np.float64), position], axis=2)
        return TaskBatch(z_ids.astype(np.int64), features, None, {"task": "qsa", "n": self.q})

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        return self.task.ground_truth(batch)  # (B, N, d): any N, q = batch.n

    def all_inputs(self):  # the data are real vectors: no finite list of every input
        return None
