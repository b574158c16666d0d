"""Our MultiheadAttention equals torch's ``nn.MultiheadAttention`` on the same weights (float64, 1e-6).

The committed fixtures (``tests/fixtures/torch_mha.npz``, written by
``tests/fixtures/make_torch_mha_fixtures.py``) make this run without torch; when torch is
installed a second test regenerates them and compares again.
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
from models.transformer import Transformer
from models.transformer.torch_io import (load_torch_mha, mha_state_dict, torch_mha_params,
                                         transformer_with_torch_mha)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOLERANCE = 1e-6


def _load(path=FIXTURES / "torch_mha.npz"):
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _case(arrays, name):
    return {k[len(name) + 1:]: v for k, v in arrays.items() if k.startswith(name + ".")}


def _error(arrays, case):
    got = _case(arrays, case["name"])
    mha = load_torch_mha(got, case["H"])
    y = mha(got["query"], got["key"], got["value"], causal=case["causal"])
    return np.abs(y - got["output"]).max(), mha, got


def test_fixtures_cover_the_shapes():
    cases = json.loads(str(_load()["cases"]))
    assert len(cases) >= 6
    assert any(c["causal"] for c in cases) and any(not c["bias"] for c in cases)
    assert any(c["kdim"] for c in cases) and any(c["Nq"] != c["Nk"] for c in cases)
    assert {c["H"] for c in cases} >= {1, 2, 4, 8}


@pytest.mark.parametrize("index", range(7))
def test_outputs_equal_torch_fixtures(index):
    arrays = _load()
    case = json.loads(str(arrays["cases"]))[index]
    error, mha, weights = _error(arrays, case)
    assert error < TOLERANCE, (case["name"], error)
    exported = mha_state_dict(mha)                      # back to torch's names and layouts
    for key in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                "out_proj.weight"):
        if key in weights:
            assert np.array_equal(exported[key], weights[key])


def test_a_transformer_layer_takes_torch_weights(tmp_path):
    arrays = _load()
    weights = _case(arrays, "self_small")                         # E = 8, H = 2
    path = tmp_path / "mha.npz"
    np.savez(path, **{k: v for k, v in weights.items() if "proj" in k}, num_heads=2)
    base = Transformer(8, 8, 1, 2, 4, 4, 0, 8, positional="none", causal=False, residual=False,
                       params={"tok_emb": np.eye(8), "readout.W": np.eye(8)})
    model = transformer_with_torch_mha(base, path)                # n_heads read from the file
    mha = load_torch_mha(path)
    tokens = np.array([[0, 3, 5, 1, 7], [2, 2, 6, 4, 0]])
    np.testing.assert_allclose(model.forward_all(tokens), mha(np.eye(8)[tokens]), rtol=0, atol=1e-12)
    with pytest.raises(InvalidParameterError):
        transformer_with_torch_mha(Transformer(8, 8, 1, 4, 2, 2, 0, 8), path, n_heads=2)


def test_refuses_what_it_cannot_load():
    w = _case(_load(), "self_small")
    with pytest.raises(InvalidParameterError):
        torch_mha_params({k: v for k, v in w.items() if "proj" in k})        # H unknown
    with pytest.raises(InvalidParameterError):
        torch_mha_params(dict(w, bias_k=np.zeros((1, 1, 8))), n_heads=2)
    with pytest.raises(InvalidParameterError):
        torch_mha_params(w, n_heads=3)                                       # 8 % 3 != 0
    with pytest.raises(InvalidParameterError):
        torch_mha_params({"out_proj.weight": w["out_proj.weight"]}, n_heads=2)


def test_prefixed_state_dicts_load():
    w = _case(_load(), "self_causal")
    big = {f"layers.0.self_attn.{k}": v for k, v in w.items() if "proj" in k}
    big["layers.0.linear1.weight"] = np.zeros((3, 3))
    params, scale = torch_mha_params(big, n_heads=3, prefix="layers.0.self_attn.")
    assert params["W_Q"].shape == (3, 12, 4) and scale == 0.5


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the reference extra")
def test_regenerated_fixtures_match_again(tmp_path):
    out = tmp_path / "torch_mha.npz"
    script = FIXTURES / "make_torch_mha_fixtures.py"
    subprocess.run([sys.executable, str(script), "--out", str(out), "--seed", "3"], check=True,
                   capture_output=True)
    arrays = _load(out)
    for case in json.loads(str(arrays["cases"])):
        error, _, _ = _error(arrays, case)
        assert error < TOLERANCE, (case["name"], error)


def test_the_package_never_imports_torch():
    code = ("import sys, models.transformer, models.transformer.torch_io;"
            "from models.transformer import Transformer;"
            "Transformer.random(3, 4, 1, 1, 4, 4, 4, 2, seed=0).forward([[0, 1, 2]]);"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
