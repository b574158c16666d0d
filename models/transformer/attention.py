"""Multi-head softmax attention kernels, and the exact fixed-point sums a protocol splits.

Shapes: ``B`` instances, ``H`` heads, ``N`` positions, ``d_k`` / ``d_v`` per-head widths.
Every kernel takes arrays of any Array API namespace (NumPy, CuPy, array-api-strict) and loops
in Python only over blocks of positions, never over instances.

* :func:`softmax_attention`: full attention ``(B, H, N, d_v)``, causal or not, in blocks of
  query rows, so the ``N x N`` score matrix never exists (N = 65536 fits in memory).
* :func:`last_position_attention`: one query per instance against ``N`` keys in O(N·(d_k+d_v))
  per head and instance, without an ``N x N`` matrix.
* :func:`exact_attention_sums`: DESIGN §3.  Each position j contributes the weight
  ``w_j = exp(score_j - c)`` and the weighted value ``w_j · v_j``, both rounded onto a
  fixed-point :class:`AttentionGrid` and summed as int64: the sums over any subset are exact,
  so the sums over the blocks of any partition add up to the sum over all positions bit for bit.
* :class:`MultiheadAttention`: ``torch.nn.MultiheadAttention`` semantics on our parameter names
  (see :mod:`models.transformer.torch_io` for loading torch weights).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> Q, K, V = (rng.normal(size=(2, 3, 7, 4)) for _ in range(3))   # (B, H, N, d)
>>> full = softmax_attention(Q, K, V, scale=0.5, causal=True, max_block_elements=20)
>>> last = last_position_attention(Q[:, :, -1], K, V, scale=0.5)
>>> bool(np.allclose(full[:, :, -1], last, rtol=0, atol=1e-13))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of, to_numpy
from commcomp.bits import bit_array_to_uints, uints_to_bit_array
from commcomp.codes import bits_to_codes, codes_to_bits, ieee_codes, ieee_values
from commcomp.errors import BitsError, InvalidParameterError
from commcomp.precision import FixedPoint

__all__ = ["split_heads", "merge_heads", "project", "softmax_attention", "naive_attention",
           "shared_softmax_attention",
           "last_position_attention", "AttentionGrid", "AttentionPartial", "sum_partials",
           "exact_attention_sums", "float_attention_sums", "attention_from_sums",
           "MultiheadAttention", "ceil_log2"]

DEFAULT_BLOCK_ELEMENTS = 2 ** 21  # score entries per block of full attention (16 MiB float64)
SUM_CHUNK_ELEMENTS = 2 ** 21      # weighted-value entries per chunk of the last-position sums


def ceil_log2(n: int) -> int:
    """``ceil(log2(n))`` for ``n >= 1`` (0 for n = 1)."""
    return (int(n) - 1).bit_length()


def split_heads(y, n_heads: int):
    """``(B, N, H * d)`` -> ``(B, H, N, d)``."""
    xp = namespace_of(y)
    B, N, hd = y.shape
    return xp.permute_dims(xp.reshape(y, (B, N, n_heads, hd // n_heads)), (0, 2, 1, 3))  # (B,H,N,d)


def merge_heads(y):
    """``(B, H, N, d)`` -> ``(B, N, H * d)`` (heads concatenated, as torch does)."""
    xp = namespace_of(y)
    B, H, N, d = y.shape
    return xp.reshape(xp.permute_dims(y, (0, 2, 1, 3)), (B, N, H * d))  # (B, N, H*d)


def project(x, W, b):
    """Per-head projection: ``x`` ``(..., d_in)``, ``W`` ``(H, d_in, d_h)``, ``b`` ``(H, d_h)``.

    Returns ``(..., H, d_h)``; one matmul with the heads side by side.
    """
    xp = namespace_of(x, W)
    H, d_in, d_h = W.shape
    flat = xp.reshape(xp.permute_dims(W, (1, 0, 2)), (d_in, H * d_h))  # (d_in, H*d_h)
    y = xp.matmul(x, flat) + xp.reshape(b, (H * d_h,))  # (..., H*d_h)
    return xp.reshape(y, tuple(y.shape[:-1]) + (H, d_h))  # (..., H, d_h)


def _neg_inf(xp, dtype=None):
    return xp.asarray(-math.inf, dtype=xp.float64 if dtype is None else dtype)


def softmax_attention(Q, K, V, *, scale: float, causal: bool = False,
                      max_block_elements: int = DEFAULT_BLOCK_ELEMENTS):
    """Softmax attention of every query, in blocks of query rows.

    Parameters
    ----------
    Q : array ``(B, H, Nq, d_k)``
    K : array ``(B, H, Nk, d_k)``
    V : array ``(B, H, Nk, d_v)``
    scale : float
        Multiplies the scores (``1/sqrt(d_k)`` in the usual model).
    causal : bool
        Query i sees keys ``j <= i`` (needs ``Nq == Nk``).
    max_block_elements : int
        At most this many score entries exist at once (a block of ``B*H*rows*Nk``); the peak
        memory of the kernel is a few times this, whatever ``N``.

    Returns
    -------
    array ``(B, H, Nq, d_v)``
        Row max subtracted before ``exp``; float64 sums.
    """
    xp = namespace_of(Q, K, V)
    B, H, Nq, _ = Q.shape
    Nk = K.shape[2]
    if causal and Nq != Nk:
        raise InvalidParameterError(f"causal attention needs as many queries as keys ({Nq} != {Nk})")
    rows = min(max(1, Nq), max(1, int(max_block_elements) // max(1, B * H * Nk)))
    Kt = xp.matrix_transpose(K)  # (B, H, d_k, Nk)
    # Causal: a block of query rows [i0, i1) sees keys [0, i1); only the square [i0, i1) needs a mask.
    tri = xp.reshape(xp.arange(rows), (1, -1)) <= xp.reshape(xp.arange(rows), (-1, 1))  # (rows, rows)
    out = []
    for i0 in range(0, Nq, rows):
        i1 = min(Nq, i0 + rows)
        kend = i1 if causal else Nk
        S = xp.matmul(Q[:, :, i0:i1, :], Kt[:, :, :, :kend])  # (B, H, b, kend)
        S *= scale
        if causal:
            b = i1 - i0
            S[:, :, :, i0:kend] = xp.where(tri[:b, :b], S[:, :, :, i0:kend], _neg_inf(xp, S.dtype))
        S -= xp.max(S, axis=-1, keepdims=True)
        W = xp.exp(S)  # (B, H, b, kend)
        del S
        out.append(xp.matmul(W, V[:, :, :kend, :]) / xp.sum(W, axis=-1, keepdims=True))  # (B,H,b,dv)
    if not out:
        return xp.zeros((B, H, 0, V.shape[3]), dtype=V.dtype)
    return xp.concat(out, axis=2)  # (B, H, Nq, d_v)


def shared_softmax_attention(Q, K, V, *, scale: float, causal: bool = False,
                             max_block_elements: int = DEFAULT_BLOCK_ELEMENTS):
    """:func:`softmax_attention` when every instance has the same queries and keys.

    ``Q`` ``(1, H, Nq, d_k)`` and ``K`` ``(1, H, Nk, d_k)`` are shared by the batch, ``V``
    ``(B, H, Nk, d_v)`` is not: the weights of a block of query rows are computed once and
    applied to every instance in one matmul, ``(rows, Nk) @ (Nk, B·d_v)``, so the work is
    ``O(H·N²·(d_k + B·d_v))`` instead of ``O(B·H·N²·(d_k + d_v))``.  Same formula as
    :func:`softmax_attention` (row max as shift, ``(W V) / sum(W)``), summed in another order.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Q, K = rng.normal(size=(1, 2, 5, 3)), rng.normal(size=(1, 2, 5, 3))
    >>> V = rng.normal(size=(4, 2, 5, 2))                                  # (B, H, N, d_v)
    >>> a = shared_softmax_attention(Q, K, V, scale=0.5, causal=True, max_block_elements=20)
    >>> b = softmax_attention(np.repeat(Q, 4, 0), np.repeat(K, 4, 0), V, scale=0.5, causal=True)
    >>> a.shape, bool(np.allclose(a, b, rtol=0, atol=1e-13))
    ((4, 2, 5, 2), True)
    """
    xp = namespace_of(Q, K, V)
    B, H, Nk, d_v = V.shape
    Nq = Q.shape[2]
    if causal and Nq != Nk:
        raise InvalidParameterError(f"causal attention needs as many queries as keys ({Nq} != {Nk})")
    rows = min(max(1, Nq), max(1, int(max_block_elements) // max(1, H * Nk)))
    Vt = xp.reshape(xp.permute_dims(V, (1, 2, 0, 3)), (H, Nk, B * d_v))  # (H, Nk, B*d_v)
    Kt = xp.matrix_transpose(K[0, ...])  # (H, d_k, Nk)
    tri = xp.reshape(xp.arange(rows), (1, -1)) <= xp.reshape(xp.arange(rows), (-1, 1))  # (rows, rows)
    out = []
    for i0 in range(0, Nq, rows):
        i1 = min(Nq, i0 + rows)
        kend = i1 if causal else Nk
        S = xp.matmul(Q[0, :, i0:i1, :], Kt[:, :, :kend])  # (H, b, kend)
        S *= scale
        if causal:
            b = i1 - i0
            S[:, :, i0:kend] = xp.where(tri[:b, :b], S[:, :, i0:kend], _neg_inf(xp, S.dtype))
        S -= xp.max(S, axis=-1, keepdims=True)
        W = xp.exp(S)  # (H, b, kend)
        del S
        out.append(xp.matmul(W, Vt[:, :kend, :]) / xp.sum(W, axis=-1, keepdims=True))  # (H, b, B*dv)
    if not out:
        return xp.zeros((B, H, 0, d_v), dtype=V.dtype)
    o = xp.reshape(xp.concat(out, axis=1), (H, Nq, B, d_v))  # (H, Nq, B, d_v)
    return xp.permute_dims(o, (2, 0, 1, 3))  # (B, H, Nq, d_v)


def naive_attention(Q, K, V, *, scale: float, causal: bool = False):
    """The textbook kernel with the whole ``(B, H, Nq, Nk)`` score matrix (baseline for benchmarks)."""
    xp = namespace_of(Q, K, V)
    S = xp.matmul(Q, xp.matrix_transpose(K)) * scale  # (B, H, Nq, Nk)
    if causal:
        n = S.shape[-1]
        S = xp.where(xp.reshape(xp.arange(n), (1, -1)) <= xp.reshape(xp.arange(n), (-1, 1)), S,
                     _neg_inf(xp, S.dtype))
    W = xp.exp(S - xp.max(S, axis=-1, keepdims=True))
    return xp.matmul(W, V) / xp.sum(W, axis=-1, keepdims=True)  # (B, H, Nq, d_v)


def _scores(q, K, scale):
    """``q`` ``(B, H, d_k)``, ``K`` ``(B, H, n, d_k)`` -> scores ``(B, H, n)``."""
    xp = namespace_of(q, K)
    return xp.matmul(K, q[..., None])[..., 0] * scale  # (B, H, n)


def _chunk(B, H, N, d_v) -> int:
    return max(1, SUM_CHUNK_ELEMENTS // max(1, B * H * max(1, d_v)))


def float_attention_sums(q, K, V, *, scale: float, shift, mask=None):
    """Float64 ``(numerator (B, H, d_v), denominator (B, H))`` of ``exp(score - shift)``.

    ``shift`` ``(B, H)``; ``mask`` ``(B or 1, N)`` bool selects the positions summed (all if None).
    Positions are summed in chunks (O(N·(d_k+d_v)) work, no ``N x N`` matrix).
    """
    xp = namespace_of(q, K, V)
    B, (H, N, d_v) = q.shape[0], V.shape[1:]  # V (and K) may have a batch of 1
    num = xp.zeros((B, H, d_v), dtype=V.dtype)  # the compute dtype (float64 or float32)
    den = xp.zeros((B, H), dtype=V.dtype)
    step = _chunk(B, H, N, d_v)
    for n0 in range(0, N, step):
        n1 = min(N, n0 + step)
        w = xp.exp(_scores(q, K[:, :, n0:n1, :], scale) - shift[..., None])  # (B, H, n)
        if mask is not None:
            w = xp.where(mask[:, None, n0:n1], w, xp.zeros_like(w))
        num = num + xp.matmul(w[:, :, None, :], V[:, :, n0:n1, :])[:, :, 0, :]  # (B, H, d_v)
        den = den + xp.sum(w, axis=-1)  # (B, H)
    return num, den


def last_position_attention(q, K, V, *, scale: float, mask=None, shift=None):
    """Attention of one query per instance and head: ``(B, H, d_v)``.

    ``q`` ``(B, H, d_k)``, ``K`` ``(B, H, N, d_k)``, ``V`` ``(B, H, N, d_v)``; ``mask``
    ``(B or 1, N)`` bool (e.g. causal); ``shift`` ``(B, H)`` defaults to the largest score.
    """
    xp = namespace_of(q, K, V)
    if shift is None:
        s = _scores(q, K, scale)  # (B, H, N)
        if mask is not None:
            s = xp.where(mask[:, None, :], s, _neg_inf(xp, s.dtype))
        shift = xp.max(s, axis=-1)  # (B, H)
    num, den = float_attention_sums(q, K, V, scale=scale, shift=shift, mask=mask)
    return num / den[..., None]  # (B, H, d_v)


@dataclass(frozen=True)
class AttentionGrid:
    """The fixed-point grids of the attention terms (DESIGN §3), as the protocol reports them.

    ``weight`` holds ``w_j = exp(score_j - c)`` (in (0, 1]), ``value`` the weighted values;
    ``source`` is ``"precision"`` when they are the model's own ``fixed:P:F`` grid and
    ``"covering"`` when they were chosen to cover an IEEE format's range (``value_bound`` is then
    the bound on ``|v|`` both parties computed in advance from the weights).
    """

    weight: FixedPoint
    value: FixedPoint
    source: str
    precision_name: str
    value_bound: float | None = None

    @property
    def term_bits(self) -> int:
        return max(self.weight.bits, self.value.bits)

    def sum_bits(self, n_terms: int) -> int:
        """Two's-complement width that holds a sum of ``n_terms`` terms: ``P + ceil(log2 n)``."""
        return self.term_bits + ceil_log2(max(1, n_terms))

    def describe(self) -> str:
        extra = f", |v| <= {self.value_bound:.6g}" if self.value_bound is not None else ""
        return (f"attention terms on weight grid {self.weight.name} and value grid "
                f"{self.value.name} ({self.source} grid for {self.precision_name}{extra})")


def exact_attention_sums(q, K, V, *, scale: float, shift, grid: AttentionGrid, mask=None):
    """Exact int64 ``(numerator (B, H, d_v), denominator (B, H))`` over the positions in ``mask``.

    Each weight ``w = exp(score - shift)`` is rounded onto ``grid.weight`` (integer ``a``), each
    weighted value ``(a / 2^F_w) · v`` onto ``grid.value`` (integers), and both are summed in
    int64, in any order with the same result.  Positions outside ``mask`` contribute exactly 0
    (and are never rounded, so they add no saturations).
    """
    xp = namespace_of(q, K, V)
    B, (H, N, d_v) = q.shape[0], V.shape[1:]  # V (and K) may have a batch of 1
    num = xp.zeros((B, H, d_v), dtype=xp.int64)
    den = xp.zeros((B, H), dtype=xp.int64)
    step = _chunk(B, H, N, d_v)
    wgrid, vgrid = grid.weight, grid.value
    for n0 in range(0, N, step):
        n1 = min(N, n0 + step)
        w = xp.exp(_scores(q, K[:, :, n0:n1, :], scale) - shift[..., None])  # (B, H, n)
        if mask is not None:
            w = xp.where(mask[:, None, n0:n1], w, xp.zeros_like(w))
        if w.dtype != xp.float64:  # float32 compute: the grids' integers need float64 to be exact
            w = xp.astype(w, xp.float64)
        a = wgrid.to_int(w)  # (B, H, n) exact integers in float64
        wv = (a / wgrid.scale)[..., None] * V[:, :, n0:n1, :]  # (B, H, n, d_v)
        num = num + xp.sum(xp.astype(vgrid.to_int(wv), xp.int64), axis=2)  # (B, H, d_v)
        den = den + xp.sum(xp.astype(a, xp.int64), axis=-1)  # (B, H)
    return num, den


def attention_from_sums(num, den, grid: AttentionGrid | None = None):
    """``numerator / denominator`` per head ``(B, H, d_v)``; 0 where the denominator is 0.

    With a grid the integers are scaled back (``num / 2^F_v`` over ``den / 2^F_w``).
    """
    xp = namespace_of(num, den)
    numf, denf = xp.astype(num, xp.float64), xp.astype(den, xp.float64)
    if grid is not None:
        numf, denf = numf / grid.value.scale, denf / grid.weight.scale
    zero = denf == 0
    safe = xp.where(zero, xp.ones_like(denf), denf)
    return xp.where(zero[..., None], xp.zeros_like(numf), numf / safe[..., None])  # (B, H, d_v)


@dataclass(frozen=True)
class AttentionPartial:
    """One party's attention sums at the output position, per head.

    ``numerator`` ``(B, H, d_v)`` and ``denominator`` ``(B, H)``: int64 on ``grid`` (exact mode)
    or float64 (``grid`` is None: the float64 reference mode).  Add partials with ``+``.
    """

    numerator: object
    denominator: object
    n_positions: int
    output_position: int
    grid: AttentionGrid | None = None

    @property
    def exact(self) -> bool:
        return self.grid is not None

    def _check(self, other: "AttentionPartial") -> None:
        if (self.n_positions, self.output_position, self.grid) != \
                (other.n_positions, other.output_position, other.grid):
            raise InvalidParameterError("partials of different inputs, output positions or grids")

    def __add__(self, other: "AttentionPartial") -> "AttentionPartial":
        self._check(other)
        return AttentionPartial(self.numerator + other.numerator, self.denominator + other.denominator,
                                self.n_positions, self.output_position, self.grid)

    @property
    def bits_per_number(self) -> int:
        """``P + ceil(log2 N)`` on the grid; 64 (float64's code) in reference mode."""
        return self.grid.sum_bits(self.n_positions) if self.exact else 64

    def message_bits(self) -> int:
        """Bits per instance: ``H · (d_v + 1) · bits_per_number``."""
        H, d_v = self.numerator.shape[1], self.numerator.shape[2]
        return H * (d_v + 1) * self.bits_per_number

    def to_bit_rows(self) -> np.ndarray:
        """``(B, message_bits())`` uint8: per head the ``d_v`` numerators then the denominator."""
        if is_array(self.numerator) and not is_numpy(self.numerator):
            return self._device_bit_rows()
        num, den = to_numpy(self.numerator), to_numpy(self.denominator)
        flat = np.concatenate([num, den[..., None]], axis=2).reshape(num.shape[0], -1)  # (B, H*(dv+1))
        width = self.bits_per_number
        if not self.exact:
            codes = flat.astype(np.float64).view(np.uint64)
        else:
            lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
            if flat.size and (flat.min() < lo or flat.max() > hi):
                raise BitsError(f"an attention sum does not fit in {width} bits")
            codes = flat.astype(np.int64).view(np.uint64)
            if width < 64:
                codes = codes & np.uint64((1 << width) - 1)
        return uints_to_bit_array(codes, width).reshape(num.shape[0], -1)  # (B, bits)

    def _device_bit_rows(self):
        """:meth:`to_bit_rows` on the partial's own namespace (the bits stay on the device)."""
        xp = namespace_of(self.numerator, self.denominator)
        B = self.numerator.shape[0]
        flat = xp.reshape(xp.concat([self.numerator, self.denominator[..., None]], axis=2), (B, -1))
        width = self.bits_per_number
        if not self.exact:  # float64 sums: float64's own code
            codes = ieee_codes(xp.astype(flat, xp.float64), 11, 52)
        else:
            lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
            if math.prod(flat.shape) and bool(xp.any(xp.logical_or(flat < lo, flat > hi))):
                raise BitsError(f"an attention sum does not fit in {width} bits")
            codes = xp.astype(flat, xp.int64)
            if width < 64:
                codes = xp.bitwise_and(codes, xp.asarray((1 << width) - 1, dtype=xp.int64))  # two's complement
        return codes_to_bits(codes, width)  # (B, bits)

    @classmethod
    def _from_device_bits(cls, arr, width, n_heads, d_v, n_positions, output_position, grid):
        xp = namespace_of(arr)
        codes = bits_to_codes(arr, width)  # (B, H*(dv+1)) int64
        if grid is None:
            vals = ieee_values(codes, 11, 52)
        elif width < 64:
            half = 1 << (width - 1)  # sign-extend a width-bit two's complement code (2^width may not fit)
            vals = xp.where(codes >= half, (codes - half) - half, codes)
        else:
            vals = codes
        vals = xp.reshape(vals, (arr.shape[0], n_heads, d_v + 1))
        return cls(vals[:, :, :d_v], vals[:, :, d_v], n_positions, output_position, grid)

    @classmethod
    def from_bit_rows(cls, rows, *, n_heads: int, d_v: int, n_positions: int, output_position: int,
                      grid: AttentionGrid | None = None) -> "AttentionPartial":
        """Inverse of :meth:`to_bit_rows` (arrays of the bits' namespace: host or device)."""
        width = grid.sum_bits(n_positions) if grid is not None else 64
        arr = getattr(rows, "array", rows)
        if is_array(arr) and not is_numpy(arr):
            if arr.ndim != 2 or arr.shape[1] != n_heads * (d_v + 1) * width:
                raise BitsError(f"expected (B, {n_heads * (d_v + 1) * width}) bits, got {tuple(arr.shape)}")
            return cls._from_device_bits(arr, width, n_heads, d_v, n_positions, output_position, grid)
        arr = np.asarray(arr)
        if arr.ndim != 2 or arr.shape[1] != n_heads * (d_v + 1) * width:
            raise BitsError(f"expected (B, {n_heads * (d_v + 1) * width}) bits, got {arr.shape}")
        codes = bit_array_to_uints(arr.reshape(arr.shape[0], -1, width), width)  # (B, H*(dv+1))
        if grid is None:
            vals = codes.astype(np.uint64).view(np.float64)
        else:
            vals = codes.astype(np.uint64).view(np.int64)
            if width < 64:  # sign-extend (2^width may not fit in int64 at width 63: subtract half twice)
                half = np.int64(1 << (width - 1))
                vals = np.where(vals >= half, (vals - half) - half, vals)
        vals = vals.reshape(arr.shape[0], n_heads, d_v + 1)
        return cls(vals[:, :, :d_v].copy(), vals[:, :, d_v].copy(), n_positions, output_position, grid)


def sum_partials(parts) -> AttentionPartial:
    """The sum of a non-empty sequence of :class:`AttentionPartial` (order does not matter when exact)."""
    parts = list(parts)
    if not parts:
        raise InvalidParameterError("no partials to sum")
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


class MultiheadAttention:
    """``torch.nn.MultiheadAttention`` (``batch_first=True``) on our parameter names.

    Parameters (``params`` dict of float64 arrays): ``W_Q`` ``(H, d_q_in, d_k)``, ``b_Q``
    ``(H, d_k)``, ``W_K`` ``(H, d_kv_in, d_k)``, ``b_K``, ``W_V`` ``(H, d_v_in, d_v)``, ``b_V``
    ``(H, d_v)``, ``W_O`` ``(H, d_v, d_out)``, ``b_O`` ``(d_out,)``.  ``scale`` defaults to
    ``1/sqrt(d_k)``.  ``out = sum_h softmax(scale · Q_h K_hᵀ) V_h W_O[h] + b_O``.

    Examples
    --------
    >>> mha = MultiheadAttention.random(d_model=8, n_heads=2, seed=0)
    >>> x = np.random.default_rng(1).normal(size=(3, 5, 8))        # (B, N, d)
    >>> mha(x, causal=True).shape
    (3, 5, 8)
    """

    NAMES = ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O")

    def __init__(self, params: dict, *, scale: float | None = None, xp=None):
        missing = [k for k in self.NAMES if k not in params]
        if missing:
            raise InvalidParameterError(f"MultiheadAttention needs {missing}")
        self.params = {k: np.asarray(to_numpy(params[k]), dtype=np.float64) for k in self.NAMES}
        H, _, d_k = self.params["W_Q"].shape
        if self.params["W_K"].shape[0::2] != (H, d_k) or self.params["W_V"].shape[0] != H or \
                self.params["W_O"].shape[:2] != (H, self.params["W_V"].shape[2]):
            raise InvalidParameterError("inconsistent head counts or widths in W_Q/W_K/W_V/W_O")
        self.n_heads, self.d_k, self.d_v = H, d_k, self.params["W_V"].shape[2]
        self.scale = 1.0 / math.sqrt(d_k) if scale is None else float(scale)
        self.xp = xp if xp is not None else namespace_of()
        self.w = {k: self.xp.asarray(v) for k, v in self.params.items()}

    @classmethod
    def random(cls, d_model: int, n_heads: int, *, d_k: int | None = None, d_v: int | None = None,
               d_kv_in: int | None = None, seed=0) -> "MultiheadAttention":
        """torch's initialisers: Glorot-uniform input projections (each ``(d_in, H·d_h)``),
        zero input biases, output weight U(±1/sqrt(H·d_v)) and zero output bias."""
        rng = np.random.default_rng(seed)
        H = int(n_heads)
        d_k = d_k or d_model // H
        d_v = d_v or d_model // H
        d_kv = d_kv_in or d_model

        def glorot(d_in, d_h):
            a = math.sqrt(6.0 / (d_in + H * d_h))
            return rng.uniform(-a, a, size=(d_in, H, d_h)).transpose(1, 0, 2)  # (H, d_in, d_h)

        a_o = 1.0 / math.sqrt(H * d_v)
        params = {"W_Q": glorot(d_model, d_k), "b_Q": np.zeros((H, d_k)),
                  "W_K": glorot(d_kv, d_k), "b_K": np.zeros((H, d_k)),
                  "W_V": glorot(d_kv, d_v), "b_V": np.zeros((H, d_v)),
                  "W_O": rng.uniform(-a_o, a_o, size=(H, d_v, d_model)), "b_O": np.zeros(d_model)}
        return cls(params)

    def to_namespace(self, xp) -> "MultiheadAttention":
        """A copy whose kernels run on Array API namespace ``xp``."""
        return MultiheadAttention(self.params, scale=self.scale, xp=xp)

    def __call__(self, query, key=None, value=None, *, causal: bool = False,
                 max_block_elements: int = DEFAULT_BLOCK_ELEMENTS):
        """``query`` ``(B, Nq, d_q_in)``, ``key``/``value`` ``(B, Nk, ·)`` (default: ``query``).

        Returns ``(B, Nq, d_out)``.  ``causal`` masks keys after the query (torch's
        ``attn_mask=triu(ones, 1)``).
        """
        xp, w = self.xp, self.w
        key = query if key is None else key
        value = key if value is None else value
        Q = xp.permute_dims(project(query, w["W_Q"], w["b_Q"]), (0, 2, 1, 3))  # (B, H, Nq, d_k)
        K = xp.permute_dims(project(key, w["W_K"], w["b_K"]), (0, 2, 1, 3))    # (B, H, Nk, d_k)
        V = xp.permute_dims(project(value, w["W_V"], w["b_V"]), (0, 2, 1, 3))  # (B, H, Nk, d_v)
        A = softmax_attention(Q, K, V, scale=self.scale, causal=causal,
                              max_block_elements=max_block_elements)  # (B, H, Nq, d_v)
        W_O = xp.reshape(w["W_O"], (self.n_heads * self.d_v, -1))  # (H*d_v, d_out)
        return xp.matmul(merge_heads(A), W_O) + w["b_O"]  # (B, Nq, d_out)

    def save(self, path) -> None:
        """Write the parameters (our names) and the scale to ``.npz``."""
        np.savez(path, **self.params, scale=np.float64(self.scale))

    @classmethod
    def load(cls, path, xp=None) -> "MultiheadAttention":
        """Read what :meth:`save` wrote."""
        with np.load(path, allow_pickle=False) as data:
            return cls({k: data[k] for k in cls.NAMES}, scale=float(data["scale"]), xp=xp)
