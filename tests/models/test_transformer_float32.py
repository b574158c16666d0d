"""The Transformer's float32 compute mode: float32 all the way, and the split still exact."""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.registry import build_model
from models.transformer import Transformer

PRECISIONS = [None, "fixed:12:6", "float16", "float32"]


def _pair(precision, layer_norm=False, n_layers=1, seed=1):
    m64 = Transformer.random(6, 8, n_layers, 2, 4, 4, 8, 3, max_len=8, seed=seed, precision=precision,
                             layer_norm=layer_norm)
    return m64, m64.with_dtype("float32")


def _tokens(B=5, N=7, seed=0):
    return np.random.default_rng(seed).integers(0, 6, size=(B, N))


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layer_norm", [False, "pre", "post"])
def test_every_output_is_float32_and_close_to_float64(precision, layer_norm):
    m64, m32 = _pair(precision, layer_norm)
    tokens = _tokens()
    for run in (lambda m: m.forward(tokens), lambda m: m.forward_all(tokens),
                lambda m: m.forward_at(tokens, [2, 6]), lambda m: m.query(tokens[:, 6], 6)):
        y32, y64 = run(m32), run(m64)
        assert y32.dtype == np.float32 and y64.dtype == np.float64
        # float32 activations: 2^-24 relative per operation; a grid may round a value either way
        step = {None: 0.0, "fixed:12:6": 2.0 ** -6, "float16": 2.0 ** -10, "float32": 0.0}[precision]
        tol = 1e-5 + step * (1 + np.abs(y64))
        assert np.all(np.abs(y32 - y64) <= tol)


def test_float32_compute_rounds_what_float64_keeps():
    m64, _ = _pair(None)
    params = dict(m64.params)
    params["tok_emb"] = np.full_like(params["tok_emb"], 1.0 + 2.0 ** -30)  # not a float32 number
    params["pos_emb"] = np.zeros_like(params["pos_emb"])
    m64 = m64.with_params(params)
    tokens = m64._tokens(_tokens(2, 3))
    assert np.all(m64.embed(tokens) == 1.0 + 2.0 ** -30)
    e32 = m64.with_dtype("float32").embed(tokens)
    assert e32.dtype == np.float32 and np.all(e32 == 1.0)


@pytest.mark.parametrize("precision", ["fixed:12:6", "float16", "float32"])
@pytest.mark.parametrize("layer_norm", [False, "pre"])
def test_split_partials_equal_forward_bit_for_bit_in_float32(precision, layer_norm):
    _, model = _pair(precision, layer_norm, seed=3)
    tokens = _tokens(6, 7, seed=4)
    reference = model.forward(tokens)
    rng = np.random.default_rng(5)
    for _ in range(4):  # random partitions of the positions; Bob always holds the output position
        alice_holds = rng.random(7) < 0.5
        alice_holds[6] = False
        q = model.query(tokens[:, 6], 6)
        alice = model.partial(tokens, np.flatnonzero(alice_holds), query=q)
        bob = model.partial(tokens, np.flatnonzero(~alice_holds), query=q)
        assert alice.numerator.dtype == np.int64
        logits = model.finish(alice + bob, tokens[:, 6])
        assert logits.dtype == np.float32 and np.array_equal(logits, reference)


def test_float32_mode_through_the_registry_and_saved_files(tmp_path):
    model = build_model("transformer", vocab_size=5, width=8, n_outputs=2, layers=2, dtype="float32",
                        precision="fixed:16:8", seed=2)
    tokens = _tokens(3, 4) % 5
    logits = model.forward(tokens)
    assert logits.dtype == np.float32 and "dtype=float32" in repr(model)
    path = model.save(tmp_path / "t32.npz")
    loaded = Transformer.load(path)
    assert loaded.dtype == np.float32 and np.array_equal(loaded.forward(tokens), logits)
    assert "dtype" not in build_model("transformer", vocab_size=5, width=8, n_outputs=2).config
    with pytest.raises(InvalidParameterError):
        build_model("transformer", vocab_size=5, width=8, n_outputs=2, dtype="float16")
