"""The copy error floor from counted states (issue 23): the count agrees with a second engine, the
floor is 1 - |S|/2^L exactly and at least the nominal one, and the witness strings collide."""

from fractions import Fraction

import pytest

from reductions.search.copy_states import copy_state_bound
from reductions.simulate import verify


@pytest.mark.parametrize("arch, n, precision, width", [("elman", 8, "fixed:4:2", 1), ("gru", 7, "fixed:6:3", 1)])
def test_counted_states_floor_and_witness(arch, n, precision, width):
    r = copy_state_bound(arch, n, precision, width=width)
    assert r["method"] == "reachable-states"
    other = verify("copy", arch, n, precision, width=width, exhaustive=True, method="prefix-tree")
    assert other["distinct_messages"] == r["counted_states"] <= r["nominal_states"]
    assert r["error_floor_counted"] == 1 - Fraction(r["counted_states"], 2 ** n)
    assert r["error_floor_counted"] >= r["error_floor_nominal"]
    assert r["witness_found"] and r["x"] != r["x_prime"]
