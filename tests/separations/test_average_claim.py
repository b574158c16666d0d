"""The derived table's average-case line: exact error at n = 1000 against the floor, and a check that fails."""

from __future__ import annotations

from fractions import Fraction

import pytest

from commcomp.bounds.average import index_error_floor
from reductions.separations.claim_specs import DERIVED
from reductions.separations.claims_average import AVERAGE_CLAIMS, AVERAGE_MODEL, average_claim
from reductions.separations.claims_view import claim_rows

SPEC = next(s for s in DERIVED if s.claim in AVERAGE_CLAIMS)


@pytest.fixture(scope="module")
def result():
    return average_claim(SPEC, None, seed=0)


def test_the_line_is_shown_with_exact_counts(result):
    x = result.extra
    assert result.verdict == "shown" and x["consistent"] is True
    assert x["instances"] == AVERAGE_MODEL["n"] * 2 ** AVERAGE_MODEL["n"]
    assert Fraction(x["exact_error"]) == Fraction(x["wrong_count"], x["instances"])
    assert x["bits_per_message"] < x["lower_bound_bits"] == 1000  # below the worst-case bound
    assert x["error_floor"] == float(index_error_floor(x["bits_per_message"], 1000))
    assert x["error_floor"] <= x["exact_error_value"]
    assert {c.name: c.status for c in result.checks} == {
        "construction": "not checked", "witness": "found", "protocol": "not checked",
        "below bound": "passed", "exact error": "passed", "floor": "passed"}


def test_the_row_says_error_and_floor(result):
    claim, points, verdict = claim_rows([result])[0]
    assert "uniform inputs" in claim and "floor" in points and verdict.startswith("shown at N = 1000")


def test_a_floor_above_the_error_fails_the_line(monkeypatch):
    import commcomp.bounds.error_check as error_check

    monkeypatch.setattr(error_check, "index_error_floor", lambda bits, n: Fraction(1, 2) + Fraction(1, 1 << 40))
    bad = average_claim(SPEC, None, seed=0)
    assert bad.verdict == "not shown" and bad.reason.startswith("FAILED")
    assert bad.extra["consistent"] is False
