"""Elman RNN layer, torch ``nn.RNN``'s equations::

    h' = tanh(x_t @ W_x + h @ W_h + b)        (nonlinearity="relu": max(., 0))

Parameters (float64, ``x @ W`` convention): ``W_x`` ``(d_in, m)``, ``W_h`` ``(m, m)``, ``b`` ``(m,)``
(torch's ``b_ih + b_hh``).  State: ``h`` ``(B, m)``: ``m`` numbers.  Output: ``h``.

Initialisers (``init=``): ``"uniform"`` (default, torch's): every weight and bias U(±1/sqrt(m));
``"orthogonal"``: Glorot-uniform ``W_x``, orthogonal ``W_h``, zero bias.

Examples
--------
>>> import numpy as np
>>> layer = ElmanLayer.init(d_in=3, width=4, seed=0)
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

__all__ = ["ElmanLayer"]


class ElmanLayer(ProjectedLayer):
    """One Elman layer of width ``m``; see the module docstring."""

    arch = "elman"

    def __init__(self, d_in, d_out, params, *, nonlinearity: str = "tanh", **kw):
        if nonlinearity not in ("tanh", "relu"):
            raise InvalidParameterError(f"Elman nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(d_in, d_out, params, **kw)

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, init: str = "uniform", **kw) -> "ElmanLayer":
        """Seeded random weights (``init`` = ``"uniform"`` or ``"orthogonal"``)."""
        rng, m = rng_of(seed), int(width)
        if init == "uniform":
            bound = 1.0 / math.sqrt(m)
            params = {"W_x": uniform(rng, (d_in, m), bound), "W_h": uniform(rng, (m, m), bound),
                      "b": uniform(rng, (m,), bound)}
        elif init == "orthogonal":
            params = {"W_x": glorot_uniform(rng, (d_in, m)), "W_h": orthogonal(rng, (m, m)),
                      "b": np.zeros(m)}
        else:
            raise InvalidParameterError(f"unknown Elman init {init!r}; use 'uniform' or 'orthogonal'")
        return cls(d_in, m, params, **kw)

    @property
    def hyper(self) -> dict:
        return {"nonlinearity": self.nonlinearity}

    def state_shapes(self) -> dict:
        return {"h": (self.d_out,)}

    def prepare(self) -> None:
        self.w = {}
        self.set_weights(self.params["W_x"], self.params["W_h"], self.params["b"])

    def cell(self, state, g):
        xp = self.xp
        a = g[0, ...]  # (B, m)
        h = xp.tanh(a) if self.nonlinearity == "tanh" else xp.maximum(a, xp.zeros_like(a))
        new = self.round_state({"h": h})
        return new, new["h"]

    def numpy_cell(self, state, batch):
        g = np.empty((1, batch, self.d_out), dtype=self.dtype)
        a = g[0]  # (B, m)
        zero = np.asarray(0.0, dtype=self.dtype)  # a 0-d array: cheaper per call than 0.0
        if self.nonlinearity == "tanh":
            def step(h, h_out):
                np.tanh(a, h_out)
        else:
            def step(h, h_out):
                np.maximum(a, zero, out=h_out)  # as max(a, zeros_like(a)): NaN stays NaN
        return {}, g, step
