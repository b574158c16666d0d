"""The NumPy path of Elman/LSTM/GRU (buffers, ``out=``, chunks of steps) against their Array API path.

Both paths make the same calls in the same order, so they must agree bit for bit, at every batch
size (B = 1 takes NumPy's matrix-vector product), dtype, precision and split of the sequence.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.recurrent import projected
from models.registry import build_model

CASES = [("elman", {}), ("elman", {"nonlinearity": "relu"}), ("lstm", {}), ("gru", {}),
         ("lstm", {"input_width": 3})]
PRECISIONS = [None, "fixed:16:8", "float32"]


def _model(arch, hyper, dtype="float64", precision=None, layers=2):
    return build_model(arch, vocab_size=5, width=4, n_outputs=2, layers=layers, seed=2, dtype=dtype,
                       precision=precision, **hyper)


def _array_api_path(model):
    """A copy of ``model`` whose layers run the Array API path (still on NumPy)."""
    generic = model.with_precision(model.precision)
    for layer in generic.layers:
        layer.numpy_path = False
    return generic


def _inputs(model, B, T, seed=0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, model.vocab_size, size=(B, T))
    floats = rng.normal(scale=1.5, size=(B, T, model.width)).astype(model.dtype)
    return tokens, floats


def _same_run(a, b):
    (sa, ya), (sb, yb) = a, b
    assert ya.dtype == yb.dtype and ya.shape == yb.shape
    assert np.array_equal(ya, yb)
    assert list(sa) == list(sb) and all(np.array_equal(sa[k], sb[k]) for k in sa)
    assert all(sa[k].dtype == ya.dtype for k in sa)


@pytest.mark.parametrize("arch,hyper", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("B", [1, 3])
def test_numpy_path_equals_array_api_path_bit_for_bit(arch, hyper, dtype, precision, B):
    if dtype == "float32" and precision == "float32":
        pytest.skip("float32 rounding of float32 compute is the identity")
    model = _model(arch, hyper, dtype, precision)
    assert all(layer.numpy_path for layer in model.layers)
    generic = _array_api_path(model)
    for inputs in _inputs(model, B, 7):
        _same_run(model.run_layers(inputs), generic.run_layers(inputs))


@pytest.mark.parametrize("arch,hyper", CASES)
def test_chunks_of_steps_do_not_change_a_bit(arch, hyper, monkeypatch):
    model = _model(arch, hyper, precision="fixed:16:8")
    _, floats = _inputs(model, 3, 10)
    whole = model.run_layers(floats)
    row = 3 * (model.layers[0].d_in + model.layers[0].d_out + 1)  # B * (d_in + m + 1)
    for chunk in (1, 3, 4):  # 10 steps: 10 chunks, 3 + 3 + 3 + 1, 4 + 4 + 2
        monkeypatch.setattr(projected, "WORKSPACE_ELEMENTS", chunk * row)
        _same_run(model.run_layers(floats), whole)


@pytest.mark.parametrize("arch,hyper", CASES)
@pytest.mark.parametrize("precision", [None, "fixed:12:6"])
@pytest.mark.parametrize("B", [1, 4])  # B = 1 projects the inputs up front; B = 4 fuses them per step
def test_float_inputs_split_anywhere_equal_the_unsplit_run(arch, hyper, precision, B):
    model = _model(arch, hyper, precision=precision)
    _, floats = _inputs(model, B, 6)
    full_state, full_y = model.run_layers(floats)
    for t in range(7):
        state, y = model.run_layers(floats[:, t:], model.run(floats[:, :t]))
        assert np.array_equal(y, full_y[:, t:])
        assert all(np.array_equal(state[k], full_state[k]) for k in state)


@pytest.mark.parametrize("arch,hyper", CASES)
def test_layer_step_equals_the_numpy_run_and_nothing_is_aliased(arch, hyper):
    layer = _model(arch, hyper, layers=1).layers[0]
    x = np.random.default_rng(1).normal(size=(2, 5, layer.d_in))
    kept = x.copy()
    start = {k: np.random.default_rng(2).normal(size=v.shape) for k, v in layer.init_state(2).items()}
    originals = {k: v.copy() for k, v in start.items()}
    state, ys = dict(start), []
    for t in range(5):
        state, y = layer.step(state, x[:, t])
        ys.append(y)
    ran, y_all = layer.run_sequence(dict(start), x)
    assert np.array_equal(np.stack(ys, axis=1), y_all)
    assert all(np.array_equal(state[k], ran[k]) for k in state)
    assert np.array_equal(x, kept) and all(np.array_equal(start[k], originals[k]) for k in start)
    before = {k: v.copy() for k, v in ran.items()}
    y_all[...] = np.nan  # the outputs share no memory with the returned state
    assert all(np.array_equal(ran[k], before[k]) for k in ran)


def test_empty_float_sequence_keeps_the_state():
    model = _model("lstm", {})
    start = {k: np.full(v.shape, 0.25) for k, v in model.init_state(2).items()}
    state, y = model.run_layers(np.zeros((2, 0, model.width)), start)
    assert y.shape == (2, 0, 4) and all(np.array_equal(state[k], start[k]) for k in start)


def test_the_old_import_path_still_works():
    from models.recurrent.projected import ProjectedLayer
    from models.recurrent.lstm import LSTMLayer

    assert ProjectedLayer is projected.ProjectedLayer and issubclass(LSTMLayer, ProjectedLayer)


def test_a_layer_without_numpy_cell_runs_the_array_api_path():
    from models.recurrent.elman import ElmanLayer

    class PlainElman(ElmanLayer):
        numpy_cell = projected.ProjectedLayer.numpy_cell

    layer = ElmanLayer.init(d_in=2, width=3, seed=1)
    plain = PlainElman(2, 3, layer.params)
    assert layer.numpy_path and not plain.numpy_path
    x = np.random.default_rng(0).normal(size=(2, 4, 2))
    _same_run(plain.run_sequence(plain.init_state(2), x), layer.run_sequence(layer.init_state(2), x))


@pytest.mark.parametrize("arch", ["elman", "lstm", "gru"])
def test_float_inputs_at_one_instance_are_projected_up_front(arch):
    """At B = 1 the pre-activations are ``h W_h + (x_t W_x + b)``: a plain loop that projects the
    inputs first gives the same bits; the fused ``[x_t, h, 1] W`` would not, in general."""
    layer = _model(arch, {}, layers=1).layers[0]
    x = np.random.default_rng(3).normal(size=(1, 6, layer.d_in))
    u = np.stack([x[:, t] @ layer.w["Wx"] + layer.w["bx"] for t in range(6)], axis=1)  # (1, T, G*m)
    projected = layer.to_namespace(layer.xp)
    projected.numpy_path = False
    expected = projected.run_projected(projected.init_state(1), u)
    _same_run(layer.run_sequence(layer.init_state(1), x), expected)

