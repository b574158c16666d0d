"""Reachable partial sums of the 1-layer Transformer split against brute force over every x."""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.backend import to_numpy
from commcomp.problems import all_bit_strings
from reductions.base import ALICE
from reductions.search.reachable.transformer import reachable_partial_sums
from reductions.simulate.setup import prepare


def _brute_sizes(sim, y):
    """Distinct exact partial sums over Alice's first t positions, for every t, over all x."""
    n = sim.n
    xs = all_bit_strings(n)
    tokens = sim.reduction.encode(xs, np.repeat(np.asarray(y)[None, ...], len(xs), axis=0), n).tokens
    positions = np.nonzero(sim.split.owners == ALICE)[0]
    sizes = []
    for t in range(len(positions) + 1):
        rows = []
        for o in sim.split.read:
            q = sim.model.query(tokens[:, int(o)], int(o))
            part = sim.model.partial(tokens, positions[:t], query=q, output_position=int(o))
            rows += [to_numpy(part.numerator).reshape(len(xs), -1), to_numpy(part.denominator).reshape(len(xs), -1)]
        sizes.append(len(np.unique(np.concatenate(rows, axis=1), axis=0)))
    return sizes


@pytest.mark.parametrize("task,precision,width", [("string-equality", "fixed:4:2", 1),
                                                  ("string-equality", "fixed:8:4", 2),
                                                  ("string-disjointness", "fixed:6:3", 1),
                                                  ("multi-index-lookup", "fixed:4:2", 1)])
def test_one_round_partial_sums_equal_brute_force(task, precision, width):
    n = 7
    out = reachable_partial_sums(task, n=n, precision=precision, width=width, seed=3)
    sim = prepare(task, "transformer", n, precision, width=width, seed=3)
    sizes = _brute_sizes(sim, sim.problem.sample(n, 1, np.random.default_rng(0))[1][0])
    assert out["rounds"] == 1 and out["complete"] and out["runs"][0]["sizes"] == sizes
    assert out["sums_match_model"] and out["faithful"]
    w = out["witness"]
    assert w["found"] == (sizes[-1] < 2 ** n) and w["complete"]  # rows are distinct: any collision
    if w["found"]:
        assert w["model_answer_x"] == w["model_answer_x_prime"] and w["truth_x"] != w["truth_x_prime"]


def test_two_rounds_explore_each_query():
    out = reachable_partial_sums("index-lookup", n=6, precision="fixed:4:2", width=1, seed=0)
    sim = prepare("index-lookup", "transformer", 6, "fixed:4:2", width=1, seed=0)
    assert out["rounds"] == 2 and out["queries_explored"] == 6
    for run in out["runs"]:
        assert run["sizes"] == _brute_sizes(sim, np.int64(run["y"]))


def test_witness_uses_the_partial_sums_of_a_one_round_split():
    from reductions.search.witness import find_witness

    w = find_witness("string-equality", "transformer", 300, "fixed:4:2", width=1)
    assert w["method"] == "reachable-states" and w["complete"] and w["found"]
    assert w["model_answer_x"] == w["model_answer_x_prime"] and w["truth_x"] != w["truth_x_prime"]
    two = find_witness("index-lookup", "transformer", 6, "fixed:4:2", width=1)
    assert two["method"] != "reachable-states" and "2-round" in two["fallback"]


def test_analysis_and_sweep_report_what_the_partial_sums_reach():
    from reductions.search.reachable.api import reachable_analysis
    from commcomp.sweep.operations import run_operation

    out = reachable_analysis("string-equality", "transformer", 7, "fixed:4:2", width=1, seed=3)
    assert out["method"] == "reachable-states" and out["rounds"] == 1 and out["complete"]
    assert out["distinct_messages"] == out["runs"][0]["sizes"][-1]
    row = run_operation("reachable", {"task": "string-equality", "arch": "transformer", "n": 7,
                                      "precision": "fixed:4:2", "width": 1}, seed=3)
    assert row["witness_found"] == out["witness"]["found"]
