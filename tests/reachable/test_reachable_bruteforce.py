"""The reachable-states engine against brute force over every input of Alice (n <= 12).

Independent references: every prefix of every x run by the existing block runner
(``run_blocks``) and its messages counted with ``np.unique``; collisions and separating y's from
the whole communication matrix; exact correctness and faithfulness counts from the prefix-tree
``verify`` over all ``2^n x |Y|`` instances.
"""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.problems import all_bit_strings
from reductions.search.reachable.api import reachable_analysis
from reductions.search.reachable.engine import explore
from reductions.simulate import verify
from reductions.simulate.running import run_blocks
from reductions.simulate.setup import prepare

ARCHS = ["elman", "lstm", "gru", "linear-attention", "retnet", "dss", "mamba"]
FORMATS = ["fixed:4:2", "fixed:8:4", "float16", "float32"]


def _brute_messages(sim):
    """Distinct messages after every prefix length, and the final messages ``(2^n, bytes)``."""
    n, s = sim.n, sim.split.split_at
    xs = all_bit_strings(n)
    ys = np.repeat(sim.problem.bob_inputs(n)[:1], len(xs), axis=0)
    tokens = sim.reduction.encode(xs, ys, n).tokens
    sizes, final = [1], None
    for t in range(1, s + 1):
        state, _ = run_blocks(sim.model, tokens[:, :t])
        final = np.packbits(sim.model.state_to_bits(state).array, axis=1)
        sizes.append(len(np.unique(final, axis=0)))
    return xs, sizes, final


def _brute_witness_exists(sim, xs, final) -> bool:
    """Some x != x' with equal messages and a y with f(x, y) != f(x', y)."""
    ys = sim.problem.bob_inputs(sim.n)
    X, Y = len(xs), len(ys)
    rows = np.asarray(sim.problem.evaluate(np.repeat(xs, Y, axis=0),
                                           np.tile(ys, (X,) + (1,) * (np.ndim(ys) - 1)))).reshape(X, Y)
    _, group = np.unique(final, axis=0, return_inverse=True)
    group = group.reshape(-1)
    for g in np.unique(group):
        members = rows[group == g]
        if len(members) > 1 and np.any(members != members[0]):
            return True
    return False


CASES = [(arch, fmt) for arch in ARCHS for fmt in FORMATS]


@pytest.mark.parametrize("arch,precision", CASES)
def test_distinct_messages_per_level_and_witness_existence(arch, precision):
    """INDEX -> index-lookup and EQ -> string-equality: the same counts at every level, and a
    witness exactly when brute force finds a collision with a separating y."""
    for task, n, width in (("index-lookup", 7, 2), ("string-equality", 6, 1)):
        sim = prepare(task, arch, n, precision, width=width, seed=5)
        reach = explore(sim)
        xs, sizes, final = _brute_messages(sim)
        assert reach.complete and reach.sizes == sizes, (task, reach.sizes, sizes)
        assert reach.total_inputs == 2 ** n
        out = reachable_analysis(task, arch, n, precision, width=width, seed=5)
        exists = _brute_witness_exists(sim, xs, final)
        assert out["witness"]["found"] == exists and out["witness"]["complete"]
        if not exists:
            assert out["witness"]["proved"] == (len(np.unique(final, axis=0)) == 2 ** n)
        else:
            w = out["witness"]
            a = np.array([int(c) for c in w["x"]])
            b = np.array([int(c) for c in w["x_prime"]])
            ia = int(np.nonzero((xs == a).all(axis=1))[0][0])
            ib = int(np.nonzero((xs == b).all(axis=1))[0][0])
            assert ia != ib and np.array_equal(final[ia], final[ib])  # a real collision
            assert w["truth_x"] != w["truth_x_prime"] and w["model_answer_x"] == w["model_answer_x_prime"]


@pytest.mark.parametrize("arch,precision", CASES)
def test_exact_counts_equal_the_prefix_tree_over_all_instances(arch, precision):
    n = 12 if (arch, precision) in (("lstm", "fixed:4:2"), ("gru", "float16")) else 6
    kw = dict(width=2, seed=2, exhaustive=True)
    reach = verify("index-lookup", arch, n, precision, method="reachable-states", **kw)
    tree = verify("index-lookup", arch, n, precision, method="prefix-tree", **kw)
    assert reach["method"] == "reachable-states" and tree["method"] == "prefix-tree"
    for key in ("instances", "faithful_count", "correct_count", "model_correct_count", "distinct_messages",
                "bits_per_message", "lower_bound_bits"):
        assert reach[key] == tree[key], key
    assert reach["faithful"] == 1.0 and reach["distinct_messages_per_level"][0] == 1


@pytest.mark.parametrize("task,arch", [("mqar", "gru"), ("nearest-neighbour", "mamba"),
                                       ("multi-index-lookup", "lstm"), ("match3", "elman")])
def test_public_positions_and_other_reductions(task, arch):
    """Reductions with public positions between Alice's (MQAR, NN), before them (MIL), or whose
    problem is not INDEX: the same per-level counts as brute force."""
    sim = prepare(task, arch, 6, "fixed:6:3", width=2, seed=1)
    reach = explore(sim)
    _, sizes, _ = _brute_messages(sim)
    assert reach.sizes == sizes
    if sim.problem.name == "index":
        kw = dict(width=2, seed=1, exhaustive=True)
        a = verify(task, arch, 6, "fixed:6:3", **kw)
        b = verify(task, arch, 6, "fixed:6:3", method="prefix-tree", **kw)
        assert a["method"] == "reachable-states"
        assert (a["correct_count"], a["faithful_count"]) == (b["correct_count"], b["faithful_count"])


@pytest.mark.parametrize("task,arch,n", [("index-lookup", "lstm", 300), ("mqar", "gru", 120),
                                         ("multi-index-lookup", "mamba", 60), ("index-lookup", "linear-attention", 40)])
def test_reusing_a_settled_level_changes_nothing(task, arch, n):
    """Levels that repeat an earlier step reuse it: every table, count and collision as recomputed."""
    sim = prepare(task, arch, n, "fixed:6:3", width=3, seed=4)
    a, b = explore(sim), explore(sim, reuse=False)
    # MQAR's public keys differ at every position (no two levels step alike); linear attention keeps growing
    assert b.reused_levels == 0 and (a.reused_levels > 0) == (task in ("index-lookup", "multi-index-lookup")
                                                              and arch != "linear-attention")
    assert a.sizes == b.sizes and np.array_equal(a.keys, b.keys) and a.collisions == b.collisions
    for x, y in zip(a.levels, b.levels):
        assert np.array_equal(x.next_class, y.next_class) and list(x.counts) == list(y.counts)
        assert np.array_equal(x.rep_parent, y.rep_parent) and np.array_equal(x.rep_letter, y.rep_letter)
