"""Exhaustive runs: the grouped prefix-tree reference, fused row blocks, message counting, and a
faithfulness check that still fails when a message is tampered with."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from commcomp.bits import BitRows
from models.registry import build_model
from reductions.simulate import prepare, run_batch, run_blocks
from reductions.simulate.batch import DistinctMessages, exhaustive_batches
from reductions.simulate.running import readout, write_flat

RUNNERS = ["prefix-tree", "plain"]


def _exhaustive_chunk(sim):
    x, y = next(exhaustive_batches(sim.problem, sim.n, 10 ** 6))
    return x, y, len(sim.problem.bob_inputs(sim.n))


class _TamperedSplit:
    """A split whose Alice flips bit ``bit`` of the message of instance (x) ``row``; the rest is the
    real split's (Bob's code, the reference)."""

    def __init__(self, split, row: int, bit: int):
        self._split, self._row, self._bit = split, row, bit

    def __getattr__(self, name):
        return getattr(self._split, name)

    def protocol(self, **kw):
        proto = self._split.protocol(**kw)
        (step,) = proto.steps

        def send(view):
            bits = step.send(view).array.copy()
            bits[self._row, self._bit] ^= 1
            return BitRows(bits)

        return dataclasses.replace(proto, steps=(dataclasses.replace(step, send=send),))


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("arch, precision, bit", [("lstm", "float32", 1), ("gru", "fixed:8:4", 0)])
def test_a_tampered_message_is_unfaithful(runner, arch, precision, bit):
    """One x's message has one bit flipped (float32: the top exponent bit of the first number, so
    the number changes whatever it was; fixed point: its sign bit): exactly that x's instances are
    unfaithful, and the unsplit reference is the same as in the honest run."""
    sim = prepare("index-lookup", arch, 6, precision, width=3, seed=2)
    x, y, G = _exhaustive_chunk(sim)
    honest = run_batch(sim, x, y, alice_runner=runner, reference_runner=runner, group=G)
    assert honest.faithful.all()
    row = 37  # the 38th x
    tampered_sim = dataclasses.replace(sim, split=_TamperedSplit(sim.split, row, bit))
    res = run_batch(tampered_sim, x, y, alice_runner=runner, reference_runner=runner, group=G)
    mine = np.zeros(len(x), dtype=bool)
    mine[row * G:(row + 1) * G] = True
    assert not res.faithful[mine].any()
    assert res.faithful[~mine].all()
    np.testing.assert_array_equal(res.reference.logits, honest.reference.logits)
    np.testing.assert_array_equal(res.reference.final_state, honest.reference.final_state)
    assert (res.protocol.final_state[mine] != honest.protocol.final_state[mine]).any()


@pytest.mark.parametrize("arch", ["lstm", "gru", "mamba"])
def test_grouped_reference_equals_the_plain_pass(arch):
    """The reference over the tree of the x's then each y is the unsplit pass, bit for bit."""
    sim = prepare("index-lookup", arch, 5, "float32", width=2, seed=1)
    x, y, G = _exhaustive_chunk(sim)
    encoded = sim.reduction.encode(x, y, sim.n)
    tree = sim.split.reference(encoded, runner="prefix-tree", group=G)
    plain = sim.split.reference(encoded, runner="plain")
    for field in ("logits", "answers", "final_state"):
        np.testing.assert_array_equal(getattr(tree, field), getattr(plain, field))
    # the state the plain pass leaves, flattened independently
    state, _ = run_blocks(sim.model, encoded.tokens)
    flat = np.concatenate([np.asarray(v, dtype=np.float64).reshape(len(x), -1) for v in state.values()], axis=1)
    np.testing.assert_array_equal(plain.final_state, flat.view(np.uint64))


def test_grouped_reference_checks_that_the_groups_share_their_prefix():
    sim = prepare("index-lookup", "lstm", 4, "fixed:8:4", width=2)
    x, y = sim.problem.sample(4, 12, np.random.default_rng(0))  # not grouped by x
    encoded = sim.reduction.encode(x, y, sim.n)
    grouped = sim.split.reference(encoded, runner="prefix-tree", group=4)  # falls back to the full tree
    plain = sim.split.reference(encoded, runner="plain")
    np.testing.assert_array_equal(grouped.logits, plain.logits)
    np.testing.assert_array_equal(grouped.final_state, plain.final_state)


def test_run_blocks_rows_logits_and_flat_state():
    """``state_rows``, ``logits`` and ``flat_state`` give what gathering, reading out and
    flattening afterwards give; in several row blocks."""
    model = build_model("lstm", vocab_size=4, width=3, n_outputs=2, precision="float32", seed=5)
    rng = np.random.default_rng(3)
    starts = model.run(rng.integers(0, 4, size=(700, 5)))  # (700, ...) states
    rows = rng.integers(0, 700, size=5000)
    tokens = rng.integers(0, 4, size=(5000, 3))
    gathered = {k: np.asarray(v)[rows] for k, v in starts.items()}
    want_state, want_y = run_blocks(model, tokens, gathered, read_at=[0, 2])
    flat, logits = run_blocks(model, tokens, starts, read_at=[0, 2], state_rows=rows, logits=True,
                              flat_state=True)
    want_flat = np.empty_like(flat)
    write_flat(want_flat, slice(None), want_state)
    np.testing.assert_array_equal(flat, want_flat)
    for t in (0, 2):
        np.testing.assert_array_equal(logits[t], readout(model, want_y[t]))
    with pytest.raises(ValueError, match="state_rows"):
        run_blocks(model, tokens, starts, state_rows=rows[:10])


def _brute_count(batches):
    return len({bytes(np.asarray(r, dtype=np.uint8)) for b in batches for r in b})


@pytest.mark.parametrize("key", [None, lambda rows: np.zeros(len(rows), dtype=np.uint64),
                                 lambda rows: rows[:, 0].astype(np.uint64)])
def test_distinct_messages_count_exactly_even_when_keys_collide(key):
    rng = np.random.default_rng(11)
    pool = rng.integers(0, 2, size=(40, 21), dtype=np.uint8)
    batches = [pool[rng.integers(0, 40 if i % 3 else 12, size=int(rng.integers(1, 30)))] for i in range(150)]
    counter = DistinctMessages(key=key)
    for i, b in enumerate(batches):
        counter.add(b)
        if i in (0, 10, 149):
            assert counter.count == _brute_count(batches[:i + 1])


def test_distinct_messages_of_no_bits_and_of_long_rows():
    empty = DistinctMessages()
    empty.add(np.zeros((5, 0), dtype=np.uint8))
    assert empty.count == 1
    long = DistinctMessages()
    rows = np.random.default_rng(0).integers(0, 2, size=(300, 5000), dtype=np.uint8)
    long.add(rows)
    long.add(rows[::-1])
    long.add(BitRows(rows[:7]))
    assert long.count == _brute_count([rows])
