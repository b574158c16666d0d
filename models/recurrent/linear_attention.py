"""Linear attention: the linear Transformer of Katharopoulos et al. (2020) in its recurrent form.

For input ``x_t`` and ``heads`` heads of ``d_k = d_v = m / heads`` each::

    q, k, v = phi(x_t @ W_q + b_q), phi(x_t @ W_k + b_k), x_t @ W_v + b_v    # per head
    S' = S + k v^T                  # (d_k, d_v) per head: sum_s phi(k_s) v_s^T
    z' = z + k                      # (d_k,) per head: the normaliser sum_s phi(k_s)
    o  = q^T S' / (q^T z' + eps)    # (d_v,) per head; the current token is included
    y  = x_t + concat_heads(o) @ W_o + b_o          (residual only when d_in == d_out)

with the feature map ``phi(u) = elu(u) + 1`` (default, as in the paper) or ``relu``; ``eps`` is
1e-6 (fast-transformers').  State: ``S`` ``(B, heads, d_k, d_v)`` and ``z`` ``(B, heads, d_k)``:
``heads * (d_k * d_v + d_k) = m**2 / heads + m`` numbers per layer.  The output is not part of
the state (it needs ``x_t``).

Initialiser: torch ``nn.Linear``'s default, every weight and bias U(±1/sqrt(fan_in)).

``run_sequence`` in float64 reference mode (no rounding) takes the chunked form: within a chunk
of ``chunk_size`` steps, ``numerator = Q S_prev + tril(Q K^T) V`` and
``denominator = Q z_prev + tril(Q K^T) 1``, then ``S += K^T V`` and ``z += sum K`` (the
projections too are computed a chunk at a time, which keeps the working set in cache).  It agrees
with the step loop to rounding error, not bit for bit; with a precision it loops :meth:`step`
(the state must be rounded after every step).  ``chunk_size=0`` always loops.

Examples
--------
>>> import numpy as np
>>> layer = LinearAttentionLayer.init(d_in=4, width=4, seed=0, heads=2)
>>> state = layer.init_state(3)
>>> {k: tuple(v.shape) for k, v in state.items()}
{'S': (3, 2, 2, 2), 'z': (3, 2, 2)}
>>> state, y = layer.run_sequence(state, np.ones((3, 5, 4)))     # (B, T, d_in)
>>> y.shape
(3, 5, 4)
"""

from __future__ import annotations

import math

from commcomp.errors import InvalidParameterError

from ..common import rng_of, uniform
from . import base
from .base import RecurrentLayer

__all__ = ["LinearAttentionLayer", "FEATURE_MAPS"]

FEATURE_MAPS = ("elu+1", "relu")
EPS = 1e-6


def feature_map(xp, u, name: str):
    """``elu(u) + 1`` (= u + 1 for u > 0, exp(u) otherwise) or ``relu(u)``, elementwise."""
    if name == "relu":
        return xp.where(u > 0, u, xp.zeros_like(u))
    return xp.where(u > 0, u + 1.0, xp.exp(xp.clip(u, max=0.0)))  # clip: no overflow in exp


def model_rounds(layer) -> bool:
    """Whether the model rounds ``layer``'s state (anything but the base's identity)."""
    return layer.round_state is not getattr(base, "_identity_state", None)


class LinearAttentionLayer(RecurrentLayer):
    """One linear-attention layer; see the module docstring for the equations.

    Parameters
    ----------
    d_in, d_out : int
        Input width and width ``m`` (``m`` a multiple of ``heads``).
    params : dict of str to numpy.ndarray
        ``W_q, W_k, W_v`` ``(d_in, m)``, ``b_q, b_k, b_v`` ``(m,)``, ``W_o`` ``(m, m)``, ``b_o`` ``(m,)``.
    heads : int
        Heads; ``d_k = d_v = m / heads``.
    feature_map : {"elu+1", "relu"}
        The map ``phi`` of queries and keys.
    chunk_size : int
        Chunk length of ``run_sequence`` in reference mode (0: always the step loop).
    """

    arch = "linear-attention"
    rounds_own_state = True

    def __init__(self, d_in, d_out, params, *, heads: int = 1, feature_map: str = "elu+1",
                 chunk_size: int = 32, **kw):
        heads, d_out = int(heads), int(d_out)
        if heads < 1 or d_out % heads:
            raise InvalidParameterError(f"linear-attention width {d_out} is not a multiple of "
                                        f"heads={heads}")
        if feature_map not in FEATURE_MAPS:
            raise InvalidParameterError(f"unknown feature map {feature_map!r}; use one of "
                                        f"{', '.join(FEATURE_MAPS)}")
        if int(chunk_size) < 0:
            raise InvalidParameterError(f"chunk_size must be >= 0, got {chunk_size}")
        self.heads, self.feature_map, self.chunk_size = heads, feature_map, int(chunk_size)
        self.d_k = self.d_v = d_out // heads
        super().__init__(d_in, d_out, params, **kw)

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, *, heads: int = 1, **kw) -> "LinearAttentionLayer":
        """Seeded weights, torch ``nn.Linear``'s default U(±1/sqrt(fan_in)) for all of them."""
        rng, d_in, m = rng_of(seed), int(d_in), int(width)
        b_in, b_m = 1.0 / math.sqrt(d_in), 1.0 / math.sqrt(m)
        params = {}
        for name in ("q", "k", "v"):
            params[f"W_{name}"] = uniform(rng, (d_in, m), b_in)
            params[f"b_{name}"] = uniform(rng, (m,), b_in)
        params["W_o"] = uniform(rng, (m, m), b_m)
        params["b_o"] = uniform(rng, (m,), b_m)
        return cls(d_in, m, params, heads=heads, **kw)

    @property
    def hyper(self) -> dict:
        return {"heads": self.heads, "feature_map": self.feature_map, "chunk_size": self.chunk_size}

    def state_shapes(self) -> dict:
        return {"S": (self.heads, self.d_k, self.d_v), "z": (self.heads, self.d_k)}

    def prepare(self) -> None:
        super().prepare()
        xp, w = self.xp, self.w
        self._w_qkv = xp.concat([w["W_q"], w["W_k"], w["W_v"]], axis=1)  # (d_in, 3m)
        self._b_qkv = xp.concat([w["b_q"], w["b_k"], w["b_v"]], axis=0)  # (3m,)

    def _qkv(self, x):
        """Features of the queries and keys and the values of ``x`` ``(..., d_in)``."""
        xp, m, H = self.xp, self.d_out, self.heads
        u = xp.matmul(x, self._w_qkv) + self._b_qkv  # (..., 3m)
        lead = tuple(x.shape[:-1])
        q = xp.reshape(feature_map(xp, u[..., :m], self.feature_map), lead + (H, self.d_k))
        k = xp.reshape(feature_map(xp, u[..., m:2 * m], self.feature_map), lead + (H, self.d_k))
        v = xp.reshape(u[..., 2 * m:], lead + (H, self.d_v))  # (..., H, d_v)
        return q, k, v

    def _out(self, x, o):
        """``x + o @ W_o + b_o`` for the head outputs ``o`` ``(..., H, d_v)``."""
        xp = self.xp
        o = xp.reshape(o, tuple(o.shape[:-2]) + (self.d_out,))  # (..., m)
        y = xp.matmul(o, self.w["W_o"]) + self.w["b_o"]  # (..., d_out)
        return y + x if self.d_in == self.d_out else y

    def step(self, state, x_t):
        xp = self.xp
        q, k, v = self._qkv(x_t)  # (B, H, d_k), (B, H, d_k), (B, H, d_v)
        S = state["S"] + k[..., :, None] * v[..., None, :]  # (B, H, d_k, d_v)
        new = self.round_state({"S": S, "z": state["z"] + k})
        num = xp.matmul(q[..., None, :], new["S"])[..., 0, :]  # (B, H, d_v)
        den = xp.sum(q * new["z"], axis=-1, keepdims=True)  # (B, H, 1)
        return new, self._out(x_t, num / (den + EPS))

    def run_sequence(self, state, x):
        if self.chunk_size == 0 or model_rounds(self) or x.shape[1] == 0:
            return super().run_sequence(state, x)
        return self.run_chunked(state, x, self.chunk_size)

    def run_chunked(self, state, x, chunk_size: int):
        """The chunked form over ``x`` ``(B, T, d_in)`` (no rounding; see the module docstring).

        The normaliser rides along as an extra value column: with ``v' = [v, 1]`` and
        ``S' = [S, z]``, one product gives numerator and denominator together.
        """
        xp, B, T, H = self.xp, x.shape[0], x.shape[1], self.heads
        S = xp.concat([state["S"], state["z"][..., None]], axis=-1)  # (B, H, d_k, d_v + 1)
        ys = []
        for t0 in range(0, T, chunk_size):
            t1 = min(t0 + chunk_size, T)  # the Array API leaves out-of-range slice stops unspecified
            xc = x[:, t0:t1, :]  # (B, C, d_in)
            q, k, v = self._qkv(xc)  # (B, C, H, d_k), (B, C, H, d_k), (B, C, H, d_v)
            q = xp.permute_dims(q, (0, 2, 1, 3))  # (B, H, C, d_k)
            k = xp.permute_dims(k, (0, 2, 3, 1))  # (B, H, d_k, C)
            ones = xp.ones((B, H, t1 - t0, 1), dtype=self.dtype)
            v = xp.concat([xp.permute_dims(v, (0, 2, 1, 3)), ones], axis=-1)  # (B, H, C, d_v + 1)
            idx = xp.arange(t1 - t0)
            mask = xp.astype(idx[:, None] >= idx[None, :], self.dtype)  # (C, C) causal, inclusive
            a = xp.matmul(q, k) * mask  # (B, H, C, C)
            nd = xp.matmul(q, S) + xp.matmul(a, v)  # (B, H, C, d_v + 1): numerator | denominator
            o = nd[..., :-1] / (nd[..., -1:] + EPS)  # (B, H, C, d_v)
            ys.append(self._out(xc, xp.permute_dims(o, (0, 2, 1, 3))))  # (B, C, d_out)
            S = S + xp.matmul(k, v)  # (B, H, d_k, d_v + 1)
        return {"S": S[..., :-1], "z": S[..., -1]}, xp.concat(ys, axis=1)  # (B, T, d_out)
