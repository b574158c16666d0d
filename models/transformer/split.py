"""A 1-layer Transformer split between Alice and Bob at its output position (theorems.md §8.3).

Alice holds some positions, Bob the rest and the output position ``o``.  Per head, each position
j contributes ``w_j = exp(scale·<q, k_j> - c)`` and ``w_j · v_j``:

* **the query** ``q`` is a function of the token at ``o`` and of ``o``
  (:meth:`SplitMixin.query`, ``(B, H, d_k)``, rounded to the precision so it is a P-bit message).
  When :meth:`SplitMixin.query_depends_on_input` is False both parties compute it; otherwise Bob
  sends it first (``H·d_k·P`` bits) and Alice passes it to ``partial(..., query=q)``.
* **the shift** ``c`` (:meth:`SplitMixin.score_shift`) is an upper bound on every score that
  needs only ``q``, the weights and N: without a pre-norm it is
  ``scale·(max_t <q, tok_t W_K> + max_p <q, pe_p W_K> + <q, b_K>)``, the exact maximum over all
  token x position pairs (``p`` ranges over the positions the output position can see); with a
  pre-norm, whose output has norm at most ``sqrt(d)``, it is
  ``scale·(<q, b_ln W_K + b_K> + sqrt(d)·||g ⊙ W_K q||)``.  So ``w_j`` lies in (0, 1], up to
  the rounding of the activations.
* **the grid** (:meth:`SplitMixin.attention_grid`, also carried by every partial): at
  ``fixed:P:F`` the model's own grid for both terms; at an IEEE format of P bits, ``P' = min(P,
  53, 64 - ceil(log2 N))`` bits, the weights on ``FixedPoint.covering(P', 1)`` and the weighted
  values on ``FixedPoint.covering(P', bound)`` with ``bound`` >= ``|v|`` for every token and
  position (:meth:`SplitMixin.value_bound`, from the weights alone).
* **the sums**: integers, exact, each within ``P + ceil(log2 N)`` bits; Bob adds the partials
  and :meth:`SplitMixin.finish` computes ``numerator / denominator``, the residual, MLP and readout.
  On a coarse grid every weight of a head can round to 0 (all scores far below ``c``); that head's
  attention output is then 0, in ``forward()`` and in the protocol alike.

``forward()`` of a 1-layer model *is* ``finish(partial(all positions))``, so ``finish`` of the sum
of the partials of any partition equals ``forward()`` bit for bit.  Without a precision the sums
are float64 and agree to rounding only.

Examples
--------
>>> import numpy as np
>>> from models.transformer import Transformer
>>> model = Transformer.random(6, 8, 1, 2, 4, 4, 8, 3, max_len=8, seed=1, precision="fixed:12:6")
>>> tokens = np.array([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])       # (B=2, N=5); Bob holds 3, 4
>>> q = model.query(tokens[:, 4], 4)                             # Bob -> Alice (H·d_k·P bits)
>>> alice = model.partial(tokens, [0, 1, 2], query=q)
>>> bob = model.partial(tokens, [3, 4], query=q)
>>> alice.message_bits()                                         # H·(d_v+1)·(12 + ceil(log2 5))
150
>>> bool(np.array_equal(model.finish(alice + bob, tokens[:, 4]), model.forward(tokens)))
True
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.backend import is_array, namespace_of, to_numpy
from commcomp.errors import InvalidParameterError, TooLargeError, UnsupportedSplitError
from commcomp.precision import FixedPoint, MAX_FIXED_BITS

from .attention import (AttentionGrid, AttentionPartial, attention_from_sums, ceil_log2,
                        exact_attention_sums, float_attention_sums, project, sum_partials)
from .factored import first_layer_heads

__all__ = ["SplitMixin", "attention_grid_for", "prenorm_score_shift", "prenorm_value_bound"]

VALUE_HEADROOM = 1.0 + 2.0 ** -10  # covers activations rounded after the bound was computed


def prenorm_score_shift(xp, w, query, d_model: int, scale: float):
    """The agreed shift ``c`` ``(B, H)`` of a pre-norm attention layer: an upper bound on every score.

    The pre-norm's output ``g ⊙ u + b`` has ``||u|| <= sqrt(d)`` (LayerNorm and RMSNorm alike), so
    ``<q, W_K^T (g ⊙ u + b) + b_K> <= <q, b W_K + b_K> + sqrt(d) ||g ⊙ W_K q||``.  ``w`` holds
    ``W_K`` ``(H, d, d_k)``, ``b_K`` ``(H, d_k)``, ``ln1.g`` and ``ln1.b`` ``(d,)``.
    """
    beta = project(w["ln1.b"], w["W_K"], w["b_K"])  # (H, d_k)
    Wq = xp.matmul(w["W_K"], query[..., None])[..., 0]  # (B, H, d)
    gWq = Wq * w["ln1.g"]
    c = xp.sum(query * beta, axis=-1) + math.sqrt(d_model) * xp.sqrt(xp.sum(gWq * gWq, axis=-1))  # (B, H)
    return c * scale


def prenorm_value_bound(W_V, b_V, ln_g, ln_b, d_model: int) -> float:
    """A bound on ``|v|`` over every input of a pre-norm attention layer, from the weights alone."""
    base = np.abs(np.einsum("r,hrv->hv", ln_b, W_V) + b_V)
    spread = math.sqrt(d_model) * np.sqrt(np.einsum("r,hrv->hv", ln_g ** 2, W_V ** 2))
    return float(np.max(base + spread))


def attention_grid_for(precision, n: int, value_bound) -> AttentionGrid:
    """The attention terms' grids at ``precision`` for sums over ``n`` positions (module docstring).

    ``value_bound``: a callable giving the bound on ``|v|`` (only called for IEEE formats).
    """
    P, name = precision.bits, precision.name
    if isinstance(precision, FixedPoint):
        if P + ceil_log2(n) > 64:
            raise TooLargeError(f"{name} sums over {n} positions need {P + ceil_log2(n)} > 64 bits")
        return AttentionGrid(precision, precision, "precision", name)
    bits = min(P, MAX_FIXED_BITS, 64 - ceil_log2(n))
    bound = max(value_bound() * VALUE_HEADROOM, 0.5)
    return AttentionGrid(FixedPoint.covering(bits, 1.0), FixedPoint.covering(bits, bound), "covering", name, bound)


class SplitMixin:
    """``query``, ``partial`` and ``finish`` of a 1-layer :class:`Transformer`."""

    def _as_xp(self, a, dtype=None):
        """``a`` as an array of the model's namespace (copied through the host if need be)."""
        if is_array(a) and namespace_of(a) is self.xp:
            return a
        return self.xp.asarray(np.array(to_numpy(a) if is_array(a) else a, dtype=dtype))  # a writable copy

    def _need_one_layer(self):
        if self.n_layers != 1:
            raise UnsupportedSplitError(f"partial sums exist for a 1-layer Transformer only "
                                        f"(this one has {self.n_layers} layers)")

    def query(self, tokens_at_output, output_position: int):
        """The query of every head at the output position: ``(B, H, d_k)``, rounded.

        ``tokens_at_output`` ``(B,)``: the token at ``output_position`` (Bob's).  This is what Bob
        sends when :meth:`query_depends_on_input` is True.
        """
        self._need_one_layer()
        xp = self.xp
        t = xp.reshape(self._as_xp(tokens_at_output, np.int64), (-1,))  # (B,)
        x_o = self.embed_at(xp.astype(t, xp.int64), int(output_position))
        return self.blocks[0].query(self.blocks[0].attn_input(x_o))  # (B, H, d_k)

    def query_depends_on_input(self, output_position: int) -> bool:
        """Whether the query at ``output_position`` changes with the token there.

        False means every token gives the same query bit for bit: then Alice computes it herself
        and a 1-round protocol suffices.
        """
        key = ("query-depends", int(output_position))
        if key not in self._cache:
            q = self.query(self.xp.arange(self.vocab_size), output_position)  # (V, H, d_k)
            self._cache[key] = not bool(self.xp.all(q == q[:1, ...]))
        return self._cache[key]

    def query_bits(self) -> int:
        """Bits per instance of Bob's query message: ``H · d_k · P`` (64 in reference mode)."""
        bits = self.precision.bits if self.precision is not None else 64
        return self.n_heads * self.d_k * bits

    # -- the agreed shift and grid ------------------------------------------------------
    def score_shift(self, query, n_positions: int, output_position: int):
        """The agreed shift ``c`` ``(B, H)``: an upper bound on every score (module docstring)."""
        xp, blk, w = self.xp, self.blocks[0], self.blocks[0].w
        W_K, b_K = w["W_K"], w["b_K"]  # (H, d, d_k), (H, d_k)
        if self.layer_norm == "pre":
            return prenorm_score_shift(xp, w, query, self.d_model, blk.scale)
        last = output_position + 1 if self.causal else n_positions
        c = xp.sum(query * b_K, axis=-1)  # (B, H)
        for keys in self._shift_keys(last):  # (H, d_k, n) of the token table, then the positions
            c = c + xp.max(xp.matmul(query[:, :, None, :], keys)[:, :, 0, :], axis=-1)  # (B, H)
        return c * blk.scale

    def _shift_keys(self, last: int):
        """Unrounded keys of every token and of positions ``0..last-1``, ``(H, d_k, n)`` each (cached)."""
        key = ("shift-keys", int(last))
        if key not in self._cache:
            xp, W_K = self.xp, self.blocks[0].w["W_K"]
            zero = xp.zeros((self.n_heads, W_K.shape[2]), dtype=self.dtype)
            self._cache[key] = tuple(xp.permute_dims(project(table, W_K, zero), (1, 2, 0))
                                     for table in (self.w["tok_emb"], self.position_rows(xp.arange(last))))
        return self._cache[key]

    def value_bound(self) -> float:
        """A bound on ``|v|`` over every token, position and head, from the weights alone."""
        p = self.params
        W_V, b_V = p["l0.W_V"], p["l0.b_V"]  # (H, d, d_v), (H, d_v)
        if self.layer_norm == "pre":
            return prenorm_value_bound(W_V, b_V, p["l0.ln1.g"], p["l0.ln1.b"], self.d_model)
        tok = np.einsum("tr,hrv->thv", p["tok_emb"], W_V)  # (V, H, d_v)
        lo, hi = tok.min(axis=0) + b_V, tok.max(axis=0) + b_V
        if self.pos.has_table:
            pos = np.einsum("nr,hrv->nhv", p["pos_emb"], W_V)  # (N_max, H, d_v)
            lo, hi = lo + pos.min(axis=0), hi + pos.max(axis=0)
        else:
            spread = np.einsum("r,hrv->hv", self.pos.coordinate_abs_max(), np.abs(W_V))
            lo, hi = lo - spread, hi + spread
        return float(max(np.max(np.abs(lo)), np.max(np.abs(hi))))

    def attention_grid(self, n_positions: int) -> AttentionGrid | None:
        """The fixed-point grids of the attention terms for inputs of ``n_positions`` (None: float64)."""
        if self.precision is None:
            return None
        n = int(n_positions)
        if n in self._grids:
            return self._grids[n]
        grid = attention_grid_for(self.precision, n, self.value_bound)
        self._grids[n] = grid
        return grid

    # -- the parties ---------------------------------------------------------------------
    def _mask(self, positions, B: int, N: int):
        if positions is None:
            return np.ones((1, N), dtype=bool)
        pos = np.asarray(to_numpy(positions) if is_array(positions) else positions)
        if pos.dtype == bool:
            if pos.shape not in ((N,), (1, N), (B, N)):
                raise InvalidParameterError(f"a position mask must be (N,) or (B, N), got {pos.shape}")
            return pos.reshape(-1, N)
        idx = pos.astype(np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= N):
            raise InvalidParameterError(f"positions must lie in [0, {N})")
        mask = np.zeros((1, N), dtype=bool)
        mask[0, idx] = True
        return mask

    def partial(self, tokens, positions, query=None, *, output_position=None) -> AttentionPartial:
        """Per-head attention sums at the output position over ``positions`` only.

        Parameters
        ----------
        tokens : array ``(B, N)`` int
            Only the entries at ``positions`` are read; every other one is replaced by 0 first.
        positions : index array ``(k,)``, bool mask ``(N,)`` or ``(B, N)``, or None (all)
        query : array ``(B, H, d_k)``, optional
            Bob's query; needed when it depends on the input and ``o`` is not in ``positions``.
        output_position : int, optional
            Default ``N - 1``.

        Returns
        -------
        AttentionPartial
            int64 ``numerator (B, H, d_v)`` and ``denominator (B, H)`` on :meth:`attention_grid`
            (float64 in reference mode).  ``a + b`` adds partials.
        """
        self._need_one_layer()
        xp = self.xp
        tokens = self._tokens(tokens)
        B, N = tokens.shape
        o = self._output_position(output_position, N)
        mask_np = self._mask(positions, B, N)
        if self.causal:
            mask_np = mask_np & (np.arange(N) <= o)
        mask = xp.asarray(mask_np)  # (1 or B, N)
        kept = xp.where(mask, tokens, xp.zeros_like(tokens))  # (B, N)
        if query is not None:
            q = self.rnd(xp.astype(self._as_xp(query, np.float64), self.dtype))
            if tuple(q.shape) != (B, self.n_heads, self.d_k):
                raise InvalidParameterError(f"query must be {(B, self.n_heads, self.d_k)}, "
                                            f"got {tuple(q.shape)}")
        elif not self.query_depends_on_input(o):
            q = self.query(xp.zeros((B,), dtype=xp.int64), o)  # (B, H, d_k), the same for all tokens
        elif bool(np.all(self._mask(positions, B, N)[:, o])):
            q = self.query(tokens[:, o], o)
        else:
            raise InvalidParameterError("the query depends on the token at the output position, "
                                        "which these positions do not hold: pass query=")
        K, V = self.first_layer_kv(kept)
        return self._sums(q, K, V, mask, N, o)

    def first_layer_kv(self, tokens):
        """Keys and values of every position: ``(B or 1, H, N, d_k)``, ``(B or 1, H, N, d_v)``.

        From the per-token and per-position tables when the embedding splits exactly
        (:mod:`models.transformer.factored`; a batch of 1 when no token changes them), else by
        embedding and projecting every row.  Row j depends only on the token at j and on j.
        """
        K, V = first_layer_heads(self, tokens, "K"), first_layer_heads(self, tokens, "V")
        if K is None:  # the embedding does not split exactly: embed and project every row
            blk = self.blocks[0]
            h = blk.attn_input(self.embed(tokens))  # (B, N, d)
            K, V = blk.heads(h, "K"), blk.heads(h, "V")  # (B, H, N, d_k), (B, H, N, d_v)
        return K, V

    def _sums(self, q, K, V, mask, N: int, o: int) -> AttentionPartial:
        """The attention sums at ``o`` over the positions in ``mask`` (``partial``'s last step)."""
        blk = self.blocks[0]
        c = self.score_shift(q, N, o)  # (B, H)
        grid = self.attention_grid(N)
        if grid is None:
            num, den = float_attention_sums(q, K, V, scale=blk.scale, shift=c, mask=mask)
        else:
            num, den = exact_attention_sums(q, K, V, scale=blk.scale, shift=c, grid=grid, mask=mask)
            if grid.source == "covering":  # report saturations on the model's precision
                self.precision.saturations.add(grid.weight.saturations.reset()
                                               + grid.value.saturations.reset())
        return AttentionPartial(num, den, N, o, grid)

    def _forward_at_one_layer(self, tokens, outputs):
        """``forward(tokens, o)`` for each ``o`` of ``outputs``, keys and values computed once."""
        xp = self.xp
        B, N = tokens.shape
        K, V = self.first_layer_kv(tokens)
        logits = []
        for o in outputs:
            mask = xp.asarray(np.ones((1, N), dtype=bool) & ((np.arange(N) <= o) | (not self.causal)))
            t_o = tokens[:, o] if self.query_depends_on_input(o) else xp.zeros((B,), dtype=xp.int64)
            p = self._sums(self.query(t_o, o), K, V, mask, N, o)
            logits.append(self.finish(p, tokens[:, o]))  # (B, C)
        return logits

    def finish(self, partials, tokens_at_output):
        """Logits ``(B, C)`` from the partials (one, or a sequence to add) and Bob's token at ``o``."""
        self._need_one_layer()
        xp = self.xp
        total = sum_partials(partials) if isinstance(partials, (list, tuple)) else partials
        if total.grid != self.attention_grid(total.n_positions):
            raise InvalidParameterError("the partials were made on another grid or precision")
        num, den = self._as_xp(total.numerator), self._as_xp(total.denominator)
        attn = self.rnd(xp.astype(attention_from_sums(num, den, total.grid), self.dtype,
                                  copy=False))  # (B, H, d_v)
        t = xp.reshape(self._as_xp(tokens_at_output, np.int64), (-1,))  # (B,)
        x_o = self.embed_at(xp.astype(t, xp.int64), total.output_position)
        x_o = self.blocks[0].after_attention(x_o, xp.reshape(attn, (attn.shape[0], -1)))  # (B, d)
        return self.readout(x_o)  # (B, C)

    def message_bits(self, n_positions: int) -> int:
        """Bits per instance of one party's partial: ``H · (d_v + 1) · (P' + ceil(log2 N))``."""
        grid = self.attention_grid(n_positions)
        width = grid.sum_bits(n_positions) if grid is not None else 64
        return self.n_heads * (self.d_v + 1) * width
