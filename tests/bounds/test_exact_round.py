"""NumericCeiling (commcomp.bounds.exact_round) against sympy's own ceiling: the same integer on
irrational values, near-integers left to sympy, and every catalogue bound with a ceiling over a
ladder of lengths."""

import pytest
import sympy as sp

from commcomp.bounds import catalogue as C
from commcomp.bounds.exact_round import NumericCeiling, decided_ceiling, with_numeric_ceilings
from commcomp.bounds.records import latex, log2, text
from commcomp.bounds.widths import min_width_for_quantity


def _irrationals():
    for N in (3, 5, 17, 100, 1001, 4099, 15105, 2 ** 40 + 3):
        for p in (8, 16, 32):
            yield sp.Integer(N - 1) / (3 * (p + log2(sp.Integer(N))))
            yield (4 * sp.log(sp.Integer(N)) + 2 * sp.log(20)) * 16
            yield -sp.sqrt(sp.Integer(N)) / p
    yield sp.exp(sp.pi * sp.sqrt(163))                    # 262537412640768743.99999999999925...
    yield sp.Integer(10) ** 45 + sp.log(2)                # too large for 40 digits: left to sympy


def test_decided_ceilings_are_sympys():
    decided = 0
    for value in _irrationals():
        got = decided_ceiling(value)
        assert got is None or got == int(sp.ceiling(value)), value
        assert NumericCeiling(value) == sp.ceiling(value), value
        decided += got is not None
    assert decided >= 70


@pytest.mark.parametrize("value", [sp.log(8) / sp.log(2), sp.Integer(10) ** 45 + sp.log(2), sp.Rational(7, 2),
                                   sp.Integer(5), sp.oo, sp.Symbol("x"), 1 + sp.sqrt(2) * sp.Integer(10) ** -35])
def test_left_to_sympy(value):
    """Within the margin of an integer, past 40 digits, rational, infinite or symbolic: no decision
    here, and NumericCeiling gives sympy's answer."""
    assert decided_ceiling(value) is None
    if value.free_symbols:  # stays unevaluated, printed as sympy's
        assert text(NumericCeiling(value)) == text(sp.ceiling(value)) == "ceiling(x)"
    else:
        assert NumericCeiling(value) == sp.ceiling(value)


def test_printed_as_ceiling():
    x = sp.Symbol("x")
    expr = sp.ceiling(log2(x)) + 2 * sp.ceiling(x / 3) ** 2
    replaced = with_numeric_ceilings(expr)
    assert replaced.has(NumericCeiling) and replaced != expr
    assert text(replaced) == text(expr) and latex(replaced) == latex(expr)
    assert replaced.xreplace({x: sp.Integer(1001)}) == expr.xreplace({x: sp.Integer(1001)}) == 10 + 2 * 334 ** 2


@pytest.mark.parametrize("quantity", ["width", "heads_times_width", "heads_times_width_plus_1"])
def test_irrational_widths_as_sympy_ceiling(quantity):
    for value in _irrationals():
        for heads in (1, 3):
            need = sp.ceiling(value if quantity == "width" else value / heads) - (quantity == "heads_times_width_plus_1")
            assert min_width_for_quantity(quantity, value, heads) == max(1, int(need))


@pytest.mark.parametrize("bits", [8, 16])
def test_catalogue_ceilings_over_a_ladder(bits):
    """Every bound whose formula or definitions hold a ceiling, by the fast path against a plain
    ``subs`` with sympy's ceiling, at lengths from 3 to 2^20 + 7."""
    with_ceiling = [b for b in C.BOUNDS if b.formula is not None and not b.asymptotic
                    and (b.formula.has(sp.ceiling) or any(sp.sympify(d).has(sp.ceiling) for _, d in b.definitions))]
    assert len(with_ceiling) > 20
    compared = 0
    for length in (3, 7, 64, 97, 321, 1155, 4593, 14307, 2 ** 20 + 7):
        subs = C.substitutions(length, bits, 1)
        for bound in with_ceiling:
            local = dict(subs)
            try:
                for symbol, definition in bound.definitions:
                    if symbol not in subs:
                        local[symbol] = sp.sympify(definition).subs(local).doit()
                expected = bound.formula.subs(local).doit()
            except Exception:
                continue
            if expected.free_symbols:
                continue
            assert C.value_of(bound, subs) == expected, (bound.id, length)
            compared += 1
    assert compared > 100
