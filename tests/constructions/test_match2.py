"""C8 (SHT Match2-UB): a width-6, 1-layer, 1-head Transformer, judged by
``reductions.tasks.match2``'s ground truth at every position: all M^N inputs at small sizes
(default and other moduli, even ones included), random inputs at N = 1025 (every position) and
up to N = 8193 (sampled positions, the query position among them; one ``forward`` per position
costs about 5 ms at N = 1025 and 0.1 s at N = 8193)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.constructions.base import transformer_logits
from models.constructions.match2 import make_match2, match2_gaps
from reductions.tasks.match2 import Match2


def all_inputs(N: int, M: int) -> np.ndarray:
    return np.array(list(itertools.product(range(M), repeat=N)), dtype=np.int64)


def check_all(n, precision, modulus=None):
    task = Match2(modulus=modulus)
    M = task.modulus_at(n)
    tokens = all_inputs(n + 1, M)
    c = make_match2(n, precision, modulus=modulus)
    result = c.check(tokens, task.ground_truth(task.make_batch(n, tokens)))
    assert result.ok and result.total == M ** (n + 1), (n, M, precision, result)


@pytest.mark.parametrize("precision", [None, "float32", "fixed:24:22", "fixed:16:15"])
def test_exhaustive_default_modulus(precision):
    for n in (1, 2, 3):  # N = 2..4, M = 3..7: 9 + 125 + 2401 inputs
        check_all(n, precision)


def test_exhaustive_n4():
    check_all(4, "fixed:20:18")  # N = 5, M = 9: 59049 inputs


@pytest.mark.parametrize("N, M", [(3, 4), (4, 6), (4, 8), (3, 10), (5, 4), (4, 3), (2, 5), (6, 3)])
def test_exhaustive_other_moduli(N, M):
    # even M: 0 and M/2 are their own partners; M < N: many repeats
    for precision in (None, "fixed:24:22"):
        check_all(N - 1, precision, modulus=M)


def test_minimal_fixed_formats_small():
    # fixed:P:P-1 (sign + fraction bits) is enough; one fraction bit less fails
    for n, ok, bad in [(2, "fixed:5:3", "fixed:4:3"), (3, "fixed:5:4", "fixed:4:3")]:
        check_all(n, ok)
        with pytest.raises(AssertionError):
            check_all(n, bad)


def test_random_N1025_every_position():
    task = Match2()
    batch = task.sample(1024, 8, np.random.default_rng(1))
    truth = task.ground_truth(batch)
    assert truth[:, -1].sum() == 4
    assert make_match2(1024, "fixed:23:22").check(batch, truth).ok


@pytest.mark.parametrize("n, precision", [(1024, "float32"), (1024, "float64"), (4096, "float32"),
                                          (8192, "fixed:29:28"), (8192, "float64")])
def test_random_long_sampled_positions(n, precision):
    task = Match2()
    rng = np.random.default_rng(2)
    batch = task.sample(n, 8, rng)
    truth = task.ground_truth(batch)
    positions = np.unique(np.r_[rng.choice(n + 1, 15, replace=False), n])
    c = make_match2(n, precision)
    logits = transformer_logits(c.model, batch.tokens, positions)  # the pass predict runs
    assert np.array_equal(c.decode(logits), truth[:, positions])


def test_float_softmax_pass_agrees():
    # forward_all (float softmax at every position) answers like forward at every position
    task = Match2()
    batch = task.sample(64, 16, np.random.default_rng(3))
    truth = task.ground_truth(batch)
    for precision in (None, "fixed:30:28"):
        c = make_match2(64, precision)
        assert np.array_equal(np.argmax(np.asarray(c.model.forward_all(batch.tokens)), -1), truth)
        assert c.check(batch, truth).ok


def test_protocol_index_to_match2():
    # the INDEX -> Match2 reduction as a protocol: faithful and correct on every instance
    from reductions.simulate.api import verify

    for n in (3, 7):
        c = make_match2(n, "fixed:16:14")
        out = verify("match2", n=n, precision="fixed:16:14", model=c.model, exhaustive=True)
        assert out["faithful"] == 1.0 and out["correct"] == 1.0 and out["instances"] == n * 2 ** n


def test_shape_and_parameters():
    c = make_match2(10)
    m = c.model
    assert (c.width, m.n_layers, m.n_heads, m.d_k, m.d_v, m.d_mlp) == (6, 1, 1, 2, 4, 8)
    assert not m.causal and c.output_positions == tuple(range(11))
    g, g_pos, beta = match2_gaps(11, 21)
    assert c.params_report["beta"] == beta and g == pytest.approx(1 - np.cos(2 * np.pi / 21))
    fixed = make_match2(10, "fixed:20:18")
    assert fixed.params_report["weight_fraction_bits"] == 18 and fixed.params_report["beta"] >= beta
    with pytest.raises(InvalidParameterError):
        make_match2(3, modulus=2)
    with pytest.raises(InvalidParameterError):
        make_match2(3, width=8)


def test_registry_entry():
    from models.constructions import get_construction

    spec = get_construction("match2")
    assert spec.name == "match2-1tf" and spec.arch == "transformer"
    assert len(spec.inputs(2)) == 5 ** 3
