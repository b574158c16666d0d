"""Batch-shape invariance: the same state and token step to the same bits whatever batch they sit in.

Merging states across a search is sound only under this property (DESIGN §3); the engine's
fixed row blocks are what provide it, and these tests prove it on every recurrent architecture,
at fixed-point and IEEE formats: the same rows are stepped alone, in a full block, at other
offsets, beside other companions, and across a block boundary, and must agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.registry import build_model
from reductions.search.reachable.stepping import ROWS, canonical, state_rows_numpy, step_rows
from reductions.simulate.running import take_rows

ARCHS = ["elman", "lstm", "gru", "linear-attention", "retnet", "dss", "mamba"]
FORMATS = ["fixed:8:4", "float16", "float32", None]  # None: float64, never rounded (the strictest)


def _bits(state):
    return state_rows_numpy(state).view(np.uint64)


def _states(model, rows, rng, steps=6):
    """``rows`` states reached by random token sequences (what a search meets)."""
    tokens = rng.integers(0, model.vocab_size, size=(rows, steps))
    return step_rows(model, model.init_state(rows), tokens[:, 0]) if steps == 1 else \
        _run(model, tokens)


def _run(model, tokens):
    state = model.init_state(tokens.shape[0])
    for t in range(tokens.shape[1]):
        state = step_rows(model, state, tokens[:, t])
    return state


@pytest.mark.parametrize("precision", FORMATS)
@pytest.mark.parametrize("arch", ARCHS)
def test_a_state_steps_to_the_same_bits_in_any_batch(arch, precision):
    rng = np.random.default_rng(7)
    model = build_model(arch, vocab_size=3, width=6, n_outputs=2, precision=precision, seed=3)
    _, pool = canonical(model, _states(model, ROWS + 40, rng))  # (ROWS + 40) decoded states
    probe = np.arange(5)  # the rows followed through every batch
    tok = rng.integers(0, 3, size=ROWS + 40)
    reference = _bits(step_rows(model, take_rows(pool, probe), tok[probe]))  # a batch of 5 (padded)
    batches = [
        np.arange(ROWS + 40),                                          # across a block boundary
        np.concatenate([np.arange(ROWS - 2, ROWS + 40), probe]),       # at the end, other companions
        np.concatenate([rng.permutation(np.arange(5, ROWS + 40))[:ROWS - 3], probe]),  # a full block
        np.concatenate([np.arange(5, 9), probe[::-1]]),                # reversed, small batch
    ] + [np.array([p]) for p in probe]  # alone: a plain batch of one takes numpy's gemv path
    for rows in batches:
        got = _bits(step_rows(model, take_rows(pool, rows), tok[rows]))
        for p in probe:
            where = np.nonzero(rows == p)[0]
            for at in where:
                np.testing.assert_array_equal(got[at], reference[p], err_msg=f"{arch} row {p} at {at}")


def test_canonical_merges_exactly_equal_messages():
    model = build_model("gru", vocab_size=2, width=3, n_outputs=2, precision="fixed:4:2", seed=0)
    state = _run(model, np.array([[0, 1, 1], [1, 1, 1], [0, 1, 1], [1, 0, 0]]))
    keys, decoded = canonical(model, state)
    bits = model.state_to_bits(state).array
    assert np.array_equal(np.unpackbits(keys, axis=1)[:, :bits.shape[1]], bits)
    np.testing.assert_array_equal(model.state_to_bits(decoded).array, bits)  # decode, re-encode: same
    assert np.array_equal(keys[0], keys[2])


def test_exploration_runs_on_another_array_namespace():
    """The steps and the state arrays stay in the model's namespace (array-api-strict here); the
    merging of messages runs on the host (np.unique over the packed bits)."""
    xp = pytest.importorskip("array_api_strict")
    from reductions.search.reachable.engine import explore
    from reductions.simulate.setup import prepare

    sim = prepare("index-lookup", "gru", 9, "fixed:6:3", width=3, seed=0)
    strict = prepare("index-lookup", n=9, model=sim.model.to_namespace(xp))
    a, b = explore(sim), explore(strict)
    assert a.sizes == b.sizes and np.array_equal(a.keys, b.keys)
    assert type(next(iter(b.state.values()))).__module__.startswith("array_api_strict")
