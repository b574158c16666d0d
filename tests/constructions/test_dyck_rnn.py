"""C6 (BHBK-Dyck-RNN): the automaton RNNs judged by ``reductions.tasks.dyck``'s ground truth.

Exhaustive: every string over the 2k brackets (not only balanced ones) of every even length up
to 12 (4^12 = 16.7M strings of length 12, 22.4M in all, per model), run by the model's own step
as a prefix tree (:func:`exhaustive_check`).  Random: the task's balanced sampler at N = 1025
and N = 8193 (n = 512, 4096).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from commcomp.architectures import state_numbers
from commcomp.errors import InvalidParameterError
from models.constructions.dyck_rnn import (DyckAutomatonLayer, all_bracket_tokens, dyck_automaton,
                                           dyck_dfa_states, make_dyck_elman, make_dyck_rnn)
from reductions.tasks.dyck import Dyck

def _rows(state) -> np.ndarray:
    """The carried state as one ``(B, numbers)`` float64 array (its arrays side by side)."""
    return np.concatenate([np.asarray(v).reshape(v.shape[0], -1) for v in state.values()], axis=1)


def _state(model, rows: np.ndarray) -> dict:
    """Inverse of :func:`_rows` for ``model``'s state layout."""
    out, at = {}, 0
    for key, v in model.init_state(1).items():
        width = int(np.prod(v.shape[1:]))
        out[key] = rows[:, at:at + width].reshape((len(rows),) + tuple(v.shape[1:]))
        at += width
    return out


@lru_cache(maxsize=None)
def _truth(level: int, k: int, D: int) -> np.ndarray:
    """The task's ground truth on every string of ``level`` brackets (row r spells r in base 2k)."""
    task, n, chunk = Dyck(types=k, depth=D), level // 2, 1 << 20
    parts = []
    for r0 in range(0, (2 * k) ** level, chunk):
        tokens = all_bracket_tokens(n, k, r0, min((2 * k) ** level, r0 + chunk))
        parts.append(task.ground_truth(task.make_batch(n, tokens))[:, 0].astype(np.uint8))
    return np.concatenate(parts)


def exhaustive_check(construction, max_length: int, k: int = 2, D: int = 2) -> int:
    """Compare the model with the task's ground truth on every bracket string of every even
    length <= max_length; returns the number of strings checked (asserts on a miss).

    The model runs as a prefix tree whose nodes with bit-identical carried states are merged:
    a step reads only the carried state and the token (the RecurrentModel contract, the same
    fact the one-way protocol rests on), so every string's answer is the model's own answer.
    ``where[t]`` maps each of the (2k)^t strings (row r spells r in base 2k) to its node.
    The ground truth, in contrast, runs on every string (computed once, shared by the models).
    """
    task, model, base = Dyck(types=k, depth=D), construction.model, 2 * k
    cls = np.full((1, 1), base, dtype=np.int64)
    nodes = _rows(model.init_state(1))  # (u, numbers) distinct states at this level
    where = np.zeros(1, dtype=np.int64)  # (base^level,) node of every string
    checked = 0
    for level in range(1, max_length + 1):
        u = len(nodes)
        tokens = np.tile(np.arange(base, dtype=np.int64), u)[:, None]  # (u*base, 1)
        nxt = _rows(model.run(tokens, _state(model, np.repeat(nodes, base, axis=0))))
        nodes, inverse = np.unique(nxt, axis=0, return_inverse=True)
        where = inverse.reshape(-1)[(where[:, None] * base + np.arange(base)).reshape(-1)]
        if level % 2:
            continue
        _, logits = model.run_with_output(np.repeat(cls, len(nodes), axis=0), _state(model, nodes))
        answers = np.argmax(np.asarray(logits), axis=1)[where]  # (base^level,)
        wrong = np.nonzero(answers != _truth(level, k, D))[0]
        if wrong.size:
            tokens = all_bracket_tokens(level // 2, k, int(wrong[0]), int(wrong[0]) + 1)
            raise AssertionError(f"{wrong.size} misses at length {level}, first on "
                                 f"{task.render(tokens[0], level // 2)}")
        checked += len(answers)
    return checked


def test_merged_run_agrees_with_plain_runs():
    # the merged prefix tree gives the answers a plain batch run gives, string by string
    c = make_dyck_rnn(3, "fixed:2:0", encoding="binary")
    tokens = all_bracket_tokens(3)
    truth = Dyck().ground_truth(Dyck().make_batch(3, tokens))
    assert np.array_equal(c.predict(tokens), truth)
    assert exhaustive_check(c, 6) == 4 ** 2 + 4 ** 4 + 4 ** 6


def test_state_counts_match_the_formula_and_the_task():
    for k, D, S in [(2, 2, 8), (2, 4, 32), (3, 3, 41), (4, 3, 86), (1, 1, 3)]:
        assert dyck_dfa_states(k, D) == S
        table = dyck_automaton(k, D)
        assert table.shape == (S, 2 * k + 1)
        assert np.array_equal(table, Dyck(types=k, depth=D).transitions)


@pytest.mark.parametrize("encoding, precision, numbers, bits", [
    ("onehot", "fixed:2:0", 8, 16), ("binary", "fixed:2:0", 3, 6), ("scalar", "fixed:3:0", 1, 3)])
def test_state_is_measured_from_the_arrays(encoding, precision, numbers, bits):
    c = make_dyck_rnn(4, precision, encoding=encoding)
    assert c.model.state_numbers() == numbers == c.width
    assert c.model.state_bits() == bits
    # the carried state is what the registry's "rnn" (elman) formula counts: m numbers per layer
    assert state_numbers("rnn", c.width) == numbers
    assert c.params_report["min_state_bits"] == 3


@pytest.mark.parametrize("build, precision", [
    (lambda n, p: make_dyck_rnn(n, p), "fixed:2:0"),
    (lambda n, p: make_dyck_rnn(n, p, encoding="binary"), "fixed:2:0"),
    (lambda n, p: make_dyck_rnn(n, p, encoding="scalar"), "fixed:3:0"),
    (lambda n, p: make_dyck_rnn(n, p, encoding="scalar"), "float16"),
    (lambda n, p: make_dyck_rnn(n, p), None),
    (make_dyck_elman, "fixed:2:0")])
def test_exhaustive_up_to_length_12(build, precision):
    assert exhaustive_check(build(6, precision), 12) == sum(4 ** L for L in range(2, 13, 2))


@pytest.mark.parametrize("k, D", [(3, 2), (2, 3)])
def test_other_k_and_depth_exhaustive(k, D):
    for encoding, prec in [("onehot", "fixed:2:0"), ("scalar", f"fixed:{max(2, (dyck_dfa_states(k, D) - 1).bit_length())}:0")]:
        c = make_dyck_rnn(3, prec, types=k, depth=D, encoding=encoding)
        assert exhaustive_check(c, 10 if k == 2 else 8, k, D) > 0


@pytest.mark.parametrize("n", [512, 4096])
def test_random_long_inputs(n):
    task = Dyck()
    batch = task.sample(n, 32, np.random.default_rng(n))
    truth = task.ground_truth(batch)
    assert truth.sum() == 16
    for c in (make_dyck_rnn(n, "fixed:2:0"), make_dyck_rnn(n, "fixed:3:0", encoding="scalar"),
              make_dyck_elman(n, "fixed:2:0")):
        result = c.check(batch, truth)
        assert result.ok, result


def test_too_narrow_precision_fails():
    # the scalar code needs 3 bits for 8 states: at fixed:2:0 the states 2..7 saturate
    n = 3
    tokens = all_bracket_tokens(n)
    truth = Dyck().ground_truth(Dyck().make_batch(n, tokens))
    assert not make_dyck_rnn(n, "fixed:2:0", encoding="scalar").check(tokens, truth).ok


def test_width_option_and_errors():
    assert make_dyck_rnn(2, width=8).params_report["encoding"] == "onehot"
    assert make_dyck_rnn(2, width=5).params_report["encoding"] == "binary"
    assert make_dyck_rnn(2, width=1).params_report["encoding"] == "scalar"
    with pytest.raises(InvalidParameterError):
        make_dyck_rnn(2, width=0)
    with pytest.raises(InvalidParameterError):
        make_dyck_rnn(2, bogus=1)
    with pytest.raises(InvalidParameterError):
        make_dyck_rnn(2, width=1, encoding="onehot")
    assert isinstance(make_dyck_rnn(2).model.layers[0], DyckAutomatonLayer)


def test_protocol_message_is_the_state():
    # Alice's prefix state as bits, Bob finishes: bit for bit the unsplit run
    n = 4
    c = make_dyck_rnn(n, "fixed:3:0", encoding="scalar")
    tokens = all_bracket_tokens(n, 2, 1000, 1200)
    alice = c.model.run(tokens[:, :5])
    bits = c.model.state_to_bits(alice)
    assert bits.array.shape[1] == 3
    _, bob = c.model.run_with_output(tokens[:, 5:], c.model.bits_to_state(bits))
    _, ref = c.model.run_with_output(tokens)
    assert np.array_equal(np.asarray(bob), np.asarray(ref))


def test_registry_entries():
    from models.constructions import get_construction

    assert get_construction("dyck").name == "dyck-rnn"
    assert get_construction("dyck", arch="elman").name == "dyck-elman"
    assert get_construction("dyck-elman").make(2).width == 40
