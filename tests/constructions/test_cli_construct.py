"""``commcomp construct`` and ``commcomp list constructions``."""

from __future__ import annotations

import json

import numpy as np

import cli
from models.files import load_model
from models.constructions import get_construction


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_constructions_json(capsys):
    code, out, _ = run(capsys, "list", "constructions", "--format", "json")
    assert code == 0
    names = {r["name"] for r in json.loads(out)}
    assert {"index-lookup-1tf", "string-equality-2tf", "k-dnf-2tf"} <= names


def test_construct_writes_a_loadable_model_and_reports(capsys, tmp_path):
    path = tmp_path / "il.npz"
    code, out, _ = run(capsys, "construct", "il", "--n", "32", "--precision", "fixed:8:4",
                       "--out", str(path), "--format", "json")
    assert code == 0
    rep = json.loads(out)
    assert rep["width"] == 2 + 2 * 5 and rep["layers"] == rep["heads"] == 1 and rep["k"] == 5
    assert rep["check"]["ok"] and rep["precision"] == "fixed:8:4" and "beta" in rep
    assert [p.name for p in tmp_path.iterdir()] == ["il.npz"]  # no temporary file left
    model = load_model(path)
    ref = get_construction("index-lookup").make(32, "fixed:8:4").model
    tokens = np.concatenate([np.ones((3, 32), dtype=np.int64), [[2], [9], [33]]], axis=1)
    assert np.array_equal(model.forward(tokens), ref.forward(tokens))


def test_construct_table_with_options(capsys):
    code, out, _ = run(capsys, "construct", "string-disjointness", "--n", "5", "--option", "codes=jl")
    assert code == 0 and "BHBK-DISJ-2TF" in out and "1024/1024 correct" in out


def test_construct_bad_input_one_line_exit_2(capsys, tmp_path):
    for argv in (["construct", "no-such-task", "--n", "4"],
                 ["construct", "il", "--n", "4", "--option", "bogus=1"],
                 ["construct", "il", "--n", "4", "--precision", "fixed:99:3"],
                 ["construct", "il", "--n", "4", "--out", str(tmp_path / "nodir" / "m.npz")]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, argv
