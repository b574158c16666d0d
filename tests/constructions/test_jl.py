"""C1: the JL dimension, certified random codes, binary codes and their leak bounds."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from models.constructions.jl import (beta_for_leak, binary_codes, jl_codes, jl_dimension,
                                     max_overlap)


def brute_max_overlap(signs):
    S = signs.astype(np.int64)
    G = S @ S.T
    np.fill_diagonal(G, -10 ** 9)
    return int(G.max())


def test_jl_dimension_matches_the_reference_table():
    # theorems.md C1: gamma = 1/2 -> 54, 80, 102, 117, 150; gamma = 1/4 -> 214, 317, 406, 465, 599
    Ns = (20, 100, 400, 1000, 8192)
    assert [jl_dimension(N, 0.5) for N in Ns] == [54, 80, 102, 117, 150]
    assert [jl_dimension(N, 0.25) for N in Ns] == [214, 317, 406, 465, 599]


@pytest.mark.parametrize("N,gamma,seed", [(20, 0.5, 0), (300, 0.5, 1), (200, 0.25, 2)])
def test_jl_codes_are_certified_by_an_independent_gram_matrix(N, gamma, seed):
    c = jl_codes(N, gamma, seed=seed)
    assert c.certified and c.k == jl_dimension(N, gamma)
    g = brute_max_overlap(c.signs)
    assert c.max_overlap == g and g <= gamma * c.k
    assert c.gamma == g / c.k <= gamma


def test_max_overlap_blocked_equals_brute_force():
    rng = np.random.default_rng(5)
    S = np.where(rng.random((333, 17)) < 0.5, -1, 1).astype(np.int8)
    assert max_overlap(S, block=50) == brute_max_overlap(S)


def test_too_short_jl_codes_return_the_best_draw_with_its_true_gamma():
    c = jl_codes(64, 0.5, k=6, seed=0, max_draws=5)
    assert c.max_overlap == brute_max_overlap(c.signs) and c.gamma > 0.5


@pytest.mark.parametrize("N", [1, 2, 5, 8, 13, 64])
def test_binary_codes_distinct_and_leak_bounds_the_true_sum(N):
    c = binary_codes(N)
    assert c.k == max(1, math.ceil(math.log2(N)))
    assert len({tuple(r) for r in c.signs}) == N
    S = c.signs.astype(np.int64)
    for beta in (0.5, 1.0, 2.0):
        true = max(sum(math.exp(-beta * (c.k - int(S[p] @ S[j]))) for j in range(N) if j != p)
                   for p in range(N))
        assert true <= c.leak(beta) + 1e-12
    with pytest.raises(Exception):
        binary_codes(9, k=3)


def test_beta_for_leak_is_the_smallest_beta():
    c = binary_codes(1024)
    b = beta_for_leak(c.leak, 0.25)
    assert c.leak(b) <= 0.25 < c.leak(b * 0.999)
