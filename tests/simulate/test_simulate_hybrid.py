"""The hybrid split (reductions/simulate/hybrid.py): bit for bit against the unsplit model on every input."""

import math

import numpy as np
import pytest

from commcomp.errors import UnsupportedSplitError
from commcomp.protocol import ALICE, BOB
from models.registry import build_model
from reductions.registry import get_reduction
from reductions.simulate import verify
from reductions.simulate.api import simulate
from reductions.simulate.setup import prepare


def _expected_bits(model, precision_bits, N, reads=1):
    """S(m)·p + R·H·d_k·p + R·H·(d_v + 1)·(p + ceil(log2 N)), from the model's own arrays."""
    state_numbers = sum(int(np.prod(v.shape[1:])) for v in model.stack.init_state(1).values())
    H, d_k, d_v = model.n_heads, model.d_k, model.d_v
    return (state_numbers * precision_bits + reads * H * d_k * precision_bits
            + reads * H * (d_v + 1) * (precision_bits + math.ceil(math.log2(N))))


@pytest.mark.parametrize("task,n", [("string-equality", 3), ("string-disjointness", 3), ("match3", 3),
                                    ("index-lookup", 4), ("istree", 2), ("multi-index-lookup", 2)])
@pytest.mark.parametrize("precision", ["fixed:8:4", "float32"])
def test_every_input_bit_for_bit_mamba_stack(task, n, precision):
    out = verify(task, "hybrid", n, precision, width=3, heads=2, exhaustive=True, seed=1)
    sim = prepare(task, "hybrid", n, precision, width=3, heads=2, seed=1)
    assert out["exact"] and out["faithful"] == 1.0 and out["protocol_rounds"] == 3
    reads = len(get_reduction(task).output_positions(n))
    assert out["bits_per_message"] == _expected_bits(sim.model, sim.precision.bits, sim.split.length, reads)
    assert out["instances"] == len(sim.problem.alice_inputs(n)) * len(sim.problem.bob_inputs(n))


@pytest.mark.parametrize("recurrent", ["elman", "gru", "lstm"])
def test_other_recurrent_stacks_and_two_layers(recurrent):
    red = get_reduction("string-disjointness")
    model = build_model("hybrid", vocab_size=red.task.vocab_size(3), width=3, n_outputs=2, layers=2, heads=2,
                        precision="fixed:10:5", recurrent=recurrent, seed=3)
    out = verify("string-disjointness", n=3, model=model, exhaustive=True)
    assert out["faithful"] == 1.0 and out["instances"] == 64
    assert out["bits_per_message"] == _expected_bits(model, 10, red.length(3))


def test_the_check_can_fail_when_alice_leaves_out_a_position(monkeypatch):
    sim = prepare("string-equality", "hybrid", 3, "fixed:8:4", width=3, heads=1, seed=2)
    real = sim.model.partial

    def short(x, positions, query, o):  # Alice "forgets" her first position (forward passes None: all)
        if positions is not None and np.asarray(positions).size and np.asarray(positions)[0] == 0:
            positions = np.asarray(positions)[1:]
        return real(x, positions, query, o)

    monkeypatch.setattr(sim.model, "partial", short)
    out = verify("string-equality", n=3, model=sim.model, exhaustive=True)
    assert out["faithful"] < 1.0


def test_each_party_sees_only_its_own_positions():
    sim = prepare("string-disjointness", "hybrid", 3, "fixed:8:4", width=2)
    red = sim.reduction
    x, y = sim.problem.sample(3, 4, np.random.default_rng(0))
    alice, bob, public = sim.split.party_inputs(red.encode(x, y, 3), y)
    owners = red.owners(3)
    assert not set(alice["positions"]) & set(np.nonzero(owners == 2)[0])   # no Bob position for Alice
    assert not set(bob["positions"]) & set(np.nonzero(owners == 1)[0])     # no Alice position for Bob
    views = []
    from reductions.simulate.batch import run_batch

    run_batch(sim, x, y, observe=lambda party, view: views.append((party, view)))
    assert [p for p, _ in views] == [ALICE, BOB, ALICE, BOB]
    assert [len(v.received) for _, v in views] == [0, 1, 1, 2]


def test_lower_bound_is_the_one_for_three_messages_and_cot_is_refused():
    sim = prepare("string-equality", "hybrid", 5, "fixed:8:4", width=2)
    assert sim.lower_bound_bits == 5              # D(EQ_5) - 1: Bob alone learns the answer
    assert sim.theorem == "COMMCOMP-HYBRID-EQ"
    with pytest.raises(UnsupportedSplitError, match="generated token"):
        prepare("istree", "hybrid", 2, "fixed:8:4", width=2, cot=True)
    with pytest.raises(UnsupportedSplitError, match="prefix"):
        prepare("dyck", "hybrid", 2, "fixed:8:4", width=2)


def test_simulate_one_instance_reports_three_messages():
    out = simulate("string-equality", "hybrid", 4, "fixed:8:4", width=2, x="1011", y="1011")
    assert [r["label"] for r in out["rounds"]] == ["state", "query", "partial sums"]
    assert out["faithful"] is True and out["truth"] is True
    assert sum(r["bits"] for r in out["rounds"]) == out["bits_per_message"]
