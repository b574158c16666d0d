"""Samplers: the right shapes and vocabulary, answers equal to the ground truth, balanced."""

import numpy as np
import pytest

from reductions import TASKS, get_reduction
from reductions.tasks import MQAR, Dyck, IndexLookup, Match2, Match3, MultiIndexLookup

# (task, n, which answers are balanced, (low, high) bounds on the fraction of ones)
EXACT = (0.5, 0.5)
CASES = [
    (TASKS["index-lookup"], 9, EXACT), (TASKS["multi-index-lookup"], 5, EXACT),
    (TASKS["nearest-neighbour"], 7, EXACT), (TASKS["mqar"], 6, EXACT), (MQAR(num_queries=None), 6, EXACT),
    (MQAR(num_queries=9), 4, (0.35, 0.65)),  # more queries than pairs: repeats, so only roughly
    (TASKS["string-equality"], 8, EXACT), (TASKS["string-disjointness"], 8, EXACT),
    (TASKS["dyck"], 6, EXACT), (Dyck(types=3, depth=4), 10, EXACT),
    (TASKS["match2"], 6, EXACT), (TASKS["match3"], 6, EXACT), (Match3(modulus=31), 4, EXACT),
    (TASKS["istree"], 9, EXACT), (TASKS["istree"], 4, EXACT),
]


@pytest.mark.parametrize("task, n, bounds", CASES, ids=lambda v: getattr(v, "name", None))
def test_sampler_is_balanced_and_agrees_with_ground_truth(task, n, bounds):
    batch = task.sample(n, 200, np.random.default_rng(7))
    assert batch.tokens.shape == (200, task.length(n)) and batch.n == n
    assert batch.tokens.min() >= 0 and batch.tokens.max() < task.vocab_size(n)
    assert len(task.vocabulary(n)) == task.vocab_size(n)
    truth = task.ground_truth(batch)
    assert np.array_equal(truth, batch.answers)
    assert truth.shape[:2] == (200, len(task.output_positions(n)))
    if isinstance(task, (Match2, Match3)):  # balanced where the reductions read
        truth = truth[:, task.query_position]
    low, high = bounds
    assert low <= float(np.mean(truth == 1)) <= high
    assert set(np.unique(truth)) <= {0, 1}


def test_seq2seq_other_positions_get_both_answers():
    b = TASKS["match3"].sample(6, 200, np.random.default_rng(1))
    assert 0 < b.answers[:, :-1].mean() < 1


def test_match_samplers_balance_where_the_reductions_read():
    for name in ("match2", "match3"):
        task, red = TASKS[name], get_reduction(name)
        for n in (1, 4, 7):
            assert red.output_positions(n).tolist() == [task.query_position % task.length(n)]


def test_larger_alphabets_are_balanced_over_symbols():
    task = IndexLookup(alphabet=4)
    counts = np.bincount(task.sample(5, 400, np.random.default_rng(2)).answers.ravel(), minlength=4)
    assert counts.tolist() == [100, 100, 100, 100]
    mil = MultiIndexLookup(alphabet=3, data_factor=3)
    assert np.bincount(mil.sample(4, 300, np.random.default_rng(3)).answers.ravel()).tolist() == [400] * 3


def test_qsa_sampler_gives_vectors():
    task = TASKS["qsa"]
    b = task.sample(3, 20, np.random.default_rng(4))
    assert b.features.shape == (20, 7, task.dim + 3 + 1)
    assert b.answers.shape == (20, 7, task.dim)
    assert np.all(np.linalg.norm(b.answers, axis=2) <= 1 + 1e-12)  # means of points in the ball
    assert np.array_equal(task.ground_truth(b), b.answers)


def test_samplers_are_seeded():
    for task in TASKS.values():
        n = 4 if task.name != "istree" else 5
        a = task.sample(n, 16, np.random.default_rng(9))
        b = task.sample(n, 16, np.random.default_rng(9))
        assert np.array_equal(a.tokens, b.tokens)
