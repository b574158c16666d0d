"""Recurrent models as one-way protocols: faithful over all inputs, exact cost, Bob's view, prefix tree."""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.architectures import state_numbers
from commcomp.errors import UnsupportedSplitError
from commcomp.precision import parse_precision
from commcomp.protocol import ALICE, BOB
from models.registry import build_model
from reductions.base import ALICE as A_OWNS, BOB as B_OWNS
from reductions.simulate import (RecurrentSplit, prefix_tree_run, prepare, run_batch, run_blocks,
                                 split_point, verify)
from reductions.simulate.batch import exhaustive_batches

RECURRENT = ["elman", "lstm", "gru", "linear-attention", "retnet", "dss", "mamba"]
SMALL = {"dss": {"d_state": 4}, "mamba": {"d_state": 4, "d_conv": 3}}  # keep the states small


def _model(arch, vocab, classes, width=2, layers=1, precision="fixed:8:4", seed=0):
    return build_model(arch, vocab_size=vocab, width=width, n_outputs=classes, layers=layers,
                       precision=precision, seed=seed, **SMALL.get(arch, {}))


@pytest.mark.parametrize("arch", RECURRENT)
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("precision", ["fixed:4:2", "fixed:8:4", "float16", "float32"])
def test_faithful_over_all_inputs_and_exact_cost(arch, layers, precision):
    n = 4  # INDEX -> Index Lookup: 16 x 4 instances
    model = _model(arch, 2 + n, 2, layers=layers, precision=precision, seed=layers)
    out = verify("index-lookup", n=n, model=model, exhaustive=True, method="plain")
    assert out["instances"] == 2 ** n * n and out["exhaustive"]
    assert out["faithful"] == 1.0 and out["faithful_count"] == out["instances"]
    assert out["correct_count"] == out["model_correct_count"]  # faithful, so the same answers
    bits = parse_precision(precision).bits
    assert out["bits_per_message"] == model.state_numbers() * bits
    assert out["bits_per_message"] == state_numbers(arch, 2, layers=layers, **SMALL.get(arch, {})) * bits
    assert 1 <= out["distinct_messages"] <= 2 ** n
    assert out["lower_bound_bits"] == n and out["theorem"] == "BHBK-IL-RNN"


@pytest.mark.parametrize("task", ["string-equality", "string-disjointness", "multi-index-lookup", "mqar",
                                  "nearest-neighbour", "istree", "match2", "match3"])
def test_every_prefix_suffix_reduction_is_faithful(task):
    out = verify(task, "gru", 3, "fixed:6:3", width=3, layers=2, exhaustive=True)
    assert out["faithful"] == 1.0, out
    assert out["bits_per_message"] == 2 * 3 * 6


def test_mqar_with_many_queries_reads_every_output():
    sim = prepare("mqar", "lstm", 3, "fixed:8:4", width=2, problem="disjointness")
    x, y = sim.problem.sample(3, 16, np.random.default_rng(1))
    res = run_batch(sim, x, y)
    assert res.protocol.logits.shape == (16, 4, sim.model.n_outputs)  # n + 1 read positions
    assert res.faithful.all()


def test_messages_are_the_state_codes():
    sim = prepare("index-lookup", "lstm", 5, "fixed:6:2", width=3, seed=4)
    x, y = sim.problem.sample(5, 8, np.random.default_rng(0))
    res = run_batch(sim, x, y)
    (msg,) = res.transcript.messages
    assert (msg.sender, msg.receiver, len(msg.rows)) == (ALICE, BOB, 2 * 3 * 6)
    state = sim.model.run(res.encoded.tokens[:, :5])  # Alice's prefix, run independently
    assert msg.rows == sim.model.state_to_bits(state)
    assert res.bits_sent == 36


def test_bob_sees_only_his_positions_and_the_message():
    sim = prepare("istree", "elman", 3, "fixed:8:4", width=2)
    owners = sim.split.owners
    x, y = sim.problem.sample(3, 6, np.random.default_rng(2))
    views = []
    res = run_batch(sim, x, y, observe=lambda party, view: views.append((party, view)))
    (alice_party, alice_view), (bob_party, bob_view) = views
    assert (alice_party, bob_party) == (ALICE, BOB)
    bob_pos = bob_view.own_input["positions"]
    assert not np.any(owners[bob_pos] == A_OWNS)  # none of Alice's positions
    assert set(bob_view.own_input) == {"positions", "tokens", "y"}
    np.testing.assert_array_equal(bob_view.own_input["tokens"].reshape(6, -1), res.encoded.tokens[:, bob_pos])
    assert len(bob_view.received) == 1 and len(bob_view.received[0]) == sim.bits_per_message
    assert not bob_view.own_input["tokens"].flags.writeable
    assert not np.any(owners[alice_view.own_input["positions"]] == B_OWNS)
    assert "y" not in alice_view.own_input


def test_bob_output_depends_only_on_his_input_and_the_message():
    """Two batches that differ at Alice's positions but send the same message: Bob answers the same."""
    sim = prepare("index-lookup", "gru", 6, "fixed:3:1", width=1, seed=0)
    xs = sim.problem.alice_inputs(6)
    bits = sim.model.state_to_bits(sim.model.run(xs.astype(np.int64))).array
    _, first, inverse = np.unique(bits, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    pair = next(i for i in range(len(xs)) if first[inverse[i]] != i)  # a collision exists: 3 bits < 6
    a, b = xs[first[inverse[pair]]], xs[pair]
    y = np.arange(6)
    res = run_batch(sim, np.repeat([a, b], 6, axis=0), np.tile(y, 2))
    np.testing.assert_array_equal(res.protocol.logits[:6], res.protocol.logits[6:])


def test_chain_of_thought_is_generated_by_bob_from_the_state():
    out = verify("istree", "lstm", 3, "fixed:8:4", width=3, cot=True, exhaustive=True)
    assert out["faithful"] == 1.0 and out["instances"] == 64
    sim = prepare("istree", "gru", 3, "fixed:8:4", width=3, cot=True, layers=2)
    x, y = sim.problem.sample(3, 8, np.random.default_rng(0))
    res = run_batch(sim, x, y)
    steps = sim.split.cot.steps
    assert res.protocol.generated.shape == (8, steps) and res.faithful.all()
    np.testing.assert_array_equal(res.protocol.generated, res.reference.generated)


def test_split_point_and_refusals():
    assert split_point([1, 1, 0, 2, 0]) == 2
    assert split_point([0, 0, 2]) == 0
    with pytest.raises(UnsupportedSplitError, match="before Alice"):
        split_point([1, 2, 1])
    with pytest.raises(UnsupportedSplitError, match="interleaved"):
        prepare("dyck", "lstm", 3, "fixed:8:4")
    with pytest.raises(UnsupportedSplitError):
        prepare("qsa", "gru", 3, "fixed:8:4")
    sim = prepare("dyck", "transformer", 2, "fixed:8:4")  # the same reduction splits a 1-layer TF
    with pytest.raises(UnsupportedSplitError, match="before Alice"):
        RecurrentSplit(_model("gru", 5, 2), sim.reduction, 2)


@pytest.mark.parametrize("arch", RECURRENT)
def test_prefix_tree_equals_plain_run(arch):
    rng = np.random.default_rng(7)
    model = _model(arch, 3, 2, width=2, layers=2, precision="float32")
    tokens = rng.integers(0, 3, size=(300, 7))
    tokens[100:150, :4] = tokens[0, :4]  # shared prefixes, and duplicate rows
    tokens[200:210] = tokens[5]
    read = [0, 3, 6]
    s1, y1 = run_blocks(model, tokens, read_at=read)
    s2, y2 = prefix_tree_run(model, tokens, read_at=read)
    for k in s1:
        np.testing.assert_array_equal(np.asarray(s1[k]), np.asarray(s2[k]))
    for t in read:
        np.testing.assert_array_equal(np.asarray(y1[t]), np.asarray(y2[t]))


def test_prefix_tree_exhaustive_equals_plain_exhaustive():
    kw = dict(width=3, layers=2, exhaustive=True, seed=3)
    tree = verify("index-lookup", "lstm", 7, "fixed:8:4", method="prefix-tree", rows=200, **kw)
    plain = verify("index-lookup", "lstm", 7, "fixed:8:4", method="plain", rows=200, **kw)
    for key in ("instances", "faithful", "correct_count", "model_correct_count", "distinct_messages",
                "bits_per_message"):
        assert tree[key] == plain[key], key
    sim = prepare("index-lookup", "mamba", 5, "float32", width=2)
    x, y = next(exhaustive_batches(sim.problem, 5, 10 ** 6))
    a = run_batch(sim, x, y, alice_runner="prefix-tree", reference_runner="prefix-tree", group=5)
    b = run_batch(sim, x, y)
    np.testing.assert_array_equal(a.reference.logits, b.reference.logits)
    np.testing.assert_array_equal(a.protocol.final_state, b.protocol.final_state)
    assert a.transcript.messages[0].rows.batch == 32 and b.transcript.messages[0].rows.batch == 160


def test_random_instances_and_long_sequences_in_blocks():
    out = verify("index-lookup", "gru", 300, "bfloat16", width=4, instances=64, rows=40)
    assert out["instances"] == 64 and out["faithful"] == 1.0 and not out["exhaustive"]
    assert out["bits_per_message"] == 4 * 16 and out["lower_bound_bits"] == 300
