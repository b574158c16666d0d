"""Number formats with an exact, bijective P-bit code.

A :class:`Precision` is a finite set of real numbers (plus ±inf and NaN where the
format has them) together with a code of exactly ``bits`` bits per number:

* IEEE formats ``float16``, ``bfloat16``, ``float32``, ``float64``: round to nearest,
  ties to even, overflow to ±inf, gradual underflow through the subnormals.
* ``fixed:P:F``: P-bit two's-complement integers k in [-2^(P-1), 2^(P-1) - 1] standing for
  k / 2^F; round half to even, saturating at both ends (saturations are counted).

The valid range of every format is stated in one place, :mod:`commcomp.formats`
(``FORMATS_HELP``), and every parser and constructor here checks it with the same message.

Values are carried as float64 arrays on the format's grid (every grid point of every format
here is a float64, which is why fixed formats take ``P <= 53``).  Narrower formats are emulated:
compute in float32/float64 and round onto the grid, as the Array API standard has no float16 or
bfloat16 dtype.  ``round`` works on any Array API namespace (NumPy, CuPy, array-api-strict);
``encode``/``decode`` work on the host.

The code contract: ``decode(encode(x)) == round(x)`` bit for bit.  Every one of the 2^P codes
decodes to a value; distinct non-NaN codes decode to distinct values (so +0 and -0 differ), and
all NaN codes decode to the one canonical NaN, which ``round`` also returns for every NaN input.

Examples
--------
>>> p = parse_precision("fixed:4:2")
>>> p.round(np.array([0.3, 1.125, 5.0])).tolist()   # grid step 1/4, max 7/4
[0.25, 1.0, 1.75]
>>> str(p.encode(np.array([-0.25])))                 # -1 in 4-bit two's complement
'1111'
>>> parse_precision("24").name
'fixed:24:12'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .backend import is_array, is_numpy, namespace_of, to_numpy
from .bits import Bits, bit_array_to_uints, uints_to_bit_array
from .codes import bits_to_codes, codes_to_bits, ieee_codes, ieee_values
from .errors import BitsError, PrecisionError
from .formats import (FORMATS_HELP, MAX_BOUND_BITS, MAX_FIXED_BITS, MAX_FRACTION_BITS, MIN_FIXED_BITS,
                      check_fixed_format, fraction_bits_range)

__all__ = ["Precision", "IEEEFloat", "FixedPoint", "parse_precision", "parse_bound_bits", "FLOAT16",
           "BFLOAT16", "FLOAT32", "FLOAT64", "MIN_FIXED_BITS", "MAX_FIXED_BITS", "MAX_FRACTION_BITS",
           "MAX_BOUND_BITS", "FORMATS_HELP", "fraction_bits_range", "check_fixed_format"]


@dataclass
class SaturationCounter:
    """Mutable tally of values that hit the ends of a format (fixed: clipped; IEEE: overflowed)."""

    count: int = 0

    def add(self, n: int) -> None:
        self.count += int(n)

    def reset(self) -> int:
        n, self.count = self.count, 0
        return n


_ABS_BITS = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_SIGN_BIT = np.uint64(0x8000_0000_0000_0000)
_INF_BITS = np.float64(math.inf).view(np.uint64)
ROUND_CHUNK = 1 << 15  # numbers per pass of the IEEE bit-pattern rounding: its scratch (0.6 MB) stays in L2


def _as_float64(x):
    if is_array(x):
        xp = namespace_of(x)
        return xp, (x if x.dtype == xp.float64 else xp.astype(x, xp.float64))
    xp = namespace_of()
    return xp, np.asarray(x, dtype=np.float64)


@dataclass(frozen=True)
class Precision:
    """Base class of number formats: ``name``, ``bits`` per number, round / encode / decode."""

    name: str
    bits: int
    saturations: SaturationCounter = field(default_factory=SaturationCounter, compare=False,
                                           repr=False, hash=False)

    # subclasses implement these three
    def round(self, x):  # pragma: no cover - abstract
        """Round onto the format's grid (float64 array of the input's namespace)."""
        raise NotImplementedError

    def to_codes(self, x) -> np.ndarray:  # pragma: no cover - abstract
        """The unsigned P-bit codes (uint64, host) of ``round(x)``."""
        raise NotImplementedError

    def from_codes(self, codes) -> np.ndarray:  # pragma: no cover - abstract
        """Values (float64, host) of unsigned P-bit codes."""
        raise NotImplementedError

    # shared
    def encode(self, x) -> Bits:
        """Encode ``round(x)`` (flattened in C order) as exactly ``bits * x.size`` bits."""
        codes = self.to_codes(x).reshape(-1)
        return Bits(uints_to_bit_array(codes, self.bits).reshape(-1))

    def decode(self, bits: Bits, shape=None) -> np.ndarray:
        """Decode a bit string made by :meth:`encode` (optionally reshaped to ``shape``)."""
        if len(bits) % self.bits:
            raise BitsError(f"{len(bits)} bits is not a whole number of {self.bits}-bit numbers")
        values = self.from_codes(bit_array_to_uints(bits.array, self.bits)) if len(bits) else \
            np.zeros(0)
        return values.reshape(shape) if shape is not None else values

    def encode_rows(self, x):
        """Vectorised encoding of a batch: ``(B, k)`` numbers to a ``(B, k * bits)`` uint8 bit array.

        An array of another namespace (a device) is encoded there, bit for bit the same
        (:mod:`commcomp.codes`), and the bits stay there."""
        if is_array(x) and not is_numpy(x):
            xp = namespace_of(x)
            flat = xp.reshape(x, (x.shape[0], -1))
            return codes_to_bits(self.device_codes(self.round(flat)), self.bits)  # (B, k*bits)
        arr = to_numpy(x)
        codes = self.to_codes(arr.reshape(arr.shape[0], -1))  # (B, k)
        return uints_to_bit_array(codes, self.bits).reshape(arr.shape[0], -1)  # (B, k*bits)

    def decode_rows(self, bit_rows):
        """Inverse of :meth:`encode_rows`: ``(B, k * bits)`` bits to ``(B, k)`` float64 values
        (of the bits' namespace)."""
        if is_array(bit_rows) and not is_numpy(bit_rows):
            return self.device_values(bits_to_codes(bit_rows, self.bits))
        return self.from_codes(bit_array_to_uints(np.asarray(bit_rows), self.bits))

    def device_codes(self, rounded):  # pragma: no cover - abstract
        """Int64 codes of values already on the grid, on their own namespace."""
        raise NotImplementedError

    def device_values(self, codes):  # pragma: no cover - abstract
        """Float64 values of int64 codes, on their own namespace."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name


@lru_cache(maxsize=None)
def _bit_rounding_constants(mantissa_bits: int, bias: int, max_value: float) -> tuple:
    """``(drop, 1, half, low, span)`` as uint64 scalars for :meth:`IEEEFloat._round_bits_chunk`:
    the mantissa bits dropped, the half-quantum minus one, the smallest normal's bit pattern and the
    width of the normal range in bit patterns (computed once per format: small arrays pay for each
    scalar made)."""
    low = np.float64(2.0 ** (1 - bias)).view(np.uint64)
    return (np.uint64(52 - mantissa_bits), np.uint64(1), np.uint64((1 << (52 - mantissa_bits - 1)) - 1),
            low, np.float64(max_value).view(np.uint64) - low)


@dataclass(frozen=True)
class IEEEFloat(Precision):
    """An IEEE 754 binary format with ``exponent_bits`` and ``mantissa_bits`` (sign bit implied).

    Examples
    --------
    >>> FLOAT16.round(np.array([1.0 + 2.0**-11, 70000.0, 1e-8])).tolist()  # tie to even, overflow, underflow to 0
    [1.0, inf, 0.0]
    >>> BFLOAT16.to_codes(np.array([1.0])).tolist()
    [16256]
    """

    exponent_bits: int = 0
    mantissa_bits: int = 0

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def max_value(self) -> float:
        """Largest finite value."""
        return (2.0 - 2.0 ** -self.mantissa_bits) * 2.0 ** self.bias

    @property
    def min_value(self) -> float:
        """Most negative finite value."""
        return -self.max_value

    @property
    def resolution(self) -> float:
        """Smallest positive (subnormal) value."""
        return 2.0 ** (1 - self.bias - self.mantissa_bits)

    def round(self, x):
        xp, x = _as_float64(x)
        if self.bits == 64:
            out = x
        elif self.bits == 32:
            # IEEE cast: nearest, ties to even. Magnitudes that round past the largest float32
            # (2^128 - 2^104; the tie 2^128 - 2^103 goes to the even neighbour, inf) become inf here,
            # not in the cast, which would raise the overflow flag.
            overflows = xp.abs(x) >= 2.0 ** 128 - 2.0 ** 103
            cast = xp.astype(xp.astype(xp.where(overflows, xp.zeros_like(x), x), xp.float32), xp.float64)
            out = xp.where(overflows, xp.copysign(xp.full_like(x, math.inf), x), cast)
        elif isinstance(x, np.ndarray) and not (self.exponent_bits == 5 and self.mantissa_bits == 10):
            out, overflows = self._round_bits_numpy(x)  # overflow counted and NaN made canonical there
            self.saturations.add(overflows)
            return out
        elif isinstance(x, np.ndarray):
            out = self._round_numpy(x)
        else:
            out = self._round_generic(xp, x)
        finite_in = xp.isfinite(x)
        overflow = xp.logical_and(finite_in, xp.isinf(out))
        self.saturations.add(int(xp.sum(xp.astype(overflow, xp.int64))))
        return xp.where(xp.isnan(out), xp.asarray(math.nan, dtype=xp.float64), out)

    def _round_numpy(self, x: np.ndarray) -> np.ndarray:
        """Fast host path: numpy's own float16 cast, or mantissa rounding on the float64 bit pattern."""
        with np.errstate(over="ignore", invalid="ignore"):
            if self.exponent_bits == 5 and self.mantissa_bits == 10:
                return x.astype(np.float16).astype(np.float64)  # numpy rounds double->half directly
            # Normal range of the target: round the 52-bit mantissa to `mantissa_bits`, ties to even,
            # by integer arithmetic on the bit pattern (a carry into the exponent is the right answer).
            drop = np.uint64(52 - self.mantissa_bits)
            u = np.ascontiguousarray(x).view(np.uint64)
            half = np.uint64((1 << (52 - self.mantissa_bits - 1)) - 1)
            lsb = (u >> drop) & np.uint64(1)
            rounded = (((u + half + lsb) >> drop) << drop).view(np.float64)
            rounded = np.where(np.abs(rounded) > self.max_value, np.copysign(np.inf, x), rounded)
            a = np.abs(x)
            tiny = (a < 2.0 ** (1 - self.bias)) & (a > 0)  # the target's subnormals: other quantum
            out = np.where(np.isfinite(x), rounded, x)
            if tiny.any():
                out[tiny] = self._round_generic(namespace_of(x), x[tiny])
            return out

    def _round_bits_numpy(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        """``(rounded, overflows)``: :meth:`_round_numpy`'s mantissa rounding on the float64 bit
        pattern, in passes of at most :data:`ROUND_CHUNK` numbers through scratch arrays that stay in
        the cache (a check's (B, N, m) activations, 2^19 to 2^21 numbers: 2.4 to 3.5 times faster than
        whole-array passes; 1.0 to 1.4 times for a step's few numbers, ``benchmarks/bench_precision.py``).  Numbers whose magnitude is outside the target's normal
        range (its subnormals, past its largest value, inf, NaN; 0 is exact) are found by one
        unsigned comparison and rounded by :meth:`_round_generic`.  Same values as
        :meth:`_round_generic` (``tests/core/test_precision.py`` compares them on random bit
        patterns of every exponent, at every chunk boundary)."""
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty_like(flat)
        size = min(flat.size, ROUND_CHUNK)
        words, flags = np.empty((2, size), np.uint64), np.empty((2, size), bool)  # the scratch
        if flat.size <= ROUND_CHUNK:
            overflows = self._round_bits_chunk(flat, out.view(np.uint64), *words, *flags)
            return out.reshape(x.shape), overflows
        overflows = 0
        for lo in range(0, flat.size, ROUND_CHUNK):
            hi = min(lo + ROUND_CHUNK, flat.size)
            overflows += self._round_bits_chunk(flat[lo:hi], out[lo:hi].view(np.uint64),
                                                words[0, :hi - lo], words[1, :hi - lo],
                                                flags[0, :hi - lo], flags[1, :hi - lo])
        return out.reshape(x.shape), overflows

    def _round_bits_chunk(self, x, r, magnitude, shifted, outside, zero) -> int:
        """Round ``x`` (float64, 1-D) into ``r`` (its uint64 view of the output); return the overflows."""
        drop, one, half, low, span = _bit_rounding_constants(self.mantissa_bits, self.bias, self.max_value)
        u = x.view(np.uint64)
        np.right_shift(u, drop, out=r)
        r &= one
        r += u
        r += half
        r >>= drop
        r <<= drop                                          # ties to even; a carry enters the exponent
        # Normal range [smallest normal, largest finite] of the target as one unsigned comparison
        # (for non-NaN doubles the order of |x| is that of bits & 0x7FF...F): magnitude - low wraps
        # below low.  Inside it the rounding above is exact and cannot overflow.
        np.bitwise_and(u, _ABS_BITS, out=magnitude)
        np.subtract(magnitude, low, out=shifted)
        np.greater(shifted, span, out=outside)
        if not outside.any():
            return 0
        np.equal(magnitude, 0, out=zero)
        np.greater(outside, zero, out=outside)              # +-0 round to themselves
        where = np.flatnonzero(outside)
        if where.size == 0:
            return 0
        v = x[where]
        with np.errstate(over="ignore", invalid="ignore"):  # 2^(e+1) past the double range: inf
            rounded = self._round_generic(np, v)            # subnormals, overflow to inf, inf, NaN
        rounded[np.isnan(v)] = math.nan                     # one canonical NaN
        r[where] = rounded.view(np.uint64)
        return int(np.count_nonzero(np.isfinite(v) & np.isinf(rounded)))

    def _round_generic(self, xp, x):
        # |x| = 2^e * (1.f); quantum 2^(e - mantissa_bits), with e clamped at emin for subnormals.
        emin = 1 - self.bias
        a = xp.abs(x)
        positive = xp.logical_and(a > 0, xp.isfinite(a))
        safe = xp.where(positive, a, xp.ones_like(a))
        e = xp.floor(xp.log2(safe))
        e = xp.where(2.0 ** e > safe, e - 1, e)          # log2 may be off by one next to powers of 2
        e = xp.where(2.0 ** (e + 1) <= safe, e + 1, e)
        e = xp.clip(e, float(emin), None)
        quantum = 2.0 ** (e - self.mantissa_bits)
        rounded = xp.round(safe / quantum) * quantum     # exact power-of-two scaling; ties to even
        rounded = xp.where(rounded > self.max_value, xp.asarray(math.inf, dtype=xp.float64), rounded)
        rounded = xp.where(positive, rounded, a)         # 0, inf, nan pass through
        return xp.where(xp.isnan(x), x, xp.copysign(rounded, x))

    def to_codes(self, x) -> np.ndarray:
        v = to_numpy(self.round(x))
        if self.bits == 64:
            return v.view(np.uint64).astype(np.uint64)
        if self.bits == 32:
            return v.astype(np.float32).view(np.uint32).astype(np.uint64)
        if self.bits == 16 and self.exponent_bits == 5:
            return v.astype(np.float16).view(np.uint16).astype(np.uint64)
        if self.bits == 16 and self.exponent_bits == 8:  # bfloat16 = top half of a float32
            return (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint64)
        raise PrecisionError(f"no code for IEEE format {self.name}")  # pragma: no cover

    def from_codes(self, codes) -> np.ndarray:
        c = np.asarray(codes, dtype=np.uint64)
        # NaN codes (exponent all ones, mantissa not 0) decode to the one canonical NaN. They are
        # replaced by 0 before the cast: casting a signalling NaN to float64 raises the invalid flag.
        field = np.uint64((1 << self.exponent_bits) - 1)
        nan = (((c >> np.uint64(self.mantissa_bits)) & field) == field) & \
            ((c & np.uint64((1 << self.mantissa_bits) - 1)) != 0)
        c = np.where(nan, np.uint64(0), c)
        if self.bits == 64:
            v = c.view(np.float64).copy()
        elif self.bits == 32:
            v = c.astype(np.uint32).view(np.float32).astype(np.float64)
        elif self.exponent_bits == 5:
            v = c.astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            v = (c.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        v[nan] = math.nan
        return v

    def device_codes(self, rounded):
        return ieee_codes(rounded, self.exponent_bits, self.mantissa_bits)

    def device_values(self, codes):
        return ieee_values(codes, self.exponent_bits, self.mantissa_bits)


@dataclass(frozen=True)
class FixedPoint(Precision):
    """``fixed:P:F``: P-bit two's complement integers k standing for k / 2^F.

    Examples
    --------
    >>> p = FixedPoint.make(8, 3)
    >>> p.max_value, p.min_value, p.resolution
    (15.875, -16.0, 0.125)
    >>> p.round(np.array([100.0, 0.0625, 0.1875])).tolist()   # saturate; ties to even
    [15.875, 0.0, 0.25]
    >>> p.saturations.count
    1
    """

    fraction_bits: int = 0

    @classmethod
    def make(cls, total_bits: int, fraction_bits: int) -> "FixedPoint":
        """Validated constructor (2 <= P <= 53, P - 1024 <= F <= 1022: see :data:`FORMATS_HELP`)."""
        total_bits, fraction_bits = int(total_bits), int(fraction_bits)
        check_fixed_format(total_bits, fraction_bits)
        return cls(name=f"fixed:{total_bits}:{fraction_bits}", bits=total_bits,
                   fraction_bits=fraction_bits)

    @classmethod
    def covering(cls, total_bits: int, max_abs: float) -> "FixedPoint":
        """The finest P-bit grid whose range holds ``[-max_abs, max_abs]``.

        Examples
        --------
        >>> FixedPoint.covering(16, 3.0).name     # 2 integer bits + sign, 13 fraction bits
        'fixed:16:13'
        """
        if not max_abs > 0 or not math.isfinite(max_abs):
            raise PrecisionError(f"max_abs must be positive and finite, got {max_abs}")
        integer_bits = max(0, math.floor(math.log2(max_abs)) + 1)
        frac = int(total_bits) - 1 - integer_bits
        p = cls.make(total_bits, frac)
        while p.max_value < max_abs:  # guard against log2 rounding
            frac -= 1
            p = cls.make(total_bits, frac)
        return p

    @property
    def scale(self) -> float:
        return 2.0 ** self.fraction_bits

    @property
    def max_int(self) -> int:
        return 2 ** (self.bits - 1) - 1

    @property
    def min_int(self) -> int:
        return -(2 ** (self.bits - 1))

    @property
    def max_value(self) -> float:
        return self.max_int / self.scale

    @property
    def min_value(self) -> float:
        return self.min_int / self.scale

    @property
    def resolution(self) -> float:
        return 1.0 / self.scale

    def to_int(self, x):
        """The integers k (as float64 holding exact integers, input's namespace) with round(x) = k / 2^F."""
        xp, x = _as_float64(x)
        if isinstance(x, np.ndarray):
            return self._to_int_numpy(x)
        nan = xp.isnan(x)
        # Clip first, one grid step beyond each end, so that x * 2^F cannot overflow (a value past
        # an end still rounds past it and is counted as saturated, as inf is).
        bounded = xp.clip(xp.where(nan, xp.zeros_like(x), x), (self.min_int - 1) / self.scale,
                          (self.max_int + 1) / self.scale)
        scaled = bounded * self.scale
        k = xp.round(scaled)
        out_of_range = xp.logical_or(k > self.max_int, k < self.min_int)
        self.saturations.add(int(xp.sum(xp.astype(xp.logical_or(out_of_range, nan), xp.int64))))
        return xp.clip(k, float(self.min_int), float(self.max_int)) + 0.0  # fixed point has no -0

    def _to_int_numpy(self, x: np.ndarray) -> np.ndarray:
        """:meth:`to_int` on a NumPy array with one output array worked in place (the exact attention
        sums call it on every chunk of every output position); the same values and saturation count
        (``tests/core/test_precision.py`` compares it with the namespace path)."""
        k = np.clip(x, (self.min_int - 1) / self.scale, (self.max_int + 1) / self.scale)  # (...,) new
        nan = np.isnan(k)
        nans = int(np.count_nonzero(nan))
        if nans:
            k[nan] = 0.0
        k *= self.scale
        np.round(k, out=k)
        over = int(np.count_nonzero(k > self.max_int)) + int(np.count_nonzero(k < self.min_int))
        self.saturations.add(over + nans)
        np.clip(k, float(self.min_int), float(self.max_int), out=k)
        k += 0.0  # fixed point has no -0
        return k

    def round(self, x):
        return self.to_int(x) / self.scale

    def to_codes(self, x) -> np.ndarray:
        k = to_numpy(self.to_int(x)).astype(np.int64)
        return np.where(k < 0, k + (1 << self.bits), k).astype(np.uint64)

    def from_codes(self, codes) -> np.ndarray:
        c = np.asarray(codes, dtype=np.uint64).astype(np.int64)
        if (c >> self.bits).any():
            raise BitsError(f"code wider than {self.bits} bits")
        k = np.where(c >= (1 << (self.bits - 1)), c - (1 << self.bits), c)
        return k.astype(np.float64) / self.scale

    def device_codes(self, rounded):
        xp = namespace_of(rounded)
        k = xp.astype(xp.round(rounded * self.scale), xp.int64)  # on the grid: exact integers
        return xp.where(k < 0, k + (1 << self.bits), k)

    def device_values(self, codes):
        xp = namespace_of(codes)
        k = xp.where(codes >= (1 << (self.bits - 1)), codes - (1 << self.bits), codes)
        return xp.astype(k, xp.float64) / self.scale


FLOAT16 = IEEEFloat(name="float16", bits=16, exponent_bits=5, mantissa_bits=10)
BFLOAT16 = IEEEFloat(name="bfloat16", bits=16, exponent_bits=8, mantissa_bits=7)
FLOAT32 = IEEEFloat(name="float32", bits=32, exponent_bits=8, mantissa_bits=23)
FLOAT64 = IEEEFloat(name="float64", bits=64, exponent_bits=11, mantissa_bits=52)

_IEEE_FACTORIES = {
    "float16": lambda: IEEEFloat(name="float16", bits=16, exponent_bits=5, mantissa_bits=10),
    "bfloat16": lambda: IEEEFloat(name="bfloat16", bits=16, exponent_bits=8, mantissa_bits=7),
    "float32": lambda: IEEEFloat(name="float32", bits=32, exponent_bits=8, mantissa_bits=23),
    "float64": lambda: IEEEFloat(name="float64", bits=64, exponent_bits=11, mantissa_bits=52),
}
_ALIASES = {"fp16": "float16", "half": "float16", "f16": "float16", "bf16": "bfloat16",
            "fp32": "float32", "single": "float32", "f32": "float32", "fp64": "float64",
            "double": "float64", "f64": "float64"}
_FIXED = re.compile(r"^fixed:(-?[0-9]+):(-?[0-9]+)$")


def parse_precision(spec) -> Precision:
    """Parse what a user types: ``float32``, ``bf16``, ``fixed:12:6``, or a bare integer P.

    A bare P means the IEEE format for 16, 32 and 64 and ``fixed:P:P//2`` otherwise.  Each call
    returns a fresh object, so saturation counts are not shared between models.

    Raises
    ------
    PrecisionError
        On anything else, with the accepted forms in the message.

    Examples
    --------
    >>> [parse_precision(s).name for s in ("fp16", "32", 10, "fixed:8:0")]
    ['float16', 'float32', 'fixed:10:5', 'fixed:8:0']
    """
    if isinstance(spec, Precision):
        return spec
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        text = str(int(spec))
    elif isinstance(spec, str):
        if spec != spec.strip() or not spec.isascii():  # ' float32', a full-width digit: refused, not guessed
            raise PrecisionError(f"precision {spec!r}: spaces and non-ASCII characters are not accepted; "
                                 f"{FORMATS_HELP}")
        text = spec.lower()
    else:
        raise PrecisionError(f"precision must be a string or an integer, got {type(spec).__name__}")
    text = _ALIASES.get(text, text)
    if text in _IEEE_FACTORIES:
        return _IEEE_FACTORIES[text]()
    match = _FIXED.match(text)
    if match:
        return FixedPoint.make(int(match.group(1)), int(match.group(2)))
    if re.fullmatch(r"-?[0-9]+", text):
        p = int(text)
        if p in (16, 32, 64):
            return _IEEE_FACTORIES[f"float{p}"]()
        if not MIN_FIXED_BITS <= p <= MAX_FIXED_BITS:
            raise PrecisionError(f"precision {p} is out of range: {FORMATS_HELP}")
        return FixedPoint.make(p, p // 2)
    raise PrecisionError(f"unknown precision {spec!r}: {FORMATS_HELP}")


def parse_bound_bits(spec) -> int:
    """Bits per number p for the bound calculator: a format (its bit count) or an integer 1..1024.

    Examples
    --------
    >>> parse_bound_bits("bf16"), parse_bound_bits(128), parse_bound_bits("fixed:12:6")
    (16, 128, 12)
    """
    if isinstance(spec, bool):
        raise PrecisionError(f"unknown precision {spec!r}: {FORMATS_HELP}")
    if isinstance(spec, Precision):
        return spec.bits
    text = str(int(spec)) if isinstance(spec, (int, np.integer)) else str(spec)
    if re.fullmatch(r"-?[0-9]+", text):
        p = int(text)
        if not 1 <= p <= MAX_BOUND_BITS:
            raise PrecisionError(f"precision {p} is out of range for the bound calculator: p must be "
                                 f"1..{MAX_BOUND_BITS} bits, or a format ({FORMATS_HELP})")
        return p
    return parse_precision(spec).bits
