"""C3: 2-layer Transformers for String Equality and String Disjointness (BHBK-EQ/DISJ-2TF).

Task format (``reductions.tasks.two_strings``): bits ``x_0..x_{n-1}`` at positions ``0..n-1``,
``y_0..y_{n-1}`` at ``n..2n-1``, ``[CLS]`` (id 2) at ``2n``; N = 2n + 1; ids 0, 1 are bits.

Residual stream (width ``d = 2k + 5``, k = ⌈log₂ n⌉ for binary codes)::

    BIT  1   the token's bit (token "1")         ISY  1   1 at y positions (positional)
    KEY  k   s_j at x position j (positional)    R    1   layer-1 output r_i ≈ x_i
    PRT  k   s_i at y position n+i (positional)  E    1   MLP-1 output: the violation e_i
                                                 OUT  1   layer-2 output at [CLS]

**Layer 1** (one head, causal): ``W_Q = β·[PRT -> I]``, ``W_K = [KEY -> I]``, ``W_V = [BIT]``,
``W_O -> R``.  At y position n+i the score of x position j is ``β<s_i, s_j>``, ``βk`` at j = i;
every other position has key 0 and scores 0.  As in C2 the wrong positions weigh at most
``λ = codes.leak(β) + n·e^{-βk}`` relative to the target (β is chosen so λ ≤ 1/4), so
``r_i`` is a convex combination of bits with weight ≥ 1/(1+λ) on x_i:
``|r_i - x_i| ≤ ε₁ = λ/(1+λ) ≤ 1/5``.

**MLP 1** (ReLU, gated by ISY so that it is 0 at x positions and [CLS], where R, BIT ∈ [0, 1]):

    EQ:    E = ReLU(2R - 2BIT + 3·ISY - 4) + ReLU(2BIT - 2R + 3·ISY - 4)
           at y: ReLU(±2(r_i - y_i) - 1): 0 when x_i = y_i (|2(r - y)| ≤ 2ε₁ < 1),
           ≥ 1 - 2ε₁ when x_i ≠ y_i; off y: the arguments are ≤ 2 - 4 < 0.
    DISJ:  E = ReLU(2R + 2BIT + 3·ISY - 6)
           at y: ReLU(2(r_i + y_i) - 3): ≥ 1 - 2ε₁ iff x_i = y_i = 1, else 0 (2(1 + ε₁) < 3).

So ``E_i ∈ {0} ∪ [e_min, 1 + 2ε₁]`` with ``e_min = 1 - 2ε₁``, and E ≠ 0 exactly at violations.

**Layer 2** (the reference's alternative: concentrate on a violation): constant query
``b_Q = β₂``, key and value ``E``, ``W_O -> OUT``.  With no violation every value is 0, so
OUT = 0 exactly.  With one or more, the violations score ≥ β₂·e_min and the other N - 1
positions 0, so their total weight is > 1/2 once ``N·e^{-β₂ e_min} < 1``; we take
``β₂ = ln(4N)/e_min`` (weight ≥ 4/5), so OUT ≥ (4/5)·e_min.  **Readout**: logits
``(OUT, θ)`` with ``θ = e_min/2``: the answer (1 = equal / disjoint) is 1 iff OUT < θ.
Precision: nothing needs 1/N resolution (unlike the uniform-average readout): the scores are at
most β₂(1 + 2ε₁) = O(log N), so O(log log N) integer bits and a few fraction bits.

Examples
--------
>>> import numpy as np
>>> c = make_string_equality(3, "fixed:12:6")
>>> c.width, c.layers
(9, 2)
>>> c.predict(np.array([[1, 0, 1, 1, 0, 1, 2], [1, 0, 1, 1, 1, 1, 2]])).tolist()
[[1], [0]]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import beta_for_leak, make_codes
from .layout import Layout, Weights, build_transformer_model, round_scalar

__all__ = ["make_string_equality", "make_string_disjointness", "all_two_string_inputs", "SPECS"]

CLS = 2
_OPTIONS = ("codes", "k", "gamma", "delta", "leak", "beta")


def _make(kind: str, n: int, precision, seed: int, options) -> Construction:
    name = f"string-{kind}-2tf"
    opts = check_options(name, options, _OPTIONS)
    prec = precision_of(precision)
    N = 2 * n + 1
    codes = make_codes(n, opts.get("codes", "binary"), k=opts.get("k"), gamma=opts.get("gamma", 0.5),
                       delta=opts.get("delta", 0.5), seed=seed)
    k = codes.k
    lay = Layout()
    bit, key, prt = lay.add("BIT", 1), lay.add("KEY", k), lay.add("PRT", k)
    for nm in ("ISY", "R", "E", "OUT"):
        lay.add(nm, 1)
    isy, r, e, out = (lay.index(nm) for nm in ("ISY", "R", "E", "OUT"))
    d_mlp = 2 if kind == "equality" else 1
    w = Weights(lay.d, vocab=3, max_len=N, layers=2, heads=1, d_k=k, d_v=1, d_mlp=d_mlp, n_out=2)
    p = w.p
    S = codes.signs.astype(np.float64)  # (n, k)
    p["tok_emb"][1, bit] = 1.0
    p["pos_emb"][np.arange(n), key] = S              # x position j: key code s_j
    p["pos_emb"][n + np.arange(n), prt] = S          # y position n+i: partner code s_i
    p["pos_emb"][n:2 * n, isy] = 1.0

    # layer 1: y position n+i fetches x_i (leak: codes + the <= n zero-key positions)
    def total_leak(b):
        return codes.leak(b) + n * math.exp(-b * k)

    lam = float(opts.get("leak", 0.25))
    beta = beta_for_leak(total_leak, lam) if opts.get("beta") is None else float(opts["beta"])
    p["l0.W_Q"][0, prt, :] = beta * np.eye(k)
    p["l0.W_K"][0, key, :] = np.eye(k)
    p["l0.W_V"][0, bit, 0] = 1.0
    p["l0.W_O"][0, 0, r] = 1.0
    # MLP 1: the violation E (module docstring)
    W1, b1 = p["l0.mlp.W1"], p["l0.mlp.b1"]
    if kind == "equality":
        W1[[r, bit.start, isy], 0] = (2.0, -2.0, 3.0)
        W1[[r, bit.start, isy], 1] = (-2.0, 2.0, 3.0)
        b1[:] = -4.0
        p["l0.mlp.W2"][:, e] = 1.0
    else:
        W1[[r, bit.start, isy], 0] = (2.0, 2.0, 3.0)
        b1[0] = -6.0
        p["l0.mlp.W2"][0, e] = 1.0
    # layer 2: the [CLS] query concentrates on a violation if there is one
    b_r = round_scalar(prec, beta)
    eps1 = min(1.0, total_leak(b_r) / (1.0 + total_leak(b_r))) if b_r > 0 else 1.0
    e_min = max(1.0 - 2.0 * eps1, 1e-3)
    beta2 = math.log(4.0 * N) / e_min
    p["l1.b_Q"][0, 0] = beta2
    p["l1.W_K"][0, e, 0] = 1.0
    p["l1.W_V"][0, e, 0] = 1.0
    p["l1.W_O"][0, 0, out] = 1.0
    p["readout.W"][out, 0] = 1.0
    p["readout.b"][1] = e_min / 2.0
    model = build_transformer_model(w, precision=prec)
    report = {**codes.report(), "beta": round(beta, 6), "beta_rounded": b_r, "eps1": eps1,
              "e_min": e_min, "beta2": round(beta2, 6), "threshold": e_min / 2.0,
              "layout": lay.describe()}
    src = "BHBK-EQ-2TF" if kind == "equality" else "BHBK-DISJ-2TF"
    return Construction(name, f"string-{kind}", n, N, model, model.d_model, 2, 1, prec, report,
                        src, "[D✓]", (2 * n,), "bool", 2)


def make_string_equality(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C3 for String Equality at string length n (N = 2n + 1).

    Options: ``codes`` (``"binary"``/``"jl"``), ``k``, ``gamma``, ``delta``, ``leak`` (λ of layer 1,
    default 1/4), ``beta`` (override layer 1's β).
    """
    return _make("equality", n, precision, seed, options)


def make_string_disjointness(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C3 for String Disjointness (options as :func:`make_string_equality`)."""
    return _make("disjointness", n, precision, seed, options)


def all_two_string_inputs(n: int) -> np.ndarray:
    """Every ``x, y, [CLS]`` input: ``4^n`` rows of ``2n + 1`` tokens."""
    bits = np.array(list(itertools.product((0, 1), repeat=2 * n)), dtype=np.int64)  # (4^n, 2n)
    return np.concatenate([bits, np.full((len(bits), 1), CLS, dtype=np.int64)], axis=1)


SPECS = tuple(
    ConstructionSpec(
        f"string-{kind}-2tf", f"string-{kind}", "transformer", 2, src, "[D✓]", builder,
        "2k + 5, k = ⌈log₂ n⌉ (binary codes) or the JL k",
        f"layer 1 copies x_i to y position n+i; MLP marks {what}; layer 2 concentrates on a mark",
        width_option="k", exhaustive_max_n=7, inputs=all_two_string_inputs, aliases=aliases)
    for kind, src, builder, what, aliases in (
        ("equality", "BHBK-EQ-2TF", make_string_equality, "x_i != y_i", ("c3", "eq-2tf")),
        ("disjointness", "BHBK-DISJ-2TF", make_string_disjointness, "x_i = y_i = 1",
         ("disj-2tf",)))
)
