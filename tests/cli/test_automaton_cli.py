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


def test_dfa_json_is_written_at_any_size_and_read_back_as_a_target(tmp_path, capsys):
    """--dfa-json writes the minimal DFA as a DFA file (here 64 states of a random LSTM); --against
    that file proves the same model equivalent to it, and another model (another seed) is refuted
    with a counterexample re-run through that model."""
    dfa = tmp_path / "m.json"
    base = ["automaton", "--task", "dyck", "--arch", "lstm", "--precision", "fixed:4:2", "--width", "4",
            "--format", "json"]
    assert cli.main(base + ["--dfa-json", str(dfa)]) == 0
    out = json.loads(capsys.readouterr().out)
    data = json.loads(dfa.read_text())
    assert "dfa_file" not in out and len(data["delta"]) == out["minimal_states"] > 8
    assert data == out["minimal_dfa"]
    assert cli.main(base + ["--against", str(dfa)]) == 0
    assert json.loads(capsys.readouterr().out)["equivalent"] is True
    assert cli.main(base + ["--against", str(dfa), "--seed", "1"]) == 0
    other = json.loads(capsys.readouterr().out)
    assert other["equivalent"] is False and other["counterexample"]["model_answer"] == \
        other["counterexample"]["automaton_answer"] != int(other["counterexample"]["in_language"])


def test_dfa_json_of_an_open_state_set_is_refused_and_nothing_is_written(tmp_path, capsys):
    dfa = tmp_path / "m.json"
    assert cli.main(["automaton", "--task", "dyck", "--arch", "lstm", "--precision", "float32", "--width", "8",
                     "--max-states", "50", "--dfa-json", str(dfa)]) == 2
    assert "did not close" in capsys.readouterr().err and not dfa.exists()
