"""Array API pieces the reductions' device encoders build tokens with (any namespace).

Each takes arrays of one namespace ``xp`` and returns arrays there: the encoders upload the
problem bits once and write every token on the device with these and ``xp.concat`` (see
:meth:`reductions.base.Reduction.encode`).

Examples
--------
>>> import array_api_strict as xp
>>> a, b = xp.asarray([[1, 2]]), xp.asarray([[7, 8]])
>>> [int(v) for v in interleave(xp, a, b)[0, :]]
[1, 7, 2, 8]
>>> [int(v) for v in constant_columns(xp, a, 5, 3)[0, :]]
[5, 5, 5]
"""

from __future__ import annotations

import array_api_compat

__all__ = ["interleave", "constant_columns", "position_columns"]


def interleave(xp, a, b):
    """``(B, k)`` and ``(B, k)`` -> ``(B, 2k)`` with ``a`` at even and ``b`` at odd positions."""
    B, k = a.shape
    return xp.reshape(xp.stack([a, b], axis=2), (B, 2 * k))  # (B, k, 2) row-major -> (B, 2k)


def constant_columns(xp, like, value: int, count: int = 1):
    """``(B, count)`` int64 filled with ``value``, on the device of ``like`` ``(B, ...)``."""
    return xp.full((like.shape[0], count), value, dtype=xp.int64, device=array_api_compat.device(like))


def position_columns(xp, like, count: int, offset: int = 0):
    """``(B, count)`` int64 rows ``offset, offset + 1, ..., offset + count - 1`` on ``like``'s device."""
    row = xp.arange(offset, offset + count, dtype=xp.int64, device=array_api_compat.device(like))
    return xp.broadcast_to(xp.reshape(row, (1, count)), (like.shape[0], count))
