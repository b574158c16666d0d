"""The 2-layer induction-heads construction: every input at small N, the reduction's instances and
samples at the crossover N, and a knock-out showing the recency term is needed (so the check can fail)."""

import math

import numpy as np
import pytest

from commcomp.bounds import compute_bounds, evaluate_bound
from models.constructions import get_construction
from models.constructions.induction_heads import all_induction_inputs, make_induction_heads
from reductions import get_reduction
from reductions.tasks.induction_heads import InductionHeads


@pytest.mark.parametrize("precision", [None, "float32", "fixed:24:12"])
@pytest.mark.parametrize("N, alphabet", [(2, 2), (3, 3), (4, 4), (5, 5), (7, 3), (8, None), (8, 2)])
def test_every_input(N, alphabet, precision):
    c = make_induction_heads(N, precision, alphabet=alphabet)
    tokens = all_induction_inputs(N, alphabet)
    task = InductionHeads(alphabet=alphabet or 3)
    truth = task.ground_truth(task.make_batch(N, tokens))
    assert np.array_equal(c.predict(tokens), truth)
    assert c.width == 3 * (alphabet or 3) + 2 * math.ceil(math.log2(N)) + 3 == c.model.d_model


def test_without_the_recency_term_it_fails():
    c = make_induction_heads(6, "float32", alphabet=2)
    c.model.params["pos_emb"][:, c.params_report["layout"]["TIE"][0]] = 0.0
    tokens = all_induction_inputs(6, 2)
    task = InductionHeads(alphabet=2)
    assert not np.array_equal(c.predict(tokens), task.ground_truth(task.make_batch(6, tokens)))


def _crossover(p=16):
    for N in range(1025, 4097, 2):
        lower = [r for r in compute_bounds(N, p, task="induction-heads", arch="transformer", layers=1)
                 if r.theorem == "COMMCOMP-IH-1TF"][0].min_width
        if lower > evaluate_bound("COMMCOMP-IH-2TF", N=N, alphabet=3):
            return N


def test_at_the_crossover_on_the_reduction_and_on_samples():
    N = _crossover()
    assert N == 1893  # (N - 1)/2 / (16 + 11) - 1 = 34.04 > 34 = 9 + 22 + 3
    c = get_construction("induction-heads").make(N, "fixed:32:16", alphabet=3)
    red, k = get_reduction("induction-heads"), (N - 1) // 2
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 2, (6, k)), rng.integers(0, k, 6)
    assert np.array_equal(c.predict(red.encode(x, y, k).tokens)[:, 0], x[np.arange(6), y])
    batch = InductionHeads(alphabet=3).sample(N, 6, rng)
    assert np.array_equal(c.predict(batch.tokens), batch.answers)
