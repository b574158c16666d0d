"""Index Lookup with the index first (BHBK-IL-order): a width-4 ReLU Elman RNN, judged by the
index-first task's own ground truth over all inputs at small n and on random inputs at
N = 1025 and N = 8193, at the smallest fixed-point format that holds its counters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from reductions.tasks.index_first import index_first_task
from models.constructions.index_first_rnn import (index_first_bits,
                                                  make_index_first_rnn)
from reductions.tasks.index_lookup import IndexLookup


def all_inputs(n: int, alphabet: int = 2) -> np.ndarray:
    """Every index-first input: A^n symbol strings x n queries, ``(A^n·n, n + 1)``."""
    symbols = np.array(list(itertools.product(range(alphabet), repeat=n)), dtype=np.int64)
    query = alphabet + np.tile(np.arange(n), len(symbols))[:, None]
    return np.concatenate([query, np.repeat(symbols, n, axis=0)], axis=1)


def test_task_format_matches_index_lookup_reversed():
    # the same instance in both formats has the same answer
    task, last = index_first_task(), IndexLookup()
    rng = np.random.default_rng(0)
    batch = last.sample(9, 50, rng)
    first = np.concatenate([batch.tokens[:, -1:], batch.tokens[:, :-1]], axis=1)
    assert task.vocabulary(9) == last.vocabulary(9)
    assert np.array_equal(task.ground_truth(task.make_batch(9, first)), last.ground_truth(batch))
    sample = task.sample(9, 40, rng)
    assert sample.answers.sum() == 20


@pytest.mark.parametrize("precision", ["min", None, "float16"])
def test_exhaustive_binary(precision):
    task, total = index_first_task(), 0
    for n in range(1, 13):
        tokens = all_inputs(n)
        prec = f"fixed:{index_first_bits(n)}:0" if precision == "min" else precision
        c = make_index_first_rnn(n, prec)
        result = c.check(tokens, task.ground_truth(task.make_batch(n, tokens)))
        assert result.ok and result.total == n * 2 ** n, (n, result)
        total += result.total
    assert total == sum(n * 2 ** n for n in range(1, 13))


@pytest.mark.parametrize("alphabet, n_max", [(3, 7), (5, 5)])
def test_exhaustive_larger_alphabets(alphabet, n_max):
    task = index_first_task(alphabet)
    for n in range(1, n_max + 1):
        tokens = all_inputs(n, alphabet)
        c = make_index_first_rnn(n, f"fixed:{index_first_bits(n, alphabet)}:0", alphabet=alphabet)
        assert c.check(tokens, task.ground_truth(task.make_batch(n, tokens))).ok


def test_one_bit_less_fails():
    task = index_first_task()
    for n in (3, 5, 9, 12):
        tokens = all_inputs(n)
        c = make_index_first_rnn(n, f"fixed:{index_first_bits(n) - 1}:0")
        assert not c.check(tokens, task.ground_truth(task.make_batch(n, tokens))).ok


@pytest.mark.parametrize("n", [1024, 8192])
def test_random_long_inputs(n):
    task = index_first_task()
    batch = task.sample(n, 64, np.random.default_rng(n))
    truth = task.ground_truth(batch)
    for prec in (f"fixed:{index_first_bits(n)}:0", "float32"):
        c = make_index_first_rnn(n, prec)
        assert c.check(batch, truth).ok
    # 4 numbers of ceil(log2 n) + 1 bits, against m·p >= n bits with the index last
    c = make_index_first_rnn(n, f"fixed:{index_first_bits(n)}:0")
    assert c.model.state_numbers() == 4 and c.model.state_bits() == 4 * index_first_bits(n) < n


def test_random_larger_alphabet_long():
    task = index_first_task(7)
    batch = task.sample(1024, 70, np.random.default_rng(1))
    c = make_index_first_rnn(1024, "fixed:11:0", alphabet=7)
    assert c.check(batch, task.ground_truth(batch)).ok


def test_state_after_the_query_is_the_whole_message():
    # cut anywhere: the 4 carried numbers are all Bob needs, bit for bit
    n = 40
    task = index_first_task()
    batch = task.sample(n, 16, np.random.default_rng(3))
    c = make_index_first_rnn(n, f"fixed:{index_first_bits(n)}:0")
    _, ref = c.model.run_with_output(batch.tokens)
    for cut in (1, 7, 20, 39):
        bits = c.model.state_to_bits(c.model.run(batch.tokens[:, :cut]))
        assert bits.array.shape[1] == 4 * index_first_bits(n)
        _, out = c.model.run_with_output(batch.tokens[:, cut:], c.model.bits_to_state(bits))
        assert np.array_equal(np.asarray(out), np.asarray(ref))


def test_model_is_the_registry_elman_and_options():
    c = make_index_first_rnn(5)
    assert c.model.arch == "elman" and c.model.layers[0].nonlinearity == "relu"
    assert c.width == 4 and c.output_positions == (5,)
    with pytest.raises(InvalidParameterError):
        make_index_first_rnn(5, alphabet=1)
    with pytest.raises(InvalidParameterError):
        make_index_first_rnn(5, width=3)


def test_registry_entry():
    from models.constructions import get_construction

    spec = get_construction("index-first-lookup")
    assert spec.name == "index-first-rnn" and spec.arch == "elman"
    tokens = spec.inputs(4)
    task = index_first_task()
    assert spec.make(4, "fixed:3:0").check(tokens, task.ground_truth(task.make_batch(4, tokens))).ok
