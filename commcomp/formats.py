"""The valid number formats, stated once: every parser and constructor checks these ranges.

:func:`commcomp.precision.parse_precision`, :meth:`commcomp.precision.FixedPoint.make` and the bound
calculator's :func:`commcomp.precision.parse_bound_bits` refuse everything else with a
:class:`~commcomp.errors.PrecisionError` that ends in :data:`FORMATS_HELP` (docs/CONVENTIONS.md
repeats the table).

=====================  ====================================================================
format                 valid range
=====================  ====================================================================
IEEE                   ``float16`` (``fp16``, ``half``), ``bfloat16`` (``bf16``), ``float32``
                       (``fp32``, ``single``), ``float64`` (``fp64``, ``double``)
``fixed:P:F``          2 <= P <= 53 and P - 1024 <= F <= 1022: every grid value k / 2^F and
                       the scale 2^F are finite float64 numbers, exactly. F need not lie in
                       0..P-1: ``fixed:4:9`` holds 16 values in [-2^-6, 2^-6 - 2^-9] and
                       ``fixed:8:-1`` the even integers -256..254 (plain binary scalings, as
                       ``FixedPoint.covering`` builds for wide ranges)
a bit count P          16, 32, 64: the IEEE format of that width; 2..53 (others):
                       ``fixed:P:P//2``
a bit count p          1..1024 for the bound calculator only (``bounds --precision``), where
(bounds only)          p is the symbol of the formulas, not a format that is run
=====================  ====================================================================

Examples
--------
>>> fraction_bits_range(8)
(-1016, 1022)
>>> check_fixed_format(8, 2000)                         # doctest: +ELLIPSIS
Traceback (most recent call last):
...
commcomp.errors.PrecisionError: precision fixed:8:2000 is out of range: use float16, ...
"""

from __future__ import annotations

from .errors import PrecisionError

__all__ = ["MIN_FIXED_BITS", "MAX_FIXED_BITS", "MAX_FRACTION_BITS", "MAX_BOUND_BITS", "FORMATS_HELP",
           "fraction_bits_range", "check_fixed_format"]

MIN_FIXED_BITS, MAX_FIXED_BITS = 2, 53  # every P-bit fixed-point grid point must be a float64
MAX_FRACTION_BITS = 1022                # 2^F and 2^-F finite (and normal) float64 numbers
MAX_BOUND_BITS = 1024                   # p of the bound calculator's formulas
FORMATS_HELP = (f"use float16, bfloat16, float32, float64, fixed:P:F with {MIN_FIXED_BITS} <= P <= "
                f"{MAX_FIXED_BITS} and P-1024 <= F <= {MAX_FRACTION_BITS}, or a bit count P "
                f"(16/32/64: IEEE; {MIN_FIXED_BITS}..{MAX_FIXED_BITS}: fixed:P:P//2)")


def fraction_bits_range(total_bits: int) -> tuple[int, int]:
    """The valid F of ``fixed:P:F`` (both ends included): the largest value 2^(P-1-F) <= 2^1023.

    Examples
    --------
    >>> fraction_bits_range(8), fraction_bits_range(53)
    ((-1016, 1022), (-971, 1022))
    """
    return int(total_bits) - 1024, MAX_FRACTION_BITS


def check_fixed_format(total_bits: int, fraction_bits: int) -> None:
    """Raise PrecisionError, with :data:`FORMATS_HELP`, unless ``fixed:P:F`` is a valid format."""
    low, high = fraction_bits_range(total_bits)
    if not (MIN_FIXED_BITS <= total_bits <= MAX_FIXED_BITS and low <= fraction_bits <= high):
        raise PrecisionError(f"precision fixed:{total_bits}:{fraction_bits} is out of range: {FORMATS_HELP}")
