"""A 2-layer Transformer for induction heads (the SHT 2024 upper bound side; Bietti et al.'s two heads).

Task format (``reductions.tasks.induction_heads``): tokens sigma_0 .. sigma_{N-1}, ids ``< s`` (|Sigma| = s,
default s = 3 as the task's default and the INDEX partition; option ``alphabet``); the answer at N-1 is sigma_{j+1} for the rightmost j < N-1 with sigma_j = sigma_{N-1},
else bottom, written as id s.

Residual (width ``3s + 2c + 3``, c = ceil(log2 N))::

    TOK    s    onehot(sigma_p)                     OWN    c   ±1 bits of p
    PRV    s    layer 1 writes ~onehot(sigma_{p-1}) PRVPOS c   ±1 bits of p - 1 (of 0 at p = 0)
    OUT  s + 1  layer 2 writes the answer here      TIE    1   p / (4N) (0 at p = 0)
                                                    START  1   1 at p = 0

**Layer 1** (previous-token head): ``W_Q = beta1 [PRVPOS -> I]``, ``W_K = [OWN -> I]``, value TOK into
PRV.  Position p-1 scores ``beta1 c``, every other j at Hamming distance h scores ``2 beta1 h`` lower, so
the mass off p-1 is at most ``leak = (1 + e^{-2 beta1})^c - 1``; beta1 is chosen with leak <= lambda1 =
1/(8N), so ``PRV_p = sum_i alpha_i onehot(sigma_i)`` with alpha_{p-1} >= 1 - eps1, eps1 <= 1/(8N), and
every coordinate of PRV lies in [0, 1] (a convex combination of one-hots).  At p = 0 the head can only
see itself: PRV_0 = onehot(sigma_0) exactly.
**MLP 1** clears TOK and PRV at p = 0: hidden ``ReLU(TOK_i + START - 1)`` and ``ReLU(PRV_i + START - 1)``
subtracted back.  At p = 0 they equal TOK_i and PRV_i (both in {0, 1}); at p >= 1 they are 0 (TOK_i <= 1,
PRV_i <= 1).  So position 0 becomes the *sink*: PRV 0, TOK 0, START 1.
**Layer 2** (at N-1): query ``beta2 [TOK ; 1 ; 1/2]``, key ``[PRV ; TIE ; START]``, value ``[TOK ; START]``
into OUT.  In units of beta2 the score of j >= 1 is ``<onehot(sigma_{N-1}), PRV_j> + j/(4N)``: in
``[1 - eps1, 1] + j/(4N)`` when sigma_{j-1} = sigma_{N-1} (a *match*: the token after the occurrence at
j-1 is sigma_j), in ``[0, eps1] + j/(4N)`` otherwise; the sink scores 1/2.  Hence, with eps1 <= 1/(8N):
the rightmost match beats an earlier match by >= 1/(4N) - eps1 >= 1/(8N), a non-match by >= 1/2, the
sink by >= 3/8; with no match the sink beats every j by >= 1/8.  The winner leads everything by
u >= 1/(8N), so with ``beta2 = 8N ln(4N)`` the others weigh at most N e^{-beta2 u} = 1/4 of it: the
winner's value gets >= 4/5 of the attention and every other class <= 1/5.  The readout is OUT: argmax
is sigma_j of the rightmost match, or class s (bottom) from the sink's START.
Precision: scores are at most 7/4 beta2 = O(N log N) (O(log N) integer bits) and the weights that
matter are >= 1/(4N) (O(log N) fraction bits): p = O(log N), as SHT 2024 state; width O(s + log N)
(O(log N) with |Sigma| fixed: an alphabet embedding of log s dims would do, not built here).

Examples
--------
>>> import numpy as np
>>> c = make_induction_heads(6, "float32", alphabet=6)
>>> c.predict(np.array([[2, 0, 1, 2, 3, 1], [2, 0, 1, 2, 3, 4], [5, 5, 5, 5, 5, 5]])).tolist()
[[2], [6], [5]]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import beta_for_leak, binary_codes
from .layout import Layout, Weights, build_transformer_model

__all__ = ["make_induction_heads", "all_induction_inputs", "SPECS"]


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
    lay = Layout()
    tok, prv, out = lay.add("TOK", s), lay.add("PRV", s), lay.add("OUT", s + 1)
    own, prvpos = lay.add("OWN", c), lay.add("PRVPOS", c)
    tie, start = lay.add("TIE", 1).start, lay.add("START", 1).start
    w = Weights(lay.d, vocab=s, max_len=N, layers=2, heads=1, d_k=max(c, s + 2), d_v=s + 1,
                d_mlp=2 * s, n_out=s + 1)
    p = w.p
    S = codes.signs.astype(np.float64)  # (N, c)
    p["tok_emb"][np.arange(s), tok.start + np.arange(s)] = 1.0
    p["pos_emb"][:, own] = S
    p["pos_emb"][1:, prvpos] = S[:-1]
    p["pos_emb"][0, prvpos] = S[0]
    p["pos_emb"][1:, tie] = np.arange(1, N) / (4.0 * N)
    p["pos_emb"][0, start] = 1.0
    # layer 1: previous-token head, leak <= 1/(8N)
    lam1 = 1.0 / (8.0 * N)
    beta1 = beta_for_leak(codes.leak, lam1)
    p["l0.W_Q"][0, prvpos, :c] = beta1 * np.eye(c)
    p["l0.W_K"][0, own, :c] = np.eye(c)
    p["l0.W_V"][0, tok, :s] = np.eye(s)
    p["l0.W_O"][0, :s, prv] = np.eye(s)
    # MLP 1: clear TOK and PRV at the sink (p = 0)
    hid = np.arange(2 * s)
    p["l0.mlp.W1"][np.r_[tok.start + np.arange(s), prv.start + np.arange(s)], hid] = 1.0
    p["l0.mlp.W1"][start, hid] = 1.0
    p["l0.mlp.b1"][:] = -1.0
    p["l0.mlp.W2"][hid, np.r_[tok.start + np.arange(s), prv.start + np.arange(s)]] = -1.0
    # layer 2: rightmost match, recency tie-break, sink at 1/2
    beta2 = 8.0 * N * math.log(4.0 * N)
    p["l1.W_Q"][0, tok, :s] = beta2 * np.eye(s)
    p["l1.b_Q"][0, s] = beta2
    p["l1.b_Q"][0, s + 1] = beta2 / 2.0
    p["l1.W_K"][0, prv, :s] = np.eye(s)
    p["l1.W_K"][0, tie, s] = 1.0
    p["l1.W_K"][0, start, s + 1] = 1.0
    p["l1.W_V"][0, tok, :s] = np.eye(s)
    p["l1.W_V"][0, start, s] = 1.0
    p["l1.W_O"][0, :s + 1, out] = np.eye(s + 1)
    p["readout.W"][out, :] = np.eye(s + 1)
    model = build_transformer_model(w, precision=prec)
    report = {"alphabet": s, "position_code_k": c, "beta1": round(beta1, 6), "lambda1": lam1,
              "beta2": round(beta2, 6), "gap_units": 1.0 / (8 * N), "layout": lay.describe()}
    return Construction("induction-heads-2tf", "induction-heads", N, N, model, model.d_model, 2, 1, prec,
                        report, "COMMCOMP-IH-2TF", "[D✓]", (N - 1,), "symbol", s + 1)


def all_induction_inputs(n: int, alphabet: int | None = None) -> np.ndarray:
    """Every sequence of length n over an alphabet of size ``alphabet`` (default 3): ``(s^n, n)``."""
    s = alphabet or 3
    return np.array(list(itertools.product(range(s), repeat=n)), dtype=np.int64).reshape(-1, n)


SPECS = (
    ConstructionSpec(
        "induction-heads-2tf", "induction-heads", "transformer", 2, "COMMCOMP-IH-2TF", "[D✓]",
        make_induction_heads, "3|Sigma| + 2⌈log₂ N⌉ + 3",
        "layer 1 copies the previous token; layer 2 attends to the rightmost position whose previous "
        "token is the current one (a sink at position 0 answers bottom)",
        width_option=None, exhaustive_max_n=8, inputs=all_induction_inputs, aliases=("ih-2tf",)),
)
