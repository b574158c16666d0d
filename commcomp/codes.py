"""Number codes and bit rows on any Array API namespace: the message codec on a device.

:mod:`commcomp.precision` encodes NumPy arrays with NumPy's own bit views. On another namespace
(CuPy, torch, array-api-strict) there is no view of a float's bits, so the codes are computed
here with arithmetic the standard has, exactly:

* an IEEE value ``(-1)^s · 1.f · 2^e`` gives its fields by ``e = floor(log2 |x|)`` corrected
  against a table of powers of two (``log2`` may be off by one next to a power of two), ``f =
  (|x| / 2^e - 1) · 2^M`` (a division by a power of two, exact), subnormals ``|x| / 2^(1-bias-M)``;
  the sign from ``signbit`` (so -0.0 keeps it); inf and the one canonical NaN by their codes;
* a code is written as bits by shifting int64 codes (``(c >> (w-1-j)) & 1``; an arithmetic
  shift of a negative int64 still leaves bit j of the original in place), and read back by
  summing disjoint shifted bits.

Every function takes and returns arrays of the input's namespace; nothing moves to the host.
The tests check each against the NumPy codec bit for bit (all formats, subnormals, ±0, ±inf, NaN).

Examples
--------
>>> import array_api_strict as xp
>>> c = ieee_codes(xp.asarray([1.0, -2.0, 0.0]), 8, 23)       # float32 codes
>>> [hex(int(v)) for v in c]
['0x3f800000', '0xc0000000', '0x0']
>>> [float(v) for v in ieee_values(c, 8, 23)]
[1.0, -2.0, 0.0]
>>> b = codes_to_bits(xp.asarray([[5, 1]], dtype=xp.int64), 4)
>>> [int(v) for v in b[0, :]], [int(v) for v in bits_to_codes(b, 4)[0, :]]
([0, 1, 0, 1, 0, 0, 0, 1], [5, 1])
"""

from __future__ import annotations

import numpy as np

from .backend import namespace_of

__all__ = ["ieee_codes", "ieee_values", "codes_to_bits", "bits_to_codes"]

_EMIN, _EMAX = -1074, 1024
with np.errstate(over="ignore"):
    _POWERS = np.ldexp(1.0, np.arange(_EMIN, _EMAX + 1))  # 2^e for e in [-1074, 1024] (2^1024 = inf)
_TABLES: dict = {}


def _powers(xp, device):
    """The table of powers of two as an array of ``xp`` (cached per namespace and device)."""
    key = (id(xp), str(device))
    if key not in _TABLES:
        _TABLES[key] = xp.asarray(_POWERS, dtype=xp.float64, device=device)
    return _TABLES[key]


def _pow2(xp, table, e):
    """``2^e`` for integer-valued float64 ``e`` in [-1074, 1024], exactly (a table lookup)."""
    idx = xp.astype(xp.clip(e, float(_EMIN), float(_EMAX)), xp.int64) - _EMIN
    return xp.reshape(xp.take(table, xp.reshape(idx, (-1,)), axis=0), e.shape)


def _device(x):
    return getattr(x, "device", None)


def ieee_codes(x, exponent_bits: int, mantissa_bits: int):
    """The unsigned codes (int64, bit 63 as the sign of a 64-bit code) of float64 values ``x``
    that the IEEE format holds exactly (round them first); NaN gets the one canonical quiet NaN."""
    xp = namespace_of(x)
    E, M = int(exponent_bits), int(mantissa_bits)
    bias = (1 << (E - 1)) - 1
    table = _powers(xp, _device(x))
    a = xp.abs(x)
    nan, inf = xp.isnan(x), xp.isinf(x)
    finite_pos = xp.logical_and(a > 0, xp.logical_not(xp.logical_or(nan, inf)))
    safe = xp.where(finite_pos, a, xp.ones_like(a))
    e = xp.floor(xp.log2(safe))
    e = xp.where(_pow2(xp, table, e) > safe, e - 1, e)
    e = xp.where(_pow2(xp, table, e + 1) <= safe, e + 1, e)
    normal = safe >= 2.0 ** (1 - bias)
    mant_normal = (safe / _pow2(xp, table, e) - 1.0) * 2.0 ** M  # exact: integers < 2^M
    mant_sub = xp.where(normal, xp.zeros_like(safe), safe) / 2.0 ** (1 - bias - M)  # exact: < 2^M
    mant = xp.where(normal, mant_normal, mant_sub)
    exp_field = xp.where(normal, e + bias, xp.zeros_like(e))
    top = float((1 << E) - 1)
    special = xp.logical_or(nan, inf)
    exp_field = xp.where(finite_pos, exp_field, xp.where(special, xp.full_like(e, top), xp.zeros_like(e)))
    mant = xp.where(finite_pos, mant, xp.where(nan, xp.full_like(e, float(1 << (M - 1))), xp.zeros_like(e)))
    sign = xp.astype(xp.logical_and(xp.signbit(x), xp.logical_not(nan)), xp.int64)
    i64 = xp.int64
    return (xp.bitwise_left_shift(sign, xp.asarray(E + M, dtype=i64))
            | xp.bitwise_left_shift(xp.astype(exp_field, i64), xp.asarray(M, dtype=i64))
            | xp.astype(mant, i64))


def ieee_values(codes, exponent_bits: int, mantissa_bits: int):
    """Float64 values of IEEE codes ``codes`` (int64), the inverse of :func:`ieee_codes`."""
    xp = namespace_of(codes)
    E, M = int(exponent_bits), int(mantissa_bits)
    bias = (1 << (E - 1)) - 1
    i64 = xp.int64
    c = xp.astype(codes, i64)
    sign = xp.bitwise_and(xp.bitwise_right_shift(c, xp.asarray(E + M, dtype=i64)), xp.asarray(1, dtype=i64))
    exp_field = xp.bitwise_and(xp.bitwise_right_shift(c, xp.asarray(M, dtype=i64)),
                               xp.asarray((1 << E) - 1, dtype=i64))
    mant = xp.astype(xp.bitwise_and(c, xp.asarray((1 << M) - 1, dtype=i64)), xp.float64)
    ef = xp.astype(exp_field, xp.float64)
    table = _powers(xp, _device(codes))
    normal = (1.0 + mant / 2.0 ** M) * _pow2(xp, table, ef - bias)
    sub = mant * 2.0 ** (1 - bias - M)
    top = exp_field == (1 << E) - 1
    special = xp.where(mant == 0.0, xp.asarray(float("inf"), dtype=xp.float64),
                       xp.asarray(float("nan"), dtype=xp.float64))
    v = xp.where(top, special, xp.where(exp_field == 0, sub, normal))
    return xp.where(xp.logical_and(sign == 1, xp.logical_not(xp.isnan(v))), -v, v)


def _shifts(xp, width: int, device):
    return xp.arange(width - 1, -1, -1, dtype=xp.int64, device=device)  # (width,) most significant first


def codes_to_bits(codes, width: int):
    """``(B, k)`` int64 codes to ``(B, k * width)`` uint8 bits, most significant first."""
    xp = namespace_of(codes)
    B, k = codes.shape
    c = xp.astype(codes, xp.int64)[:, :, None]  # (B, k, 1)
    bits = xp.bitwise_and(xp.bitwise_right_shift(c, _shifts(xp, width, _device(codes))),
                          xp.asarray(1, dtype=xp.int64))  # (B, k, width)
    return xp.reshape(xp.astype(bits, xp.uint8), (B, k * width))


def bits_to_codes(bits, width: int):
    """``(B, k * width)`` bits to ``(B, k)`` int64 codes (a 64-bit code's top bit is bit 63)."""
    xp = namespace_of(bits)
    B, L = bits.shape
    b = xp.reshape(xp.astype(bits, xp.int64), (B, L // width, width))  # (B, k, width)
    return xp.sum(xp.bitwise_left_shift(b, _shifts(xp, width, _device(bits))), axis=-1, dtype=xp.int64)
