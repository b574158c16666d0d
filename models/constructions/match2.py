"""C8: Match2 with one attention unit of constant width (SHT Match2-UB, theorems.md §7 C8).

Task format (``reductions.tasks.match2``): N = n + 1 tokens ``x_i`` in Z_M (default M = 2n + 1),
token id = residue; every position is an output: 1 iff some ``j != i`` has
``x_i + x_j = 0 (mod M)``.

A 1-layer, 1-head, non-causal :class:`~models.transformer.Transformer` of width 6 (d_k = 2,
d_v = 4, MLP 8), trigonometric token embeddings and a position circle.  With
``theta_v = 2 pi v / M``, ``phi_i = 2 pi i / N``, ``u_v = (cos theta_v, -sin theta_v)`` and
``s_v = [2v = 0 mod M]`` (v is its own partner), the residual stream at position i is
``[u (2) | p = (cos phi_i, sin phi_i) (2) | s (1) | 0 (1)]`` and

* score ``beta <conj u_i, u_j> = beta cos(theta_i + theta_j)`` (query ``conj u = (cos, sin)``,
  key ``u``), maximal (``beta``) exactly at the partners of ``x_i``; every other token scores at
  most ``beta (1 - g)``, ``g = 1 - cos(2 pi / M)``;
* value ``(conj u_j, p_j)``; for a partner ``conj u_j = u_i``.  ``W_O = -I`` writes
  ``r = (u_i - o_theta, p_i - o_pos)`` into the residual.

Write T for the top-scoring set (the partners of ``x_i``, and i itself when ``s_i = 1``) and
``e <= 2 (N - 1) exp(-beta g / 2)`` for the weight outside it (times 2: ``|v| <= 1`` per slot).

* ``s_i = 0``, a match: ``o_theta = u_i`` up to e, so ``|r_theta|_inf <= e``.
  No match: every j has ``<conj u_j, u_i> = cos(theta_i + theta_j) <= 1 - g`` (j = i too, since
  ``2 x_i != 0``), so ``<r_theta, u_i> >= g`` and ``|r_theta|_inf >= g / sqrt 2``.
* ``s_i = 1``: i is in T, so ``r_theta`` vanishes whatever the answer; the position part decides.
  ``|T| = 1``: ``o_pos = p_i`` up to e.  ``|T| = c >= 2``: ``<avg_T p, p_i> <= 1 - (c-1) g_L / c
  <= 1 - g_L / 2`` with ``g_L = 1 - cos(2 pi / N)`` (distinct positions on the circle), so
  ``|r_pos|_inf >= g_L / (2 sqrt 2)``.
* MLP (one hidden layer, 8 ReLUs, written into slot 5)::

      A = sum_(k, +-) ReLU(+-r_theta,k - g/4)                  0 iff |r_theta|_inf <= g/4
      B = sum_(k, +-) ReLU(+-r_pos,k - g_L/8 - 4 (1 - s))      0 when s = 0 (|r| <= 2)
      slot5 = B - A

  readout ``logit_1 - logit_0 = g/8 - s (g/8 + g_L/16) + slot5``:
  s = 0: ``g/8`` with a match, ``<= g/8 - (g/sqrt 2 - g/4) < 0`` without;
  s = 1: ``-g_L/16`` without a match, ``>= -g_L/16 + g_L (1/(2 sqrt 2) - 1/8) > 0`` with one.
* ``beta = ln(64 (N - 1) / min(g, g_L)) / (g / 2)`` keeps e below ``min(g, g_L) / 32``, far
  inside every margin above, and leaves ``g / 2`` of the score gap for rounding.
* On the fixed-point grid of the exact attention sums (``forward`` at a precision, and the
  protocol), a weight ``exp(score - c)`` is rounded to ``F_w`` fraction bits, and the shift c is
  the largest score any token could get (``beta``: a partner).  A row without a match then
  holds only tiny weights, whose few grid units would average the values too coarsely for a
  margin of ``g``.  So beta is also at least ``2 (F_w + 2) ln 2 / g``: every weight outside the
  top set rounds to 0.  A matched row then averages its top set exactly; a row without a match
  (s = 0) has no weight left, its attention output is 0 (the kernel's 0/0 = 0), and
  ``|r_theta|_inf = |u_i|_inf >= 1/sqrt 2`` says "no match"; a row with s = 1 always keeps i.

Precision: the margins are ``g ~ 2 pi^2 / M^2`` and ``g_L ~ 2 pi^2 / N^2``, so a format needs
about ``2 log2 max(M, N) + O(log log)`` fraction bits: O(log M + log N) as SHT state.

Examples
--------
>>> import numpy as np
>>> c = make_match2(3)                             # N = 4, M = 7
>>> c.width, c.model.d_k, c.model.d_v, c.model.d_mlp
(6, 2, 4, 8)
>>> c.predict(np.array([[1, 5, 3, 6], [0, 2, 0, 4], [0, 1, 2, 3]])).tolist()
[[1, 0, 0, 1], [1, 0, 1, 0], [0, 0, 0, 0]]
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError
from models.transformer import Transformer

from .base import Construction, ConstructionSpec, check_options, precision_of

__all__ = ["make_match2", "match2_gaps", "SPECS"]

D_MODEL, D_K, D_V, D_MLP = 6, 2, 4, 8
U, P, S, OUT = slice(0, 2), slice(2, 4), 4, 5  # residual slots


def match2_gaps(N: int, M: int, weight_bits: int | None = None) -> tuple[float, float, float]:
    """``(g, g_L, beta)``: the score gap, the position gap and the inverse temperature.

    ``beta = max(ln(64 (N-1) / min(g, g_L)), (F_w + 2) ln 2) / (g / 2)``; the second term
    (with ``F_w = weight_bits``, the fraction bits of the attention-weight grid) makes every
    weight outside the top-scoring set round to exactly 0 on that grid.
    """
    g = 1.0 - math.cos(2.0 * math.pi / M)
    g_pos = 1.0 - math.cos(2.0 * math.pi / N)
    leak = math.log(64.0 * max(N - 1, 1) / min(g, g_pos))
    grid = 0.0 if weight_bits is None else (weight_bits + 2) * math.log(2.0)
    return g, g_pos, max(leak, grid) / (g / 2.0)


def _circle(count: int) -> np.ndarray:
    """``(count, 2)`` rows ``(cos 2 pi v / count, sin 2 pi v / count)``, mirrored so that row
    ``count - v`` is exactly row v with the sine negated (partners must match bit for bit)."""
    v = np.arange(count)
    half = np.minimum(v, count - v)  # (count,) the angle folded into [0, pi]
    angle = 2.0 * math.pi * half / count
    sine = np.where(2 * half == count, 0.0, np.sin(angle))  # sin(pi) is 1.2e-16 in float64
    return np.stack([np.cos(angle), np.where(v <= count - v, 1.0, -1.0) * sine], axis=1)


def make_match2(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C8: Match2 at N = n + 1 with a 1-layer, 1-head Transformer of width 6.

    Parameters
    ----------
    n : int
        Task size (N = n + 1 tokens).
    precision : str or Precision, optional
        Number format of every activation (None: float64 reference).
    modulus : int, optional
        M (default ``2n + 1``, the task's default).
    """
    opts = check_options("match2", options, {"modulus"})
    N = n + 1
    M = int(opts.get("modulus") or 2 * n + 1)
    if M < 3:
        raise InvalidParameterError(f"match2: modulus must be >= 3, got {M}")
    g, g_pos, beta = match2_gaps(N, M)
    trig = _circle(M)  # (M, 2): (cos theta_v, sin theta_v)
    tok = np.zeros((M, D_MODEL))
    tok[:, U] = trig * [1.0, -1.0]  # u_v = (cos, -sin)
    tok[:, S] = ((2 * np.arange(M)) % M == 0)  # s_v: v is its own partner
    pos = np.zeros((N, D_MODEL))
    pos[:, P] = _circle(N)  # p_i on the position circle
    p = {"tok_emb": tok, "pos_emb": pos}
    conj = np.diag([1.0, -1.0])
    p["l0.W_Q"] = np.zeros((1, D_MODEL, D_K))
    p["l0.W_Q"][0, U] = conj  # q = conj u_i; beta is the attention scale
    p["l0.W_K"] = np.zeros((1, D_MODEL, D_K))
    p["l0.W_K"][0, U] = np.eye(2)  # k = u_j: score beta cos(theta_i + theta_j)
    p["l0.W_V"] = np.zeros((1, D_MODEL, D_V))
    p["l0.W_V"][0, U, 0:2] = conj  # v = (conj u_j, p_j)
    p["l0.W_V"][0, P, 2:4] = np.eye(2)
    p["l0.W_O"] = np.zeros((1, D_V, D_MODEL))
    p["l0.W_O"][0, 0:2, U] = -np.eye(2)  # residual: u_i - o_theta
    p["l0.W_O"][0, 2:4, P] = -np.eye(2)  # residual: p_i - o_pos
    W1, b1 = np.zeros((D_MODEL, D_MLP)), np.zeros(D_MLP)
    for unit, (slot, sign) in enumerate([(0, 1), (0, -1), (1, 1), (1, -1)]):
        W1[slot, unit], b1[unit] = sign, -g / 4  # A: ReLU(+-r_theta - g/4)
        W1[2 + slot, 4 + unit], b1[4 + unit] = sign, -g_pos / 8 - 4.0  # B, off unless s = 1
        W1[S, 4 + unit] = 4.0
    W2 = np.zeros((D_MLP, D_MODEL))
    W2[:4, OUT], W2[4:, OUT] = -1.0, 1.0  # slot 5 = B - A
    p.update({"l0.mlp.W1": W1, "l0.mlp.b1": b1, "l0.mlp.W2": W2})
    R = np.zeros((D_MODEL, 2))
    R[OUT, 1], R[S, 1] = 1.0, -(g / 8 + g_pos / 16)  # logit_1 = slot5 - s (g/8 + g_L/16) + g/8
    p.update({"readout.W": R, "readout.b": np.array([0.0, g / 8])})
    prec = precision_of(precision)

    def build(scale):
        return Transformer(M, D_MODEL, 1, 1, D_K, D_V, D_MLP, 2, positional=pos, causal=False,
                           layer_norm=False, attn_scale=scale, precision=prec, params=p)

    model, weight_bits = build(beta), None
    if prec is not None:  # the grid's fraction bits set the second term of beta
        weight_bits = int(round(math.log2(model.attention_grid(N).weight.scale)))
        beta = match2_gaps(N, M, weight_bits)[2]
        model = build(beta)
    report = {"modulus": M, "beta": beta, "gap": g, "position_gap": g_pos,
              "weight_fraction_bits": weight_bits,
              "fraction_bits_needed": math.ceil(math.log2(8.0 / min(g, g_pos)))}
    return Construction("match2-1tf", "match2", n, N, model, D_MODEL, 1, 1, prec, report,
                        "SHT-Match2-UB", "[D✓]", tuple(range(N)), "bool", 2)


def _inputs(n: int) -> np.ndarray:
    """Every input at size n with the default modulus: ``M^N`` rows (M = 2n + 1, N = n + 1)."""
    M, N = 2 * n + 1, n + 1
    r = np.arange(M ** N, dtype=np.int64)
    out = np.empty((M ** N, N), dtype=np.int64)
    for j in range(N - 1, -1, -1):
        out[:, j], r = r % M, r // M
    return out


SPECS = (
    ConstructionSpec(
        name="match2-1tf", task="match2", arch="transformer", layers=1, source="SHT-Match2-UB",
        tag="[D✓]", builder=make_match2, exhaustive_max_n=4, inputs=_inputs,
        width_formula="6 (d_k = 2, d_v = 4, MLP 8); constant in N and M",
        description="trigonometric keys score cos(2 pi (x_i + x_j) / M); a position circle in the "
                    "value tells a token's own partner from another",
        aliases=("c8", "match2")),
)
