"""The explicit function-composition (pairs: 2 layers, split: 3 layers) and copy (1 layer) weights: every
input at small n against a plain loop, samples at the claims' crossovers, the catalogue's width formulas
against the built widths, and knock-outs showing each part is needed (so the checks can fail)."""

import math

import numpy as np
import pytest

from commcomp.bounds import evaluate_bound
from models.constructions import get_construction
from models.constructions.copy import all_copy_inputs, make_copy
from models.constructions.function_composition import (all_composition_inputs, all_split_inputs,
                                                       make_function_composition,
                                                       make_function_composition_split)
from reductions import get_reduction
from reductions.search.construction import check_construction
from reductions.tasks.copy import Copy
from reductions.tasks.function_composition import FunctionComposition


def _loop_composition(tokens, n, split):
    """g(f(x)) read off the tokens by a plain loop over instances (independent of the task's code)."""
    out = []
    for row in tokens.tolist():
        g, f = {}, {}
        if split:
            for t in range(n):
                g[row[2 * t]] = row[2 * t + 1] - n
                f[row[2 * n + 2 * t]] = row[2 * n + 2 * t + 1] - n
            x = row[-1] - 2 * n
        else:
            for t in range(n):
                g[row[t] // n] = row[t] % n
                f[(row[n + t] - n * n) // n] = (row[n + t] - n * n) % n
            x = row[-1] - 2 * n * n
        out.append([g[f[x]]])
    return np.array(out)


@pytest.mark.parametrize("precision", [None, "float32", "bfloat16"])
def test_pairs_every_input_at_n2(precision):
    tokens = all_composition_inputs(2)
    assert tokens.shape == ((2 * 4) ** 2 * 2, 5)
    c = make_function_composition(2, precision)
    assert np.array_equal(c.predict(tokens), _loop_composition(tokens, 2, False))


def test_pairs_every_input_at_n3():
    tokens = all_composition_inputs(3)
    assert len(np.unique(tokens, axis=0)) == (6 * 27) ** 2 * 3
    c = make_function_composition(3, "bfloat16")
    assert np.array_equal(c.predict(tokens), _loop_composition(tokens, 3, False))
    task = FunctionComposition()
    assert np.array_equal(_loop_composition(tokens[:500], 3, False),
                          task.ground_truth(task.make_batch(3, tokens[:500])))


@pytest.mark.parametrize("n, precision", [(2, None), (2, "bfloat16"), (3, "float32")])
def test_split_every_input(n, precision):
    tokens = all_split_inputs(n)
    c = make_function_composition_split(n, precision)
    assert np.array_equal(c.predict(tokens), _loop_composition(tokens, n, True))


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_copy_every_input(n):
    tokens = all_copy_inputs(n)
    c = make_copy(n, "bfloat16")
    assert np.array_equal(c.predict(tokens), tokens[:, :n])


def test_copy_alphabet_3_every_input_and_judge():
    c = get_construction("copy-1tf").make(6, "bfloat16", alphabet=3)
    tokens = all_copy_inputs(6, 3)
    assert np.array_equal(c.predict(tokens), tokens[:, :6])
    res = check_construction(c, inputs=tokens, samples=16, stop_early=False)  # judged by Copy(alphabet=3)
    assert res.ok and res.admitted == 3 ** 6 + 16


def test_split_is_judged_under_the_split_layout():
    spec = get_construction("composition-split-3tf")
    c = spec.make(3, "bfloat16")
    res = check_construction(c, samples=64, stop_early=False)
    assert res.ok and c.length == 13


@pytest.mark.parametrize("n", [2, 3, 7, 64, 181])
def test_widths_match_the_catalogue(n):
    assert make_function_composition(n).width == evaluate_bound("COMMCOMP-FC-2TF", N=2 * n + 1) \
        == 5 * math.ceil(math.log2(n)) + 2
    if n <= 64:
        assert make_function_composition_split(n).width == evaluate_bound("COMMCOMP-FC-split-3TF", N=4 * n + 1) \
            == 8 * math.ceil(math.log2(n)) + 2 * math.ceil(math.log2(4 * n + 1)) + 2
    assert make_copy(n).width == evaluate_bound("COMMCOMP-copy-1TF", N=2 * n + 1, alphabet=2) \
        == 4 + 2 * math.ceil(math.log2(n)) + 1


def _knocked(c, block, layer=None):
    if layer is None:
        c.model.params["pos_emb"][:, slice(*c.params_report["layout"][block])] = 0.0
    else:
        c.model.params[layer][:] = 0.0
    return c


def test_knock_outs_fail():
    tokens = all_composition_inputs(3)[::5]
    truth = _loop_composition(tokens, 3, False)
    c = _knocked(make_function_composition(3, "float32"), None, "l0.mlp.W2")  # no cleaning MLP: B = 0
    assert (c.predict(tokens) != truth).mean() > 0.3
    split = all_split_inputs(2)
    c = _knocked(make_function_composition_split(2, "float32"), None, "l0.W_V")  # no binding layer
    assert not np.array_equal(c.predict(split), _loop_composition(split, 2, True))
    tokens = all_copy_inputs(8)
    c = _knocked(make_copy(8, "float32"), "QRY")                               # blanks ask for nothing
    assert not np.array_equal(c.predict(tokens), tokens[:, :8])


def test_on_the_reductions_instances_and_samples_at_large_n():
    rng = np.random.default_rng(5)
    red = get_reduction("function-composition")
    k = 600
    n = red.task_size(k)
    x, y = rng.integers(0, 2, (4, k)), rng.integers(0, k, 4)
    enc = red.encode(x, y, k)
    c = make_function_composition(n, "bfloat16")
    assert np.array_equal(c.predict(enc.tokens), _loop_composition(enc.tokens, n, False))
    red = get_reduction("copy")
    x, y = rng.integers(0, 2, (4, 300)), rng.integers(0, 300, 4)
    enc = red.encode(x, y, 300)
    c = make_copy(red.task_size(300), "bfloat16")
    out = c.predict(enc.tokens)
    assert np.array_equal(out, enc.tokens[:, :c.n])
    assert np.array_equal(red.decode(out, y), x[np.arange(4), y].astype(bool))
    split = get_reduction("function-composition", problem="index@split")
    x, y = rng.integers(0, 2, (4, 40)), rng.integers(0, 40, 4)
    enc = split.encode(x, y, 40)
    c = make_function_composition_split(split.task_size(40), "bfloat16")
    assert np.array_equal(c.predict(enc.tokens), _loop_composition(enc.tokens, split.task_size(40), True))
