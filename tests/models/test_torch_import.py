"""``commcomp import torch``: state dicts of nn.RNN/nn.LSTM/nn.GRU and nn.MultiheadAttention models.

The ``.npz`` path runs with torch blocked (``sys.modules["torch"] = None``) on the committed fixtures: the
torch outputs stored there are the reference.  ``tests/fixtures/tiny_lstm_index_lookup.state_dict.npz``
is a real trained model (``docs/examples/train_tiny_lstm.py``): imported, verified and witnessed.  Tests
that need torch skip without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cli
from models.files import load_model
from models.torch_import import TorchImportError, model_from_state_dict
from reductions.importing import import_torch, torch_difference
from reductions.simulate import verify
from reductions.search.witness import find_witness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY = FIXTURES / "tiny_lstm_index_lookup.state_dict.npz"


@pytest.fixture()
def no_torch(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "torch", None)  # `import torch` raises ImportError


def _fixture(name):
    with np.load(FIXTURES / name, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _import(capsys, argv):
    assert cli.main(["import", "torch"] + argv + ["--format", "json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", ["rnn_tanh_small", "rnn_nobias", "lstm_small", "lstm_wide", "gru_small"])
def test_recurrent_npz_without_torch_matches_torch_outputs(capsys, tmp_path, no_torch, case):
    arrays = _fixture("torch_recurrent.npz")
    meta = {c["name"]: c for c in json.loads(str(arrays["cases"]))}[case]
    assert not np.any(arrays[f"{case}.h0"])  # these cases start from zeros, as a commcomp model does
    sd = {k[len(case) + 1:]: v for k, v in arrays.items()
          if k.startswith(f"{case}.weight") or k.startswith(f"{case}.bias")}
    src = tmp_path / "sd.npz"
    np.savez(src, **sd)
    arch = {"rnn": "elman"}.get(meta["module"], meta["module"])
    options = ["--nonlinearity", meta["nonlinearity"]] if arch == "elman" else []  # no file records it
    out = _import(capsys, [str(src), "--arch", arch, "--out", str(tmp_path / "m.npz")] + options)
    assert out["torch_checked"] is False and out["torch_max_abs_difference"] is None
    assert out["unconfirmed"] == (["nonlinearity"] if arch == "elman" else [])
    assert (out["width"], out["layers"], out["compute_dtype"]) == (meta["m"], meta["layers"], "float64")
    model = load_model(tmp_path / "m.npz")
    _, logits = model.run_with_output(arrays[f"{case}.x"])       # identity head: the top h at the last step
    np.testing.assert_allclose(logits, arrays[f"{case}.output"][:, -1], atol=1e-9)


@pytest.mark.parametrize("case", ["self_small", "self_causal", "one_head_nobias"])
def test_mha_npz_matches_torch_outputs(tmp_path, case):
    """Embedding rows = the fixture's queries, identity readout, no residual: logits = torch's output."""
    arrays = _fixture("torch_mha.npz")
    meta = {c["name"]: c for c in json.loads(str(arrays["cases"]))}[case]
    B, N, E = arrays[f"{case}.query"].shape
    sd = {f"attn.{k[len(case) + 1:]}": v for k, v in arrays.items()
          if k.startswith((f"{case}.in_proj", f"{case}.out_proj"))}
    sd["emb.weight"] = arrays[f"{case}.query"].reshape(B * N, E)   # token b*N + t is query[b, t]
    sd["head.weight"], sd["head.bias"] = np.eye(E), np.zeros(E)
    src = tmp_path / "sd.npz"
    np.savez(src, **sd)
    out = import_torch(src, "transformer", tmp_path / "m.npz", heads=meta["H"], causal=meta["causal"],
                       check_with_torch=False)
    assert out["layout"] == {"embedding": "emb.weight", "body": "attn.", "readout": "head.", "positional": None,
                             "final_norm": None}
    model = load_model(tmp_path / "m.npz")
    tokens = np.arange(B * N).reshape(B, N)
    np.testing.assert_allclose(model.forward(tokens), arrays[f"{case}.output"][:, -1], atol=1e-9)


_BLOCK_TORCH = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch blocked by the test")
sys.meta_path.insert(0, _NoTorch())
import cli
code = cli.main(sys.argv[1:])
assert "torch" not in sys.modules
sys.exit(code)
"""


def test_transformer_npz_imports_in_a_process_without_torch(tmp_path):
    import subprocess
    import sys

    arrays = _fixture("torch_mha.npz")
    sd = {f"attn.{k[len('self_causal.'):]}": v for k, v in arrays.items()
          if k.startswith(("self_causal.in_proj", "self_causal.out_proj"))}
    sd["tok_embedding.weight"] = np.ones((5, 12))
    sd["fc.weight"], sd["fc.bias"] = np.ones((2, 12)), np.zeros(2)
    np.savez(tmp_path / "sd.npz", **sd)
    root = Path(cli.__file__).resolve().parent
    run = subprocess.run([sys.executable, "-c", _BLOCK_TORCH, "import", "torch", str(tmp_path / "sd.npz"), "--arch",
                          "transformer", "--heads", "3", "--out", str(tmp_path / "m.npz"), "--format", "json"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["torch_checked"] is False and out["heads"] == 3 and out["compute_dtype"] == "float64"
    assert load_model(tmp_path / "m.npz").n_heads == 3


def test_trained_lstm_imports_verifies_and_has_a_witness(capsys, tmp_path, no_torch):
    out = _import(capsys, [str(TINY), "--arch", "lstm", "--task", "index-lookup", "--n", "8",
                           "--out", str(tmp_path / "tiny.npz")])
    assert (out["task"], out["n"], out["vocab_size"], out["width"]) == ("index-lookup", 8, 10, 16)
    weights = str(tmp_path / "tiny.npz")
    v = verify("index-lookup", "lstm", 8, "float32", weights=weights, exhaustive=True)
    assert v["instances"] == 8 * 2 ** 8 and v["correct_count"] == v["instances"] and v["faithful"] == 1.0
    w = find_witness("index-lookup", "lstm", 8, "fixed:2:1", weights=weights)
    assert w["found"] and w["outputs_identical"]
    assert {w["truth_x"], w["truth_x_prime"]} == {0, 1} and w["model_answer_x"] == w["model_answer_x_prime"]
    # at another n the recorded size is refused, saying what the file holds
    assert cli.main(["verify", "index-lookup", "--arch", "lstm", "--n", "6", "--precision", "float32",
                     "--weights", weights, "--exhaustive"]) == 2
    assert "made for index-lookup at n = 8" in capsys.readouterr().err


def test_bad_state_dicts_are_refused(capsys, tmp_path, no_torch):
    sd = dict(np.load(TINY))
    cases = {
        "gru-as-lstm": ({}, "gru", "that is an nn.LSTM, not nn.GRU: use --arch lstm"),
        "leftover": ({"extra.weight": np.zeros((3, 7))}, "lstm", "cannot place: extra.weight"),
        "two-heads": ({"head2.weight": np.zeros((2, 16)), "head2.bias": np.zeros(2)}, "lstm",
                      "several candidates for the readout"),
        "bidirectional": ({"rnn.weight_ih_l0_reverse": sd["rnn.weight_ih_l0"]}, "lstm", "bidirectional"),
        "no-rnn": (None, "lstm", "no nn.LSTM weights"),
    }
    for name, (extra, arch, message) in cases.items():
        state = {"emb.weight": np.zeros((4, 3))} if extra is None else {**sd, **extra}
        src = tmp_path / f"{name}.npz"
        np.savez(src, **state)
        out = tmp_path / f"{name}.model.npz"
        assert cli.main(["import", "torch", str(src), "--arch", arch, "--out", str(out)]) == 2, name
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (name, err)
        assert not out.exists() and not list(tmp_path.glob(".commcomp-*")), name
    # a .pt needs torch, and says so
    pt = tmp_path / "m.pt"
    pt.write_bytes(b"PK")
    assert cli.main(["import", "torch", str(pt), "--arch", "lstm", "--out", str(tmp_path / "x.npz")]) == 2
    assert "needs torch" in capsys.readouterr().err
    # checked against the task at n
    assert cli.main(["import", "torch", str(TINY), "--arch", "lstm", "--task", "index-lookup", "--n", "6",
                     "--out", str(tmp_path / "x.npz")]) == 2
    assert "index-lookup at n = 6 has vocabulary 8" in capsys.readouterr().err
    with pytest.raises(TorchImportError, match="give --heads"):
        model_from_state_dict({"attn.in_proj_weight": np.zeros((12, 4)), "attn.out_proj.weight": np.zeros((4, 4))},
                              "transformer")


def test_the_torch_check_can_fail(tmp_path):
    torch = pytest.importorskip("torch")
    sd = dict(np.load(TINY))
    model, layout = model_from_state_dict(sd, "lstm")
    assert torch_difference(sd, "lstm", layout, model, {}, 9) < 1e-12
    broken = model.with_params({k: (v * 1.5 if k.endswith("W_h") else v) for k, v in model.params.items()})
    assert torch_difference(sd, "lstm", layout, broken, {}, 9) > 1e-3
    assert torch  # used


def test_pt_and_transformer_encoder_with_torch(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    state = {k: torch.from_numpy(v) for k, v in np.load(TINY).items()}
    torch.save(state, tmp_path / "tiny.pt")
    out = _import(capsys, [str(tmp_path / "tiny.pt"), "--arch", "lstm", "--out", str(tmp_path / "a.npz")])
    assert out["torch_checked"] and out["torch_max_abs_difference"] < 1e-12

    class Tiny(torch.nn.Module):
        def __init__(self, d=8, heads=2, norm_first=False):
            super().__init__()
            self.embedding = torch.nn.Embedding(10, d)
            self.pos_embedding = torch.nn.Parameter(torch.randn(1, 16, d))
            layer = torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=16, dropout=0.0, batch_first=True,
                                                     norm_first=norm_first)
            self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False,
                                                       norm=torch.nn.LayerNorm(d) if norm_first else None)
            self.readout = torch.nn.Linear(d, 2)

    for norm_first in (False, True):
        torch.save(Tiny(norm_first=norm_first).state_dict(), tmp_path / "tf.pt")
        argv = [str(tmp_path / "tf.pt"), "--arch", "transformer", "--heads", "2", "--out", str(tmp_path / "t.npz")]
        out = _import(capsys, argv + (["--norm-first"] if norm_first else []))
        assert out["layers"] == 2 and out["torch_max_abs_difference"] < 1e-9, out
        assert out["layout"]["positional"] == "pos_embedding"
