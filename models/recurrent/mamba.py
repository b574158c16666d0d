"""Mamba block (Gu & Dao 2023): a selective SSM with input-dependent step size, B and C.

Width ``m``, inner width ``E = expand * m``, ``N = d_state``, ``R = dt_rank``.  One step, as
``mamba_simple.Mamba.step``::

    xi, z  = split(x_t @ W_in, 2)                     # (E,), (E,): main and gate branches
    window = [conv buffer (E, d_conv - 1), xi]        # the d_conv latest inner inputs
    u      = silu(sum_j conv_w[:, j] window[:, j] + conv_b)         # causal depthwise conv
    dt_low, Bt, Ct = split(u @ W_x, [R, N, N])        # input-dependent low-rank dt, B and C
    dt     = softplus(dt_low @ W_dt + b_dt)           # (E,) step sizes
    h'     = exp(dt A) * h + (dt * u) Bt^T             # (E, N); A = -exp(A_log) < 0
    y      = (h' Ct + D * u) * silu(z)                # gated output
    out    = x_t + y @ W_out                          # (residual when d_in == d_out)

Discretisation as in Mamba: zero-order hold for ``A`` (``Abar = exp(dt A)``) and the Euler
step ``Bbar = dt B`` for the input (Mamba's simplification of ZOH's ``(Abar - 1)/A B``).
State: the conv buffer ``conv`` ``(B, E, d_conv - 1)`` (oldest first) and the SSM state ``h``
``(B, E, N)``: ``expand * m * (d_state + d_conv - 1)`` numbers per layer.  The output ``y_t``
needs ``x_t`` as well, so it is not part of the state: the party that runs the last step
computes it.

Initialisers (``mamba_simple``'s): ``W_in`` U(±1/sqrt(d_in)); ``conv_w``, ``conv_b``
U(±1/sqrt(d_conv)); ``W_x``, ``W_out`` U(±1/sqrt(E)); ``W_dt`` U(±R**-0.5); ``b_dt`` the inverse
softplus of ``dt ~ exp(U[log 0.001, log 0.1])`` floored at 1e-4; ``A_log[:, n] = log(n + 1)``
(S4D-Real); ``D = 1``.  ``dt_rank`` defaults to ``ceil(m / 16)``.

Examples
--------
>>> import numpy as np
>>> layer = MambaLayer.init(d_in=4, width=4, seed=0, d_state=3, d_conv=4, expand=2)
>>> {k: tuple(v.shape) for k, v in layer.init_state(2).items()}
{'conv': (2, 8, 3), 'h': (2, 8, 3)}
>>> state, y = layer.run_sequence(layer.init_state(2), np.ones((2, 5, 4)))   # (B, T, d_in)
>>> y.shape
(2, 5, 4)
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from ..common import rng_of, uniform
from .base import RecurrentLayer
from .retnet import silu

__all__ = ["MambaLayer", "softplus"]

DT_MIN, DT_MAX, DT_FLOOR = 0.001, 0.1, 1e-4


def softplus(xp, u):
    """``log(1 + exp(u))`` computed as ``max(u, 0) + log1p(exp(-|u|))`` (no overflow)."""
    return xp.clip(u, min=0.0) + xp.log1p(xp.exp(-xp.abs(u)))


def _check(expand, d_state, d_conv, dt_rank) -> None:
    if min(int(expand), int(d_state), int(d_conv), int(dt_rank)) < 1:
        raise InvalidParameterError(f"mamba needs expand, d_state, d_conv, dt_rank >= 1, got "
                                    f"{expand}, {d_state}, {d_conv}, {dt_rank}")


class MambaLayer(RecurrentLayer):
    """One Mamba block; see the module docstring for the equations.

    Parameters
    ----------
    d_in, d_out : int
        Input width and width ``m``; the inner width is ``E = expand * m``.
    params : dict of str to numpy.ndarray
        ``W_in`` ``(d_in, 2E)``, ``conv_w`` ``(E, d_conv)``, ``conv_b`` ``(E,)``, ``W_x``
        ``(E, dt_rank + 2 d_state)``, ``W_dt`` ``(dt_rank, E)``, ``b_dt`` ``(E,)``, ``A_log``
        ``(E, d_state)``, ``D`` ``(E,)``, ``W_out`` ``(E, d_out)``.
    expand, d_state, d_conv : int
        Inner width factor, SSM state size per inner channel, convolution width.
    dt_rank : int, optional
        Rank of the step-size projection (default ``ceil(m / 16)``).
    """

    arch = "mamba"
    rounds_own_state = True

    def __init__(self, d_in, d_out, params, *, expand: int = 2, d_state: int = 16, d_conv: int = 4,
                 dt_rank: int | None = None, **kw):
        d_out = int(d_out)
        dt_rank = math.ceil(d_out / 16) if dt_rank is None else int(dt_rank)
        _check(expand, d_state, d_conv, dt_rank)
        self.expand, self.d_state, self.d_conv, self.dt_rank = \
            int(expand), int(d_state), int(d_conv), dt_rank
        self.d_inner = self.expand * d_out
        super().__init__(d_in, d_out, params, **kw)

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, *, expand: int = 2, d_state: int = 16,
             d_conv: int = 4, dt_rank: int | None = None, **kw) -> "MambaLayer":
        """Seeded weights, as ``mamba_simple`` initialises them (see the module docstring)."""
        rng, d_in, m = rng_of(seed), int(d_in), int(width)
        E, N, K = int(expand) * m, int(d_state), int(d_conv)
        R = math.ceil(m / 16) if dt_rank is None else int(dt_rank)
        _check(expand, d_state, d_conv, R)
        dt = np.exp(rng.uniform(math.log(DT_MIN), math.log(DT_MAX), size=E))
        dt = np.maximum(dt, DT_FLOOR)
        params = {"W_in": uniform(rng, (d_in, 2 * E), 1.0 / math.sqrt(d_in)),
                  "conv_w": uniform(rng, (E, K), 1.0 / math.sqrt(K)),
                  "conv_b": uniform(rng, (E,), 1.0 / math.sqrt(K)),
                  "W_x": uniform(rng, (E, R + 2 * N), 1.0 / math.sqrt(E)),
                  "W_dt": uniform(rng, (R, E), R ** -0.5),
                  "b_dt": dt + np.log(-np.expm1(-dt)),  # inverse softplus: softplus(b_dt) = dt
                  "A_log": np.tile(np.log(np.arange(1, N + 1, dtype=np.float64)), (E, 1)),
                  "D": np.ones(E),
                  "W_out": uniform(rng, (E, m), 1.0 / math.sqrt(E))}
        return cls(d_in, m, params, expand=expand, d_state=N, d_conv=K, dt_rank=R, **kw)

    @property
    def hyper(self) -> dict:
        return {"expand": self.expand, "d_state": self.d_state, "d_conv": self.d_conv,
                "dt_rank": self.dt_rank}

    def state_shapes(self) -> dict:
        return {"conv": (self.d_inner, self.d_conv - 1), "h": (self.d_inner, self.d_state)}

    def prepare(self) -> None:
        super().prepare()
        self._A = -self.xp.exp(self.w["A_log"])  # (E, N), negative: a stable, decaying state

    def step(self, state, x_t):
        xp, w, E, R, N = self.xp, self.w, self.d_inner, self.dt_rank, self.d_state
        xz = xp.matmul(x_t, w["W_in"])  # (B, 2E)
        xi, z = xz[:, :E], xz[:, E:]  # (B, E) each
        window = xp.concat([state["conv"], xi[:, :, None]], axis=-1)  # (B, E, d_conv)
        u = silu(xp, xp.sum(window * w["conv_w"], axis=-1) + w["conv_b"])  # (B, E)
        dbc = xp.matmul(u, w["W_x"])  # (B, R + 2N)
        dt = softplus(xp, xp.matmul(dbc[:, :R], w["W_dt"]) + w["b_dt"])  # (B, E)
        b_t, c_t = dbc[:, R:R + N], dbc[:, R + N:]  # (B, N) each
        # ZOH for A, Euler for B: h' = exp(dt A) h + dt u B
        h = xp.exp(dt[:, :, None] * self._A) * state["h"] + (dt * u)[:, :, None] * b_t[:, None, :]
        new = self.round_state({"conv": window[:, :, 1:], "h": h})  # (B, E, d_conv-1), (B, E, N)
        y = xp.sum(new["h"] * c_t[:, None, :], axis=-1) + w["D"] * u  # (B, E)
        out = xp.matmul(y * silu(xp, z), w["W_out"])  # (B, d_out)
        return new, (out + x_t if self.d_in == self.d_out else out)
