"""Bit strings: the only currency a protocol pays in.

A :class:`Bits` is an immutable sequence of bits backed by a read-only numpy
``uint8`` array of zeros and ones.  ``len(bits)`` is its length in bits, which is
exactly what a protocol that sends it pays.  Values go in and out most-significant
bit first (big-endian within each number), so ``Bits.from_uints([5], 4)`` is
``0101``.

Batches of equal-length messages are plain ``(B, L)`` ``uint8`` arrays; use
:func:`uints_to_bit_array` and :func:`bit_array_to_uints` to convert vectorised.
"""

from __future__ import annotations

import math
from typing import Iterable, Iterator

import numpy as np

from .backend import is_array, is_numpy, namespace_of, to_numpy
from .errors import BitsError

__all__ = ["Bits", "BitRows", "uints_to_bit_array", "bit_array_to_uints"]


def uints_to_bit_array(values, width: int) -> np.ndarray:
    """Write unsigned integers as bits, most significant first, vectorised.

    Parameters
    ----------
    values : array_like of int
        Non-negative integers, any shape ``S``, each ``< 2**width``.
    width : int
        Bits per value, ``0 <= width <= 64``.

    Returns
    -------
    numpy.ndarray
        ``uint8`` array of shape ``S + (width,)``.

    Raises
    ------
    BitsError
        If a value is negative or does not fit in ``width`` bits.

    Examples
    --------
    >>> uints_to_bit_array([5, 1], 4).tolist()
    [[0, 1, 0, 1], [0, 0, 0, 1]]
    """
    if not 0 <= int(width) <= 64:
        raise BitsError(f"width must be in [0, 64], got {width}")
    arr = np.asarray(values)
    if arr.size == 0:
        arr = arr.astype(np.uint64)
    if arr.dtype.kind not in "iub":
        raise BitsError(f"values must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "i" and arr.size and int(arr.min()) < 0:
        raise BitsError("values must be non-negative")
    arr = arr.astype(np.uint64)
    if width < 64 and arr.size and int(arr.max()) >= (1 << width):
        raise BitsError(f"a value does not fit in {width} bits (max {int(arr.max())})")
    # big-endian bytes of each value, unpacked to bits; keep the low `width` of the 64
    nbytes = max(1, -(-width // 8))
    big = np.ascontiguousarray(arr.astype(">u8")).view(np.uint8).reshape(arr.shape + (8,))  # S + (8,)
    return np.unpackbits(big[..., 8 - nbytes:], axis=-1)[..., 8 * nbytes - width:]  # S + (width,)


def bit_array_to_uints(bit_array, width: int) -> np.ndarray:
    """Read unsigned integers back from bits, the inverse of :func:`uints_to_bit_array`.

    Parameters
    ----------
    bit_array : array_like of {0, 1}
        Array whose last axis has length ``k * width``.
    width : int
        Bits per value, ``1 <= width <= 64``.

    Returns
    -------
    numpy.ndarray
        ``uint64`` array of shape ``bit_array.shape[:-1] + (k,)``.

    Examples
    --------
    >>> bit_array_to_uints([0, 1, 0, 1, 0, 0, 0, 1], 4).tolist()
    [5, 1]
    """
    if not 1 <= int(width) <= 64:
        raise BitsError(f"width must be in [1, 64], got {width}")
    arr = np.asarray(bit_array, dtype=np.uint8)
    if arr.shape[-1] % width:
        raise BitsError(f"{arr.shape[-1]} bits is not a multiple of width {width}")
    if width in (8, 16, 32, 64) and arr.size:  # whole big-endian words: pack and reinterpret, no shifts
        lead, k = arr.shape[:-1], arr.shape[-1] // width
        packed = np.ascontiguousarray(np.packbits(arr.reshape(-1, arr.shape[-1]), axis=-1))
        words = packed.view(np.dtype(f">u{width // 8}"))  # (rows, k)
        return words.astype(np.uint64).reshape(lead + (k,))
    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // width, width))  # (..., k, width)
    nbytes = -(-width // 8)
    if width % 8:  # left-pad each value to whole bytes
        padded = np.zeros(arr.shape[:-1] + (8 * nbytes,), dtype=np.uint8)
        padded[..., 8 * nbytes - width:] = arr
        arr = padded
    packed = np.packbits(arr, axis=-1).astype(np.uint64)  # (..., k, nbytes) big-endian bytes
    shifts = np.arange(8 * (nbytes - 1), -1, -8, dtype=np.uint64)  # (nbytes,)
    return (packed << shifts).sum(axis=-1, dtype=np.uint64)  # (..., k)


class Bits:
    """An immutable bit string.

    Build it with :meth:`from_bools`, :meth:`from_uints`, :meth:`from_hex` or
    :meth:`zeros`; concatenate with ``+`` or :meth:`concat`; slice and index like a
    sequence; compare with ``==``; it hashes, so it can key a dict (message
    collisions are found that way).

    Examples
    --------
    >>> b = Bits.from_uints([5], 4) + Bits.from_bools([True, True])
    >>> len(b), str(b), b.hex()
    (6, '010111', '5c')
    >>> Bits.from_hex('5c', 6) == b
    True
    """

    __slots__ = ("_bits", "_hash")

    def __init__(self, bits: Iterable[int] | np.ndarray = ()):
        arr = np.asarray(list(bits) if not isinstance(bits, np.ndarray) else bits)
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        if arr.size and arr.dtype.kind not in "biu":
            raise BitsError(f"bits must be booleans or 0/1 integers, got dtype {arr.dtype}")
        if arr.size and (arr.dtype.kind != "b") and (arr.min() < 0 or arr.max() > 1):
            raise BitsError("bits must be 0 or 1")
        data = arr.astype(np.uint8, copy=True)
        data.setflags(write=False)
        self._bits = data
        self._hash = None

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_bools(cls, values) -> "Bits":
        """Bits from a boolean (or 0/1) array, flattened in C order."""
        return cls(np.asarray(values).reshape(-1))

    @classmethod
    def from_uints(cls, values, width: int) -> "Bits":
        """Bits of unsigned integers, each ``width`` bits, most significant first, concatenated."""
        return cls(uints_to_bit_array(np.asarray(values).reshape(-1), width).reshape(-1))

    @classmethod
    def from_hex(cls, text: str, length: int | None = None) -> "Bits":
        """Bits from hex digits; ``length`` keeps the first ``length`` bits (default ``4 * len(text)``).

        Raises
        ------
        BitsError
            On a non-hex character, a length beyond the digits, or non-zero padding bits.
        """
        text = text.strip().lower()
        if text.startswith("0x"):
            text = text[2:]
        try:
            nibbles = [int(c, 16) for c in text]
        except ValueError:
            raise BitsError(f"not a hex string: {text!r}") from None
        full = uints_to_bit_array(np.array(nibbles, dtype=np.uint64), 4).reshape(-1)
        if length is None:
            length = full.size
        if not 0 <= length <= full.size or full.size - length >= 4:
            raise BitsError(f"{len(text)} hex digits cannot hold exactly {length} bits")
        if full[length:].any():
            raise BitsError("hex padding bits beyond the length must be zero")
        return cls(full[:length])

    @classmethod
    def zeros(cls, length: int) -> "Bits":
        """``length`` zero bits."""
        return cls(np.zeros(int(length), dtype=np.uint8))

    @classmethod
    def concat(cls, parts: Iterable["Bits"]) -> "Bits":
        """Concatenate bit strings in order."""
        arrays = [p.array for p in parts]
        return cls(np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint8))

    # -- views ------------------------------------------------------------------------
    @property
    def array(self) -> np.ndarray:
        """The bits as a read-only ``uint8`` array of zeros and ones."""
        return self._bits

    def to_uints(self, width: int) -> np.ndarray:
        """Split into ``width``-bit unsigned integers (the length must be a multiple of ``width``)."""
        return bit_array_to_uints(self._bits, width)

    def hex(self) -> str:
        """Hex digits, zero-padded at the end to a whole nibble; ``from_hex(h, len(b))`` inverts it."""
        pad = (-len(self)) % 4
        padded = np.concatenate([self._bits, np.zeros(pad, dtype=np.uint8)])
        return "".join(f"{int(v):x}" for v in bit_array_to_uints(padded, 4)) if padded.size else ""

    def to_bytes(self) -> bytes:
        """Packed bytes (zero-padded at the end), useful as a compact hash key."""
        return np.packbits(self._bits).tobytes()

    # -- sequence protocol ------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._bits.size)

    def __iter__(self) -> Iterator[bool]:
        return (bool(b) for b in self._bits)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return Bits(self._bits[key])
        return bool(self._bits[key])

    def __add__(self, other: "Bits") -> "Bits":
        if not isinstance(other, Bits):
            return NotImplemented
        return Bits(np.concatenate([self._bits, other._bits]))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Bits):
            return NotImplemented
        return len(self) == len(other) and bool(np.array_equal(self._bits, other._bits))

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((len(self), self.to_bytes()))
        return self._hash

    def __str__(self) -> str:
        return "".join("1" if b else "0" for b in self._bits)

    def __repr__(self) -> str:
        if len(self) <= 64:
            return f"Bits('{self}')"
        return f"Bits(len={len(self)}, hex={self.hex()[:16]}...)"


class BitRows:
    """A batch of equal-length bit strings: a read-only ``(B, L)`` uint8 array of zeros and ones.

    ``len(rows)`` is ``L``, the bits each instance's message costs; ``rows[b]`` is that
    instance's :class:`Bits`.

    Examples
    --------
    >>> rows = BitRows.from_uints([[1], [2]], 2)
    >>> len(rows), rows.batch, str(rows[1])
    (2, 2, '10')
    """

    __slots__ = ("_rows",)

    def __init__(self, rows):
        if is_array(rows) and not is_numpy(rows):  # a device array: checked and kept there
            xp = namespace_of(rows)
            if rows.ndim != 2:
                raise BitsError(f"BitRows needs a 2-D (batch, bits) array, got shape {tuple(rows.shape)}")
            if math.prod(rows.shape) and bool(xp.any(xp.logical_and(rows != 0, rows != 1))):
                raise BitsError("bits must be 0 or 1")
            self._rows = xp.astype(rows, xp.uint8)
            return
        arr = np.asarray(rows)
        if arr.ndim != 2:
            raise BitsError(f"BitRows needs a 2-D (batch, bits) array, got shape {arr.shape}")
        if arr.size and (arr.dtype.kind not in "biu" or arr.min() < 0 or arr.max() > 1):
            raise BitsError("bits must be 0 or 1")
        data = arr.astype(np.uint8, copy=True)
        data.setflags(write=False)
        self._rows = data

    @classmethod
    def from_uints(cls, values, width: int) -> "BitRows":
        """Each row of ``(B, k)`` unsigned integers written as ``k * width`` bits."""
        v = np.asarray(values)
        v = v.reshape(v.shape[0], -1)
        return cls(uints_to_bit_array(v, width).reshape(v.shape[0], -1))

    @classmethod
    def stack(cls, bits_list) -> "BitRows":
        """Rows from equal-length :class:`Bits`."""
        arrays = [b.array for b in bits_list]
        if len({a.size for a in arrays}) > 1:
            raise BitsError("BitRows.stack needs bit strings of one length")
        return cls(np.stack(arrays) if arrays else np.zeros((0, 0), dtype=np.uint8))

    @property
    def array(self):
        """The ``(B, L)`` uint8 bits: a read-only NumPy array, or an array of the device namespace
        the message was encoded on (it stays there)."""
        return self._rows

    @property
    def host(self) -> np.ndarray:
        """The bits as a NumPy array (moved from a device through :func:`commcomp.backend.to_numpy`)."""
        return to_numpy(self._rows)

    @property
    def batch(self) -> int:
        return int(self._rows.shape[0])

    def to_uints(self, width: int) -> np.ndarray:
        return bit_array_to_uints(self.host, width)

    def distinct(self) -> int:
        """How many different messages the batch holds."""
        if self.batch == 0:
            return 0
        return int(np.unique(np.packbits(self.host, axis=1), axis=0).shape[0])

    def __len__(self) -> int:
        return int(self._rows.shape[1])

    def __getitem__(self, b) -> Bits:
        return Bits(to_numpy(self._rows[b, ...]) if not is_numpy(self._rows) else self._rows[b])

    def __eq__(self, other) -> bool:
        if not isinstance(other, BitRows):
            return NotImplemented
        if tuple(self._rows.shape) != tuple(other._rows.shape):
            return False
        return bool(np.array_equal(self.host, other.host))

    __hash__ = None

    def __repr__(self) -> str:
        return f"BitRows(batch={self.batch}, bits={len(self)})"
