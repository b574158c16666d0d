"""The binary probes of Alice's layout against one probe per bit (the plain reference)."""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.problems import get_problem
from reductions.base import Reduction
from reductions.lookup import index_to_index_lookup
from reductions.registry import list_reductions
from reductions.search.reachable.letters import NotPositionwiseError, probe_positions
from reductions.simulate.recurrent import split_point


def _one_hot_layout(reduction, n, positions):
    """One probe per bit: position t holds bit i when flipping x_i alone changes it."""
    problem = get_problem(reduction.problem)
    probes = np.vstack([np.zeros((1, n), np.uint8), np.eye(n, dtype=np.uint8)])
    ys = problem.sample(n, n + 1, np.random.default_rng(0))[1]
    tokens = reduction.encode(probes, ys, n).tokens[:, positions]
    bit_at = np.full(len(positions), -1, dtype=np.int64)
    table = np.stack([tokens[0], tokens[0]], axis=1).astype(np.int64)
    for i in range(n):
        for t in range(len(positions)):
            if tokens[1 + i, t] != tokens[0, t]:
                bit_at[t], table[t, 1] = i, tokens[1 + i, t]
    unread = np.array([i for i in range(n) if i not in set(bit_at.tolist())], dtype=np.int64)
    return bit_at, table, unread


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_binary_probes_find_the_one_hot_layout_of_every_prefix_reduction(n):
    tried = 0
    for red in list_reductions():
        try:
            positions = np.arange(split_point(red.owners(red.check_n(n))))
            got = probe_positions(red, n, positions)
        except Exception:  # not prefix-suffix, not positionwise, or n out of range: not this test's case
            continue
        want = _one_hot_layout(red, n, positions)
        tried += 1
        for a, b in zip(got, want):
            assert np.array_equal(a, b), red.name
    assert tried >= 4


def _reduction_with(encoder):
    """A NumPy-only ``encoder(x, y, n)`` as a reduction (the user form: ``array_api=False``)."""
    from reductions.check import NumpyEncoder

    r = index_to_index_lookup
    return Reduction(name="probe-test", problem=r.problem, task=r.task, split=r.split, source=r.source,
                     section=r.section, tag=r.tag, encoder=NumpyEncoder(encoder), owners_of=r.owners_of,
                     decoder=r.decoder, query_fixed=False, array_api=False)


def test_a_position_that_reads_two_bits_is_refused():
    def xor_first_two(x, y, n):  # position 0 holds x_0 xor x_1
        t = np.concatenate([x.astype(np.int64), np.asarray(y)[:, None] + 2], axis=1)
        t[:, 0] = x[:, 0] ^ x[:, 1]
        return t
    with pytest.raises(NotPositionwiseError, match="several bits"):
        probe_positions(_reduction_with(xor_first_two), 6, np.arange(6))


def test_a_bit_written_twice_is_refused():
    def twice(x, y, n):  # x_0 at positions 0 and 1
        t = np.concatenate([x.astype(np.int64), np.asarray(y)[:, None] + 2], axis=1)
        t[:, 1] = x[:, 0]
        return t
    with pytest.raises(NotPositionwiseError, match="several positions"):
        probe_positions(_reduction_with(twice), 6, np.arange(6))
