"""L-layer Transformers (L >= 2) under a partition: rows per layer, bit for bit, exact costs, tampering."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.protocol import ALICE, BOB, run_protocol
from commcomp.protocol.owners import Owner
from models.registry import build_model
from reductions.registry import get_reduction
from reductions.simulate import prepare, run_batch, verify
from reductions.simulate.deep_transformer import DeepTransformerSplit
from reductions.simulate.registry import split_class


def _positions_sent_by_loop(owners, read, layers: int, causal: bool) -> list[int]:
    """Per layer, the positions whose keys and values the protocol must send, counted pair by pair
    with plain loops (independent of ``plan_messages``): at layer l < L - 1 every row is computed by
    whoever can; at the top layer Bob computes the read rows; a position computed by one party and
    attended by a row the other computes is sent once per layer."""
    N = len(owners)
    comp = []
    for p, o in enumerate(owners):
        before = owners[:p]
        if o != Owner.PUBLIC:
            comp.append(int(o))
        elif causal and all(b == Owner.PUBLIC for b in before):
            comp.append(0)  # both compute it
        elif causal and not any(owners[q] == Owner.BOB or q in read for q in range(p + 1)):
            comp.append(int(Owner.ALICE))  # a public row no row of Bob's (nor a read row) precedes
        else:
            comp.append(0 if all(b == Owner.PUBLIC for b in owners) else int(Owner.BOB))
    per_layer = []
    for layer in range(layers):
        total = 0
        for receiver in (Owner.ALICE, Owner.BOB):
            sender = Owner.BOB if receiver == Owner.ALICE else Owner.ALICE
            if layer == layers - 1:
                computed = list(read) if receiver == Owner.BOB else []
            else:
                computed = [i for i in range(N) if comp[i] == receiver]
            sent = set()
            for i in computed:
                for j in range(N):
                    if comp[j] == sender and (j <= i or not causal):
                        sent.add(j)
            total += len(sent)
        per_layer.append(total)
    return per_layer


@pytest.mark.parametrize("task,n", [("string-equality", 3), ("string-disjointness", 3), ("index-lookup", 4),
                                    ("dyck", 2), ("induction-heads", 3), ("mqar", 3),
                                    ("multi-index-lookup", 2), ("copy", 3)])
@pytest.mark.parametrize("precision,P", [("fixed:8:4", 8), ("bfloat16", 16), ("float32", 32)])
@pytest.mark.parametrize("causal", [True, False])
def test_every_input_bit_for_bit_and_cost_is_the_rows_sent(task, n, precision, P, causal):
    """Random 2-layer models, every (x, y): Bob's logits equal the unsplit forward pass bit for bit,
    and the bits sent are d · P · (rows counted pair by pair)."""
    width = 3
    red = get_reduction(task)
    model = build_model("transformer", vocab_size=red.task.vocab_size(red.task_size(n)), width=width,
                        n_outputs=red.answer_classes(n), layers=2, heads=2, precision=precision, seed=5,
                        causal=causal)
    out = verify(task, n=n, model=model, exhaustive=True)
    assert out["faithful"] == 1.0 and out["faithful_count"] == out["instances"] > 0
    split = prepare(task, n=n, model=model).split
    sent = _positions_sent_by_loop(split.owners.tolist(), split.read.tolist(), 2, causal)
    assert not model.shares_first_keys(split.length)  # random token embeddings: every key depends on its token
    H, d_k, d_v = 2, width, width
    assert out["bits_per_message"] == split.bits_per_instance == split.message_bits_formula() == \
        sum(sent) * H * (d_k + d_v) * P


@pytest.mark.parametrize("layer_norm", [False, "pre", "post"])
@pytest.mark.parametrize("layers", [2, 3])
def test_random_instances_at_larger_n(layer_norm, layers):
    model = build_model("transformer", vocab_size=4, width=4, n_outputs=2, layers=layers, heads=2,
                        precision="bfloat16", seed=layers, layer_norm=layer_norm)
    out = verify("string-equality", n=40, model=model, instances=24, seed=1)
    assert out["faithful"] == 1.0 and out["instances"] == 24
    # causal, Alice's prefix of s = 40 positions, Bob's suffix: one message of L · s · H (d_k + d_v) · P bits
    assert out["protocol_rounds"] == 1 and out["bits_per_message"] == layers * 40 * 2 * (4 + 4) * 16


def test_prefix_suffix_causal_is_one_message_of_every_layer():
    sim = prepare("string-equality", "transformer", 5, "fixed:8:4", width=2, layers=3, heads=1)
    assert isinstance(sim.split, DeepTransformerSplit) and sim.split.rounds == 1
    (m,) = sim.split.messages
    assert (m.sender, m.receiver, m.label, m.bits) == (ALICE, BOB, "keys and values of layers 0, 1, 2",
                                                       3 * 5 * 1 * (2 + 2) * 8)


def test_bidirectional_plan_for_a_non_causal_model():
    model = build_model("transformer", vocab_size=3, width=2, n_outputs=2, layers=2, heads=1,
                        precision="fixed:8:4", seed=0, causal=False)
    sim = prepare("string-equality", n=3, model=model)
    assert [(m.sender, m.receiver) for m in sim.split.messages] == [(ALICE, BOB), (BOB, ALICE), (ALICE, BOB)]
    assert sim.split.lower_bound().bits == 3  # EQ_3, Bob alone learns it: D - 1 = n


@pytest.mark.parametrize("task,construction,n", [
    ("string-equality", "string-equality-2tf", 4), ("string-disjointness", "string-disjointness-2tf", 4),
    ("dyck", "dyck-2tf", 2), ("function-composition", "composition-2tf", 2)])
def test_the_claims_constructions_split_bit_for_bit_on_every_input(task, construction, n):
    out = verify(task, "transformer", n, "bfloat16", weights="construction", layers=2, exhaustive=True)
    assert out["faithful"] == 1.0 and out["correct"] == 1.0 and out["instances"] > 0
    assert out["bits_per_message"] >= out["lower_bound_bits"]


@pytest.mark.parametrize("task,construction,n", [
    ("string-equality", "string-equality-2tf", 60), ("string-disjointness", "string-disjointness-2tf", 60),
    ("dyck", "dyck-2tf", 12), ("function-composition", "composition-2tf", 30)])
def test_the_claims_constructions_on_random_inputs_at_larger_n(task, construction, n):
    out = verify(task, "transformer", n, "bfloat16", weights="construction", layers=2, instances=8, seed=3)
    assert out["faithful"] == 1.0 and out["instances"] == 8
    sim = prepare(task, "transformer", n, "bfloat16", weights="construction", layers=2)
    assert sim.model.n_layers == 2 and type(sim.split) is DeepTransformerSplit


def _run_with(sim, x, y, tamper):
    """Run the split's protocol with each message passed through ``tamper(index, bits)``."""
    batch = run_batch(sim, x, y)
    sink = {}
    protocol = sim.split.protocol(sink=sink)

    def wrap(i, step):
        return dataclasses.replace(step, send=lambda view: tamper(i, step.send(view)))

    protocol = dataclasses.replace(protocol, steps=tuple(wrap(i, s) for i, s in enumerate(protocol.steps)))
    alice, bob, public = sim.split.party_inputs(batch.encoded, y)
    run_protocol(protocol, alice, bob, public)
    return batch, sink["bob"]


def test_bob_reads_the_message_a_tampered_one_changes_his_logits():
    sim = prepare("string-equality", "transformer", 6, "bfloat16", weights="construction", layers=2)
    x, y = sim.problem.sample(6, 16, np.random.default_rng(0))
    batch, honest = _run_with(sim, x, y, lambda i, rows: rows)
    np.testing.assert_array_equal(honest.logits, batch.reference.logits)
    from commcomp.bits import BitRows

    flipped_batch, flipped = _run_with(sim, x, y, lambda i, rows: BitRows(1 - np.asarray(rows.array)))
    assert not np.array_equal(flipped.logits, batch.reference.logits)
    # Bob's output depends on Alice's input only through the message: x's message with x' = x[::-1]
    # rows gives exactly the unsplit model on (x', y)
    other = run_batch(sim, x[::-1], y)
    swapped = {}

    def swap(i, rows):
        swapped.setdefault(i, rows)
        return other.transcript.messages[i].rows

    _, mixed = _run_with(sim, x, y, swap)
    np.testing.assert_array_equal(mixed.logits, other.reference.logits)


def test_an_output_read_at_alices_position_is_refused():
    model = build_model("transformer", vocab_size=3, width=2, n_outputs=2, layers=2, precision="fixed:8:4")
    red = get_reduction("string-equality")
    fake = dataclasses.replace(red, read_positions=lambda n: [0])  # position 0 is Alice's
    with pytest.raises(UnsupportedSplitError, match="Alice's; Bob computes the top layer") as err:
        DeepTransformerSplit(model, fake, 3)
    assert "\n" not in str(err.value)
    with pytest.raises(UnsupportedSplitError, match="2-layer model is not simulated for qsa"):
        prepare("qsa", "transformer", 3, "fixed:8:4", layers=2)


def test_registry_routes_by_depth_and_refusals_are_one_line():
    assert split_class("transformer", layers=1).__name__ == "TransformerSplit"
    assert split_class("transformer", layers=2) is DeepTransformerSplit
    one = build_model("transformer", vocab_size=3, width=2, n_outputs=2, layers=1, precision="fixed:8:4")
    assert type(prepare("string-equality", n=3, model=one).split).__name__ == "TransformerSplit"
    red = prepare("string-equality", "lstm", 3, "fixed:8:4").reduction
    with pytest.raises(UnsupportedSplitError, match="2 layers or more") as err:
        DeepTransformerSplit(one, red, 3)
    assert "\n" not in str(err.value)
    two = build_model("transformer", vocab_size=9, width=2, n_outputs=9, layers=2, precision="fixed:8:4")
    with pytest.raises(InvalidParameterError, match="chain of thought") as err:
        DeepTransformerSplit(two, prepare("istree", "lstm", 3, "fixed:8:4", cot=True).reduction, 3, cot=True)
    assert "\n" not in str(err.value)


def test_the_split_runs_on_an_array_api_namespace_bit_for_bit():
    pytest.importorskip("array_api_strict")
    host = verify("string-equality", "transformer", 3, "fixed:8:4", width=2, layers=2, exhaustive=True)
    strict = verify("string-equality", "transformer", 3, "fixed:8:4", width=2, layers=2, exhaustive=True,
                    backend="array_api_strict")
    assert strict["faithful"] == host["faithful"] == 1.0
    assert strict["bits_per_message"] == host["bits_per_message"] == 2 * 3 * 1 * (2 + 2) * 8
