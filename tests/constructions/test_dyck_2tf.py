"""The 2-layer Dyck-(2,2) Transformer (``dyck-2tf``) judged by ``reductions.tasks.dyck``'s DFA.

Independent of the weights: the lemma (C0-C5 as a plain loop) against the DFA on every bracket
string; the width against its closed form.  The model: every string of the whole alphabet
(``( [ ) ] [CLS]`` anywhere) up to N = 7, every bracket string up to 8 brackets, random and
adversarial strings at N = 401 and 1201; a broken recency head and the scalar-position variant at
bfloat16 are caught on a crafted string.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.constructions import get_construction
from models.constructions.dyck_2tf import all_dyck_alphabet_tokens, dyck_2tf_width, make_dyck_2tf
from models.constructions.dyck_rnn import all_bracket_tokens
from reductions.tasks.dyck import Dyck
from reductions.tasks.dyck_hard import KINDS, dyck_adversarial

TASK = Dyck(types=2, depth=2)


def truth(n, tokens):
    return TASK.ground_truth(TASK.make_batch(n, tokens)).ravel()


def conditions_hold(row) -> bool:
    """C0-C5 of the module docstring, read literally (positions 0-indexed, ids ( [ ) ] [CLS])."""
    L = len(row) - 1
    if row[L] != 4 or any(t == 4 for t in row[:L]):
        return False                                   # C4, C5
    if row[0] >= 2 or row[L - 1] < 2:
        return False                                   # C0, C3
    for i in range(1, L):
        t, prev = row[i], row[i - 1]
        if i % 2 == 0 and (t != prev + 2 if prev < 2 else t >= 2):
            return False                               # C1
        if i % 2 == 1 and t >= 2:
            j = max(j for j in range(0, i, 2) if row[j] < 2)
            if t != row[j] + 2:
                return False                           # C2
    return True


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_the_lemma_agrees_with_the_dfa_on_every_bracket_string(n):
    tokens = all_bracket_tokens(n)
    lemma = np.array([conditions_hold(list(r)) for r in tokens])
    assert np.array_equal(lemma, truth(n, tokens) == 1)


@pytest.mark.parametrize("n", [1, 2, 3, 100, 470, 2554, 7552])
def test_width_is_two_codes_plus_seventeen(n):
    N = 2 * n + 1
    assert dyck_2tf_width(n) == 2 * math.ceil(math.log2(N)) + 17
    if n <= 470:
        c = make_dyck_2tf(n)
        assert (c.width, c.layers, c.heads, c.length) == (dyck_2tf_width(n), 2, 2, N)


@pytest.mark.parametrize("precision,n", [(None, 3), ("float32", 3), ("bfloat16", 2)])
def test_every_string_of_the_whole_alphabet(precision, n):
    tokens = all_dyck_alphabet_tokens(n)  # (5^N, N): [CLS] anywhere, brackets at the end
    y = truth(n, tokens)
    assert 0 < y.sum() < len(y)
    assert np.array_equal(make_dyck_2tf(n, precision).predict(tokens).ravel(), y)


@pytest.mark.parametrize("precision,n", [("float32", 4), ("bfloat16", 3)])
def test_every_bracket_string(precision, n):
    tokens = all_bracket_tokens(n)
    assert np.array_equal(make_dyck_2tf(n, precision).predict(tokens).ravel(), truth(n, tokens))


@pytest.mark.parametrize("precision", ["bfloat16", "float32"])
def test_random_and_adversarial_strings_at_401_tokens(precision):
    n, rng = 200, np.random.default_rng(3)
    c = make_dyck_2tf(n, precision)
    random = TASK.sample(n, 24, rng).tokens
    hard = dyck_adversarial(n, rng, 7 * 6)
    for tokens in (random, hard):
        y = truth(n, tokens)
        assert 0 < y.sum() < len(y)
        assert np.array_equal(c.predict(tokens).ravel(), y)


def test_adversarial_kinds_are_labelled_by_the_dfa():
    rng = np.random.default_rng(0)
    tokens = dyck_adversarial(8, rng, 7 * 20)
    y = truth(8, tokens).reshape(len(KINDS), 20)
    assert y[0].all()                        # the valid strings the others came from
    assert not y[[1, 2, 6]].any()             # a flip, a depth-3 excursion, a misplaced [CLS]
    assert 0 < y[4].sum() < 20 and 0 < y[5].sum() < 20   # far / blocks: right or wrong closer
    depth = np.cumsum(np.where(tokens[40:60, :-1] < 2, 1, -1), axis=1)
    assert depth.max(axis=1).tolist() == [3] * 20      # depth 3 once ...
    assert (depth[:, -1] == 0).sum() >= 15             # ... and balanced (truncated where no pair to drop)


def _late_mismatch(n: int) -> np.ndarray:
    """``( ) ( ) ... ( ) [ )``: the last closer must match the `[` two positions after a `(`."""
    row = np.array([0, 2] * (n - 1) + [1, 2, 4], dtype=np.int64)
    return row[None, :]


def test_scalar_positions_fail_at_bfloat16_where_binary_codes_hold():
    n = 600  # N = 1201: 1198/N and 1196/N round to the same bfloat16 number
    tokens = _late_mismatch(n)
    assert truth(n, tokens).tolist() == [0]
    assert make_dyck_2tf(n, "bfloat16").predict(tokens).ravel().tolist() == [0]
    assert make_dyck_2tf(n, "float32", recency="scalar").predict(tokens).ravel().tolist() == [0]
    assert make_dyck_2tf(n, "bfloat16", recency="scalar").predict(tokens).ravel().tolist() == [1]


def test_a_recency_head_without_its_query_is_caught():
    n = 4
    c = make_dyck_2tf(n, "float32")
    params = dict(c.model.params)
    params["l0.b_Q"] = params["l0.b_Q"].copy()
    params["l0.b_Q"][1] = 0.0  # head B averages every position
    broken = c.model.with_params(params)
    tokens = all_bracket_tokens(n)[::7]
    y = truth(n, tokens)
    assert np.array_equal(c.predict(tokens).ravel(), y)
    answers = np.argmax(np.asarray(broken.forward(tokens))[:, :2], axis=1)
    assert (answers != y).any()


def test_registered_and_options_checked():
    spec = get_construction("dyck-2tf")
    assert (spec.task, spec.arch, spec.layers, spec.source) == ("dyck", "transformer", 2, "BHBK-Dyck-2TF")
    assert get_construction("dyck").name == "dyck-rnn"  # the task's default stays the RNN
    assert get_construction("dyck", arch="transformer", layers=2).name == "dyck-2tf"
    with pytest.raises(InvalidParameterError):
        make_dyck_2tf(3, recency="cosine")
    with pytest.raises(InvalidParameterError):
        make_dyck_2tf(3, nonsense=1)
