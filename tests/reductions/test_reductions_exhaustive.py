"""Every registered reduction: exhaustive for n <= 8, random at n = 1024, honest owner masks.

The correctness checks go through the same public call users get (``check_reduction``). The
owner property is checked a second way here, by perturbation: flipping any one bit of x must
leave every non-Alice position unchanged, and changing y must leave every non-Bob position
unchanged (single flips connect all inputs, so this is the whole property); conversely each
Alice (Bob) position must change for some x (y) once n >= 2.
"""

import numpy as np
import pytest

from commcomp.problems import get_problem
from reductions import ALICE, BOB, PUBLIC, check_reduction, list_reductions

REDUCTIONS = {r.name: r for r in list_reductions()}
SAMPLES_AT_1024 = {"disjointness->qsa": 4}  # qSA features are (B, 2049, 1027) floats


def n_max(red):
    """All inputs up to n = 8 (4^8 pairs); INDEX has only n 2^n inputs, so go further (NN less
    far: its features are (B, 2n+1, k) floats)."""
    if red.problem != "index":
        return 8
    return 10 if red.task_name == "nearest-neighbour" else 12


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_exhaustive_up_to_8_and_random_at_1024(name):
    red = REDUCTIONS[name]
    report = check_reduction(red, n_max=n_max(red), n_random=[1024],
                             samples=SAMPLES_AT_1024.get(name, 32), seed=1, owners_n_max=6)
    assert report.exhaustive_sizes == tuple(range(1, n_max(red) + 1))
    per_n = [len(get_problem(red.problem).enumerate(n)[0]) for n in report.exhaustive_sizes]
    assert report.exhaustive_instances == sum(per_n)


def _content(encoded):
    batch = encoded.task_batch
    content = batch.tokens[:, :, None].astype(np.float64)
    if batch.features is not None:
        content = np.concatenate([content, batch.features], axis=2)
    return content  # (B, N, 1 + d)


def _other_bob_inputs(problem, y, n):
    if problem.name == "index":
        return [(y + s) % n for s in range(1, n)]
    return [y ^ (np.arange(n) == j).astype(y.dtype) for j in range(n)]


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_owner_mask_by_perturbation(name, n):
    red = REDUCTIONS[name]
    problem = get_problem(red.problem)
    x, y = problem.enumerate(n)
    base = red.encode(x, y, n)
    owners = base.owners
    content = _content(base)
    alice_moves = np.zeros(len(owners), dtype=bool)
    for j in range(n):  # flip one of Alice's bits
        other = _content(red.encode(x ^ (np.arange(n) == j).astype(x.dtype), y, n))
        changed = np.any(other != content, axis=(0, 2))  # (N,) positions that moved
        assert not np.any(changed & (owners != ALICE)), np.nonzero(changed & (owners != ALICE))[0]
        alice_moves |= changed
    bob_moves = np.zeros(len(owners), dtype=bool)
    for y2 in _other_bob_inputs(problem, y, n):
        changed = np.any(_content(red.encode(x, y2, n)) != content, axis=(0, 2))
        assert not np.any(changed & (owners != BOB)), np.nonzero(changed & (owners != BOB))[0]
        bob_moves |= changed
    if n >= 2:  # "iff": every owned position really depends on its owner's input
        assert np.array_equal(alice_moves, owners == ALICE)
        assert np.array_equal(bob_moves, owners == BOB)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_declared_split_and_query(name):
    red = REDUCTIONS[name]
    for n in (1, 4, 9):
        owners, out = red.owners(n), red.output_positions(n)
        assert red.query_fixed == bool(np.all(owners[out] == PUBLIC))
        alice, bob = np.nonzero(owners == ALICE)[0], np.nonzero(owners == BOB)[0]
        prefix_suffix = alice.size == 0 or bob.size == 0 or alice.max() < bob.min()
        if red.split == "prefix-suffix":
            assert prefix_suffix
            # a causal model (RNN) can answer only after every Alice position
            assert out.min() >= red.split_point(n)
        elif n >= 2:  # a partition that is not prefix-suffix, or the kind would say so
            assert not prefix_suffix
        assert red.encode(*get_problem(red.problem).sample(n, 3, np.random.default_rng(n)), n
                          ).tokens.shape == (3, red.length(n))


def test_lengths_follow_the_reference():
    lengths = {r.name: r.length(10) for r in list_reductions()}
    assert lengths["index->index-lookup"] == 11
    assert lengths["index->nearest-neighbour"] == 21  # N = 2n + 1 (§8.4)
    assert lengths["equality->dyck"] == 21 and lengths["disjointness->dyck"] == 41  # 2n+1, 4n+1
    assert lengths["disjointness->istree"] == 62  # 6n + 2 (§8.10)
    assert lengths["disjointness->match3"] == 21 and lengths["disjointness->qsa"] == 21
