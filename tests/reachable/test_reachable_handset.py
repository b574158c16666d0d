"""Hand-set weights whose reachable states are known in closed form.

* a ReLU counter (Elman, width 1, h' = ReLU(h + x_t)) at ``fixed:4:0``: the states after t bits
  are the counts 0..min(t, 7) (it saturates at 7); reading the count against 3.5 for every query,
  its exact correctness over all n·2^n instances is ``sum_k C(n, k)·(k if k >= 4 else n - k)``;
* the index-first RNN (models/constructions/index_first_rnn.py) fed the query *last*: after the
  first symbol it only ever holds s_0 (a = s_0, g = 0, r- counting), so |S_t| = 2 for t >= 1, it
  answers s_0 for every query, and exactly ``2^n + (n - 1)·2^(n-1)`` instances are right;
* the Dyck-(2, D) automaton RNN over ``(`` and ``)``: the stack depths d <= min(t, D) with
  d = t mod 2, plus the reject sink once t >= 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.constructions.dyck_rnn import make_dyck_rnn
from models.constructions.index_first_rnn import index_first_bits, make_index_first_rnn
from models.recurrent.base import RecurrentModel
from models.recurrent.elman import ElmanLayer
from reductions.search.reachable.api import reachable_analysis
from reductions.search.reachable.engine import explore_model
from reductions.search.reachable.letters import AliceLetters
from reductions.simulate import verify


def _counter(n: int) -> RecurrentModel:
    vocab = 2 + n  # symbols 0/1, then the query tokens (embedded as 0)
    embedding = np.zeros((vocab, 1))
    embedding[1, 0] = 1.0
    layer = ElmanLayer(1, 1, {"W_x": np.ones((1, 1)), "W_h": np.ones((1, 1)), "b": np.zeros(1)},
                       nonlinearity="relu")
    return RecurrentModel("elman", embedding, [layer], np.array([[0.0, 1.0]]), np.array([0.0, -3.5]),
                          precision="fixed:4:0")


@pytest.mark.parametrize("n", [9, 1000])
def test_counter_states_and_exact_correctness(n):
    out = reachable_analysis("index-lookup", n=n, model=_counter(n))
    assert out["distinct_messages_per_level"] == [min(t, 7) + 1 for t in range(n + 1)]
    expected = sum(math.comb(n, k) * (k if k >= 4 else n - k) for k in range(n + 1))
    assert out["correct_count"] == expected and out["instances"] == n * 2 ** n
    assert out["faithful_count"] == out["instances"]
    w = out["witness"]  # "01..." and "10..." both count 1: merged at level 2
    assert w["found"] and w["complete"] and w["x"].count("1") == w["x_prime"].count("1")
    if n <= 12:
        tree = verify("index-lookup", n=n, model=_counter(n), exhaustive=True, method="prefix-tree")
        assert tree["correct_count"] == expected


@pytest.mark.parametrize("n", [8, 1000])
def test_index_first_rnn_with_the_query_last_keeps_one_bit(n):
    c = make_index_first_rnn(n, f"fixed:{index_first_bits(n)}:0")
    out = reachable_analysis("index-lookup", n=n, model=c.model)
    assert out["distinct_messages_per_level"] == [1] + [2] * n
    assert out["correct_count"] == 2 ** n + (n - 1) * 2 ** (n - 1)
    assert out["witness"]["found"] and out["witness"]["complete"]
    assert out["faithful_states"] and out["representatives_match"]


@pytest.mark.parametrize("depth,encoding", [(2, "onehot"), (3, "onehot"), (3, "scalar")])
def test_dyck_automaton_states(depth, encoding):
    length = 9
    bits = {"onehot": 2, "scalar": 8}[encoding]
    c = make_dyck_rnn(length, f"fixed:{bits}:0", types=2, depth=depth, encoding=encoding)
    layout = AliceLetters(length, length, np.arange(length), np.tile([[0, 2]], (length, 1)),  # ( and )
                          np.zeros(0, dtype=np.int64))
    reach = explore_model(c.model, layout)
    expected = [sum(1 for d in range(min(t, depth) + 1) if d % 2 == t % 2) + (t >= 1) for t in range(length + 1)]
    assert reach.sizes == expected
    assert reach.total_inputs == 2 ** length and not reach.injective


def test_unread_bits_are_collisions():
    """A layout that never reads bit 2: the engine counts it and its flip is the first collision."""
    c = make_dyck_rnn(4, "fixed:2:0", types=2, depth=2)
    layout = AliceLetters(4, 3, np.array([0, 1, 3]), np.tile([[0, 2]], (3, 1)), np.array([2]))
    reach = explore_model(c.model, layout)
    assert reach.total_inputs == 16 and not reach.injective
    from reductions.search.reachable.analyses import collision_pairs

    x, x2 = next(collision_pairs(reach))
    assert np.nonzero(x != x2)[0].tolist() == [2]
