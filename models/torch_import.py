"""Turn a whole torch ``state_dict`` (embedding, a recurrent or attention body, a readout) into a model.

:mod:`models.torch_io` and :mod:`models.transformer.torch_io` map one torch module each; this module
reads a user's saved model and finds its parts by their torch names, refusing whatever it cannot
represent instead of dropping it:

* recurrent (``--arch lstm``, ``gru``, ``elman``/``rnn``): ``{rnn}weight_ih_l0 ...`` of one ``nn.LSTM``,
  ``nn.GRU`` or ``nn.RNN`` (``batch_first`` or not: the weights are the same), an ``nn.Embedding``
  ``(V, d)`` (a 2-D ``*emb*weight``) and an ``nn.Linear`` head ``(C, m)`` applied to the top layer's
  hidden state at the last step;
* ``--arch transformer``: ``nn.TransformerEncoderLayer`` blocks (``{p}self_attn.in_proj_weight``,
  ``linear1``, ``linear2``, ``norm1``, ``norm2``; several under ``{enc}layers.{i}.``) or one bare
  ``nn.MultiheadAttention`` (``{p}in_proj_weight``, ``{p}out_proj.weight``), a token embedding, an
  optional positional table (a 2-D ``*pos*`` array ``(N_max, d)``, or ``(1, N_max, d)``), an optional final
  ``norm`` and a readout ``nn.Linear`` at the last position.  What a state dict does not record is an
  option: ``heads`` (or a ``num_heads`` entry), ``causal``, ``norm_first``, ``residual`` of a bare MHA.

Any array left over (a second head, a bias_k, a projection) is an error naming it.  Reading a ``.pt``
needs torch (the ``reference`` extra); an ``.npz`` of the state dict's arrays does not::

    np.savez("model.state_dict.npz", **{k: v.double().numpy() for k, v in module.state_dict().items()})

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> sd = {"embedding.weight": rng.normal(size=(5, 3)), "rnn.weight_ih_l0": rng.normal(size=(8, 3)),
...       "rnn.weight_hh_l0": rng.normal(size=(8, 2)), "rnn.bias_ih_l0": np.zeros(8),
...       "rnn.bias_hh_l0": np.zeros(8), "fc.weight": rng.normal(size=(2, 2)), "fc.bias": np.zeros(2)}
>>> model, layout = model_from_state_dict(sd, "lstm")
>>> layout
{'embedding': 'embedding.weight', 'body': 'rnn.', 'readout': 'fc.', 'positional': None, 'final_norm': None}
>>> model.config["vocab_size"], model.config["width"], model.config["n_outputs"]
(5, 2, 2)
"""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path

import numpy as np

from commcomp.architectures import get_architecture
from commcomp.errors import InvalidParameterError, UnknownNameError

from .files import ModelFileError

__all__ = ["read_state_dict", "model_from_state_dict", "RECURRENT", "TorchImportError"]

RECURRENT = ("elman", "lstm", "gru")
_SOURCE = {"elman": "nn.RNN", "lstm": "nn.LSTM", "gru": "nn.GRU", "transformer": "nn.MultiheadAttention"}


class TorchImportError(ModelFileError):
    """A torch state dict cannot be read, or holds parts commcomp cannot represent faithfully."""


# -- reading ---------------------------------------------------------------------------------------
def _unwrap(obj, path) -> dict:
    if isinstance(obj, dict) and not any(hasattr(v, "shape") for v in obj.values()):
        for key in ("state_dict", "model_state_dict", "model"):
            if isinstance(obj.get(key), dict):
                return obj[key]
    if not isinstance(obj, dict):
        raise TorchImportError(f"{path}: holds a {type(obj).__name__}, not a state dict (save "
                               "module.state_dict(), not the module)")
    return obj


def read_state_dict(path) -> dict:
    """The arrays of a state dict saved as ``.pt``/``.pth`` (needs torch) or ``.npz`` (float64 copies).

    Raises
    ------
    TorchImportError
        Missing file, unreadable file, a ``.pt`` without torch installed, or entries that are not arrays.
    """
    path = Path(path)
    if not path.is_file():
        raise TorchImportError(f"{path}: no such file")
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                raw = {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise TorchImportError(f"{path}: not a readable .npz ({str(exc).splitlines()[0]})") from None
    else:
        try:
            import torch
        except ImportError:
            raise TorchImportError(f"{path}: reading a torch checkpoint needs torch (the reference extra: "
                                   "pip install 'commcomp[reference]'); without torch, save the state dict "
                                   "as .npz: np.savez(FILE, **{k: v.numpy() for k, v in sd.items()})") from None
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - torch raises many types for a bad file
            text = str(exc)
            if "weights_only" in text or type(exc).__name__ == "UnpicklingError":
                # a pickled object (a whole module from torch.save(model)): never unpickled, and torch's advice
                # to load it with weights_only=False (running the pickle's code) is not repeated
                raise TorchImportError(f"{path}: holds a pickled object, not a plain state dict (a whole module "
                                       "saved with torch.save(model)?); commcomp never unpickles code: save "
                                       "torch.save(model.state_dict(), FILE) and its options in FILE.config.json"
                                       ) from None
            first = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).strip().splitlines()[0] if text.strip() else ""
            raise TorchImportError(f"{path}: torch cannot load it as a state dict "
                                   f"({type(exc).__name__}: {first[:200]})") from None
        raw = {k: (v.detach().cpu().double().numpy() if hasattr(v, "detach") else np.asarray(v))
               for k, v in _unwrap(obj, path).items()}
    out = {}
    for key, value in raw.items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiub":
            raise TorchImportError(f"{path}: entry {key!r} is not numeric ({arr.dtype})")
        out[str(key)] = arr.astype(np.float64)
    bad = [k for k, v in out.items() if not np.all(np.isfinite(v))]
    if bad:
        raise TorchImportError(f"{path}: non-finite weights (NaN or inf) in {', '.join(sorted(bad)[:4])}"
                               f"{', ...' if len(bad) > 4 else ''}: a model with them computes nothing meaningful")
    if not out:
        raise TorchImportError(f"{path}: an empty state dict")
    return out


# -- finding the parts -----------------------------------------------------------------------------
def _one(candidates: list, what: str, option: str):
    if len(candidates) > 1:
        raise TorchImportError(f"several candidates for the {what}: {', '.join(map(str, candidates))}; "
                               f"pick one with {option}")
    return candidates[0] if candidates else None


def _prefixes(sd: dict, pattern: str) -> list:
    rx = re.compile(pattern)
    return sorted({m.group(1) for k in sd for m in [rx.match(k)] if m})


def _find_embedding(sd, used, d, key):
    if key is not None:
        if key not in sd or sd[key].ndim != 2 or sd[key].shape[1] != d:
            raise TorchImportError(f"embedding {key!r} is missing or not (V, {d})")
        return key
    found = [k for k in sd if k not in used and k.endswith("weight") and "emb" in k.lower()
             and "pos" not in k.lower() and sd[k].ndim == 2 and sd[k].shape[1] == d]
    return _one(found, "token embedding", "--embedding KEY")


def _find_readout(sd, used, m, prefix):
    if prefix is not None:
        if f"{prefix}weight" not in sd or sd[f"{prefix}weight"].ndim != 2 or sd[f"{prefix}weight"].shape[1] != m:
            raise TorchImportError(f"readout {prefix}weight is missing or not (C, {m})")
        return prefix
    found = [k[: -len("weight")] for k in sd if k not in used and k.endswith("weight") and sd[k].ndim == 2
             and sd[k].shape[1] == m]
    found = [p for p in found if not any(t in p.lower() for t in ("emb", "pos"))]
    return _one(found, "readout nn.Linear", "--readout PREFIX")


def _readout(sd, used, prefix, m):
    if prefix is None:
        return np.eye(m), np.zeros(m)
    used.update({f"{prefix}weight", f"{prefix}bias"})
    weight = sd[f"{prefix}weight"].T.copy()                     # (m, C): x @ W
    return weight, sd.get(f"{prefix}bias", np.zeros(weight.shape[1]))


def _leftovers(sd, used):
    rest = sorted(k for k in sd if k not in used and k != "num_heads")
    if rest:
        raise TorchImportError(f"entries commcomp cannot place: {', '.join(rest[:8])}"
                               f"{', ...' if len(rest) > 8 else ''} (supported: embedding -> one recurrent "
                               "module or attention blocks -> optional final norm -> one nn.Linear readout)")


# -- recurrent -------------------------------------------------------------------------------------
def _recurrent(sd, arch, prefix, embedding, readout, nonlinearity, precision):
    from .torch_io import model_from_torch_state_dict

    prefixes = [prefix] if prefix is not None else _prefixes(sd, r"^(.*)weight_ih_l0$")
    body = _one(prefixes, f"recurrent module ({_SOURCE[arch]})", "--prefix PREFIX")
    if body is None:
        raise TorchImportError(f"no {_SOURCE[arch]} weights (weight_ih_l0, weight_hh_l0, ...) in the state dict")
    used = {k for k in sd if k.startswith(body) and re.match(r"^(weight|bias)_(ih|hh|hr)_l\d+(_reverse)?$",
                                                            k[len(body):])}
    w_ih, w_hh = sd[f"{body}weight_ih_l0"], sd.get(f"{body}weight_hh_l0")
    gates = {"elman": 1, "lstm": 4, "gru": 3}[arch]
    if w_hh is None or w_hh.shape[0] != gates * w_hh.shape[1]:
        shape = None if w_hh is None else w_hh.shape
        kinds = {1: "nn.RNN", 4: "nn.LSTM", 3: "nn.GRU"}
        held = kinds.get(shape[0] // shape[1]) if shape and shape[1] and shape[0] % shape[1] == 0 else None
        raise TorchImportError(f"{body}weight_hh_l0 has shape {shape}: " + (
            f"that is an {held}, not {_SOURCE[arch]}: use --arch {dict(zip(kinds.values(), ('elman', 'lstm', 'gru')))[held]}"
            if held else f"not the {gates}-gate layout of {_SOURCE[arch]}"))
    _require_complete_layers(sd, body)
    d, m = w_ih.shape[1], w_hh.shape[1]
    emb = _find_embedding(sd, used, d, embedding)
    used |= {emb} if emb else set()
    head = _find_readout(sd, used, m, readout)
    try:
        model = model_from_torch_state_dict(sd, arch, prefix=body, embedding_key=emb, readout_prefix=head,
                                            nonlinearity=nonlinearity, precision=precision)
    except InvalidParameterError as exc:
        raise TorchImportError(str(exc)) from None
    _readout(sd, used, head, m)
    _leftovers(sd, used)
    return model, {"embedding": emb, "body": body, "readout": head, "positional": None, "final_norm": None}


def _require_complete_layers(sd, body) -> None:
    """Every layer has both weights, and biases on every layer or none (``bias=False``): a missing bias is
    not read as zeros."""
    layers = sorted(int(m.group(1)) for k in sd for m in [re.match(rf"^{re.escape(body)}weight_ih_l(\d+)$", k)] if m)
    with_bias = any(k.startswith(f"{body}bias_") for k in sd)
    for k in layers:
        names = [f"weight_ih_l{k}", f"weight_hh_l{k}"] + ([f"bias_ih_l{k}", f"bias_hh_l{k}"] if with_bias else [])
        missing = [f"{body}{name}" for name in names if f"{body}{name}" not in sd]
        if missing:
            raise TorchImportError(f"{', '.join(missing)} missing from the state dict (layer {k} of the recurrent "
                                   "module is incomplete)")


# -- transformer -----------------------------------------------------------------------------------
def _block(sd, used, p, heads, d, encoder_layer):
    from .transformer.torch_io import torch_mha_params

    attn = f"{p}self_attn." if encoder_layer else p
    try:
        params, scale = torch_mha_params(sd, heads, prefix=attn)
    except (InvalidParameterError, KeyError) as exc:
        raise TorchImportError(f"attention under {attn!r}: {exc}") from None
    if params["W_Q"].shape[1] != d:
        raise TorchImportError(f"attention under {attn!r} reads width {params['W_Q'].shape[1]}, the embedding {d}")
    used.update(k for k in sd if k.startswith(attn) and k[len(attn):] in (
        "in_proj_weight", "in_proj_bias", "q_proj_weight", "k_proj_weight", "v_proj_weight",
        "out_proj.weight", "out_proj.bias"))
    if encoder_layer:
        for name in ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
                     "norm1.bias", "norm2.weight", "norm2.bias"):
            if f"{p}{name}" not in sd:
                raise TorchImportError(f"{p}{name} is missing (an nn.TransformerEncoderLayer has it)")
            used.add(f"{p}{name}")
        params.update({"mlp.W1": sd[f"{p}linear1.weight"].T.copy(), "mlp.b1": sd[f"{p}linear1.bias"],
                       "mlp.W2": sd[f"{p}linear2.weight"].T.copy(), "mlp.b2": sd[f"{p}linear2.bias"],
                       "ln1.g": sd[f"{p}norm1.weight"], "ln1.b": sd[f"{p}norm1.bias"],
                       "ln2.g": sd[f"{p}norm2.weight"], "ln2.b": sd[f"{p}norm2.bias"]})
    return params, scale


def _transformer(sd, prefix, embedding, readout, heads, causal, norm_first, residual, activation, precision):
    from .transformer import Transformer

    if heads is None:
        if "num_heads" not in sd:
            raise TorchImportError("a state dict does not record the number of heads: give --heads H "
                                   "(nn.MultiheadAttention's num_heads)")
        heads = int(sd["num_heads"])
    if activation != "relu":
        raise TorchImportError(f"activation {activation!r}: torch's gelu is the exact erf form and commcomp's "
                               "the tanh approximation, so outputs would differ; only relu is imported")
    if prefix is None:
        blocks = _prefixes(sd, r"^(.*)self_attn\.out_proj\.weight$")
        encoder_layer = bool(blocks)
        if not blocks:
            blocks = _prefixes(sd, r"^(.*)out_proj\.weight$")
    else:
        encoder_layer = f"{prefix}self_attn.out_proj.weight" in sd or f"{prefix}layers.0.self_attn.out_proj.weight" in sd
        blocks = [p for p in _prefixes(sd, r"^(.*)self_attn\.out_proj\.weight$" if encoder_layer
                                       else r"^(.*)out_proj\.weight$") if p.startswith(prefix)]
    if not blocks:
        raise TorchImportError("no attention weights (self_attn.out_proj.weight or out_proj.weight)")
    rx = re.compile(r"^(.*?)(\d+)\.$")
    index = {p: (rx.match(p).group(1), int(rx.match(p).group(2))) if rx.match(p) else (p, 0) for p in blocks}
    stems = {s for s, _ in index.values()}
    if len(stems) > 1 or sorted(i for _, i in index.values()) != list(range(len(blocks))):
        raise TorchImportError(f"attention blocks {', '.join(blocks)} are not one stack layers.0, layers.1, ...; "
                               "pick one with --prefix PREFIX")
    blocks = sorted(blocks, key=lambda p: index[p][1])
    d = (sd[f"{blocks[0]}self_attn.out_proj.weight"] if encoder_layer else sd[f"{blocks[0]}out_proj.weight"]).shape[0]
    used: set = set()
    params, scale = {}, None
    for i, p in enumerate(blocks):
        block, scale = _block(sd, used, p, heads, d, encoder_layer)
        params.update({f"l{i}.{k}": v for k, v in block.items()})
    emb = _find_embedding(sd, used, d, embedding)
    if emb is None:
        raise TorchImportError(f"no token embedding (a 2-D *emb*weight of width {d}); name it with --embedding KEY")
    used.add(emb)
    params["tok_emb"] = sd[emb]
    pos = [k for k in sd if k not in used and "pos" in k.lower() and sd[k].ndim in (2, 3) and sd[k].shape[-1] == d
           and (sd[k].ndim == 2 or sd[k].shape[0] == 1)]
    pos_key = _one(pos, "positional table", "--embedding KEY for the tokens")
    if pos_key:
        used.add(pos_key)
        params["pos_emb"] = sd[pos_key].reshape(-1, d)
    stem = index[blocks[0]][0]
    enc = stem[: -len("layers.")] if stem.endswith("layers.") else stem
    final = f"{enc}norm." if f"{enc}norm.weight" in sd else None
    layer_norm = ("pre" if norm_first else "post") if encoder_layer else False
    if final:
        if layer_norm != "pre":
            raise TorchImportError(f"{final}weight: a final norm after post-norm blocks is not represented "
                                   "(commcomp's final norm belongs to pre-norm stacks: --norm-first)")
        used.update({f"{final}weight", f"{final}bias"})
        params["ln_f.g"], params["ln_f.b"] = sd[f"{final}weight"], sd.get(f"{final}bias", np.zeros(d))
    elif layer_norm == "pre":
        raise TorchImportError("pre-norm blocks (--norm-first) need the encoder's final norm ({enc}norm.weight): "
                               "commcomp's pre-norm stack ends with one")
    head = _find_readout(sd, used, d, readout)
    if head is None:
        raise TorchImportError(f"no readout nn.Linear (C, {d}); name it with --readout PREFIX")
    params["readout.W"], params["readout.b"] = _readout(sd, used, head, d)
    _leftovers(sd, used)
    hd = d // heads
    d_mlp = params["l0.mlp.W1"].shape[1] if encoder_layer else 0
    try:
        model = Transformer(params["tok_emb"].shape[0], d, len(blocks), heads, hd, hd, d_mlp,
                            params["readout.W"].shape[1], positional="learned" if pos_key else "none",
                            causal=causal, layer_norm=layer_norm, activation=activation,
                            residual=True if encoder_layer else residual, attn_scale=scale,
                            max_len=params["pos_emb"].shape[0] if pos_key else None, precision=precision,
                            params=params)
    except InvalidParameterError as exc:
        raise TorchImportError(str(exc)) from None
    return model, {"embedding": emb, "body": stem if encoder_layer else blocks[0], "readout": head,
                   "positional": pos_key, "final_norm": final}


def model_from_state_dict(state_dict: dict, arch: str, *, prefix=None, embedding=None, readout=None,
                          nonlinearity: str = "tanh", heads=None, causal: bool = True, norm_first: bool = False,
                          residual: bool = False, activation: str = "relu", precision=None):
    """A commcomp model and the layout found (which keys made the embedding, body, readout).

    Parameters
    ----------
    state_dict : dict
        torch names -> arrays (:func:`read_state_dict`).
    arch : str
        ``elman`` (``rnn``), ``lstm``, ``gru`` or ``transformer``.
    prefix, embedding, readout : str, optional
        The body's key prefix, the embedding's key, the readout's prefix (found when unique).
    nonlinearity : {"tanh", "relu"}
        Of an ``nn.RNN``.
    heads, causal, norm_first, residual, activation
        Transformer options a state dict does not record (``residual``: of a bare MHA only).

    Raises
    ------
    TorchImportError
    """
    try:
        name = get_architecture(arch).name
    except UnknownNameError as exc:
        raise TorchImportError(str(exc)) from None
    sd = {k: np.asarray(v, dtype=np.float64) for k, v in state_dict.items()}
    bad = sorted(k for k, v in sd.items() if not np.all(np.isfinite(v)))
    if bad:
        raise TorchImportError(f"non-finite weights (NaN or inf) in {', '.join(bad[:4])}{', ...' if len(bad) > 4 else ''}")
    if name in RECURRENT:
        return _recurrent(sd, name, prefix, embedding, readout, nonlinearity, precision)
    if name == "transformer":
        return _transformer(sd, prefix, embedding, readout, heads, causal, norm_first, residual, activation,
                            precision)
    raise TorchImportError(f"torch import covers elman (nn.RNN), lstm, gru and transformer, not {name}")
