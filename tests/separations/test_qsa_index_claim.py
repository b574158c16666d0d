"""SHT's qSA claim with the recurrent side as the weak one: INDEX -> qSA at q = 1 (``index@q1``),
the Elman witness on it, the row unit's split over its prefix/suffix partition, and the verdict."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from commcomp.bits import BitRows
from commcomp.precision import parse_precision
from commcomp.protocol import run_protocol
from reductions import ReductionCounterexample, check_reduction
from reductions.arithmetic import index_to_qsa_q1
from reductions.registry import get_reduction
from reductions.separations.claim_specs import CLAIMS
from reductions.separations.claims_qsa import (QSA_DIM, qsa_claim, qsa_protocol_check, qsa_witness_check)
from reductions.simulate import prepare, run_batch, verify
from reductions.tasks.qsa import QsaOnePointer, data_table

FMT = parse_precision("fixed:8:4")
SPEC = next(c for c in CLAIMS if c.claim == "retrieval-qSA")


def _answer_by_loop(tokens: np.ndarray, N: int) -> np.ndarray:
    """qSA at q = 1 from the token ids, one row at a time: row i's answer is the data of the token its
    pointer names (token id = data id * N + pointer)."""
    table = data_table(2)
    out = np.zeros(tokens.shape + (2,))
    for b in range(tokens.shape[0]):
        for i in range(N):
            pointer = int(tokens[b, i]) % N
            out[b, i] = table[int(tokens[b, pointer]) // N]
    return out


def test_registered_beside_the_default_qsa_reduction():
    red = get_reduction("qsa", "index@q1")
    assert red is index_to_qsa_q1 and red.split == "prefix-suffix" and red.source == "SHT-qSA-RNN"
    assert red.length(913) == 914 and red.owners(3).tolist() == [1, 1, 1, 2]
    default = get_reduction("qsa")  # untouched: DISJ_q at N = 2q + 1
    assert default.name == "disjointness->qsa" and default.length(5) == 11


def test_every_input_up_to_n_10_and_random_at_the_crossover():
    report = check_reduction(index_to_qsa_q1, n_max=10, n_random=[913], samples=16, seed=3)
    assert report.exhaustive_sizes == tuple(range(1, 11))
    assert report.exhaustive_instances == sum(n * 2 ** n for n in range(1, 11))


def test_ground_truth_against_a_plain_loop_and_every_index_reads_x_j():
    task = QsaOnePointer()
    batch = task.sample(7, 64, np.random.default_rng(0))
    np.testing.assert_array_equal(task.ground_truth(batch), _answer_by_loop(batch.tokens, 7))
    n = 5
    xs = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64)  # every x
    for j in range(n):
        enc = index_to_qsa_q1.encode(xs, np.full(len(xs), j), n).task_batch
        last = _answer_by_loop(enc.tokens, n + 1)[:, n]  # (B, 2)
        np.testing.assert_array_equal(last[:, 0], np.where(xs[:, j] == 1, 1.0, -1.0))
        # the features carry the same rows (z; pointer; i) the attention unit reads
        np.testing.assert_array_equal(enc.features[:, :, 2], enc.tokens % (n + 1))


def test_a_broken_layout_fails_the_check():
    off_by_one = dataclasses.replace(  # Bob points one past his index: reads x_{j+1}
        index_to_qsa_q1, encoder=lambda xp, x, y, n: index_to_qsa_q1.encoder(xp, x, (y + 1) % n, n))
    with pytest.raises(ReductionCounterexample):
        check_reduction(off_by_one, n_max=4, n_random=None)


def test_witness_below_the_bound_is_genuine_through_the_unsplit_model():
    N = 65
    check = qsa_witness_check(SPEC, N, FMT, lower_width=5, weak_width=1, seed=2)
    assert check.status == "found", check.detail
    bits, need = check.data["bits_per_message"], check.data["lower_bound_bits"]
    assert bits == 8 < need == N - 1
    # re-run here, independently of the check: x and x' give bit-identical unsplit outputs on y,
    # and f(x, y) != f(x', y), so the model is wrong on one of them
    sim = prepare("qsa", "elman", N - 1, FMT, width=1, seed=2, problem="index@q1")
    x = np.array([[int(c) for c in check.data[k]] for k in ("x", "x_prime")])
    y = np.array([int(check.data["y"])] * 2)
    res = run_batch(sim, x, y)
    logits = np.asarray(res.reference.logits)
    assert np.array_equal(logits[0], logits[1]) and x[0, y[0]] != x[1, y[0]]
    assert bool(res.model_answer[0]) == bool(res.model_answer[1])


def test_no_witness_asked_at_or_above_the_bound():
    check = qsa_witness_check(SPEC, 65, FMT, lower_width=5, weak_width=5)
    assert check.status == "not checked" and "bound allows" in check.detail


def test_a_complete_search_with_no_collision_below_the_bound_fails(monkeypatch):
    from reductions.separations import checks, claims_qsa
    from reductions.separations.checks import Check

    monkeypatch.setattr(claims_qsa, "_sampled_witness", lambda *a, **k: None)
    monkeypatch.setattr(checks, "witness_check", lambda *a, **k: Check(
        "witness", "not found", "none", {"complete": True, "bits_per_message": 8, "lower_bound_bits": 64}))
    assert qsa_witness_check(SPEC, 65, FMT, lower_width=5).status == "FAILED"


def _unit(N, seed=0):
    from models.constructions import get_construction

    return get_construction("qsa-random-keys").make(1, FMT, seed=seed, length=N, dim=QSA_DIM).model


def test_split_faithful_on_every_input_and_at_least_n_bits():
    n = 6
    out = verify("qsa", "transformer", n, FMT, problem="index@q1", model=_unit(n + 1), exhaustive=True)
    assert out["instances"] == n * 2 ** n and out["faithful"] == 1.0 and out["correct"] == 1.0
    assert out["lower_bound_bits"] == n <= out["bits_per_message"]
    check = qsa_protocol_check(SPEC, n + 1, FMT)
    assert check.status == "passed" and check.data["bits"] == out["bits_per_message"]


def test_split_tampered_message_changes_bobs_answer():
    n = 6
    sim = prepare("qsa", "transformer", n, FMT, problem="index@q1", model=_unit(n + 1))
    xs = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64)
    x, y = np.repeat(xs, n, axis=0), np.tile(np.arange(n), len(xs))

    def run(tamper):
        batch = run_batch(sim, x, y)
        sink = {}
        protocol = sim.split.protocol(sink=sink)
        steps = tuple(dataclasses.replace(s, send=lambda view, s=s: tamper(s.send(view))) for s in protocol.steps)
        alice, bob, public = sim.split.party_inputs(batch.encoded, y)
        run_protocol(dataclasses.replace(protocol, steps=steps), alice, bob, public)
        return batch, sink["bob"]

    batch, honest = run(lambda rows: rows)
    np.testing.assert_array_equal(honest.logits, batch.reference.logits)
    _, flipped = run(lambda rows: BitRows(1 - np.asarray(rows.array)))
    assert not np.array_equal(flipped.logits, batch.reference.logits)


def test_claim_shown_at_its_crossover_and_not_without_a_weak_model_below_the_bound():
    r = qsa_claim(SPEC, FMT, samples=4)
    assert r.verdict == "shown" and r.crossover_N == 914
    by = {c.name: c for c in r.checks}
    assert by["witness"].data["bits_per_message"] < by["witness"].data["lower_bound_bits"] == 913
    assert by["protocol"].data["faithful"] == 1.0 and by["protocol"].data["bits"] >= 913
    weak = qsa_claim(SPEC, FMT, samples=4, weak_width=100)  # no model below the bound to exhibit
    assert weak.verdict == "not shown" and {c.name: c.status for c in weak.checks}["witness"] == "not checked"


def test_weights_construction_built_at_q_1_and_the_reductions_length():
    out = verify("qsa", "transformer", 5, FMT, problem="index@q1", weights="construction", exhaustive=True)
    assert out["instances"] == 5 * 2 ** 5 and out["faithful"] == 1.0 and out["correct"] == 1.0
    sim = prepare("qsa", "transformer", 5, FMT, problem="index@q1", weights="construction")
    assert (int(sim.model.q), int(sim.model.length)) == (1, 6)
    default = prepare("qsa", "transformer", 3, FMT, weights="construction")  # DISJ_q: q = n, N = 2q + 1
    assert (int(default.model.q), int(default.model.length)) == (3, 7)
