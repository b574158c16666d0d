"""Copy: one attention layer of width 2|D| + 2 ceil(log2 n) + 1 copies in the blank encoding (commcomp's weights).

Task format (``reductions.tasks.copy``): s_0 .. s_{n-1} over D (ids ``0 .. |D|-1``), [SEP] (id |D|), then
n blanks (id |D| + 1); the answer at the k-th blank, position ``n + 1 + k``, is s_k.

JBKM (2024) copy with two layers because their model must find its place in the string from its own
output so far (layer 1 hashes the last n-gram written, layer 2 finds its earlier occurrence and
copies the token after it; right while the n-grams of the string are unique).  In this encoding the
blanks are fixed tokens at fixed positions, so the k-th blank's place is its position: one lookup by
position does it, for every string (no uniqueness needed).  This is a 1-layer Transformer, so it is
also one with two layers (a second layer of zeros): JBKM's 2-layer statement holds a fortiori, and
the 1-layer model has an Alice/Bob split, which the claims table checks (c).

Residual (``S[j]`` = the c = ceil(log2 n) bits of j as +-1, :func:`.jl.binary_codes`)::

    SYM |D|  onehot(token) for a symbol     KEY  c  S[j] at symbol positions j < n, else 0
    OUT |D|  the layer writes the copy      QRY  c  S[p - n - 1] at blank positions p, else 0
                                            K    1  1 at symbol positions j < n

**The head** (at every position; read at the blanks): query ``beta [QRY ; c]``, key ``[KEY ; K]``, value
SYM into OUT.  At the k-th blank, in units of beta: symbol position k scores ``c + c = 2c``, symbol
position j != k scores ``2c - 2 hamming(j, k)``, every other position (SEP, blanks) 0.  The mass off k
(k's weight 1) is at most ``leak(beta) = (1 + e^{-2 beta})^c - 1 + (2n + 1) e^{-2 c beta}``; beta is the
smallest with leak <= 1/4, so k gets alpha >= 4/5 and ``OUT = alpha onehot(s_k) + (the rest, total
<= 1/5)``: the argmax of OUT (the readout) is s_k.
Precision: scores at most ``2c beta`` with ``beta = O(log c)``: O(log log n) integer bits, and weights
``>= e^{-O(c beta)}`` that need not be told apart (only alpha >= 4/5 matters): the checks pass in
bfloat16 at the sizes the tests and the claims table use.

Examples
--------
>>> import numpy as np
>>> c = make_copy(3, "float32")
>>> c.predict(np.array([[1, 0, 1, 2, 3, 3, 3], [0, 0, 1, 2, 3, 3, 3]])).tolist()
[[1, 0, 1], [0, 0, 1]]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import beta_for_leak, binary_codes
from .layout import Layout, Weights, build_transformer_model

__all__ = ["make_copy", "all_copy_inputs", "SPECS"]

#: The mass allowed off the copied position (alpha >= 4/5 > 1/2: the argmax is right).
LEAK = 0.25


def make_copy(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """The 1-layer copy at string length n (module docstring); option ``alphabet`` (default 2, the
    task's default)."""
    opts = check_options("copy-1tf", options, {"alphabet"})
    n, s = int(n), int(opts.get("alphabet") or 2)
    if n < 1 or s < 2:
        raise InvalidParameterError(f"copy-1tf: need n >= 1 and alphabet >= 2, got {n}, {s}")
    prec = precision_of(precision)
    codes = binary_codes(n)
    S, c = codes.signs.astype(np.float64), codes.k  # (n, c)
    N = 2 * n + 1
    lay = Layout()
    SYM, OUT = lay.add("SYM", s), lay.add("OUT", s)
    KEY, QRY, K = lay.add("KEY", c), lay.add("QRY", c), lay.add("K", 1).start
    w = Weights(lay.d, vocab=s + 2, max_len=N, layers=1, heads=1, d_k=c + 1, d_v=s, d_mlp=0, n_out=s)
    p = w.p
    p["tok_emb"][np.arange(s), SYM.start + np.arange(s)] = 1.0
    p["pos_emb"][:n, KEY] = S
    p["pos_emb"][:n, K] = 1.0
    p["pos_emb"][n + 1:, QRY] = S   # blank k (position n + 1 + k) asks for position k
    beta = beta_for_leak(lambda b: codes.leak(b) + (2 * n + 1) * math.exp(-2.0 * c * b), LEAK)
    p["l0.W_Q"][0, QRY, :c] = beta * np.eye(c)
    p["l0.b_Q"][0, c] = beta * c
    p["l0.W_K"][0, KEY, :c] = np.eye(c)
    p["l0.W_K"][0, K, c] = 1.0
    p["l0.W_V"][0, SYM, :s] = np.eye(s)
    p["l0.W_O"][0, :s, OUT] = np.eye(s)
    p["readout.W"][OUT, :] = np.eye(s)
    model = build_transformer_model(w, precision=prec)
    report = {"alphabet": s, "code_bits": c, "beta": round(beta, 6), "leak": LEAK, "layout": lay.describe(),
              "task_params": {"alphabet": s}}
    return Construction("copy-1tf", "copy", n, N, model, model.d_model, 1, 1, prec, report, "COMMCOMP-copy-1TF",
                        "[D✓]", tuple(range(n + 1, N)), "symbol", s)


def all_copy_inputs(n: int, alphabet: int = 2) -> np.ndarray:
    """Every input at string length n: ``(|D|^n, 2n + 1)``."""
    strings = np.array(list(itertools.product(range(alphabet), repeat=n)), dtype=np.int64).reshape(-1, n)
    B = len(strings)
    return np.concatenate([strings, np.full((B, 1), alphabet), np.full((B, n), alphabet + 1)], axis=1)


SPECS = (
    ConstructionSpec(
        "copy-1tf", "copy", "transformer", 1, "COMMCOMP-copy-1TF", "[D✓]", make_copy, "2|D| + 2⌈log₂ n⌉ + 1",
        "the k-th blank attends to position k by its binary code (the blanks' places are their positions)",
        exhaustive_max_n=12, inputs=all_copy_inputs, aliases=("copy-tf",)),
)
