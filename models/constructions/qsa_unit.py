"""The qSA attention units: SHT's self-attention unit over rows ``(z_i; y_i; i)`` (C7a / C7b).

:class:`QSAAttentionUnit` is the model of the constructions in :mod:`models.constructions.qsa`
(whose docstring derives the weights); :class:`QSARandomUnit` is a unit of the same form with
random projections, which ``reductions.simulate`` runs for ``--weights random``.  Both compute
each row's q, k, v from that row alone and attend in a fixed order (:meth:`QSAAttentionUnit.row_qkv`,
:meth:`~QSAAttentionUnit.attend`), which is what the protocol of :mod:`reductions.simulate.qsa`
splits between Alice and Bob.
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.backend import to_numpy
from commcomp.errors import InvalidParameterError
from commcomp.precision import parse_precision
from models.common import make_rounder
from models.transformer import MultiheadAttention

__all__ = ["QSAAttentionUnit", "QSARandomUnit", "ROW_CHUNK"]

ROW_CHUNK = 512  # query rows per block of the certificate solve


class QSAAttentionUnit:
    """One self-attention unit over qSA rows: the row-wise map ``e_i = [z_i | w(y_i) | kappa_i]``
    and one head of :class:`~models.transformer.MultiheadAttention` (block-selecting weights).

    Parameters
    ----------
    dim, q : int
        d' and the pointer count.
    keys : numpy.ndarray
        ``(N, m_k)`` the key ``kappa_j`` of every position.
    query_map : {"certificate", "sum", "moment"}
        How ``w(y)`` is formed from the keys (module docstring); ``"sum"`` is the certificate
        of orthonormal keys, ``K_y^T (K_y K_y^T)^{-1} 1 = K_y^T 1 = sum_{l in y} kappa_l``.
    beta : float
        Attention scale.
    precision : Precision or str, optional
        Rounds the embedding rows and the output (None: float64 reference).

    Notes
    -----
    :meth:`row_qkv`, :meth:`attend` and :meth:`output_rows` compute the same unit row by row in a
    fixed order (no BLAS), which is what ``reductions.simulate.qsa`` splits between Alice and Bob;
    at a rounded precision :meth:`output_rows` equals :meth:`forward_all` bit for bit on the qSA
    inputs tested (tests/simulate/test_simulate_qsa.py), in float64 reference mode to ~1e-14.

    Examples
    --------
    >>> import numpy as np
    >>> from models.constructions.qsa import make_qsa_random_keys
    >>> unit = make_qsa_random_keys(2, "fixed:8:4").model          # N = 5, one-hot keys
    >>> feats = np.array([[[-1, 0, 0, 1, 0], [1, 0, 0, 1, 1], [-1, 0, 0, 1, 2],
    ...                    [1, 0, 0, 1, 3], [-1, 0, 1, 3, 4]]], dtype=float)
    >>> q, k, v = unit.row_qkv(feats, [4])                          # row 4 points at {1, 3}
    >>> q[0, 0, 0].tolist(), k[0, 0, 0].tolist(), v[0, 0, 0].tolist()
    ([0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0], [-1.0, 0.0])
    >>> unit.output_rows(feats, [4]).tolist()     # the mean of z_1, z_3 is e_0, up to ε = 1/(2q)
    [[[0.9375, 0.0]]]
    >>> bool(np.array_equal(unit.output_rows(feats, [4]), unit.forward_all(feats)[:, 4:]))
    True
    """

    arch = "attention-unit"
    n_layers = n_heads = 1

    def __init__(self, dim, q, keys, query_map, beta, precision=None, t=None):
        self.dim, self.q, self.query_map, self.beta = int(dim), int(q), query_map, float(beta)
        self.keys = np.asarray(keys, dtype=np.float64)  # (N, m_k)
        self.t = None if t is None else np.asarray(t, dtype=np.float64)
        self.length, self.d_k = self.keys.shape
        self.d_v = self.d_model_out = self.dim
        self.d_model = self.dim + 2 * self.d_k  # the embedding row e_i
        self.precision = None if precision is None else parse_precision(precision)
        self.rnd = make_rounder(self.precision, np, np.float64)
        d, m = self.dim, self.d_k

        def select(start, width):  # (1, d_model, width): copies e[start:start + width]
            W = np.zeros((1, self.d_model, width))
            W[0, start + np.arange(width), np.arange(width)] = 1.0
            return W

        self.params = {"keys": self.keys,
                       "W_Q": select(d, m), "b_Q": np.zeros((1, m)),           # q_i = w(y_i)
                       "W_K": select(d + m, m), "b_K": np.zeros((1, m)),       # k_j = kappa_j
                       "W_V": select(0, d), "b_V": np.zeros((1, d)),           # v_j = z_j
                       "W_O": np.eye(d)[None], "b_O": np.zeros(d)}
        self.attention = MultiheadAttention({k: v for k, v in self.params.items() if k != "keys"},
                                            scale=self.beta)

    def with_precision(self, precision) -> "QSAAttentionUnit":
        return QSAAttentionUnit(self.dim, self.q, self.keys, self.query_map, self.beta, precision,
                                self.t)

    def queries(self, pointers) -> np.ndarray:
        """``w(y)`` for pointer sets ``(..., q)`` int -> ``(..., m_k)`` float64."""
        ptr = np.asarray(pointers, dtype=np.int64)
        flat = ptr.reshape(-1, self.q)  # (R, q)
        if self.query_map == "sum":  # sum_{l in y} kappa_l as (indicator of y) @ keys
            ind = np.zeros((len(flat), self.length))
            np.put_along_axis(ind, flat, 1.0, axis=1)
            return (ind @ self.keys).reshape(ptr.shape[:-1] + (self.d_k,))
        if self.query_map == "moment":
            # coefficients of -prod_l (t - t_l)^2, lowest degree first: start from -1 and multiply
            # by (t - t_l) twice per pointer (new_k = old_{k-1} - t_l old_k)
            coef = np.zeros((len(flat), 2 * self.q + 1))
            coef[:, 0] = -1.0
            for l in range(self.q):
                root = self.t[flat[:, l]][:, None]  # (R, 1)
                for _ in range(2):
                    new = -root * coef
                    new[:, 1:] += coef[:, :-1]
                    coef = new
            return coef.reshape(ptr.shape[:-1] + (2 * self.q + 1,))
        out = np.empty((len(flat), self.d_k))
        ones = np.ones((1, self.q, 1))
        for r0 in range(0, len(flat), ROW_CHUNK):
            Ky = self.keys[flat[r0:r0 + ROW_CHUNK]]  # (R, q, m_k)
            G = np.matmul(Ky, np.swapaxes(Ky, 1, 2))  # (R, q, q) Gram matrices
            rhs = np.broadcast_to(ones, (len(Ky), self.q, 1))
            try:
                c = np.linalg.solve(G, rhs)  # (R, q, 1)
            except np.linalg.LinAlgError:  # dependent keys: the least-squares certificate
                c = np.matmul(np.linalg.pinv(G), rhs)
            out[r0:r0 + ROW_CHUNK] = np.matmul(np.swapaxes(Ky, 1, 2), c)[..., 0]  # K_y^T c
        return out.reshape(ptr.shape[:-1] + (self.d_k,))

    def _select_rows(self, features, rows):
        """Checked ``features`` ``(B, N, d' + q + 1)`` -> the rows asked for ``(B, R, ·)`` and their indices."""
        feats = np.asarray(to_numpy(features), dtype=np.float64)  # NumPy only: to_numpy, counted
        if feats.ndim != 3 or feats.shape[2] != self.dim + self.q + 1 or feats.shape[1] != self.length:
            raise InvalidParameterError(f"qsa unit built for rows of width {self.dim + self.q + 1} "
                                        f"and N = {self.length}, got {feats.shape}")
        idx = np.arange(self.length) if rows is None else np.asarray(rows, dtype=np.int64)
        return feats[:, idx, :], idx

    def embed(self, features, rows=None) -> np.ndarray:
        """Row-wise map ``(B, N, d' + q + 1)`` -> rounded ``e`` ``(B, N, d' + 2 m_k)`` (only
        ``rows`` when given: each row's embedding depends on that row alone)."""
        feats, idx = self._select_rows(features, rows)  # (B, R, d' + q + 1), (R,)
        B = feats.shape[0]
        z = feats[..., :self.dim]  # (B, R, d')
        w = self.queries(feats[..., self.dim:self.dim + self.q].astype(np.int64))  # (B, R, m_k)
        kappa = np.broadcast_to(self.keys[idx][None], (B, len(idx), self.d_k))  # (B, R, m_k)
        return self.rnd(np.concatenate([z, w, kappa], axis=2))

    def forward_all(self, features, rows=None) -> np.ndarray:
        """Output rows ``(B, N, d')`` (or only ``rows``): the attention of every query row."""
        if rows is None:
            e = queries = self.embed(features)  # (B, N, d_model)
        else:  # keys and values of every row (their w block is never read), queries of ``rows``
            feats = np.asarray(to_numpy(features), dtype=np.float64)  # NumPy only: to_numpy, counted
            B, N = feats.shape[:2]
            e = self.rnd(np.concatenate([feats[..., :self.dim], np.zeros((B, N, self.d_k)),
                                         np.broadcast_to(self.keys[None], (B, N, self.d_k))], 2))
            queries = self.embed(features, rows)  # (B, R, d_model)
        return self.rnd(self.attention(queries, e, e, causal=False))  # (B, R, d')

    # -- row by row, in a fixed order: what reductions.simulate.qsa splits -------------------
    def row_qkv(self, features, rows=None):
        """Query, key and value of ``rows`` (default all): ``(B, R, H, d_k)``, ``(B, R, H, d_k)``,
        ``(B, R, H, d_v)``, rounded at the precision (zeros made +0, so the message code keeps them).

        Row-local: row i's numbers depend on row i alone and are computed elementwise in a fixed
        order, so they are the same bits whichever rows are asked for together."""
        e = self.embed(features, rows)  # (B, R, d_model)
        return tuple(self.rnd(_project_rows(e, self.params[f"W_{x}"], self.params[f"b_{x}"])) + 0.0
                     for x in "QKV")

    def attend(self, q, K, V) -> np.ndarray:
        """The unit's output ``(B, R, d_out)`` for queries ``q`` ``(B, R, H, d_k)`` over keys ``K`` and
        values ``V`` ``(B, N, H, ·)`` of all N rows, rounded at the precision.

        A fixed order: scores summed over the d_k coordinates in turn, the largest subtracted,
        then weights and weighted values summed over positions 0, ..., N-1 in turn; the same
        arrays in give the same bits out, whoever assembled them."""
        q, K, V = (np.asarray(a, dtype=np.float64) for a in (q, K, V))
        B, R, H, d_k = q.shape
        Qh = q.transpose(0, 2, 1, 3)  # (B, H, R, d_k)
        Kh = np.ascontiguousarray(K.transpose(0, 2, 3, 1))  # (B, H, d_k, N)
        Vh = np.ascontiguousarray(V.transpose(0, 2, 1, 3))  # (B, H, N, d_v)
        s = np.zeros((B, H, R, Kh.shape[3]))  # (B, H, R, N) scores
        for c in range(d_k):
            s += Qh[..., c:c + 1] * Kh[:, :, None, c, :]
        s *= self.beta
        s -= s.max(axis=-1, keepdims=True)
        w = np.exp(s)  # (B, H, R, N)
        num, den = np.zeros((B, H, R, Vh.shape[3])), np.zeros((B, H, R))
        for j in range(Kh.shape[3]):
            num += w[..., j:j + 1] * Vh[:, :, None, j, :]  # (B, H, R, d_v)
            den += w[..., j]
        heads = (num / den[..., None]).transpose(0, 2, 1, 3).reshape(B, R, -1)  # (B, R, H*d_v)
        W_O = self.params["W_O"]  # (H, d_v, d_out): one "head" of input width H*d_v
        out = _project_rows(heads, W_O.reshape(1, -1, W_O.shape[-1]), self.params["b_O"][None])  # (B, R, 1, d_out)
        return self.rnd(out[:, :, 0])

    def output_rows(self, features, rows) -> np.ndarray:
        """The unit's output at ``rows`` ``(B, R, d_out)``: :meth:`row_qkv` of every row, then
        :meth:`attend`. The same function as :meth:`forward_all`, summed in the fixed order of
        :meth:`attend` (so the two can differ in the last float64 bits before the final rounding)."""
        q, K, V = self.row_qkv(features)
        return self.attend(q[:, np.asarray(rows, dtype=np.int64)], K, V)

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else "float64-reference"
        return (f"QSAAttentionUnit(N={self.length}, q={self.q}, d'={self.dim}, m_k={self.d_k}, "
                f"query_map={self.query_map!r}, beta={self.beta:.4g}, precision={p})")


def _project_rows(e, W, b) -> np.ndarray:
    """``e`` ``(B, R, d_in)`` times per-head ``W`` ``(H, d_in, d_h)`` plus ``b`` ``(H, d_h)`` ->
    ``(B, R, H, d_h)``: elementwise, one input coordinate at a time (none of BLAS's shape-dependent
    order), skipping zero weights (a selection matrix copies its inputs exactly)."""
    H, d_in, d_h = W.shape
    flat = np.asarray(W, dtype=np.float64).transpose(1, 0, 2).reshape(d_in, H * d_h)  # (d_in, H*d_h)
    out = np.zeros(e.shape[:-1] + (H * d_h,)) + np.asarray(b, dtype=np.float64).reshape(-1)
    for i in np.nonzero(np.any(flat != 0, axis=1))[0]:
        cols = np.nonzero(flat[i])[0]
        if cols.size == flat.shape[1]:  # a dense row: no gather
            out += e[..., i:i + 1] * flat[i]
        else:
            out[..., cols] += e[..., i:i + 1] * flat[i, cols]
    return out.reshape(e.shape[:-1] + (H, d_h))


class QSARandomUnit(QSAAttentionUnit):
    """A self-attention unit of SHT's form with random weights (what ``--weights random`` runs for qsa).

    Row map ``e_i = [z_i | 1_{y_i} | e_i]`` (data, the indicator of the pointer set, the position
    one-hot: width d' + 2N), then per head random ``W_Q``, ``W_K`` (width ``m``), ``W_V`` (width
    d') and ``W_O``; scale ``1/sqrt(m)``; q, k, v and the output rounded at the precision. It
    answers nothing in particular; a protocol must still reproduce it bit for bit.

    Examples
    --------
    >>> unit = QSARandomUnit(dim=2, q=1, width=3, precision="fixed:8:4")
    >>> feats = np.array([[[1, 0, 2, 0], [0, -1, 0, 1], [0, 1, 1, 2]]], dtype=float)
    >>> unit.output_rows(feats, [2]).shape, unit.d_k, unit.d_model
    ((1, 1, 2), 3, 8)
    >>> bool(np.array_equal(unit.forward_all(feats)[:, 2:], unit.output_rows(feats, [2])))
    True
    """

    def __init__(self, dim, q, width, heads=1, precision=None, seed=0, length=None):
        self.dim, self.q, self.n_heads = int(dim), int(q), int(heads)
        self.length = int(length or 2 * self.q + 1)
        self.d_k, self.d_v = int(width), self.dim
        self.d_model, self.d_model_out = self.dim + 2 * self.length, self.dim
        self.query_map, self.beta, self.seed = "random", 1.0 / math.sqrt(self.d_k), int(seed)
        self.precision = None if precision is None else parse_precision(precision)
        self.rnd = make_rounder(self.precision, np, np.float64)
        rng = np.random.default_rng(seed)
        H, d_in = self.n_heads, self.d_model

        def glorot(width):  # (H, d_in, width), torch's Glorot-uniform bound
            a = math.sqrt(6.0 / (d_in + H * width))
            return rng.uniform(-a, a, size=(H, d_in, width))

        a_o = 1.0 / math.sqrt(H * self.dim)
        self.params = {"W_Q": glorot(self.d_k), "b_Q": np.zeros((H, self.d_k)),
                       "W_K": glorot(self.d_k), "b_K": np.zeros((H, self.d_k)),
                       "W_V": glorot(self.dim), "b_V": np.zeros((H, self.dim)),
                       "W_O": rng.uniform(-a_o, a_o, size=(H, self.dim, self.dim)), "b_O": np.zeros(self.dim)}

    def with_precision(self, precision) -> "QSARandomUnit":
        return QSARandomUnit(self.dim, self.q, self.d_k, self.n_heads, precision, self.seed, self.length)

    def embed(self, features, rows=None) -> np.ndarray:
        """``(B, N, d' + q + 1)`` -> ``e`` ``(B, R, d' + 2N)``, rounded."""
        feats, idx = self._select_rows(features, rows)  # (B, R, d' + q + 1), (R,)
        N = self.length
        pointers = feats[..., self.dim:self.dim + self.q].astype(np.int64)  # (B, R, q)
        ind = np.zeros(feats.shape[:2] + (N,))
        np.put_along_axis(ind, pointers, 1.0, axis=2)  # (B, R, N) indicator of y_i
        onehot = np.broadcast_to(np.eye(N)[idx][None], ind.shape)  # (B, R, N)
        return self.rnd(np.concatenate([feats[..., :self.dim], ind, onehot], axis=2))

    def forward_all(self, features, rows=None) -> np.ndarray:
        """Output rows ``(B, N, d')`` (or only ``rows``): :meth:`output_rows`."""
        return self.output_rows(features, np.arange(self.length) if rows is None else rows)

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else "float64-reference"
        return (f"QSARandomUnit(N={self.length}, q={self.q}, d'={self.dim}, m={self.d_k}, "
                f"heads={self.n_heads}, seed={self.seed}, precision={p})")
