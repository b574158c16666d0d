"""The qSA attention units: SHT's self-attention unit over rows ``(z_i; y_i; i)`` (C7a / C7b).

:class:`QSAAttentionUnit` is the model of the constructions in :mod:`models.constructions.qsa`
(whose docstring derives the weights); :class:`QSARandomUnit` is a unit of the same form with
random projections, which ``reductions.simulate`` runs for ``--weights random``.  Both compute
each row's q, k, v from that row alone and attend in a fixed order (:meth:`QSAAttentionUnit.row_qkv`,
:meth:`~QSAAttentionUnit.attend`), which is what the protocol of :mod:`reductions.simulate.qsa`
splits between Alice and Bob.

Both run on any Array API namespace (``xp``; :meth:`~QSAAttentionUnit.to_namespace` moves a
unit): the parameters live there, features of that namespace are read in place, and every step is
an Array API operation in float64 (gathers with ``xp.take``, masked updates with ``xp.where``).
On NumPy the results are those of NumPy's own element-wise kernels in the same order.
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of, to_device, to_numpy
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
    xp : namespace, optional
        The Array API namespace the unit computes on (default NumPy).

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
    >>> import array_api_strict as xps                              # the same unit on another namespace
    >>> on_strict = unit.to_namespace(xps).output_rows(xps.asarray(feats), [4])
    >>> bool(np.array_equal(to_numpy(on_strict), unit.output_rows(feats, [4])))
    True
    """

    arch = "attention-unit"
    n_layers = n_heads = 1

    def __init__(self, dim, q, keys, query_map, beta, precision=None, t=None, xp=None):
        self.dim, self.q, self.query_map, self.beta = int(dim), int(q), query_map, float(beta)
        self.keys = np.asarray(to_numpy(keys), dtype=np.float64)  # (N, m_k) host
        self.t = None if t is None else np.asarray(to_numpy(t), dtype=np.float64)
        self.length, self.d_k = self.keys.shape
        self.d_v = self.d_model_out = self.dim
        self.d_model = self.dim + 2 * self.d_k  # the embedding row e_i
        self.precision = None if precision is None else parse_precision(precision)
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
        self._place(xp)
        self.attention = MultiheadAttention({k: v for k, v in self.params.items() if k != "keys"},
                                            scale=self.beta, xp=self.xp)

    def _place(self, xp) -> None:
        """Put the rounder, the keys and the projections on namespace ``xp`` (None: NumPy)."""
        self.xp = xp = xp if xp is not None else namespace_of()
        self.rnd = make_rounder(self.precision, xp, xp.float64)
        self._keys = _const(xp, self.keys)  # (N, m_k)
        self._t = None if self.t is None else _const(xp, self.t)  # (N,)
        self._positions = xp.arange(self.length, dtype=xp.int64)  # (N,)
        self._proj = {x: _RowProjection(self.params[f"W_{x}"], self.params[f"b_{x}"], xp) for x in "QKV"}
        W_O = self.params["W_O"]  # (H, d_v, d_out): one "head" of input width H*d_v
        self._proj["O"] = _RowProjection(W_O.reshape(1, -1, W_O.shape[-1]), self.params["b_O"][None], xp)

    def with_precision(self, precision) -> "QSAAttentionUnit":
        return QSAAttentionUnit(self.dim, self.q, self.keys, self.query_map, self.beta, precision,
                                self.t, self.xp)

    def to_namespace(self, xp) -> "QSAAttentionUnit":
        """A copy computing on Array API namespace ``xp`` (the same precision object)."""
        return QSAAttentionUnit(self.dim, self.q, self.keys, self.query_map, self.beta, self.precision,
                                self.t, xp)

    def _index(self, rows):
        """Host row indices ``(R,)`` as an int64 array of the unit's namespace (constants, not data)."""
        return self.xp.asarray([int(i) for i in np.asarray(rows, dtype=np.int64).reshape(-1)],
                               dtype=self.xp.int64)

    def queries(self, pointers):
        """``w(y)`` for pointer sets ``(..., q)`` int -> ``(..., m_k)`` float64 (the unit's namespace;
        host pointers give NumPy arrays on a NumPy unit)."""
        xp = self.xp
        ptr = pointers if is_array(pointers) and namespace_of(pointers) is xp else \
            to_device(xp, np.asarray(to_numpy(pointers), dtype=np.int64))
        ptr = xp.astype(ptr, xp.int64)
        lead = tuple(ptr.shape[:-1])
        flat = xp.reshape(ptr, (-1, self.q))  # (R, q)
        if self.query_map == "sum":  # sum_{l in y} kappa_l as (indicator of y) @ keys
            return xp.reshape(xp.matmul(self._indicator(flat), self._keys), lead + (self.d_k,))
        if self.query_map == "moment":
            # coefficients of -prod_l (t - t_l)^2, lowest degree first: start from -1 and multiply
            # by (t - t_l) twice per pointer (new_k = old_{k-1} - t_l old_k)
            R = flat.shape[0]
            coef = xp.concat([xp.full((R, 1), -1.0, dtype=xp.float64),
                              xp.zeros((R, 2 * self.q), dtype=xp.float64)], axis=1)  # (R, 2q + 1)
            for l in range(self.q):
                root = xp.expand_dims(xp.take(self._t, flat[:, l], axis=0), axis=1)  # (R, 1)
                for _ in range(2):
                    new = -root * coef
                    coef = xp.concat([new[:, :1], new[:, 1:] + coef[:, :-1]], axis=1)
            return xp.reshape(coef, lead + (2 * self.q + 1,))
        R = flat.shape[0]
        parts = [self._certificate(flat[r0:min(r0 + ROW_CHUNK, R), :]) for r0 in range(0, R, ROW_CHUNK)]
        out = xp.concat(parts, axis=0) if parts else xp.zeros((0, self.d_k), dtype=xp.float64)
        return xp.reshape(out, lead + (self.d_k,))

    def _indicator(self, pointers):
        """``(..., q)`` int -> ``(..., N)`` float64 indicator of each pointer set."""
        xp = self.xp
        return xp.astype(xp.any(xp.expand_dims(pointers, axis=-1) == self._positions, axis=-2), xp.float64)

    def _certificate(self, flat):
        """``K_y^T (K_y K_y^T)^{-1} 1`` for pointer sets ``(R, q)`` -> ``(R, m_k)``."""
        xp, R = self.xp, flat.shape[0]
        Ky = xp.reshape(xp.take(self._keys, xp.reshape(flat, (-1,)), axis=0), (R, self.q, self.d_k))
        Kt = xp.matrix_transpose(Ky)  # (R, m_k, q)
        G = xp.matmul(Ky, Kt)  # (R, q, q) Gram matrices
        rhs = xp.ones((R, self.q, 1), dtype=xp.float64)
        if is_numpy(G):
            try:
                c = np.linalg.solve(G, rhs)  # (R, q, 1)
            except np.linalg.LinAlgError:  # dependent keys: the least-squares certificate
                c = np.matmul(np.linalg.pinv(G), rhs)
        else:
            try:
                c = xp.linalg.solve(G, rhs)
                if not bool(xp.all(xp.isfinite(c))):  # CuPy answers a singular system with inf/NaN
                    raise ValueError("singular Gram matrix")
            except (RuntimeError, ValueError):  # torch's / NumPy's LinAlgError: the least-squares one
                c = xp.matmul(xp.linalg.pinv(G), rhs)
        return xp.matmul(Kt, c)[..., 0]  # (R, m_k) K_y^T c

    def _features(self, features):
        """``features`` ``(B, N, d' + q + 1)`` as float64 of the unit's namespace, checked (host
        features are uploaded, counted; another device's come over through the host, counted)."""
        xp = self.xp
        if is_array(features) and namespace_of(features) is xp:
            feats = features
        else:
            feats = to_device(xp, np.asarray(to_numpy(features) if is_array(features) else features,
                                              dtype=np.float64))
        if feats.ndim != 3 or feats.shape[2] != self.dim + self.q + 1 or feats.shape[1] != self.length:
            raise InvalidParameterError(f"qsa unit built for rows of width {self.dim + self.q + 1} "
                                        f"and N = {self.length}, got {tuple(feats.shape)}")
        return feats if feats.dtype == xp.float64 else xp.astype(feats, xp.float64)

    def _select_rows(self, features, rows):
        """Checked ``features`` -> the rows asked for ``(B, R, ·)`` and their host indices ``(R,)``."""
        feats = self._features(features)
        if rows is None:
            return feats, np.arange(self.length)
        idx = np.asarray(rows, dtype=np.int64).reshape(-1)
        return self.xp.take(feats, self._index(idx), axis=1), idx

    def embed(self, features, rows=None):
        """Row-wise map ``(B, N, d' + q + 1)`` -> rounded ``e`` ``(B, N, d' + 2 m_k)`` (only
        ``rows`` when given: each row's embedding depends on that row alone)."""
        xp = self.xp
        feats, idx = self._select_rows(features, rows)  # (B, R, d' + q + 1), (R,)
        B = feats.shape[0]
        z = feats[..., :self.dim]  # (B, R, d')
        w = self.queries(xp.astype(feats[..., self.dim:self.dim + self.q], xp.int64))  # (B, R, m_k)
        kappa = xp.broadcast_to(xp.take(self._keys, self._index(idx), axis=0)[None, ...],
                                (B, idx.size, self.d_k))  # (B, R, m_k)
        return self.rnd(xp.concat([z, w, kappa], axis=2))

    def forward_all(self, features, rows=None):
        """Output rows ``(B, N, d')`` (or only ``rows``): the attention of every query row."""
        xp = self.xp
        if rows is None:
            e = queries = self.embed(features)  # (B, N, d_model)
        else:  # keys and values of every row (their w block is never read), queries of ``rows``
            feats = self._features(features)
            B, N = feats.shape[:2]
            e = self.rnd(xp.concat([feats[..., :self.dim], xp.zeros((B, N, self.d_k), dtype=xp.float64),
                                    xp.broadcast_to(self._keys[None, ...], (B, N, self.d_k))], axis=2))
            queries = self.embed(feats, rows)  # (B, R, d_model)
        return self.rnd(self.attention(queries, e, e, causal=False))  # (B, R, d')

    # -- row by row, in a fixed order: what reductions.simulate.qsa splits -------------------
    def row_qkv(self, features, rows=None):
        """Query, key and value of ``rows`` (default all): ``(B, R, H, d_k)``, ``(B, R, H, d_k)``,
        ``(B, R, H, d_v)``, rounded at the precision (zeros made +0, so the message code keeps them).

        Row-local: row i's numbers depend on row i alone and are computed elementwise in a fixed
        order, so they are the same bits whichever rows are asked for together."""
        e = self.embed(features, rows)  # (B, R, d_model)
        return tuple(self.rnd(self._proj[x](e)) + 0.0 for x in "QKV")

    def attend(self, q, K, V):
        """The unit's output ``(B, R, d_out)`` for queries ``q`` ``(B, R, H, d_k)`` over keys ``K`` and
        values ``V`` ``(B, N, H, ·)`` of all N rows, rounded at the precision.

        A fixed order: scores summed over the d_k coordinates in turn, the largest subtracted,
        then weights and weighted values summed over positions 0, ..., N-1 in turn; the same
        arrays in give the same bits out, whoever assembled them."""
        xp = self.xp
        q, K, V = (xp.astype(a if is_array(a) and namespace_of(a) is xp else
                             to_device(xp, np.asarray(to_numpy(a))), xp.float64) for a in (q, K, V))
        B, R, H, d_k = q.shape
        N = K.shape[1]
        Qh = xp.permute_dims(q, (0, 2, 1, 3))  # (B, H, R, d_k)
        Kh = xp.permute_dims(K, (0, 2, 3, 1))  # (B, H, d_k, N)
        Vh = xp.permute_dims(V, (0, 2, 1, 3))  # (B, H, N, d_v)
        s = xp.zeros((B, H, R, N), dtype=xp.float64)  # scores
        for c in range(d_k):
            s = _add(s, Qh[..., c:c + 1] * xp.expand_dims(Kh[:, :, c, :], axis=2))
        s = s * self.beta
        w = xp.exp(s - xp.max(s, axis=-1, keepdims=True))  # (B, H, R, N)
        num = xp.zeros((B, H, R, Vh.shape[3]), dtype=xp.float64)
        den = xp.zeros((B, H, R), dtype=xp.float64)
        for j in range(N):
            num = _add(num, w[..., j:j + 1] * xp.expand_dims(Vh[:, :, j, :], axis=2))  # (B, H, R, d_v)
            den = _add(den, w[..., j])
        heads = xp.reshape(xp.permute_dims(num / xp.expand_dims(den, axis=-1), (0, 2, 1, 3)),
                           (B, R, -1))  # (B, R, H*d_v)
        return self.rnd(self._proj["O"](heads)[:, :, 0, :])  # (B, R, d_out)

    def output_rows(self, features, rows):
        """The unit's output at ``rows`` ``(B, R, d_out)``: :meth:`row_qkv` of every row, then
        :meth:`attend`. The same function as :meth:`forward_all`, summed in the fixed order of
        :meth:`attend` (so the two can differ in the last float64 bits before the final rounding)."""
        q, K, V = self.row_qkv(features)
        return self.attend(self.xp.take(q, self._index(rows), axis=1), K, V)

    def _where(self) -> str:
        return "" if is_numpy(self._keys) else f", xp={getattr(self.xp, '__name__', self.xp)}"

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else "float64-reference"
        return (f"QSAAttentionUnit(N={self.length}, q={self.q}, d'={self.dim}, m_k={self.d_k}, "
                f"query_map={self.query_map!r}, beta={self.beta:.4g}, precision={p}{self._where()})")


def _add(total, term):
    """``total + term``: in place on NumPy (the same numbers, no new array per term), a new array
    elsewhere (the Array API has no in-place guarantee)."""
    if is_numpy(total):
        total += term
        return total
    return total + term


def _const(xp, host):
    """A host constant (weights, keys) as a float64 array of ``xp`` (a copy: some libraries refuse
    read-only NumPy buffers)."""
    return xp.asarray(np.array(host, dtype=np.float64), dtype=xp.float64)


class _RowProjection:
    """``e`` ``(B, R, d_in)`` times per-head ``W`` ``(H, d_in, d_h)`` plus ``b`` ``(H, d_h)`` ->
    ``(B, R, H, d_h)``, element-wise in a fixed order (none of BLAS's shape-dependent order).

    Output column c is ``b_c + e_{i_1} W_{i_1 c} + e_{i_2} W_{i_2 c} + ...`` summed over the rows
    ``i_1 < i_2 < ...`` where ``W[:, c]`` is nonzero, left to right (zero weights skipped, so a
    selection matrix copies its inputs exactly). Step t adds every column's t-th term at once: a
    gather of e's columns, or a slice when every column reads one row (dense weights), masked
    with ``xp.where`` where a column has fewer terms. The plan is built once from the host weights.
    """

    def __init__(self, W, b, xp):
        H, d_in, d_h = W.shape
        flat = np.asarray(W, dtype=np.float64).transpose(1, 0, 2).reshape(d_in, H * d_h)  # (d_in, H*d_h)
        self.xp, self.heads = xp, (H, d_h)
        self.bias = _const(xp, np.asarray(b, dtype=np.float64).reshape(-1))  # (H*d_h,)
        nonzero = flat != 0
        count = nonzero.sum(axis=0)  # (H*d_h,) terms per column
        order = np.argsort(~nonzero, axis=0, kind="stable")  # per column: its nonzero rows first, ascending
        self.steps = []
        for t in range(int(count.max()) if count.size else 0):
            rows = order[t]  # (H*d_h,) the row of each column's t-th term
            weight = np.where(count > t, flat[rows, np.arange(flat.shape[1])], 0.0)
            source = int(rows[0]) if np.all(rows == rows[0]) else \
                xp.asarray([int(r) for r in rows], dtype=xp.int64)
            mask = None if np.all(count > t) else xp.asarray([bool(v) for v in count > t])
            self.steps.append((source, _const(xp, weight), mask))

    def __call__(self, e):
        xp = self.xp
        out = xp.zeros(tuple(e.shape[:-1]) + (self.bias.shape[0],), dtype=xp.float64) + self.bias
        for source, weight, mask in self.steps:
            term = (e[..., source:source + 1] if isinstance(source, int) else
                    xp.take(e, source, axis=e.ndim - 1)) * weight
            out = _add(out, term) if mask is None else xp.where(mask, out + term, out)
        return xp.reshape(out, tuple(e.shape[:-1]) + self.heads)


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

    def __init__(self, dim, q, width, heads=1, precision=None, seed=0, length=None, xp=None):
        self.dim, self.q, self.n_heads = int(dim), int(q), int(heads)
        self.length = int(length or 2 * self.q + 1)
        self.d_k, self.d_v = int(width), self.dim
        self.d_model, self.d_model_out = self.dim + 2 * self.length, self.dim
        self.query_map, self.beta, self.seed = "random", 1.0 / math.sqrt(self.d_k), int(seed)
        self.precision = None if precision is None else parse_precision(precision)
        self.keys, self.t = np.zeros((self.length, 0)), None  # no keys: the row map is fixed
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
        self._place(xp)

    def with_precision(self, precision) -> "QSARandomUnit":
        return QSARandomUnit(self.dim, self.q, self.d_k, self.n_heads, precision, self.seed, self.length,
                             self.xp)

    def to_namespace(self, xp) -> "QSARandomUnit":
        """A copy computing on Array API namespace ``xp`` (the same weights and precision object)."""
        return QSARandomUnit(self.dim, self.q, self.d_k, self.n_heads, self.precision, self.seed,
                             self.length, xp)

    def embed(self, features, rows=None):
        """``(B, N, d' + q + 1)`` -> ``e`` ``(B, R, d' + 2N)``, rounded."""
        xp = self.xp
        feats, idx = self._select_rows(features, rows)  # (B, R, d' + q + 1), (R,)
        pointers = xp.astype(feats[..., self.dim:self.dim + self.q], xp.int64)  # (B, R, q)
        ind = self._indicator(pointers)  # (B, R, N) indicator of y_i
        onehot = xp.broadcast_to(self._indicator(xp.reshape(self._index(idx), (-1, 1)))[None, ...],
                                 tuple(ind.shape))  # (B, R, N) position one-hot
        return self.rnd(xp.concat([feats[..., :self.dim], ind, onehot], axis=2))

    def forward_all(self, features, rows=None):
        """Output rows ``(B, N, d')`` (or only ``rows``): :meth:`output_rows`."""
        return self.output_rows(features, np.arange(self.length) if rows is None else rows)

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else "float64-reference"
        return (f"QSARandomUnit(N={self.length}, q={self.q}, d'={self.dim}, m={self.d_k}, "
                f"heads={self.n_heads}, seed={self.seed}, precision={p}{self._where()})")
