"""GRU layer (Cho et al. 2014), torch ``nn.GRU``'s equations and gate order::

    r = sigmoid(x W_xr + b_xr + h W_hr + b_hr)
    z = sigmoid(x W_xz + b_xz + h W_hz + b_hz)
    n = tanh(x W_xn + b_xn + r * (h W_hn + b_hn))
    h' = (1 - z) * n + z * h

Parameters (float64, ``x @ W`` convention, blocks r, z, n): ``W_x`` ``(d_in, 3m)``, ``W_h``
``(m, 3m)``, ``b_x`` ``(3m,)``, ``b_h`` ``(3m,)`` (both biases are kept: ``b_hn`` sits inside
``r * (.)``).  State: ``h`` ``(B, m)``: ``m`` numbers.  Output: ``h``.  Per step the kernel makes
one fused matmul ``[x_t, h, 1] @ W`` for ``r, z`` and the input part of ``n`` (gate-major
``(3, B, m)``; see :class:`~models.recurrent.projected.ProjectedLayer`) and one ``h @ W_hn``, and
takes ``sigmoid(a) = (1 + tanh(a / 2)) / 2`` with the halving folded into the weights (exact).  The
NumPy path makes the same calls into buffers: 2 matmuls and 10 element-wise calls per step.

Initialisers (``init=``): ``"uniform"`` (default, torch's): every weight and bias U(±1/sqrt(m));
``"orthogonal"``: Glorot-uniform ``W_x``, orthogonal blocks of ``W_h``, zero biases.

Examples
--------
>>> import numpy as np
>>> layer = GRULayer.init(d_in=3, width=4, seed=0)
>>> state, y = layer.run_sequence(layer.init_state(2), np.ones((2, 5, 3)))
>>> y.shape, list(state)
((2, 5, 4), ['h'])
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from ..common import glorot_uniform, orthogonal, rng_of, uniform
from .projected import ProjectedLayer

__all__ = ["GRULayer"]


class GRULayer(ProjectedLayer):
    """One GRU layer of width ``m``; see the module docstring."""

    arch = "gru"
    gates = 3

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, init: str = "uniform", **kw) -> "GRULayer":
        """Seeded random weights (``init`` = ``"uniform"`` or ``"orthogonal"``)."""
        rng, m = rng_of(seed), int(width)
        if init == "uniform":
            bound = 1.0 / math.sqrt(m)
            params = {"W_x": uniform(rng, (d_in, 3 * m), bound), "W_h": uniform(rng, (m, 3 * m), bound),
                      "b_x": uniform(rng, (3 * m,), bound), "b_h": uniform(rng, (3 * m,), bound)}
        elif init == "orthogonal":
            w_h = np.concatenate([orthogonal(rng, (m, m)) for _ in range(3)], axis=1)
            params = {"W_x": glorot_uniform(rng, (d_in, 3 * m)), "W_h": w_h,
                      "b_x": np.zeros(3 * m), "b_h": np.zeros(3 * m)}
        else:
            raise InvalidParameterError(f"unknown GRU init {init!r}; use 'uniform' or 'orthogonal'")
        return cls(d_in, m, params, **kw)

    def state_shapes(self) -> dict:
        return {"h": (self.d_out,)}

    def prepare(self) -> None:
        m, xp, dt = self.d_out, self.xp, self.dtype
        half = np.r_[np.full(2 * m, 0.5), np.ones(m)]  # sigmoid gates take tanh(a / 2): exact halving
        w_h, b = self.params["W_h"].copy(), self.params["b_x"].copy()
        b[:2 * m] += self.params["b_h"][:2 * m]  # r and z biases fold together
        w_h[:, 2 * m:] = 0.0  # n's hidden part sits inside r * (.): its own matmul below
        self.w = {"Whn": xp.asarray(self.params["W_h"][:, 2 * m:], dtype=dt),  # (m, m)
                  "bhn": xp.asarray(self.params["b_h"][2 * m:], dtype=dt)}
        self.set_weights(self.params["W_x"] * half, w_h * half, b * half)  # blocks r, z, n_x
        # the table path's h @ W_h: blocks r, z (halved) and W_hn itself, one batched matmul
        w_hn = self.params["W_h"][:, 2 * m:]
        self.w["Wh3"] = xp.asarray(np.stack([self.params["W_h"][:, :m] * 0.5,
                                             self.params["W_h"][:, m:2 * m] * 0.5, w_hn]), dtype=dt)

    def _hidden_n(self, state):
        hn = self._matmul(state["h"], self.w["Whn"])  # (B, m)
        hn += self.w["bhn"]
        return hn

    def fused_pre_activations(self, z, state, x_t):
        return super().fused_pre_activations(z, state, x_t), self._hidden_n(state)

    def table_pre_activations(self, state, u_t):
        gh = self._matmul(state["h"], self.w["Wh3"])  # (3, B, m): h W_hr, h W_hz (halved), h W_hn
        rz = gh[:2, ...]
        rz += u_t[:2, ...]
        hn = gh[2, ...]
        hn += self.w["bhn"]
        return self.xp.concat([rz, u_t[2:, ...]], axis=0), hn  # (r, z, n_x), h W_hn + b_hn

    def cell(self, state, pre):
        xp = self.xp
        g, hn = pre  # (3, B, m): r, z (halved), x-part of n; (B, m): h W_hn + b_hn
        rz = xp.tanh(g[:2, ...])
        rz *= 0.5
        rz += 0.5  # sigmoid of r, z
        hn *= rz[0, ...]
        hn += g[2, ...]
        n = xp.tanh(hn)
        new_h = state["h"] - n
        new_h *= rz[1, ...]
        new_h += n  # (1 - z) n + z h
        new = self.round_state({"h": new_h})
        return new, new["h"]

    def numpy_cell(self, state, batch):
        m, dt = self.d_out, self.dtype
        g = np.empty((3, batch, m), dtype=dt)  # r, z (halved), x-part of n
        rz, r, z, n_x = g[:2], g[0], g[1], g[2]
        hn = np.empty((batch, m), dtype=dt)
        w_hn, b_hn = self.w["Whn"], self.w["bhn"]
        half = np.asarray(0.5, dtype=dt)  # a 0-d array: a Python float costs ~1 us more per call
        mm, tanh, mul, add, sub = np.matmul, np.tanh, np.multiply, np.add, np.subtract

        def step(h, h_out):  # the calls of _hidden_n() and cell(), in place
            mm(h, w_hn, hn)
            add(hn, b_hn, hn)
            tanh(rz, rz)
            mul(rz, half, rz)
            add(rz, half, rz)  # sigmoid of r, z
            mul(hn, r, hn)
            add(hn, n_x, hn)
            tanh(hn, hn)  # n
            sub(h, hn, h_out)
            mul(h_out, z, h_out)
            add(h_out, hn, h_out)  # (1 - z) n + z h

        return {}, g, step

    def numpy_table_step(self, g, cell):
        # table_pre_activations and cell in place: h @ [W_hr, W_hz, W_hn] in one batched matmul
        # writes r, z straight into g and h W_hn into the buffer the cell reads; n_x is u_t's row
        batch, m = g.shape[1], self.d_out
        gh = np.empty((3, batch, m), dtype=self.dtype)
        rz, hn, r, z = gh[:2], gh[2], gh[0], gh[1]
        w, b_hn = self.w["Wh3"], self.w["bhn"]
        half = np.asarray(0.5, dtype=self.dtype)
        mm, tanh, mul, add, sub = np.matmul, np.tanh, np.multiply, np.add, np.subtract

        def step(h, u_t, h_out):
            mm(h, w, gh)
            add(rz, u_t[:2], rz)
            add(hn, b_hn, hn)
            tanh(rz, rz)
            mul(rz, half, rz)
            add(rz, half, rz)  # sigmoid of r, z
            mul(hn, r, hn)
            add(hn, u_t[2], hn)
            tanh(hn, hn)  # n
            sub(h, hn, h_out)
            mul(h_out, z, h_out)
            add(h_out, hn, h_out)  # (1 - z) n + z h

        return step
