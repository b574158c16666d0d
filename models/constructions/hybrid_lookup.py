"""Index Lookup on the hybrid (WDL): one ReLU Elman layer, then one attention layer.

WDL's hybrid (:mod:`models.transformer.hybrid`: recurrent stack, RMS ``norm_f``, one pre-norm
attention layer, readout) closes the retrieval gap: an RNN alone needs ``m·p >= n`` state bits on
Index Lookup (BHBK-IL-RNN, WDL-AR-RNN), the hybrid needs width O(log² N / log log N) here, at any
precision that holds the integers 0 and 1 (every format commcomp runs).

Task format (``reductions.tasks.index_lookup``, ids as in C2: symbol ``a`` is id ``a``, the
query for index p is id ``A + p``)::

    position  0    1    ...  n-1      n
    token     s_0  s_1  ...  s_{n-1}  A + p         N = n + 1, answer s_p at position n

**Position code (the recurrence).**  The attention layer has no positional embedding, so the
recurrence makes one.  Take the first r primes L_1 < ... < L_r whose product is >= N
(:func:`crt_moduli`).  Ring i is L_i ReLU units holding ``onehot(t mod L_i)`` at position t; by
the Chinese remainder theorem two positions t != j < N differ in at least one ring.  Hidden
units (``R = ΣL_i``, ``d = 2R + A + 1``)::

    RING_i [o_i, o_i + L_i)          onehot(t mod L_i)   at symbol tokens; 0 at the query
    QRY_i  [R + o_i, R + o_i + L_i)  onehot(p mod L_i)   at the query token; 0 elsewhere
    ONE    [2R, 2R + A)              onehot(s_t)         at symbol tokens; 0 at the query
    FLAG   2R + A                    1 at the query token, 0 elsewhere

One Elman layer, ``h_t = ReLU(x_t W_x + h_{t-1} W_h + b)`` with ``x_t = E[token]`` (``d_in = d``)::

    E[a]   = onehot(a) on ONE               E[A+p] = FLAG + Σ_i onehot(p mod L_i) on QRY_i
    QRY, ONE, FLAG: W_x = I, W_h = 0, b = 0      (the token passes through: 0/1 values)
    RING_i unit u:  z_u = h_{u-1} - FLAG_t                       (u >= 1; a cyclic shift)
                    z_0 = 1 - Σ_{v < L_i - 1} h_v - FLAG_t

Why: before position 0 the state is 0, so ``z_0 = 1`` and ring i starts at ``onehot(0)``.  If
the previous ring is ``onehot(v)``, ``z_0 = [v = L_i - 1]`` and ``z_u = [v = u - 1]``: one step
of the cycle, so symbol position t holds ``onehot(t mod L_i)``.  At the query token (FLAG = 1,
the last position) every ring z is ``(0 or 1) - 1 <= 0``: the rings read 0 there.  Every hidden
value is 0 or 1 (exact in any format), and every row has exactly ``r + 1`` ones (one per ring
and the symbol, or p's r residues and the flag).

**The norms.**  RMSNorm of a row with ``r + 1`` ones among d entries gives the same value
``c = 1/sqrt((r+1)/d + eps)`` on those ones at every position (g = 1, b = 0), and ``ln1`` again:
``u_j = c · h_j``, all rows scaled alike, so the normalised rows keep the 0/1 pattern.

**Attention** (one head, ``d_k = R``, ``d_v = A``, scale 1, no MLP, causal)::

    W_Q = β [QRY -> I_R]    q = β c · (onehot(p mod L_i))_i      at the query token
    W_K =   [RING -> I_R]   k_j = c · (onehot(j mod L_i))_i       (0 at the query token)
    W_V =   [ONE -> I_A]    v_j = c · onehot(s_j), v_n = 0
    W_O =   [I_A -> ONE],   readout = the ONE block

The score of position j is ``β c² m_j`` with ``m_j`` the number of rings where ``j ≡ p``:
``m_p = r``, every other ``m_j <= r - 1`` (CRT), and the query position scores 0.  With the gap
``G = β c²`` chosen as ``ln(max(N - 1, 1)/λ)`` (λ = 1/4), the N - 1 other positions weigh at
most ``(N - 1) e^{-G} <= λ`` relative to the target.  The output at the ONE block is
``Σ_j w_j v_j / Z``: its entry ``s_p`` is ``>= c w_p / Z``, every other entry ``<= c λ w_p / Z``,
so argmax = s_p for λ < 1.

**The split's agreed shift** (``prenorm_score_shift``) is ``sqrt(d) ||W_K q|| = β c² sqrt(r (r+1))``
(``||u|| = sqrt(d)``, ``||W_K q|| = β c sqrt(r)``), so the target's term is ``e^{-slack}`` with
``slack = G (sqrt(r(r+1)) - r) < G / 2``: ``w_p > sqrt(λ / (N - 1))`` (0.015 at N = 1100), far
above a 16-bit grid's step 2^-15; a wrong term is at most ``w_p e^{-G} = w_p λ/(N - 1)``, below
half a step there, so at bfloat16 and float16 the wrong terms round to 0
(``report["wrong_terms_vanish"]``) and attention is exactly hard.  At the model's precision q, k
and c are rounded; the report recomputes the gap from the rounded model (``gap``, ``leak_bound``).

Width ``d = 2ΣL_i + A + 1`` with r ~ ln N / ln ln N primes, i.e. O(log² N / log log N), not
O(log N): a binary position code would need an XOR of the state per step, which one ReLU layer
with 0/1 units cannot compute (XOR is not a threshold function), and a ring cannot be
overwritten with the query's residues at the last token (ReLU of ``shift - 1 + 1`` is the shift,
not 1), hence the separate QRY block.  State (what Alice sends in the hybrid split): d numbers.

Examples
--------
>>> import numpy as np
>>> c = make_hybrid_index_lookup(6, "bfloat16")
>>> crt_moduli(7), c.width                      # rings 2, 3, 5: d = 2·10 + 2 + 1
((2, 3, 5), 23)
>>> c.predict(np.array([[0, 1, 1, 0, 0, 1, 2 + 2], [0, 1, 1, 0, 0, 1, 2 + 5]])).tolist()
[[1], [1]]
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .index_lookup import all_index_lookup_inputs

__all__ = ["make_hybrid_index_lookup", "crt_moduli", "hybrid_lookup_width", "SPECS"]


def crt_moduli(N: int) -> tuple[int, ...]:
    """The first primes whose product is at least ``N`` (at least one: 2).

    >>> crt_moduli(1), crt_moduli(7), crt_moduli(31), crt_moduli(1101)
    ((2,), (2, 3, 5), (2, 3, 5, 7), (2, 3, 5, 7, 11))
    """
    out, prod, cand = [], 1, 2
    while prod < N or not out:
        if all(cand % q for q in out):
            out.append(cand)
            prod *= cand
        cand += 1
    return tuple(out)


def hybrid_lookup_width(n: int, alphabet: int = 2) -> int:
    """``d = 2ΣL_i + A + 1`` at n symbols (N = n + 1): the width :func:`make_hybrid_index_lookup` builds.

    >>> [hybrid_lookup_width(n) for n in (1, 6, 29, 209, 1100, 30029)]
    [7, 23, 23, 37, 59, 85]
    """
    return 2 * sum(crt_moduli(int(n) + 1)) + int(alphabet) + 1


def _weights(n: int, A: int, beta: float):
    """The hybrid's parameters (module docstring): ``(ElmanLayer, own params, layout)``."""
    from models.recurrent.elman import ElmanLayer

    N, mods = n + 1, crt_moduli(n + 1)
    R = sum(mods)
    d, one, flag = 2 * R + A + 1, slice(2 * R, 2 * R + A), 2 * R + A
    offsets = np.concatenate([[0], np.cumsum(mods)[:-1]]).astype(int)
    V = A + n
    E = np.zeros((V, d))                                        # (V, d_in = d)
    E[np.arange(A), 2 * R + np.arange(A)] = 1.0                 # symbol a -> ONE
    E[A:, flag] = 1.0                                           # query p -> FLAG
    p = np.arange(n)
    for o, L in zip(offsets, mods):
        E[A + p, R + o + p % L] = 1.0                           # ... and onehot(p mod L) on QRY_i
    W_x = np.eye(d)                                             # (d_in, d): E passes into every unit
    W_h = np.zeros((d, d))                                      # (d, d): row = from, column = to
    b = np.zeros(d)
    for o, L in zip(offsets, mods):
        W_x[o:o + L, o:o + L] = 0.0                             # rings read no token ...
        W_x[flag, o:o + L] = -1.0                               # ... but the flag, which zeroes them
        W_h[o + np.arange(L - 1), o + np.arange(1, L)] = 1.0    # u-1 -> u (u >= 1)
        W_h[o:o + L - 1, o] -= 1.0                              # z_0 = 1 - Σ_{v < L-1} h_v
        b[o] = 1.0
    layer = ElmanLayer(d, d, {"W_x": W_x, "W_h": W_h, "b": b}, nonlinearity="relu")
    own = {"tok_emb": E, "norm_f.g": np.ones(d), "norm_f.b": np.zeros(d),
           "attn.ln1.g": np.ones(d), "attn.ln1.b": np.zeros(d),
           "attn.ln2.g": np.ones(d), "attn.ln2.b": np.zeros(d)}
    W_Q, W_K = np.zeros((1, d, R)), np.zeros((1, d, R))        # (H, d, d_k)
    W_Q[0, R:2 * R, :] = beta * np.eye(R)
    W_K[0, :R, :] = np.eye(R)
    W_V = np.zeros((1, d, A))                                   # (H, d, d_v)
    W_V[0, one, :] = np.eye(A)
    W_O = np.zeros((1, A, d))                                   # (H, d_v, d)
    W_O[0, :, one] = np.eye(A)
    readout = np.zeros((d, A))                                  # (d, C)
    readout[one, :] = np.eye(A)
    own.update({"attn.W_Q": W_Q, "attn.b_Q": np.zeros((1, R)), "attn.W_K": W_K, "attn.b_K": np.zeros((1, R)),
                "attn.W_V": W_V, "attn.b_V": np.zeros((1, A)), "attn.W_O": W_O, "attn.b_O": np.zeros(d),
                "readout.W": readout, "readout.b": np.zeros(A)})
    layout = {"RING": [int(o) for o in offsets], "QRY": R, "moduli": list(mods), "ONE": [2 * R, 2 * R + A],
              "FLAG": flag, "d": d}
    return layer, own, layout, N


def make_hybrid_index_lookup(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """The hybrid (one ReLU Elman layer + one attention layer) for Index Lookup with n symbols.

    Options: ``alphabet`` (2), ``leak`` (λ, 1/4: the other positions' weight relative to the target).
    ``seed`` is unused (no random choice); it is accepted as by every builder.
    """
    from models.transformer.hybrid import Hybrid

    opts = check_options("index-lookup-hybrid", options, ("alphabet", "leak"))
    A, lam = int(opts.get("alphabet", 2)), float(opts.get("leak", 0.25))
    if A < 2:
        raise InvalidParameterError(f"alphabet must be >= 2, got {A}")
    if not 0 < lam < 1:
        raise InvalidParameterError(f"leak must be in (0, 1), got {lam}")
    prec = precision_of(precision)
    N, r = n + 1, len(crt_moduli(n + 1))
    d = hybrid_lookup_width(n, A)
    eps = 1e-5                                                  # Hybrid's ln_eps
    c = 1.0 / math.sqrt((r + 1) / d + eps)                      # the normalised value of a one
    gap = math.log(max(N - 1, 1) / lam)                         # G = β c²
    layer, own, layout, _ = _weights(n, A, gap / c ** 2)
    model = Hybrid(A + n, [layer], 1, sum(layout["moduli"]), A, 0, A, causal=True,
                   layer_norm=True, norm="rms", attn_scale=1.0, precision=prec, params=own, ln_eps=eps)
    report = {"alphabet": A, **layout, "rings": r, "leak": lam, "beta": gap / c ** 2, **_achieved(model, n, A, lam)}
    return Construction("index-lookup-hybrid", "index-lookup", n, N, model, d, 1, 1, prec, report,
                        "COMMCOMP-IL-Hybrid", "[D✓]", (n,), "symbol", A)


def _achieved(model, n: int, A: int, lam: float) -> dict:
    """The gap, leak bound and split slack of the built (rounded) model, read off its own arrays."""
    N = n + 1
    tokens = np.zeros((1, N), dtype=np.int64)
    tokens[0, -1] = A                                           # query p = 0
    x = model.hidden(tokens)                                    # (1, N, d)
    u = np.asarray(model.block.attn_input(x))                   # (1, N, d)
    q = np.asarray(model.query(x[:, -1, :]))[0, 0]              # (d_k,)
    k = np.asarray(model.block.heads(model.block.attn_input(x), "K"))[0, 0]  # (N, d_k)
    scores = k @ q                                              # (N,), scale 1
    top = float(scores[0])
    others = scores[1:]                                         # target p = 0
    gap = float(top - others.max())                             # N >= 2
    leak = float(np.exp(others - top).sum())
    from models.transformer.split import prenorm_score_shift
    shift = float(np.asarray(prenorm_score_shift(np, model.block_w, q[None, None, :], model.d_model, 1.0))[0, 0])
    slack = shift - float(scores[0])
    bound = (N - 1) * math.exp(-gap)
    out = {"c": float(u.max()), "gap": gap, "leak_instance": leak, "leak_bound": bound,
           "target_weight_min": 1.0 / (1.0 + bound), "split_slack": slack}
    grid = model.attention_grid(N) if model.precision is not None else None
    if grid is not None:  # the weight grid's step is 1 / scale: do the wrong terms round to 0?
        out["wrong_terms_vanish"] = bool(math.exp(-slack - gap) < 0.5 / grid.weight.scale)
    return out


SPECS = (
    ConstructionSpec(
        "index-lookup-hybrid", "index-lookup", "hybrid", 1, "COMMCOMP-IL-Hybrid", "[D✓]",
        make_hybrid_index_lookup, "2ΣL_i + |Σ| + 1, L_i = the first primes with ΠL_i >= N",
        "ReLU Elman rings count t mod L_i (CRT position code); the query token zeroes them and carries "
        "p's residues in its own block; one attention head matches residues and reads the symbol",
        exhaustive_max_n=10, inputs=all_index_lookup_inputs, aliases=("il-hybrid", "hybrid-lookup"),
        default=False, width_of=hybrid_lookup_width),
)
