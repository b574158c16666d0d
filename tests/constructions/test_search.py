"""The minimal precision / width search: results are minimal and really pass."""

from __future__ import annotations

import math

import pytest

from commcomp.errors import InvalidParameterError
from models.constructions import get_construction
from reductions.search.construction import minimal_width
from reductions.search.construction import (check_construction, minimal_fixed, minimal_float,
                                         minimal_option, search_table)


def _passes(spec, n, precision, **opts):
    try:
        c = spec.make(n, precision, **opts)
    except InvalidParameterError:
        return False
    return check_construction(c, inputs=spec.inputs(n)).ok


@pytest.mark.parametrize("name,n", [("index-lookup", 6), ("string-equality", 4), ("mqar", 2),
                                    ("k-dnf", 5)])
def test_minimal_fixed_passes_and_one_bit_less_never_does(name, n):
    spec = get_construction(name)
    r = minimal_fixed(spec, n)
    assert r.value is not None and r.exhaustive
    assert _passes(spec, n, r.precision)
    P = r.value
    assert not any(_passes(spec, n, f"fixed:{P - 1}:{F}") for F in range(P - 1)) or P == 2


def test_minimal_float_lists_what_passes():
    spec = get_construction("string-disjointness")
    r = minimal_float(spec, 4)
    assert r.value == r.params["passing"][0] and "float64" in r.params["passing"]


@pytest.mark.parametrize("n", [5, 16, 40])
def test_binary_code_width_is_exactly_log2_n(n):
    spec = get_construction("index-lookup")
    exh = n <= spec.exhaustive_max_n
    r = minimal_option(spec, n, exhaustive=exh, samples=0 if exh else 200)
    assert r.value == math.ceil(math.log2(n)) and r.width == 2 + 2 * r.value


def test_jl_width_search_finds_a_certified_smaller_k():
    spec = get_construction("index-lookup")
    r = minimal_option(spec, 8, options={"codes": "jl"}, precision="float32")
    assert r.value is not None and r.value < 54 and r.value >= 3
    assert _passes(spec, 8, "float32", codes="jl", k=r.value, seed=r.params["seed"] - 0)
    # one less: every draw fails (or the codes collide)
    assert not any(_passes(spec, 8, "float32", codes="jl", k=r.value - 1, seed=s) for s in range(3)) \
        or r.value == 1


def test_nothing_to_check_is_an_error():
    with pytest.raises(InvalidParameterError, match="nothing to check"):
        minimal_fixed(get_construction("index-lookup"), 64)


def test_table_and_sweep_entry_point():
    spec = get_construction("string-equality")
    rows = search_table([(spec, {}, None)], [3, 40], samples=50)
    assert [r["regime"] for r in rows] == ["all", "50 random"]
    assert rows[0]["min_option"] == 2 and rows[1]["min_option"] == 6
    out = minimal_width("string-equality", "transformer", 3)
    assert out["min_width"] == 2 * 2 + 5 and out["min_precision_bits"] is not None
    assert out["theorem"] == "BHBK-EQ-2TF"


def test_feature_tasks_are_judged_on_their_rows():
    """qSA reads the rows (z_i; y_i; i), not the tokens: the search samples TaskBatches."""
    spec = get_construction("qsa-random-keys")
    c = spec.make(3, "fixed:10:6")
    assert check_construction(c, samples=300, seed=1).ok
    r = minimal_fixed(spec, 3, exhaustive=False, samples=200, bits=range(2, 20))
    P = r.value
    assert P is not None and check_construction(spec.make(3, r.precision), samples=200).ok
    # one bit less fails on the same samples for every split of the bits
    assert not any(check_construction(spec.make(3, f"fixed:{P - 1}:{F}"), samples=200).ok
                   for F in range(P - 1))


def test_moment_curve_needs_more_than_fixed_point_of_40_bits_at_q_8():
    """C7b's margin is ~(2/N)^(2q): about 2q log2 N bits, beyond 39 at q = 8 (N = 17)."""
    spec = get_construction("qsa-moment-curve")
    assert minimal_fixed(spec, 8, exhaustive=False, samples=50, bits=range(30, 40)).value is None
    assert minimal_float(spec, 8, exhaustive=False, samples=50).value == "float64"
