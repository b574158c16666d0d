"""C2: a 1-layer, 1-head Transformer for Index Lookup, and Multi-Index Lookup with the same weights.

Task formats (``reductions.tasks.index_lookup`` / ``multi_index_lookup``; A = alphabet)::

    Index Lookup        s_0 ... s_{n-1} p                 N = n + 1, answer s_p at position n
    Multi-Index Lookup  p_1..p_k s_0 ... s_{L-1} p_1..p_k N = 2k + L, answer s_{p_j} at k+L+j-1

Symbol ``a`` is token id ``a``; the query / index token for p is id ``A + p``.

Residual stream (width ``d = A + 2k``; k = the code length, ⌈log₂ L⌉ for binary codes)::

    ONE  [0, A)       onehot(symbol)            symbol tokens; the head writes its answer here
    POS  [A, A+k)     s_i, the code of i        positional table, data position i only
    QRY  [A+k, A+2k)  s_p                       token table, query / index token p

Weights (one head, ``d_k = k``, ``d_v = A``, attention scale 1, no MLP, causal)::

    W_Q = β · [QRY -> I_k]      q = β s_p at a query token
    W_K =     [POS -> I_k]      key s_j at data position j, 0 at every query / index token
    W_V =     [ONE -> I_A]      value onehot(s_j)
    W_O =     [I_A -> ONE]      readout = the ONE block, logits (A)

Why it works.  The score of data position j is ``β <s_p, s_j>``: ``βk`` at j = p, and
``βk - β(k - <s_p, s_j>)`` elsewhere; each query / index token scores 0 = βk - βk.  Shifted by
βk (which is exactly the split's agreed shift, so the target's weight is exp(0) = 1 on the
grid), the wrong positions weigh in total at most

    leak(β) = codes.leak(β) + (#query tokens) · e^{-βk}     (jl.py: (1+e^{-2β})^k - 1 for binary)

so ``α_p ≥ 1 / (1 + leak)``.  β is the smallest value with leak ≤ λ (default 1/4, so
α_p ≥ 0.8 > 1/2).  The logits are ``Σ_j α_j onehot(s_j)``: the entry of s_p is ≥ α_p > 1/2
and every other entry is ≤ 1 - α_p < 1/2, so argmax = s_p.  At a precision every activation is
rounded: the query is ``round(β)·s_p`` (the same rounding on every entry, so the score
structure is unchanged; ``beta_rounded`` is reported and the leak recomputed with it), the keys
±1 and values 0/1 are exact on any grid with one integer bit, and the weights are rounded onto
the grid (small ones to 0).  The minimal format is found by :mod:`search`.

Examples
--------
>>> import numpy as np
>>> c = make_index_lookup(6, "fixed:10:5")
>>> c.width, c.params_report["k"], c.params_report["beta"] > 0
(8, 3, True)
>>> c.predict(np.array([[0, 1, 1, 0, 0, 1, 2 + 2], [0, 1, 1, 0, 0, 1, 2 + 5]])).tolist()
[[1], [1]]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import beta_for_leak, make_codes
from .layout import Layout, Weights, build_transformer_model, round_scalar

__all__ = ["make_index_lookup", "make_multi_index_lookup", "SPECS", "lookup_weights"]

_OPTIONS = ("alphabet", "codes", "k", "gamma", "delta", "leak", "beta")


def lookup_weights(codes, *, alphabet: int, vocab: int, max_len: int, data_positions,
                   query_tokens: int, n_query_tokens: int, leak: float, beta=None, precision=None):
    """Weights of C2 for data at ``data_positions`` (position of data index i) and query tokens
    ``A + p``; returns ``(Weights, report)``.  Shared by Index Lookup and Multi-Index Lookup."""
    A, k = alphabet, codes.k
    lay = Layout()
    one, pos, qry = lay.add("ONE", A), lay.add("POS", k), lay.add("QRY", k)
    w = Weights(lay.d, vocab=vocab, max_len=max_len, layers=1, heads=1, d_k=k, d_v=A, d_mlp=0,
                n_out=A)
    p = w.p
    S = codes.signs.astype(np.float64)  # (L, k) ±1
    p["tok_emb"][np.arange(A), one.start + np.arange(A)] = 1.0          # symbol a -> onehot
    p["tok_emb"][A:A + query_tokens, qry] = S[:query_tokens]             # query p -> s_p
    p["pos_emb"][np.asarray(data_positions), pos] = S                    # data i -> s_i

    def total_leak(b):  # wrong-position weight relative to the target (module docstring)
        return codes.leak(b) + n_query_tokens * math.exp(-b * k)

    beta = beta_for_leak(total_leak, leak) if beta is None else float(beta)
    p["l0.W_Q"][0, qry, :] = beta * np.eye(k)
    p["l0.W_K"][0, pos, :] = np.eye(k)
    p["l0.W_V"][0, one, :] = np.eye(A)
    p["l0.W_O"][0, :, one] = np.eye(A)
    p["readout.W"][one, :] = np.eye(A)
    b_r = round_scalar(precision, beta)
    achieved = total_leak(b_r) if b_r > 0 else math.inf
    report = {**codes.report(), "beta": round(beta, 6), "beta_rounded": b_r,
              "leak_bound": achieved, "target_weight_min": 1.0 / (1.0 + achieved),
              "layout": lay.describe()}
    return w, report


def _codes(n_data, opts, seed):
    kind = opts.get("codes", "binary")
    return make_codes(n_data, kind, k=opts.get("k"), gamma=opts.get("gamma", 0.5),
                      delta=opts.get("delta", 0.5), seed=seed)


def make_index_lookup(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C2 for Index Lookup with n symbols (N = n + 1).

    Options: ``alphabet`` (2), ``codes`` (``"binary"`` or ``"jl"``), ``k`` (code length; default
    ⌈log₂ n⌉ / the JL formula), ``gamma``, ``delta`` (JL), ``leak`` (λ, 1/4), ``beta`` (override).
    """
    opts = check_options("index-lookup-1tf", options, _OPTIONS)
    A = int(opts.get("alphabet", 2))
    if A < 2:
        raise InvalidParameterError(f"alphabet must be >= 2, got {A}")
    prec = precision_of(precision)
    codes = _codes(n, opts, seed)
    w, report = lookup_weights(codes, alphabet=A, vocab=A + n, max_len=n + 1,
                               data_positions=np.arange(n), query_tokens=n, n_query_tokens=1,
                               leak=float(opts.get("leak", 0.25)), beta=opts.get("beta"),
                               precision=prec)
    model = build_transformer_model(w, precision=prec)
    return Construction("index-lookup-1tf", "index-lookup", n, n + 1, model, model.d_model, 1, 1, prec,
                        report, "BHBK-IL-1TF", "[D✓]", (n,), "symbol", A)


def make_multi_index_lookup(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """The C2 weights for Multi-Index Lookup with k = n indices and L = data_factor·k symbols.

    Options: those of :func:`make_index_lookup` and ``data_factor`` (2).
    """
    opts = check_options("multi-index-lookup-1tf", options, _OPTIONS + ("data_factor",))
    A, f = int(opts.pop("alphabet", 2)), int(opts.pop("data_factor", 2))
    if A < 2 or f < 1:
        raise InvalidParameterError("need alphabet >= 2 and data_factor >= 1")
    L, N = f * n, 2 * n + f * n
    prec = precision_of(precision)
    codes = _codes(L, opts, seed)
    w, report = lookup_weights(codes, alphabet=A, vocab=A + L, max_len=N,
                               data_positions=n + np.arange(L), query_tokens=L,
                               n_query_tokens=2 * n, leak=float(opts.get("leak", 0.25)),
                               beta=opts.get("beta"), precision=prec)
    model = build_transformer_model(w, precision=prec)
    return Construction("multi-index-lookup-1tf", "multi-index-lookup", n, N, model, model.d_model, 1,
                        1, prec, {**report, "data_length": L}, "BHBK-MIL-1TF", "[A]/[D]",
                        tuple(range(n + L, 2 * n + L)), "symbol", A)


def all_index_lookup_inputs(n: int, alphabet: int = 2) -> np.ndarray:
    """Every Index Lookup input at size n: ``alphabet^n · n`` rows of ``(N,)`` tokens."""
    strings = np.array(list(itertools.product(range(alphabet), repeat=n)), dtype=np.int64)
    q = np.repeat(np.arange(n), len(strings))
    tokens = np.concatenate([np.tile(strings, (n, 1)), (alphabet + q)[:, None]], axis=1)
    return tokens  # (A^n · n, n + 1)


def all_multi_index_lookup_inputs(n: int, alphabet: int = 2, data_factor: int = 2) -> np.ndarray:
    """Every Multi-Index Lookup input at k = n (indices with repeats; prepended = trailing)."""
    L = data_factor * n
    strings = np.array(list(itertools.product(range(alphabet), repeat=L)), dtype=np.int64)
    index = alphabet + np.array(list(itertools.product(range(L), repeat=n)), dtype=np.int64)
    S = np.repeat(strings, len(index), axis=0)
    Q = np.tile(index, (len(strings), 1))
    return np.concatenate([Q, S, Q], axis=1)  # (A^L · L^k, 2k + L)


SPECS = (
    ConstructionSpec(
        "index-lookup-1tf", "index-lookup", "transformer", 1, "BHBK-IL-1TF", "[D✓]",
        make_index_lookup, "|Σ| + 2k, k = ⌈log₂ n⌉ (binary codes) or ⌈(4 ln n + 2 ln 2)/γ²⌉ (JL)",
        "one head: query β·s_p from the query token, keys s_j from positions, values onehot(s_j)",
        width_option="k", exhaustive_max_n=10, inputs=all_index_lookup_inputs,
        aliases=("c2", "il-1tf")),
    ConstructionSpec(
        "multi-index-lookup-1tf", "multi-index-lookup", "transformer", 1, "BHBK-MIL-1TF", "[A]/[D]",
        make_multi_index_lookup, "|Σ| + 2k, k = ⌈log₂ L⌉, L = 2n data symbols",
        "the C2 weights read at every trailing index token (index tokens have key 0)",
        width_option="k", exhaustive_max_n=3, inputs=all_multi_index_lookup_inputs,
        aliases=("mil-1tf",)),
)
