"""From a bound to a width: the smallest integer width per architecture, and the crossover length.

A recurrent lower bound says ``S(m) * p >= bits``, where ``S`` is the architecture's carried-state count
(:mod:`commcomp.architectures`).  :func:`min_width_for_bits` solves ``S(m) = bits / p`` with sympy once per
architecture (symbolically in the ratio), then settles the integer by exact comparison.  Transformer bounds
on ``m H`` or ``H (m + 1)`` give ``m`` directly.

:func:`crossover_length` finds the smallest N at which a bound asks for more than a given width offers.
It scans the dyadic intervals ``(2^(j-1), 2^j]`` and bisects inside the first one whose right end is
exceeded: every catalogue formula is nondecreasing inside such an interval (the only non-monotone term is
``ceil(log2 N)``, constant there).  Comparisons are done in floats and redone exactly near ties.

Examples
--------
>>> min_width_for_bits("elman", 400, 32)
13
>>> min_width_for_bits("linear-attention", 400, 32)   # m**2 + m >= 12.5
4
>>> min_width_for_quantity("heads_times_width_plus_1", 8.2, heads=2)
4
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Callable

import sympy as sp

from commcomp.architectures import get_architecture, m, recurrent_stack_state_formula, state_numbers_formula
from commcomp.errors import InvalidParameterError

from .exact_round import NumericCeiling

__all__ = ["capacity", "crossover_length", "hybrid_protocol_bits", "min_width_for_bits", "min_width_for_hybrid",
           "min_width_for_quantity", "sum_bits"]

_RATIO = sp.Symbol("B", positive=True)
_WIDTH_QUANTITIES = ("width", "heads_times_width", "heads_times_width_plus_1")
_MAX_LOG2_N = 62


@lru_cache(maxsize=256)
def _width_root(arch: str, hyper: tuple[tuple[str, int], ...]) -> tuple[sp.Expr, Callable[[float], float]]:
    """The positive root m*(B) of S(m) = B, symbolic and as a float function."""
    expr = state_numbers_formula(arch, **dict(hyper))
    roots = [r for r in sp.solve(sp.Eq(expr, _RATIO), m) if r.is_positive is not False]
    if len(roots) != 1:  # pragma: no cover - every registered state count is increasing in m
        raise RuntimeError(f"cannot invert the state count of {arch}: {roots}")
    return roots[0], sp.lambdify(_RATIO, roots[0], "math")


@lru_cache(maxsize=256)
def _state_count(arch: str, hyper: tuple[tuple[str, int], ...]) -> Callable[[int], float]:
    """S(m) as a Python function (lambdified once per architecture and hyper-parameters)."""
    return sp.lambdify(m, state_numbers_formula(arch, **dict(hyper)), "math")


def _ge(lhs: int, rhs: sp.Expr) -> bool:
    """Exact ``lhs >= rhs`` for an integer lhs and an exact sympy rhs."""
    return bool(sp.Integer(lhs) >= rhs)


def min_width_for_bits(arch: str, bits: object, precision: int, **hyper: int) -> int:
    """Smallest width ``m >= 1`` with ``state_numbers(arch, m) * precision >= bits``.

    Widths that heads must divide are rounded up to a multiple of heads.

    Examples
    --------
    >>> min_width_for_bits("lstm", 400, 32), min_width_for_bits("mamba", 8192, 32)
    (7, 7)
    """
    spec = get_architecture(arch)
    values = spec.resolve_hyper(**hyper)
    bits = sp.nsimplify(bits) if not isinstance(bits, sp.Basic) else bits
    if precision < 1:
        raise InvalidParameterError(f"precision must be >= 1 bit, got {precision}")
    expr = state_numbers_formula(spec, **values)
    if not (bits > 0):
        width = 1
    else:
        _, root = _width_root(spec.name, tuple(sorted(values.items())))
        width = max(1, math.ceil(root(float(bits / precision))))
        count = _state_count(spec.name, tuple(sorted(values.items())))
        while not _ge(int(count(width)) * precision, bits):
            width += 1
        while width > 1 and _ge(int(count(width - 1)) * precision, bits):
            width -= 1
    if spec.width_multiple_of is not None:
        step = values[spec.width_multiple_of]
        width = -(-width // step) * step
    return width


def min_width_for_quantity(quantity: str, value: object, heads: int = 1) -> int | None:
    """Smallest width implied by a Transformer / feedforward bound on ``quantity`` (None if not a width).

    ``width``: ``ceil(value)``; ``heads_times_width``: ``ceil(value / H)``; ``heads_times_width_plus_1``:
    ``ceil(value / H) - 1``; every width is at least 1.
    """
    if value is None:
        return None
    exact = sp.nsimplify(value) if not isinstance(value, sp.Basic) else value
    if isinstance(exact, sp.Rational) and quantity in _WIDTH_QUANTITIES:  # integer arithmetic, same value
        ratio = Fraction(int(exact.p), int(exact.q)) / (1 if quantity == "width" else heads)
        return max(1, -(-ratio.numerator // ratio.denominator) - (quantity == "heads_times_width_plus_1"))
    if quantity == "width":
        need = NumericCeiling(exact)
    elif quantity == "heads_times_width":
        need = NumericCeiling(exact / heads)
    elif quantity == "heads_times_width_plus_1":
        need = NumericCeiling(exact / heads) - 1
    else:
        return None
    return max(1, int(need))


def capacity(quantity: str, width: int, precision: int, heads: int = 1, arch: str | None = None,
             hyper: dict | None = None) -> int | None:
    """What a model of this width offers on ``quantity`` (None if the quantity is not width-like).

    Examples
    --------
    >>> capacity("state_bits", 13, 32, arch="lstm"), capacity("heads_times_width_plus_1", 8, 32, heads=2)
    (832, 18)
    """
    if quantity == "state_bits":
        expr = state_numbers_formula(arch, **(hyper or {}))
        return int(expr.subs(m, width)) * precision
    return {"width": width, "heads_times_width": heads * width,
            "heads_times_width_plus_1": heads * (width + 1)}.get(quantity)


def sum_bits(precision: int, length: int) -> int:
    """Bits of an exact sum of ``length`` p-bit terms: ``p + ceil(log2 length)`` (CC-MODEL).

    Examples
    --------
    >>> sum_bits(8, 33), sum_bits(8, 32), sum_bits(8, 1)
    (14, 13, 8)
    """
    return int(precision) + max(0, (int(length) - 1).bit_length())


def hybrid_protocol_bits(state_numbers: int, precision: int, heads: int, d_k: int, d_v: int, length: int) -> int:
    """Bits of the hybrid split (three messages): ``S p + H d_k p + H (d_v + 1)(p + ceil(log2 N))``.

    Alice's recurrent state (``S`` numbers of ``p`` bits), Bob's query (``H d_k`` numbers), Alice's
    partial attention sums (``H (d_v + 1)`` exact sums of at most N terms).

    Examples
    --------
    >>> hybrid_protocol_bits(76, 8, 1, 4, 4, 9)      # 608 + 32 + 5 * 12
    700
    """
    return (int(state_numbers) * int(precision) + int(heads) * int(d_k) * int(precision)
            + int(heads) * (int(d_v) + 1) * sum_bits(precision, length))


def min_width_for_hybrid(bits: object, precision: int, heads: int, length: int, **hyper: int) -> int:
    """Smallest ``m >= 1`` whose hybrid protocol (``d_k = d_v = m``) carries ``bits`` (see
    :func:`hybrid_protocol_bits`); ``S(m)`` is the hybrid's recurrent stack (Mamba by default).

    Examples
    --------
    >>> min_width_for_hybrid(660, 8, 1, 9), min_width_for_hybrid(661, 8, 1, 9)   # S(m) = 38 m
    (2, 3)
    """
    count = sp.lambdify(m, recurrent_stack_state_formula("hybrid", **hyper), "math")

    def carried(width: int) -> int:
        return hybrid_protocol_bits(int(count(width)), precision, heads, width, width, length)

    need = sp.nsimplify(bits) if not isinstance(bits, sp.Basic) else bits
    low, high = 0, 1
    while not _ge(carried(high), need):
        low, high = high, 2 * high
    while high - low > 1:  # carried() is increasing in the width
        mid = (low + high) // 2
        low, high = (low, mid) if _ge(carried(mid), need) else (mid, high)
    return high


_FLOAT_MODULES = [{"log2": math.log2, "H2": lambda e: -(e * math.log2(e) + (1 - e) * math.log2(1 - e)),
                   "ceiling": math.ceil, "floor": math.floor, "log": math.log}, "math"]


def crossover_length(requirement: Callable[[int], sp.Expr], expr_in_N: sp.Expr, N_symbol: sp.Symbol,
                     cap: int, start: int = 2) -> int | None:
    """Smallest ``N >= start`` with ``requirement(N) > cap``, or None if none up to 2**62.

    Parameters
    ----------
    requirement : callable
        N -> exact sympy value (used near ties).
    expr_in_N : sympy.Expr
        The same function as an expression in ``N_symbol`` only (used in floats).
    cap : int
        What the width offers.
    start : int
        Smallest N to consider (the first N where the bound's conditions hold).

    Examples
    --------
    >>> from commcomp.bounds.records import N
    >>> crossover_length(lambda v: sp.Integer(v), N, N, 416)
    417
    """
    fast = sp.lambdify(N_symbol, expr_in_N, modules=_FLOAT_MODULES)

    def exceeds(value: int) -> bool:
        try:
            approx = float(fast(value))
        except (ValueError, OverflowError, ZeroDivisionError):
            approx = math.nan
        if math.isfinite(approx) and abs(approx - cap) > 1e-9 * max(1.0, abs(cap)):
            return approx > cap
        exact = requirement(value)
        if exact is None or not exact.is_finite or not exact.is_real:
            return False  # outside the formula's domain (e.g. log of 0): no claim there
        return not _ge(cap, exact)

    if exceeds(start):
        return start
    low = start
    for j in range(max(1, math.ceil(math.log2(start))), _MAX_LOG2_N + 1):
        high = 1 << j
        if high <= low:
            continue
        if exceeds(high):
            lo, hi = low, high  # exceeds(lo) is False (or lo is the previous right end), exceeds(hi) True
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if exceeds(mid) else (mid, hi)
            return hi
        low = high
    return None
