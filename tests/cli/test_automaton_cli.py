"""``commcomp automaton`` and ``verify``'s wrong inputs from the command line."""

from __future__ import annotations

import json

import cli


def test_automaton_json_fields_and_dot(tmp_path, capsys):
    dot = tmp_path / "d.dot"
    assert cli.main(["automaton", "--task", "dyck", "--arch", "rnn", "--weights", "construction", "--precision",
                     "fixed:2:0", "--against", "dyck-2-3", "--format", "json", "--dot", str(dot)]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("closed", "closed_at_length", "reachable_states", "minimal_states", "equivalent", "counterexample",
                "aperiodic", "period_witness"):
        assert key in out
    assert out["equivalent"] is False and out["counterexample"]["word"] == "((()))" and out["aperiodic"] is True
    assert "dot" not in out and dot.read_text().startswith("digraph") and dot.read_text().count("doublecircle") == 1


def test_automaton_errors_are_one_line(capsys):
    assert cli.main(["automaton", "--task", "dyck", "--arch", "rnn", "--weights", "construction", "--precision",
                     "fixed:2:0", "--against", "palindromes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown language" in err
    assert cli.main(["automaton", "--task", "dyck", "--arch", "transformer", "--precision", "fixed:4:2"]) == 2
    assert "recurrent" in capsys.readouterr().err


def test_verify_table_lists_a_wrong_input(capsys):
    assert cli.main(["verify", "index-lookup", "--arch", "lstm", "--n", "8", "--precision", "fixed:4:2", "--width",
                     "2", "--exhaustive"]) == 0
    text = capsys.readouterr().out
    assert "1024 wrong" in text and "wrong input" in text and "(re-run)" in text
