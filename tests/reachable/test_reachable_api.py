"""The engine behind verify, witness, simulate --trajectory, the sweep operations and the CLI."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

import cli
from reductions.search.reachable.api import reachable_analysis
from reductions.simulate import simulate, verify
import reductions.operations  # noqa: F401  (registers verify, witness, reachable, construct)
from commcomp.sweep.operations import run_operation
from reductions.search.witness import find_witness


def test_witness_proved_at_n_1000_in_seconds():
    w = find_witness("index-lookup", "lstm", 1000, "fixed:4:2", width=2, seed=0)
    assert w["method"] == "reachable-states" and w["complete"] and w["found"]
    assert w["tried"] == 2 ** 1000 and w["distinct_messages"] == 4
    assert w["model_answer_x"] == w["model_answer_x_prime"] and w["truth_x"] != w["truth_x_prime"]
    assert w["outputs_identical"] and len(w["x"]) == 1000 and w["x"] != w["x_prime"]
    for field in ("found", "complete", "method", "x", "x_prime", "y", "wrong_on", "model_answer_x",
                  "model_answer_x_prime", "truth_x", "truth_x_prime"):
        assert field in w


def test_verify_chooses_and_reports_its_method():
    v = verify("index-lookup", "gru", 300, "fixed:4:2", width=2, exhaustive=True)
    assert v["method"] == "reachable-states" and v["instances"] == 300 * 2 ** 300 and v["exhaustive"]
    assert 0 <= v["correct_count"] <= v["instances"] and v["faithful_count"] == v["instances"]
    small = verify("string-equality", "gru", 4, "fixed:4:2", width=2, exhaustive=True)
    assert small["method"] == "prefix-tree" and "INDEX-type" in small["fallback"]
    budget = verify("index-lookup", "lstm", 8, "float32", width=8, exhaustive=True, max_states=4)
    assert budget["method"] == "prefix-tree" and budget["fallback"].startswith("budget")
    assert verify("index-lookup", "lstm", 4, "float32", instances=10)["method"] == "sample"


def test_analysis_says_where_the_budget_ends_it():
    out = reachable_analysis("index-lookup", "lstm", 40, "float32", width=8, max_states=100)
    assert not out["complete"] and "budget" in out["stopped"]
    assert not out["witness"]["found"] and not out["witness"]["complete"]
    assert out["distinct_messages_per_level"][:7] == [1, 2, 4, 8, 16, 32, 64]


def test_trajectory_ends_in_the_message_sent():
    out = simulate("index-lookup", "lstm", 20, "fixed:8:4", width=3, seed=4, trajectory=True)
    steps = out["trajectory"]
    assert [s["position"] for s in steps] == list(range(20)) and out["trajectory_matches_message"]
    assert steps[-1]["hex"] == out["rounds"][0]["hex"]
    assert "trajectory" not in simulate("index-lookup", "lstm", 4, "fixed:8:4", width=3)


def test_sweep_operation_and_big_counts_in_the_store(tmp_path):
    out = run_operation("reachable", {"task": "index-lookup", "arch": "elman", "n": 80, "precision": "fixed:4:2",
                                      "width": 2}, seed=0)
    assert out["complete"] and out["witness_found"] and out["instances"] == 80 * 2 ** 80
    argv = ["sweep", "run", "--op", "reachable", "--param", "task=index-lookup", "--param", "arch=elman",
            "--param", "precision=fixed:4:2", "--param", "width=2", "--axis", "n=70,90", "--workers", "0",
            "--db", str(tmp_path / "s.sqlite")]
    assert cli.main(argv) == 0


def test_cli_plot_and_json(tmp_path, capsys):
    png = tmp_path / "curve.png"
    have_matplotlib = importlib.util.find_spec("matplotlib") is not None  # the `plot` extra
    argv = ["verify", "index-lookup", "--arch", "lstm", "--n", "200", "--precision", "fixed:8:4", "--width", "4",
            "--exhaustive", "--format", "json"] + (["--plot", str(png)] if have_matplotlib else [])
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "reachable-states" and out["instances"] == 200 * 2 ** 200
    if have_matplotlib:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    argv = ["witness", "index-lookup", "--arch", "lstm", "--n", "500", "--precision", "fixed:4:2", "--width", "2"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "reachable-states" in text and "2^500" in text


@pytest.mark.parametrize("method", ["reachable-states", "prefix-tree", "enumerate"])
def test_every_exhaustive_method_gives_the_same_counts(method):
    v = verify("index-lookup", "dss", 6, "fixed:6:3", width=2, exhaustive=True, method=method)
    ref = verify("index-lookup", "dss", 6, "fixed:6:3", width=2, exhaustive=True, method="plain")
    assert v["method"] == method and ref["method"] == "enumerate"
    assert (v["correct_count"], v["faithful_count"], v["distinct_messages"]) == \
        (ref["correct_count"], ref["faithful_count"], ref["distinct_messages"])
    assert np.isclose(v["correct"], ref["correct"])


@pytest.mark.parametrize("kw", [dict(task="index-lookup", arch="lstm", n=1000, precision="fixed:4:2", width=2),
                                dict(task="index-lookup", arch="lstm", n=4, precision="float32", width=8),
                                dict(task="index-lookup", arch="lstm", n=30, precision="float32", width=8,
                                     budget=64, max_states=8),
                                dict(task="string-equality", arch="transformer", n=200, precision="fixed:4:2",
                                     width=1)])
def test_every_witness_outcome_has_the_fields_callers_read(kw):
    """What `commcomp separations` reads (found, complete, method, the inputs, answers and truths)."""
    w = find_witness(**kw, seed=0)
    for field in ("found", "complete", "method", "x", "x_prime", "y", "wrong_on", "model_answer_x",
                  "model_answer_x_prime", "truth_x", "truth_x_prime", "tried", "bits_per_message",
                  "lower_bound_bits"):
        assert field in w, field
    assert w["method"] in ("reachable-states", "prefix-tree", "enumerate", "sample")
    assert isinstance(w["complete"], bool) and (w["found"] or w["x"] is None)


def test_memory_budget_stops_the_exploration_and_says_so():
    out = reachable_analysis("index-lookup", "lstm", 200, "fixed:8:4", width=4, max_bytes=20_000)
    assert not out["complete"] and "bytes" in out["stopped"] and "max_bytes 20000" in out["stopped"]
    full = reachable_analysis("index-lookup", "lstm", 200, "fixed:8:4", width=4)
    assert full["complete"] and len(out["distinct_messages_per_level"]) < len(full["distinct_messages_per_level"])


@pytest.mark.parametrize("task,n", [("string-equality", 6), ("index-lookup", 5)])
def test_transformer_trajectory_is_alices_running_partial_sums(task, n):
    """One and two rounds: the sums after her last position are the message she sent."""
    out = simulate(task, "transformer", n, "fixed:4:2", width=1, seed=2, trajectory=True)
    steps = out["trajectory"]
    assert [s["position"] for s in steps] == out["owners"]["alice"] and out["trajectory_matches_message"]


def test_a_count_too_costly_falls_back_and_says_why(monkeypatch):
    import reductions.search.reachable.api as api

    monkeypatch.setattr(api, "MAX_COUNT_ADDITIONS", 10)
    out = reachable_analysis("index-lookup", "lstm", 100, "fixed:8:4", width=4)
    assert out["complete"] and out["correct_count"] is None and "big-integer additions" in out["correct_count_missing"]
    small = verify("index-lookup", "lstm", 8, "fixed:8:4", width=4, exhaustive=True)  # int64 all along: counted
    assert small["method"] == "reachable-states"
    with pytest.raises(Exception, match="big-integer additions"):
        verify("index-lookup", "lstm", 100, "fixed:8:4", width=4, exhaustive=True, method="reachable-states")
