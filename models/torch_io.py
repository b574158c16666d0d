"""Load PyTorch ``nn.RNN`` (tanh/relu), ``nn.LSTM`` and ``nn.GRU`` weights into our models.

A ``state_dict`` exported to ``.npz`` keeps torch's parameter names::

    np.savez("lstm.npz", **{k: v.double().numpy() for k, v in module.state_dict().items()})

and per layer ``k`` holds ``weight_ih_l{k}`` ``(G*m, d_in)``, ``weight_hh_l{k}`` ``(G*m, m)`` and
(unless ``bias=False``) ``bias_ih_l{k}``, ``bias_hh_l{k}`` ``(G*m,)``, with ``G`` = 1 (RNN), 4
(LSTM: i, f, g, o) or 3 (GRU: r, z, n).  Our layers use ``x @ W``, so weights are transposed;
RNN and LSTM biases are summed, the GRU keeps both (``b_hn`` sits inside ``r * (.)``).
Bidirectional modules and LSTM projections (``proj_size``) are refused.

A bare recurrent module has no embedding and no head.  Name them with ``embedding_key`` (a
``(V, d)`` table, e.g. ``"embedding.weight"``) and ``readout_prefix`` (a ``nn.Linear`` with
``{prefix}weight`` ``(C, m)`` and ``{prefix}bias``); without them the model gets the identity
table (``V = d``: token ``v`` is the one-hot vector ``e_v``) and the identity head (logits = top
``h``).  ``run`` also takes float inputs ``(B, T, d)``, which is how torch's module is fed.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> sd = {"weight_ih_l0": rng.normal(size=(8, 3)), "weight_hh_l0": rng.normal(size=(8, 2)),
...       "bias_ih_l0": np.zeros(8), "bias_hh_l0": np.zeros(8)}
>>> model = model_from_torch_state_dict(sd, "lstm")
>>> model.layers, model.state_numbers()
([LSTMLayer(d_in=3, d_out=2)], 4)
>>> sorted(torch_state_dict(model)) == sorted(sd)
True
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from commcomp.errors import InvalidParameterError

from .recurrent.base import RecurrentModel
from .recurrent.elman import ElmanLayer
from .recurrent.gru import GRULayer
from .recurrent.lstm import LSTMLayer

__all__ = ["GATES", "model_from_torch_state_dict", "load_torch_npz", "torch_state_dict",
           "layers_from_torch_state_dict"]

#: Gate blocks per architecture (torch's row blocks of ``weight_ih``).
GATES = {"elman": 1, "lstm": 4, "gru": 3}
_LAYER_CLASSES = {"elman": ElmanLayer, "lstm": LSTMLayer, "gru": GRULayer}
_ALIASES = {"rnn": "elman", "elman": "elman", "lstm": "lstm", "gru": "gru"}
_KEY = re.compile(r"^(weight_ih|weight_hh|bias_ih|bias_hh|weight_hr)_l(\d+)(_reverse)?$")


def _arch(arch: str) -> str:
    key = _ALIASES.get(str(arch).lower())
    if key is None:
        raise InvalidParameterError(f"torch loading covers nn.RNN, nn.LSTM, nn.GRU (elman, lstm, gru), "
                                    f"not {arch!r}")
    return key


def _read(source) -> dict:
    if isinstance(source, (str, Path)):
        with np.load(Path(source), allow_pickle=False) as data:
            return {k: np.asarray(data[k], dtype=np.float64) for k in data.files}
    return {k: np.asarray(v, dtype=np.float64) for k, v in dict(source).items()}


def layers_from_torch_state_dict(state_dict, arch: str, *, prefix: str = "", nonlinearity: str = "tanh",
                                 dtype="float64", xp=None) -> list:
    """Our layers from the entries ``{prefix}weight_ih_l0 ...`` of a torch state dict."""
    arch, sd = _arch(arch), _read(state_dict)
    found = {}
    for key, value in sd.items():
        if not key.startswith(prefix):
            continue
        match = _KEY.match(key[len(prefix):])
        if match is None:
            continue
        kind, index, reverse = match.groups()
        if reverse or kind == "weight_hr":
            raise InvalidParameterError(f"{key}: bidirectional modules and LSTM proj_size are not supported")
        found.setdefault(int(index), {})[kind] = value
    if not found or sorted(found) != list(range(len(found))):
        raise InvalidParameterError(f"no consecutive layers weight_ih_l0, weight_hh_l0, ... under "
                                    f"prefix {prefix!r}")
    g, layers = GATES[arch], []
    for k in range(len(found)):
        entry = found[k]
        if "weight_ih" not in entry or "weight_hh" not in entry:
            raise InvalidParameterError(f"layer {k}: weight_ih_l{k} and weight_hh_l{k} are both needed")
        w_ih, w_hh = entry["weight_ih"], entry["weight_hh"]
        m = w_hh.shape[1]
        if w_hh.shape != (g * m, m) or w_ih.ndim != 2 or w_ih.shape[0] != g * m:
            raise InvalidParameterError(f"layer {k}: shapes {w_ih.shape}, {w_hh.shape} are not those of "
                                        f"a torch {arch} ({g} gate blocks)")
        b_ih = entry.get("bias_ih", np.zeros(g * m))
        b_hh = entry.get("bias_hh", np.zeros(g * m))
        if b_ih.shape != (g * m,) or b_hh.shape != (g * m,):
            raise InvalidParameterError(f"layer {k}: biases must have shape ({g * m},)")
        params = {"W_x": w_ih.T.copy(), "W_h": w_hh.T.copy()}  # x @ W convention
        if arch == "gru":
            params.update(b_x=b_ih.copy(), b_h=b_hh.copy())
        else:
            params["b"] = b_ih + b_hh
        kw = {"nonlinearity": nonlinearity} if arch == "elman" else {}
        layers.append(_LAYER_CLASSES[arch](w_ih.shape[1], m, params, dtype=dtype, xp=xp, **kw))
    return layers


def model_from_torch_state_dict(state_dict, arch: str, *, prefix: str = "", embedding_key=None,
                                readout_prefix=None, nonlinearity: str = "tanh", precision=None,
                                dtype="float64", xp=None) -> RecurrentModel:
    """A :class:`~models.recurrent.base.RecurrentModel` with the weights of a torch module.

    Parameters
    ----------
    state_dict : mapping or path
        Torch names to arrays (or an ``.npz`` file of them).
    arch : {"elman" / "rnn", "lstm", "gru"}
    prefix : str
        Prefix of the recurrent module's keys (``"rnn."`` inside a bigger module).
    embedding_key : str, optional
        Key of a ``(V, d)`` token table; default the identity ``(d, d)``.
    readout_prefix : str, optional
        Prefix of an ``nn.Linear`` head (``"fc."``); default the identity on the top ``h``.
    nonlinearity : {"tanh", "relu"}
        Of an ``nn.RNN`` (a state dict does not record it).

    Raises
    ------
    InvalidParameterError
        On missing keys, wrong shapes, bidirectional or projected modules.
    """
    arch, sd = _arch(arch), _read(state_dict)
    layers = layers_from_torch_state_dict(sd, arch, prefix=prefix, nonlinearity=nonlinearity,
                                          dtype=dtype, xp=xp)
    d, m = layers[0].d_in, layers[-1].d_out
    if embedding_key is None:
        embedding = np.eye(d)
    elif embedding_key in sd and sd[embedding_key].ndim == 2 and sd[embedding_key].shape[1] == d:
        embedding = sd[embedding_key]
    else:
        raise InvalidParameterError(f"embedding {embedding_key!r} missing or not (V, {d})")
    if readout_prefix is None:
        weight, bias = np.eye(m), np.zeros(m)
    else:
        w_key, b_key = f"{readout_prefix}weight", f"{readout_prefix}bias"
        if w_key not in sd or sd[w_key].ndim != 2 or sd[w_key].shape[1] != m:
            raise InvalidParameterError(f"readout {w_key!r} missing or not (C, {m})")
        weight = sd[w_key].T.copy()  # (m, C)
        bias = sd.get(b_key, np.zeros(weight.shape[1]))
    config = dict(arch=arch, vocab_size=int(embedding.shape[0]), width=int(m),
                  n_outputs=int(weight.shape[1]), layers=len(layers), heads=1, seed=0,
                  precision=None if precision is None else str(precision), input_width=int(d))
    if arch == "elman":
        config["nonlinearity"] = nonlinearity
    if any(layer.d_out != m for layer in layers):
        raise InvalidParameterError("layers of different hidden sizes")
    return RecurrentModel(arch, embedding, layers, weight, bias, precision=precision, dtype=dtype,
                          xp=xp, config=config)


def load_torch_npz(path, arch: str, **kw) -> RecurrentModel:
    """:func:`model_from_torch_state_dict` of an ``.npz`` file."""
    return model_from_torch_state_dict(Path(path), arch, **kw)


def torch_state_dict(model: RecurrentModel, prefix: str = "") -> dict:
    """The recurrent layers of ``model`` under torch's names (float64 arrays); inverse of loading.

    RNN/LSTM biases come out as ``bias_ih = b``, ``bias_hh = 0`` (torch only uses their sum).
    """
    arch = _arch(model.arch)
    out = {}
    for k, layer in enumerate(model.layers):
        p = layer.params
        out[f"{prefix}weight_ih_l{k}"] = p["W_x"].T.copy()
        out[f"{prefix}weight_hh_l{k}"] = p["W_h"].T.copy()
        if arch == "gru":
            out[f"{prefix}bias_ih_l{k}"], out[f"{prefix}bias_hh_l{k}"] = p["b_x"].copy(), p["b_h"].copy()
        else:
            out[f"{prefix}bias_ih_l{k}"], out[f"{prefix}bias_hh_l{k}"] = p["b"].copy(), np.zeros_like(p["b"])
    return out
