"""The 2-layer induction-heads construction: every input at small N (bfloat16 included), the reduction's
instances and random samples at the crossovers at bfloat16 and float32, a knock-out showing the
recency term is needed (so the check can fail) and a format too narrow for the weights refused."""

import math

import numpy as np
import pytest

from commcomp.bounds import compute_bounds, evaluate_bound
from commcomp.errors import InvalidParameterError
from models.constructions import get_construction
from models.constructions.induction_heads import all_induction_inputs, make_induction_heads
from reductions import get_reduction
from reductions.tasks.induction_heads import InductionHeads


def _truth(N, alphabet, tokens):
    task = InductionHeads(alphabet=alphabet)
    return task.ground_truth(task.make_batch(N, tokens))


@pytest.mark.parametrize("precision", [None, "bfloat16", "float32", "fixed:24:12"])
@pytest.mark.parametrize("N, alphabet", [(2, 2), (3, 3), (4, 4), (5, 5), (7, 3), (8, None), (8, 2)])
def test_every_input(N, alphabet, precision):
    c = make_induction_heads(N, precision, alphabet=alphabet)
    tokens = all_induction_inputs(N, alphabet)
    assert np.array_equal(c.predict(tokens), _truth(N, alphabet or 3, tokens))
    assert c.width == 3 * (alphabet or 3) + 2 * math.ceil(math.log2(N)) + 2 == c.model.d_model


def test_every_input_with_a_long_run_of_matches_at_bfloat16():
    """N = 12 over 2 symbols (4096 inputs): many earlier matches, each separated by 4 in the score."""
    tokens = all_induction_inputs(12, 2)
    c = make_induction_heads(12, "bfloat16", alphabet=2)
    assert np.array_equal(c.predict(tokens), _truth(12, 2, tokens))


def test_without_the_recency_term_it_fails():
    c = make_induction_heads(6, "float32", alphabet=2)
    k = c.params_report["position_code_k"]
    c.model.params["l1.b_Q"][0, 2:2 + k] = 0.0
    tokens = all_induction_inputs(6, 2)
    assert not np.array_equal(c.predict(tokens), _truth(6, 2, tokens))


def test_a_format_that_cannot_hold_the_query_weight_is_refused():
    with pytest.raises(InvalidParameterError, match="cannot hold"):
        make_induction_heads(300, "fixed:16:8")  # 2^(9 + 3) > 2^7


def _crossover(p, theorem, arch, start=5):
    for N in range(start, 8193, 2):
        rows = [r for r in compute_bounds(N, p, task="induction-heads", arch=arch, layers=1) if r.theorem == theorem]
        if rows and rows[0].min_width > evaluate_bound("COMMCOMP-IH-2TF", N=N, alphabet=3):
            return N


def test_crossovers():
    # (N - 1)/2 / (16 + 11) - 1 = 33.04 > 33 = 9 + 22 + 2; recurrent: (N - 1)/2 / 16 = 31.06 > 31 first
    # crosses at 995, but the width steps to 33 at N = 1025 (c = 11), so the crossing that stays (the
    # one `commcomp separations` reports) is 1059: 529/16 = 33.06 > 33
    assert _crossover(16, "COMMCOMP-IH-1TF", "transformer") == 1839
    assert _crossover(16, "COMMCOMP-IH-RNN", "elman") == 995
    assert _crossover(16, "COMMCOMP-IH-RNN", "elman", start=1025) == 1059


@pytest.mark.parametrize("N", [995, 1059, 1091, 1839])
@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
def test_at_the_crossovers_on_the_reduction_and_on_samples(N, precision):
    c = get_construction("induction-heads").make(N, precision, alphabet=3)
    red, k = get_reduction("induction-heads"), (N - 1) // 2
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 2, (8, k)), rng.integers(0, k, 8)
    assert np.array_equal(c.predict(red.encode(x, y, k).tokens)[:, 0], x[np.arange(8), y])
    batch = InductionHeads(alphabet=3).sample(N, 16, rng)
    assert np.array_equal(c.predict(batch.tokens), batch.answers)
