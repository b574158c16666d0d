"""Elman, LSTM and GRU against plain per-instance, per-step loops; initialisers; save and load."""

from __future__ import annotations

import math

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.files import load_model, save_model
from models.recurrent import ElmanLayer, GRULayer, LSTMLayer
from models.registry import build_model


# -- plain references: one instance, one step, one layer at a time, from the stored parameters --
def _sigmoid(a):
    return 1.0 / (1.0 + math.exp(-a))


def _elman_cell(p, x, h, nonlinearity):
    m = h.shape[0]
    new = np.zeros(m)
    for j in range(m):
        a = p["b"][j] + sum(x[i] * p["W_x"][i, j] for i in range(x.shape[0])) + \
            sum(h[i] * p["W_h"][i, j] for i in range(m))
        new[j] = math.tanh(a) if nonlinearity == "tanh" else max(a, 0.0)
    return {"h": new}


def _lstm_cell(p, x, h, c):
    m = h.shape[0]
    pre = p["b"] + x @ p["W_x"] + h @ p["W_h"]
    i, f, g, o = (pre[k * m:(k + 1) * m] for k in range(4))
    new_c = np.array([_sigmoid(f[j]) * c[j] + _sigmoid(i[j]) * math.tanh(g[j]) for j in range(m)])
    new_h = np.array([_sigmoid(o[j]) * math.tanh(new_c[j]) for j in range(m)])
    return {"h": new_h, "c": new_c}


def _gru_cell(p, x, h):
    m = h.shape[0]
    gx = x @ p["W_x"] + p["b_x"]
    gh = h @ p["W_h"] + p["b_h"]
    r = [_sigmoid(gx[j] + gh[j]) for j in range(m)]
    z = [_sigmoid(gx[m + j] + gh[m + j]) for j in range(m)]
    n = [math.tanh(gx[2 * m + j] + r[j] * gh[2 * m + j]) for j in range(m)]
    return {"h": np.array([(1 - z[j]) * n[j] + z[j] * h[j] for j in range(m)])}


def reference_run(model, tokens, state):
    """Final state and logits of ``model`` by plain loops over instances, steps and layers."""
    B, T = tokens.shape
    final = {k: np.array(v, dtype=np.float64, copy=True) for k, v in state.items()}
    logits = np.zeros((B, model.n_outputs))
    for b in range(B):
        s = {k: v[b].copy() for k, v in final.items()}
        for t in range(T):
            x = model.embedding[tokens[b, t]]
            for li, layer in enumerate(model.layers):
                p, h = layer.params, s[f"l{li}.h"]
                if layer.arch == "elman":
                    new = _elman_cell(p, x, h, layer.nonlinearity)
                elif layer.arch == "lstm":
                    new = _lstm_cell(p, x, h, s[f"l{li}.c"])
                else:
                    new = _gru_cell(p, x, h)
                s.update({f"l{li}.{k}": v for k, v in new.items()})
                x = new["h"]
        for k in final:
            final[k][b] = s[k]
        top = s[f"l{len(model.layers) - 1}.h"]
        logits[b] = top @ model.readout_weight + model.readout_bias
    return final, logits


CASES = [("elman", {}), ("elman", {"nonlinearity": "relu"}), ("lstm", {}), ("gru", {}),
         ("lstm", {"init": "orthogonal"}), ("gru", {"init": "orthogonal"}),
         ("elman", {"init": "orthogonal", "input_width": 3})]


@pytest.mark.parametrize("arch,hyper", CASES)
@pytest.mark.parametrize("layers", [1, 3])
def test_vectorised_kernel_equals_plain_loops(arch, hyper, layers):
    model = build_model(arch, vocab_size=6, width=5, n_outputs=3, layers=layers, seed=7, **hyper)
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 6, size=(4, 6))
    start = {k: rng.normal(scale=0.5, size=v.shape) for k, v in model.init_state(4).items()}
    state, logits = model.run_with_output(tokens, dict(start))
    ref_state, ref_logits = reference_run(model, tokens, start)
    np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=1e-12)
    for key in ref_state:
        np.testing.assert_allclose(state[key], ref_state[key], rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", [ElmanLayer, LSTMLayer, GRULayer])
def test_layer_step_run_sequence_and_float_inputs_agree(cls):
    layer = cls.init(d_in=3, width=4, seed=0)
    x = np.random.default_rng(0).normal(size=(5, 7, 3))
    state, ys = layer.init_state(5), []
    for t in range(7):
        state, y = layer.step(state, x[:, t])
        ys.append(y)
    s2, y2 = layer.run_sequence(layer.init_state(5), x)
    np.testing.assert_allclose(np.stack(ys, 1), y2, rtol=0, atol=1e-14)
    assert all(np.array_equal(state[k], s2[k]) for k in state)


def test_float_feature_inputs_equal_token_inputs():
    model = build_model("lstm", vocab_size=4, width=3, n_outputs=2, layers=2, seed=1)
    tokens = np.array([[0, 3, 1], [2, 2, 0]])
    _, by_tokens = model.run_with_output(tokens)
    _, by_features = model.run_with_output(model.embedding[tokens])  # (B, T, d)
    np.testing.assert_allclose(by_tokens, by_features, rtol=0, atol=1e-14)


# -- initialisers ------------------------------------------------------------------------------
@pytest.mark.parametrize("arch,gates", [("elman", 1), ("lstm", 4), ("gru", 3)])
def test_uniform_init_is_torchs_and_seeded(arch, gates):
    m = 9
    a = build_model(arch, vocab_size=5, width=m, n_outputs=2, layers=2, seed=4)
    b = build_model(arch, vocab_size=5, width=m, n_outputs=2, layers=2, seed=4)
    c = build_model(arch, vocab_size=5, width=m, n_outputs=2, layers=2, seed=5)
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert not np.array_equal(a.params["l0.W_h"], c.params["l0.W_h"])
    assert not np.array_equal(a.params["l0.W_h"], a.params["l1.W_h"])  # layers draw their own
    for key, value in a.params.items():
        if key.startswith("l"):
            assert np.abs(value).max() <= 1 / math.sqrt(m)
            assert value.shape[-1] == gates * m
    assert a.params["embedding"].shape == (5, m) and a.params["readout.weight"].shape == (m, 2)


def test_orthogonal_init():
    model = build_model("lstm", vocab_size=3, width=6, n_outputs=1, init="orthogonal")
    w_h, b = model.params["l0.W_h"], model.params["l0.b"]
    for k in range(4):
        block = w_h[:, 6 * k:6 * (k + 1)]
        np.testing.assert_allclose(block.T @ block, np.eye(6), atol=1e-12)
    assert np.array_equal(b, np.r_[np.zeros(6), np.ones(6), np.zeros(12)])  # forget bias 1
    with pytest.raises(InvalidParameterError):
        build_model("gru", vocab_size=3, width=2, n_outputs=1, init="glorious")


# -- save and load -----------------------------------------------------------------------------
@pytest.mark.parametrize("arch,hyper", CASES[:4] + [("lstm", {"input_width": 2})])
def test_save_load_round_trip(tmp_path, arch, hyper):
    model = build_model(arch, vocab_size=5, width=4, n_outputs=2, layers=2, seed=3,
                        precision="fixed:12:6", **hyper)
    path = save_model(model, tmp_path / "model.npz")
    loaded = load_model(path)
    assert loaded.arch == model.arch and loaded.precision.name == "fixed:12:6"
    assert loaded.params.keys() == model.params.keys()
    assert all(np.array_equal(loaded.params[k], model.params[k]) for k in model.params)
    tokens = np.random.default_rng(0).integers(0, 5, size=(3, 5))
    assert np.array_equal(loaded.run_with_output(tokens)[1], model.run_with_output(tokens)[1])
    assert load_model(path, precision=None).precision is None


def test_load_refuses_foreign_files_and_bad_parameters(tmp_path):
    np.savez(tmp_path / "x.npz", a=np.zeros(2))
    with pytest.raises(InvalidParameterError):
        load_model(tmp_path / "x.npz")
    model = build_model("gru", vocab_size=3, width=2, n_outputs=1)
    params = dict(model.params)
    params["l0.W_h"] = np.zeros((3, 3))
    with pytest.raises(InvalidParameterError, match="shape"):
        model.with_params(params)
    del params["l0.W_h"]
    with pytest.raises(InvalidParameterError, match="missing"):
        model.with_params(params)
