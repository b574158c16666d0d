"""Helpers shared by the Transformer constructions: named residual blocks and zeroed weights.

A construction lays out its residual stream as named blocks (:class:`Layout`), fills the
parameters of :class:`~models.transformer.Transformer` through :class:`Weights` (every tensor
starts at zero, so a construction writes only what its derivation needs), and builds the model
with :func:`build_transformer_model`: fixed positional table, no norms, ReLU MLP, attention
scale 1 (β is folded into ``W_Q``).

Examples
--------
>>> lay = Layout()
>>> lay.add("bit", 1), lay.add("code", 3), lay.d
(slice(0, 1, None), slice(1, 4, None), 4)
>>> w = Weights(lay.d, vocab=3, max_len=5, layers=1, heads=1, d_k=3, d_v=1, d_mlp=0, n_out=2)
>>> w.p["l0.W_Q"].shape, w.p["pos_emb"].shape
((1, 4, 3), (5, 4))
"""

from __future__ import annotations

import numpy as np

from commcomp.errors import InvalidParameterError

__all__ = ["Layout", "Weights", "build_transformer_model", "round_scalar"]


class Layout:
    """Named, consecutive blocks of the residual stream; ``d`` is the width so far."""

    def __init__(self):
        self.blocks: dict[str, slice] = {}
        self.d = 0

    def add(self, name: str, size: int) -> slice:
        if name in self.blocks:
            raise InvalidParameterError(f"residual block {name!r} defined twice")
        s = slice(self.d, self.d + int(size))
        self.blocks[name] = s
        self.d += int(size)
        return s

    def __getitem__(self, name: str) -> slice:
        return self.blocks[name]

    def index(self, name: str) -> int:
        """The single coordinate of a one-wide block."""
        s = self.blocks[name]
        if s.stop - s.start != 1:
            raise InvalidParameterError(f"block {name!r} is not one coordinate wide")
        return s.start

    def describe(self) -> dict:
        return {k: [v.start, v.stop] for k, v in self.blocks.items()}


class Weights:
    """Zero-initialised parameters of a Transformer, by the names of ``models.transformer``."""

    def __init__(self, d, *, vocab, max_len, layers, heads, d_k, d_v, d_mlp, n_out):
        self.shape = dict(d=d, vocab=vocab, max_len=max_len, layers=layers, heads=heads, d_k=d_k,
                          d_v=d_v, d_mlp=d_mlp, n_out=n_out)
        p = {"tok_emb": np.zeros((vocab, d)), "pos_emb": np.zeros((max_len, d)),
             "readout.W": np.zeros((d, n_out)), "readout.b": np.zeros(n_out)}
        for i in range(layers):
            p.update({f"l{i}.W_Q": np.zeros((heads, d, d_k)), f"l{i}.b_Q": np.zeros((heads, d_k)),
                      f"l{i}.W_K": np.zeros((heads, d, d_k)), f"l{i}.b_K": np.zeros((heads, d_k)),
                      f"l{i}.W_V": np.zeros((heads, d, d_v)), f"l{i}.b_V": np.zeros((heads, d_v)),
                      f"l{i}.W_O": np.zeros((heads, d_v, d)), f"l{i}.b_O": np.zeros(d)})
            if d_mlp:
                p.update({f"l{i}.mlp.W1": np.zeros((d, d_mlp)), f"l{i}.mlp.b1": np.zeros(d_mlp),
                          f"l{i}.mlp.W2": np.zeros((d_mlp, d)), f"l{i}.mlp.b2": np.zeros(d)})
        self.p = p


def build_transformer_model(w: Weights, *, precision=None, causal: bool = True):
    """The :class:`~models.transformer.Transformer` with these weights (fixed positions, no norms,
    ReLU, attention scale 1, residual on)."""
    from models.transformer import Transformer

    s = w.shape
    return Transformer(s["vocab"], s["d"], s["layers"], s["heads"], s["d_k"], s["d_v"], s["d_mlp"],
                       s["n_out"], positional="fixed", causal=causal, layer_norm=False,
                       activation="relu", residual=True, attn_scale=1.0, max_len=s["max_len"],
                       precision=precision, params=w.p)


def round_scalar(precision, value: float) -> float:
    """``value`` rounded onto the grid of ``precision`` (unchanged for None)."""
    if precision is None:
        return float(value)
    from commcomp.precision import parse_precision

    fresh = parse_precision(precision.name)  # leave the model's saturation counter alone
    return float(np.asarray(fresh.round(np.array([float(value)])))[0])
