"""Counting distinct message rows on the device that sent them, exactly, with no hash.

A message row of L bits is packed into ``ceil(L / 64)`` int64 words on its own namespace (the
bits are disjoint powers of two, so their sum is their OR, and bit 63 is the sign bit). Rows are
then put in lexicographic order of their words by stable argsorts, last word first (the Array
API has ``argsort(stable=True)`` but no ``lexsort``), and a row is new when it differs from its
predecessor in some word. Equal rows are always neighbours in that order, so the count is exact.

Batches are reduced to their distinct rows when added, and merged into the kept set once the
rows waiting reach the kept set's size (so the kept set is re-sorted O(log total) times, not
once per batch). Nothing leaves the device but the final count.

Examples
--------
>>> import array_api_strict as xp
>>> d = DeviceDistinctRows()
>>> d.add(xp.asarray([[0, 1, 1], [0, 1, 1], [1, 0, 0]], dtype=xp.uint8))
>>> d.add(xp.asarray([[1, 0, 0], [1, 1, 1]], dtype=xp.uint8))
>>> d.count
3
"""

from __future__ import annotations

import math

from commcomp.backend import namespace_of

__all__ = ["DeviceDistinctRows", "pack_words", "distinct_rows"]

MIN_MERGE_ROWS = 1 << 16


def pack_words(bits):
    """``(B, L)`` 0/1 bits to ``(B, ceil(L / 64))`` int64 words (zero-padded), on their namespace."""
    xp = namespace_of(bits)
    B, L = bits.shape
    W = max(1, -(-L // 64))
    b = xp.astype(bits, xp.int64)
    if W * 64 != L:
        b = xp.concat([b, xp.zeros((B, W * 64 - L), dtype=xp.int64, device=getattr(bits, "device", None))],
                      axis=1)
    shifts = xp.arange(63, -1, -1, dtype=xp.int64, device=getattr(bits, "device", None))  # (64,)
    return xp.sum(xp.bitwise_left_shift(xp.reshape(b, (B, W, 64)), shifts), axis=-1, dtype=xp.int64)


def distinct_rows(words):
    """The distinct rows of ``(N, W)`` int64 ``words``, in lexicographic order of their words."""
    xp = namespace_of(words)
    N, W = words.shape
    if N <= 1:
        return words
    order = xp.argsort(words[:, W - 1], stable=True)
    for j in range(W - 2, -1, -1):  # stable passes, last word first: lexicographic order
        order = xp.take(order, xp.argsort(xp.take(words[:, j], order, axis=0), stable=True), axis=0)
    rows = xp.take(words, order, axis=0)  # (N, W) sorted
    differs = xp.any(rows[1:, :] != rows[:-1, :], axis=1)  # (N - 1,)
    first = xp.concat([xp.ones((1,), dtype=xp.bool, device=getattr(words, "device", None)), differs])
    return xp.take(rows, xp.nonzero(first)[0], axis=0)


class DeviceDistinctRows:
    """Distinct bit rows over many batches, counted on the rows' own namespace (module docstring)."""

    def __init__(self):
        self._kept = None  # (K, W) distinct rows, sorted
        self._pending: list = []
        self._pending_rows = 0
        self._width = None

    def add(self, bits) -> None:
        """Add ``(B, L)`` 0/1 rows of a device namespace."""
        if self._width is not None and bits.shape[1] != self._width:
            raise ValueError(f"messages of {bits.shape[1]} bits among messages of {self._width}")
        self._width = int(bits.shape[1])
        if bits.shape[0] == 0:
            return
        rows = distinct_rows(pack_words(bits))
        self._pending.append(rows)
        self._pending_rows += int(rows.shape[0])
        kept = 0 if self._kept is None else int(self._kept.shape[0])
        if self._pending_rows >= max(kept, MIN_MERGE_ROWS):
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        parts = ([] if self._kept is None else [self._kept]) + self._pending
        xp = namespace_of(*parts)
        self._kept = distinct_rows(parts[0] if len(parts) == 1 else xp.concat(parts, axis=0))
        self._pending, self._pending_rows = [], 0

    @property
    def count(self) -> int:
        self._merge()
        return 0 if self._kept is None else int(math.prod(self._kept.shape[:1]))
