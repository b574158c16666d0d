"""Witnesses: found by message collision, then checked by running the unsplit model ourselves."""

from __future__ import annotations


import numpy as np
import pytest

from commcomp.problems import get_problem
from reductions.registry import get_reduction
from reductions.simulate import prepare
from reductions.search.witness import find_witness


def _bits(text):
    return np.array([[int(c) for c in text]], dtype=np.uint8)


def _check_against_unsplit_model(w, task, arch, n, precision, width, **kw):
    """Rebuild the same model and run it, unsplit, on (x, y) and (x', y)."""
    sim = prepare(task, arch, n, precision, width=width, **kw)
    reduction, problem = get_reduction(task), get_problem(sim.problem.name)
    x, x2 = _bits(w["x"]), _bits(w["x_prime"])
    y = np.array([w["y"]]) if isinstance(w["y"], int) else _bits(w["y"])
    assert not np.array_equal(x, x2)
    tokens = reduction.encode(np.concatenate([x, x2]), np.concatenate([y, y]), n).tokens
    if sim.split.kind == "recurrent":
        s = sim.split.split_at
        state = sim.model.run(tokens[:, :s])  # Alice's messages really are equal
        bits = sim.model.state_to_bits(state).array
        np.testing.assert_array_equal(bits[0], bits[1])
        _, ys = sim.model.run_layers(tokens)  # (2, N, d): every position's top output
        logits = np.stack([sim.model.readout(None, ys[:, t]) for t in sim.split.read], axis=1)
    else:
        logits = np.stack([sim.model.forward(tokens, output_position=t) for t in sim.split.read], axis=1)
    np.testing.assert_array_equal(logits[0], logits[1])  # the unsplit model answers both the same
    answer = reduction.decode(np.argmax(logits, axis=-1), np.concatenate([y, y]))
    assert [bool(a) for a in answer] == [w["model_answer_x"], w["model_answer_x_prime"]]
    truth = problem.evaluate(np.concatenate([x, x2]), np.concatenate([y, y]))
    assert [bool(t) for t in truth] == [w["truth_x"], w["truth_x_prime"]]
    assert truth[0] != truth[1]
    wrong = "x" if answer[0] != truth[0] else "x_prime"
    assert w["wrong_on"] == wrong and w["outputs_identical"]


def test_lstm_width_2_on_index_lookup_within_the_budget():
    """Found by the birthday search within its default budget of inputs (work counted, not timed)."""
    from reductions.search.witness import DEFAULT_BUDGET

    w = find_witness("index-lookup", "lstm", 24, "fixed:4:2", width=2, seed=0, method="sample")
    assert 0 < w["tried"] <= DEFAULT_BUDGET
    assert w["found"] and w["method"] == "sample" and w["search"] == "birthday" and not w["complete"]
    assert w["bits_per_message"] == 16 < w["lower_bound_bits"] == 24
    for field in ("task", "arch", "n", "precision", "width", "bits_per_message", "lower_bound_bits", "found",
                  "x", "x_prime", "y", "model_answer_x", "model_answer_x_prime", "truth_x", "truth_x_prime",
                  "tried"):
        assert field in w
    _check_against_unsplit_model(w, "index-lookup", "lstm", 24, "fixed:4:2", 2)


@pytest.mark.parametrize("task,arch", [("string-equality", "gru"), ("string-disjointness", "elman"),
                                       ("multi-index-lookup", "lstm")])
def test_enumerated_witnesses(task, arch):
    w = find_witness(task, arch, 8, "fixed:4:2", width=1, method="prefix-tree")
    assert w["found"] and w["method"] == "prefix-tree" and w["tried"] <= 2 ** 8 and w["complete"]
    _check_against_unsplit_model(w, task, arch, 8, "fixed:4:2", 1)
    auto = find_witness(task, arch, 8, "fixed:4:2", width=1)  # the default: every reachable state
    assert auto["found"] and auto["method"] == "reachable-states" and auto["complete"]
    _check_against_unsplit_model(auto, task, arch, 8, "fixed:4:2", 1)


def test_one_round_transformer_witness():
    w = find_witness("string-equality", "transformer", 8, "fixed:4:2", width=1)
    assert w["found"]
    _check_against_unsplit_model(w, "string-equality", "transformer", 8, "fixed:4:2", 1)


def test_nothing_found_says_it_proves_nothing():
    w = find_witness("index-lookup", "lstm", 4, "float32", width=8, budget=100, method="prefix-tree")
    assert not w["found"] and w["tried"] == 16 and w["method"] == "prefix-tree" and w["complete"]
    assert "proved" in w["note"] and w["x"] is None
    w = find_witness("index-lookup", "lstm", 30, "float32", width=8, budget=64, method="sample")
    assert not w["found"] and w["tried"] == 64 and w["method"] == "sample" and not w["complete"]
    assert "proves nothing" in w["note"]


def test_reachable_budget_falls_back_and_says_so():
    w = find_witness("index-lookup", "lstm", 30, "float32", width=8, budget=64, max_states=8)
    assert w["method"] == "sample" and "budget" in w["fallback"] and not w["complete"]
    w = find_witness("index-lookup", "lstm", 4, "float32", width=8)
    assert w["method"] == "reachable-states" and w["complete"] and not w["found"]
    assert w["note"].startswith("proved: every input sends a distinct message")


def test_time_limit_ends_every_phase_with_an_honest_partial_result():
    """A deadline already past: the reachable exploration stops at its first position, no sampled chunk
    runs, and the result says so (never complete); a limit far away changes nothing but the fields."""
    from commcomp.errors import InvalidParameterError

    kw = dict(width=2, seed=1)
    full = find_witness("index-lookup", "elman", 10, "fixed:4:2", **kw)
    assert full["complete"]  # the reachable states cover every input at n = 10
    cut = find_witness("index-lookup", "elman", 10, "fixed:4:2", time_limit=1e-9, **kw)
    assert cut["stopped_at_time_limit"] and not cut["complete"] and cut["tried"] == 0 and not cut["found"]
    assert "time limit" in cut["fallback"] and "proves nothing" in cut["note"]
    roomy = find_witness("index-lookup", "elman", 10, "fixed:4:2", time_limit=1e6, **kw)
    assert roomy.pop("time_limit") == 1e6 and roomy.pop("stopped_at_time_limit") is False
    skip = {"seconds", "seconds_explore"}
    assert {k: v for k, v in roomy.items() if k not in skip} == {k: v for k, v in full.items() if k not in skip}
    for bad in (0, -1.0, float("inf"), "3"):
        with pytest.raises(InvalidParameterError, match="time_limit"):
            find_witness("index-lookup", "elman", 10, "fixed:4:2", time_limit=bad, **kw)
