"""One Transformer layer: multi-head attention and MLP with residuals and optional norms.

:class:`AttentionBlock` is shared by :class:`~models.transformer.Transformer` and
:class:`~models.transformer.Hybrid`; the parameter names and shapes of one layer are
:func:`block_param_shapes` (relative to the layer prefix ``l{i}.``), their random initialisers
:func:`init_block` (the module docstring of :mod:`models.transformer.transformer` lists them).

Examples
--------
>>> import numpy as np
>>> sorted(block_param_shapes(8, 2, 4, 4, 16, norm=False))[:4]
['W_K', 'W_O', 'W_Q', 'W_V']
>>> x = np.array([[1.0, 2.0, 3.0]])
>>> bool(np.allclose(normalize(x, np.ones(3), np.zeros(3)).sum(), 0.0))
True
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.backend import namespace_of, to_numpy
from commcomp.errors import InvalidParameterError

from .attention import last_position_attention, merge_heads, project, shared_softmax_attention, \
    softmax_attention

__all__ = ["AttentionBlock", "normalize", "block_param_shapes", "init_block", "checked_params", "NORMS",
           "ACTIVATIONS"]

NORMS = ("layer", "rms")
ACTIVATIONS = ("relu", "gelu")


def normalize(x, g, b, kind: str = "layer", eps: float = 1e-5):
    """LayerNorm (``kind="layer"``) or RMSNorm (``"rms"``) over the last axis, gain ``g``, bias ``b``."""
    xp = namespace_of(x)
    if kind == "layer":
        x = x - xp.mean(x, axis=-1, keepdims=True)
    return x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + eps) * g + b


def _activation(x, kind: str):
    xp = namespace_of(x)
    if kind == "relu":
        return xp.where(x > 0, x, xp.zeros_like(x))
    return 0.5 * x * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def block_param_shapes(d: int, H: int, d_k: int, d_v: int, d_mlp: int, norm: bool) -> dict:
    """Shapes of one layer's parameters (names relative to the layer prefix)."""
    shapes = {"W_Q": (H, d, d_k), "b_Q": (H, d_k), "W_K": (H, d, d_k), "b_K": (H, d_k),
              "W_V": (H, d, d_v), "b_V": (H, d_v), "W_O": (H, d_v, d), "b_O": (d,)}
    if d_mlp:
        shapes.update({"mlp.W1": (d, d_mlp), "mlp.b1": (d_mlp,), "mlp.W2": (d_mlp, d),
                       "mlp.b2": (d,)})
    if norm:
        shapes.update({"ln1.g": (d,), "ln1.b": (d,), "ln2.g": (d,), "ln2.b": (d,)})
    return shapes


def checked_params(params: dict, shapes: dict) -> dict:
    """Float64 copies of ``params`` for every name of ``shapes``; a missing one is zero (a norm gain
    ``.g`` one).  Unknown names or wrong shapes raise :class:`InvalidParameterError`."""
    unknown = sorted(set(params) - set(shapes))
    if unknown:
        raise InvalidParameterError(f"unknown parameter names {unknown}; known: {sorted(shapes)}")
    out = {}
    for name, shape in shapes.items():
        default = np.ones(shape) if name.endswith(".g") else np.zeros(shape)
        value = np.array(to_numpy(params.get(name, default)), dtype=np.float64)  # a copy
        if value.shape != shape:
            raise InvalidParameterError(f"{name} must have shape {shape}, got {value.shape}")
        out[name] = value
    return out


def init_block(rng, d, H, d_k, d_v, d_mlp, norm) -> dict:
    """Random parameters of one layer (the initialisers in the module docstring)."""
    def glorot(d_h):
        a = math.sqrt(6.0 / (d + H * d_h))
        return rng.uniform(-a, a, size=(d, H, d_h)).transpose(1, 0, 2)  # (H, d, d_h)

    def linear(fan_in, shape):
        a = 1.0 / math.sqrt(fan_in)
        return rng.uniform(-a, a, size=shape)

    p = {"W_Q": glorot(d_k), "b_Q": np.zeros((H, d_k)), "W_K": glorot(d_k), "b_K": np.zeros((H, d_k)),
         "W_V": glorot(d_v), "b_V": np.zeros((H, d_v)), "W_O": linear(H * d_v, (H, d_v, d)),
         "b_O": np.zeros(d)}
    if d_mlp:
        p.update({"mlp.W1": linear(d, (d, d_mlp)), "mlp.b1": linear(d, (d_mlp,)),
                  "mlp.W2": linear(d_mlp, (d_mlp, d)), "mlp.b2": linear(d_mlp, (d,))})
    if norm:
        p.update({"ln1.g": np.ones(d), "ln1.b": np.zeros(d), "ln2.g": np.ones(d), "ln2.b": np.zeros(d)})
    return p


class AttentionBlock:
    """One layer: multi-head attention + MLP with residuals and optional norms (shared with Hybrid).

    ``w`` maps the relative names of :func:`block_param_shapes` to arrays of ``xp``; ``rnd``
    rounds onto the model's precision (identity in reference mode).
    """

    def __init__(self, w, *, n_heads, causal, layer_norm, norm, activation, residual, scale, eps,
                 rnd, xp):
        self.w, self.H, self.causal, self.ln = w, n_heads, causal, layer_norm
        self.norm, self.act, self.residual, self.scale, self.eps = norm, activation, residual, scale, eps
        self.rnd, self.xp = rnd, xp
        self.d_v = w["W_V"].shape[2]
        self.W_O = xp.reshape(w["W_O"], (n_heads * self.d_v, -1))  # (H*d_v, d)

    def _norm(self, x, which):
        return self.rnd(normalize(x, self.w[f"{which}.g"], self.w[f"{which}.b"], self.norm, self.eps))

    def attn_input(self, x):
        """What the attention reads: ``norm1(x)`` in a pre-norm layer, else ``x``."""
        return self._norm(x, "ln1") if self.ln == "pre" else x

    def rows(self, h, name):
        """``h`` ``(..., N, d)`` -> rounded per-head projections ``(..., N, H, d_h)`` (row-major: what
        the split of a deep model sends, row by row)."""
        return self.rnd(project(h, self.w[f"W_{name}"], self.w[f"b_{name}"]))  # (..., N, H, d_h)

    def heads(self, h, name, patch=None):
        """``h`` ``(..., N, d)`` -> rounded per-head projections ``(..., H, N, d_h)`` (Q, K or V).

        ``patch``: ``(rows (B, N, H, d_h), mask (N,) bool)``: the rows where ``mask`` holds are taken
        from ``rows`` (values another party computed, as :meth:`rows` gives them), before the heads
        are laid out, so the array has the layout of the unpatched one."""
        y = self.rows(h, name)  # (..., N, H, d_h)
        if patch is not None:
            values, mask = patch
            y = self.xp.where(self.xp.reshape(self.xp.asarray(mask), (1, -1, 1, 1)), values, y)
        nd = len(y.shape)
        return self.xp.permute_dims(y, tuple(range(nd - 3)) + (nd - 2, nd - 3, nd - 1))  # (..., H, N, d_h)

    def query(self, h_o):
        """``h_o`` ``(B, d)`` -> rounded query ``(B, H, d_k)``."""
        return self.rnd(project(h_o, self.w["W_Q"], self.w["b_Q"]))  # (B, H, d_k)

    def _residual(self, x, y, which):
        x = self.rnd(x + y) if self.residual else y
        return self._norm(x, which) if self.ln == "post" else x

    def after_attention(self, x, attn):
        """Output projection, residual and MLP at the given positions.

        ``x`` ``(..., d)`` the layer input there, ``attn`` ``(..., H·d_v)`` the concatenated heads.
        """
        o = self.rnd(self.xp.matmul(attn, self.W_O) + self.w["b_O"])  # (..., d)
        x = self._residual(x, o, "ln1")
        if "mlp.W1" not in self.w:
            return x
        h = self._norm(x, "ln2") if self.ln == "pre" else x
        a = self.rnd(_activation(self.xp.matmul(h, self.w["mlp.W1"]) + self.w["mlp.b1"], self.act))
        m = self.rnd(self.xp.matmul(a, self.w["mlp.W2"]) + self.w["mlp.b2"])  # (..., d)
        return self._residual(x, m, "ln2")

    def full(self, x, max_block_elements=None, shared_qk=None, patch=None):
        """Every position: ``(B, N, d)`` -> ``(B, N, d)`` (blocked attention, float softmax).

        ``shared_qk``: queries and keys ``(1, H, N, d_k)`` that every instance shares (a first
        layer whose weights ignore the tokens there); the weights are then computed once.
        ``patch``: ``{"K": (rows, mask), "V": (rows, mask)}`` for :meth:`heads` (a split's received keys
        and values).
        """
        patch = patch or {}
        h = self.attn_input(x)
        V = self.heads(h, "V", patch.get("V"))  # (B, H, N, d_v)
        kw = {} if max_block_elements is None else {"max_block_elements": max_block_elements}
        if shared_qk is not None:
            A = shared_softmax_attention(*shared_qk, V, scale=self.scale, causal=self.causal, **kw)
        else:
            Q, K = self.heads(h, "Q"), self.heads(h, "K", patch.get("K"))  # (B, H, N, d_k)
            A = softmax_attention(Q, K, V, scale=self.scale, causal=self.causal, **kw)
        A = self.rnd(A)  # (B, H, N, d_v)
        return self.after_attention(x, merge_heads(A))  # (B, N, d)

    def last(self, x, o: int, patch=None):
        """Only position ``o``: ``(B, N, d)`` -> ``(B, d)`` in O(N·m), float softmax (``patch`` as
        :meth:`full`)."""
        xp, patch = self.xp, patch or {}
        h = self.attn_input(x)
        K, V = self.heads(h, "K", patch.get("K")), self.heads(h, "V", patch.get("V"))  # (B, H, N, d_h)
        q = self.query(h[:, o, :])  # (B, H, d_k)
        mask = xp.reshape(xp.arange(x.shape[1]) <= o, (1, -1)) if self.causal else None
        attn = self.rnd(last_position_attention(q, K, V, scale=self.scale, mask=mask))  # (B, H, d_v)
        return self.after_attention(x[:, o, :], xp.reshape(attn, (attn.shape[0], -1)))  # (B, d)
