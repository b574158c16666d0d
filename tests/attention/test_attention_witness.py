"""The attention zero-sum engine against brute force and against the real protocol."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

from commcomp.errors import MissingDependencyError, UnsupportedSplitError
from commcomp.problems import all_bit_strings
from reductions.search.attention import outcome as attention_outcome
from reductions.search.attention import collision_of, find_attention_collision
from reductions.search.attention.sorting import combinations, sorting_search
from reductions.search.attention.terms import transformer_instance
from reductions.search.attention.zerosum import ZeroSumSearch, is_solution
from reductions.search.confirm import alice_messages
from reductions.search.witness import find_witness
from reductions.simulate.batch import run_batch
from reductions.simulate.setup import prepare

CASES = [("string-equality", "fixed:6:3", 1), ("string-equality", "bfloat16", 2),
         ("string-disjointness", "fixed:8:4", 1), ("dyck", "fixed:6:3", 1), ("match3", "fixed:8:4", 1),
         ("string-disjointness", "float32", 1)]


def _protocol_classes(sim, xs):
    """Group labels of ``xs`` by Alice's real protocol message (one y: one round)."""
    y = sim.problem.sample(sim.n, 1, np.random.default_rng(5))[1][:1]
    keys = alice_messages(sim, xs, np.repeat(y, len(xs), axis=0), "plain")
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)


def _same_partition(a, b) -> bool:
    """Whether two labelings of the same rows group them identically."""
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def _independent_check(sim, x, x2, y):
    """Re-run the protocol and the unsplit model on (x, y), (x', y) here, not through the engine."""
    msgs = alice_messages(sim, np.stack([x, x2]), np.stack([y, y]), "plain")
    res = run_batch(sim, np.stack([x, x2]), np.stack([y, y]))
    logits = np.asarray(res.reference.logits, dtype=np.float64)
    assert not np.array_equal(x, x2)
    assert np.array_equal(msgs[0], msgs[1])
    assert np.array_equal(logits[0].view(np.uint64), logits[1].view(np.uint64))
    assert bool(res.truth[0]) != bool(res.truth[1])
    assert bool(res.model_answer[0]) == bool(res.model_answer[1])


@pytest.mark.parametrize("task,precision,width", CASES)
def test_instance_groups_inputs_as_the_protocol_does(task, precision, width):
    n = 7
    sim = prepare(task, "transformer", n, precision, width=width, layers=1, seed=2)
    inst = transformer_instance(sim)
    xs = all_bit_strings(n)
    sums = inst.sums(xs)
    assert np.array_equal(sums, inst.model_sums(xs))  # the terms against the model's own partial
    labels = np.unique(sums, axis=0, return_inverse=True)[1].reshape(-1)
    assert _same_partition(labels, _protocol_classes(sim, xs))  # equal sums <=> equal messages


def test_two_round_instance_stacks_every_query():
    sim = prepare("index-lookup", "transformer", 5, "fixed:8:4", width=2, layers=1, seed=0)
    inst = transformer_instance(sim)
    assert sim.split.rounds == 2 and inst.strong and len(inst.queries) == 5  # one per index Bob may hold
    xs = all_bit_strings(5)
    assert np.array_equal(inst.sums(xs), inst.model_sums(xs))


def test_combinations_colex():
    for m in range(1, 8):
        for s in range(1, m + 1):
            want = sorted(itertools.combinations(range(m), s), key=lambda c: c[::-1])
            assert combinations(m, s).tolist() == [list(c) for c in want]


def test_sorting_against_brute_force_on_small_matrices():
    rng = np.random.default_rng(1)
    for _ in range(200):
        k, d, hi = int(rng.integers(1, 8)), int(rng.integers(1, 3)), int(rng.integers(1, 10))
        D = rng.integers(-hi, hi + 1, size=(k, d))
        exists = any(is_solution(D, np.array(v)) for v in itertools.product([-1, 0, 1], repeat=k))
        out = sorting_search(D, budget=1 << 10)
        assert out.tried["exhaustive"] and out.found == exists and out.proved_none == (not exists)
        assert all(is_solution(D, v) for v in out.vectors)
        if k >= 2:  # below 2^k sums: phases only, never a proof
            part = sorting_search(D, budget=(1 << k) - 1)
            assert not part.proved_none and all(is_solution(D, v) for v in part.vectors)


@pytest.mark.parametrize("task,precision,width", CASES)
def test_exhaustive_engine_agrees_with_hashing_every_input(task, precision, width):
    """Where hashing all 2^n messages finds a witness, so does the engine, and every one it returns is genuine."""
    for seed in range(3):
        n = 7
        brute = find_witness(task, "transformer", n, precision, width=width, layers=1, seed=seed,
                             method="enumerate")
        sim = prepare(task, "transformer", n, precision, width=width, layers=1, seed=seed)
        got = collision_of(sim, method="sorting", seed=seed)
        assert brute["complete"] and got.complete
        assert got.found == brute["found"], (seed, got.note, brute["note"])
        if got.found:
            _independent_check(sim, got.x, got.x_prime, got.y)
        else:
            assert got.note.startswith("proved")


@pytest.mark.parametrize("task,precision,n", [("string-equality", "bfloat16", 300), ("dyck", "bfloat16", 120),
                                              ("string-disjointness", "fixed:8:4", 200)])
def test_sorting_phases_find_coarse_collisions(task, precision, n):
    sim = prepare(task, "transformer", n, precision, width=1, layers=1, seed=0)
    got = collision_of(sim, method="sorting", seed=0)
    assert got.found and not got.complete and got.rejected == 0
    _independent_check(sim, got.x, got.x_prime, got.y)


def test_unconfirmed_candidates_are_never_reported(monkeypatch):
    sim = prepare("string-equality", "transformer", 40, "float32", width=1, layers=1, seed=0)
    fake = np.zeros(40, np.int8)
    fake[[3, 7]] = [1, -1]  # not a solution: the protocol must disagree
    monkeypatch.setattr(attention_outcome, "sorting_search",
                        lambda D, **kw: ZeroSumSearch("sorting", (fake,), False, {"phases": []}, "fake"))
    got = collision_of(sim, method="sorting", seed=0)
    assert not got.found and got.rejected == 1 and not got.complete


def test_other_splits_are_refused():
    sim = prepare("string-equality", "lstm", 8, "fixed:8:4", width=1, seed=0)
    with pytest.raises(UnsupportedSplitError):
        collision_of(sim)


def test_lattice_without_fpylll(monkeypatch):
    monkeypatch.setitem(sys.modules, "fpylll", None)  # import fpylll raises ImportError
    sim = prepare("string-equality", "transformer", 60, "float32", width=1, layers=1, seed=0)
    with pytest.raises(MissingDependencyError):
        collision_of(sim, method="lattice")
    got = collision_of(sim, method="auto")  # the sorting phases alone, honestly
    assert [s.method for s in got.searches] == ["sorting"] and not got.complete


@pytest.mark.parametrize("task,precision,n,width", [("string-equality", "float32", 200, 1),
                                                    ("match3", "float32", 200, 1),
                                                    ("dyck", "float32", 100, 1),
                                                    ("string-disjointness", "float32", 300, 2)])
def test_lattice_witnesses_are_genuine(task, precision, n, width):
    pytest.importorskip("fpylll")
    sim = prepare(task, "transformer", n, precision, width=width, layers=1, seed=1)
    got = collision_of(sim, method="lattice", seed=1)
    assert got.found and got.method == "lattice" and not got.complete and got.rejected == 0
    D = transformer_instance(sim).differences
    assert is_solution(D, got.x.astype(np.int64) - got.x_prime.astype(np.int64))
    _independent_check(sim, got.x, got.x_prime, got.y)


def test_lattice_on_random_matrix_and_its_report():
    pytest.importorskip("fpylll")
    from reductions.search.attention.lattice import lattice_search

    D = np.random.default_rng(0).integers(-2 ** 20, 2 ** 20, size=(120, 2))
    out = lattice_search(D, seed=0)
    assert out.found and all(is_solution(D, v) for v in out.vectors)
    too_few = lattice_search(D[:12], seed=0, attempts=((1.0, 0),))  # 3^12 < 2^42: no ternary solution likely
    assert not too_few.found and not too_few.proved_none and "proves nothing" in too_few.note
    assert too_few.tried["attempts"][0]["rows"] == 12


def test_find_witness_methods_and_json():
    pytest.importorskip("fpylll")
    out = find_witness("string-equality", "transformer", 300, "float32", width=1, layers=1, seed=0,
                       method="lattice")
    assert out["found"] and out["method"] == "lattice" and out["complete"] is False
    assert out["messages_equal"] and out["outputs_identical"] and out["truth_x"] != out["truth_x_prime"]
    auto = find_witness("string-equality", "transformer", 300, "float32", width=1, layers=1, seed=0)
    assert auto["found"] and auto["search"] == "zero-sum"


def test_public_api():
    r = find_attention_collision("transformer", "equality->string-equality", 100, "bfloat16", width=1, seed=0,
                                 method="sorting")
    assert r.found and r.to_json()["found"] and r.to_json()["x"] is not None


@pytest.mark.parametrize("n,precision,found", [(5, "fixed:8:4", True), (4, "float32", False)])
def test_two_round_exhaustive_witness_search_is_complete(n, precision, found):
    """Every x against every y: complete, whether or not it finds one (the old search tried one y)."""
    out = find_witness("index-lookup", "transformer", n, precision, width=2, layers=1, seed=0,
                       method="enumerate")
    assert out["complete"] and out["found"] == found
    if not found:
        assert out["tried"] == (1 << n) * n and "proved" in out["note"]
        sim = prepare("index-lookup", "transformer", n, precision, width=2, layers=1, seed=0)
        xs = all_bit_strings(n)
        for y in range(n):  # brute force: per y, equal replies only between x that agree at y
            keys = alice_messages(sim, xs, np.full(len(xs), y), "plain")
            labels = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
            for lab in np.unique(labels):
                assert len(np.unique(xs[labels == lab][:, y])) == 1


def test_cli_witness_method_sorting_and_a_refusal(capsys):
    import json

    import cli

    code = cli.main(["witness", "string-equality", "--arch", "transformer", "--layers", "1", "--n", "100",
                     "--precision", "bfloat16", "--width", "1", "--method", "sorting", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, None) and out["found"] and out["method"] == "sorting" and out["messages_equal"]
    code = cli.main(["witness", "string-equality", "--arch", "lstm", "--n", "8", "--precision", "fixed:4:2",
                     "--width", "1", "--method", "lattice"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "1-layer Transformer" in captured.err


@pytest.mark.parametrize("task,precision,n", [("index-lookup", "float32", 200), ("index-lookup", "bfloat16", 300),
                                              ("mqar", "float32", 100), ("match2", "float32", 150),
                                              ("index-lookup", "fixed:8:4", 6)])
def test_two_round_witnesses_per_query_are_genuine(task, precision, n):
    """Bob's query first: a collision of y's own sums, separated by that y, re-checked here."""
    if precision != "fixed:8:4":
        pytest.importorskip("fpylll")
    sim = prepare(task, "transformer", n, precision, width=1, layers=1, seed=0)
    assert sim.split.rounds == 2
    got = collision_of(sim, seed=0)
    assert got.found and not got.complete and got.rejected == 0 and got.instance["per_query"]
    _independent_check(sim, got.x, got.x_prime, got.y)


def test_float64_sums_of_63_bits_round_trip():
    """float64 at N = 601: 53-bit terms, sums of 53 + ceil(log2 601) = 63 bits; the host decoder used to
    overflow there (2^63 does not fit in int64); negative and positive sums must come back exactly."""
    from models.transformer.attention import AttentionPartial

    sim = prepare("string-equality", "transformer", 300, "float64", width=1, layers=1, seed=0)
    grid = sim.split.grid
    width = grid.sum_bits(sim.split.length)
    assert width == 63
    num = np.array([[[-(1 << 61) - 5]], [[(1 << 61) + 7]]], dtype=np.int64)  # (B=2, H=1, d_v=1)
    den = np.array([[(1 << 62) - 1], [-3]], dtype=np.int64)
    part = AttentionPartial(num, den, sim.split.length, sim.split.length - 1, grid)
    back = AttentionPartial.from_bit_rows(part.to_bit_rows(), n_heads=1, d_v=1, n_positions=sim.split.length,
                                          output_position=sim.split.length - 1, grid=grid)
    assert np.array_equal(back.numerator, num) and np.array_equal(back.denominator, den)
