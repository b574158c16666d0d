"""``commcomp import torch`` takes no option on trust (issue 25).

A state dict does not record an nn.RNN's nonlinearity, the number of heads or an encoder layer's
activation; a wrong value imports a different model, and the conversion check (torch rebuilt with the
same options) cannot see it.  So: no defaults for these, a value recorded in a file (``num_heads``, a
``.config.json`` beside the state dict) wins over nothing and contradicts a flag loudly, the output
says which options no file confirmed, and non-finite or incomplete weights are refused.  The ``.npz``
path: runs with or without torch (with torch, the conversion check runs too).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import cli
from models.files import load_model

RNG = np.random.default_rng(25)


def _rnn_sd(gates=1, d=3, m=4, vocab=6, classes=2):
    return {"emb.weight": RNG.normal(size=(vocab, d)), "rnn.weight_ih_l0": RNG.normal(size=(gates * m, d)),
            "rnn.weight_hh_l0": RNG.normal(size=(gates * m, m)), "rnn.bias_ih_l0": RNG.normal(size=gates * m),
            "rnn.bias_hh_l0": RNG.normal(size=gates * m), "fc.weight": RNG.normal(size=(classes, m)),
            "fc.bias": RNG.normal(size=classes)}


def _encoder_sd(d=4, mlp=8, vocab=5):
    p = "enc.layers.0."
    sd = {f"{p}self_attn.in_proj_weight": RNG.normal(size=(3 * d, d)), f"{p}self_attn.in_proj_bias": RNG.normal(size=3 * d),
          f"{p}self_attn.out_proj.weight": RNG.normal(size=(d, d)), f"{p}self_attn.out_proj.bias": RNG.normal(size=d),
          f"{p}linear1.weight": RNG.normal(size=(mlp, d)), f"{p}linear1.bias": RNG.normal(size=mlp),
          f"{p}linear2.weight": RNG.normal(size=(d, mlp)), f"{p}linear2.bias": RNG.normal(size=d),
          f"{p}norm1.weight": np.ones(d), f"{p}norm1.bias": np.zeros(d), f"{p}norm2.weight": np.ones(d),
          f"{p}norm2.bias": np.zeros(d), "emb.weight": RNG.normal(size=(vocab, d)),
          "fc.weight": RNG.normal(size=(2, d)), "fc.bias": np.zeros(2)}
    return sd


def _save(tmp_path, sd, name="sd", config=None):
    src = tmp_path / f"{name}.npz"
    np.savez(src, **sd)
    if config is not None:
        (tmp_path / f"{name}.config.json").write_text(json.dumps(config))
    return src


def _run(capsys, src, *options):
    out = src.parent / "m.npz"
    code = cli.main(["import", "torch", str(src), "--out", str(out), "--format", "json", *map(str, options)])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else None), captured.err, out


def _refused(capsys, src, *options, needle):
    code, _, err, out = _run(capsys, src, *options)
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert not out.exists()
    return err


# -- nonlinearity of an nn.RNN ---------------------------------------------------------------------
def test_rnn_nonlinearity_has_no_default(capsys, tmp_path):
    src = _save(tmp_path, _rnn_sd())
    _refused(capsys, src, "--arch", "elman", needle="does not record nonlinearity")


def test_rnn_nonlinearity_from_a_flag_is_reported_unconfirmed(capsys, tmp_path):
    src = _save(tmp_path, _rnn_sd())
    code, out, _, model = _run(capsys, src, "--arch", "elman", "--nonlinearity", "relu")
    assert code == 0 and out["options"] == {"nonlinearity": "relu"}
    assert out["unconfirmed"] == ["nonlinearity"] and out["option_sources"] == {"nonlinearity": "--nonlinearity"}
    assert load_model(model).layers[0].nonlinearity == "relu"
    code = cli.main(["import", "torch", str(src), "--arch", "elman", "--nonlinearity", "relu", "--out",
                     str(tmp_path / "t.npz")])
    assert code == 0 and "no file confirms" in capsys.readouterr().out


def test_rnn_config_beside_the_state_dict_confirms_and_contradicts(capsys, tmp_path):
    src = _save(tmp_path, _rnn_sd(), config={"nonlinearity": "tanh"})
    code, out, _, model = _run(capsys, src, "--arch", "elman")
    assert code == 0 and out["unconfirmed"] == [] and out["options"] == {"nonlinearity": "tanh"}
    assert out["option_sources"]["nonlinearity"].endswith("sd.config.json")
    assert load_model(model).layers[0].nonlinearity == "tanh"
    model.unlink()
    _refused(capsys, src, "--arch", "elman", "--nonlinearity", "relu", needle="sd.config.json says 'tanh'")


def test_options_for_another_architecture_are_refused(capsys, tmp_path):
    src = _save(tmp_path, _rnn_sd(gates=3))
    _refused(capsys, src, "--arch", "gru", "--bidirectional", needle="--bidirectional does not apply to --arch gru")
    _refused(capsys, src, "--arch", "gru", "--nonlinearity", "relu", needle="--nonlinearity does not apply")
    _refused(capsys, src, "--arch", "gru", "--heads", "2", needle="--heads does not apply")
    _refused(capsys, src, "--arch", "gru", "--problem", "bogus", needle="--problem")


# -- heads and activation of attention -------------------------------------------------------------
def test_heads_recorded_in_the_state_dict_beat_a_wrong_flag(capsys, tmp_path):
    sd = _encoder_sd()
    sd["num_heads"] = np.array(2)
    src = _save(tmp_path, sd)
    _refused(capsys, src, "--arch", "transformer", "--heads", "1", "--activation", "relu",
             needle="the state dict (num_heads) says 2")
    code, out, _, _ = _run(capsys, src, "--arch", "transformer", "--activation", "relu")
    assert code == 0 and out["heads"] == 2 and out["option_sources"]["heads"] == "the state dict (num_heads)"
    assert set(out["unconfirmed"]) == {"activation", "causal", "norm_first"}


def test_a_wrong_head_count_gives_another_model(capsys, tmp_path):
    """Why heads are never assumed: the same arrays read with 1 and with 2 heads disagree."""
    src = _save(tmp_path, _encoder_sd(), config={"nhead": 2, "activation": "relu", "norm_first": False})
    code, two, _, path = _run(capsys, src, "--arch", "transformer", "--bidirectional")
    assert code == 0 and two["heads"] == 2 and two["unconfirmed"] == ["causal"]
    tokens = RNG.integers(0, 5, size=(16, 6))
    logits2 = load_model(path).forward(tokens)
    path.unlink()
    _refused(capsys, src, "--arch", "transformer", "--heads", "1", needle="says 2")
    (tmp_path / "sd.config.json").write_text(json.dumps({"nhead": 1, "activation": "relu"}))
    code, one, _, path = _run(capsys, src, "--arch", "transformer", "--bidirectional")
    assert code == 0 and one["heads"] == 1
    assert np.max(np.abs(load_model(path).forward(tokens) - logits2)) > 1e-3


def test_activation_has_no_default_and_gelu_is_refused_by_name(capsys, tmp_path):
    src = _save(tmp_path, _encoder_sd())
    _refused(capsys, src, "--arch", "transformer", "--heads", "2", needle="does not record activation")
    _refused(capsys, src, "--arch", "transformer", "--heads", "2", "--activation", "gelu",
             needle="activation 'gelu' is refused by name")
    src = _save(tmp_path, _encoder_sd(), name="g", config={"nhead": 2, "activation": "gelu"})
    _refused(capsys, src, "--arch", "transformer", needle="activation 'gelu' is refused by name")


# -- weights ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_weights_are_refused_at_import(capsys, tmp_path, bad):
    sd = _rnn_sd(gates=4)
    sd["rnn.weight_hh_l0"][1, 2] = bad
    _refused(capsys, _save(tmp_path, sd), "--arch", "lstm", needle="non-finite weights")


def test_non_finite_weights_are_refused_at_load(capsys, tmp_path):
    from models.files import ModelFileError, save_model
    from models.registry import build_model

    m = build_model("elman", vocab_size=6, width=4, n_outputs=2, seed=0)
    save_model(m.with_params({k: np.full_like(v, np.nan) for k, v in m.params.items()}), tmp_path / "nan.npz")
    with pytest.raises(ModelFileError, match="non-finite"):
        load_model(tmp_path / "nan.npz")


def test_a_missing_bias_is_named_not_read_as_zero(capsys, tmp_path):
    sd = _rnn_sd(gates=4)
    del sd["rnn.bias_hh_l0"]
    _refused(capsys, _save(tmp_path, sd), "--arch", "lstm", needle="rnn.bias_hh_l0 missing")
    sd = _rnn_sd(gates=4)
    for key in ("rnn.bias_ih_l0", "rnn.bias_hh_l0"):  # bias=False: no bias at all is fine
        del sd[key]
    code, out, _, _ = _run(capsys, _save(tmp_path, sd, name="nobias"), "--arch", "lstm")
    assert code == 0 and out["unconfirmed"] == []
