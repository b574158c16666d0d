"""Diagonal linear state-space layer in the DSS / S4D style (Gupta et al. 2022; Gu et al. 2022).

Each of the ``d_in`` input channels ``c`` drives its own diagonal SSM of ``d_state`` modes ``n``::

    h'  = Abar * h + Bbar * u_t                    # (d_in, d_state) per instance, elementwise
    y   = Re(sum_n C[c, n] h'[c, n]) + D[c] u_t    # (d_in,)
    out = x_t + gelu(y) @ W_mix + b_mix           # mixing layer (residual when d_in == d_out)

with ``u_t = x_t``.  The transition is discretised by zero-order hold with a learned step size
``dt[c] = exp(log_dt[c])`` (the exact solution of ``h' = A h + B u`` over a step with ``u`` held
constant)::

    Abar = exp(dt A),     Bbar = (exp(dt A) - 1) / A * B

``complex_state=0`` (default, S4D-Real): ``A[c, n] = -(n + 1)``, real ``B = 1``, ``C ~ N(0, 1)``;
state ``h`` ``(B, d_in, d_state)``.  ``complex_state=1`` (S4D-Lin): ``A[c, n] = -1/2 + i pi n``,
``B = 1``, ``C`` complex normal (each part N(0, 1/2)); the complex state is carried as its real
and imaginary parts, ``h_re`` and ``h_im``, each ``(B, d_in, d_state)``, so each complex entry
counts as 2 numbers.  Numbers per layer: ``(1 + complex_state) * d_state * m`` (``m = d_in``).
The real part ``A = -exp(log_a_real)`` stays negative for any weights, so the state is stable.
(S4D's ``2 Re`` over conjugate pairs is absorbed into ``C``.)

Other initialisers: ``log_dt ~ U[log 0.001, log 0.1]``, ``D ~ N(0, 1)``, ``W_mix`` and ``b_mix``
torch ``nn.Linear``'s U(±1/sqrt(d_in)).  ``gelu`` is the tanh approximation (the Array API
has no ``erf``).  ``Abar`` and ``Bbar`` are computed once per parameter set; the step loop is
the sequence path (a diagonal recurrence is elementwise: a loop over steps beats parallel scans
at the batch x width used here).

Examples
--------
>>> import numpy as np
>>> layer = DSSLayer.init(d_in=3, width=3, seed=0, d_state=4, complex_state=1)
>>> {k: tuple(v.shape) for k, v in layer.init_state(2).items()}
{'h_re': (2, 3, 4), 'h_im': (2, 3, 4)}
>>> state, y = layer.run_sequence(layer.init_state(2), np.ones((2, 5, 3)))   # (B, T, d_in)
>>> y.shape
(2, 5, 3)
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from ..common import normal, rng_of, uniform
from .base import RecurrentLayer

__all__ = ["DSSLayer", "gelu_tanh", "zoh_diagonal"]

DT_MIN, DT_MAX = 0.001, 0.1


def gelu_tanh(xp, u):
    """GELU, tanh approximation: ``u/2 * (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))``."""
    return 0.5 * u * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * (u * u * u))))


def zoh_diagonal(xp, dt, a_re, a_im, B_re, B_im):
    """Zero-order hold of a diagonal ``A = a_re + i a_im`` with step ``dt`` and input vector ``B``.

    Returns ``(Abar_re, Abar_im, Bbar_re, Bbar_im)`` for ``Abar = exp(dt A)`` and
    ``Bbar = (Abar - 1) / A * B``; pass ``a_im = B_im = None`` for a real system (then the
    imaginary parts come back as ``None``).
    """
    x = dt * a_re
    if a_im is None:
        return xp.exp(x), None, xp.expm1(x) / a_re * B_re, None  # expm1: accurate for small dt
    y = dt * a_im
    cos, sin = xp.cos(y), xp.sin(y)
    # Abar - 1 = e^x cos y - 1 + i e^x sin y, with e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2)
    half = xp.sin(0.5 * y)
    p = xp.expm1(x) * cos - 2.0 * half * half
    q = xp.exp(x) * sin
    norm = a_re * a_re + a_im * a_im
    r_re, r_im = (p * a_re + q * a_im) / norm, (q * a_re - p * a_im) / norm  # (Abar - 1) / A
    return xp.exp(x) * cos, q, r_re * B_re - r_im * B_im, r_re * B_im + r_im * B_re


class DSSLayer(RecurrentLayer):
    """One diagonal SSM layer with a mixing linear layer; see the module docstring.

    Parameters
    ----------
    d_in, d_out : int
        Channels ``m`` of the SSM (its input width) and output width of the mixing layer.
    params : dict of str to numpy.ndarray
        ``log_dt`` ``(d_in,)``, ``log_a_real, B_re, C_re`` ``(d_in, d_state)`` (and ``a_imag, B_im,
        C_im`` when complex), ``D`` ``(d_in,)``, ``W_mix`` ``(d_in, d_out)``, ``b_mix`` ``(d_out,)``.
    d_state : int
        Modes per channel.
    complex_state : {0, 1}
        1: complex diagonal (S4D-Lin), carried as real and imaginary parts.
    """

    arch = "dss"
    rounds_own_state = True

    def __init__(self, d_in, d_out, params, *, d_state: int = 64, complex_state: int = 0, **kw):
        if int(d_state) < 1 or int(complex_state) not in (0, 1):
            raise InvalidParameterError(f"dss needs d_state >= 1 and complex_state in {{0, 1}}, got "
                                        f"{d_state}, {complex_state}")
        self.d_state, self.complex_state = int(d_state), int(complex_state)
        super().__init__(d_in, d_out, params, **kw)

    @classmethod
    def init(cls, d_in: int, width: int, seed=0, *, d_state: int = 64, complex_state: int = 0,
             **kw) -> "DSSLayer":
        """Seeded S4D-Real (``complex_state=0``) or S4D-Lin (``1``) weights; see the module docstring."""
        rng, d_in, m, N = rng_of(seed), int(d_in), int(width), int(d_state)
        n = np.arange(N, dtype=np.float64)
        params = {"log_dt": rng.uniform(math.log(DT_MIN), math.log(DT_MAX), size=d_in)}
        if int(complex_state):
            params.update(log_a_real=np.full((d_in, N), math.log(0.5)),
                          a_imag=np.tile(math.pi * n, (d_in, 1)),
                          B_re=np.ones((d_in, N)), B_im=np.zeros((d_in, N)),
                          C_re=normal(rng, (d_in, N), math.sqrt(0.5)),
                          C_im=normal(rng, (d_in, N), math.sqrt(0.5)))
        else:
            params.update(log_a_real=np.tile(np.log(n + 1.0), (d_in, 1)), B_re=np.ones((d_in, N)),
                          C_re=normal(rng, (d_in, N), 1.0))
        bound = 1.0 / math.sqrt(d_in)
        params.update(D=normal(rng, (d_in,), 1.0), W_mix=uniform(rng, (d_in, m), bound),
                      b_mix=uniform(rng, (m,), bound))
        return cls(d_in, m, params, d_state=N, complex_state=complex_state, **kw)

    @property
    def hyper(self) -> dict:
        return {"d_state": self.d_state, "complex_state": self.complex_state}

    def state_shapes(self) -> dict:
        shape = (self.d_in, self.d_state)
        return {"h_re": shape, "h_im": shape} if self.complex_state else {"h": shape}

    def prepare(self) -> None:
        super().prepare()
        xp, w = self.xp, self.w
        dt = xp.exp(w["log_dt"])[:, None]  # (d_in, 1)
        a_re = -xp.exp(w["log_a_real"])  # (d_in, N)
        if self.complex_state:
            self._abar = zoh_diagonal(xp, dt, a_re, w["a_imag"], w["B_re"], w["B_im"])
        else:
            self._abar = zoh_diagonal(xp, dt, a_re, None, w["B_re"], None)

    def step(self, state, x_t):
        xp, w = self.xp, self.w
        ar, ai, br, bi = self._abar  # each (d_in, N)
        u = x_t[..., None]  # (B, d_in, 1)
        if self.complex_state:
            h_re, h_im = state["h_re"], state["h_im"]
            new = self.round_state({"h_re": ar * h_re - ai * h_im + br * u,
                                    "h_im": ar * h_im + ai * h_re + bi * u})  # (B, d_in, N) each
            y = xp.sum(w["C_re"] * new["h_re"] - w["C_im"] * new["h_im"], axis=-1)  # (B, d_in)
        else:
            new = self.round_state({"h": ar * state["h"] + br * u})  # (B, d_in, N)
            y = xp.sum(w["C_re"] * new["h"], axis=-1)  # (B, d_in)
        y = y + w["D"] * x_t
        out = xp.matmul(gelu_tanh(xp, y), w["W_mix"]) + w["b_mix"]  # (B, d_out)
        return new, (out + x_t if self.d_in == self.d_out else out)
