"""Array API pieces the reductions' encoders build tokens with (any namespace, NumPy included).

Each takes arrays of one namespace ``xp`` and returns arrays there. A reduction has one encoder,
written with these and ``xp.concat``: on NumPy it runs on ``array_api_compat.numpy``; on a device
the problem bits are uploaded once and every token is written there (see
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
>>> [int(v) for v in interleave(xp, a, b, tail=(constant_columns(xp, a, 5),))[0, :]]
[1, 7, 2, 8, 5]
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


def interleave(xp, *groups, tail=()):
    """``k`` arrays ``(B, m)`` -> ``(B, k m)``: column ``k j + g`` is column ``j`` of ``groups[g]``
    (two groups: ``a`` at even and ``b`` at odd positions), then the columns of the ``tail`` arrays
    ``(B, t)``, in order.

    Written into one new array with strided slice assignments (the standard has them; only
    integer-array assignment is missing), so the interleaved tokens and their tail cost one pass
    over memory, not a stack and a concat: on NumPy as fast as hand-written slicing.
    """
    B, m = groups[0].shape
    k = len(groups)
    width = k * m + sum(int(t.shape[1]) for t in tail)
    out = xp.empty((B, width), dtype=xp.result_type(*groups, *tail), device=array_api_compat.device(groups[0]))
    for g, group in enumerate(groups):
        out[:, g:k * m:k] = group  # (B, m) into every k-th column
    start = k * m
    for columns in tail:
        out[:, start:start + columns.shape[1]] = columns
        start += columns.shape[1]
    return out  # (B, k m + tail)


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
