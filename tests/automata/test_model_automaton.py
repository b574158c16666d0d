"""Model automata against brute force: every string up to a length, run through the real model."""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.automata import accepts, minimize
from commcomp.automata.dfa import run_word
from models.constructions.diagonal import diagonal_model
from models.constructions.dyck_rnn import make_dyck_rnn
from models.registry import build_model
from reductions.search.automaton.api import automaton_analysis, automaton_of_model
from reductions.search.automaton.extract import extract_automaton


def _all_words(A, length):
    """Every word of exactly ``length`` letters ``(A^length, length)``, in letter order."""
    if length == 0:
        return np.zeros((1, 0), dtype=np.int64)
    return np.stack(np.meshgrid(*[np.arange(A)] * length, indexing="ij"), -1).reshape(-1, length)


def _model_answers(model, tokens, suffix):
    """The unsplit model on each row (tokens, then the suffix), one row at a time (batch 1: no
    batch-shape effect can reach the reference)."""
    out = []
    for row in tokens:
        seq = np.asarray([list(row) + list(suffix)], dtype=np.int64)
        if seq.shape[1] == 0:
            logits = model.readout(model.init_state(1))
        else:
            _, logits = model.run_with_output(seq)
        out.append(int(np.argmax(np.asarray(logits)[0, :2])))
    return np.asarray(out)


CASES = [
    ("lstm", "fixed:4:2", 2, [0, 1, 2, 3], [4]),
    ("gru", "fixed:4:2", 3, [0, 1, 2, 3], [4]),
    ("elman", "fixed:3:1", 3, [0, 1], []),
    ("mamba", "fixed:4:2", 2, [0, 1], [4]),
]


def test_an_answer_that_is_not_a_function_of_the_state_is_refused():
    model = build_model("mamba", vocab_size=5, width=2, n_outputs=2, precision="fixed:4:2", seed=3)
    with pytest.raises(Exception, match="not a function of the state"):
        extract_automaton(model, [0, 1], [])


@pytest.mark.parametrize("arch,precision,width,letters,suffix", CASES)
def test_minimal_dfa_equals_the_model_on_every_string_up_to_a_length(arch, precision, width, letters, suffix):
    model = build_model(arch, vocab_size=5, width=width, n_outputs=2, precision=precision, seed=3)
    auto = extract_automaton(model, letters, suffix, max_states=4000)
    assert auto.closed
    minimal = minimize(auto.dfa)
    A, checked = len(letters), 0
    for length in range(0, 7 if A == 2 else 5):
        words = _all_words(A, length)
        want = _model_answers(model, np.asarray(letters)[words], suffix)
        got = np.array([int(minimal.output[run_word(minimal, w)]) for w in words])
        full = np.array([int(auto.dfa.output[run_word(auto.dfa, w)]) for w in words])
        assert np.array_equal(got, want) and np.array_equal(full, want), length
        checked += len(words)
    assert checked > 100
    # every reachable state's back-pointer word reaches it, and no shorter word is recorded
    for q in range(auto.reachable_states):
        assert run_word(auto.dfa, auto.word(q)) == q and len(auto.word(q)) == auto.depth[q]
    assert auto.closed_at_length == int(auto.depth.max())


def test_dyck_construction_decides_dyck_2_2_at_every_length_and_wrong_targets_get_shortest_counterexamples():
    model = make_dyck_rnn(2, "fixed:2:0").model
    names = ["(", "[", ")", "]", "[CLS]"]
    out, _ = automaton_of_model(model, [0, 1, 2, 3], [4], names, against="dyck-2-2")
    assert out["equivalent"] is True and out["counterexample"] is None and out["minimal_states"] == 8
    assert out["aperiodic"] is True  # bounded Dyck is star-free
    for target, word, model_answer in [("dyck-2-3", "((()))", 0), ("dyck-2-1", "(())", 1), ("dyck-1-2", "[]", 1)]:
        if target == "dyck-1-2":  # two letters only: over ( [ ) ] it is refused; check the refusal
            with pytest.raises(Exception, match="needs 2 letters"):
                automaton_of_model(model, [0, 1, 2, 3], [4], names, against=target)
            continue
        out, _ = automaton_of_model(model, [0, 1, 2, 3], [4], names, against=target)
        c = out["counterexample"]
        assert out["equivalent"] is False and c["word"] == word and c["model_answer"] == model_answer
        assert c["automaton_answer"] == model_answer and c["in_language"] != bool(model_answer)


def test_a_hand_broken_model_returns_its_shortest_counterexample():
    """A Dyck RNN whose table sends "[" "]" to the reject sink: wrong first on "[]"."""
    from models.constructions.dyck_rnn import DyckAutomatonLayer, dyck_automaton
    from models.recurrent.base import RecurrentModel

    table = dyck_automaton(2, 2).copy()
    start_bracket = table[0, 1]  # the state after "["
    table[start_bracket, 3] = table.shape[0] - 1  # "]" after "[": reject
    layer = DyckAutomatonLayer.from_table(table, "onehot", accept_token=4)
    model = RecurrentModel("rnn", np.eye(5), [layer], np.array([[-1.0, 1.0]]), np.array([0.5, -0.5]),
                           precision="fixed:2:0")
    out, _ = automaton_of_model(model, [0, 1, 2, 3], [4], ["(", "[", ")", "]", "[CLS]"], against="dyck-2-2")
    assert out["counterexample"]["word"] == "[]" and out["counterexample"]["model_answer"] == 0


def test_diagonal_recurrences_gated_is_aperiodic_parity_is_a_group():
    gated, _ = automaton_of_model(diagonal_model("gated", "fixed:6:4"), [0, 1], (), ["0", "1"], against="parity")
    assert gated["closed"] and gated["aperiodic"] is True and gated["period_witness"] is None
    assert gated["equivalent"] is False  # positive gates cannot count parity
    par, _ = automaton_of_model(diagonal_model("parity", "fixed:4:2"), [0, 1], (), ["0", "1"], against="parity")
    assert par["equivalent"] is True and par["minimal_states"] == 2 and par["aperiodic"] is False
    assert par["period_witness"]["word"] == "1" and par["period_witness"]["period"] == 2
    wrong, _ = automaton_of_model(diagonal_model("parity", "fixed:4:2"), [0, 1], (), ["0", "1"], against="mod-3")
    assert wrong["counterexample"]["word"] == "11" and wrong["counterexample"]["model_answer"] == 1


def test_budget_stops_without_claims():
    out = automaton_analysis("dyck", "lstm", "float32", width=8, max_states=50)
    assert out["closed"] is False and "max_states 50" in out["stopped"]
    assert out["minimal_states"] is None and out["equivalent"] is None and out["aperiodic"] is None


def test_trained_lstm_file(tmp_path):
    """The imported torch LSTM fixture (index lookup) as an automaton over its two data letters."""
    from pathlib import Path
    fixture = Path(__file__).parents[1] / "fixtures" / "tiny_lstm_index_lookup.state_dict.npz"
    import cli

    weights = str(tmp_path / "tiny.npz")
    assert cli.main(["import", "torch", str(fixture), "--arch", "lstm", "--task", "index-lookup", "--n", "8",
                     "--out", weights]) == 0
    # the data letters 0, 1, then the query token of position 0 (alphabet 2 + 0): "is the first letter 1?"
    # Width 16 at 2 bits a number: the reachable set does not close within a small budget, and then
    # nothing is claimed at every length
    out = automaton_analysis("index-lookup", "lstm", "fixed:2:1", weights=weights, n=8, alphabet=[0, 1],
                             suffix=[2], max_states=2000)
    assert out["weights"] == weights and out["closed"] is False and out["reachable_states"] > 2000
    assert out["minimal_states"] is None and out["equivalent"] is None


def test_against_the_task_itself_proves_the_dyck_construction_and_refuses_a_fixed_size_predicate():
    """``--against task``: Dyck's own predicate (its ground truth's language, dyck-2-2), checked
    against the task's ground truth on every bracket string up to 8; a task whose predicate is
    defined at one n only is refused."""
    from commcomp.automata import language_dfa
    from commcomp.errors import InvalidParameterError
    from reductions.tasks.dyck import Dyck

    task = Dyck(types=2, depth=2)
    target = language_dfa(task.language, ["(", "[", ")", "]"])
    for half in range(0, 5):
        words = _all_words(4, 2 * half)
        truth = task.ground_truth(task.make_batch(half, np.concatenate(
            [words, np.full((len(words), 1), task.cls)], axis=1))).ravel() if half else np.ones(1)
        assert [accepts(target, w) for w in words] == [bool(t) for t in truth]
    out = automaton_analysis("dyck", "rnn", "fixed:2:0", weights="construction", against="task")
    assert out["against"] == "dyck-2-2" and out["equivalent"] is True
    for kwargs in ({"task": "index-lookup", "arch": "lstm"}, {"task": "dyck", "arch": "lstm", "alphabet": [0, 1]}):
        with pytest.raises(InvalidParameterError, match="--against task"):
            automaton_analysis(kwargs.pop("task"), kwargs.pop("arch"), "fixed:4:2", against="task", **kwargs)
