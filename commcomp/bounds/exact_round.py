"""Exact ceilings of the catalogue's irrational numbers, decided from a 40-digit value where that is safe.

``sympy.ceiling`` of an irrational number (``(4 log N + 2 log(1/delta)) / gamma^2`` at some N) is
exact but slow: it asks sympy's assumption system about the argument and finds the integer part by
repeated evaluation, about 3 ms a time, and the separations' crossover searches evaluate a thousand
such rows (JL widths k_JL, Transformer widths ``n / (3 (p + log2 N))``).  :class:`NumericCeiling`
decides the same integer from one 40-digit evaluation when the argument is further from every
integer than that evaluation's error could reach (with a margin of 10^8), and otherwise hands the
argument to ``sympy.ceiling`` unchanged: rationals, arguments with free symbols, values within
10^-30 (relative) of an integer, and anything that does not evaluate to a real float.

sympy's ``evalf(n)`` returns n correct significant digits (it raises its working precision until
the error estimate allows that), so at 40 digits the error is at most ``|x| 10^-39``; a decision
needs the fractional part to lie in ``(e, 1 - e)`` with ``e = 10^-30 (1 + |x|)``.

Examples
--------
>>> from commcomp.bounds.records import log2
>>> NumericCeiling(sp.Integer(1000) / (3 * (log2(sp.Integer(1001)) + 16)))
13
>>> NumericCeiling(sp.log(8) / sp.log(2))      # exactly 3: within the margin, sympy decides
3
>>> x = sp.Symbol("x"); NumericCeiling(x).subs(x, sp.Rational(7, 2))
4
"""

from __future__ import annotations

import mpmath
import sympy as sp

#: Significant digits of the one evaluation.
DIGITS = 40
#: Relative distance from an integer below which sympy's own ceiling decides.
MARGIN = mpmath.mpf("1e-30")


def decided_ceiling(value: sp.Expr) -> int | None:
    """``ceil(value)`` from a :data:`DIGITS`-digit evaluation, or None where it cannot be decided
    that way (module docstring)."""
    if value.is_Rational or value.free_symbols:
        return None
    try:
        approx = value.evalf(DIGITS)
    except (TypeError, ValueError, ArithmeticError):  # pragma: no cover - defensive: sympy decides
        return None
    if not isinstance(approx, sp.Float):
        return None
    with mpmath.workdps(DIGITS + 10):  # mpmath's default 15 digits would round the fraction away
        x = mpmath.mpf(approx._mpf_)
        if not mpmath.isfinite(x):
            return None
        whole = mpmath.floor(x)
        fraction, slack = x - whole, MARGIN * (1 + abs(x))
        if fraction <= slack or fraction >= 1 - slack:
            return None
        return int(whole) + 1


class NumericCeiling(sp.ceiling):
    """``sympy.ceiling`` whose evaluation at a number tries :func:`decided_ceiling` first (the same
    integer, module docstring); symbolic arguments stay symbolic, as with ``sympy.ceiling``."""

    @classmethod
    def eval(cls, arg):  # noqa: D102
        decided = decided_ceiling(arg) if arg.is_number else None
        if decided is not None:
            return sp.Integer(decided)
        return super().eval(arg)

    def _sympystr(self, printer):  # printed as the ceiling it is
        return printer._print(sp.ceiling(*self.args, evaluate=False))

    def _latex(self, printer, exp=None):
        body = printer._print(sp.ceiling(*self.args, evaluate=False))
        return body if exp is None else f"{body}^{{{exp}}}"


def with_numeric_ceilings(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every ``ceiling`` made a :class:`NumericCeiling` (same value at every point)."""
    return expr.replace(sp.ceiling, NumericCeiling)
