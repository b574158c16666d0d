"""commcomp.architectures: state counts against hand formulas, registry names, errors."""

import itertools

import pytest
import sympy as sp

from commcomp.architectures import (
    ARCHITECTURES, get_architecture, list_architectures, m, state_numbers, state_numbers_formula,
)
from commcomp.errors import InvalidParameterError, UnknownNameError, UnsupportedSplitError

# Hand-written counts (the arrays each architecture carries), independent of the module's sympy formulas.
HAND = {
    "elman": lambda w, layers=1: layers * w,
    "lstm": lambda w, layers=1: layers * (w + w),                       # h and c
    "gru": lambda w, layers=1: layers * w,
    "linear-attention": lambda w, layers=1, heads=1: layers * heads * ((w // heads) ** 2 + w // heads),
    "retnet": lambda w, layers=1, heads=1, value_factor=1:
        layers * heads * (w // heads) * (value_factor * w // heads),
    "dss": lambda w, layers=1, d_state=64, complex_state=0: layers * w * d_state * (2 if complex_state else 1),
    "mamba": lambda w, layers=1, expand=2, d_state=16, d_conv=4:
        layers * (expand * w * d_state + expand * w * (d_conv - 1)),  # SSM state + conv buffer
}
GRIDS = {
    "elman": [{"layers": L} for L in (1, 3)],
    "lstm": [{"layers": L} for L in (1, 2)],
    "gru": [{"layers": L} for L in (1, 4)],
    "linear-attention": [{"layers": L, "heads": h} for L in (1, 2) for h in (1, 2, 4)],
    "retnet": [{"layers": L, "heads": h, "value_factor": v} for L in (1, 2) for h in (1, 4) for v in (1, 2)],
    "dss": [{"layers": L, "d_state": d, "complex_state": c} for L in (1, 2) for d in (1, 64) for c in (0, 1)],
    "mamba": [{"layers": L, "expand": e, "d_state": d, "d_conv": k}
              for L in (1, 3) for e in (1, 2) for d in (4, 16) for k in (1, 4)],
}


@pytest.mark.parametrize("arch", sorted(HAND))
def test_state_numbers_match_hand_counts(arch):
    for hyper, width in itertools.product(GRIDS[arch], (4, 8, 12, 64)):
        assert state_numbers(arch, width, **hyper) == HAND[arch](width, **hyper), (arch, hyper, width)


def test_defaults_are_used_when_not_given():
    assert state_numbers("mamba", 10) == HAND["mamba"](10)
    assert state_numbers("dss", 10) == 640
    assert state_numbers_formula("lstm") == 2 * m
    assert state_numbers_formula("mamba") == 38 * m


def test_formula_is_a_polynomial_in_m_only():
    for spec in list_architectures("recurrent"):
        expr = state_numbers_formula(spec.name)
        assert expr.free_symbols == {m}
        assert sp.Poly(expr, m).degree() in (1, 2)


def test_registry_names_and_aliases():
    for name in ("elman", "lstm", "gru", "linear-attention", "retnet", "dss", "mamba", "transformer", "hybrid"):
        assert get_architecture(name).name == name
    assert get_architecture("rnn").name == "elman"
    assert get_architecture("Linear_Transformer").name == "linear-attention"
    assert get_architecture("s4d").name == "dss"
    assert {a.arch_class for a in ARCHITECTURES.values()} == {"recurrent", "transformer", "hybrid", "feedforward"}


def test_every_architecture_documents_its_state():
    for spec in ARCHITECTURES.values():
        assert spec.state_arrays and spec.description


@pytest.mark.parametrize("arch", ["transformer", "hybrid", "feedforward"])
def test_no_fixed_state_raises(arch):
    with pytest.raises(UnsupportedSplitError):
        state_numbers_formula(arch)


def test_bad_input_raises():
    with pytest.raises(UnknownNameError):
        get_architecture("gpt")
    with pytest.raises(InvalidParameterError):
        state_numbers("lstm", 0)
    with pytest.raises(InvalidParameterError):
        state_numbers("lstm", 4, d_state=3)            # not an LSTM hyper-parameter
    with pytest.raises(InvalidParameterError):
        state_numbers("retnet", 6, heads=4)            # heads must divide the width
    with pytest.raises(InvalidParameterError):
        state_numbers("mamba", 4, layers=0)
    with pytest.raises(InvalidParameterError):
        state_numbers("dss", 4, complex_state=2)
