"""The catalogue's values by ``xreplace`` (the fast path) against sympy's ``subs`` (the recipe it
replaced), for every bound of the catalogue, and the integer widths against sympy's ceiling."""

import pytest
import sympy as sp

from commcomp.bounds import catalogue as C
from commcomp.errors import InvalidParameterError
from commcomp.bounds.records import text
from commcomp.bounds.widths import min_width_for_quantity


def _by_subs(bound, subs):
    """value_of and failed_conditions as written with ``subs`` before the fast path."""
    local = dict(subs)
    for symbol, definition in bound.definitions:
        if symbol not in subs:
            local[symbol] = sp.sympify(definition).subs(local).doit()
    value = None if bound.formula is None or bound.asymptotic else bound.formula.subs(local).doit()
    failed = [text(c) for c in bound.conditions if not c.subs(local).free_symbols and not bool(c.subs(local))]
    return value, failed


@pytest.mark.parametrize("n,bits,heads", [(3, 16, 1), (739, 8, 2), (15105, 32, 1)])
def test_every_bound_value_and_condition_as_by_subs(n, bits, heads):
    subs = C.substitutions(n, bits, heads)
    compared = 0
    for bound in C.BOUNDS:
        try:
            expected = _by_subs(bound, subs)
        except Exception as exc:  # a bound that needs a parameter not given: both paths refuse
            with pytest.raises(type(exc)):
                C.value_of(bound, subs)
            continue
        assert C.failed_conditions(bound, subs) == expected[1], bound.id
        if expected[0] is not None and expected[0].free_symbols:  # a parameter not given: refused
            with pytest.raises(InvalidParameterError):
                C.value_of(bound, subs)
            continue
        assert C.value_of(bound, subs) == expected[0], bound.id
        compared += expected[0] is not None
    assert compared > 50


@pytest.mark.parametrize("quantity", ["width", "heads_times_width", "heads_times_width_plus_1"])
def test_rational_widths_as_sympy_ceiling(quantity):
    for num in range(-7, 120):
        for den in (1, 2, 3, 16):
            for heads in (1, 2, 3):
                value = sp.Rational(num, den)
                need = sp.ceiling(value if quantity == "width" else value / heads)
                need -= quantity == "heads_times_width_plus_1"
                assert min_width_for_quantity(quantity, value, heads) == max(1, int(need))
