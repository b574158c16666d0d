"""Function composition g(f(x)): 2 layers under the ``pairs`` layout, 3 under ``split`` (commcomp's weights).

Task format (``reductions.tasks.function_composition``): the n entries of g, the n entries of f (each
function once per input, in any order), then the query q<x>; the answer at the last position is g(f(x)).
``pairs``: an entry is one token (g: id ``i n + v``, f: ``n^2 + i n + v``, query ``2 n^2 + x``);
``split``: an input token i<i> (id i) and at the next position its value v<v> (id ``n + v``), g's block
at positions ``0 .. 2n-1``, f's at ``2n .. 4n-1``, the query (id ``2n + x``) at ``4n``.

Codes: ``S[v]`` = the c = ceil(log2 n) bits of v as +-1 (:func:`.jl.binary_codes`), so
``<S[u], S[v]> = c - 2 hamming(u, v)``: c for u = v, at most c - 2 otherwise.

**pairs, 2 layers** (residual ``IN c | VAL c | F | G | A c | B c | OUT c``, width 5c + 2):

- embeddings: an entry (i, v) sets IN = S[i], VAL = S[v] and F = 1 (f) or G = 1 (g); the query sets
  IN = S[x] (nothing else).
- layer 1 (find f's entry for x): query ``beta1 [IN ; 2c]``, key ``[IN ; F]``, value VAL into A. In units
  of beta1 f's entry with input x scores ``c + 2c = 3c``, f's entry with input i != x scores
  ``3c - 2 hamming(i, x)``, every g entry and the query itself at most c. f's inputs are a permutation
  of [n], so the mass off the target (target weight 1) is at most ``leak1(beta1) = (1 + e^{-2 beta1})^c
  - 1 + (n + 1) e^{-2c beta1}``; beta1 is the smallest with leak1 <= 1/8, so the target gets
  ``alpha >= 8/9`` and every coordinate of A has the sign of S[f(x)] with |A_b| >= 2 alpha - 1 >= 7/9
  (the others' VAL are +-1 or 0, weight 1 - alpha in all).
- MLP 1 (clean A): ``B = ReLU(2A + 1) - ReLU(2A - 1) - 1``, which is exactly ``sign(A)`` when
  |2A| >= 1: B = S[f(x)] (up to the rounding of the two ReLUs, below 2^-6 in bfloat16).
- layer 2 (find g's entry for f(x)): the same head with B for IN and G for F: value VAL into OUT, now
  with ``leak2 <= 1/(4(c + 1))`` so alpha2 >= 1 - 1/(4(c+1)).
- readout: ``logit_v = <S[v], OUT>``: the right v scores >= c(2 alpha2 - 1), any other at most
  ``alpha2 (c - 2) + (1 - alpha2) c``; the gap ``2(alpha2 (c + 1) - c) >= 3/2``.

**split, 3 layers** (f and g as above after one binding layer; width 8c + 2c' + 2, c' = ceil(log2 N)):

- embeddings: i<i> sets IN = S[i], v<v> sets VAL = S[v], q<x> sets QX = S[x]; positions carry OWN = the
  c' bits of p, PRVPOS = the bits of p - 1 (of 0 at p = 0), and F (G) = 1 on the *value* positions of
  f's (g's) block.
- layer 1 (bind each value to its input): the previous-token head of ``induction_heads.py``, query
  ``beta0 PRVPOS``, key OWN, value IN into PIN, with leak <= 1/8: at a value position
  PIN = alpha S[i] + (1 - alpha) (a mix of +-1 / 0 vectors), alpha >= 8/9; MLP 1 cleans it into
  CIN = S[i] exactly as above.  A value position now holds (CIN = S[input], VAL = S[value], F or G):
  the pairs layout's entry.
- layers 2 and 3: the pairs layout's layers 1 and 2 with key ``[CIN ; F]`` (then ``[CIN ; G]``) and the
  query's QX for its first query: every input and query token has F = G = 0, so it scores at most
  ``beta (c |CIN|_inf)`` <= beta c, as g's entries did.  MLP 2 cleans A into B.

One layer more than for evaluation f(x) (2 under either layout, SAF 2025): composition under ``split``
needs the binding, then two lookups in sequence.

Precision: scores are at most ``3c beta`` with beta = O(log c), weights that matter are e^{-O(beta)}: the
checks pass in bfloat16 (8-bit mantissa) at every size the tests and the claims table use.

Examples
--------
>>> import numpy as np
>>> c = make_function_composition(2, "float32")
>>> c.predict(np.array([[1, 2, 5, 7, 8]])).tolist()     # g = (1, 0), f = (1, 1), x = 0: g(f(0)) = 0
[[0]]
>>> s = make_function_composition_split(2, "float32")
>>> s.predict(np.array([[0, 3, 1, 2, 0, 3, 1, 3, 4]])).tolist()
[[0]]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import beta_for_leak, binary_codes
from .layout import Layout, Weights, build_transformer_model

__all__ = ["make_function_composition", "make_function_composition_split", "all_composition_inputs",
           "all_split_inputs", "SPECS"]

#: Leak of the first lookup (its output is cleaned by an MLP) and of the last (read by the codes).
LEAK_FIRST = 1.0 / 8.0


def _leak_last(c: int) -> float:
    return 1.0 / (4.0 * (c + 1))


def _lookup_beta(codes, n: int, target: float) -> float:
    """beta with ``(1 + e^{-2 beta})^c - 1 + (n + 1) e^{-2 c beta} <= target`` (module docstring)."""
    c = codes.k
    return beta_for_leak(lambda b: codes.leak(b) + (n + 1) * math.exp(-2.0 * c * b), target)


def _lookup(p, layer, query, query_bias_col, key, flag, value, out, c, beta):
    """One lookup head: score ``beta(<query, key> + 2c flag)``, value ``value`` into ``out``."""
    p[f"{layer}.W_Q"][0, query, :c] = beta * np.eye(c)
    p[f"{layer}.b_Q"][0, c] = beta * 2 * c
    p[f"{layer}.W_K"][0, key, :c] = np.eye(c)
    p[f"{layer}.W_K"][0, flag, c] = 1.0
    p[f"{layer}.W_V"][0, value, :c] = np.eye(c)
    p[f"{layer}.W_O"][0, :c, out] = np.eye(c)


def _clean(p, layer, src, dst, c):
    """MLP: ``dst += ReLU(2 src + 1) - ReLU(2 src - 1) - 1`` per coordinate (sign of |src| >= 1/2)."""
    up, down = np.arange(c), c + np.arange(c)
    p[f"{layer}.mlp.W1"][src.start + np.arange(c), up] = 2.0
    p[f"{layer}.mlp.W1"][src.start + np.arange(c), down] = 2.0
    p[f"{layer}.mlp.b1"][up], p[f"{layer}.mlp.b1"][down] = 1.0, -1.0
    p[f"{layer}.mlp.W2"][up, dst] = np.eye(c)
    p[f"{layer}.mlp.W2"][down, dst] = -np.eye(c)
    p[f"{layer}.mlp.b2"][dst] = -1.0


def _readout(p, out, S, n):
    p["readout.W"][out, :n] = S.T.astype(np.float64)  # logit_v = <S[v], OUT>


def _domain(n, name) -> int:
    n = int(n)
    if n < 2:
        raise InvalidParameterError(f"{name}: the domain needs n >= 2, got {n}")
    return n


def make_function_composition(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """Layout ``pairs``: 2 layers of width 5 ceil(log2 n) + 2 (module docstring)."""
    check_options("composition-2tf", options, ())
    n = _domain(n, "composition-2tf")
    prec = precision_of(precision)
    codes = binary_codes(n)
    S, c = codes.signs.astype(np.float64), codes.k  # (n, c)
    lay = Layout()
    IN, VAL = lay.add("IN", c), lay.add("VAL", c)
    F, G = lay.add("F", 1).start, lay.add("G", 1).start
    A, B, OUT = lay.add("A", c), lay.add("B", c), lay.add("OUT", c)
    N = 2 * n + 1
    w = Weights(lay.d, vocab=2 * n * n + n, max_len=N, layers=2, heads=1, d_k=c + 1, d_v=c, d_mlp=2 * c,
                n_out=n)
    p = w.p
    i, v = np.divmod(np.arange(n * n), n)  # entry (i, v) of either function
    for offset, flag in ((0, G), (n * n, F)):
        p["tok_emb"][offset + np.arange(n * n), IN] = S[i]
        p["tok_emb"][offset + np.arange(n * n), VAL] = S[v]
        p["tok_emb"][offset + np.arange(n * n), flag] = 1.0
    p["tok_emb"][2 * n * n + np.arange(n), IN] = S
    beta1, beta2 = _lookup_beta(codes, n, LEAK_FIRST), _lookup_beta(codes, n, _leak_last(c))
    _lookup(p, "l0", IN, c, IN, F, VAL, A, c, beta1)   # A ~ S[f(x)]
    _clean(p, "l0", A, B, c)                             # B = S[f(x)]
    _lookup(p, "l1", B, c, IN, G, VAL, OUT, c, beta2)  # OUT ~ S[g(f(x))]
    _readout(p, OUT, S, n)
    model = build_transformer_model(w, precision=prec)
    report = {"domain": n, "code_bits": c, "beta1": round(beta1, 6), "beta2": round(beta2, 6),
              "leak1": LEAK_FIRST, "leak2": _leak_last(c), "layout": lay.describe(), "task_params": {}}
    return Construction("composition-2tf", "function-composition", n, N, model, model.d_model, 2, 1,
                        prec, report, "COMMCOMP-FC-2TF", "[D✓]", (N - 1,), "symbol", n)


def make_function_composition_split(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """Layout ``split``: 3 layers (a binding layer, then the two lookups; module docstring)."""
    check_options("composition-split-3tf", options, ())
    n = _domain(n, "composition-split-3tf")
    prec = precision_of(precision)
    codes = binary_codes(n)
    S, c = codes.signs.astype(np.float64), codes.k  # (n, c)
    N = 4 * n + 1
    pos = binary_codes(N)
    P, cp = pos.signs.astype(np.float64), pos.k  # (N, c')
    lay = Layout()
    IN, VAL, QX = lay.add("IN", c), lay.add("VAL", c), lay.add("QX", c)
    OWN, PRVPOS = lay.add("OWN", cp), lay.add("PRVPOS", cp)
    PIN, CIN = lay.add("PIN", c), lay.add("CIN", c)
    F, G = lay.add("F", 1).start, lay.add("G", 1).start
    A, B, OUT = lay.add("A", c), lay.add("B", c), lay.add("OUT", c)
    w = Weights(lay.d, vocab=3 * n, max_len=N, layers=3, heads=1, d_k=max(cp, c + 1), d_v=c, d_mlp=2 * c,
                n_out=n)
    p = w.p
    p["tok_emb"][np.arange(n), IN] = S
    p["tok_emb"][n + np.arange(n), VAL] = S
    p["tok_emb"][2 * n + np.arange(n), QX] = S
    p["pos_emb"][:, OWN] = P
    p["pos_emb"][1:, PRVPOS], p["pos_emb"][0, PRVPOS] = P[:-1], P[0]
    p["pos_emb"][1:2 * n:2, G] = 1.0          # g's value positions
    p["pos_emb"][2 * n + 1:4 * n:2, F] = 1.0  # f's value positions
    # layer 1: previous-token head (leak <= 1/8 over the c' position bits), IN of p - 1 into PIN
    beta0 = beta_for_leak(pos.leak, LEAK_FIRST)
    p["l0.W_Q"][0, PRVPOS, :cp] = beta0 * np.eye(cp)
    p["l0.W_K"][0, OWN, :cp] = np.eye(cp)
    p["l0.W_V"][0, IN, :c] = np.eye(c)
    p["l0.W_O"][0, :c, PIN] = np.eye(c)
    _clean(p, "l0", PIN, CIN, c)                         # CIN = S[input] at value positions
    beta1, beta2 = _lookup_beta(codes, N, LEAK_FIRST), _lookup_beta(codes, N, _leak_last(c))
    _lookup(p, "l1", QX, c, CIN, F, VAL, A, c, beta1)   # A ~ S[f(x)]
    _clean(p, "l1", A, B, c)                             # B = S[f(x)]
    _lookup(p, "l2", B, c, CIN, G, VAL, OUT, c, beta2)  # OUT ~ S[g(f(x))]
    _readout(p, OUT, S, n)
    model = build_transformer_model(w, precision=prec)
    report = {"domain": n, "code_bits": c, "position_bits": cp, "beta0": round(beta0, 6),
              "beta1": round(beta1, 6), "beta2": round(beta2, 6), "layout": lay.describe(),
              "task_params": {"layout": "split"}}
    return Construction("composition-split-3tf", "function-composition", n, N, model, model.d_model,
                        3, 1, prec, report, "COMMCOMP-FC-split-3TF", "[D✓]", (N - 1,), "symbol", n)


def _functions(n: int):
    """Every (inputs order, values) of one function on [n]: ``(n! n^n, n)`` each."""
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.int64)          # (n!, n)
    values = np.array(list(itertools.product(range(n), repeat=n)), dtype=np.int64)     # (n^n, n)
    return np.repeat(orders, len(values), axis=0), np.tile(values, (len(orders), 1))


def _all_inputs(n: int, split: bool) -> np.ndarray:
    n = int(n)
    fi, fv = _functions(n)
    k = len(fi)
    gi, gv, ff, fvv = (np.repeat(fi, k * n, axis=0), np.repeat(fv, k * n, axis=0),
                       np.tile(np.repeat(fi, n, axis=0), (k, 1)), np.tile(np.repeat(fv, n, axis=0), (k, 1)))
    q = np.tile(np.arange(n, dtype=np.int64), k * k)
    if not split:
        return np.concatenate([gi * n + gv, n * n + ff * n + fvv, (2 * n * n + q)[:, None]], axis=1)
    out = np.empty((len(q), 4 * n + 1), dtype=np.int64)
    out[:, 0:2 * n:2], out[:, 1:2 * n:2] = gi, n + gv
    out[:, 2 * n:4 * n:2], out[:, 2 * n + 1:4 * n:2] = ff, n + fvv
    out[:, -1] = 2 * n + q
    return out


def all_composition_inputs(n: int) -> np.ndarray:
    """Every input of the pairs layout at domain n: ``((n! n^n)^2 n, 2n + 1)`` (128 at n = 2)."""
    return _all_inputs(n, split=False)


def all_split_inputs(n: int) -> np.ndarray:
    """Every input of the split layout at domain n: ``((n! n^n)^2 n, 4n + 1)``."""
    return _all_inputs(n, split=True)


SPECS = (
    ConstructionSpec(
        "composition-2tf", "function-composition", "transformer", 2, "COMMCOMP-FC-2TF", "[D✓]",
        make_function_composition, "5⌈log₂ n⌉ + 2",
        "layer 1 finds f's entry for x and writes f(x)'s code; an MLP cleans it; layer 2 finds g's entry "
        "for it (layout pairs)", exhaustive_max_n=3, inputs=all_composition_inputs,
        aliases=("fc-2tf", "function-composition-2tf")),
    ConstructionSpec(
        "composition-split-3tf", "function-composition", "transformer", 3, "COMMCOMP-FC-split-3TF",
        "[D✓]", make_function_composition_split, "8⌈log₂ n⌉ + 2⌈log₂(4n + 1)⌉ + 2",
        "layer 1 binds each value token to the input token before it; layers 2 and 3 look up f then g "
        "(layout split)", exhaustive_max_n=3, inputs=all_split_inputs,
        aliases=("fc-split-3tf", "function-composition-split-3tf"),
        default=False),
)
