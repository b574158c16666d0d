"""A 2-layer Transformer for induction heads (the SHT 2024 upper bound side; Bietti et al.'s two heads).

Task format (``reductions.tasks.induction_heads``): tokens sigma_0 .. sigma_{N-1}, ids ``< s`` (|Sigma| = s,
default s = 3 as the task's default and the INDEX partition; option ``alphabet``); the answer at N-1 is
sigma_{j+1} for the rightmost j < N-1 with sigma_j = sigma_{N-1}, else bottom, written as id s.

Residual (width ``3s + 2c + 2``, c = ceil(log2 N), K = 2^c >= N)::

    TOK    s    onehot(sigma_p)                     OWN    c   s_p: the bits of p as ±1 (LSB first)
    PRV    s    layer 1 writes onehot(sigma_{p-1})  PRVPOS c   s_{p-1} (s_0 at p = 0)
    OUT  s + 1  layer 2 writes the answer here      START  1   1 at p = 0

Every weight below is 0, ±1 or a power of two (S = 3 * 2^(c+1) has two significant bits), so the
queries and keys are exact in every format that holds 2^(c+3) (bfloat16, float16 up to N = 4096,
float32, ``fixed:P:F`` with P - F - 1 >= c + 4); the scores are then integers, up to a perturbation
bounded below, computed exactly in the float32/float64 compute dtype.  This is what makes the weights
hold at bfloat16: the earlier version broke ties by recency with a scalar key ``p / (4N)``, which
needs log2 N + 2 mantissa bits and lost two of 32 random inputs at N = 1091 (bfloat16 keeps 8).

**Layer 1** (previous-token head): ``W_Q = beta1 [PRVPOS -> I]``, ``W_K = [OWN -> I]``, value TOK into
PRV.  ``<s_{p-1}, s_j> = c - 2 hamming(p-1, j)``: position p-1 scores ``beta1 c``, every other j at
Hamming distance h scores ``2 beta1 h`` lower, so the mass off p-1 is at most
``leak = (1 + e^{-2 beta1})^c - 1`` (``codes.leak``).  beta1 is the smallest power of two with
leak <= lambda1 = 1/(64 K).  ``PRV_p`` is a convex combination of one-hots with weight >= 1 - leak on
sigma_{p-1}; rounding to the nearest point of a format that holds 0 and 1 moves each coordinate at most
as far as 0 or 1 is, so after rounding every coordinate of PRV is within 2 lambda1 of onehot(sigma_{p-1}).
At p = 0 the head sees only itself: PRV_0 = onehot(sigma_0).
**MLP 1** clears TOK and PRV at p = 0: hidden ``ReLU(TOK_i + START - 1)`` and ``ReLU(PRV_i + START - 1)``
subtracted back.  At p = 0 they equal TOK_i and PRV_i (both in {0, 1}); at p >= 1 they are 0 (TOK_i <= 1,
PRV_i <= 1 up to one unit of the compute dtype).  So position 0 becomes the *sink*: PRV 0, TOK 0, START 1.
**Layer 2** (at N-1): query ``[L onehot(sigma_{N-1}) ; 2^1, 2^2, ..., 2^c ; S]`` with ``L = 2^(c+3) = 8K``
and ``S = 6K``; key ``[PRV_j ; s_j ; START_j]``; value ``[TOK ; START]`` into OUT.  With
``r_j = sum_b 2^b s_{j,b} = 2j - (K - 1)`` the score of j >= 1 is ``L <onehot(sigma_{N-1}), PRV_j> + 2 r_j``:
``L + 2 r_j`` when sigma_{j-1} = sigma_{N-1} (a *match*: the token after the occurrence at j-1 is TOK_j),
``2 r_j`` otherwise, each up to ``L 2 lambda1 = 1/4`` (plus float32 rounding of sums below 2^15, under
2^-8); the sink scores ``S + 2 r_0 = S - 2(K - 1)``.  Exact differences, with |r_j| <= K - 1:
the rightmost match beats the m-th earlier match by 4m; any match beats the sink by >= 2K + 4 and any
non-match by >= 4K + 4; with no match the sink beats every j by >= 2K + 4.  With the perturbations
(<= 1/2 on a difference) the others weigh, relative to the winner, at most
``sum_m e^{-3.5 m} + N e^{-2K} <= 0.031``: the winner's value gets >= 0.97 of the attention and every
other class <= 0.031.  The readout is OUT: argmax is sigma_j of the rightmost match, or class s
(bottom) from the sink's START.
Precision: scores are integers below 2^(c+4) (O(log N) bits), no weight needs more than two significant
bits: p = O(log N) as SHT 2024 state, and constant mantissa bits (bfloat16's 8) suffice; width
O(s + log N) (O(log N) with |Sigma| fixed; an alphabet embedding of log s dims would do, not built here).

Examples
--------
>>> import numpy as np
>>> c = make_induction_heads(6, "bfloat16", alphabet=6)
>>> c.predict(np.array([[2, 0, 1, 2, 3, 1], [2, 0, 1, 2, 3, 4], [5, 5, 5, 5, 5, 5]])).tolist()
[[2], [6], [5]]
"""

from __future__ import annotations

import itertools

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import binary_codes
from .layout import Layout, Weights, build_transformer_model, round_scalar

__all__ = ["make_induction_heads", "all_induction_inputs", "SPECS"]


def _pow2_beta(leak_of, target: float) -> float:
    """The smallest power of two beta >= 1 with ``leak_of(beta) <= target``."""
    beta = 1.0
    while leak_of(beta) > target:
        beta *= 2.0
    return beta


def make_induction_heads(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """The 2-layer construction at sequence length N = n (module docstring); option ``alphabet``
    (default 3, the task's default)."""
    opts = check_options("induction-heads-2tf", options, {"alphabet"})
    N = int(n)
    s = int(opts.get("alphabet") or 3)
    if N < 2 or s < 2:
        raise InvalidParameterError(f"induction-heads-2tf: need n >= 2 and alphabet >= 2, got {N}, {s}")
    prec = precision_of(precision)
    codes = binary_codes(N)
    c = codes.k
    K = 2 ** c
    L, S = 8.0 * K, 6.0 * K  # match weight and sink score (module docstring)
    for value in (L, S):
        if round_scalar(prec, value) != value:
            raise InvalidParameterError(f"induction-heads-2tf: {prec.name} cannot hold the query weight "
                                        f"{value:g} exactly (need 2^{c + 3}); use a wider format")
    lay = Layout()
    tok, prv, out = lay.add("TOK", s), lay.add("PRV", s), lay.add("OUT", s + 1)
    own, prvpos = lay.add("OWN", c), lay.add("PRVPOS", c)
    start = lay.add("START", 1).start
    w = Weights(lay.d, vocab=s, max_len=N, layers=2, heads=1, d_k=s + c + 1, d_v=s + 1,
                d_mlp=2 * s, n_out=s + 1)
    p = w.p
    sg = codes.signs.astype(np.float64)  # (N, c)
    p["tok_emb"][np.arange(s), tok.start + np.arange(s)] = 1.0
    p["pos_emb"][:, own] = sg
    p["pos_emb"][1:, prvpos] = sg[:-1]
    p["pos_emb"][0, prvpos] = sg[0]
    p["pos_emb"][0, start] = 1.0
    # layer 1: previous-token head, beta1 a power of two with leak <= 1/(64 K)
    lam1 = 1.0 / (64.0 * K)
    beta1 = _pow2_beta(codes.leak, lam1)
    p["l0.W_Q"][0, prvpos, :c] = beta1 * np.eye(c)  # (c, c)
    p["l0.W_K"][0, own, :c] = np.eye(c)
    p["l0.W_V"][0, tok, :s] = np.eye(s)
    p["l0.W_O"][0, :s, prv] = np.eye(s)
    # MLP 1: clear TOK and PRV at the sink (p = 0)
    hid = np.arange(2 * s)
    p["l0.mlp.W1"][np.r_[tok.start + np.arange(s), prv.start + np.arange(s)], hid] = 1.0
    p["l0.mlp.W1"][start, hid] = 1.0
    p["l0.mlp.b1"][:] = -1.0
    p["l0.mlp.W2"][hid, np.r_[tok.start + np.arange(s), prv.start + np.arange(s)]] = -1.0
    # layer 2: L <onehot, PRV_j> + 2 r_j (r_j = 2j - (K - 1) from the ±1 bits, exact) + S at the sink
    p["l1.W_Q"][0, tok, :s] = L * np.eye(s)  # (s, s)
    p["l1.b_Q"][0, s:s + c] = 2.0 ** np.arange(1, c + 1)  # (c,) 2 * 2^b
    p["l1.b_Q"][0, s + c] = S
    p["l1.W_K"][0, prv, :s] = np.eye(s)
    p["l1.W_K"][0, own, s:s + c] = np.eye(c)
    p["l1.W_K"][0, start, s + c] = 1.0
    p["l1.W_V"][0, tok, :s] = np.eye(s)
    p["l1.W_V"][0, start, s] = 1.0
    p["l1.W_O"][0, :s + 1, out] = np.eye(s + 1)
    p["readout.W"][out, :] = np.eye(s + 1)
    model = build_transformer_model(w, precision=prec)
    report = {"alphabet": s, "position_code_k": c, "beta1": beta1, "lambda1": lam1, "match_weight": L,
              "sink_score": S, "recency_margin": 4, "layout": lay.describe()}
    return Construction("induction-heads-2tf", "induction-heads", N, N, model, model.d_model, 2, 1, prec,
                        report, "COMMCOMP-IH-2TF", "[D✓]", (N - 1,), "symbol", s + 1)


def all_induction_inputs(n: int, alphabet: int | None = None) -> np.ndarray:
    """Every sequence of length n over an alphabet of size ``alphabet`` (default 3): ``(s^n, n)``."""
    s = alphabet or 3
    return np.array(list(itertools.product(range(s), repeat=n)), dtype=np.int64).reshape(-1, n)


SPECS = (
    ConstructionSpec(
        "induction-heads-2tf", "induction-heads", "transformer", 2, "COMMCOMP-IH-2TF", "[D✓]",
        make_induction_heads, "3|Sigma| + 2⌈log₂ N⌉ + 2",
        "layer 1 copies the previous token; layer 2 attends to the rightmost position whose previous "
        "token is the current one, recency from ±1 position bits (a sink at position 0 answers bottom)",
        width_option=None, exhaustive_max_n=8, inputs=all_induction_inputs, aliases=("ih-2tf",)),
)
