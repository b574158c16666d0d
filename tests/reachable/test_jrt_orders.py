"""Just read twice on Disjointness: the one-pass state under each order against the closed form
C(n, size of the first set), and the read-twice reader run on every instance."""

import math

import numpy as np
import pytest

import reductions.search.jrt as jrt


@pytest.mark.parametrize("n, small, large", [(6, 1, 3), (8, 2, 5), (10, 2, 6), (12, 2, 8)])
def test_orders_and_read_twice(n, small, large):
    t = jrt.order_table(n, small, large)
    # every first set has its own row when the second set fits beside it (n - first >= second)
    assert t["small_first"]["distinct_states"] == math.comb(n, small)
    assert t["large_first"]["distinct_states"] == math.comb(n, large)
    assert t["small_first"]["bits"] < t["large_first"]["bits"]
    rt = t["read_twice"]
    assert rt["correct"] and rt["instances"] == math.comb(n, small) * math.comb(n, large)
    assert rt["distinct_states_peak"] == 2 * math.comb(n, small)
    assert rt["bits"] <= t["large_first"]["bits"]  # 2 C(n, small) vs C(n, large): equal at (8, 2, 5)


def test_the_read_twice_check_can_fail(monkeypatch):
    real = np.array_equal
    monkeypatch.setattr(jrt.np, "array_equal", lambda a, b: real(a, ~b))  # compare against the negation
    assert not jrt.order_table(6, 1, 3)["read_twice"]["correct"]
