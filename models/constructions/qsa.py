"""C7a / C7b: q-sparse averaging with one self-attention unit (SHT Thm 2 and Thm 3; §7 C7).

Task format (``reductions.tasks.qsa``, SHT Def. 4): N rows ``x_i = (z_i; y_i; i)`` carried in a
batch's ``features`` ``(B, N, d' + q + 1)``: data ``z_i`` in the unit ball of R^d', q distinct
ascending pointers ``y_i``, and i.  Output row i: ``(1/q) sum_{j in y_i} z_j`` (every row is an
output; l2 error per row at most ``tolerance``).  The task fixes ``N = 2q + 1`` (the size of
its lower-bound reduction); the model works for any N >= q + 1 (option ``length``).

The model (:class:`QSAAttentionUnit`) is SHT's self-attention unit with a row-wise input map:
``e_i = [z_i | w(y_i) | kappa_i]`` (widths d', m_k, m_k), then one head of
:class:`~models.transformer.MultiheadAttention` whose weights select the blocks,
``Q = e W_Q = w(y_i)``, ``K = e W_K = kappa_j``, ``V = e W_V = z_j``, ``W_O = I``, and scale β::

    out_i = sum_j softmax_j(β <w(y_i), kappa_j>) z_j

If ``<w(y), kappa_j> = 1`` for ``j in y`` and ``<= 1 - mu`` otherwise, the weights on y are equal
and the rest carry ``L <= (N - q) e^{-β mu} / q``; then ``sum_j |a_ij - 1[j in y]/q| = 2L``
(the in-set weights sum to 1 - L, the rest to L), which bounds the l2 error for any data in
the unit ball, so ``β = ln(2 (N - q) / (q ε)) / mu`` gives error ``<= ε``.  At a precision the
embedding rows (hence q, k, v) and the output are rounded and the softmax runs in float64, as
in :meth:`~models.transformer.Transformer.forward_all`.  The two constructions differ in the keys ``kappa`` and the query map w:

* **C7a** (``qsa-random-keys``, width ``d' + m_k``, ``m_k = min(N, ceil(C q ln N))``, C = 8):
  ``kappa_j`` are random ±1/sqrt(m_k) vectors and ``w(y) = K_y^T (K_y K_y^T)^{-1} 1_q`` is the
  least-squares dual certificate, so ``<w, kappa_j> = 1`` exactly on y; off y, ``<w, kappa_j>``
  is about ``N(0, q / m_k)``, below ``1 - mu`` with high probability for a fixed y (``mu``: the
  exact worst case when the pointer sets can be enumerated, else a design margin of 1/4).
  When ``m_k >= N`` the keys are one-hot (orthonormal) and ``mu = 1``.  A guarantee for every
  y at once needs ``m_k ~ q^2 ln N`` with this certificate (an adversary picks the q keys most
  correlated with one kappa_j); SHT's ``O(q log N)`` for all inputs uses neighbourly polytopes.
  Checked: all y at small N, random y at large N.
* **C7b** (``qsa-moment-curve``, key width ``2q + 1``): ``kappa_j = (1, t_j, ..., t_j^{2q})`` on
  the moment curve with ``t_j = -1 + 2j/(N-1)`` (the catalogue's ``j/N`` on [-1, 1], which
  multiplies the margin by 4^q), and ``w(y)`` the coefficients of ``-prod_{l in y} (t - t_l)^2``,
  so ``<w, kappa_j> = -prod (t_j - t_l)^2``: 0 on y, negative elsewhere (every q-subset is a face
  of the cyclic polytope).  Shifting by +1 (a constant added to every score of a row changes no
  softmax) gives the form above with ``mu`` = the smallest ``prod_{l in y} (t_j - t_l)^2`` over
  all y and ``j not in y``, attained by y = the q nearest neighbours of some j; about
  ``(2/N)^{2q}`` times a factorial, hence ~2q log2 N bits ("infinite precision").

Examples
--------
>>> import numpy as np
>>> c = make_qsa_moment_curve(1, dim=2, epsilon=1e-9)   # q = 1, N = 3, keys (1, t, t^2)
>>> feats = np.array([[[1, 0, 2, 0], [0, -1, 0, 1], [0, 1, 1, 2]]], dtype=float)
>>> (np.round(c.predict_features(feats), 6) + 0.0).tolist()    # rows: z_2, z_0, z_1
[[[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]]]
>>> c.tolerance, make_qsa_moment_curve(4).tolerance     # default: min(1/(2q), 0.05)
(1e-09, 0.05)
>>> make_qsa_random_keys(3, key_width=40).width        # d' + m_k
42
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .qsa_unit import QSAAttentionUnit, QSARandomUnit

__all__ = ["QSAAttentionUnit", "QSARandomUnit", "QSAConstruction", "make_qsa_random_keys", "make_qsa_moment_curve",
           "moment_margin", "certificate_margin", "SPECS"]

@dataclass(frozen=True, eq=False)
class QSAConstruction(Construction):
    """A :class:`Construction` whose model reads the batch's ``features`` (qSA rows), not tokens."""

    def logits(self, batch_or_tokens) -> np.ndarray:
        feats = getattr(batch_or_tokens, "features", None)
        if feats is None:
            raise InvalidParameterError(f"{self.name} reads the rows (z_i; y_i; i): pass a TaskBatch "
                                        "with features, or call predict_features")
        return self.model.forward_all(feats)  # (B, N, d')

    def predict_features(self, features, rows=None) -> np.ndarray:
        """Answers ``(B, N, d')`` (or only ``rows``) straight from ``features``."""
        return self.model.forward_all(features, rows)


def _setup(name: str, q: int, options, extra) -> tuple[dict, int, int, float]:
    opts = check_options(name, options, {"dim", "length", "epsilon"} | set(extra))
    N = int(opts.get("length") or 2 * q + 1)
    dim = int(opts.get("dim", 2))
    eps = float(opts.get("epsilon") or min(1.0 / (2 * q), 0.05))
    if N < q + 1 or dim < 1 or not 0 < eps < 1:
        raise InvalidParameterError(f"{name}: need length >= q + 1, dim >= 1, 0 < epsilon < 1")
    return opts, N, dim, eps


def _beta(N: int, q: int, eps: float, margin: float) -> float:
    """``ln(2 (N - q) / (q ε)) / mu``: total off-set weight <= ε/2, so l2 error <= ε."""
    return math.log(max(2.0 * (N - q) / (q * eps), 1.0 + 1e-12)) / margin


def certificate_margin(keys: np.ndarray, q: int, limit: int = 1 << 16) -> float | None:
    """The exact worst case ``1 - max_{y, j not in y} <w(y), kappa_j>`` over all q-sets y of the
    rows of ``keys``, or None when there are more than ``limit`` sets."""
    N = len(keys)
    if math.comb(N, q) > limit:
        return None
    unit = QSAAttentionUnit(1, q, keys, "certificate", 1.0)
    sets = np.array(list(itertools.combinations(range(N), q)), dtype=np.int64)  # (S, q)
    scores = unit.queries(sets) @ keys.T  # (S, N)
    scores[np.arange(len(sets))[:, None], sets] = -np.inf  # only j not in y
    return float(1.0 - np.max(scores)) if N > q else 1.0


def make_qsa_random_keys(n: int, precision=None, *, seed: int = 0, **options) -> QSAConstruction:
    """C7a: keys of width ``key_width`` (default ``min(N, ceil(C q ln N))``, C = ``key_constant``
    = 8) and the least-squares dual certificate as query.

    Keys: random ±1/sqrt(m_k) rows when ``m_k < N``; when ``m_k >= N`` (the default always is in
    the task's own format N = 2q + 1, where ``8 q ln N > N``) one-hot keys ``e_j``, orthonormal,
    so the certificate is the indicator of y and every off-set score is 0 (margin 1).  β uses the exact worst-case margin over all pointer sets when there are at most
    2^16 of them, else the design ``margin`` (default 1/4: a row fails only if some off-set score
    exceeds about 1 - margin/2, which at ``m_k = 8 q ln N`` has probability ~ N^-3 per position).
    """
    opts, N, dim, eps = _setup("qsa-random-keys", n, options, {"key_width", "key_constant", "margin"})
    q = n
    m_k = int(opts.get("key_width") or min(N, math.ceil(float(opts.get("key_constant", 8.0)) * q
                                                         * math.log(N))))
    design = float(opts.get("margin", 0.25))
    if m_k < q or not 0 < design <= 1:
        raise InvalidParameterError(f"qsa-random-keys: need key_width >= q = {q} and 0 < margin <= 1")
    rng = np.random.default_rng(seed)
    keys = rng.choice([-1.0, 1.0], size=(N, min(m_k, N))) / math.sqrt(m_k)  # (N, m_k) Rademacher
    if m_k >= N:
        keys = np.eye(N, m_k)  # (N, m_k) orthonormal rows: K_y K_y^T = I
    exact = 1.0 if m_k >= N else certificate_margin(keys, q)  # orthonormal: off-set scores 0
    separable = exact is None or exact > 1e-9  # a margin at rounding level: duplicate keys
    margin = exact if exact is not None and separable else design
    beta = _beta(N, q, eps, margin)
    prec = precision_of(precision)
    unit = QSAAttentionUnit(dim, q, keys, "sum" if m_k >= N else "certificate", beta, prec)
    report = {"length": N, "key_width": m_k, "epsilon": eps, "margin": margin,
              "margin_exact": exact is not None, "separable": separable,
              "orthonormal_keys": m_k >= N, "beta": beta}
    return QSAConstruction("qsa-random-keys", "qsa", n, N, unit, dim + m_k, 1, 1, prec, report,
                           "SHT-qSA-UB-p", "[D✓]", tuple(range(N)), "vector", dim, eps)


def qsa_random_keys_width(n: int) -> int:
    """The width :func:`make_qsa_random_keys` gives at q = n with default options, without building
    it (the separations' crossover search asks at many q; building draws and sorts N x m_k keys).

    >>> all(qsa_random_keys_width(q) == make_qsa_random_keys(q).width for q in (1, 2, 5, 40))
    True
    """
    _, N, dim, _ = _setup("qsa-random-keys", n, {}, ())
    return dim + min(N, math.ceil(8.0 * n * math.log(N)))


def moment_margin(N: int, q: int) -> float:
    """The smallest ``prod_{l in y} (t_j - t_l)^2`` over q-sets y and ``j not in y``, with
    ``t_j = -1 + 2j/(N-1)``: for each j the q nearest other points (smallest distances first)."""
    t = np.linspace(-1.0, 1.0, N)
    dist = np.sort(np.abs(t[:, None] - t[None, :]), axis=1)[:, 1:q + 1]  # (N, q) nearest others
    return float(np.min(np.prod(dist, axis=1)) ** 2)


def make_qsa_moment_curve(n: int, precision=None, *, seed: int = 0, **options) -> QSAConstruction:
    """C7b: keys on the moment curve (width 2q + 1); β from the exact worst-case margin."""
    opts, N, dim, eps = _setup("qsa-moment-curve", n, options, ())
    q = n
    t = np.linspace(-1.0, 1.0, N)
    keys = t[:, None] ** np.arange(2 * q + 1)[None, :]  # (N, 2q+1) moment curve
    margin = moment_margin(N, q)
    beta = _beta(N, q, eps, margin)
    prec = precision_of(precision)
    unit = QSAAttentionUnit(dim, q, keys, "moment", beta, prec, t=t)
    report = {"length": N, "key_width": 2 * q + 1, "epsilon": eps, "margin": margin, "beta": beta,
              "margin_bits": -math.log2(margin)}
    return QSAConstruction("qsa-moment-curve", "qsa", n, N, unit, dim + 2 * q + 1, 1, 1, prec,
                           report, "SHT-qSA-UB-∞", "[D✓]", tuple(range(N)), "vector", dim, eps)


SPECS = (
    ConstructionSpec(
        name="qsa-random-keys", task="qsa", arch="transformer", layers=1, source="SHT-qSA-UB-p",
        tag="[D✓]", builder=make_qsa_random_keys, width_option="key_width", width_of=qsa_random_keys_width,
        width_formula="d' + m_k, m_k = ceil(8 q ln N) (Q/K width m_k, value width d')",
        description="random keys, least-squares dual certificate as query (C7a)",
        aliases=("c7a", "qsa-1tf")),
    ConstructionSpec(
        name="qsa-moment-curve", task="qsa", arch="transformer", layers=1, source="SHT-qSA-UB-∞",
        tag="[D✓]", builder=make_qsa_moment_curve, default=False,
        width_formula="d' + 2q + 1 (keys on the moment curve)",
        description="cyclic-polytope keys (1, t, ..., t^2q), query -prod (t - t_l)^2 (C7b)",
        aliases=("c7b",)),
)
