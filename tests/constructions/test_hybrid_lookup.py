"""Index Lookup on the hybrid (COMMCOMP-IL-Hybrid, models/constructions/hybrid_lookup.py), judged by the
task's own ground truth: every input at small n in every format the claims use, random and adversarial
inputs at the bfloat16 crossover (N = 945), knocked-out weights caught, and the width (built, stated
without building, catalogue formula) against an independent count of the primes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from commcomp.bounds import compute_bounds
from models.constructions import get_construction
from models.constructions.hybrid_lookup import crt_moduli, hybrid_lookup_width, make_hybrid_index_lookup
from models.constructions.index_lookup import all_index_lookup_inputs
from reductions.search.construction import check_construction

FORMATS = [None, "bfloat16", "float16", "float32", "fixed:8:4"]


def _primes_upto(x: int) -> list[int]:
    return [q for q in range(2, x + 1) if all(q % d for d in range(2, int(q ** 0.5) + 1))]


@pytest.mark.parametrize("precision", FORMATS)
def test_every_input_at_small_n(precision):
    spec = get_construction("index-lookup-hybrid")
    total = 0
    for n in range(1, 9):
        c = spec.make(n, precision)
        res = check_construction(c, inputs=spec.inputs(n), stop_early=False)
        assert res.ok and res.total == n * 2 ** n, (n, res)
        total += res.total
    assert total == sum(n * 2 ** n for n in range(1, 9))


def test_every_input_with_three_symbols():
    for n in (1, 3, 5):
        c = make_hybrid_index_lookup(n, "bfloat16", alphabet=3)
        tokens = all_index_lookup_inputs(n, 3)
        truth = tokens[np.arange(len(tokens)), tokens[:, -1] - 3][:, None]  # s_p, read by hand
        assert len(tokens) == n * 3 ** n and np.array_equal(c.predict(tokens), truth)


def test_random_and_adversarial_at_the_bfloat16_crossover():
    n = 944  # N = 945 data symbols: ceil(945 / 16) = 60 > width 59
    c = make_hybrid_index_lookup(n, "bfloat16")
    assert c.width == 59 and math.ceil((n + 1) / 16) > c.width >= math.ceil(n / 16)
    res = check_construction(c, samples=48, seed=3, stop_early=False)
    assert res.ok and res.total == 48
    # adversarial: every other symbol is the opposite of s_p, at targets next to residue collisions
    rng = np.random.default_rng(0)
    p = np.concatenate([[0, 1, n - 1, n - 2], rng.choice(n, 28, replace=False)])
    s_p = rng.integers(0, 2, len(p))
    symbols = np.repeat((1 - s_p)[:, None], n, axis=1)
    symbols[np.arange(len(p)), p] = s_p
    tokens = np.concatenate([symbols, (2 + p)[:, None]], axis=1)
    assert np.array_equal(c.predict(tokens)[:, 0], s_p)
    report = c.params_report
    assert report["leak_bound"] <= 0.26 and report["wrong_terms_vanish"]
    assert report["split_slack"] < report["gap"] / 2 + 0.1


@pytest.mark.parametrize("name, value", [("r0.W_h", 0.0), ("r0.b", 0.0), ("attn.W_Q", 0.0), ("attn.W_V", 0.0)])
def test_a_knocked_out_weight_is_caught(name, value):
    spec = get_construction("index-lookup-hybrid")
    c = spec.make(6, "bfloat16")
    broken = c.model.with_params({name: np.full_like(np.asarray(c.model.params[name]), value)})
    bad = type(c)(**{**c.__dict__, "model": broken})
    res = check_construction(bad, inputs=spec.inputs(6), stop_early=False)
    assert not res.ok and res.correct < res.admitted
    assert check_construction(c, inputs=spec.inputs(6), stop_early=False).ok  # the intact one passes


def test_hidden_rows_hold_the_residues_and_r_plus_one_ones():
    n = 40
    c = make_hybrid_index_lookup(n, "bfloat16")
    rng = np.random.default_rng(1)
    tokens = np.concatenate([rng.integers(0, 2, (3, n)), 2 + rng.integers(0, n, (3, 1))], axis=1)
    _, y = c.model.stack.run_layers(tokens)
    y = np.asarray(y)  # (B, N, d)
    mods = crt_moduli(n + 1)
    R = sum(mods)
    assert np.array_equal(y.sum(axis=-1), np.full((3, n + 1), len(mods) + 1.0))  # the norms see equal rows
    off = 0
    for L in mods:  # a plain loop: ring i holds onehot(t mod L) at symbols, 0 at the query
        for t in range(n):
            assert y[:, t, off:off + L].argmax(-1).tolist() == [t % L] * 3
        assert not y[:, n, off:off + L].any()
        q = tokens[:, -1] - 2
        assert y[:, n, R + off:R + off + L].argmax(-1).tolist() == (q % L).tolist()
        off += L


@pytest.mark.parametrize("N", [1, 2, 6, 7, 30, 31, 210, 211, 945, 2310, 2311, 30031])
def test_moduli_and_width_against_a_plain_count(N):
    primes = _primes_upto(60)
    r = next(r for r in range(1, len(primes)) if math.prod(primes[:r]) >= N)
    assert crt_moduli(N) == tuple(primes[:r])
    residues = {tuple(t % L for L in crt_moduli(N)) for t in range(min(N, 3000))}
    assert len(residues) == min(N, 3000)  # CRT: distinct codes
    assert hybrid_lookup_width(N - 1 if N > 1 else 1) == 2 * sum(crt_moduli(max(N, 2))) + 3


@pytest.mark.parametrize("n", [2, 5, 29, 209, 944, 2309])
def test_width_built_stated_and_catalogued_agree(n):
    spec = get_construction("index-lookup-hybrid")
    built = spec.make(n).width
    assert built == spec.width(n) == hybrid_lookup_width(n) == spec.make(n).model.d_model
    rows = compute_bounds(n, 16, task="index-lookup", arch="hybrid", kind="upper")
    row = next(r for r in rows if r.theorem == "COMMCOMP-IL-Hybrid")
    assert row.min_width == built
