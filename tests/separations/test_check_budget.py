"""Check (a)'s adversarial pairs at long lengths, and the claim's reason beyond the check limit."""

import numpy as np
import pytest

from reductions.separations import checks
from reductions.separations.checks import adversarial_budget, construction_check


def test_budget_keeps_every_pair_up_to_1100_tokens():
    budget = 256 * 1100 ** 2
    assert [adversarial_budget(n) for n in (1, 10, 1100)] == [budget, budget // 100, 256]
    assert adversarial_budget(945) == budget // 945 ** 2 == 346
    assert adversarial_budget(5569) == 16 > budget // 5569 ** 2  # never fewer than 16
    assert adversarial_budget(10 ** 6) == 16  # never fewer than 16


@pytest.mark.parametrize("count,most", [(1, 1), (5, 16), (2784, 42), (100, 2), (17, 16)])
def test_spread_is_even_and_keeps_both_ends(count, most):
    kept = checks._spread(count, most)
    assert kept[0] == 0 and kept[-1] == count - 1
    assert len(kept) == min(count, most) and np.all(np.diff(kept) > 0)
    if len(kept) > 2:  # gaps differ by at most one
        gaps = np.diff(kept)
        assert gaps.max() - gaps.min() <= 1


def test_cut_pairs_are_counted_and_said(monkeypatch):
    """Index Lookup at n = 64 has 64 adversarial (x, index) pairs; a budget of 10 per length² keeps
    10 of them, evenly spaced, and the detail says so; the full check counts all 64."""
    full = construction_check("index-lookup", "index-lookup-1tf", 64, "float32", samples=4)
    assert full.data["adversarial"] == 64 and "evenly spaced" not in full.detail
    from reductions.registry import get_reduction

    length = get_reduction("index-lookup").length(64)
    monkeypatch.setattr(checks, "ADVERSARIAL_BUDGET", 10 * length ** 2)
    cut = construction_check("index-lookup", "index-lookup-1tf", 64, "float32", samples=4)
    assert cut.status == "passed" and cut.data["adversarial"] == 16  # the floor of 16
    assert "16 adversarial (evenly spaced, of 64" in cut.detail
    monkeypatch.setattr(checks, "adversarial_budget", lambda n: 10)
    cut = construction_check("index-lookup", "index-lookup-1tf", 64, "float32", samples=4)
    assert cut.data["adversarial"] == 10 and cut.data["checked"] == 14


def test_claim_beyond_the_limit_says_how_to_run_it():
    from reductions.separations.claims import evaluate_claims
    from reductions.separations.rows import separation_ladders

    ladders = separation_ladders(["mqar"], "bfloat16", weak=["elman"], check_max_length=600)
    claims, _ = evaluate_claims(ladders, "bfloat16", tasks=["mqar"], check_max_length=600)
    claim = next(c for c in claims if c.spec.claim == "retrieval-MQAR")
    assert claim.verdict == "not shown"
    assert ("the crossover has 1155 tokens > 600: --check-max-length 1155 runs its checks "
            f"(32 random + up to {256 * 1100 ** 2 // 1155 ** 2} adversarial inputs of 1155 tokens)") in claim.reason
