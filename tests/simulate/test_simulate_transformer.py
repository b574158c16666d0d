"""1-layer Transformers under a partition: one and two rounds, exact costs, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from commcomp.errors import UnsupportedSplitError
from commcomp.protocol import ALICE, BOB
from models.registry import build_model
from reductions.base import ALICE as A_OWNS
from reductions.simulate import TransformerSplit, prepare, run_batch, simulate, verify


def _costs(H, d, P, N):
    partial = H * (d + 1) * (P + math.ceil(math.log2(N)))
    return partial, H * d * P


@pytest.mark.parametrize("precision,P", [("fixed:8:4", 8), ("fixed:12:6", 12), ("float32", 32),
                                         ("float16", 16)])
@pytest.mark.parametrize("heads", [1, 2])
def test_one_round_over_all_inputs(precision, P, heads):
    """String equality: the output token is public, so Alice knows the query."""
    n, width = 3, 2
    out = verify("string-equality", "transformer", n, precision, width=width, heads=heads, exhaustive=True)
    assert out["protocol_rounds"] == 1 and out["faithful"] == 1.0 and out["instances"] == 64
    partial, _ = _costs(heads, width, P, 2 * n + 1)  # d_k = d_v = width per head
    assert out["bits_per_message"] == partial
    assert out["lower_bound_bits"] == n and out["theorem"] == "BHBK-EQ-1TF"


@pytest.mark.parametrize("precision,P", [("fixed:8:4", 8), ("fixed:6:3", 6), ("float32", 32)])
@pytest.mark.parametrize("heads", [1, 2])
def test_two_rounds_over_all_inputs(precision, P, heads):
    """Index Lookup: the query token is Bob's and changes the query, so Bob sends it first."""
    n, width = 4, 2
    out = verify("index-lookup", "transformer", n, precision, width=width, heads=heads, exhaustive=True)
    assert out["protocol_rounds"] == 2 and out["faithful"] == 1.0 and out["instances"] == 64
    partial, query = _costs(heads, width, P, n + 1)
    assert out["bits_per_message"] == partial + query
    # two-way D(INDEX) = ceil(log2 n) + 1 counts Bob's answer bit; Bob alone learns it here: D - 1
    assert out["lower_bound_bits"] == math.ceil(math.log2(n))


def test_two_round_transcript_and_views():
    sim = prepare("index-lookup", "transformer", 5, "fixed:8:4", width=2, heads=2)
    x, y = sim.problem.sample(5, 7, np.random.default_rng(3))
    views = []
    res = run_batch(sim, x, y, observe=lambda party, view: views.append((party, view)))
    query, reply = res.transcript.messages
    assert (query.sender, query.receiver, reply.sender, reply.receiver) == (BOB, ALICE, ALICE, BOB)
    partial, qbits = _costs(2, 2, 8, 6)
    assert (len(query.rows), len(reply.rows)) == (qbits, partial)
    # Bob's query is the model's query at the output position, rounded to the precision
    q = sim.model.query(res.encoded.tokens[:, 5], 5)
    np.testing.assert_array_equal(sim.precision.decode_rows(query.rows.array).reshape(7, 2, 2), q)
    owners = sim.split.owners
    for party, view in views:
        positions = view.own_input["positions"]
        if party == BOB:
            assert not np.any(owners[positions] == A_OWNS)
        else:
            assert np.all(owners[positions] == A_OWNS)
    assert res.faithful.all()


def test_multiple_read_positions():
    out = verify("multi-index-lookup", "transformer", 2, "fixed:10:5", width=2, exhaustive=True)
    partial, _ = _costs(1, 2, 10, 8)
    assert out["faithful"] == 1.0 and out["bits_per_message"] == 2 * partial


def test_float64_reference_mode_reports_the_difference():
    n = 4
    sim = prepare("index-lookup", "transformer", n, "float64", width=2)
    model = build_model("transformer", vocab_size=sim.model.vocab_size, width=2, n_outputs=2, seed=1,
                        precision=None)
    out = verify("index-lookup", n=n, model=model, exhaustive=True)
    assert out["exact"] is False and out["faithful"] is None
    assert out["max_abs_difference"] < 1e-9
    one = simulate("index-lookup", n=n, model=model, x="0110", y="2")
    assert one["faithful"] is None and one["exact"] is False


def test_refusals():
    # 2 layers or more: the key-value split (tests/simulate/test_simulate_deep_transformer.py)
    assert type(prepare("index-lookup", "transformer", 4, "fixed:8:4", layers=2).split).__name__ == \
        "DeepTransformerSplit"
    with pytest.raises(UnsupportedSplitError, match="prefix"):  # a hybrid splits prefix/suffix only
        prepare("dyck", "hybrid", 4, "fixed:8:4")
    deep = build_model("transformer", vocab_size=6, width=2, n_outputs=2, layers=2, precision="fixed:8:4")
    with pytest.raises(UnsupportedSplitError, match="only a 1-layer Transformer"):
        TransformerSplit(deep, prepare("index-lookup", n=4, model=deep).reduction, 4)
    bare = build_model("hybrid", vocab_size=6, width=2, n_outputs=2, precision="fixed:8:4", recurrent="gru",
                       layer_norm=False)
    with pytest.raises(UnsupportedSplitError, match="pre-norm"):  # no agreed shift without the pre-norm
        prepare("index-lookup", n=4, model=bare)
    # a token Transformer read at Alice's row (qsa's own unit is split by reductions.simulate.qsa)
    token_tf = build_model("transformer", vocab_size=20, width=2, n_outputs=2, precision="fixed:8:4")
    with pytest.raises(UnsupportedSplitError, match="Alice's"):
        prepare("qsa", n=3, model=token_tf)


def test_query_modes():
    sim = prepare("dyck", "transformer", 2, "fixed:8:4", width=2)
    assert isinstance(sim.split, TransformerSplit) and set(sim.split.modes.values()) == {"public"}
    sim = prepare("index-lookup", "transformer", 3, "fixed:8:4", width=2)
    assert sim.split.modes == {3: "bob"}
