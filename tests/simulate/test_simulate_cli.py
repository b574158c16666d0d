"""``commcomp simulate / verify / witness`` and ``list tasks / archs``: JSON fields, tables, exit codes."""

from __future__ import annotations

import json

import pytest

import cli
from commcomp.architectures import ARCHITECTURES
from reductions.registry import TASKS

SIMULATE_FIELDS = ("task", "problem", "arch", "n", "precision", "width", "seed", "x", "y", "owners", "rounds",
                   "bits_sent", "model_output", "protocol_output", "faithful", "answer", "truth", "correct",
                   "lower_bound_bits", "theorem")
VERIFY_FIELDS = ("task", "problem", "arch", "n", "precision", "width", "instances", "exhaustive", "faithful",
                 "correct", "bits_per_message", "lower_bound_bits", "distinct_messages", "seconds")
WITNESS_FIELDS = ("task", "arch", "n", "precision", "width", "bits_per_message", "lower_bound_bits", "found",
                  "x", "x_prime", "y", "model_answer_x", "model_answer_x_prime", "truth_x", "truth_x_prime",
                  "tried")


def _json(capsys, argv):
    assert cli.main(argv + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_json(capsys):
    out = _json(capsys, ["simulate", "index-lookup", "--arch", "lstm", "--n", "8", "--precision", "fixed:8:4",
                         "--width", "4", "--x", "10110010", "--y", "2"])
    for field in SIMULATE_FIELDS:
        assert field in out, field
    assert out["precision"] == {"name": "fixed:8:4", "bits": 8}
    assert out["x"] == "10110010" and out["y"] == 2 and out["truth"] is True
    assert out["owners"]["alice"] == list(range(8)) and out["owners"]["bob"] == [8]
    (msg,) = out["rounds"]
    assert (msg["sender"], msg["receiver"], msg["bits"]) == ("alice", "bob", 64) and len(msg["hex"]) == 16
    assert out["bits_sent"] == 64 and out["faithful"] is True and out["theorem"] == "BHBK-IL-RNN"
    assert out["model_output"] == out["protocol_output"]


def test_simulate_table_shows_the_steps(capsys):
    assert cli.main(["simulate", "string-equality", "--arch", "transformer", "--n", "3", "--precision",
                     "fixed:8:4", "--width", "2"]) == 0
    text = capsys.readouterr().out
    for piece in ("task sequence", "alice -> bob", "partial sums", "Bob adds", "faithful", "lower bound"):
        assert piece in text, piece


def test_verify_json(capsys):
    out = _json(capsys, ["verify", "index-lookup", "--arch", "gru", "--n", "5", "--precision", "fixed:6:3",
                         "--width", "2", "--exhaustive"])
    for field in VERIFY_FIELDS:
        assert field in out, field
    assert out["instances"] == 5 * 32 and out["exhaustive"] is True and out["faithful"] == 1.0
    out = _json(capsys, ["verify", "index-lookup", "--arch", "transformer", "--n", "5", "--precision",
                         "fixed:6:3", "--width", "2", "--instances", "50", "--seed", "3"])
    assert out["instances"] == 50 and out["exhaustive"] is False and out["protocol_rounds"] == 2


def test_witness_json_and_table(capsys):
    argv = ["witness", "index-lookup", "--arch", "lstm", "--n", "24", "--precision", "fixed:4:2", "--width", "2"]
    out = _json(capsys, argv)
    for field in WITNESS_FIELDS:
        assert field in out, field
    assert out["found"] is True and out["truth_x"] != out["truth_x_prime"]
    assert cli.main(argv) == 0
    assert "wrong on" in capsys.readouterr().out


def test_list_tasks_and_archs_read_the_registries(capsys):
    tasks = _json(capsys, ["list", "tasks"])
    from reductions.registry import EXTRA_TASKS

    assert sorted(r["name"] for r in tasks) == sorted([*TASKS, *EXTRA_TASKS])   # index-first-lookup (issue 20)
    archs = _json(capsys, ["list", "archs"])
    assert [r["name"] for r in archs] == list(ARCHITECTURES)
    by_name = {r["name"]: r for r in archs}
    assert by_name["hybrid"]["simulation"] == "prefix/suffix, 3 messages" and by_name["lstm"]["simulation"].startswith("one-way")


@pytest.mark.parametrize("argv", [
    ["simulate", "no-such-task", "--arch", "lstm", "--n", "4", "--precision", "8"],
    ["simulate", "dyck", "--arch", "hybrid", "--n", "4", "--precision", "8"],
    ["simulate", "istree", "--arch", "transformer", "--layers", "2", "--n", "3", "--precision", "8", "--cot"],
    ["simulate", "dyck", "--arch", "lstm", "--n", "4", "--precision", "8"],
    ["simulate", "index-lookup", "--arch", "lstm", "--n", "0", "--precision", "8"],
    ["simulate", "index-lookup", "--arch", "lstm", "--n", "4", "--precision", "8", "--width", "0"],
    ["simulate", "index-lookup", "--arch", "lstm", "--n", "99999999", "--precision", "8"],
    ["simulate", "index-lookup", "--arch", "lstm", "--n", "4", "--precision", "8", "--x", "012"],
    ["simulate", "index-lookup", "--arch", "lstm", "--n", "4", "--precision", "nope"],
    ["verify", "index-lookup", "--arch", "lstm", "--n", "4", "--precision", "8"],
    ["verify", "string-equality", "--arch", "lstm", "--n", "40", "--precision", "8", "--exhaustive"],
    ["verify", "index-lookup", "--arch", "lstm", "--n", "40", "--precision", "8", "--exhaustive",
     "--method", "prefix-tree"],
    ["verify", "string-equality", "--arch", "lstm", "--n", "4", "--precision", "8", "--exhaustive",
     "--method", "reachable-states"],
    ["witness", "index-lookup", "--arch", "lstm", "--n", "4", "--precision", "8", "--width", "2",
     "--plot", "/nonexistent-folder/curve.png"],
    ["witness", "index-lookup", "--arch", "lstm", "--n", "4", "--precision", "8"],
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("commcomp")


def test_weights_from_a_file(capsys, tmp_path):
    from models.files import save_model
    from models.registry import build_model

    path = save_model(build_model("gru", vocab_size=6, width=3, n_outputs=2, seed=5), tmp_path / "gru.npz")
    out = _json(capsys, ["simulate", "index-lookup", "--arch", "gru", "--n", "4", "--precision", "fixed:8:4",
                         "--weights", str(path), "--x", "0110", "--y", "1"])
    assert out["weights"] == str(path) and out["width"] == 3 and out["bits_sent"] == 3 * 8
    assert out["faithful"] is True


def test_missing_construction_is_exit_2(capsys):
    argv = ["simulate", "index-lookup", "--arch", "gru", "--n", "4", "--precision", "8", "--weights",
            "construction"]
    assert cli.main(argv) == 2
    assert "construction" in capsys.readouterr().err
