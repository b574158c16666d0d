"""DISJ -> qSA run as a protocol (SHT Thm 4, §8.7): Alice sends token 2q+1's query, key and value.

Bob's output is checked bit for bit against the unsplit unit at every row-2q+1 output, over all
(x, y) for q <= 4 and on random inputs at larger q; the message length against the formula
``H (2 d_k + d_v) P`` computed here from the model's own sizes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import cli
from commcomp.bits import BitRows
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.precision import parse_precision
from commcomp.protocol import ALICE, BOB
from models.constructions.qsa import QSARandomUnit, make_qsa_moment_curve, make_qsa_random_keys
from models.registry import build_model
from reductions.registry import get_reduction
from reductions.simulate import RowAttentionSplit, TransformerSplit, prepare, run_batch, simulate, verify
from reductions.search.witness import find_witness

PRECISIONS = ["fixed:4:2", "fixed:8:4", "fixed:16:8", "float16", "bfloat16", "float32", "float64"]


def bits_formula(model, precision) -> int:
    """``H (2 d_k + d_v) P``: one query, one key, one value per head, P bits a number."""
    P = parse_precision(precision).bits if precision is not None else 64
    return model.n_heads * (2 * model.d_k + model.d_v) * P


def all_instances(q):
    from commcomp.problems import get_problem

    prob = get_problem("disjointness")
    xs, ys = prob.alice_inputs(q), prob.bob_inputs(q)
    return np.repeat(xs, len(ys), axis=0), np.tile(ys, (len(xs), 1))


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("q", [1, 2, 3, 4])
def test_all_inputs_construction_and_random_unit(q, precision):
    # C7a (the default construction): faithful and correct on every (x, y), at every precision
    out = verify("qsa", "transformer", q, precision, weights="construction", exhaustive=True)
    sim = prepare("qsa", "transformer", q, precision, weights="construction")
    assert isinstance(sim.split, RowAttentionSplit)
    assert out["instances"] == 4 ** q and out["faithful"] == 1.0 and out["correct"] == 1.0
    P = sim.precision.bits
    assert out["bits_per_message"] == bits_formula(sim.model, precision) == (2 * (2 * q + 1) + 2) * P
    assert out["protocol_rounds"] == 1 and out["lower_bound_bits"] == q and out["theorem"] == "SHT-qSA-LB"
    assert out["distinct_messages"] == 2 ** q  # one message per x: the pointer set's indicator
    assert out["bits_per_message"] >= out["lower_bound_bits"]
    # C7b and a random unit: faithful everywhere (C7b needs far more precision to be correct)
    c7b = make_qsa_moment_curve(q, precision).model
    out = verify("qsa", n=q, model=c7b, exhaustive=True)
    assert out["faithful"] == 1.0 and out["bits_per_message"] == bits_formula(c7b, precision)
    out = verify("qsa", "transformer", q, precision, width=3, exhaustive=True, seed=q)
    assert out["faithful"] == 1.0 and out["bits_per_message"] == (2 * 3 + 2) * parse_precision(precision).bits


@pytest.mark.parametrize("q, precision, heads, width", [(24, "fixed:16:8", 1, 5), (20, "float32", 2, 4),
                                                        (16, "bfloat16", 3, 2)])
def test_random_inputs_at_larger_q(q, precision, heads, width):
    out = verify("qsa", "transformer", q, precision, weights="construction", instances=300, seed=1)
    assert out["faithful"] == 1.0 and out["correct"] == 1.0
    out = verify("qsa", "transformer", q, precision, width=width, heads=heads, instances=300, seed=2)
    assert out["faithful"] == 1.0 and out["heads"] == heads
    assert out["bits_per_message"] == heads * (2 * width + 2) * parse_precision(precision).bits
    c7b = make_qsa_moment_curve(12, None).model  # float64 reference mode: float64 codes
    out = verify("qsa", n=12, model=c7b, instances=100, seed=3)
    assert out["faithful"] == 1.0 and out["bits_per_message"] == (2 * 25 + 2) * 64


def test_message_holds_the_rounded_q_k_v_and_bob_sees_only_bits():
    sim = prepare("qsa", "transformer", 4, "fixed:6:3", width=3, heads=2, seed=5)
    x, y = all_instances(4)
    views = []
    res = run_batch(sim, x, y, observe=lambda party, view: views.append((party, view)))
    (msg,) = res.transcript.messages
    assert (msg.sender, msg.receiver, len(msg.rows)) == (ALICE, BOB, 2 * (2 * 3 + 2) * 6)
    assert res.faithful.all() and res.exact
    # the numbers are the unit's own q, k, v of row 2q = 8, rounded at fixed:6:3
    q, k, v = sim.model.row_qkv(res.encoded.task_batch.features, [8])
    sent = sim.precision.decode_rows(msg.rows.array)
    np.testing.assert_array_equal(sent, np.concatenate([a.reshape(len(x), -1) for a in (q, k, v)], axis=1))
    # each party's view: its own rows only; Bob receives nothing but bit strings
    for party, view in views:
        rows = view.own_input["positions"]
        if party == ALICE:
            assert rows.tolist() == [8] and view.received == ()
        else:
            assert 8 not in rows.tolist() and view.own_input["features"].shape[1] == 8
            assert all(isinstance(r, BitRows) for r in view.received)
    # Alice's message is a function of x alone
    by_x = {}
    for xi, m in zip(map(bytes, x), np.packbits(msg.rows.array, axis=1)):
        assert by_x.setdefault(xi, m.tobytes()) == m.tobytes()


@pytest.mark.parametrize("make", [make_qsa_random_keys, make_qsa_moment_curve])
@pytest.mark.parametrize("precision", ["fixed:8:4", "float16", "float32"])
def test_output_rows_is_forward_all_bit_for_bit(make, precision):
    # the split's reference (output_rows, a fixed summation order) equals the unit's own
    # forward_all at every rounded precision, over all inputs
    red = get_reduction("qsa")
    for q in (1, 2, 3, 4):
        feats = red.encode(*all_instances(q), q).task_batch.features
        model = make(q, precision).model
        a, b = model.forward_all(feats)[:, 2 * q], model.output_rows(feats, [2 * q])[:, 0]
        np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))
    unrounded = make(3, None).model  # float64 reference mode: the two orders differ in the last bits only
    feats = red.encode(*all_instances(3), 3).task_batch.features
    np.testing.assert_allclose(unrounded.forward_all(feats)[:, 6], unrounded.output_rows(feats, [6])[:, 0],
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", [make_qsa_random_keys(5, "float32").model,
                                   QSARandomUnit(2, 5, width=4, heads=2, precision="bfloat16", seed=1)])
def test_row_qkv_is_row_local(model):
    red = get_reduction("qsa")
    from commcomp.problems import get_problem

    x, y = get_problem("disjointness").sample(5, 37, np.random.default_rng(0))
    feats = red.encode(x, y, 5).task_batch.features
    whole = model.row_qkv(feats)
    for rows in ([10], [0, 3, 10], list(range(10))):
        for part, full in zip(model.row_qkv(feats, rows), whole):
            np.testing.assert_array_equal(part.view(np.uint64), full[:, rows].view(np.uint64))
    for part, full in zip(model.row_qkv(feats[:1]), whole):  # a batch of one
        np.testing.assert_array_equal(part.view(np.uint64), full[:1].view(np.uint64))


def test_refusals_kept_for_unsplittable_models():
    with pytest.raises(UnsupportedSplitError):
        prepare("qsa", "gru", 3, "fixed:8:4")
    with pytest.raises(UnsupportedSplitError, match="2-layer"):
        prepare("qsa", "transformer", 3, "fixed:8:4", layers=2)
    token_tf = build_model("transformer", vocab_size=20, width=2, n_outputs=2, precision="fixed:8:4")
    with pytest.raises(UnsupportedSplitError, match="Alice's"):  # a token Transformer read at Alice's row
        prepare("qsa", n=3, model=token_tf)
    with pytest.raises(UnsupportedSplitError, match="Alice's"):
        TransformerSplit(token_tf, get_reduction("qsa"), 3)
    with pytest.raises(InvalidParameterError, match="N = 7"):  # a unit built for q = 2, used at q = 3
        RowAttentionSplit(make_qsa_random_keys(2, "fixed:8:4").model, get_reduction("qsa"), 3)


def test_simulate_json_and_cli(capsys):
    out = simulate("qsa", "transformer", 3, "fixed:8:4", weights="construction", x="101", y="011")
    (rnd,) = out["rounds"]
    assert rnd["bits"] == out["bits_sent"] == 128 and len(rnd["hex"]) == 32
    assert [r["name"] for r in rnd["numbers"]] == ["q@6.h0", "k@6.h0", "v@6.h0"]
    assert rnd["numbers"][0]["values"] == [0, 1, 1, 0, 0, 1, 0]  # pointers 2i + x_i of x = 101
    assert out["faithful"] and out["correct"] and not out["truth"] and out["width"] == 7
    assert out["owners"]["alice"] == [6] and out["model_output"] == out["protocol_output"]
    assert cli.main(["simulate", "qsa", "--arch", "transformer", "--n", "3", "--precision", "fixed:8:4",
                     "--weights", "construction", "--x", "101", "--y", "011"]) == 0
    text, _ = capsys.readouterr()
    assert "q, k, v" in text and rnd["hex"] in text and "bit for bit" in text and "Alice's at [6]" in text
    assert cli.main(["verify", "qsa", "--arch", "transformer", "--n", "3", "--precision", "fixed:6:3",
                     "--exhaustive", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert data["faithful"] == 1.0 and data["instances"] == 64 and data["bits_per_message"] == (2 * 4 + 2) * 6
    assert data["split_kind"] == "attention-row"


def test_witness_finds_a_collision_or_says_none():
    # 12 bits (q, k, v of width 1, d' = 2 at 3 bits) against D(DISJ_12) = 12: x's collide
    w = find_witness("qsa", "transformer", 12, "fixed:3:1", width=1)
    assert w["found"] and w["bits_per_message"] == 12 and w["outputs_identical"]
    assert w["model_answer_x"] == w["model_answer_x_prime"] and w["truth_x"] != w["truth_x_prime"]
    # C7a sends the pointer set's indicator: every x its own message, so nothing to find
    w = find_witness("qsa", "transformer", 3, "fixed:8:4", weights="construction")
    assert not w["found"] and w["tried"] == 8 and w["complete"] and "proved" in w["note"]
    assert cli.main(["witness", "qsa", "--arch", "transformer", "--n", "4", "--precision", "fixed:4:2",
                     "--width", "1", "--format", "json"]) == 0


def test_separations_reports_the_simulation():
    from reductions.separations import separations

    (row,) = separations(n=4, precision="fixed:16:8", instances=8, tasks=["qsa"], archs=["transformer-1"])
    assert row.protocol_faithful == 1.0 and row.protocol_bits == (2 * 4 + 2) * 16
    assert row.protocol_lower_bound_bits == 4 and row.protocol_theorem == "SHT-qSA-LB"
    assert "query, key and value" in row.protocol_note and row.confirmed
