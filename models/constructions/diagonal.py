"""Hand-set diagonal linear recurrences that show both sides of the state-tracking results.

One layer, ``h_t = a(x_t) * h_(t-1) + b(x_t)`` elementwise (a per-token diagonal transition and
input), rounded to the model's precision after every step, read out linearly from ``h``. Two
settings over the letters 0 and 1 (both width 1):

* ``"gated"``: ``a = 1/2`` for both letters (a gate in (0, 1)), ``b(0) = 0``, ``b(1) = 1/2``,
  ``h_0 = 0``. Then, before rounding, ``h_t = sum_i x_i 2^(i - t - 1)``: the last letters as a
  binary fraction, most recent first; at F fractional bits the state keeps about the last F
  letters (round to nearest can also carry a run of 1s up to ``h = 1``, so the exact language is
  not quite "the last letter is 1": ``commcomp automaton`` computes it). The readout accepts when
  ``h >= 1/2``. The transition monoid is aperiodic (checked, not assumed, in the tests): every map
  ``h -> h/2 + c`` is a contraction, and at finite precision its powers settle (a long enough
  power sends every state to one point). Sarrof, Veitsman and Hahn (NeurIPS 2024, arXiv
  2405.17394) find that SSMs implement exact solutions to star-free state tracking (abstract,
  checked) and that non-negative gates keep an SSM from recognizing parity (as Grazzi et al.'s
  abstract reports it: [S]); this model is such an SSM, and its monoid is aperiodic.
* ``"parity"``: ``a(0) = 1``, ``a(1) = -1`` (an eigenvalue -1), ``b = 0``, ``h_0 = 1``; then
  ``h_t = (-1)^(#1s)`` exactly in any format, and the readout accepts when ``h > 0``: even parity.
  Its monoid is the cyclic group Z2 (not aperiodic: the word "1" has period 2). Grazzi et al.
  (ICLR 2025, arXiv 2411.12537) prove that finite precision linear RNNs whose transition matrices
  have only positive eigenvalues cannot solve parity (abstract, checked); the eigenvalue -1 is
  what this one has.

The statements, their evidence tags and what each was checked against:
:data:`commcomp.automata.results.STATE_TRACKING_RESULTS` (``automaton`` lists the ones a monoid
verdict speaks to in ``state_tracking``).

Examples
--------
>>> import numpy as np
>>> m = diagonal_model("parity", "fixed:4:2")
>>> _, logits = m.run_with_output(np.array([[1, 0, 1], [1, 1, 1]]))
>>> np.argmax(logits, axis=1).tolist()                       # even, odd number of 1s
[1, 0]
>>> g = diagonal_model("gated", "fixed:6:4")
>>> _, logits = g.run_with_output(np.array([[1, 1, 0], [0, 0, 1]]))
>>> np.argmax(logits, axis=1).tolist()                       # accepts when the last letter is 1
[0, 1]
"""

from __future__ import annotations

import numpy as np

from commcomp.errors import InvalidParameterError
from models.recurrent.base import RecurrentLayer, RecurrentModel

__all__ = ["DiagonalLayer", "diagonal_model", "SETTINGS"]

SETTINGS = {
    # a (V, m), b (V, m), h0 (m,), readout (W (m, 2), bias (2,)): logits of reject, accept
    "gated": (np.array([[0.5], [0.5]]), np.array([[0.0], [0.5]]), np.array([0.0]),
              np.array([[-1.0, 1.0]]), np.array([0.375, -0.375])),  # accept iff h >= 1/2 (h > 3/8)
    "parity": (np.array([[1.0], [-1.0]]), np.array([[0.0], [0.0]]), np.array([1.0]),
               np.array([[-1.0, 1.0]]), np.array([0.0, 0.0])),  # accept iff h = +1
}


class DiagonalLayer(RecurrentLayer):
    """``h' = (x_t @ a) * h + x_t @ b`` with a one-hot token ``x_t`` ``(B, V)``; output ``h'``."""

    arch = "diagonal"

    def state_shapes(self) -> dict:
        return {"h": (self.d_out,)}

    def init_state(self, batch, xp=None):
        xp = xp if xp is not None else self.xp
        start = xp.asarray(self.params["h0"], dtype=self.dtype)
        return {"h": xp.broadcast_to(start[None, :], (int(batch), self.d_out)) * 1}

    def step(self, state, x_t):
        xp, w = self.xp, self.w
        h = xp.matmul(x_t, w["a"]) * state["h"] + xp.matmul(x_t, w["b"])  # (B, m)
        return {"h": h}, h

    def output_from_state(self, state):
        return state["h"]


def diagonal_model(setting: str, precision) -> RecurrentModel:
    """The ``setting`` (``"gated"`` or ``"parity"``, module docstring) at ``precision``, over tokens 0, 1."""
    if setting not in SETTINGS:
        raise InvalidParameterError(f"diagonal settings are {sorted(SETTINGS)}, not {setting!r}")
    a, b, h0, W, bias = SETTINGS[setting]
    layer = DiagonalLayer(a.shape[0], a.shape[1], {"a": a, "b": b, "h0": h0})
    return RecurrentModel("diagonal", np.eye(a.shape[0]), [layer], W, bias, precision=precision,
                          config={"construction": f"diagonal-{setting}"})
