"""RetNet retention (Sun et al. 2023) in its recurrent form: decayed linear attention, multi-scale.

For input ``x_t`` and ``heads`` heads, head ``h`` with its own fixed decay
``gamma_h = 1 - 2**(-5 - h)`` (the paper's multi-scale decays), ``d_k = m / heads`` and
``d_v = value_factor * m / heads``::

    q, k, v = x_t @ W_q, (x_t @ W_k) / sqrt(d_k), x_t @ W_v          # per head
    S' = gamma_h * S + k v^T                     # (d_k, d_v) per head; no normaliser
    o  = RMSNorm(q^T S')                         # (d_v,) per head, no affine
    y  = x_t + (swish(x_t @ W_g) * concat_heads(o)) @ W_o       (residual when d_in == d_out)

This is the paper's multi-scale retention with its swish gate, less the xPos rotation (which
would make a step depend on the absolute position, i.e. carry a step counter).  The per-head
normalisation is RMSNorm, as torchscale implements the paper's GroupNorm; it carries nothing
across steps.  State: ``S`` ``(B, heads, d_k, d_v)``: ``heads * d_k * d_v =
value_factor * m**2 / heads`` numbers per layer.

Initialiser (torchscale's): Glorot-uniform ``W_q, W_k, W_v, W_g`` with gain ``2**-2.5`` and
``W_o`` with gain ``2**-1``; no biases.  The decays are fixed, not parameters.

``run_sequence`` in float64 reference mode takes the chunkwise-recurrent form of the paper:
with ``D[i, j] = gamma**(i - j)`` for ``i >= j`` inside a chunk of length C,
``o = (Q K^T * D) V + (gamma**(i+1) Q) S_prev`` and ``S = gamma**C S_prev + (gamma**(C-1-j) K)^T V``.
With a precision it loops :meth:`step`; ``chunk_size=0`` always loops.

Examples
--------
>>> import numpy as np
>>> layer = RetNetLayer.init(d_in=4, width=4, seed=0, heads=2)
>>> layer.gammas.tolist()
[0.96875, 0.984375]
>>> state, y = layer.run_sequence(layer.init_state(3), np.ones((3, 5, 4)))   # (B, T, d_in)
>>> tuple(state["S"].shape), y.shape
((3, 2, 2, 2), (3, 5, 4))
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from ..common import rng_of, uniform
from .base import RecurrentLayer
from .linear_attention import model_rounds

__all__ = ["RetNetLayer", "retnet_gammas"]

NORM_EPS = 1e-6


def retnet_gammas(heads: int) -> np.ndarray:
    """The decays ``1 - 2**(-5 - h)`` of heads ``h = 0 .. heads-1`` (float64, host)."""
    return 1.0 - 2.0 ** (-5.0 - np.arange(int(heads), dtype=np.float64))


def silu(xp, u):
    """``u * sigmoid(u)`` with ``sigmoid(u) = (1 + tanh(u / 2)) / 2`` (no overflow)."""
    return u * (0.5 + 0.5 * xp.tanh(0.5 * u))


class RetNetLayer(RecurrentLayer):
    """One multi-scale retention layer; see the module docstring for the equations.

    Parameters
    ----------
    d_in, d_out : int
        Input width and width ``m`` (``m`` a multiple of ``heads``).
    params : dict of str to numpy.ndarray
        ``W_q, W_k`` ``(d_in, m)``, ``W_v, W_g`` ``(d_in, value_factor * m)``, ``W_o``
        ``(value_factor * m, m)``.
    heads : int
        Heads, each with its decay ``1 - 2**(-5 - h)``; ``d_k = m / heads``.
    value_factor : int
        ``d_v = value_factor * d_k`` (the paper uses 2).
    chunk_size : int
        Chunk length of ``run_sequence`` in reference mode (0: always the step loop).
    """

    arch = "retnet"
    rounds_own_state = True

    def __init__(self, d_in, d_out, params, *, heads: int = 1, value_factor: int = 1,
                 chunk_size: int = 32, **kw):
        heads, d_out, value_factor = int(heads), int(d_out), int(value_factor)
        if heads < 1 or d_out % heads:
            raise InvalidParameterError(f"retnet width {d_out} is not a multiple of heads={heads}")
        if value_factor < 1 or int(chunk_size) < 0:
            raise InvalidParameterError(f"retnet needs value_factor >= 1 and chunk_size >= 0, got "
                                        f"{value_factor}, {chunk_size}")
        self.heads, self.value_factor, self.chunk_size = heads, value_factor, int(chunk_size)
        self.d_k = d_out // heads
        self.d_v = value_factor * self.d_k
        self.gammas = retnet_gammas(heads)  # (H,)
        super().__init__(d_in, d_out, params, **kw)

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, *, heads: int = 1, value_factor: int = 1,
             **kw) -> "RetNetLayer":
        """Seeded weights: torchscale's gained Glorot-uniform (see the module docstring)."""
        rng, d_in, m = rng_of(seed), int(d_in), int(width)
        mv = int(value_factor) * m

        def glorot(shape, gain):
            return uniform(rng, shape, gain * math.sqrt(6.0 / (shape[0] + shape[1])))

        params = {"W_q": glorot((d_in, m), 2 ** -2.5), "W_k": glorot((d_in, m), 2 ** -2.5),
                  "W_v": glorot((d_in, mv), 2 ** -2.5), "W_g": glorot((d_in, mv), 2 ** -2.5),
                  "W_o": glorot((mv, m), 2 ** -1)}
        return cls(d_in, m, params, heads=heads, value_factor=value_factor, **kw)

    @property
    def hyper(self) -> dict:
        return {"heads": self.heads, "value_factor": self.value_factor, "chunk_size": self.chunk_size}

    def state_shapes(self) -> dict:
        return {"S": (self.heads, self.d_k, self.d_v)}

    def prepare(self) -> None:
        super().prepare()
        xp, w = self.xp, self.w
        self._w_in = xp.concat([w["W_q"], w["W_k"], w["W_v"], w["W_g"]], axis=1)  # (d_in, 2m + 2mv)
        self._gamma = xp.asarray(self.gammas, dtype=self.dtype)  # (H,)
        self._scale = 1.0 / math.sqrt(self.d_k)  # a Python float keeps float32 float32

    def _project(self, x):
        """Queries, scaled keys, values and the gate of ``x`` ``(..., d_in)``."""
        xp, m, mv, H = self.xp, self.d_out, self.d_out * self.value_factor, self.heads
        u = xp.matmul(x, self._w_in)  # (..., 2m + 2mv)
        lead = tuple(x.shape[:-1])
        q = xp.reshape(u[..., :m], lead + (H, self.d_k))  # (..., H, d_k)
        k = xp.reshape(u[..., m:2 * m] * self._scale, lead + (H, self.d_k))  # (..., H, d_k)
        v = xp.reshape(u[..., 2 * m:2 * m + mv], lead + (H, self.d_v))  # (..., H, d_v)
        return q, k, v, silu(xp, u[..., 2 * m + mv:])

    def _out(self, x, o, g):
        """Normalise the head outputs ``o`` ``(..., H, d_v)``, gate, project, add the residual."""
        xp = self.xp
        o = o / xp.sqrt(xp.mean(o * o, axis=-1, keepdims=True) + NORM_EPS)  # RMSNorm per head
        o = xp.reshape(o, tuple(o.shape[:-2]) + (self.d_v * self.heads,))  # (..., mv)
        y = xp.matmul(g * o, self.w["W_o"])  # (..., d_out)
        return y + x if self.d_in == self.d_out else y

    def step(self, state, x_t):
        xp = self.xp
        q, k, v, g = self._project(x_t)  # (B, H, d_k), (B, H, d_k), (B, H, d_v), (B, mv)
        S = self._gamma[:, None, None] * state["S"] + k[..., :, None] * v[..., None, :]  # (B, H, d_k, d_v)
        new = self.round_state({"S": S})
        o = xp.matmul(q[..., None, :], new["S"])[..., 0, :]  # (B, H, d_v)
        return new, self._out(x_t, o, g)

    def run_sequence(self, state, x):
        if self.chunk_size == 0 or model_rounds(self) or x.shape[1] == 0:
            return super().run_sequence(state, x)
        return self.run_chunked(state, x, self.chunk_size)

    def run_chunked(self, state, x, chunk_size: int):
        """The chunkwise form over ``x`` ``(B, T, d_in)`` (no rounding; see the module docstring)."""
        xp, T = self.xp, x.shape[1]
        log_gamma = xp.log(self._gamma)[:, None]  # (H, 1)
        S, ys = state["S"], []
        for t0 in range(0, T, chunk_size):
            t1 = min(t0 + chunk_size, T)  # the Array API leaves out-of-range slice stops unspecified
            xc = x[:, t0:t1, :]  # (B, C, d_in)
            q, k, v, g = self._project(xc)  # (B, C, H, d_k) x2, (B, C, H, d_v), (B, C, mv)
            q, v = xp.permute_dims(q, (0, 2, 1, 3)), xp.permute_dims(v, (0, 2, 1, 3))  # (B, H, C, d)
            k = xp.permute_dims(k, (0, 2, 3, 1))  # (B, H, d_k, C)
            C = t1 - t0
            i = xp.astype(xp.arange(C), self.dtype)  # (C,)
            diff = i[:, None] - i[None, :]  # (C, C)
            decay = xp.where(diff >= 0, xp.exp(log_gamma[:, :, None] * xp.clip(diff, min=0.0)),
                             xp.zeros_like(diff))  # (H, C, C): gamma^(i-j) for i >= j
            inner = xp.matmul(xp.matmul(q, k) * decay, v)  # (B, H, C, d_v)
            cross = xp.matmul(q * xp.exp(log_gamma * (i + 1.0))[..., None], S)  # (B, H, C, d_v)
            o = xp.permute_dims(inner + cross, (0, 2, 1, 3))  # (B, C, H, d_v)
            ys.append(self._out(xc, o, g))  # (B, C, d_out)
            k_dec = k * xp.exp(log_gamma * (C - 1.0 - i))[:, None, :]  # (B, H, d_k, C)
            S = xp.exp(log_gamma * float(C))[..., None] * S + xp.matmul(k_dec, v)  # (B, H, d_k, d_v)
        return {"S": S}, xp.concat(ys, axis=1)  # (B, T, d_out)
