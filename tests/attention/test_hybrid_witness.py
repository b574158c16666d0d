"""The hybrid's zero-sum engine (reductions/search/attention/hybrid.py) against brute force and the unsplit model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli import main
from models.transformer.hybrid import build_hybrid
from reductions.search.attention import collision_of
from reductions.search.attention.hybrid import hybrid_instance
from reductions.search.witness import find_witness
from reductions.simulate.setup import prepare


def _sim(task, recurrent, precision, n, width=2, seed=0):
    base = prepare(task, "hybrid", n, precision, width=width, seed=seed)
    model = build_hybrid(vocab_size=base.model.vocab_size, width=width, n_outputs=base.model.n_outputs, heads=1,
                         seed=seed, recurrent=recurrent, precision=precision)
    return prepare(task, None, n, precision, model=model, seed=seed)


def _state_bits(sim, tokens):
    """Alice's first message computed here: the stack run over her prefix in one call, its state's codes."""
    state = sim.model.stack.run(tokens[:, :sim.split.split_at])
    return np.asarray(sim.model.stack.state_to_bits(state).array)


def _sums(sim, tokens, query_tokens):
    """Alice's sums from the unsplit hidden rows, for the queries of ``query_tokens`` (B, N) row by row."""
    model, s = sim.model, sim.split.split_at
    hidden, qh = model.hidden(tokens), model.hidden(query_tokens)  # (B, N, d)
    parts = []
    for o in sim.split.read:
        p = model.partial(hidden, np.arange(s), model.query(qh[:, int(o), :]), int(o))
        parts += [np.asarray(p.numerator).reshape(len(tokens), -1), np.asarray(p.denominator).reshape(len(tokens), -1)]
    return np.concatenate(parts, axis=1).astype(np.int64)


def _unsplit_check(sim, x, x2, y):
    """The witness judged by the unsplit hybrid alone: logits bit-identical, one answer wrong."""
    tok = sim.reduction.encode(np.stack([x, x2]), np.stack([np.asarray(y)] * 2), sim.n).tokens
    logits = np.stack([np.asarray(sim.model.forward(tok, output_position=int(o)), np.float64)
                       for o in sim.split.read], axis=1)
    assert not np.array_equal(x, x2)
    assert np.array_equal(logits[0].view(np.uint64), logits[1].view(np.uint64))
    truth = sim.problem.evaluate(np.stack([x, x2]), np.stack([np.asarray(y)] * 2))
    assert bool(truth[0]) != bool(truth[1])


@pytest.mark.parametrize("task,recurrent,precision", [("string-equality", "mamba", "fixed:8:4"),
                                                      ("string-disjointness", "elman", "bfloat16"),
                                                      ("string-equality", "gru", "fixed:8:4")])
def test_linearised_sums_equal_the_model_on_random_flips(task, recurrent, precision):
    """state(f ^ z) = state(f) and S(f ^ z) = S(f) + z D, checked on the unsplit model for random z."""
    n = 60
    sim = _sim(task, recurrent, precision, n)
    rng = np.random.default_rng(3)
    fill = rng.integers(0, 2, size=n, dtype=np.uint8)
    y0 = fill.copy()
    inst = hybrid_instance(sim, fill, y0)
    assert len(inst.bits) >= 4
    assert np.all(inst.windows[1:, 0] > inst.windows[:-1, 1])  # disjoint windows, in order
    z = rng.integers(0, 2, size=(32, len(inst.bits))).astype(np.uint8)
    xs = np.repeat(fill[None], 32, axis=0)
    xs[:, inst.bits] ^= z
    ys = np.repeat(y0[None], 32, axis=0)
    tok = np.asarray(sim.reduction.encode(xs, ys, n).tokens)
    base_tok = np.asarray(sim.reduction.encode(fill[None], y0[None], n).tokens)
    states = _state_bits(sim, tok)
    assert np.all(states == _state_bits(sim, base_tok)[0])
    got = _sums(sim, tok, np.repeat(base_tok, 32, axis=0))
    want = _sums(sim, base_tok, base_tok)[0] + z.astype(np.int64) @ inst.differences
    assert np.array_equal(got, want)
    # a bit left out because it overlaps a used window really does interact: not every flip is additive
    assert inst.counts["overlapping"] + inst.counts["unforgotten"] + len(inst.bits) <= n


def _brute_force(sim):
    """Whether a collision witness exists: every (x, y), Alice's messages computed from the unsplit pieces."""
    prob, n = sim.problem, sim.n
    X, Y = prob.alice_inputs(n), prob.bob_inputs(n)
    for y in Y:
        ys = np.repeat(y[None], len(X), axis=0)
        tok = np.asarray(sim.reduction.encode(X, ys, n).tokens)
        key = np.concatenate([_state_bits(sim, tok).astype(np.int64), _sums(sim, tok, tok)], axis=1)
        f = prob.evaluate(X, ys).astype(bool)
        _, cls = np.unique(key, axis=0, return_inverse=True)
        cls = cls.reshape(-1)
        if np.intersect1d(cls[f], cls[~f]).size:
            return True
    return False


@pytest.mark.parametrize("task,recurrent,precision,n,seed", [
    ("string-equality", "elman", "fixed:6:3", 5, 0), ("string-equality", "mamba", "fixed:4:2", 4, 1),
    ("string-disjointness", "gru", "fixed:6:3", 5, 2), ("string-disjointness", "elman", "float32", 4, 0),
    ("string-equality", "lstm", "fixed:4:2", 6, 3), ("string-disjointness", "mamba", "bfloat16", 5, 4)])
def test_small_n_agrees_with_brute_force(task, recurrent, precision, n, seed):
    sim = _sim(task, recurrent, precision, n, seed=seed)
    expect = _brute_force(sim)
    for method in ("lattice", "sorting", "auto"):
        r = collision_of(sim, method=method, seed=seed)
        assert r.complete and r.method == "enumerate"
        assert r.found == expect
        if r.found:
            _unsplit_check(sim, r.x, r.x_prime, r.y)
        else:
            assert r.note.startswith("proved")
    w = find_witness(task, None, n, precision, model=sim.model, seed=seed)  # the generic enumeration: per y
    assert w["found"] == expect and w["complete"]


@pytest.mark.parametrize("task,recurrent,precision,n", [("string-equality", "mamba", "fixed:8:4", 120),
                                                        ("string-disjointness", "mamba", "fixed:8:4", 120),
                                                        ("string-equality", "elman", "bfloat16", 150)])
def test_linearised_witnesses_are_genuine(task, recurrent, precision, n):
    sim = _sim(task, recurrent, precision, n)
    for method in ("sorting", "lattice"):
        r = collision_of(sim, method=method, seed=0)
        assert r.found and not r.complete and r.rejected == 0
        assert r.messages_equal and r.outputs_identical
        _unsplit_check(sim, r.x, r.x_prime, r.y)
        used = set(int(b) for t in [hybrid_instance(sim, np.zeros(n, np.uint8), np.zeros(n, np.uint8))] for b in t.bits)
        assert set(np.flatnonzero(r.x != r.x_prime).tolist()) <= used  # only bits of the first template moved


@pytest.mark.parametrize("recurrent,precision,seed", [("mamba", "fixed:4:2", 0), ("elman", "fixed:6:3", 1),
                                                     ("gru", "fixed:6:3", 0), ("elman", "fixed:6:3", 0)])
def test_linearised_path_never_claims_more_than_brute_force(recurrent, precision, seed):
    """Below the exhaustive threshold (a small budget forces the windows at n = 8): a witness only where
    brute force over all 4^8 pairs finds one, and each one genuine."""
    sim = _sim("string-equality", recurrent, precision, 8, seed=seed)
    r = collision_of(sim, method="sorting", budget=1024, seed=seed)
    assert not r.complete and r.method == "sorting"
    if r.found:
        assert _brute_force(sim)
        _unsplit_check(sim, r.x, r.x_prime, r.y)
    else:
        assert "proves nothing" in r.note and "proved" not in r.note.replace("proves nothing", "")


def test_no_forgetting_proves_nothing():
    sim = _sim("string-equality", "mamba", "float32", 60)
    r = collision_of(sim, method="sorting", seed=0)
    assert not r.found and not r.complete
    assert "proves nothing" in r.note
    assert all(t["rows"] < 2 for t in r.instance["templates"])


def test_cli_hybrid_lattice(capsys):
    rc = main(["witness", "string-equality", "--arch", "hybrid", "--n", "120", "--precision", "fixed:8:4",
               "--width", "2", "--method", "lattice", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["found"] and out["method"] == "lattice" and out["complete"] is False
    assert out["messages_equal"] and out["outputs_identical"] and out["truth_x"] != out["truth_x_prime"]
    rc = main(["witness", "string-equality", "--arch", "hybrid", "--n", "5", "--precision", "fixed:8:4",
               "--width", "2", "--method", "lattice", "--format", "json"])
    small = json.loads(capsys.readouterr().out)
    assert rc == 0 and small["complete"] is True and small["method"] == "enumerate"
    rc = main(["witness", "string-equality", "--arch", "hybrid", "--n", "6", "--width", "2",
               "--method", "lattice"])
    assert rc == 2 and "precision" in capsys.readouterr().err
