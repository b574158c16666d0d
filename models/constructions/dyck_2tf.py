"""A 2-layer Transformer of width O(log N) for bounded Dyck-(2,2) (BHBK-Dyck-2TF, commcomp's weights).

Task format (``reductions.tasks.dyck``): 2n brackets at positions ``0..2n-1``, then ``[CLS]`` at
``2n`` (N = 2n + 1); ids ``0 1 2 3 4`` = ``( [ ) ] [CLS]``; the answer (1 iff well nested with
depth <= 2, and ``[CLS]`` exactly at the end) is read at position 2n.  Every token of the alphabet
may sit anywhere: a ``[CLS]`` before the end, or a bracket at the end, is answered 0.

**The language as local conditions.**  Positions 0-indexed, ``d_i`` the depth after token i.  In a
well-nested string of depth <= 2 the depth moves by ±1, so ``d_i`` has the parity of ``i + 1``:
after an even position it is 1, after an odd one 0 or 2.  Hence (lemma) a bracket string of
length 2n is in Dyck-(2,2) iff

* (C0) token 0 is an opener;
* (C1) at even i >= 2: if token i-1 is an opener (depth 2 after it), token i is *its* closer;
  if token i-1 is a closer (depth 0), token i is an opener;
* (C2) at odd i, if token i is a closer, it closes the bracket open at depth 1, which is the
  *latest opener at an even position j < i*;
* (C3) token 2n-1 is a closer (depth 0 at the end).

Proof: by induction on i, if (C0)-(C2) hold up to i, the prefix is a legal run with the depths
above.  At even i the depth before is 0 or 2 according to token i-1 (C0 at i = 0), and C1 is
exactly the legal move (from 2 only the matching pop; from 0 only a push).  At odd i the depth
before is 1; a push is legal (depth 2) and a pop must match the depth-1 bracket.  That bracket was
pushed at an even position (0 -> 1) and is still open; every even position after it holds a
closer (a depth-2 pop, 2 -> 1), so it is the latest even-position opener.  C3 makes the end depth
0.  Conversely every string of the language satisfies C0-C3 by the same depths.  With ``[CLS]``:
(C4) no ``[CLS]`` before position 2n, (C5) token 2n is ``[CLS]``.

So the model needs, at every position, its own token, *the previous token* (C1) and *the type of
the latest even-position opener* (C2): two heads of layer 1.  MLP 1 turns C0-C5 into violation
flags that are exactly 0 on a valid string, layer 2 at ``[CLS]`` detects any flag.

Residual stream (width ``d = 2k + 17``, ``k = ceil(log2 N)``; ``+1`` with ``recency="scalar"``)::

    TOK  O0 O1 C0 C1 CLS   one-hot token (``tok_emb``)
    POS  EV ODD F0 LB LAST  parity of a bracket position i < 2n, i = 0, i = 2n-1, i = 2n
    KEY  k                 s_i: the bits of i as ±1 (LSB first), every position
    PRV  k                 s_{i-1} at i >= 1 (0 at i = 0)
    RP   1                 i / N (only ``recency="scalar"``)
    PO0 PO1 PC             layer-1 head A: the previous token (opener type, closer)
    R0 R1                  layer-1 head B: the type of the latest even-position opener
    E  OUT                 MLP-1 violation sum; layer-2 output at [CLS]

**Layer 1, head A (previous token).**  ``q_i = β s_{i-1}``, ``k_j = s_j``, ``v_j = (O0, O1, C0+C1)``.
The score is ``βk`` at j = i - 1 and ``β(k - 2·hamming)`` elsewhere, so the other positions weigh at
most ``λ_A = (1 + e^{-2β})^k - 1`` relative to the target (``codes.leak``); β is the smallest power
of two with ``λ_A <= 1/16`` (exact in every format).  Output within ``ε = λ/(1+λ)`` of the
previous token's features, every entry in [0, 1].

**Layer 1, head B (recency).**  Constant query, key ``(s_j, O_j, EV_j)``, query ``(2^0, ..., 2^{k-1},
L, L)``: score ``L·(O_j + EV_j) + Σ_b 2^b s_{j,b} = L·(O_j + EV_j) + 2j - (2^k - 1)``.  The candidates
(even-position openers) score ``2L + 2j + const``; the latest one j* beats the m-th earlier candidate
by at least ``4m`` (they are >= 2 apart) and every non-candidate j <= i by at least ``L - 2N``.  With
L the smallest power of two >= ``2N + ln(16 N)``: ``λ_B <= 1/(e^4 - 1) + 1/16 < 0.082``; value
``(O0_j, O1_j)``.  Every product in a score is an integer times a power of two, so the scores are
exact in the compute dtype (integers below 2^(k+3)) whatever the activation format holds: the keys
are ±1 and 0/1, the query entries powers of two.  This is why bfloat16 suffices.  The variant
``recency="scalar"`` (the textbook form: key ``i/N`` in one coordinate, query ``2N``) needs about
``log2 N + 3`` mantissa bits for ``i/N`` and fails at bfloat16 beyond a few hundred tokens; it
holds at float32.

**MLP 1** (9 ReLU units, all written to E; ``G = EV - F0`` marks even i >= 2; ε <= 0.076)::

    C0:  ReLU(F0 - O0 - O1)                      1 iff i = 0 and no opener (exact 0/1 inputs)
    C1:  ReLU(2 PO_a - 2 C_a + 2 G - 3), a = 0,1   prev opener a, token not its closer
         ReLU(2 PC - 2 O0 - 2 O1 + 2 G - 3)        prev closer, token not an opener
    C2:  ReLU(2 C_a - 2 R_a + 2 ODD - 3), a = 0,1  closer a, latest even opener not a
    C3:  ReLU(LB - C0 - C1);  C5: ReLU(LAST - CLS);  C4: ReLU(CLS - LAST)

With exact 0/1 inputs the argument of a C1/C2 unit is 1 on a violation and <= -1 otherwise; each
approximate input moves it by at most 2ε, so a violation gives >= ``e_min = 1 - 2ε - 1/32`` (1/32:
slack for rounding at >= 8 mantissa bits) and a non-violation a negative argument, hence exactly 0.
The C2 unit is right where it matters: if C0-C2 hold before i, an even-position opener exists
(position 0), and by the lemma head B finds the depth-1 bracket.  So on a valid string every flag
is exactly 0, and on an invalid one the *first* violated position has E >= e_min (later flags
are >= 0, whatever garbage the heads read there).

**Layer 2** (one head; the second head is zero): constant query ``β₂``, key and value E,
``W_O -> OUT``.  Valid: every value is 0, OUT = 0 exactly.  Invalid: with ``s = e_min/2``,
``OUT >= s·P(E >= s)`` and ``P(E >= s) >= 1/(1 + N e^{-β₂ e_min/2}) = 4/5`` for
``β₂ = 2 ln(4N)/e_min``, so OUT >= 0.4 e_min.  **Readout**: logits ``(OUT, θ)``, ``θ = e_min/5``:
class 1 (valid) iff OUT < θ.

Examples
--------
>>> import numpy as np
>>> c = make_dyck_2tf(3, "bfloat16")
>>> c.width, c.layers, c.heads, c.length
(23, 2, 2, 7)
>>> tokens = np.array([[1, 0, 2, 3, 0, 2, 4],     # [ ( ) ] ( ) [CLS]   valid
...                    [0, 1, 0, 2, 3, 2, 4],     # ( [ ( ) ] ) [CLS]   depth 3
...                    [1, 0, 2, 2, 0, 2, 4]])    # [ ( ) ) ( ) [CLS]   `]` expected
>>> c.predict(tokens).ravel().tolist()
[1, 0, 0]
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .dyck_rnn import all_bracket_tokens
from .jl import binary_codes
from .layout import Layout, Weights, build_transformer_model

__all__ = ["make_dyck_2tf", "dyck_2tf_width", "all_dyck_alphabet_tokens", "SPECS", "RECENCY"]

O0, O1, C0, C1, CLS = range(5)  # token ids of Dyck-(2,2)
RECENCY = ("binary", "scalar")
#: Slack in e_min for rounding the residual stream (formats with >= 8 mantissa bits).
ROUNDING_SLACK = 1.0 / 32.0
_UNITS = 9


def _pow2_at_least(x: float) -> float:
    return 2.0 ** math.ceil(math.log2(max(x, 1.0)))


def dyck_2tf_width(n: int, recency: str = "binary") -> int:
    """``2 ceil(log2 N) + 17`` for N = 2n + 1 (``+ 1`` with ``recency="scalar"``).

    >>> [dyck_2tf_width(n) for n in (3, 470, 7552)]
    [23, 37, 45]
    """
    k = max(1, (2 * int(n)).bit_length())  # ceil(log2(2n + 1))
    return 2 * k + 17 + (recency == "scalar")


def make_dyck_2tf(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """The 2-layer Dyck-(2,2) Transformer at n (2n brackets, N = 2n + 1); the module docstring
    derives every weight.

    Options: ``recency`` (``"binary"``: exact scores, holds at bfloat16; ``"scalar"``: the key
    ``i/N``, needs ~log2 N mantissa bits), ``leak`` (head A's λ, default 1/16).
    """
    opts = check_options("dyck-2tf", options, {"recency", "leak"})
    recency = opts.get("recency", "binary")
    if recency not in RECENCY:
        raise InvalidParameterError(f"dyck-2tf: recency must be one of {RECENCY}, got {recency!r}")
    lam = float(opts.get("leak", 1.0 / 16.0))
    if not 0.0 < lam <= 0.25:
        raise InvalidParameterError(f"dyck-2tf: leak must be in (0, 1/4], got {lam}")
    prec = precision_of(precision)
    N, M = 2 * n + 1, 2 * n
    codes = binary_codes(N)
    k = codes.k
    lay = Layout()
    tok = lay.add("TOK", 5)
    names = ("EV", "ODD", "F0", "LB", "LAST")
    for nm in names:
        lay.add(nm, 1)
    ev, odd, f0, lb, last = (lay.index(nm) for nm in names)
    key, prv = lay.add("KEY", k), lay.add("PRV", k)
    rp = lay.add("RP", 1).start if recency == "scalar" else None
    po0, po1, pc, r0, r1, e, out = (lay.add(nm, 1).start for nm in ("PO0", "PO1", "PC", "R0", "R1", "E", "OUT"))
    d_k = k + 2
    w = Weights(lay.d, vocab=5, max_len=N, layers=2, heads=2, d_k=d_k, d_v=3, d_mlp=_UNITS, n_out=2)
    p = w.p
    t0 = tok.start
    p["tok_emb"][np.arange(5), t0 + np.arange(5)] = 1.0            # (5, d) one-hot tokens
    S = codes.signs.astype(np.float64)                             # (N, k) s_i
    i = np.arange(N)
    pe = p["pos_emb"]                                              # (N, d)
    pe[i[:M], ev] = (i[:M] % 2 == 0)
    pe[i[:M], odd] = (i[:M] % 2 == 1)
    pe[0, f0] = 1.0
    pe[M - 1, lb] = 1.0
    pe[M, last] = 1.0
    pe[:, key] = S
    pe[1:, prv] = S[:-1]                                           # s_{i-1}; 0 at i = 0
    if rp is not None:
        pe[:, rp] = i / N

    # layer 1, head A: previous token
    beta = _pow2_at_least(1.0)
    while codes.leak(beta) > lam:
        beta *= 2.0
    p["l0.W_Q"][0, prv, :k] = beta * np.eye(k)
    p["l0.W_K"][0, key, :k] = np.eye(k)
    p["l0.W_V"][0, [t0 + O0, t0 + O1, t0 + C0, t0 + C1], [0, 1, 2, 2]] = 1.0
    p["l0.W_O"][0, [0, 1, 2], [po0, po1, pc]] = 1.0
    # layer 1, head B: the latest even-position opener
    L = _pow2_at_least(2.0 * N + math.log(16.0 * N))
    if rp is None:
        p["l0.W_K"][1, key, :k] = np.eye(k)
        p["l0.b_Q"][1, :k] = 2.0 ** np.arange(k)                   # Σ_b 2^b s_b = 2j - (2^k - 1)
    else:
        p["l0.W_K"][1, rp, 0] = 1.0
        p["l0.b_Q"][1, 0] = 2.0 * N                                # 2N · j/N = 2j
    p["l0.W_K"][1, [t0 + O0, t0 + O1], k] = 1.0
    p["l0.W_K"][1, ev, k + 1] = 1.0
    p["l0.b_Q"][1, k:] = L
    p["l0.W_V"][1, [t0 + O0, t0 + O1], [0, 1]] = 1.0
    p["l0.W_O"][1, [0, 1], [r0, r1]] = 1.0
    lam_a = codes.leak(beta)
    lam_b = 1.0 / math.expm1(4.0) + N * math.exp(-(L - 2.0 * N))
    eps = max(lam_a, lam_b) / (1.0 + max(lam_a, lam_b))
    e_min = 1.0 - 2.0 * eps - ROUNDING_SLACK

    # MLP 1: the violation flags (module docstring), every unit into E
    W1, b1 = p["l0.mlp.W1"], p["l0.mlp.b1"]                        # (d, 9), (9,)
    T = {a: t0 + a for a in range(5)}

    def unit(u, coeffs, bias):
        for row, c in coeffs:
            W1[row, u] += c
        b1[u] = bias

    unit(0, [(f0, 1.0), (T[O0], -1.0), (T[O1], -1.0)], 0.0)                                # C0
    for a, (po, ca) in enumerate(((po0, T[C0]), (po1, T[C1]))):
        unit(1 + a, [(po, 2.0), (ca, -2.0), (ev, 2.0), (f0, -2.0)], -3.0)                  # C1 opener
    unit(3, [(pc, 2.0), (T[O0], -2.0), (T[O1], -2.0), (ev, 2.0), (f0, -2.0)], -3.0)         # C1 closer
    for a, (ca, ra) in enumerate(((T[C0], r0), (T[C1], r1))):
        unit(4 + a, [(ca, 2.0), (ra, -2.0), (odd, 2.0)], -3.0)                             # C2
    unit(6, [(lb, 1.0), (T[C0], -1.0), (T[C1], -1.0)], 0.0)                                # C3
    unit(7, [(last, 1.0), (T[CLS], -1.0)], 0.0)                                            # C5
    unit(8, [(T[CLS], 1.0), (last, -1.0)], 0.0)                                            # C4
    p["l0.mlp.W2"][:, e] = 1.0

    # layer 2: [CLS] detects a flag
    beta2 = 2.0 * math.log(4.0 * N) / e_min
    p["l1.b_Q"][0, 0] = beta2
    p["l1.W_K"][0, e, 0] = 1.0
    p["l1.W_V"][0, e, 0] = 1.0
    p["l1.W_O"][0, 0, out] = 1.0
    theta = e_min / 5.0
    p["readout.W"][out, 0] = 1.0
    p["readout.b"][1] = theta
    model = build_transformer_model(w, precision=prec)
    report = {"k": k, "recency": recency, "beta": beta, "L": L, "leak_prev": lam_a, "leak_recency": lam_b,
              "eps": eps, "e_min": e_min, "beta2": round(beta2, 6), "threshold": theta,
              "layout": lay.describe()}
    return Construction("dyck-2tf", "dyck", n, N, model, model.d_model, 2, 2, prec, report,
                        "BHBK-Dyck-2TF", "[D✓]", (M,), "bool", 2)


def all_dyck_alphabet_tokens(n: int) -> np.ndarray:
    """Every string of N = 2n + 1 tokens over the whole alphabet ``( [ ) ] [CLS]``: ``(5^N, N)``."""
    N = 2 * n + 1
    r = np.arange(5 ** N, dtype=np.int64)
    out = np.empty((r.size, N), dtype=np.int64)
    for j in range(N - 1, -1, -1):
        out[:, j] = r % 5
        r //= 5
    return out


def _inputs(n: int) -> np.ndarray:
    return all_bracket_tokens(n)


SPECS = (
    ConstructionSpec(
        name="dyck-2tf", task="dyck", arch="transformer", layers=2, heads=2, source="BHBK-Dyck-2TF",
        tag="[D✓]", builder=make_dyck_2tf, exhaustive_max_n=4, inputs=_inputs, default=False,
        width_formula="2 ceil(log2 N) + 17: two binary position codes; 5 token, 5 position, 5 head, 2 flag channels",
        description="layer 1 reads the previous token and the latest even-position opener; MLP flags "
                    "the parity conditions; layer 2 at [CLS] detects a flag",
        aliases=("dyck-2-layer", "bhbk-dyck-2tf")),
)
