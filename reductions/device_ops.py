"""Array API pieces the reductions' device encoders build tokens with (any namespace).

Each takes arrays of one namespace ``xp`` and returns arrays there: the encoders upload the
problem bits once and write every token on the device with these and ``xp.concat`` (see
:meth:`reductions.base.Reduction.encode`). Only instance-independent constants (a position
row, a public table of vectors) are made from host data, with :func:`constant_table`.

Examples
--------
>>> import array_api_strict as xp
>>> a, b = xp.asarray([[1, 2]]), xp.asarray([[7, 8]])
>>> [int(v) for v in interleave(xp, a, b)[0, :]]
[1, 7, 2, 8]
>>> [int(v) for v in interleave(xp, a, b, constant_columns(xp, a, 0, 2))[0, :]]
[1, 7, 0, 2, 8, 0]
>>> [int(v) for v in constant_columns(xp, a, 5, 3)[0, :]]
[5, 5, 5]
>>> [int(v) for v in select_constant(xp, xp.asarray([[1, 0, 1]]) == 1, 9, 4)[0, :]]
[9, 4, 9]
>>> rows = gather_rows(xp, constant_table(xp, a, [[0.5], [1.5], [2.5]], xp.float64), xp.asarray([[2, 0]]))
>>> rows.shape, [float(v) for v in rows[0, :, 0]]
((1, 2, 1), [2.5, 0.5])
"""

from __future__ import annotations

import array_api_compat
import numpy as np

__all__ = ["interleave", "constant_columns", "position_columns", "select_constant", "constant_table",
           "gather_rows"]


def interleave(xp, *groups):
    """``k`` arrays ``(B, m)`` -> ``(B, k m)``: column ``k j + g`` is column ``j`` of ``groups[g]``
    (two groups: ``a`` at even and ``b`` at odd positions)."""
    B, m = groups[0].shape
    return xp.reshape(xp.stack(list(groups), axis=2), (B, len(groups) * m))  # (B, m, k) row-major -> (B, k m)


def constant_columns(xp, like, value: int, count: int = 1):
    """``(B, count)`` int64 filled with ``value``, on the device of ``like`` ``(B, ...)``."""
    return xp.full((like.shape[0], count), value, dtype=xp.int64, device=array_api_compat.device(like))


def position_columns(xp, like, count: int, offset: int = 0):
    """``(B, count)`` int64 rows ``offset, offset + 1, ..., offset + count - 1`` on ``like``'s device."""
    row = xp.arange(offset, offset + count, dtype=xp.int64, device=array_api_compat.device(like))
    return xp.broadcast_to(xp.reshape(row, (1, count)), (like.shape[0], count))


def select_constant(xp, mask, if_true: int, if_false: int):
    """int64 ``if_true`` where ``mask`` holds, else ``if_false`` (``np.where`` of two constants, which
    the Array API spells with one array operand), same shape and device as ``mask``."""
    return if_false + (if_true - if_false) * xp.astype(mask, xp.int64)


def constant_table(xp, like, table, dtype):
    """A small instance-independent host table (a position row, a public table of vectors) as an
    ``xp`` array of ``dtype`` on ``like``'s device: the only host data the encoders upload besides
    the problem bits. Copied first: some libraries refuse read-only NumPy buffers."""
    return xp.asarray(np.array(table), dtype=dtype, device=array_api_compat.device(like))


def gather_rows(xp, table, ids):
    """``table (V, d)`` rows at ``ids (B, N)`` -> ``(B, N, d)`` (``table[ids]``, with a 1-D ``xp.take``)."""
    B, N = ids.shape
    return xp.reshape(xp.take(table, xp.reshape(ids, (-1,)), axis=0), (B, N, table.shape[1]))
