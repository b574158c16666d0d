"""Load ``torch.nn.MultiheadAttention`` weights from a ``state_dict`` exported to ``.npz``.

torch keeps the three input projections stacked in ``in_proj_weight`` ``(3E, E)`` (rows: query,
key, value; ``y = x Wᵀ + b``) with ``in_proj_bias`` ``(3E,)``, or, when the key/value widths differ
from ``E``, separately in ``q_proj_weight`` ``(E, E)``, ``k_proj_weight`` ``(E, kdim)`` and
``v_proj_weight`` ``(E, vdim)``; the output projection is ``out_proj.weight`` ``(E, E)`` and
``out_proj.bias`` ``(E,)``.  Head h owns the features ``h·E/H … (h+1)·E/H - 1``.  In our names:

* ``W_Q[h] = q_weight[h·hd:(h+1)·hd, :]ᵀ`` ``(E, hd)`` and ``b_Q[h] = q_bias[h·hd:(h+1)·hd]``
  (likewise K and V);
* ``W_O[h] = out_proj.weight[:, h·hd:(h+1)·hd]ᵀ`` ``(hd, E)``, ``b_O = out_proj.bias``;
* ``scale = 1/sqrt(hd)``.

A missing bias (``bias=False``) is zero.  ``add_bias_kv`` (``bias_k``, ``bias_v``) is not
supported.  Nothing here imports torch: export with
``np.savez(path, **{k: v.numpy() for k, v in mha.state_dict().items()}, num_heads=H)``.

Examples
--------
>>> import numpy as np
>>> E, H = 4, 2
>>> rng = np.random.default_rng(0)
>>> state = {"in_proj_weight": rng.normal(size=(3 * E, E)), "in_proj_bias": np.zeros(3 * E),
...          "out_proj.weight": rng.normal(size=(E, E)), "out_proj.bias": np.zeros(E)}
>>> mha = load_torch_mha(state, n_heads=H)
>>> mha.params["W_Q"].shape, bool(mha.scale == 1 / np.sqrt(2))
((2, 4, 2), True)
>>> sorted(mha_state_dict(mha)) == sorted(state)
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from commcomp.errors import InvalidParameterError

from .attention import MultiheadAttention

__all__ = ["torch_mha_params", "load_torch_mha", "mha_state_dict", "transformer_with_torch_mha"]


def _read(source) -> dict:
    if isinstance(source, (str, os.PathLike)):
        with np.load(source, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    if isinstance(source, Mapping):
        return {k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v)
                for k, v in source.items()}
    raise InvalidParameterError(f"expected a .npz path or a mapping, got {type(source).__name__}")


def torch_mha_params(source, n_heads: int | None = None, prefix: str = "") -> tuple[dict, float]:
    """Our parameters (``W_Q`` ... ``b_O``) and the scale from a torch MHA state dict.

    Parameters
    ----------
    source : str, path or mapping
        A ``.npz`` file or a dict of arrays with torch's names (after ``prefix``).
    n_heads : int, optional
        H; read from ``prefix + "num_heads"`` when the file has it.
    prefix : str
        Prefix of the keys, e.g. ``"layers.0.self_attn."``.
    """
    state = _read(source)
    get = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
    if n_heads is None:
        if "num_heads" not in get:
            raise InvalidParameterError("pass n_heads (the state dict does not record it)")
        n_heads = int(get["num_heads"])
    if "bias_k" in get or "bias_v" in get:
        raise InvalidParameterError("add_bias_kv (bias_k, bias_v) is not supported")
    if "in_proj_weight" in get:
        Wq, Wk, Wv = np.split(np.asarray(get["in_proj_weight"], dtype=np.float64), 3, axis=0)
    elif {"q_proj_weight", "k_proj_weight", "v_proj_weight"} <= set(get):
        Wq, Wk, Wv = (np.asarray(get[f"{n}_proj_weight"], dtype=np.float64) for n in "qkv")
    else:
        raise InvalidParameterError(f"no in_proj_weight or q/k/v_proj_weight under prefix {prefix!r}")
    E = Wq.shape[0]
    H = int(n_heads)
    if E % H:
        raise InvalidParameterError(f"embed_dim {E} is not a multiple of num_heads {H}")
    hd = E // H
    bias = np.asarray(get.get("in_proj_bias", np.zeros(3 * E)), dtype=np.float64)
    bq, bk, bv = np.split(bias, 3)
    W_out = np.asarray(get["out_proj.weight"], dtype=np.float64)  # (E, E)
    b_out = np.asarray(get.get("out_proj.bias", np.zeros(W_out.shape[0])), dtype=np.float64)

    def heads(W):  # (E, d_in) -> (H, d_in, hd)
        return W.reshape(H, hd, W.shape[1]).transpose(0, 2, 1)

    params = {"W_Q": heads(Wq), "b_Q": bq.reshape(H, hd), "W_K": heads(Wk), "b_K": bk.reshape(H, hd),
              "W_V": heads(Wv), "b_V": bv.reshape(H, hd),
              "W_O": W_out.T.reshape(H, hd, W_out.shape[0]), "b_O": b_out}
    return params, 1.0 / float(np.sqrt(hd))


def load_torch_mha(source, n_heads: int | None = None, prefix: str = "", xp=None) -> MultiheadAttention:
    """A :class:`MultiheadAttention` with the weights of a torch ``nn.MultiheadAttention``."""
    params, scale = torch_mha_params(source, n_heads, prefix)
    return MultiheadAttention(params, scale=scale, xp=xp)


def mha_state_dict(mha: MultiheadAttention) -> dict:
    """The inverse map: torch's names and layouts (``in_proj_weight`` when the widths allow it)."""
    p = mha.params
    H, hd = p["W_Q"].shape[0], p["W_Q"].shape[2]

    def rows(W):  # (H, d_in, hd) -> (H*hd, d_in)
        return W.transpose(0, 2, 1).reshape(H * hd, W.shape[1])

    out = {"out_proj.weight": p["W_O"].reshape(H * p["W_O"].shape[1], -1).T.copy(),
           "out_proj.bias": p["b_O"].copy(),
           "in_proj_bias": np.concatenate([p["b_Q"].ravel(), p["b_K"].ravel(), p["b_V"].ravel()])}
    Wq, Wk, Wv = rows(p["W_Q"]), rows(p["W_K"]), rows(p["W_V"])
    if Wq.shape == Wk.shape == Wv.shape:
        out["in_proj_weight"] = np.concatenate([Wq, Wk, Wv], axis=0)
    else:
        out.update({"q_proj_weight": Wq, "k_proj_weight": Wk, "v_proj_weight": Wv})
    return out


def transformer_with_torch_mha(model, source, layer: int = 0, n_heads: int | None = None,
                               prefix: str = ""):
    """A copy of a :class:`~models.transformer.Transformer` whose layer ``layer`` attention
    (``W_Q`` ... ``b_O`` and ``attn_scale``) comes from a torch MHA state dict.

    The model must have ``d_k = d_v = d_model / H`` (torch's layout).
    """
    params, scale = torch_mha_params(source, n_heads or model.n_heads, prefix)
    new = dict(model.params)
    for name, value in params.items():
        key = f"l{int(layer)}.{name}"
        if key not in new or new[key].shape != value.shape:
            raise InvalidParameterError(f"{key}: the model has shape "
                                        f"{new[key].shape if key in new else None}, torch {value.shape}")
        new[key] = value
    return model._copy(params=new, attn_scale=scale)
