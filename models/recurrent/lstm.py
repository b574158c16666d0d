"""LSTM layer (Hochreiter & Schmidhuber 1997), torch ``nn.LSTM``'s equations and gate order.

For input ``x_t`` and carried ``(h, c)``::

    i, f, g, o = split(x_t @ W_x + h @ W_h + b, 4)       # gate order of torch: i, f, g, o
    c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h' = sigmoid(o) * tanh(c')

Parameters (float64, ``x @ W`` convention): ``W_x`` ``(d_in, 4m)``, ``W_h`` ``(m, 4m)``, ``b``
``(4m,)`` (torch's ``b_ih + b_hh``).  State: ``h`` ``(B, m)`` and ``c`` ``(B, m)``: ``2m`` numbers.
Output: ``h``.  The kernel computes the pre-activations gate-major, ``(4, B, m)`` in the order
``g, o, f, i`` (one fused matmul ``[x_t, h, 1] @ W`` per step, see
:class:`~models.recurrent.projected.ProjectedLayer`; each gate a contiguous block), and takes
``sigmoid(a) = (1 + tanh(a / 2)) / 2`` with the halving folded into the weights (exact), so all
four gates go through one ``tanh`` call.  The NumPy path keeps ``c`` in the row just before the
gates, so ``(f, i) * (c, tanh g)`` is one call: 1 matmul and 7 element-wise calls per step, all
into buffers (no copies, no allocations).

Initialisers (``init=``): ``"uniform"`` (default, torch's): every weight and bias U(±1/sqrt(m));
``"orthogonal"``: Glorot-uniform ``W_x``, orthogonal blocks of ``W_h``, zero bias except the
forget gate's, which is 1 (Jozefowicz et al. 2015).

Examples
--------
>>> import numpy as np
>>> layer = LSTMLayer.init(d_in=3, width=4, seed=0)
>>> state = layer.init_state(2)                      # {"h": (2, 4), "c": (2, 4)}
>>> state, y = layer.run_sequence(state, np.ones((2, 5, 3)))
>>> y.shape, sorted(state)
((2, 5, 4), ['c', 'h'])
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from ..common import glorot_uniform, orthogonal, rng_of, uniform
from .projected import ProjectedLayer

__all__ = ["LSTMLayer"]

_KERNEL_ORDER = (2, 3, 1, 0)  # torch blocks (i, f, g, o) -> kernel blocks (g, o, f, i)


def _permute_gates(w: np.ndarray, m: int) -> np.ndarray:
    blocks = [w[..., k * m:(k + 1) * m] for k in _KERNEL_ORDER]
    return np.concatenate(blocks, axis=-1)


class LSTMLayer(ProjectedLayer):
    """One LSTM layer of width ``m``; see the module docstring for the equations."""

    arch = "lstm"
    gates = 4

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, init: str = "uniform", **kw) -> "LSTMLayer":
        """Seeded random weights (``init`` = ``"uniform"`` or ``"orthogonal"``)."""
        rng, m = rng_of(seed), int(width)
        if init == "uniform":
            bound = 1.0 / math.sqrt(m)
            params = {"W_x": uniform(rng, (d_in, 4 * m), bound), "W_h": uniform(rng, (m, 4 * m), bound),
                      "b": uniform(rng, (4 * m,), bound)}
        elif init == "orthogonal":
            w_h = np.concatenate([orthogonal(rng, (m, m)) for _ in range(4)], axis=1)
            b = np.zeros(4 * m)
            b[m:2 * m] = 1.0
            params = {"W_x": glorot_uniform(rng, (d_in, 4 * m)), "W_h": w_h, "b": b}
        else:
            raise InvalidParameterError(f"unknown LSTM init {init!r}; use 'uniform' or 'orthogonal'")
        return cls(d_in, m, params, **kw)

    @property
    def width(self) -> int:
        return self.d_out

    def state_shapes(self) -> dict:
        return {"h": (self.d_out,), "c": (self.d_out,)}

    def prepare(self) -> None:
        m = self.d_out
        half = np.r_[np.ones(m), np.full(3 * m, 0.5)]  # sigmoid gates take tanh(a / 2): exact halving
        self.w = {}
        self.set_weights(*(_permute_gates(self.params[k], m) * half for k in ("W_x", "W_h", "b")))

    def cell(self, state, g):
        xp = self.xp
        t = xp.tanh(g)  # (4, B, m): tanh(a) for g; tanh(a/2) for o, f, i
        s = t[1:, ...]
        s *= 0.5
        s += 0.5  # sigmoid of o, f, i
        c = s[1, ...] * state["c"]  # (B, m)
        c += s[2, ...] * t[0, ...]
        h = s[0, ...] * xp.tanh(c)
        new = self.round_state({"h": h, "c": c})
        return new, new["h"]

    def numpy_cell(self, state, batch):
        m, dt = self.d_out, self.dtype
        buf = np.empty((5, batch, m), dtype=dt)  # rows: c, then the gates g, o, f, i
        buf[0] = state["c"]
        g, sig, c, so = buf[1:], buf[2:], buf[0], buf[2]
        f_i, c_tg = buf[3:], buf[:2]  # (sigmoid f, sigmoid i) and (c, tanh g): one product
        prod = np.empty((2, batch, m), dtype=dt)
        prod_f, prod_i = prod[0], prod[1]
        tanh_c = np.empty((batch, m), dtype=dt)
        half = np.asarray(0.5, dtype=dt)  # a 0-d array: a Python float costs ~1 us more per call
        tanh, mul, add = np.tanh, np.multiply, np.add

        def step(h, h_out):  # the calls of cell(), in place
            tanh(g, g)
            mul(sig, half, sig)
            add(sig, half, sig)  # sigmoid of o, f, i
            mul(f_i, c_tg, prod)  # (sigmoid(f) c, sigmoid(i) tanh(g))
            add(prod_f, prod_i, c)  # c'
            tanh(c, tanh_c)
            mul(so, tanh_c, h_out)  # h' = sigmoid(o) tanh(c')

        return {"c": c}, g, step
