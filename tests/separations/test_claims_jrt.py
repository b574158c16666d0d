"""The just-read-twice line of the derived table (reductions/separations/claims_jrt.py)."""

from itertools import combinations

import pytest

from reductions.separations import claims_jrt
from reductions.separations.claim_specs import DERIVED
from reductions.separations.claims_jrt import jrt_claim

SPEC = next(s for s in DERIVED if s.claim == "derived-JRT-order")


def _one_pass_states(n, first, second):
    """Distinct rows of the Disjointness matrix, first sets by second sets, by a plain loop."""
    seconds = [set(s) for s in combinations(range(n), second)]
    return len({tuple(not (set(a) & b) for b in seconds) for a in combinations(range(n), first)})


def test_line_is_shown_with_counts_a_plain_loop_recomputes():
    result = jrt_claim(SPEC)
    n, a, b = claims_jrt.JRT_SIZES
    assert result.verdict == "shown" and result.reason == ""
    checks = {c.name: c for c in result.checks}
    assert checks["counts"].data["counted"] == (_one_pass_states(n, a, b), _one_pass_states(n, b, a))
    assert result.extra["small_first_bits"] < result.extra["read_twice_bits"] < result.extra["large_first_bits"]
    assert checks["read twice"].data["correct"] and checks["read twice"].data["instances"] == 66 * 495


@pytest.mark.parametrize("sizes", [(6, 3, 3), (5, 2, 2)])
def test_order_check_fails_where_the_order_cannot_matter(monkeypatch, sizes):
    # equal set sizes: both orders need the same state, so "order matters" must read FAILED
    monkeypatch.setattr(claims_jrt, "JRT_SIZES", sizes)
    result = jrt_claim(SPEC)
    checks = {c.name: c for c in result.checks}
    assert checks["order"].status == "FAILED" and result.verdict == "not shown"
    assert result.reason.startswith("FAILED")


def test_counts_check_fails_on_a_wrong_closed_form(monkeypatch):
    monkeypatch.setattr(claims_jrt, "closed_forms", lambda n, a, b: (1, 1))  # a deliberately wrong form
    result = jrt_claim(SPEC)
    assert {c.name: c for c in result.checks}["counts"].status == "FAILED" and result.verdict == "not shown"
