"""Our Elman/LSTM/GRU equal torch's nn.RNN/nn.LSTM/nn.GRU on the same weights (float64, 1e-6).

The committed fixtures (``tests/fixtures/torch_recurrent.npz``, written by
``tests/fixtures/make_torch_fixtures.py``) make this run without torch; when torch is installed a
second test regenerates them and compares again.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.torch_io import model_from_torch_state_dict, torch_state_dict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOLERANCE = 1e-6


def _load_fixtures():
    with np.load(FIXTURES / "torch_recurrent.npz", allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _cases(arrays):
    return json.loads(str(arrays["cases"]))


def _check_case(arrays, case):
    name, kind = case["name"], case["module"]
    weights = {k[len(name) + 1:]: v for k, v in arrays.items() if k.startswith(name + ".weight")
               or k.startswith(name + ".bias")}
    model = model_from_torch_state_dict(weights, kind, nonlinearity=case["nonlinearity"])
    state = {}
    for layer in range(case["layers"]):
        state[f"l{layer}.h"] = arrays[f"{name}.h0"][layer]
        if kind == "lstm":
            state[f"l{layer}.c"] = arrays[f"{name}.c0"][layer]
    final, y = model.run_layers(arrays[f"{name}.x"], state)  # float inputs (B, T, d), torch's feed
    errors = [np.abs(y - arrays[f"{name}.output"]).max()]
    for layer in range(case["layers"]):
        errors.append(np.abs(final[f"l{layer}.h"] - arrays[f"{name}.h_n"][layer]).max())
        if kind == "lstm":
            errors.append(np.abs(final[f"l{layer}.c"] - arrays[f"{name}.c_n"][layer]).max())
    return max(errors), model, weights


def test_fixtures_cover_every_module_and_shape():
    cases = _cases(_load_fixtures())
    assert {c["module"] for c in cases} == {"rnn", "lstm", "gru"}
    assert max(c["layers"] for c in cases) >= 3 and any(not c["bias"] for c in cases)


@pytest.mark.parametrize("index", range(9))
def test_outputs_equal_torch_fixtures(index):
    arrays = _load_fixtures()
    case = _cases(arrays)[index]
    error, model, weights = _check_case(arrays, case)
    assert error < TOLERANCE, (case["name"], error)
    exported = torch_state_dict(model)  # and back to torch names: same weights, summed biases
    for key, value in weights.items():
        if key.startswith("weight"):
            assert np.array_equal(exported[key], value)
    if case["module"] != "gru":
        for k in range(case["layers"]):
            np.testing.assert_allclose(exported[f"bias_ih_l{k}"] + exported[f"bias_hh_l{k}"],
                                       weights.get(f"bias_ih_l{k}", 0) + weights.get(f"bias_hh_l{k}", 0))


def test_embedding_and_readout_from_a_bigger_module():
    rng = np.random.default_rng(0)
    sd = {"emb.weight": rng.normal(size=(7, 3)), "rnn.weight_ih_l0": rng.normal(size=(12, 3)),
          "rnn.weight_hh_l0": rng.normal(size=(12, 4)), "fc.weight": rng.normal(size=(2, 4)),
          "fc.bias": rng.normal(size=2)}
    model = model_from_torch_state_dict(sd, "gru", prefix="rnn.", embedding_key="emb.weight",
                                        readout_prefix="fc.")
    assert (model.vocab_size, model.width, model.n_outputs) == (7, 3, 2)
    tokens = np.array([[1, 6, 0]])
    _, logits = model.run_with_output(tokens)
    _, y = model.run_layers(sd["emb.weight"][tokens])
    np.testing.assert_allclose(logits, y[:, -1] @ sd["fc.weight"].T + sd["fc.bias"], atol=1e-14)


def test_loaded_model_saves_and_loads(tmp_path):
    from models.files import load_model, save_model

    arrays = _load_fixtures()
    case = [c for c in _cases(arrays) if c["name"] == "rnn_relu_deep"][0]
    _, model, _ = _check_case(arrays, case)
    loaded = load_model(save_model(model, tmp_path / "m.npz"))
    x = arrays["rnn_relu_deep.x"]
    assert np.array_equal(loaded.run_layers(x)[1], model.run_layers(x)[1])


def test_refuses_what_it_cannot_load():
    rng = np.random.default_rng(0)
    good = {"weight_ih_l0": rng.normal(size=(8, 3)), "weight_hh_l0": rng.normal(size=(8, 2))}
    with pytest.raises(InvalidParameterError):
        model_from_torch_state_dict(good, "gru")  # 8 rows are not 3 gate blocks of 2
    with pytest.raises(InvalidParameterError):
        model_from_torch_state_dict(dict(good, weight_ih_l0_reverse=good["weight_ih_l0"]), "lstm")
    with pytest.raises(InvalidParameterError):
        model_from_torch_state_dict({"weight_ih_l1": good["weight_ih_l0"]}, "lstm")
    with pytest.raises(InvalidParameterError):
        model_from_torch_state_dict(good, "mamba")


def test_the_package_never_imports_torch():
    code = ("import sys, models, models.torch_io, models.common, models.recurrent, models.registry;"
            "from models import build_model; build_model('lstm', vocab_size=2, width=2, n_outputs=1);"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch (reference extra) not installed")
def test_regenerated_torch_outputs_agree():
    pytest.importorskip("torch")
    sys.path.insert(0, str(FIXTURES))
    try:
        import make_torch_fixtures
    finally:
        sys.path.remove(str(FIXTURES))
    fresh = make_torch_fixtures.make_fixtures()
    for case in _cases(fresh):
        error, _, _ = _check_case(fresh, case)
        assert error < TOLERANCE, (case["name"], error)
    committed = _load_fixtures()
    if str(committed["torch_version"]) == str(fresh["torch_version"]):  # same torch: same fixtures
        for key in committed:
            if key not in ("cases", "torch_version"):
                np.testing.assert_allclose(fresh[key], committed[key], rtol=0, atol=1e-12, err_msg=key)
