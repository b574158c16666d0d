"""First-layer projections from per-token and per-position tables (exact, O(N·d_h) per instance).

The first layer of a Transformer without a pre-norm reads the rounded embedding
``h[t, j] = rnd(tok[t] + pos[j])`` of token ``t`` at position ``j``.  This module proves, column
by column and from the weights alone, that ``h`` splits *exactly* into a token part and a position
part, ``h[t, j] = T[t] + P[j]`` bit for bit, and then computes the first layer's keys, values and
queries from the small projected tables ``T W`` ``(V, H, d_h)`` and ``P W`` ``(n, H, d_h)``::

    K[b, j] = rnd((T W_K)[t_bj] + (P W_K)[j] + b_K)

instead of embedding and projecting ``B · N`` rows of width ``d``.  A column ``c`` splits when

* ``pos[:, c]`` is zero (``T[:, c] = rnd(tok[:, c])``, ``P[:, c] = 0``: ``rnd(tok + 0) = rnd(tok)``),
* ``tok[:, c]`` is zero (``T[:, c] = 0``, ``P[:, c] = rnd(pos[:, c])``), or
* every ``tok[a, c] + pos[j, c]`` is already on the grid: both columns are on it and each of the
  at most 2^20 sums of their distinct values rounds to itself (so ``rnd`` is the identity there);
  in the float64 reference mode (no rounding) every column splits.

These are exact statements about ``rnd``, checked on the actual tables; if any column fails,
:func:`embedding_factors` returns None and the model takes its direct path.

Arithmetic.  The projection ``h W`` is computed as ``(T W)[t] + (P W)[j]``: the same real number
as ``(T[t] + P[j]) W``, summed in another order, so its float64 value may differ from the direct
path in the last bits.  Every code path that runs a first layer through these tables (``forward``
of a 1-layer model *is* ``finish(partial(...))``; the shared attention pattern of
:func:`shared_pattern`) computes each entry by the same formula from the same tables, whatever
the batch, so a protocol that splits the positions stays bit-exact (DESIGN §3).

When every row of ``T W`` is the same (the weights ignore the token columns), the keys depend on
the position only: one ``(1, H, n, d_k)`` array serves the whole batch, and when the queries do
too, the first layer's attention weights are the same for every instance (:func:`shared_pattern`).

Examples
--------
>>> import numpy as np
>>> from models.transformer import Transformer
>>> pos = np.zeros((6, 4)); pos[:, 2] = np.arange(6) / 4          # positions in column 2 only
>>> tok = np.random.default_rng(0).normal(size=(3, 4)); tok[:, 2] = 0  # tokens in the others
>>> model = Transformer.random(3, 4, 1, 1, 2, 2, 0, 2, positional=pos, seed=0,
...                            precision="fixed:8:4", params={"tok_emb": tok})
>>> f = embedding_factors(model, 6)
>>> tokens = np.array([[0, 2, 1, 1, 0, 2]])
>>> direct = model.embed(tokens)                                   # (1, 6, 4)
>>> bool(np.array_equal(f.token[tokens] + f.position[None], direct))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.backend import namespace_of

__all__ = ["EmbeddingFactors", "embedding_factors", "projected_tables", "first_layer_heads",
           "shared_pattern", "MAX_PAIR_CHECKS"]

MAX_PAIR_CHECKS = 1 << 20  # distinct (token value, position value) sums checked per column


@dataclass(frozen=True)
class EmbeddingFactors:
    """``rnd(tok[t] + pos[j]) == token[t] + position[j]`` bit for bit (NumPy float64 arrays)."""

    token: np.ndarray     # (V, d)
    position: np.ndarray  # (n, d)


def _column_on_grid(rnd, a: np.ndarray, b: np.ndarray) -> bool:
    ua, ub = np.unique(a), np.unique(b)
    if ua.size * ub.size > MAX_PAIR_CHECKS:
        return False
    if not (np.array_equal(rnd(ua), ua) and np.array_equal(rnd(ub), ub)):
        return False
    sums = (ua[:, None] + ub[None, :]).ravel()
    return bool(np.array_equal(rnd(sums), sums))


def embedding_factors(model, n: int) -> EmbeddingFactors | None:
    """The exact split of the rounded embedding of ``model`` over positions ``0..n-1``, or None.

    None when the first layer reads a pre-norm (its input mixes the columns) or when some
    column fails every test of the module docstring.  Cached on the model per ``n``.
    """
    key = ("factors", int(n))
    if key in model._cache:
        return model._cache[key]
    result = None
    if model.layer_norm != "pre" and "64" in str(getattr(model, "dtype", "float64")):
        result = _factor(model, int(n))  # a float64 shortcut: float32 compute embeds and projects
    model._cache[key] = result
    return result


def _factor(model, n: int) -> EmbeddingFactors | None:
    from models.common import make_rounder

    tok = np.asarray(model.params["tok_emb"], dtype=np.float64)  # (V, d)
    from .positional import Positional

    host_pos = Positional(model.positional_kind, model.d_model, table=model.params.get("pos_emb"))  # host weights
    pos = np.asarray(host_pos.rows(np.arange(n)), dtype=np.float64)  # (n, d)
    if model.precision is None:
        return EmbeddingFactors(tok.copy(), pos.copy())
    rnd = make_rounder(model.precision, np, np.float64)
    token, position = np.zeros_like(tok), np.zeros_like(pos)
    for c in range(tok.shape[1]):
        t_col, p_col = tok[:, c], pos[:, c]
        if not p_col.any():
            token[:, c] = rnd(t_col)
        elif not t_col.any():
            position[:, c] = rnd(p_col)
        elif _column_on_grid(rnd, t_col, p_col):
            token[:, c], position[:, c] = t_col, p_col
        else:
            return None
    return EmbeddingFactors(token, position)


def projected_tables(model, n: int, name: str):
    """``(T W, P W)`` of the first layer's ``W_{name}`` (``name`` in Q, K, V), cached.

    Returns ``(V, H, d_h)`` and ``(n, H, d_h)`` arrays of the model's namespace, or None when the
    embedding does not split.
    """
    key = ("tables", int(n), name)
    if key in model._cache:
        return model._cache[key]
    f = embedding_factors(model, n)
    result = None
    if f is not None:
        W = np.asarray(model.params[f"l0.W_{name}"])  # (H, d, d_h)
        H, d, d_h = W.shape
        flat = W.transpose(1, 0, 2).reshape(d, H * d_h)  # (d, H*d_h)
        xp = model.xp
        result = (xp.asarray((f.token @ flat).reshape(-1, H, d_h)),      # (V, H, d_h)
                  xp.asarray((f.position @ flat).reshape(-1, H, d_h)))   # (n, H, d_h)
    model._cache[key] = result
    return result


def _rows_equal(a) -> bool:
    xp = namespace_of(a)
    return bool(xp.all(a == a[:1, ...]))  # on the table's own namespace: one bool comes back


def token_independent(model, n: int, name: str) -> bool:
    """Whether ``W_{name}`` of the first layer gives every token the same projection (cached)."""
    key = ("token-independent", int(n), name)
    if key not in model._cache:
        tables = projected_tables(model, n, name)
        model._cache[key] = tables is not None and _rows_equal(tables[0])
    return model._cache[key]


def first_layer_heads(model, tokens, name: str):
    """First-layer ``Q``, ``K`` or ``V`` of every position from the tables: ``(B or 1, H, n, d_h)``.

    Every entry is ``rnd(((T W)[t] + (P W)[j]) + b)``.  When the result ignores the token
    (:func:`token_independent`) it is computed once, with a batch dimension of 1; when it ignores
    the position, once per vocabulary entry and gathered.  None when the embedding does not split.
    """
    xp = model.xp
    B, n = tokens.shape
    tables = projected_tables(model, n, name)
    if tables is None:
        return None
    TW, PW = tables
    b = model.blocks[0].w[f"b_{name}"]  # (H, d_h)
    if token_independent(model, n, name):
        y = model.rnd((TW[:1, ...] + PW) + b)[None, ...]  # (1, n, H, d_h)
    elif _position_independent(model, n, name):
        key = ("token-table", n, name)
        if key not in model._cache:
            model._cache[key] = model.rnd((TW + PW[:1, ...]) + b)  # (V, H, d_h)
        y = xp.take(model._cache[key], xp.reshape(tokens, (-1,)), axis=0)  # (B*n, H, d_h)
        y = xp.reshape(y, (B, n) + tuple(TW.shape[1:]))  # (B, n, H, d_h)
    else:
        g = xp.reshape(xp.take(TW, xp.reshape(tokens, (-1,)), axis=0),
                       (B, n) + tuple(TW.shape[1:]))  # (B, n, H, d_h)
        y = model.rnd((g + PW[None, ...]) + b)
    return xp.permute_dims(y, (0, 2, 1, 3))  # (B or 1, H, n, d_h)


def _position_independent(model, n: int, name: str) -> bool:
    key = ("position-independent", int(n), name)
    if key not in model._cache:
        model._cache[key] = _rows_equal(projected_tables(model, n, name)[1])
    return model._cache[key]


def shared_pattern(model, n: int) -> bool:
    """Whether the first layer's attention weights are the same for every input of length ``n``:
    its queries and keys both ignore the tokens (then :func:`first_layer_heads` gives them once)."""
    return token_independent(model, n, "Q") and token_independent(model, n, "K")
