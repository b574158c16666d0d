"""q-sparse averaging (qSA, SHT Def. 4): each token averages the data of q tokens it points at."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import array_api_compat
import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of
from commcomp.errors import InvalidParameterError

from ..device_ops import constant_table, gather_rows
from .base import Task, TaskBatch, check_batch, random_subsets

__all__ = ["QSparseAveraging", "QsaOnePointer", "data_table"]

_TABLE_SEED = 4  # fixed: the data table is public


@lru_cache(maxsize=8)
def data_table(dim: int, extra: int = 16) -> np.ndarray:
    """The public table of data vectors z (rows in the closed unit ball of R^dim).

    Rows ``2j`` and ``2j + 1`` are ``+e_j`` and ``-e_j``; then ``extra`` fixed random points
    strictly inside the ball. Read-only ``(2 * dim + extra, dim)`` float64.

    Examples
    --------
    >>> data_table(2)[:4].tolist()
    [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]
    """
    basis = np.zeros((2 * dim, dim))
    basis[0::2][np.arange(dim), np.arange(dim)] = 1.0
    basis[1::2][np.arange(dim), np.arange(dim)] = -1.0
    rng = np.random.default_rng(_TABLE_SEED)
    pts = rng.normal(size=(extra, dim))
    pts *= (rng.random((extra, 1)) ** (1 / dim)) / np.linalg.norm(pts, axis=1, keepdims=True)
    table = np.vstack([basis, 0.999 * pts])
    table.setflags(write=False)
    return table


@dataclass(frozen=True)
class QSparseAveraging(Task):
    """qSA: N = 2q + 1 tokens x_i = (z_i; y_i; i); output for every i the mean of z_j, j in y_i.

    The size parameter ``n`` is q. Each token carries real-valued content, so its primary
    form is ``features`` ``(B, N, d + q + 1)``, SHT's row ``x_i = (z_i ; y_i ; i)``:
    ``features[b, i, :d]`` is z_i, ``features[b, i, d:d+q]`` the q distinct pointers of y_i
    (0-based positions, ascending, stored as floats), ``features[b, i, -1]`` is i.
    ``tokens[b, i]`` is the id of z_i in the public :func:`data_table` (vocabulary ``"+e0"``,
    ``"-e0"``, ..., ``"r0"``, ...), which is what the owner checks and renderers use; the
    pointers live only in ``features``.

    The answer is the ``(B, N, d)`` array of averages; every position is an output
    (sequence to sequence, SHT's l2 error per row). Answers are real, so there is no class
    balance to keep: the sampler draws z from the table and y_i uniformly among q-subsets.

    Worked example (q = 1, N = 3, d = 2)::

        i          0           1            2
        z_i        +e0         -e1          +e1
        y_i        {2}         {0}          {1}
        qSA_i      (0, 1)      (1, 0)       (0, -1)

    Examples
    --------
    >>> import numpy as np
    >>> task = QSparseAveraging(dim=2)
    >>> z = np.array([[0, 3, 2]])                      # ids of +e0, -e1, +e1
    >>> ptr = np.array([[[2], [0], [1]]])
    >>> batch = task.assemble(1, z, ptr)
    >>> task.ground_truth(batch)[0].tolist()
    [[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]]
    """

    dim: int = 2
    extra_vectors: int = 16

    name = "qsa"
    aliases = ("q-sparse-averaging", "qsparse-averaging", "sparse-averaging")
    answer_kind = "vector"

    def __post_init__(self):
        if self.dim < 1 or self.extra_vectors < 0:
            raise InvalidParameterError("qsa: need dim >= 1 and extra_vectors >= 0")

    def table(self) -> np.ndarray:
        return data_table(self.dim, self.extra_vectors)

    def vocabulary(self, n):
        self.check_n(n)
        signed = tuple(f"{s}e{j}" for j in range(self.dim) for s in "+-")
        return signed + tuple(f"r{j}" for j in range(self.extra_vectors))

    def vocab_size(self, n):
        return 2 * self.dim + self.extra_vectors

    def length(self, n):
        return 2 * self.check_n(n) + 1

    def feature_width(self, n) -> int:
        """SHT's row ``(z_i; y_i; i)``: ``d + q + 1`` with ``q = n``."""
        return self.dim + self.check_n(n) + 1

    def output_positions(self, n):
        return np.arange(self.length(n), dtype=np.int64)

    def assemble(self, q, z_ids, pointers) -> TaskBatch:
        """A batch from data ids ``(B, N)`` and pointer sets ``(B, N, q)`` (sorted here).

        Device arrays (both on one namespace) give a device batch: the features are built there,
        the data vectors gathered from the public table (the one host array uploaded).

        Examples
        --------
        >>> import array_api_strict as xps
        >>> from commcomp.backend import to_numpy
        >>> task = QSparseAveraging(dim=2)
        >>> z, ptr = [[0, 3, 2]], [[[2], [0], [1]]]
        >>> on_device = task.assemble(1, xps.asarray(z), xps.asarray(ptr))
        >>> bool(np.array_equal(to_numpy(on_device.features), task.assemble(1, z, ptr).features))
        True
        """
        q = self.check_n(q)
        if is_numpy(z_ids) or not is_array(z_ids):
            z_ids = np.asarray(z_ids, dtype=np.int64)
            pointers = np.asarray(pointers, dtype=np.int64)
            if not np.all(pointers[..., 1:] > pointers[..., :-1]):
                pointers = np.sort(pointers, axis=-1)
        xp = namespace_of(z_ids, pointers)
        B, N = z_ids.shape
        if N != self.length(q) or tuple(pointers.shape) != (B, N, q):
            raise InvalidParameterError(f"qsa: expected z ids (B, {self.length(q)}) and pointers "
                                        f"(B, {self.length(q)}, {q})")
        if not is_numpy(z_ids):  # a device's pointers: sorted there (an ascending set stays as it is)
            z_ids, pointers = xp.astype(z_ids, xp.int64), xp.sort(xp.astype(pointers, xp.int64), axis=-1)
        position = xp.reshape(xp.arange(N, dtype=xp.float64, device=array_api_compat.device(z_ids)), (1, N, 1))
        features = xp.concat([gather_rows(xp, constant_table(xp, z_ids, self.table(), xp.float64), z_ids),
                              xp.astype(pointers, xp.float64), xp.broadcast_to(position, (B, N, 1))],
                             axis=2)  # (B, N, d + q + 1)
        return self.make_batch(q, z_ids, features)

    def sample(self, n, batch, rng) -> TaskBatch:
        q, batch = self.check_n(n), check_batch(batch)
        N = self.length(q)
        z_ids = rng.integers(0, self.vocab_size(q), size=(batch, N))
        pointers = random_subsets(batch, N, q, rng, rows=N)  # (B, N, q)
        b = self.assemble(q, z_ids, pointers)
        return b.with_answers(self.ground_truth(b))

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        q, d = batch.n, self.dim
        feats = batch.on_host().features  # NumPy only: a device batch comes back, counted
        if feats is None or feats.shape[2] != d + q + 1:
            raise InvalidParameterError(f"qsa: features of width {d + q + 1} are required")
        z = feats[:, :, :d]  # (B, N, d)
        ptr = feats[:, :, d:d + q]  # (B, N, q)
        pointers = ptr.astype(np.int64)
        N = feats.shape[1]
        if np.any(pointers != ptr) or np.any((pointers < 0) | (pointers >= N)):
            raise InvalidParameterError("qsa: pointers must be integer positions in [0, N)")
        if np.any(pointers[..., 1:] <= pointers[..., :-1]):
            raise InvalidParameterError("qsa: the q pointers of a token must be distinct, ascending")
        rows = np.arange(feats.shape[0])[:, None, None]
        total = np.zeros_like(z)  # (B, N, d)
        for start in range(0, q, 64):  # blocks of pointers bound the (B, N, 64, d) gather
            total += z[rows, pointers[:, :, start:start + 64]].sum(axis=2)
        return total / q  # (B, N, d)


@dataclass(frozen=True)
class QsaOnePointer(QSparseAveraging):
    """qSA at q = 1 with N of one's choosing: each token's id carries its whole row.

    SHT's separation from recurrent models (Thm 11) is at fixed q, any N; the registered task ties
    N = 2q + 1.  Here the size parameter ``n`` is the length N itself and every token points at
    exactly one position, so a row ``x_i = (z_i; y_i; i)`` is the pair (data id, pointer) and the
    token id is ``z_id * N + pointer``: a recurrent model, which reads token ids, sees the whole
    input.  ``features`` hold the same rows in SHT's layout ``(z_i; y_i; i)`` (width d + 2) for
    the row-reading attention unit; the ground truth is computed from the tokens alone.

    Examples
    --------
    >>> import numpy as np
    >>> task = QsaOnePointer(dim=2)
    >>> b = task.assemble(3, np.array([[0, 3, 2]]), np.array([[2, 0, 1]]))   # the example above, q = 1
    >>> b.tokens.tolist(), task.ground_truth(b)[0].tolist()
    ([[2, 9, 7]], [[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]])
    >>> task.vocabulary(3)[7], task.length(3), task.feature_width(3)
    ('+e1>1', 3, 4)
    """

    aliases = ()
    #: Pointers per token (SHT's q), fixed: the size parameter is the length N.
    q: ClassVar[int] = 1

    def vocabulary(self, n):
        N = self.check_n(n)
        data = tuple(f"{s}e{j}" for j in range(self.dim) for s in "+-") + tuple(
            f"r{j}" for j in range(self.extra_vectors))  # the data table's names, as in qSA
        return tuple(f"{z}>{p}" for z in data for p in range(N))

    def vocab_size(self, n):
        return (2 * self.dim + self.extra_vectors) * self.check_n(n)

    def check_n(self, n) -> int:
        N = super().check_n(n)
        if N < 2:
            raise InvalidParameterError(f"qsa at q = 1 needs N >= 2 tokens, got {N}")
        return N

    def length(self, n):
        return self.check_n(n)

    def feature_width(self, n) -> int:
        return self.dim + 2

    def assemble(self, N, z_ids, pointers) -> TaskBatch:
        """A batch from data ids ``(B, N)`` and pointers ``(B, N)`` (int64), on their namespace
        (NumPy or a device's: the encoder of ``index@q1 -> qsa`` runs here)."""
        N = self.check_n(N)
        if is_numpy(z_ids) or not is_array(z_ids):
            z_ids, pointers = np.asarray(z_ids, dtype=np.int64), np.asarray(pointers, dtype=np.int64)
        xp = namespace_of(z_ids, pointers)
        B = z_ids.shape[0]
        if tuple(z_ids.shape) != (B, N) or tuple(pointers.shape) != (B, N):
            raise InvalidParameterError(f"qsa at q = 1: expected z ids and pointers of shape (B, {N})")
        position = xp.reshape(xp.arange(N, dtype=xp.float64, device=array_api_compat.device(z_ids)), (1, N, 1))
        features = xp.concat([gather_rows(xp, constant_table(xp, z_ids, self.table(), xp.float64), z_ids),
                              xp.reshape(xp.astype(pointers, xp.float64), (B, N, 1)),
                              xp.broadcast_to(position, (B, N, 1))], axis=2)  # (B, N, d + 2)
        return self.make_batch(N, z_ids * N + pointers, features)  # tokens (B, N): the whole row

    def sample(self, n, batch, rng) -> TaskBatch:
        N, batch = self.check_n(n), check_batch(batch)
        b = self.assemble(N, rng.integers(0, len(self.table()), size=(batch, N)),
                          rng.integers(0, N, size=(batch, N)))
        return b.with_answers(self.ground_truth(b))

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        """``(B, N, d)``: row i's answer is z at its pointer, read from the tokens alone."""
        tokens = np.asarray(batch.on_host().tokens, dtype=np.int64)  # (B, N)
        N = tokens.shape[1]
        if np.any((tokens < 0) | (tokens >= self.vocab_size(N))):
            raise InvalidParameterError(f"qsa at q = 1: token ids must lie in [0, {self.vocab_size(N)})")
        z, pointer = self.table()[tokens // N], tokens % N  # (B, N, d), (B, N)
        return z[np.arange(tokens.shape[0])[:, None], pointer]  # (B, N, d)
